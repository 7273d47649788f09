"""Operator-level sharding (MindSpore's semi-auto parallel: `Primitive.shard(in_strategy)`) over Kiln's Gloo
collectives: PyNative, and Graph mode once the Parameters are sliced (their first sharded use must run eagerly).
Design and rejected alternatives: docs/decisions/operator-parallel.md.

A strategy gives, for every Tensor input of a primitive, the number of slices of each dimension. From the
strategies the op's device matrix follows (MindSpore's rules: MatMul ((a, b), (b, c)) -> [a, b, c]; an element-wise
op (s0, s1, ...) -> [s0, s1, ...]); when its size m is below the number of processes n, the n/m "repeated"
copies form the leading dimension (MindSpore's default), so process r has the coordinates of r % m in the device
matrix, and r // m says which copy it belongs to. Each input dimension is cut along one device-matrix axis (its
tensor map).

What runs where (one sharded call, process r):

  * every input that is not a Parameter is whole (replicated) on every process: r takes its block (no
    communication);
  * a Parameter is stored sliced: the first sharded call that uses it replaces its values, on each process, by
    that process's block (the memory of the whole Parameter is freed; `optimizer` states follow at its next step),
    and later calls use the block as it is;
  * the primitive runs on the blocks;
  * the result is made whole on every process again: an AllReduce over the processes that hold partial sums of the
    same block (a split reduction dimension: MatMul's k), then an AllGather over those holding different blocks.

A sliced Parameter read by anything else inside a construct, a grad transform or a compiled function (an op without
a strategy, `self.w * 2`) is read as a Cell attribute, which hands it over whole (_attribute_reads.whole_for_read: an AllGather whose backward is the block of the
cotangent); a read passed straight to a sharded op stays the block.

So activations between ops are whole on every process (more communication than MindSpore's graph pass, which keeps
a producer's layout when the consumer wants it; see the decision record), and parameters, their gradients and the
optimizer states are sliced. The gradients follow by these rules (each a custom bprop, kiln/_autodiff/custom_grad.py):
the cotangent of a whole tensor is whole and the same on every process, so

  * AllGather's backward is the process's block of the cotangent (no communication);
  * the partial sums' AllReduce passes the cotangent through;
  * taking the block of a whole input sums the blocks' gradients over the processes holding the same block
    (AllReduce) and gathers the blocks (AllGather): every process gets the whole input gradient;
  * a Parameter block's gradient is summed over the processes holding the same block (MindSpore's mirror
    operator), within one copy of the device matrix (the repeated copies compute the same values).

The result equals one process running the whole model (tests/python/test_operator_parallel.py).
"""
import hashlib
import itertools
import threading
import weakref

import numpy as np

from .. import _engine
from ..ops import _kernels
from ..common.parameter import Parameter
from ..common.tensor import Tensor

__all__ = []

_SUM = 0
_state = threading.local()
_generation = [0]   # bumped whenever a Parameter is sliced: optimizers compare it to resync their states
_groups = {}        # sorted world ranks -> group name
_sliced = weakref.WeakValueDictionary()  # id -> Parameter sliced here (merge_parameters)
# bytes this process has sent in operator-parallel collectives, by the ring algorithms' count (all-reduce
# 2(g-1)/g of the tensor, all-gather (g-1)/g of the result): benchmarks/bench_operator_parallel.py reads it
comm_bytes = [0]
_pending_detach = weakref.WeakValueDictionary()  # Parameters sliced under a grad transform, still with history


def release_history():
    """Drops the autodiff history of Parameters sliced during a grad transform (their block was computed from the
    whole Parameter, whose storage that history keeps alive). Called after the step's gradient (by an optimizer's
    next step, merge_parameters), never while a grad transform runs. Also finishes hiding the Parameters sliced
    since the last call from every Cell that mirrors them (_attribute_reads.hide_everywhere)."""
    _attribute_reads.hide_everywhere()
    _strategy_file.flush()
    if _engine.grad_level() > 0:
        return
    for key in list(_pending_detach.keys()):
        p = _pending_detach.pop(key, None)
        if p is not None:
            p._rebind(_kernels.detach(p))


# ------------------------------------------------------------------------------------------------ activation
def _world():
    from ..communication.management import GlobalComm
    if not GlobalComm.INITED:
        return 1, 0
    return _engine.comm_group_size("world"), _engine.comm_group_rank("world")


def active():
    """True when a sharded primitive must run sharded: parallel_mode 'semi_auto_parallel' (or inside an
    AutoParallel call), more than one process, no pipeline stages."""
    from .._parallel_context import ParallelMode, get_auto_parallel_context
    if not (getattr(_state, "auto", 0) or
            get_auto_parallel_context("parallel_mode") in (ParallelMode.SEMI_AUTO_PARALLEL,
                                                           ParallelMode.AUTO_PARALLEL)):
        return False
    if get_auto_parallel_context("pipeline_stages") > 1:
        return False
    return _world()[0] > 1


def agree(op, desc, what, group="world", detail=None):
    """Checks, before a collective whose sizes follow from what each process passes, that every process of `group`
    passes the same thing: `desc` (a str, e.g. the shapes and dtypes of the inputs) is compared over the processes
    (with `op`: an AllGather of its length and a 128-bit digest; two more AllGathers, of the texts' lengths and of
    the texts, only when they differ, so the common case costs one small collective). A
    collective of mismatched sizes would make Gloo abort the process (SIGABRT) or pair unrelated data, so this raises
    first, in every process of the group alike.

    Args:
        op (str): the API named in the error (e.g. 'AutoParallel', 'merge_parameters').
        desc (str): what this process passes.
        what (str): what must be the same, for the message (e.g. 'the shapes and dtypes of its Tensor arguments').
        group (str): the communication group of the collective that follows. Default 'world'.
        detail (str, optional): what the error shows for this process instead of `desc` (e.g. with the names of
            Parameters, which need not be equal); only `desc` is compared.
    Raises:
        ValueError: the processes passed different `desc`, naming each rank's.
    """
    n = _engine.comm_group_size(group) if _world()[0] > 1 else 1
    if n == 1:
        return
    data = f"{op} {desc}".encode()  # the API too: two different collective calls must not pass as one
    digest = np.frombuffer(hashlib.sha256(data).digest()[:16], np.int64)
    head = Tensor(np.concatenate([np.array([len(data)], np.int64), digest]))
    heads = _kernels.all_gather(head, group).asnumpy().reshape(n, 3)
    if (heads == heads[0]).all():
        return
    shown = f"{op} {detail}".encode() if detail is not None else data
    sizes = _kernels.all_gather(Tensor(np.array([len(shown)], np.int64)), group).asnumpy()
    buf = np.zeros(max(int(sizes.max()), 1), np.int32)
    buf[:len(shown)] = np.frombuffer(shown, np.uint8)
    texts = _kernels.all_gather(Tensor(buf), group).asnumpy().reshape(n, -1)
    ranks = _engine.comm_group_ranks(group)
    per_rank = "; ".join(f"rank {ranks[i]}: {bytes(texts[i, :int(sizes[i])].astype(np.uint8)).decode()}"
                         for i in range(n))
    raise ValueError(f"For '{op}', every process must pass the same {what}, but they differ ({per_rank}).")


class auto_scope:
    """Context manager: sharded primitives run sharded inside (AutoParallel's call). `hsdp`: AutoParallel.hsdp's
    (shard_size, threshold), which an optimizer stepping inside applies to itself (hsdp_config)."""

    def __init__(self, hsdp=None):
        self.hsdp = hsdp

    def __enter__(self):
        _state.auto = getattr(_state, "auto", 0) + 1
        self.outer = getattr(_state, "hsdp", None)
        if self.hsdp is not None:
            _state.hsdp = self.hsdp

    def __exit__(self, *exc):
        _state.auto -= 1
        _state.hsdp = self.outer


def hsdp_config():
    """AutoParallel.hsdp's (shard_size, threshold) of the innermost AutoParallel call running, or None."""
    return getattr(_state, "hsdp", None)


# ------------------------------------------------------------------------------------------------ strategies
_strategies_made = [False]  # a shard strategy was given in this process (check_full_batch_inputs runs only then)


def check_full_batch_inputs(api, args, params):
    """With full_batch (every process passes the whole batch; set_auto_parallel_context(parallel_mode=
    'semi_auto_parallel', full_batch=True)) the sharded ops cut the same whole tensors on every process, so every
    process must pass Tensor arguments of the same shapes and dtypes; otherwise the ops' collectives differ in size
    and Gloo aborts a process (SIGABRT). Called by the outermost grad transform (value_and_grad / grad /
    GradOperation, so TrainOneStepCell and Model in PyNative) and by a Cell's compiled call in GRAPH_MODE before
    they run: one small all-gather per step
    (agree()), only when some of `params` (the grad's weights, the Cell's Parameters) is sliced by operator
    parallel (so a step that touches none — e.g. one process evaluating a metric Cell alone — runs no collective,
    and the first step, before any slicing, is not checked), with operator parallel active and outside an
    AutoParallel call (which checks its own arguments) and a trace.

    Raises:
        ValueError: the processes' Tensor arguments differ, naming each rank's shapes and dtypes.
    """
    if not _strategies_made[0] or _engine.tracing() or getattr(_state, "auto", 0) or not active():
        return
    from .._parallel_context import get_auto_parallel_context
    if not (get_auto_parallel_context("full_batch") or get_auto_parallel_context("dataset_strategy") == "full_batch"):
        return  # a sharded op raises: it needs full_batch
    if not any("_kiln_op_layout" in p.__dict__ for p in params):
        return
    desc = ", ".join(f"arg {i}: {list(a.shape)} {a.dtype}" for i, a in enumerate(args) if isinstance(a, Tensor))
    agree(api, f"({desc})", "shapes and dtypes of its Tensor arguments (operator parallel with full_batch=True: "
          "every process passes the whole batch, which the sharded ops cut alike; a dataset's short last batch: "
          "batch(..., drop_remainder=True))")


def check_strategy_type(name, in_strategy, out_strategy):
    """The type checks of Primitive.shard (at shard() time): in_strategy a tuple of tuples of ints >= 1;
    out_strategy None. TypeError / ValueError naming the primitive."""
    _strategies_made[0] = True
    if not isinstance(in_strategy, tuple):
        raise TypeError(f"For '{name}', the 'in_strategy' should be a tuple(tuple(int)), but got "
                        f"{type(in_strategy).__name__}.")
    for s in in_strategy:
        if not isinstance(s, tuple):
            raise TypeError(f"For '{name}', the element of 'in_strategy' should be a tuple(int), but got "
                            f"{type(s).__name__} ({s!r}); Layout strategies are not supported by Kiln.")
        for v in s:
            if isinstance(v, bool) or not isinstance(v, int):
                raise TypeError(f"For '{name}', the element of strategy must be int type, but got {v!r} "
                                f"({type(v).__name__}) in {in_strategy!r}.")
            if v <= 0:
                raise ValueError(f"For '{name}', the element of strategy must be positive, but got {v} in "
                                 f"{in_strategy!r}.")
    if out_strategy is not None:
        raise ValueError(f"For '{name}', out_strategy={out_strategy!r}: Kiln's operator parallel makes every "
                         f"output whole on every process and takes out_strategy=None only.")


class _Plan:
    """One sharded call: the device matrix `dev` (without the repeated copies), `rep` copies, the tensor map of
    each Tensor input and of the output (per dimension: a device-matrix axis or None), and the axes over which
    the output is a partial sum."""
    __slots__ = ("dev", "rep", "in_maps", "out_map", "partial")

    def __init__(self, dev, rep, in_maps, out_map, partial):
        self.dev, self.rep, self.in_maps, self.out_map, self.partial = tuple(dev), rep, in_maps, out_map, partial

    def coords(self, rank):
        m = 1
        for d in self.dev:
            m *= d
        q, out = rank % m, []
        for d in reversed(self.dev):
            out.append(q % d)
            q //= d
        return tuple(reversed(out)), rank // m, m

    def ranks_along(self, rank, axes):
        """The world ranks of this copy of the device matrix whose coordinates equal rank's except along `axes`
        (sorted: the order of their coordinates along `axes`, row-major)."""
        c, layer, m = self.coords(rank)
        ranges = [range(self.dev[a]) if a in axes else (c[a],) for a in range(len(self.dev))]
        out = []
        for cc in itertools.product(*ranges):
            q = 0
            for a, v in enumerate(cc):
                q = q * self.dev[a] + v
            out.append(layer * m + q)
        return out


def _fmt(strategies):
    return "(" + ", ".join(str(tuple(s)) for s in strategies) + ("," if len(strategies) == 1 else "") + ")"


def _validate(name, strategies, shapes, world):
    """MindSpore's generic checks: one strategy per Tensor input, each as long as its input's rank, every
    dimension divisible by its strategy value, and each strategy's product dividing the device number."""
    if len(strategies) != len(shapes):
        raise ValueError(f"For '{name}', the strategy is {_fmt(strategies)}, strategy len: {len(strategies)} is not "
                         f"equal to inputs len: {len(shapes)} (one strategy per Tensor input; shapes "
                         f"{[list(s) for s in shapes]}).")
    for i, (s, shape) in enumerate(zip(strategies, shapes)):
        if len(s) != len(shape):
            raise ValueError(f"For '{name}', the strategy is {_fmt(strategies)}, strategy len: {len(s)} is not equal "
                             f"to inputs len: {len(shape)}, index: {i} (input {i} has shape {list(shape)}).")
        prod = 1
        for v in s:
            prod *= v
        if prod > world or world % prod:
            raise ValueError(f"For '{name}', invalid strategy {_fmt(strategies)}: the product of the strategy of "
                             f"input {i}, {prod}, must divide the device num {world}.")
        for dim, v in zip(shape, s):
            if dim % v:
                raise ValueError(f"For '{name}', the strategy is {_fmt(strategies)}, shape {dim} can not be divisible "
                                 f"by strategy value {v} (input {i}, shape {list(shape)}).")


def _finish(name, strategies, dev, in_maps, out_map, partial, world):
    m = 1
    for d in dev:
        m *= d
    if m > world or world % m:
        raise ValueError(f"For '{name}', invalid strategy {_fmt(strategies)}: its device matrix {list(dev)} has "
                         f"{m} devices, which must divide the device num {world}.")
    return _Plan(dev, world // m, in_maps, out_map, partial)


def _plan_matmul(prim, strategies, shapes, world):
    name = prim.name if hasattr(prim, "name") else type(prim).__name__
    sa, sb = strategies
    ra, rb = len(shapes[0]), len(shapes[1])
    ta, tb = bool(getattr(prim, "transpose_a", False)), bool(getattr(prim, "transpose_b", False))
    if ra < 2 or rb < 2 or (ra != rb and rb != 2):
        raise ValueError(f"For '{name}', Kiln's operator parallel takes inputs of equal rank >= 2 (or a 2-D second "
                         f"input), but got shapes {list(shapes[0])} and {list(shapes[1])}.")
    nb = ra - 2
    m_a, k_a = (sa[-1], sa[-2]) if ta else (sa[-2], sa[-1])
    k_b, n_b = (sb[-1], sb[-2]) if tb else (sb[-2], sb[-1])
    if k_a != k_b:
        raise ValueError(f"For '{name}', invalid strategy {_fmt(strategies)}: the strategy of the reduce dimension "
                         f"of the first input ({k_a}) must be equal to that of the second input ({k_b}).")
    if rb == ra and tuple(sa[:nb]) != tuple(sb[:nb]):
        raise ValueError(f"For '{name}', invalid strategy {_fmt(strategies)}: the batch dimensions of the two "
                         f"inputs must have the same strategy.")
    dev = list(sa[:nb]) + [m_a, k_a, n_b]
    ia, ik, in_ = nb, nb + 1, nb + 2
    batch = list(range(nb))
    map_a = batch + ([ik, ia] if ta else [ia, ik])
    map_b = (batch if rb == ra else []) + ([in_, ik] if tb else [ik, in_])
    out_map = batch + [ia, in_]
    return _finish(name, strategies, dev, [map_a, map_b], out_map, [ik], world)


def _plan_elementwise(prim, strategies, shapes, world):
    """Element-wise ops with NumPy broadcasting: the output's dimension d is cut as the inputs that have it (size >
    1) cut it; a broadcast dimension (size 1) must not be cut."""
    name = getattr(prim, "name", type(prim).__name__)
    rank = max(len(s) for s in shapes)
    out = [1] * rank
    for s, shape in zip(strategies, shapes):
        off = rank - len(shape)
        for d, (v, dim) in enumerate(zip(s, shape)):
            if dim == 1 and v != 1:
                raise ValueError(f"For '{name}', invalid strategy {_fmt(strategies)}: a broadcast dimension (size 1) "
                                 f"can not be split (shapes {[list(x) for x in shapes]}).")
            if dim != 1:
                if out[off + d] not in (1, v) and v != 1:
                    raise ValueError(f"For '{name}', invalid strategy {_fmt(strategies)}: the inputs' strategies of "
                                     f"output dimension {off + d} differ (shapes {[list(x) for x in shapes]}).")
                out[off + d] = max(out[off + d], v)
    # an input dimension that is not cut while the output's is: its block is the whole dimension, which cannot be
    # combined with the other input's blocks (MindSpore requires equal strategies there too)
    for s, shape in zip(strategies, shapes):
        off = rank - len(shape)
        for d, (v, dim) in enumerate(zip(s, shape)):
            if dim != 1 and v != out[off + d]:
                raise ValueError(f"For '{name}', invalid strategy {_fmt(strategies)}: the inputs' strategies of "
                                 f"output dimension {off + d} differ (shapes {[list(x) for x in shapes]}).")
    in_maps = [[(rank - len(shape) + d) if shape[d] != 1 and s[d] > 1 else None
                for d in range(len(shape))] for s, shape in zip(strategies, shapes)]
    out_map = [d if out[d] > 1 else None for d in range(rank)]
    # the device matrix: one axis per output dimension (cut or not, so that the maps above are axis indices)
    return _finish(name, strategies, out, in_maps, out_map, [], world)


def _plan_softmax(prim, strategies, shapes, world):
    name = getattr(prim, "name", type(prim).__name__)
    axis = getattr(prim, "axis", -1)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    rank = len(shapes[0])
    for a in axes:
        a = a + rank if a < 0 else a
        if strategies[0][a] != 1:
            raise ValueError(f"For '{name}', invalid strategy {_fmt(strategies)}: the strategy corresponding to axis "
                             f"dimension ({a}) must be 1.")
    return _plan_elementwise(prim, strategies, shapes, world)


def _plan_bias_add(prim, strategies, shapes, world):
    name = getattr(prim, "name", type(prim).__name__)
    sx, sb = strategies
    fmt = getattr(prim, "data_format", "NCHW")
    c = len(shapes[0]) - 1 if fmt == "NHWC" else 1
    if len(shapes[0]) < 2 or tuple(sb) != (sx[c],):
        raise ValueError(f"For '{name}', invalid strategy {_fmt(strategies)}: the bias's strategy must be the "
                         f"strategy of the channel dimension of the input ({sx[c] if len(sx) > c else '?'},).")
    rank = len(shapes[0])
    in_maps = [[d if sx[d] > 1 else None for d in range(rank)], [c if sb[0] > 1 else None]]
    return _finish(name, strategies, list(sx), in_maps, [d if sx[d] > 1 else None for d in range(rank)], [], world)


def _rule(prim):
    if isinstance(prim, ShardedFunction):
        return {"matmul": _plan_matmul, "elementwise": _plan_elementwise}[prim._kind]
    from ..ops import primitives as P
    from ..ops.math_func import BiasAdd
    if isinstance(prim, P.MatMul):  # BatchMatMul too
        return _plan_matmul
    if isinstance(prim, P.Softmax):  # LogSoftmax too
        return _plan_softmax
    if isinstance(prim, BiasAdd):
        return _plan_bias_add
    if type(prim).__name__ in _ELEMENTWISE:
        return _plan_elementwise
    return None


_ELEMENTWISE = {"Add", "Sub", "Mul", "Div", "RealDiv", "Neg", "Exp", "Log", "Sqrt", "Rsqrt", "Square", "Abs", "Pow",
                "Maximum", "Minimum", "ReLU", "Sigmoid", "Tanh", "GeLU", "FastGeLU", "SiLU", "ReLU6", "Erf",
                "Cast", "Reciprocal", "AddN"}


def supported(prim):
    """Whether Kiln can shard this primitive (the primitives of the operator-parallel section of
    docs/distributed.md)."""
    return _rule(prim) is not None


# ------------------------------------------------------------------------------------------------ groups, blocks
def _group(ranks):
    world, _ = _world()
    ranks = tuple(sorted(ranks))
    if len(ranks) == world:
        return "world"
    name = _groups.get(ranks)
    if name is None:
        name = "kiln_op_shard_" + "_".join(map(str, ranks))
        if not _engine.comm_has_group(name):
            _engine.comm_create_group(name, list(ranks))
        _groups[ranks] = name
    return name


def _block_index(plan, tmap, shape, rank):
    c, _, _ = plan.coords(rank)
    idx = []
    for d, a in enumerate(tmap):
        if a is None or plan.dev[a] == 1:
            idx.append(slice(None))
        else:
            b = shape[d] // plan.dev[a]
            idx.append(slice(c[a] * b, (c[a] + 1) * b))
    return tuple(idx)


def _split_axes(plan, tmap):
    return sorted({a for a in tmap if a is not None and plan.dev[a] > 1})


def _take(t, plan, tmap, rank):
    idx = _block_index(plan, tmap, t.shape, rank)
    if all(s == slice(None) for s in idx):
        return t
    return t[idx]


def _allreduce(t, plan, axes, rank):
    axes = [a for a in axes if plan.dev[a] > 1]
    if not axes:
        return t
    ranks = plan.ranks_along(rank, set(axes))
    comm_bytes[0] += 2 * (len(ranks) - 1) * int(t.nbytes) // len(ranks)
    return _kernels.all_reduce(t, _SUM, _group(ranks))


def _gather(t, plan, tmap, rank):
    """The whole tensor from the blocks `t` (this process's) held by the processes along the split axes of tmap."""
    axes = _split_axes(plan, tmap)
    if not axes:
        return t
    ranks = plan.ranks_along(rank, set(axes))
    comm_bytes[0] += (len(ranks) - 1) * int(t.nbytes)
    g = _kernels.all_gather(t, _group(ranks))
    block = list(t.shape)
    counts = [plan.dev[a] for a in axes]
    g = _kernels.reshape(g, counts + block)
    # dims: [axis 0..k-1 counts] + [block dims]; put each count in front of the tensor dim it cuts
    perm, shape = [], []
    for d, a in enumerate(tmap):
        if a is not None and plan.dev[a] > 1:
            perm.append(axes.index(a))
            shape.append(block[d] * plan.dev[a])
        else:
            shape.append(block[d])
        perm.append(len(axes) + d)
    if perm != sorted(perm):
        g = _kernels.transpose(g, perm)
    return _kernels.reshape(g, shape)


def _record(inputs, values, bprop):
    if _engine.grad_level() == 0:
        return values
    return _engine.record_custom(inputs, values, bprop)


# --------------------------------------------------------------------------------- redistribution with gradients
def _to_block(x, plan, tmap, rank):
    """The block of a whole (replicated) tensor; backward: the whole gradient on every process (AllReduce over the
    holders of the same block, AllGather over the blocks)."""
    out = _take(_kernels.detach(x), plan, tmap, rank)
    if out is x:
        out = _kernels.detach(x)
    holders = [a for a in range(len(plan.dev)) if a not in _split_axes(plan, tmap)]

    def bprop(ins, outs, gouts):
        g = gouts[0] if gouts[0] is not None else _kernels.zeros_like(outs[0])
        return [_gather(_allreduce(g, plan, holders, rank), plan, tmap, rank)]

    return _record([x], [out], bprop)[0]


def _mirror(p, plan, tmap, rank):
    """A Parameter's block as the op's input; backward: its gradient summed over the processes of this copy of the
    device matrix that hold the same block (MindSpore's MirrorOperator)."""
    holders = [a for a in range(len(plan.dev)) if a not in _split_axes(plan, tmap)]
    if not [a for a in holders if plan.dev[a] > 1]:
        return p

    def bprop(ins, outs, gouts):
        g = gouts[0] if gouts[0] is not None else _kernels.zeros_like(outs[0])
        return [_allreduce(g, plan, holders, rank)]

    return _record([p], [_kernels.identity(p)], bprop)[0]


def _to_whole(y, plan, rank):
    """The whole output from this process's block (a partial sum over plan.partial): AllReduce, then AllGather;
    backward: this process's block of the (whole, replicated) cotangent."""
    v = _gather(_allreduce(_kernels.detach(y), plan, plan.partial, rank), plan, plan.out_map, rank)
    full_shape = tuple(v.shape)

    def bprop(ins, outs, gouts):
        g = gouts[0]
        if g is None:
            return [None]
        idx = _block_index(plan, plan.out_map, full_shape, rank)
        return [g[idx] if not all(s == slice(None) for s in idx) else g]

    return _record([y], [v], bprop)[0]


# ------------------------------------------------------------------------------------------------ parameters
class _ParamLayout:
    """How a Parameter is stored: the whole shape, its tensor map and the op's device matrix (and copies)."""
    __slots__ = ("full_shape", "plan", "tmap", "rank", "op")

    def __init__(self, full_shape, plan, tmap, rank, op):
        self.full_shape, self.plan, self.tmap, self.rank, self.op = tuple(full_shape), plan, list(tmap), rank, op

    def slices(self):
        """Per dimension, the number of slices."""
        return tuple(self.plan.dev[a] if a is not None else 1 for a in self.tmap)


def _layout_of(p):
    return p.__dict__.get("_kiln_op_layout")


def _slice_parameter(p, plan, tmap, rank, op):
    """Replaces p's values by this process's block (in place of the Python object: every holder sees the block).
    Under a grad transform the block is computed from the watched whole Parameter, so this step's gradient reaches
    it."""
    lay = _ParamLayout(p.shape, plan, tmap, rank, op)
    if _engine.tracing():
        raise RuntimeError(f"For '{op}', the Parameter '{p.name}' (shape {list(p.shape)}) must be sliced by its first "
                           f"sharded use, which Kiln cannot do inside a compiled function (GRAPH_MODE, kiln.jit): run "
                           f"the first step in PyNative (AutoParallel does so by itself in GRAPH_MODE); later steps "
                           f"may be compiled (docs/distributed.md, 'Operator parallel').")
    from ..common import _deferred_init
    if _deferred_init.pending(p) is not None:
        _deferred_init.materialize(p)
    idx = _block_index(plan, tmap, p.shape, rank)
    # a copy (not a view: the whole storage is freed), recorded from the watched whole Parameter under a grad
    block = p[idx] * 1 if _engine.grad_level() > 0 else _kernels.detach(p[idx]) * 1
    p._rebind(block)
    p.__dict__["_kiln_op_layout"] = lay
    if _engine.grad_level() > 0:  # the block's history holds the whole tensor: cut it once the step's grad is done
        _pending_detach[id(p)] = p
    _sliced[id(p)] = p
    _generation[0] += 1
    _attribute_reads.hide_from_cells(p)
    _strategy_file.note_sliced(p)


def _param_block(p, plan, tmap, rank, op):
    lay = _layout_of(p)
    if lay is None:
        if any(a is not None and plan.dev[a] > 1 for a in tmap):
            _slice_parameter(p, plan, tmap, rank, op)
    else:
        want = tuple(plan.dev[a] if a is not None else 1 for a in tmap)
        if want != lay.slices() or plan.dev != lay.plan.dev:
            raise ValueError(f"For '{op}', the Parameter '{p.name}' (shape {list(lay.full_shape)}) is already sharded "
                             f"as {lay.slices()} over device matrix {list(lay.plan.dev)} by '{lay.op}', but this call "
                             f"needs {want} over {list(plan.dev)}: a Parameter takes one layout.")
    return _mirror(p, plan, tmap, rank)


# ------------------------------------------------------------------------------------------------ the call
def call(prim, base_call, args):
    """Runs `base_call(prim, *args)` sharded by prim's in_strategy (see the module docstring)."""
    name = getattr(prim, "name", type(prim).__name__)
    strategies = prim.__dict__["_kiln_in_strategy"]
    if not getattr(_state, "auto", 0):
        from .._parallel_context import get_auto_parallel_context
        if not (get_auto_parallel_context("full_batch") or
                get_auto_parallel_context("dataset_strategy") == "full_batch"):
            raise ValueError(f"For '{name}', operator parallel with set_auto_parallel_context(parallel_mode="
                             f"'semi_auto_parallel') needs full_batch=True in Kiln (every process passes the whole "
                             f"batch): with the default dataset strategy 'data_parallel' each process's input is "
                             f"its slice of the batch, which Kiln gathers only for a step wrapped in "
                             f"mindspore.parallel.auto_parallel.AutoParallel.")
    # a sliced Parameter read as a Cell attribute arrives gathered (whole_for_read): this op takes its block
    args = tuple(a.__dict__.get("_kiln_whole_of", a) if isinstance(a, Tensor) and not isinstance(a, Parameter)
                 else a for a in args)
    world, rank = _world()
    from .._parallel_context import get_auto_parallel_context
    device_num = get_auto_parallel_context("device_num")
    if device_num != world:  # as the pipeline checks it: Kiln's device matrix is the processes of the job
        raise ValueError(f"For '{name}', device_num ({device_num}, set by set_auto_parallel_context) must equal the "
                         f"number of processes ({world}): operator parallel cuts the strategy {strategies!r} over the "
                         f"processes of the job.")
    tensor_pos = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    shapes = []  # the whole shapes (a sliced Parameter's as recorded when it was sliced)
    for i in tensor_pos:
        lay = _layout_of(args[i]) if isinstance(args[i], Parameter) else None
        shapes.append(lay.full_shape if lay is not None else tuple(args[i].shape))
    strat = list(strategies)
    # a strategy may be omitted (or given as ()) for trailing non-Tensor (scalar) inputs only
    if len(strat) == len(args) and len(tensor_pos) < len(args):
        strat = [strat[i] for i in tensor_pos]
    _validate(name, strat, shapes, world)
    plan = _rule(prim)(prim, strat, shapes, world)
    if any(isinstance(args[i], Parameter) for i in tensor_pos):
        _strategy_file.note_op(prim, name, strat)
    local = list(args)
    for i, tmap in zip(tensor_pos, plan.in_maps):
        a = args[i]
        if isinstance(a, Parameter):
            local[i] = _param_block(a, plan, tmap, rank, name)
        else:
            local[i] = _to_block(a, plan, tmap, rank)
    y = base_call(prim, *local)
    return _to_whole(y, plan, rank)


_warned_pipeline = [False]  # check_inactive's warning about strategies under pipeline stages, once


def check_inactive(prim, args):
    """A primitive with a strategy called while operator parallel is not active (one process, a mode other than
    semi_auto_parallel, outside AutoParallel) runs whole: a Parameter it takes that an earlier sharded call left
    stored sliced would be computed on as if it were whole (or fail on a shape mismatch that names no cause). Raises
    ValueError naming the primitive, the Parameter, its whole and sliced shapes and the way out. With pipeline stages
    (semi_auto_parallel, pipeline_stages > 1, several processes) the strategy is ignored: a RuntimeWarning says so
    once per process (MindSpore would shard the op inside its stage; Kiln runs it whole there)."""
    if not _warned_pipeline[0] and _world()[0] > 1:
        from .._parallel_context import get_auto_parallel_context
        if get_auto_parallel_context("pipeline_stages") > 1:
            import warnings
            _warned_pipeline[0] = True
            warnings.warn(f"For '{getattr(prim, 'name', type(prim).__name__)}', the shard strategy "
                          f"{prim.__dict__.get('_kiln_in_strategy')!r} is ignored with pipeline_stages="
                          f"{get_auto_parallel_context('pipeline_stages')}: Kiln does not combine operator parallel "
                          f"with pipeline stages, so sharded primitives run whole in their stage (the same values, "
                          f"without the memory saving; docs/distributed.md, 'Pipeline parallel').", RuntimeWarning,
                          stacklevel=3)
    for a in args:
        lay = _layout_of(a) if isinstance(a, Parameter) else None
        if lay is not None:
            from .._parallel_context import get_auto_parallel_context
            raise ValueError(
                f"For '{getattr(prim, 'name', type(prim).__name__)}', the Parameter '{a.name}' is stored sliced by "
                f"operator parallel (whole shape {list(lay.full_shape)}, this process's slice {list(a.shape)}, cut "
                f"{lay.slices()} by '{lay.op}'), but operator parallel is not active now (parallel_mode "
                f"{get_auto_parallel_context('parallel_mode')!r}, {_world()[0]} process(es), outside AutoParallel), so "
                f"the op would run on the slice as if it were whole. Keep parallel_mode='semi_auto_parallel' (or "
                f"call the network through the same AutoParallel) after its Parameters were sliced, e.g. do not call "
                f"reset_auto_parallel_context() between steps; to go on in one process, save the whole values first "
                f"(kiln.parallel.merge_parameters or save_checkpoint) and load them into a new network.")


# ------------------------------------------------------------------------------------------------ merging
def merge_parameter(p):
    """The whole value of a Parameter sharded by operator parallel (an AllGather of its blocks over the processes of
    one copy of the device matrix; a collective: every process must call it, in the same order), or p's value when
    it is not sharded. Returns a new Tensor."""
    release_history()
    lay = _layout_of(p)
    if lay is None:
        return _kernels.detach(p) * 1
    return _gather(_kernels.detach(p), lay.plan, lay.tmap, lay.rank)


def describe_parameters(params):
    """'name [whole shape] /slices dtype' of each Parameter, for agree(): what a gather of their slices depends on."""
    out = []
    for p in params:
        lay = _layout_of(p)
        shape, cut = (lay.full_shape, lay.slices()) if lay is not None else (tuple(p.shape), None)
        out.append(f"{p.name} {list(shape)}" + (f" cut {cut}" if cut else "") + f" {p.dtype}")
    return "[" + ", ".join(out) + "]"


def take_slice(p, whole):
    """This process's block of `whole` (a value of the whole shape of p, a Parameter sliced by operator parallel):
    what load_param_into_net writes into p."""
    lay = _layout_of(p)
    return _take(whole, lay.plan, lay.tmap, lay.rank)


def sharded_layout(p):
    """(whole shape, slices per dimension) of a Parameter sharded by operator parallel, or None."""
    lay = _layout_of(p)
    return None if lay is None else (lay.full_shape, lay.slices())


# ------------------------------------------------------------------------------------------------ optimizers
def sync_optimizer(opt):
    """Slices an optimizer's per-parameter state (moments, ...) like its Parameters once they were sharded after the
    optimizer was made (their first sharded use), and updates its shape table. Called by Optimizer before a step
    when _generation moved. ValueError for a Parameter the optimizer also slices by optimizer parallel."""
    d = opt.__dict__
    if d.get("_kiln_op_gen") == _generation[0]:
        return
    release_history()
    d["_kiln_op_gen"] = _generation[0]
    opt_shards = d.get("_opt_shards")  # optimizer parallel: one entry per whole Parameter (opt.parameters)
    for p, shard in zip(opt.parameters if opt_shards is not None else (), opt_shards or ()):
        lay = _layout_of(p)
        if lay is not None and shard is not None:
            raise ValueError(f"For '{opt.cls_name}', the Parameter '{p.name}' is sliced both by optimizer parallel "
                             f"(enable_parallel_optimizer=True: its state holds 1/{shard.size} of dimension 0) "
                             f"and by operator parallel (whole shape {list(lay.full_shape)}, cut {lay.slices()} by "
                             f"'{lay.op}'): Kiln does not combine the two on one Parameter. Turn optimizer parallel "
                             f"off, raise parallel_optimizer_threshold above that Parameter's size, or remove the "
                             f"shard strategy (docs/distributed.md, 'Operator parallel').")
    params = list(d.get("_parameters") or ())
    shapes = d.get("_param_shapes")
    if shapes is None:
        return
    changed = {}
    for i, p in enumerate(params):
        lay = _layout_of(p)
        if lay is not None and tuple(shapes[i]) != tuple(p.shape):
            changed[p.name] = (p, lay)
            shapes[i] = tuple(p.shape)
    if not changed:
        return
    mine = {id(p) for p in params}
    for pname, state in opt.parameters_and_names():
        if id(state) in mine:
            continue
        for name, (p, lay) in changed.items():
            if state.name.endswith("." + name) and tuple(state.shape) == lay.full_shape:
                idx = _block_index(lay.plan, lay.tmap, lay.full_shape, lay.rank)
                state._rebind(_kernels.detach(state[idx]) * 1)
                state.__dict__["_kiln_op_layout"] = _ParamLayout(lay.full_shape, lay.plan, lay.tmap, lay.rank, lay.op)
                _strategy_file.note_sliced(state)


def supported_names():
    """The names of the primitives Kiln can shard."""
    return {"MatMul", "BatchMatMul", "Softmax", "LogSoftmax", "BiasAdd"} | _ELEMENTWISE


# ------------------------------------------------------------------------------------------------ functions
_FUNCTION_KINDS = {}


def _function_kind(fn):
    """'matmul' / 'elementwise' / 'softmax' for the functions Kiln shards (ops and mint), else None."""
    if not _FUNCTION_KINDS:
        from .. import mint, ops
        from ..mint.nn import functional as mf
        for f in (ops.matmul, mint.matmul, ops.bmm, mint.bmm, ops.batch_matmul if hasattr(ops, "batch_matmul")
                  else None):
            if f is not None:
                _FUNCTION_KINDS[f] = "matmul"
        for name in ("relu", "gelu", "tanh", "sigmoid", "silu", "exp", "log", "sqrt", "rsqrt", "abs", "neg",
                     "square", "add", "sub", "mul", "div", "maximum", "minimum", "pow"):
            for module in (ops, mint, mf):
                f = getattr(module, name, None)
                if f is not None:
                    try:
                        _FUNCTION_KINDS[f] = "elementwise"
                    except TypeError:
                        pass
    try:
        return _FUNCTION_KINDS.get(fn)
    except TypeError:
        return None


class ShardedFunction:
    """What kiln.parallel.shard returns for a function: calls `fn` sharded by `in_strategy` when operator parallel
    is active (as a primitive with that strategy), else `fn` itself."""

    def __init__(self, fn, in_strategy, kind):
        self.fn, self._kind = fn, kind
        self.name = getattr(fn, "__name__", type(fn).__name__)
        self.__dict__["_kiln_in_strategy"] = in_strategy

    def __call__(self, *args, **kwargs):
        if active():
            if kwargs:
                raise ValueError(f"For '{self.name}' sharded by parallel.shard, Kiln passes positional arguments "
                                 f"only while operator parallel is active, but got {sorted(kwargs)}.")
            return call(self, lambda _self, *a: self.fn(*a), args)
        check_inactive(self, args)
        return self.fn(*args, **kwargs)

    def __repr__(self):
        return f"ShardedFunction({self.name}, in_strategy={self._kiln_in_strategy!r})"


def shard_function(fn, in_strategy, out_strategy=None, parameter_plan=None, device="Ascend", level=0):
    """mindspore.parallel.shard(fn, in_strategy, out_strategy=None, parameter_plan=None, device='Ascend', level=0)
    for the functions Kiln shards (ops/mint matmul, bmm and element-wise functions: relu, gelu, add, mul, ...):
    returns a callable that runs `fn` with that strategy as the matching primitive would (see Primitive.shard).

    Raises:
        TypeError: fn not callable; in_strategy not a tuple of tuples of ints; parameter_plan not None/dict.
        ValueError: a function Kiln cannot shard (a Cell or another function: MindSpore propagates their layouts
            through a compiled graph, which Kiln does not); out_strategy or parameter_plan given; a strategy value
            < 1; device not 'Ascend'/'GPU'/'CPU'; level not 0.
    """
    if not callable(fn):
        raise TypeError(f"For 'shard', 'fn' must be a function or a Cell, but got {type(fn).__name__}.")
    name = getattr(fn, "__name__", type(fn).__name__)
    check_strategy_type(name, in_strategy, out_strategy)
    if parameter_plan is not None:
        if not isinstance(parameter_plan, dict):
            raise TypeError(f"For 'shard', the 'parameter_plan' should be a dict or None, but got "
                            f"{type(parameter_plan).__name__}.")
        raise ValueError("For 'shard', parameter_plan is not supported by Kiln: a Parameter takes the layout of the "
                         "sharded op that uses it.")
    if device not in ("Ascend", "GPU", "CPU"):
        raise ValueError(f"For 'shard', 'device' must be 'Ascend', 'GPU' or 'CPU', but got {device!r}.")
    if level != 0:
        raise ValueError(f"For 'shard', 'level' must be 0, but got {level!r}.")
    kind = _function_kind(fn)
    if kind is None:
        raise ValueError(f"For 'shard', Kiln shards the matmul, bmm and element-wise functions of ops / mint "
                         f"only (as the primitive with that strategy), but got {name!r}.")
    return ShardedFunction(fn, in_strategy, kind)


# the reads of sliced Parameters by ops without a strategy (last: that module uses this one's helpers)
from . import _attribute_reads  # noqa: E402 (after the helpers it imports from this module)
from . import _strategy_file  # noqa: E402 (records the layouts for strategy files)
