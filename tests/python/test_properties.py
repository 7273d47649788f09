"""Property-based tests (hypothesis) against NumPy: broadcasting of binary ops over random shapes, reductions over
random axes/keepdims, basic and advanced indexing (ints, slices with any step, None, Ellipsis, integer arrays,
boolean masks), and reshape/transpose round trips. Some properties also run the same call under kiln.jit.

Examples are bounded and derandomized (a fixed example sequence per test) so the file stays fast and reproducible;
set KILN_HYPOTHESIS_EXAMPLES to explore more."""
import os
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import kiln
from kiln import Tensor, _core, ops

N_EXAMPLES = int(os.environ.get("KILN_HYPOTHESIS_EXAMPLES", "60"))
SETTINGS = settings(max_examples=N_EXAMPLES, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])

DTYPES = [np.float32, np.float64, np.int32]


def _np_dtype(kdtype):
    return np.dtype(_core.dtype_numpy_name(kdtype))


def _values(shape, dtype, seed, low=-3, high=3):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return rng.uniform(low, high, shape).astype(dtype)
    if np.dtype(dtype) == np.bool_:
        return rng.random(shape) < 0.5
    return rng.integers(low, high + 1, shape).astype(dtype)


def _check(got, want, rtol=1e-5, atol=1e-6):
    got_np = got.asnumpy()
    assert got_np.shape == np.shape(want), f"shape {got_np.shape} vs {np.shape(want)}"
    want = np.asarray(want)
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(got_np, want)
    else:
        np.testing.assert_allclose(got_np.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol,
                                   equal_nan=True)


# ---------------------------------------------------------------------------------------------- broadcasting

BINARY = {
    "add": (ops.add, np.add),
    "sub": (ops.sub, np.subtract),
    "mul": (ops.mul, np.multiply),
    "maximum": (ops.maximum, np.maximum),
    "minimum": (ops.minimum, np.minimum),
    "less": (ops.less, np.less),
    "equal": (ops.equal, np.equal),
    "floor_div": (ops.floor_div, np.floor_divide),
}


@SETTINGS
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, min_side=0, max_side=4),
       op=st.sampled_from(sorted(BINARY)), dtype=st.sampled_from(DTYPES), seed=st.integers(0, 2**16),
       use_jit=st.booleans())
def test_binary_broadcasting_matches_numpy(shapes, op, dtype, seed, use_jit):
    kfn, nfn = BINARY[op]
    (sa, sb), result_shape = shapes.input_shapes, shapes.result_shape
    a = _values(sa, dtype, seed)
    b = _values(sb, dtype, seed + 1)
    if op == "floor_div":
        b = np.where(b == 0, np.ones((), dtype), b).astype(dtype)
    fn = kiln.jit(kfn) if use_jit else kfn
    got = fn(Tensor(a), Tensor(b))
    with np.errstate(all="ignore"):
        want = nfn(a, b)
    assert tuple(got.shape) == tuple(result_shape)
    assert _np_dtype(got.dtype) == want.dtype
    _check(got, want)


@SETTINGS
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_dims=3, max_side=3),
       seed=st.integers(0, 2**16))
def test_where_broadcasts_three_ways(shapes, seed):
    sc, sx, sy = shapes.input_shapes
    c = _values(sc, np.bool_, seed)
    x, y = _values(sx, np.float32, seed + 1), _values(sy, np.float32, seed + 2)
    _check(ops.where(Tensor(c), Tensor(x), Tensor(y)), np.where(c, x, y), rtol=0, atol=0)


@SETTINGS
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=1, max_dims=3, min_side=1, max_side=3),
       seed=st.integers(0, 2**16))
def test_broadcast_gradient_reduces_to_input_shape(shapes, seed):
    """d/da sum(a·b) = b summed over a's broadcast axes (float64, exact up to summation order)."""
    sa, sb = shapes.input_shapes
    a, b = _values(sa, np.float64, seed), _values(sb, np.float64, seed + 1)
    ga, gb = kiln.grad(lambda x, y: ops.sum(ops.mul(x, y)), grad_position=(0, 1))(Tensor(a), Tensor(b))
    full = shapes.result_shape
    want_a = np.broadcast_to(b, full)
    want_b = np.broadcast_to(a, full)

    def sum_to(g, shape):
        lead = len(g.shape) - len(shape)
        g = g.sum(axis=tuple(range(lead)))
        axes = tuple(i for i, d in enumerate(shape) if d == 1 and g.shape[i] != 1)
        return g.sum(axis=axes, keepdims=True)

    _check(ga, sum_to(want_a, sa), rtol=1e-12, atol=1e-12)
    _check(gb, sum_to(want_b, sb), rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------------------------------------- reductions

REDUCTIONS = {
    "sum": (lambda x, a, k: ops.sum(x, a, k), np.sum, True),
    "mean": (lambda x, a, k: ops.mean(x, a, k), np.mean, False),
    "prod": (lambda x, a, k: ops.prod(x, a, k), np.prod, True),
    "amax": (lambda x, a, k: ops.amax(x, a, k), np.max, False),
    "amin": (lambda x, a, k: ops.amin(x, a, k), np.min, False),
}


@st.composite
def _shape_and_axis(draw, min_side=0):
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=min_side, max_side=4))
    nd = len(shape)
    kind = draw(st.sampled_from(["none", "int", "tuple"])) if nd else "none"
    if kind == "none":
        axis = None
    elif kind == "int":
        axis = draw(st.integers(-nd, nd - 1))
    else:
        dims = draw(st.lists(st.integers(0, nd - 1), min_size=1, max_size=nd, unique=True))
        axis = tuple(d - nd if draw(st.booleans()) else d for d in dims)  # mix negative and positive axes
    return shape, axis


@SETTINGS
@given(sa=_shape_and_axis(), keepdims=st.booleans(), op=st.sampled_from(sorted(REDUCTIONS)),
       dtype=st.sampled_from(DTYPES), seed=st.integers(0, 2**16))
def test_reductions_match_numpy(sa, keepdims, op, dtype, seed):
    shape, axis = sa
    kfn, nfn, empty_ok = REDUCTIONS[op]
    x = _values(shape, dtype, seed, -2, 2) if op != "prod" else _values(shape, dtype, seed, 1, 2)
    axes = range(len(shape)) if axis is None else ([axis] if isinstance(axis, int) else axis)
    reduces_empty = any(shape[a] == 0 for a in axes) if shape else False
    if reduces_empty and not empty_ok:
        with pytest.raises(ValueError) if op in ("amax", "amin") else warnings.catch_warnings():
            warnings.simplefilter("ignore")
            kfn(Tensor(x), axis, keepdims)
        return
    got = kfn(Tensor(x), axis, keepdims)
    want = np.asarray(nfn(x, axis=axis, keepdims=keepdims))
    if op == "mean" and x.dtype.kind in "iu":
        want = want.astype(np.float32)  # R-f32 (op_registry Note [dtype rules])
    assert _np_dtype(got.dtype) == want.dtype, f"{got.dtype} vs {want.dtype}"
    _check(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12)


@SETTINGS
@given(sa=_shape_and_axis(min_side=1), keepdims=st.booleans(), seed=st.integers(0, 2**16),
       op=st.sampled_from(["argmax", "argmin"]))
def test_arg_reductions_match_numpy(sa, keepdims, seed, op):
    shape, axis = sa
    if isinstance(axis, tuple):
        axis = axis[0]
    x = _values(shape, np.int32, seed, -2, 2)  # ties: the first index wins, as NumPy
    got = getattr(ops, op)(Tensor(x), axis, keepdims)
    _check(got, getattr(np, op)(x, axis=axis, keepdims=keepdims))


@SETTINGS
@given(sa=_shape_and_axis(min_side=1), keepdims=st.booleans(), seed=st.integers(0, 2**16))
def test_sum_graph_matches_pynative(sa, keepdims, seed):
    shape, axis = sa
    x = Tensor(_values(shape, np.float32, seed))
    f = lambda t: ops.sum(ops.mul(t, t), axis, keepdims)
    np.testing.assert_array_equal(kiln.jit(f)(x).asnumpy(), f(x).asnumpy())


# ---------------------------------------------------------------------------------------------- indexing

SHAPES = hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=5)


@SETTINGS
@given(data=st.data(), shape=SHAPES, seed=st.integers(0, 2**16))
def test_basic_indexing_matches_numpy(data, shape, seed):
    """ints (negative too), slices with any step (incl. negative), None, Ellipsis: a view equal to NumPy's."""
    key = data.draw(hnp.basic_indices(shape, min_dims=0, allow_newaxis=True, allow_ellipsis=True))
    x = _values(shape, np.float32, seed)
    t = Tensor(x)
    got = t[key]
    want = x[key]
    _check(got, want, rtol=0, atol=0)
    # The same key under jit (a constant of the trace), and the gradient scatters ones back into the selection.
    np.testing.assert_array_equal(kiln.jit(lambda a: a[key])(t).asnumpy(), np.asarray(want))
    g = kiln.grad(lambda a: ops.sum(a[key]))(Tensor(x.astype(np.float64)))
    mask = np.zeros(shape)
    mask[key] = 1.0  # basic indices never repeat an element
    _check(g, mask, rtol=0, atol=0)


@st.composite
def _advanced_key(draw, shape):
    """A key mixing integer arrays (any shape, negative indices), boolean masks, ints, slices (any step), None and
    Ellipsis."""
    parts = []
    dim = 0
    while dim < len(shape):
        kind = draw(st.sampled_from(["array", "slice", "int", "mask", "stop"]))
        if kind == "stop" and parts:
            break
        if kind == "mask":
            k = draw(st.integers(1, min(2, len(shape) - dim)))
            parts.append(draw(hnp.arrays(np.bool_, shape[dim:dim + k])))
            dim += k
            continue
        n = shape[dim]
        if kind == "array":
            ishape = draw(hnp.array_shapes(min_dims=1, max_dims=2, min_side=1, max_side=3))
            parts.append(draw(hnp.arrays(np.int64, ishape, elements=st.integers(-n, n - 1))))
        elif kind == "slice":
            parts.append(slice(draw(st.none() | st.integers(-n, n)), draw(st.none() | st.integers(-n, n)),
                               draw(st.sampled_from([None, 1, 2, -1, -2]))))
        else:
            parts.append(draw(st.integers(-n, n - 1)))
        dim += 1
    if not any(isinstance(p, np.ndarray) for p in parts):
        parts[0] = draw(hnp.arrays(np.int64, (2,), elements=st.integers(-shape[0], shape[0] - 1)))
    # None (new axes) anywhere, and at most one Ellipsis (standing for the dims the key does not name).
    for _ in range(draw(st.integers(0, 2))):
        parts.insert(draw(st.integers(0, len(parts))), None)
    if draw(st.booleans()):  # anywhere when the parts name every dim (it then stands for none), else at the end
        parts.insert(draw(st.integers(0, len(parts))) if dim == len(shape) else len(parts), Ellipsis)
    # Integer arrays must broadcast together (NumPy's rule): retry otherwise.
    int_arrays = [p for p in parts if isinstance(p, np.ndarray) and p.dtype != np.bool_]
    masks = [np.nonzero(p) for p in parts if isinstance(p, np.ndarray) and p.dtype == np.bool_]
    try:
        np.broadcast_shapes(*[a.shape for a in int_arrays], *[m[0].shape for m in masks])
    except ValueError:
        reject()
    return tuple(parts)


@SETTINGS
@given(data=st.data(), shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4),
       seed=st.integers(0, 2**16))
def test_advanced_indexing_matches_numpy(data, shape, seed):
    """Integer arrays (broadcast together; adjacent or separated by slices → NumPy's axis placement), boolean masks,
    mixed with ints and slices; the gradient accumulates over repeated indices."""
    key = data.draw(_advanced_key(shape))
    x = _values(shape, np.float64, seed)
    want = x[key]
    got = Tensor(x)[key]
    _check(got, want, rtol=0, atol=0)
    g = kiln.grad(lambda a: ops.sum(a[key]))(Tensor(x))
    counts = np.zeros(shape)
    np.add.at(counts, key, 1.0)
    _check(g, counts, rtol=0, atol=0)


_NONE_ADV_OK = [(None, [0, 2]), ([0, 2], None), ([0, 1], None, [1, 2]), (slice(None), None, [1, 2]),
                (None, [0, 1], [1, 2]), (0, None, [1, 3]), (None, Ellipsis, np.array([True, False, True, False, True]))]
# None among array indices: the new axis takes its place among the other dims after NumPy moves the broadcast
# index block (e.g. (None, [0, 1], :, 2) → (2, 1, 4)).
_NONE_ADV_OK += [(None, [0, 1], slice(None), 2), ([0, 1], [1, 2], None), ([0, 1], slice(None), [1, 2], None),
                 (None, 1, slice(None), [0, 1])]


@pytest.mark.parametrize("key", _NONE_ADV_OK, ids=repr)
def test_none_with_advanced_indices(key):
    x = np.arange(60.0).reshape(3, 4, 5)
    _check(Tensor(x)[key], x[key], rtol=0, atol=0)


@SETTINGS
@given(shape=SHAPES, seed=st.integers(0, 2**16), data=st.data())
def test_boolean_mask_indexing_matches_numpy(shape, seed, data):
    x = _values(shape, np.float32, seed)
    k = data.draw(st.integers(1, len(shape)))
    mask = data.draw(hnp.arrays(np.bool_, shape[:k]))
    _check(Tensor(x)[mask], x[mask], rtol=0, atol=0)
    _check(Tensor(x)[Tensor(mask)], x[mask], rtol=0, atol=0)


# ---------------------------------------------------------------------------------------------- reshape / transpose

@st.composite
def _shape_and_perm(draw):
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=5, min_side=0, max_side=4))
    perm = draw(st.permutations(range(len(shape))))
    return shape, tuple(perm)


@SETTINGS
@given(sp=_shape_and_perm(), seed=st.integers(0, 2**16), dtype=st.sampled_from(DTYPES + [np.bool_]))
def test_transpose_round_trip(sp, seed, dtype):
    shape, perm = sp
    x = _values(shape, dtype, seed)
    t = ops.transpose(Tensor(x), perm)
    _check(t, np.transpose(x, perm), rtol=0, atol=0)
    inv = tuple(int(i) for i in np.argsort(perm))  # (NumPy ints are rejected by to_axes: Python ints here)
    _check(ops.transpose(t, inv), x, rtol=0, atol=0)
    # A reshape of the (non-contiguous) transposed view equals NumPy's C-order reshape of the transpose.
    _check(ops.reshape(t, (-1,)), np.transpose(x, perm).reshape(-1), rtol=0, atol=0)


@st.composite
def _reshape_pair(draw):
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=1, max_side=4))
    size = int(np.prod(shape))
    # A random factorization of `size` into up to 4 factors, one of them possibly given as -1.
    factors = []
    rest = size
    for _ in range(draw(st.integers(0, 3))):
        divs = [d for d in range(1, rest + 1) if rest % d == 0]
        d = draw(st.sampled_from(divs))
        factors.append(d)
        rest //= d
    factors.append(rest)
    factors = draw(st.permutations(factors))
    if factors and draw(st.booleans()):
        i = draw(st.integers(0, len(factors) - 1))
        factors = list(factors)
        factors[i] = -1
    return shape, tuple(factors)


@SETTINGS
@given(pair=_reshape_pair(), seed=st.integers(0, 2**16), view=st.booleans())
def test_reshape_round_trip(pair, seed, view):
    shape, new = pair
    x = _values(shape, np.float32, seed)
    t = Tensor(x)
    if view and x.ndim >= 2:  # start from a non-contiguous view holding the same values
        t = ops.transpose(Tensor(np.ascontiguousarray(np.swapaxes(x, 0, 1))), [1, 0] + list(range(2, x.ndim)))
    r = ops.reshape(t, new)
    _check(r, x.reshape(new), rtol=0, atol=0)
    _check(ops.reshape(r, shape), x, rtol=0, atol=0)
    g = kiln.grad(lambda a: ops.sum(ops.mul(ops.reshape(a, new), Tensor(np.arange(x.size, dtype=np.float32)
                                                                        .reshape(x.reshape(new).shape)))))(t)
    _check(g, np.arange(x.size, dtype=np.float32).reshape(shape), rtol=0, atol=0)


_SHAPE = st.lists(st.integers(0, 3), max_size=4).map(tuple)


@SETTINGS
@given(st.lists(_SHAPE, min_size=1, max_size=4))
def test_broadcast_shapes_is_numpys(shapes):
    # kiln/_args.py's plain-Python broadcast_shapes (the ops' argument checks) against numpy.broadcast_shapes,
    # including the shapes that do not broadcast (both raise ValueError)
    from kiln._args import broadcast_shapes
    try:
        want = np.broadcast_shapes(*shapes)
    except ValueError:
        with pytest.raises(ValueError, match="do not broadcast"):
            broadcast_shapes(*shapes)
        return
    assert broadcast_shapes(*shapes) == want
    assert broadcast_shapes(*[list(s) for s in shapes]) == want
