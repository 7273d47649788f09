"""Tensor-dependent control flow compiled into the graph: the run-time half (the AST rewrite in ast_rewrite.py turns
`if`/`while`/`for`/`x if c else y`/`and`/`or`/`not` into calls of the functions here).

Note [run-time choice] (docs/decisions/control-flow-ast-rewrite.md): every helper decides when it runs, from the
value it gets, as TensorFlow's AutoGraph does. A Python value, or a concrete tensor (PyNative, or a tensor read while
tracing), takes the Python route: the chosen branch runs, the loop runs in Python (unrolled into the graph while
tracing) — exactly what the code did before the rewrite. Only a *symbolic* tensor (a value computed by the graph being
traced) builds a control-flow node: each branch / the loop's cond and body is traced into a sub-graph by a lifting
Trace (kiln/graph.h), and an If / While node runs it (src/graph/control_flow.cpp), differentiably.

Variables. A branch or loop body is a function of the variables it assigns (their values before the statement) that
returns their new values. Only tensors (and numbers, made tensors) can flow out of a compiled branch or around a
compiled loop: both branches must give a variable the same shape and dtype, and a loop variable must keep its shape and
dtype. A variable assigned in only one branch and not defined before the `if` is undefined after it (using it raises
a NameError that names it); a variable first assigned inside a compiled loop body is local to the body.
"""
import threading

from .. import _engine
from ..ops import _kernels
from . import deferred_writes as _deferred_writes
from ..common.tensor import Tensor
from .graph_python import GraphText, joined, method, scalar, sequence  # noqa: F401 (called by rewritten code as _kiln_cf.*)
from .graph_assert import assert_, contains_  # noqa: F401 (called by rewritten code as _kiln_cf.*)
from .dynamic_loops import Rows, dynamic_rows, rows_of, size_bound  # noqa: F401 (rows_of: _kiln_cf.*)

__all__ = ["UNDEF", "if_stmt", "if_exp", "while_stmt", "for_stmt", "range_", "and_", "or_", "not_", "cond",
           "while_loop", "is_symbolic"]


class _Undefined:
    """The value of a variable with no value on some path (see the module note)."""
    __slots__ = ("name", "where")

    def __init__(self, name="?", where=""):
        self.name = name
        self.where = where

    def _fail(self, *args, **kwargs):
        raise NameError(f"Variable '{self.name}' is not defined here: it is assigned only on some paths of a "
                        f"tensor-dependent `if` or only inside a compiled loop{self.where}. Assign it before the "
                        "statement (or in both branches).")

    __bool__ = __call__ = __getattr__ = __getitem__ = __iter__ = __len__ = __index__ = _fail
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = __neg__ = _fail
    __matmul__ = __rmatmul__ = __lt__ = __le__ = __gt__ = __ge__ = __pow__ = _fail

    def __repr__(self):
        return f"<undefined {self.name}>"


UNDEF = _Undefined()
_local = threading.local()


def is_symbolic(x):
    """True for a tensor computed by the graph being traced (its value is not known while compiling)."""
    return isinstance(x, Tensor) and _engine.tracing() and x._symbolic


def _location():
    loc = _engine._user_location()
    return f" (at {loc})" if loc else ""


def _is_number(v):
    return isinstance(v, (bool, int, float)) and not isinstance(v, Tensor)


def _as_tensor(v, dtype=None):
    if dtype is not None:
        return Tensor(v, dtype=dtype)
    return Tensor(v)


def _number_as(v, dtype, shape):
    """The number v as a tensor of `dtype` (None: its own) and `shape` (every element v)."""
    t = _as_tensor(v, dtype)
    if shape:
        from .. import ops
        t = ops.broadcast_to(t, tuple(shape))
    return t


def _check_pred(pred, what):
    if pred.size != 1:
        raise ValueError(f"For {what}, the condition must be a tensor with one element, but got shape "
                         f"{list(pred.shape)}{_location()}: the truth value of a tensor with several elements is "
                         "ambiguous (reduce it first, e.g. x.max() > 0 or x.min() > 0).")


# ------------------------------------------------------------------------------------------- tracing sub-graphs
def _flatten(obj, tensors):
    from .structure import _flatten as f
    return f(obj, tensors)


def _unflatten(struct, tensors):
    from .structure import _unflatten as f
    return f(struct, tensors)


def _shape_key(struct):
    """A comparable form of a flattened structure (tensor leaves as 'T')."""
    from .structure import _Leaf
    if isinstance(struct, _Leaf):
        return "T"
    if isinstance(struct, (tuple, list)):
        return (type(struct).__name__,) + tuple(_shape_key(s) for s in struct)
    if isinstance(struct, dict):
        return ("dict",) + tuple((k, _shape_key(v)) for k, v in sorted(struct.items(), key=lambda kv: repr(kv[0])))
    if isinstance(struct, _Undefined):
        return ("undefined",)
    return ("py", type(struct).__name__, repr(struct))


def _trace(name, fn, in_tensors, in_struct, post=None):
    """Traces fn(*unflatten(in_struct, symbolic inputs)) into a closed sub-graph. `post` maps fn's result before it
    is flattened (run inside the trace). Returns (graph, lifted tensors, output structure, output tensors' metas)."""
    with _engine.Trace(name, lift=True) as tr, _deferred_writes.scope(False):
        sym = [tr.input(t.shape, t.dtype) for t in in_tensors]
        ids = [t._id for t in sym]
        out = fn(*_unflatten(in_struct, sym))
        if post is not None:
            out = post(out)
        outs = []
        struct = _flatten(out, outs)
        g = tr.finish(outs)
        lifted = tr.lifted()
        written = {j for j, t in enumerate(sym) if t._id != ids[j]}  # inputs written in place (x[i] = v, add_, ...)
    stack = _written_stack()
    if stack:
        stack[-1] |= written
    return g, lifted, struct, [(tuple(t.shape), t.dtype) for t in outs]


_tls = threading.local()


def _written_stack():
    """This thread's stack of sets: indices of the in_tensors of the control-flow statements being compiled that a
    branch/body wrote in place."""
    st = getattr(_tls, "written", None)
    if st is None:
        st = _tls.written = []
    return st


def _write_through(vals, res, idx_of, written, what):
    """After a compiled if/while: a variable whose tensor a branch/body wrote in place (`x[i] = v`) has the new value
    written into the tensor object it held before the statement (as in PyNative, so that other names for that
    object, and a caller's argument, see the write), and keeps that object."""
    from ..common._indexing import commit_write
    for i, j in idx_of.items():
        if j in written and isinstance(vals[i], Tensor) and isinstance(res[i], Tensor) and res[i] is not vals[i]:
            commit_write(vals[i], res[i], what)
            res[i] = vals[i]


def _numbers_to_tensors(vals, dtypes=None):
    """Numbers in a tuple of variable values become tensors (with dtypes[i] when given)."""
    out = []
    for i, v in enumerate(vals):
        if _is_number(v):
            v = _as_tensor(v, None if dtypes is None else dtypes[i])
        out.append(v)
    return tuple(out)


# ------------------------------------------------------------------------------------------------------ if
def if_stmt(pred, then_fn, else_fn, vals, names):
    """`if pred: <then> else: <else>` where each branch is a function of the variables `names` (their values `vals`
    before the statement) that returns their new values. Returns the values after the statement."""
    if not is_symbolic(pred):
        return then_fn(*vals) if pred else else_fn(*vals)
    return _compiled_if(pred, then_fn, else_fn, tuple(vals), tuple(names), "`if`")


def _compiled_if(pred, then_fn, else_fn, vals, names, what):
    _check_pred(pred, what)
    loc = _location()
    in_tensors = []
    in_struct = _flatten(vals, in_tensors)
    keep = None  # indices of the variables that flow out (None: all)
    casts = {}  # output tensor index -> dtype both branches cast it to (an int in one branch, a float in the other)
    for _ in range(3):
        def post(out, keep=keep, casts=dict(casts)):  # noqa: B006 (this iteration's casts, bound; never mutated)
            out = _numbers_to_tensors(out)
            out = tuple(out[i] if keep is None or i in keep else None for i in range(len(out)))
            if casts:
                ts = []
                st_ = _flatten(out, ts)
                ts = [t.astype(casts[j]) if j in casts and t.dtype != casts[j] else t for j, t in enumerate(ts)]
                out = _unflatten(st_, ts)
            return out
        depth = len(_written_stack())
        _written_stack().append(set())
        try:
            gt, lt, st, mt = _trace("if_true", then_fn, in_tensors, in_struct, post)
            ge, le, se, me = _trace("if_false", else_fn, in_tensors, in_struct, post)
        finally:
            written = _written_stack()[-1]
            del _written_stack()[depth:]
        retry = False
        if keep is None:
            drop = set()
            for i, (a, b) in enumerate(zip(st, se)):
                ka, kb = _shape_key(a), _shape_key(b)
                if ka == kb:
                    continue
                if ka == ("undefined",) or kb == ("undefined",):
                    drop.add(i)
                    continue
                raise TypeError(f"In a tensor-dependent {what}{loc}, variable '{names[i]}' has a different kind of "
                                f"value in the two branches (true: {_describe(a)}, false: {_describe(b)}): both "
                                "branches must give it a tensor of the same shape and dtype (or the same Python "
                                "value).")
            if drop:
                keep = set(range(len(vals))) - drop
                continue
        for k, (a, b) in enumerate(zip(mt, me)):
            if a != b and a[0] == b[0] and k not in casts:
                common = _promoted(a[1], b[1])
                if common is not None:
                    casts[k] = common
                    retry = True
        if not retry:
            break
    for k, (a, b) in enumerate(zip(mt, me)):
        if a != b:
            var = _var_of_output(st, k, names)
            raise ValueError(f"In a tensor-dependent {what}{loc}, {var} is {b[1]}{list(b[0])} in the false branch but "
                             f"{a[1]}{list(a[0])} in the true branch: both branches must give it the same shape and "
                             "dtype.")
    outs = _kernels._cond(pred, _engine.SubGraph(gt), list(in_tensors) + list(lt), _engine.SubGraph(ge),
                       list(in_tensors) + list(le))
    res = list(_unflatten(st, outs))
    if keep is not None:
        for i in range(len(res)):
            if i not in keep:
                res[i] = _Undefined(names[i], loc)
    if written:
        from .structure import _Leaf
        _write_through(vals, res, {i: s_.index for i, s_ in enumerate(in_struct) if isinstance(s_, _Leaf)}, written,
                       what)
    return tuple(res)


def _promoted(a, b):
    """The dtype two branches' values of one variable are cast to (a float beats an int or a bool; else the wider), or
    None when they are not both numeric."""
    from ..common import dtype as mstype
    order = [mstype.bool_, mstype.uint8, mstype.int8, mstype.int16, mstype.int32, mstype.int64, mstype.float16,
             mstype.bfloat16, mstype.float32, mstype.float64]
    if a not in order or b not in order:
        return None
    return order[max(order.index(a), order.index(b))]


def _describe(struct):
    from .structure import _Leaf
    if isinstance(struct, _Leaf):
        return "a tensor"
    if isinstance(struct, _Undefined):
        return "undefined"
    return f"{type(struct).__name__} {struct!r}"[:80]


def _var_of_output(struct, k, names):
    """'variable x' for the k-th output tensor of a tuple-of-variables structure."""
    from .structure import _Leaf
    count = [0]

    def n_leaves(s):
        if isinstance(s, _Leaf):
            return 1
        if isinstance(s, (tuple, list)):
            return sum(n_leaves(x) for x in s)
        if isinstance(s, dict):
            return sum(n_leaves(x) for x in s.values())
        return 0
    for i, s in enumerate(struct):
        n = n_leaves(s)
        if count[0] + n > k:
            return f"variable '{names[i]}'" if i < len(names) else f"output {i}"
        count[0] += n
    return f"output {k}"


def if_exp(pred, then_fn, else_fn):
    """`a if pred else b` (then_fn/else_fn compute a/b)."""
    if not is_symbolic(pred):
        return then_fn() if pred else else_fn()
    return _compiled_if(pred, lambda: (then_fn(),), lambda: (else_fn(),), (), ("<value>",), "conditional expression")[0]


def cond(pred, true_fn, false_fn, *operands):
    """Functional `if`: true_fn(*operands) if pred else false_fn(*operands), compiled into an If node when `pred` is
    a symbolic tensor (Graph mode), run as Python otherwise. The branches return the same structure of tensors (same
    shapes and dtypes). Raises ValueError for a condition with more than one element or for branches that disagree."""
    if not is_symbolic(pred):
        return true_fn(*operands) if pred else false_fn(*operands)
    out = _compiled_if(pred, lambda *a: (true_fn(*a),), lambda *a: (false_fn(*a),), operands,
                       tuple(f"operand {i}" for i in range(len(operands))) or ("<value>",), "cond")
    return out[0]


# -------------------------------------------------------------------------------------------- and / or / not
def and_(a, b_fn):
    """`a and b`: a tensor `a` gives logical_and(a, b) (both evaluated, as in a graph); a Python value short-circuits
    as Python does."""
    if isinstance(a, Tensor) and (is_symbolic(a) or _engine.tracing()):
        b = b_fn()
        return _logical("logical_and", a, b)
    return a and b_fn()


def or_(a, b_fn):
    """`a or b` (see and_)."""
    if isinstance(a, Tensor) and (is_symbolic(a) or _engine.tracing()):
        b = b_fn()
        return _logical("logical_or", a, b)
    return a or b_fn()


def not_(a):
    """`not a`: logical_not for a tensor in a graph, Python's `not` otherwise."""
    if isinstance(a, Tensor) and (is_symbolic(a) or _engine.tracing()):
        from .. import ops
        if a.size != 1:
            _check_pred(a, "`not`")
        return ops.logical_not(a.astype(_bool_dtype()))
    return not a


def _bool_dtype():
    from ..common import dtype as mstype
    return mstype.bool_


def _logical(op, a, b):
    from .. import ops
    if not isinstance(b, Tensor):
        if isinstance(b, (bool, int, float)):
            b = Tensor(bool(b))
        else:
            raise TypeError(f"`{op.split('_')[1]}` of a tensor and a {type(b).__name__} cannot be compiled"
                            f"{_location()}: use tensors or Python values on both sides.")
    return getattr(ops, op)(a.astype(_bool_dtype()), b.astype(_bool_dtype()))


# ---------------------------------------------------------------------------------------------------- loops
def while_stmt(cond_fn, body_fn, vals, names):
    """`while cond: body` over the variables `names` the body assigns (values `vals` before the loop): cond_fn and
    body_fn take their values; body_fn returns their new values. Runs as Python while the condition is a Python
    value (unrolling into the graph while tracing); from the first symbolic condition on, the rest of the loop is one
    While node. Returns the values after the loop."""
    vals = tuple(vals)
    while True:
        c = cond_fn(*vals)
        if is_symbolic(c):
            return _compiled_while(cond_fn, body_fn, vals, tuple(names), "`while`")
        if not c:
            return vals
        vals = tuple(body_fn(*vals))


def _compiled_while(cond_fn, body_fn, vals, names, what):
    loc = _location()
    carried_idx = []
    for i, v in enumerate(vals):
        if isinstance(v, _Undefined):
            continue  # first assigned in the body: local to it
        if isinstance(v, Tensor) or _is_number(v):
            carried_idx.append(i)
            continue
        raise TypeError(f"In a tensor-dependent {what}{loc}, variable '{names[i]}' is a {type(v).__name__} assigned in "
                        "the loop body: only tensors and numbers can change in a compiled loop (keep Python "
                        "containers out of it, or make the loop condition a Python value so that it unrolls).")
    if not carried_idx:
        raise ValueError(f"A tensor-dependent {what}{loc} assigns no variable defined before it: its condition could "
                         "never change.")
    dtypes = [None] * len(vals)
    shapes = [()] * len(vals)  # a number that the body makes a tensor of this shape starts as one (filled with it)
    promoted = set()
    while True:
        init = [vals[i] if isinstance(vals[i], Tensor) else _number_as(vals[i], dtypes[i], shapes[i])
                for i in carried_idx]
        metas = [(tuple(t.shape), t.dtype) for t in init]

        def full(carried):
            v = list(vals)
            for j, i in enumerate(carried_idx):
                v[i] = carried[j]
            for i in range(len(v)):
                if i not in carried_idx:
                    v[i] = _Undefined(names[i], loc)
            return v

        def cond_post(c):
            if not isinstance(c, Tensor):
                c = Tensor(bool(c))
            _check_pred(c, what)
            return c

        depth = len(_written_stack())
        _written_stack().append(set())
        gc, lc, sc, mc = _trace("while_cond", lambda *c: cond_post(cond_fn(*full(c))), init, _leaves(len(init)))
        out_dtypes = [m[1] for m in metas]

        def body_post(out):
            out = list(out)
            res = []
            for j, i in enumerate(carried_idx):
                v = out[i]
                if _is_number(v):
                    v = _as_tensor(v, out_dtypes[j])
                if not isinstance(v, Tensor):
                    raise TypeError(f"In a tensor-dependent {what}{loc}, variable '{names[i]}' becomes a "
                                    f"{type(v).__name__} in the loop body: a loop variable must stay a tensor.")
                res.append(v)
            return tuple(res)

        try:
            gb, lb, sb, mb = _trace("while_body", lambda *c: body_post(body_fn(*full(c))), init, _leaves(len(init)))
        finally:
            written = _written_stack()[-1]
            del _written_stack()[depth:]
        retry = False
        for j, i in enumerate(carried_idx):
            if mb[j] == metas[j]:
                continue
            if _is_number(vals[i]) and i not in promoted:
                # a number that the body makes a tensor of another dtype / shape (`s = 0` then `s = s + x`): start
                # it as that tensor, filled with the number (shape promotion)
                dtypes[i], shapes[i] = mb[j][1], mb[j][0]
                promoted.add(i)
                retry = True
                continue
            raise ValueError(f"In a tensor-dependent {what}{loc}, loop variable '{names[i]}' enters the loop as "
                             f"{metas[j][1]}{list(metas[j][0])} but the body makes it {mb[j][1]}{list(mb[j][0])}: a "
                             "loop variable must keep its shape and dtype.")
        if not retry:
            break
    outs = _kernels._while_loop(_engine.SubGraph(gc), _engine.SubGraph(gb), init, lc, lb, _engine.grad_level() > 0)
    res = list(vals)
    for j, i in enumerate(carried_idx):
        res[i] = outs[j]
    for i in range(len(res)):
        if i not in carried_idx:
            res[i] = _Undefined(names[i], loc)
    if written:
        _write_through(vals, res, {i: j for j, i in enumerate(carried_idx)}, written, what)
    return tuple(res)


def _leaves(n):
    from .structure import _Leaf
    return tuple(_Leaf(i) for i in range(n))


class _SymRange:
    """range(start, stop, step) with a symbolic bound (iterated by for_stmt as a compiled loop)."""
    __slots__ = ("start", "stop", "step")

    def __init__(self, start, stop, step):
        self.start, self.stop, self.step = start, stop, step


def range_(*args):
    """range(...) in a `for` header: a Python range unless a bound is a symbolic tensor or a dynamic size (then a
    compiled loop: one graph for every size)."""
    from .symint import SymInt
    if any(isinstance(a, SymInt) for a in args) and len(args) in (1, 2, 3):
        if len(args) == 3 and (isinstance(args[2], SymInt) or is_symbolic(args[2])):
            raise ValueError(f"range() with a step that depends on a tensor or a dynamic size cannot be compiled"
                             f"{_location()}: use a Python int step.")
        bounds = [size_bound(a) for a in args[:2]]
        step = args[2] if len(args) == 3 else 1
        if step == 0:
            raise ValueError("range() arg 3 must not be zero")
        return _SymRange(0, bounds[0], step) if len(args) == 1 else _SymRange(bounds[0], bounds[1], step)
    if any(is_symbolic(a) for a in args):
        if len(args) == 1:
            return _SymRange(0, args[0], 1)
        if len(args) == 2:
            return _SymRange(args[0], args[1], 1)
        if len(args) == 3:
            if is_symbolic(args[2]):
                raise ValueError(f"range() with a tensor step cannot be compiled{_location()}: use a Python int step.")
            if args[2] == 0:
                raise ValueError("range() arg 3 must not be zero")
            return _SymRange(*args)
        raise TypeError(f"range expected at most 3 arguments, got {len(args)}")
    return range(*[int(a) if isinstance(a, Tensor) else a for a in args])


def callee(f):
    """See _ast_rewrite.callee (a call in rewritten code)."""
    from .ast_rewrite import callee as c
    return c(f)


def python_cond(value, why):
    """The condition of a statement the rewrite left as Python (`why`): a symbolic tensor there cannot be compiled."""
    if is_symbolic(value):
        raise RuntimeError(f"A tensor-dependent {why} cannot be compiled{_location()}. Move the return/break out of "
                           "the loop or try/with (e.g. set a result variable and break with a flag), drop the loop's else "
                           "clause, or use ops.select / ops.WhileLoop / ops.switch.")
    return value


def check_defined(value):
    """`value` (a function's result), or the NameError of an undefined variable it holds."""
    if isinstance(value, _Undefined):
        value._fail()
    if isinstance(value, (tuple, list)):
        for v in value:
            check_defined(v)
    return value


def value_or_undef(get, name, global_ok=False):
    """The value of a variable (get() reads it), or an undefined marker when it has none yet. `global_ok`: the loop
    body reads the variable before assigning it; when it is unbound and its name is a global tensor or number
    (`z += i` in a loop, z global), it starts from the global's value, as in MindSpore's graph mode (Python would
    raise UnboundLocalError)."""
    try:
        return get()
    except NameError:
        if global_ok:
            g = getattr(get, "__globals__", {}).get(name, UNDEF)
            if isinstance(g, Tensor) or _is_number(g):
                return g
        return _Undefined(name)


def for_stmt(iterable, body_fn, vals, names, brk=-1):
    """`for target in iterable: body`; body_fn(item, *vals) returns the new values of the variables `names`.
    A range with a symbolic bound is one While node (a counter plus the variables); anything else iterates in Python
    (unrolled while tracing; a tensor iterates over its first dimension, whose size is static, except a dynamic
    (None) first dimension of a dynamic-shape graph: a While node over its run-time size). `brk`: the index in
    `names` of the flag that `break` sets (-1: none): the loop ends when it is True (a symbolic flag ends a compiled
    loop; in a Python iteration it guards the body)."""
    vals = tuple(vals)
    if isinstance(iterable, _SymRange):
        from .. import ops
        from ..common import dtype as mstype
        start, stop, step = iterable.start, iterable.stop, iterable.step
        i0 = start if isinstance(start, Tensor) else Tensor(int(start), dtype=mstype.int64)
        if isinstance(stop, Tensor) and stop.dtype != i0.dtype:
            stop = stop.astype(i0.dtype)

        def c(i, *v):
            more = ops.less(i, stop) if step > 0 else ops.greater(i, stop)
            return and_(more, lambda: not_(v[brk])) if brk >= 0 else more

        def b(i, *v):
            return (i + step,) + tuple(body_fn(i, *v))
        out = _compiled_while(c, b, (i0,) + vals, ("<loop counter>",) + tuple(names), "`for` over range()")
        return tuple(out[1:])
    if isinstance(iterable, Rows):  # enumerate / zip over dynamic batches: a loop over the run-time size
        rows, start = iterable.tensors, iterable.start
        if start is None:
            item = lambda i: tuple(r[i] for r in rows)
        else:
            item = lambda i: (i + start if start else i, rows[0][i])
        return for_stmt(_SymRange(0, size_bound(iterable.size), 1), lambda i, *v: body_fn(item(i), *v), vals, names,
                        brk)
    n = dynamic_rows(iterable)
    if n is not None:  # a dynamic (None) first dimension: a compiled loop over its run-time size
        rows = iterable
        return for_stmt(_SymRange(0, size_bound(n), 1), lambda i, *v: body_fn(rows[i], *v), vals, names, brk)
    for item in iterable:
        if brk >= 0 and not is_symbolic(vals[brk]) and vals[brk] is True:
            break
        vals = tuple(body_fn(item, *vals))
    return vals


# ------------------------------------------------------------------------------------------ functional forms
def while_loop(cond_func, loop_func, init_val):
    """Functional while loop: `while cond_func(val): val = loop_func(val)`; returns val. `init_val` is a tensor, a
    number or a (nested) tuple/list/dict of them; loop_func returns the same structure with the same shapes and
    dtypes. Compiled into a While node when the condition is a symbolic tensor (Graph mode)."""
    tensors = []
    struct = _flatten(init_val, tensors)
    leaves = _leaves(len(tensors))

    def to_vals(v):
        ts = []
        s = _flatten(v, ts)
        if _shape_key(s) != _shape_key(struct):
            raise ValueError(f"For 'WhileLoop', loop_func must return the structure of init_val "
                             f"({_describe_struct(struct)}), but it returned {_describe_struct(s)}.")
        return tuple(ts)

    # Numbers in init_val stay Python values in the Python route; in a compiled loop they must be tensors.
    c = cond_func(init_val)
    if not is_symbolic(c):
        val = init_val
        while True:
            if is_symbolic(c):
                break
            if not c:
                return val
            val = loop_func(val)
            c = cond_func(val)
        init_val = val
        tensors = []
        struct = _flatten(init_val, tensors)
        leaves = _leaves(len(tensors))
    if not tensors:
        raise ValueError("For 'WhileLoop', init_val must hold at least one tensor when the condition is a tensor.")
    out = _compiled_while(lambda *t: cond_func(_unflatten(struct, t)),
                          lambda *t: to_vals(loop_func(_unflatten(struct, t))),
                          tuple(tensors), tuple(f"init_val leaf {i}" for i in range(len(leaves))), "WhileLoop")
    return _unflatten(struct, list(out))


def _describe_struct(s):
    return repr(_shape_key(s))[:120]
