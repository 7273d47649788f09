"""Reads of a sliced Parameter by ops without a shard strategy (issue 27; kiln/parallel/_op_shard.py slices it).

A Parameter that one sharded op slices (each process stores its block) may also be read by ops without a strategy
(a second MatMul, element-wise ops, reductions, `self.w * 2`, ops.norm(self.w), a tied weight). Those ops must see
the whole tensor, as MindSpore's redistribution gives an op whose default strategy wants the Parameter replicated.
The sliced Parameter is hidden from its Cells' instance __dict__ (hide_from_cells, hide_everywhere), so reading it
as a Cell attribute goes through Cell.__getattr__, which calls whole_for_read: an AllGather whose backward is this
process's block of the cotangent. A read passed straight to its own sharded op (found from the call site's
bytecode: _read_goes_to_sharded_op) gathers nothing. docs/distributed.md, "Operator parallel", says what stays
uncovered (a Parameter reached other than as a Cell attribute).
"""
import builtins
import dis
import gc
import sys
import weakref

from .. import _engine
from ..ops import _kernels
from ._op_shard import _block_index, _gather, _layout_of, _record, _state, _world, active

def hide_from_cells(p):
    """Removes the mirror of a just-sliced Parameter from the instance __dict__ of the Cells that registered it
    (nn/cell.py, Note [attribute storage]), so that reading it as a Cell attribute (`self.w`) goes through
    Cell.__getattr__, which hands ops without a strategy the whole tensor (whole_for_read). The Cells' `_params`
    keep it: iteration, names and checkpoints are unchanged. At once: the Cells whose construct runs now and their
    descendants (the network being called: a dictionary check per Cell); the step after (release_history): every
    other holder, with one heap scan for all the Parameters sliced in the step. Cells that register it later skip
    the mirror (Cell._register_param)."""
    if not _run_construct_code:
        from ..nn.cell import Cell
        _run_construct_code.append(Cell._run_construct.__code__)
    code, roots, f = _run_construct_code[0], {}, sys._getframe(1)
    while f is not None:
        if f.f_code is code:
            cell = f.f_locals.get("self")
            if cell is not None:
                roots[id(cell)] = cell
        f = f.f_back
    seen = set()
    for root in roots.values():
        stack = [root]
        while stack:
            c = stack.pop()
            if id(c) in seen:
                continue
            seen.add(id(c))
            _unmirror(c.__dict__, p)
            stack.extend(v for v in c.__dict__.get("_cells", {}).values() if v is not None)
    _to_hide.append(weakref.ref(p))
    if not roots:  # sliced outside any construct (a sharded op called directly): look everywhere now
        hide_everywhere()


def _unmirror(d, p):
    params = d.get("_params")
    if isinstance(params, dict):
        for k, v in list(params.items()):
            if v is p and d.get(k) is p:
                del d[k]


def hide_everywhere():
    """The deferred part of _hide_from_cells: every instance __dict__ that still mirrors a Parameter sliced since
    the last call (one gc.get_referrers scan for them all)."""
    if not _to_hide:
        return
    batch = [p for p in (ref() for ref in _to_hide) if p is not None]
    del _to_hide[:]
    for r in gc.get_referrers(*batch) if batch else ():
        if type(r) is dict and isinstance(r.get("_params"), dict):
            for p in batch:
                _unmirror(r, p)


_to_hide = []  # weak references to the Parameters sliced whose other holders _hide_everywhere has not looked for
_run_construct_code = []  # Cell._run_construct.__code__, looked up once (nn imports this module's package)


def _in_construct():
    """True when a Cell's construct runs on this thread (a Cell._run_construct frame is on the stack)."""
    if not _run_construct_code:
        from ..nn.cell import Cell
        _run_construct_code.append(Cell._run_construct.__code__)
    code = _run_construct_code[0]
    f = sys._getframe(2)
    while f is not None:
        if f.f_code is code:
            return True
        f = f.f_back
    return False


_sites = {}  # (code, offset of a LOAD_ATTR) -> (how the callee is loaded, base name, attribute) or None
_JUMPS = set(dis.hasjrel) | set(dis.hasjabs)


def _call_site(code, lasti, name):
    """When the attribute read at byte `lasti` of `code` (LOAD_ATTR `name`) is the last positional argument of a
    call whose callee is `<local or global>.<attribute>` (`self.mm1(x, self.w1)`, `ops.matmul(x, self.w)`; in a
    traced construct `_kiln_cf.callee(self.mm1)(x, self.w1)`): that (kind, base, attribute); else None. Eager and
    traced code must agree (a gather on one process only would hang the others). Found by walking back over the arguments' stack effects (CPython 3.11
    bytecode; anything else, jumps inside the arguments, keywords: None)."""
    ins = list(dis.get_instructions(code))
    i = next((k for k, x in enumerate(ins) if x.offset == lasti), None)
    if i is None or ins[i].opname != "LOAD_ATTR" or ins[i].argval != name or i + 1 >= len(ins) or \
            ins[i + 1].opname not in ("PRECALL", "CALL"):
        return None
    n, depth, j = ins[i + 1].arg, 0, i
    while j >= 2:
        x = ins[j]
        if x.is_jump_target or x.opcode in _JUMPS:
            return None
        try:
            depth += dis.stack_effect(x.opcode, x.arg if x.opcode >= dis.HAVE_ARGUMENT else None, jump=False)
        except ValueError:
            return None
        if depth == n:  # ins[j:i+1] push exactly the n arguments: ins[j-1] loaded the callee
            k = j - 1
            if k >= 5 and ins[k].opname == "CALL" and ins[k].arg == 1 and ins[k - 1].opname == "PRECALL" and \
                    ins[k - 4].opname == "LOAD_METHOD" and ins[k - 4].argval == "callee" and \
                    ins[k - 5].opname == "LOAD_DEREF" and ins[k - 5].argval == "_kiln_cf":
                k -= 2  # a traced construct calls `_kiln_cf.callee(<base>.<attr>)(...)` (kiln/_compiler/ast_rewrite)
            m, b = ins[k], ins[k - 1]
            if m.opname in ("LOAD_METHOD", "LOAD_ATTR") and b.opname in ("LOAD_FAST", "LOAD_GLOBAL"):
                return ("fast" if b.opname == "LOAD_FAST" else "global", b.argval, m.argval)
            return None
        j -= 1
    return None


def _read_goes_to_sharded_op(frame, name):
    """True when the attribute read being executed in `frame` is passed straight (as its last positional
    argument, not stored anywhere) to a primitive or function with a shard strategy: that op takes the stored
    block itself, so nothing needs the whole tensor."""
    key = (frame.f_code, frame.f_lasti)
    site = _sites.get(key, False)
    if site is False:
        site = _sites[key] = _call_site(frame.f_code, frame.f_lasti, name)
    if site is None:
        return False
    kind, base, attr = site
    if kind == "fast":
        obj = frame.f_locals.get(base)
    else:
        obj = frame.f_globals.get(base, getattr(builtins, base, None))
    callee = getattr(obj, attr, None) if obj is not None else None
    return "_kiln_in_strategy" in getattr(callee, "__dict__", ())


def whole_for_read(p, cell, name):
    """What reading the sliced Parameter `p` as the attribute `name` of `cell` returns (Cell.__getattr__).

    Inside a Cell's construct, a function under a grad transform (a functional forward_fn: `loss + 0.01 *
    ops.norm(net.w)`), a compiled function or an AutoParallel call, while operator parallel is active: the whole
    Parameter, all-gathered from the blocks
    of the processes of one copy of its device matrix, so that an op without a strategy (a MatMul, an element-wise
    op, a reduction, `self.w * 2`, ops.norm(self.w), a tied weight read by another Cell) computes on the whole
    tensor, as MindSpore's redistribution gives an op whose default strategy wants the Parameter replicated. Its
    backward is this process's block of the (whole, replicated) cotangent, added to the block's gradient. The
    tensor is marked: a sharded op that receives it takes the Parameter's stored block instead (call()), so the
    op that sliced it is unchanged. A read passed straight to a sharded op (`self.mm1(x, self.w1)`: the last
    positional argument, read from the bytecode of the call site) returns p itself, with no gather.

    Elsewhere (user code between steps, optimizers, checkpoints) or from an Optimizer: p itself (the block).

    Raises:
        ValueError: in those places while operator parallel is not active (reset_auto_parallel_context after
            the Parameters were sliced, one process, outside the AutoParallel that sliced them): an op would compute
            on the block as if it were whole.
    """
    from ..nn.optim.optimizer import Optimizer
    if isinstance(cell, Optimizer) or not (_engine.grad_level() > 0 or _engine.tracing() or
                                           getattr(_state, "auto", 0) or _in_construct()):
        return p
    lay = _layout_of(p)
    if not active():
        if _read_goes_to_sharded_op(sys._getframe(2), name):
            return p  # that op raises its own error (check_inactive), naming it
        from .._parallel_context import get_auto_parallel_context
        raise ValueError(
            f"For '{type(cell).__name__}.{name}' read at {_engine._user_location()}, the Parameter '{p.name}' is "
            f"stored sliced by operator parallel (whole shape {list(lay.full_shape)}, this process's slice "
            f"{list(p.shape)}, cut {lay.slices()} by '{lay.op}'), but operator parallel is not active now "
            f"(parallel_mode {get_auto_parallel_context('parallel_mode')!r}, {_world()[0]} process(es), outside "
            f"AutoParallel), so Kiln cannot gather it for the ops that read it. Keep parallel_mode="
            f"'semi_auto_parallel' (or call the network through the same AutoParallel) after its Parameters were "
            f"sliced; to go on in one process, save the whole values first (kiln.parallel.merge_parameters or "
            f"save_checkpoint) and load them into a new network.")
    if _read_goes_to_sharded_op(sys._getframe(2), name):
        return p
    v = _gather(_kernels.detach(p), lay.plan, lay.tmap, lay.rank)
    idx = _block_index(lay.plan, lay.tmap, lay.full_shape, lay.rank)

    def bprop(ins, outs, gouts):
        g = gouts[0]
        return [None if g is None else g[idx]]

    w = _record([p], [v], bprop)[0]
    w.__dict__["_kiln_whole_of"] = p
    return w
