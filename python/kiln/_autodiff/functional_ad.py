"""Function transforms beyond grad: `vjp`, `jvp`, `jacrev`, `jacfwd` (mindspore.vjp/jvp/jacrev/jacfwd, also in
kiln.ops). `vmap` lives in kiln/_autodiff/vmap.py.

All of them use the eager tape (kiln/autodiff.h): the forward runs once under a GradScope that watches the
differentiated inputs; the recorded tape stays reachable from the outputs, so the reverse pass can run later and
more than once (vjp's vjp_fn, one reverse pass per row of a Jacobian). Forward-mode products (jvp, jacfwd) are
computed by transposing the reverse pass: with the reverse pass itself recorded, g(u) = J^T u is linear in the
cotangent u, and the reverse pass of g with seed v gives J v (the "double vjp" construction; the bprops are Kiln
ops, so the reverse pass can be differentiated). Works the same inside compiled functions (kiln.jit, Graph mode):
the transforms then run while tracing and the graph gets the unrolled ops.
"""
from .. import _engine
from ..ops import _kernels
from ..common.tensor import Tensor
from ..common.api import _normalize_positions, _normalize_weights, _tensors_of, _detach_tree, _stop_gradient_tree


def _check_tensors(values, api, what="inputs"):
    for i, v in enumerate(values):
        if not isinstance(v, Tensor):
            raise TypeError(f"For '{api}', the {what} must be Tensors, but {what} {i} is {type(v).__name__}.")


def _split_aux(res, has_aux, api):
    """(differentiated output, aux or None) of fn's result; aux is res[1] when fn returns two values, else res[1:]."""
    if not has_aux:
        return res, None
    if not isinstance(res, tuple) or len(res) < 2:
        raise ValueError(f"For '{api}', when 'has_aux' is True, origin 'fn' requires more than one outputs, but got "
                         f"{type(res).__name__}.")
    aux = res[1] if len(res) == 2 else res[1:]
    return res[0], _stop_gradient_tree(aux)


def _check_has_aux(has_aux, api):
    if not isinstance(has_aux, bool):
        raise TypeError(f"For '{api}', the 'has_aux' must be bool, but got {type(has_aux).__name__}.")


def _check_fn(fn, api):
    if not callable(fn):
        raise TypeError(f"For '{api}', the 'fn' must be a function or a Cell, but got {type(fn).__name__}.")


def _rebuild(template, flat):
    """template (a Tensor or nested tuple/list of Tensors) with its Tensors replaced by `flat`, in order."""
    it = iter(flat)

    def build(v):
        if isinstance(v, Tensor):
            return next(it)
        if isinstance(v, (tuple, list)):
            return type(v)(build(x) for x in v)
        return v
    return build(template)


def vjp(fn, *inputs, weights=None, has_aux=False):
    """mindspore.vjp(fn, *inputs, weights=None, has_aux=False): the output of fn(*inputs) and a function giving
    vector-Jacobian products.

    Returns (net_output, vjp_fn), or (net_output, vjp_fn, aux) with has_aux=True (net_output is fn's first output,
    aux the rest: res[1] when fn returns two values, else the tuple res[1:]; aux gets no gradient).
    `vjp_fn(*v)`: v has one Tensor per Tensor output of net_output, each of its output's shape (several outputs may
    also be passed as one tuple); it returns a tuple with the cotangent of every input (always a tuple), or
    (inputs' tuple, weights' tuple) when weights are given. vjp_fn may be called several times; the forward runs
    once.

    Raises:
        TypeError: fn not callable, an input that is not a Tensor, has_aux not bool, weights not Parameters, a v that
            is not a Tensor.
        ValueError: has_aux with fewer than two outputs; v with the wrong number of Tensors or wrong shapes.
    """
    api = "vjp"
    _check_fn(fn, api)
    _check_tensors(inputs, api)
    _check_has_aux(has_aux, api)
    weight_list, single_weight = _normalize_weights(weights, api)
    outermost = _engine.grad_level() == 0
    with _engine.GradScope() as scope:
        call = [scope.watch_input(x) for x in inputs]
        leaves = [Tensor(c) for c in call]
        for w in weight_list or []:
            scope.watch(w)
            leaves.append(w)
        res = fn(*call)
    out, aux = _split_aux(res, has_aux, api)
    targets = _tensors_of(out)
    if not targets:
        raise TypeError(f"For '{api}', 'fn' must return a Tensor or a tuple of Tensors, but got {type(out).__name__}.")
    n_in = len(inputs)

    def vjp_fn(*v):
        sens = list(v[0]) if len(v) == 1 and isinstance(v[0], (tuple, list)) else list(v)
        _check_tensors(sens, api, "v")
        if len(sens) != len(targets):
            raise ValueError(f"For 'vjp_fn', the number of v ({len(sens)}) must match the number of Tensor outputs "
                             f"of 'fn' ({len(targets)}).")
        for s, t in zip(sens, targets):
            if tuple(s.shape) != tuple(t.shape):
                raise ValueError(f"For 'vjp_fn', each v must have its output's shape: output {tuple(t.shape)}, v "
                                 f"{tuple(s.shape)}.")
        outer = _engine.grad_level() == 0
        with _engine.GradScope() as s2:
            for w in weight_list or []:
                s2.watch(w)
            grads = _engine.gradient(targets, sens, leaves)
        grads = [_detach_tree(g, outer) for g in grads]
        gi = tuple(grads[:n_in])
        if weight_list is not None:  # a single Parameter: its gradient alone (MindSpore 2.10)
            return gi, (grads[n_in] if single_weight else tuple(grads[n_in:]))
        return gi

    out = _detach_tree(out, outermost)
    if has_aux:
        return out, vjp_fn, _detach_tree(aux, outermost)
    return out, vjp_fn


def _as_inputs(inputs, v, api):
    if not isinstance(inputs, (Tensor, tuple, list)) or not isinstance(v, (Tensor, tuple, list)):
        raise TypeError(f"For '{api}', the 'inputs' and 'v' must be a Tensor or a tuple/list of Tensors, but got "
                        f"{type(inputs).__name__} and {type(v).__name__}.")
    xs = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    vs = [v] if isinstance(v, Tensor) else list(v)
    _check_tensors(xs, api)
    _check_tensors(vs, api, "v")
    if len(xs) != len(vs):
        raise ValueError(f"For '{api}', the number of 'v' ({len(vs)}) must equal the number of 'inputs' "
                         f"({len(xs)}).")
    for x, t in zip(xs, vs):
        if tuple(x.shape) != tuple(t.shape):
            raise ValueError(f"For '{api}', each v must have its input's shape: input {tuple(x.shape)}, v "
                             f"{tuple(t.shape)}.")
    return xs, vs


def _transposed(fn, xs, api, has_aux):
    """Runs fn(*xs) with the reverse pass recorded as a function of the output cotangents u.
    Returns (res, targets, us, gxs, outer_scope_exit): gxs[i] = (J^T u)_i with history from us; call the returned
    closer once done (it ends the two GradScopes)."""
    outer = _engine.GradScope()
    scope_o = outer.__enter__()
    try:
        inner = _engine.GradScope()
        scope_i = inner.__enter__()
        try:
            call = [scope_i.watch_input(x) for x in xs]
            leaves = [Tensor(c) for c in call]
            res = fn(*call)
            out, _ = _split_aux(res, has_aux, api)
            targets = _tensors_of(out)
            if not targets:
                raise TypeError(f"For '{api}', 'fn' must return a Tensor or a tuple of Tensors, but got "
                                f"{type(out).__name__}.")
            us = [scope_o.watch_input(_kernels.ones_like(t)) for t in targets]
            gxs = _engine.gradient(targets, us, leaves)
        finally:
            inner.__exit__(None, None, None)
    except BaseException:
        outer.__exit__(None, None, None)
        raise
    return res, targets, us, gxs, (lambda: outer.__exit__(None, None, None))


def jvp(fn, inputs, v, has_aux=False):
    """mindspore.jvp(fn, inputs, v, has_aux=False): fn's output and the Jacobian-vector product J·v.

    inputs: a Tensor or a tuple/list of Tensors (fn's positional inputs); v: the tangents, the same number of
    Tensors with the inputs' shapes. Returns (net_output, jvp) — jvp has net_output's structure — or
    (net_output, jvp, aux) with has_aux=True (net_output: fn's first output; aux: res[1] for two outputs, else
    res[1:]). Raises TypeError for inputs/v that are not Tensors, ValueError for a count or shape mismatch or
    has_aux with fewer than two outputs."""
    api = "jvp"
    _check_fn(fn, api)
    _check_has_aux(has_aux, api)
    xs, vs = _as_inputs(inputs, v, api)
    outermost = _engine.grad_level() == 0
    res, targets, us, gxs, close = _transposed(fn, xs, api, has_aux)
    try:
        jv = _engine.gradient(gxs, vs, us)
    finally:
        close()
    out, aux = _split_aux(res, has_aux, api)
    jv = [_detach_tree(g, outermost) for g in jv]
    jv_out = _rebuild(out, jv)
    out = _detach_tree(out, outermost)
    if has_aux:
        return out, jv_out, _detach_tree(aux, outermost)
    return out, jv_out


def _jac_structure(out, positions, blocks, single_position):
    """blocks[k][p]: the Jacobian of Tensor output k w.r.t. position p. MindSpore's structure: per output (a tuple
    when fn returns a tuple), per position (a tuple when grad_position is a tuple)."""
    per_out = [b[0] if single_position else tuple(b) for b in blocks]
    if isinstance(out, Tensor):
        return per_out[0]
    return _rebuild(out, per_out) if len(per_out) == len(_tensors_of(out)) else tuple(per_out)


def _basis(shape, dtype, j):
    """The j-th one-hot Tensor of `shape` (row-major)."""
    import numpy as np
    size = int(np.prod(shape)) if len(shape) else 1
    e = np.zeros(size, dtype=np.float64)
    e[j] = 1.0
    return _kernels.cast(Tensor(e.reshape(tuple(shape))), dtype)


def _numel(shape):
    n = 1
    for s in shape:
        n *= int(s)
    return n


def _stack_rows(rows, lead_shape, tail_shape):
    """rows (one Tensor of tail_shape per element of lead_shape) stacked to lead_shape + tail_shape."""
    from ..ops import function as F
    st = F.stack(rows, 0) if rows else None
    return st.reshape(tuple(lead_shape) + tuple(tail_shape))


def _jac_args(fn, grad_position, has_aux, api):
    _check_fn(fn, api)
    _check_has_aux(has_aux, api)
    positions = _normalize_positions(grad_position, api)
    if positions is None:
        raise TypeError(f"For '{api}', the 'grad_position' must be an int or a tuple of ints, but got None.")
    return positions, isinstance(grad_position, int)


def _positions_check(args, positions, api):
    for p in positions:
        if p >= len(args):
            raise IndexError(f"For '{api}', the 'grad_position' {p} is out of range for {len(args)} input(s).")
        if not isinstance(args[p], Tensor):
            raise TypeError(f"For '{api}', the input at grad_position {p} must be a Tensor, but got "
                            f"{type(args[p]).__name__}.")


def jacrev(fn, grad_position=0, has_aux=False):
    """mindspore.jacrev(fn, grad_position=0, has_aux=False): a function returning the Jacobian of fn by reverse
    mode (one reverse pass per output element).

    The Jacobian of output o w.r.t. input x has shape o.shape + x.shape. Structure: a Tensor for one output and an
    int grad_position; a tuple over positions when grad_position is a tuple; a tuple over outputs when fn returns
    a tuple. With has_aux=True, returns (jacobian, aux) for fn's first output. Raises TypeError/ValueError as
    grad (bad grad_position, non-Tensor input there, has_aux not bool or with one output)."""
    api = "jacrev"
    positions, single = _jac_args(fn, grad_position, has_aux, api)

    def wrapper(*args):
        _positions_check(args, positions, api)
        outermost = _engine.grad_level() == 0
        with _engine.GradScope() as scope:
            call = list(args)
            leaves = []
            for p in positions:
                call[p] = scope.watch_input(args[p])
                leaves.append(Tensor(call[p]))
            res = fn(*call)
            out, aux = _split_aux(res, has_aux, api)
            targets = _tensors_of(out)
            if not targets:
                raise TypeError(f"For '{api}', 'fn' must return a Tensor or a tuple of Tensors, but got "
                                f"{type(out).__name__}.")
            blocks = []
            for t in targets:
                rows = [[] for _ in positions]
                for j in range(_numel(t.shape)):
                    gs = _engine.gradient([t], [_basis(t.shape, t.dtype, j)], leaves)
                    for r, g in zip(rows, gs):
                        r.append(g)
                blocks.append([_stack_rows(r, t.shape, leaves[i].shape) for i, r in enumerate(rows)])
        blocks = [[_detach_tree(b, outermost) for b in bl] for bl in blocks]
        jac = _jac_structure(out, positions, blocks, single)
        if has_aux:
            return jac, _detach_tree(aux, outermost)
        return jac
    return wrapper


def jacfwd(fn, grad_position=0, has_aux=False):
    """mindspore.jacfwd(fn, grad_position=0, has_aux=False): a function returning the Jacobian of fn by forward
    mode (one Jacobian-vector product per input element; see the module note for how J·v is computed).

    Same result structure, shapes and errors as jacrev."""
    api = "jacfwd"
    positions, single = _jac_args(fn, grad_position, has_aux, api)

    def wrapper(*args):
        _positions_check(args, positions, api)
        outermost = _engine.grad_level() == 0
        xs = [args[p] for p in positions]

        def sub(*vals):
            call = list(args)
            for p, v in zip(positions, vals):
                call[p] = v
            return fn(*call)
        res, targets, us, gxs, close = _transposed(sub, xs, api, has_aux)
        try:
            # columns[i][j]: J · e_j over input i, one Tensor per output
            cols = []
            for i, x in enumerate(xs):
                per_in = []
                for j in range(_numel(x.shape)):
                    per_in.append(_engine.gradient([gxs[i]], [_basis(x.shape, x.dtype, j)], us))
                cols.append(per_in)
        finally:
            close()
        from ..ops import function as F
        blocks = []
        for k, t in enumerate(targets):
            bl = []
            for i, x in enumerate(xs):
                if cols[i]:
                    st = F.stack([c[k] for c in cols[i]], -1)  # t.shape + (numel x,)
                    bl.append(_detach_tree(st.reshape(tuple(t.shape) + tuple(x.shape)), outermost))
                else:
                    bl.append(_kernels.zeros_like(_kernels.reshape(t, (-1,)))[:0].reshape(tuple(t.shape) + tuple(x.shape)))
            blocks.append(bl)
        out, aux = _split_aux(res, has_aux, api)
        jac = _jac_structure(out, positions, blocks, single)
        if has_aux:
            return jac, _detach_tree(aux, outermost)
        return jac
    return wrapper
