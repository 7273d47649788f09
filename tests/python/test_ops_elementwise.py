"""Elementwise binary/unary ops, select, clip, cast, matmul, creation and random ops of kiln._core: forward vs
NumPy (broadcasting, dtype promotion incl. weak Python scalars), gradients vs float64 finite differences."""
import math

import numpy as np
import pytest

from kiln import _core
from helpers import N, T, check_grad

rng = np.random.default_rng(2)
D = _core.DType


def rand(*shape, dtype=np.float64):
    return rng.standard_normal(shape).astype(dtype)


def S(v, dtype):
    return _core.Tensor._from_numpy(np.array(v, dtype=dtype))


# --------------------------------------------------------------------------------------------- binary forward
BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide, "maximum": np.maximum,
    "minimum": np.minimum, "pow": np.power, "floor_div": np.floor_divide, "mod": np.mod,
    "equal": np.equal, "not_equal": np.not_equal, "greater": np.greater, "greater_equal": np.greater_equal,
    "less": np.less, "less_equal": np.less_equal,
}
SHAPES = [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1, 4), (3, 1)), ((), (2, 3)), ((5,), ()), ((0, 3), (1, 3))]


@pytest.mark.parametrize("name", list(BINARY))
@pytest.mark.parametrize("sa,sb", SHAPES)
def test_binary_float(name, sa, sb):
    a, b = rand(*sa, dtype=np.float32), rand(*sb, dtype=np.float32)
    if name == "pow":
        a = np.abs(a) + 0.5
    if name in ("div", "floor_div", "mod"):
        b = np.where(np.abs(b) < 0.1, 0.5, b).astype(np.float32)
    got = N(getattr(_core, name)(S(a, np.float32), S(b, np.float32)))
    want = BINARY[name](a, b)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["add", "sub", "mul", "maximum", "minimum", "floor_div", "mod", "pow", "greater"])
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.int8, np.uint8])
def test_binary_integer(name, dtype):
    lo = 0 if dtype == np.uint8 else -6
    a = rng.integers(lo, 7, (4, 5)).astype(dtype)
    b = rng.integers(1, 4, (5,)).astype(dtype)
    got = N(getattr(_core, name)(T(a), T(b)))
    want = BINARY[name](a, b)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_integer_division():
    a = np.array([7, -7, 7, -7, 0], np.int32)
    b = np.array([2, 2, -2, -2, 3], np.int32)
    np.testing.assert_array_equal(N(_core.floor_div(T(a), T(b))), a // b)
    np.testing.assert_array_equal(N(_core.mod(T(a), T(b))), a % b)
    d = N(_core.div(T(a), T(b)))
    assert d.dtype == np.float32  # true division of integers gives float32 (Kiln's default float)
    np.testing.assert_allclose(d, a / b, rtol=1e-6)


def test_float_mod_and_floor_div_signs():
    a = np.array([7.0, -7.0, 7.0, -7.0, 0.0, -0.0, 5.5])
    b = np.array([2.0, 2.0, -2.0, -2.0, -2.0, 2.0, 0.5])
    np.testing.assert_array_equal(N(_core.floor_div(T(a), T(b))), np.floor_divide(a, b))
    m = N(_core.mod(T(a), T(b)))
    np.testing.assert_array_equal(m, np.mod(a, b))
    np.testing.assert_array_equal(np.signbit(m), np.signbit(np.mod(a, b)))  # zero takes the divisor's sign


def test_logical_ops():
    a = rng.random((3, 4)) > 0.5
    b = rng.integers(0, 2, (4,)).astype(np.int32)
    for name, fn in (("logical_and", np.logical_and), ("logical_or", np.logical_or), ("logical_xor", np.logical_xor)):
        got = N(getattr(_core, name)(T(a), T(b)))
        assert got.dtype == np.bool_
        np.testing.assert_array_equal(got, fn(a, b))
    np.testing.assert_array_equal(N(_core.logical_not(T(b))), np.logical_not(b))


def test_bool_arithmetic():
    a, b = np.array([True, True, False, False]), np.array([True, False, True, False])
    np.testing.assert_array_equal(N(_core.add(T(a), T(b))), a | b)
    np.testing.assert_array_equal(N(_core.mul(T(a), T(b))), a & b)
    assert N(_core.add(T(a), 1)).dtype == np.int64  # bool tensor + Python int → int64


def test_nan_in_maximum_minimum():
    a = np.array([1.0, np.nan, 3.0])
    b = np.array([np.nan, 2.0, 1.0])
    np.testing.assert_array_equal(N(_core.maximum(T(a), T(b))), np.maximum(a, b))
    np.testing.assert_array_equal(N(_core.minimum(T(a), T(b))), np.minimum(a, b))


# --------------------------------------------------------------------------------------------- promotion
@pytest.mark.parametrize("da,db,want", [
    (np.int32, np.float32, np.float32),
    (np.int64, np.float64, np.float64),
    (np.float16, np.float32, np.float32),
    (np.int8, np.int32, np.int32),
    (np.uint8, np.int8, np.int16),
    (np.bool_, np.int32, np.int32),
    (np.bool_, np.float16, np.float16),
])
def test_tensor_tensor_promotion(da, db, want):
    a, b = np.ones((2,), da), np.ones((2,), db)
    assert N(_core.add(T(a), T(b))).dtype == want
    assert N(_core.mul(T(b), T(a))).dtype == want


def test_float16_with_bfloat16_gives_float32():
    h = T(np.ones(2, np.float16))
    bf = _core.cast(T(np.ones(2, np.float32)), D.BFloat16)
    assert _core.add(h, bf).dtype == D.Float32


@pytest.mark.parametrize("dtype,scalar,want", [
    (np.float16, 2.5, np.float16),   # a Python float does not widen a float tensor
    (np.float64, 2.5, np.float64),
    (np.int32, 2.5, np.float32),     # int tensor + Python float → float32
    (np.int32, 3, np.int32),         # a Python int does not widen an int tensor
    (np.int8, 3, np.int8),
    (np.uint8, 3, np.uint8),
    (np.float16, 3, np.float16),
    (np.bool_, 2.5, np.float32),
    (np.bool_, True, np.bool_),
])
def test_weak_scalar_promotion(dtype, scalar, want):
    a = np.array([1, 2, 3]).astype(dtype)
    r = N(_core.add(T(a), scalar))
    assert r.dtype == want
    r2 = N(_core.mul(scalar, T(a)))
    assert r2.dtype == want
    if want != np.bool_:
        np.testing.assert_allclose(r.astype(np.float64), a.astype(np.float64) + scalar, rtol=1e-3)


def test_float16_arithmetic_rounds_like_numpy():
    a, b = rand(50, dtype=np.float16), rand(50, dtype=np.float16)
    for name in ("add", "sub", "mul", "div"):
        got = N(getattr(_core, name)(T(a), T(b)))
        assert got.dtype == np.float16
        want = BINARY[name](a.astype(np.float32), b.astype(np.float32)).astype(np.float16)
        np.testing.assert_array_equal(got, want)


def test_binary_non_contiguous_inputs():
    a = rand(4, 3)
    b = rand(3, 4)
    ta = _core.transpose(T(b), (1, 0))
    np.testing.assert_allclose(N(_core.add(T(a), ta)), a + b.T)
    s = _core.strided_slice(T(rand(8, 3)), [7, 0], [-1, 3], [-2, 1])
    np.testing.assert_allclose(N(_core.mul(s, T(a))), N(s) * a)


def test_binary_errors():
    with pytest.raises(ValueError, match=r"Add.*\[2, 3\].*\[4\]"):
        _core.add(T(rand(2, 3)), T(rand(4)))
    with pytest.raises(TypeError, match="Select.*Bool"):
        _core.select(T(np.ones(2, np.float32)), T(rand(2)), T(rand(2)))


# --------------------------------------------------------------------------------------------- unary forward
def np_gelu(x, approximate=False):
    if approximate:
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


UNARY = {
    "neg": np.negative, "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x),
    "abs": np.abs, "sign": np.sign, "square": np.square, "erf": np.vectorize(math.erf),
    "relu": lambda x: np.maximum(x, 0), "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "tanh": np.tanh,
    "gelu": np_gelu,
}
POSITIVE = {"log", "sqrt", "rsqrt"}


@pytest.mark.parametrize("name", list(UNARY))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unary_float(name, dtype):
    a = rand(3, 5)
    if name in POSITIVE:
        a = np.abs(a) + 0.1
    got = N(getattr(_core, name)(T(a.astype(dtype))))
    want = UNARY[name](a.astype(dtype).astype(np.float64))
    assert got.dtype == dtype
    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-6)


@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "sigmoid", "tanh", "erf"])
def test_unary_float_only_on_ints_gives_float32(name):
    a = np.array([1, 2, 3], np.int32)
    got = N(getattr(_core, name)(T(a)))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, UNARY[name](a.astype(np.float64)), rtol=1e-6)


@pytest.mark.parametrize("name", ["neg", "abs", "sign", "square", "relu"])
def test_unary_keeps_int_dtype(name):
    a = np.array([-3, 0, 2, 5], np.int32)
    got = N(getattr(_core, name)(T(a)))
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, UNARY[name](a))


def test_unary_float16_and_views():
    h = rand(4, 4, dtype=np.float16)
    for name in ("exp", "tanh", "neg", "square"):
        got = N(getattr(_core, name)(T(h)))
        assert got.dtype == np.float16
        want = UNARY[name](h.astype(np.float32)).astype(np.float16)
        np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=1e-3, atol=1e-3)
    t = _core.transpose(T(h.astype(np.float32)), (1, 0))
    np.testing.assert_allclose(N(_core.exp(t)), np.exp(h.astype(np.float32).T), rtol=1e-6)


def test_gelu_approximate():
    a = rand(10)
    np.testing.assert_allclose(N(_core.gelu(T(a), True)), np_gelu(a, True), rtol=1e-12)
    np.testing.assert_allclose(N(_core.gelu(T(a))), np_gelu(a), rtol=1e-12)


def test_identity_and_stop_gradient():
    a = rand(3)
    x = T(a)
    assert _core.identity(x)._shares_storage(x)
    np.testing.assert_array_equal(N(_core.stop_gradient(x)), a)
    with _core.GradScope() as s:
        xi = s.watch_input(T(a))
        y = _core.add(_core.mul(_core.stop_gradient(xi), xi), _core.identity(xi))
        (g,) = _core.gradient([y], [None], [xi])
    np.testing.assert_allclose(N(g), a + 1)


# --------------------------------------------------------------------------------------------- select, clip, cast
def test_select_broadcast_and_promotion():
    c = rng.random((3, 1)) > 0.5
    x = rand(3, 4, dtype=np.float32)
    y = np.arange(4, dtype=np.int32)
    got = N(_core.select(T(c), T(x), T(y)))
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, np.where(c, x, y))
    np.testing.assert_array_equal(N(_core.select(T(c), T(x), 0.0)), np.where(c, x, np.float32(0)))


def test_clip():
    a = rand(4, 5)
    np.testing.assert_array_equal(N(_core.clip(T(a), -0.5, 0.5)), np.clip(a, -0.5, 0.5))
    np.testing.assert_array_equal(N(_core.clip(T(a), None, 0.25)), np.minimum(a, 0.25))
    np.testing.assert_array_equal(N(_core.clip(T(a), T(rand(5)), None)).shape, (4, 5))
    assert N(_core.clip(T(a.astype(np.float16)), 0.0, 1.0)).dtype == np.float16
    i = np.arange(-3, 4, dtype=np.int32)
    got = N(_core.clip(T(i), -1, 2))
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, np.clip(i, -1, 2))


@pytest.mark.parametrize("src", [np.float32, np.float64, np.float16, np.int32, np.int8, np.uint8, np.bool_, np.int64])
@pytest.mark.parametrize("dst", [D.Float32, D.Float64, D.Float16, D.Int32, D.Int64, D.UInt8, D.Bool])
def test_cast(src, dst):
    a = (rand(10) * 50).astype(src) if src != np.bool_ else rng.random(10) > 0.5
    if dst == D.UInt8:
        a = np.abs(a)
    npd = np.dtype(_core.dtype_numpy_name(dst))
    got = N(_core.cast(T(a), dst))
    assert got.dtype == npd
    np.testing.assert_array_equal(got, a.astype(npd))


def test_cast_float16_rounding_exhaustive():
    bits = np.arange(0, 65536, 7, dtype=np.uint16).view(np.float16)
    f = bits.astype(np.float32)
    ok = np.isfinite(f)
    mids = ((f[ok][:-1].astype(np.float64) + f[ok][1:]) / 2).astype(np.float32)
    vals = np.concatenate([f, mids, np.float32([65519.0, 65520.0, 1e-8, -6e-8, 3e-5])])
    got = N(_core.cast(T(vals), D.Float16))
    with np.errstate(over="ignore"):
        want = vals.astype(np.float16)
    same = (got.view(np.uint16) == want.view(np.uint16)) | (np.isnan(got) & np.isnan(want))
    assert same.all(), vals[~same][:5]
    np.testing.assert_array_equal(N(_core.cast(T(bits), D.Float32)), f)


def test_cast_bfloat16_round_trip():
    x = rand(100, dtype=np.float32)
    back = N(_core.cast(_core.cast(T(x), D.BFloat16), D.Float32))
    u = x.view(np.uint32).astype(np.uint64)
    want = (((u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)).view(np.float32)
    np.testing.assert_array_equal(back, want)
    # asnumpy() of a BFloat16 tensor: an ml_dtypes.bfloat16 array of the same bits (MindSpore 2.10: its own bfloat16)
    bf = _core.cast(T(x), D.BFloat16).asnumpy()
    assert bf.dtype.name == "bfloat16"
    np.testing.assert_array_equal(bf.astype(np.float32), want)


# --------------------------------------------------------------------------------------------- matmul
@pytest.mark.parametrize("sa,sb", [
    ((3, 4), (4, 5)),
    ((2, 3, 4), (2, 4, 5)),
    ((2, 1, 3, 4), (3, 4, 2)),   # broadcast batch dims
    ((4,), (4, 5)),              # 1-D operands
    ((3, 4), (4,)),
    ((4,), (4,)),
    ((5, 3, 4), (4,)),
    ((0, 4), (4, 3)),
    ((3, 0), (0, 2)),
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matmul_forward(sa, sb, dtype):
    a, b = rand(*sa, dtype=dtype), rand(*sb, dtype=dtype)
    got = N(_core.matmul(T(a), T(b)))
    want = np.matmul(a.astype(np.float64), b.astype(np.float64))
    assert got.shape == want.shape and got.dtype == dtype
    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-5)


@pytest.mark.parametrize("ta,tb", [(False, True), (True, False), (True, True)])
def test_matmul_transpose_flags(ta, tb):
    a = rand(2, 4, 3) if ta else rand(2, 3, 4)
    b = rand(5, 4) if tb else rand(4, 5)
    want = np.matmul(np.swapaxes(a, -1, -2) if ta else a, b.T if tb else b)
    for dt in (np.float32, np.float64):
        got = N(_core.matmul(T(a.astype(dt)), T(b.astype(dt)), ta, tb))
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    check_grad(lambda x, y: _core.matmul(x, y, ta, tb), [a, b])


def test_matmul_views_ints_half():
    a, b = rand(4, 3), rand(5, 4)
    at = _core.transpose(T(a), (1, 0))      # (3, 4), column-major
    bt = _core.transpose(T(b), (1, 0))      # (4, 5)
    np.testing.assert_allclose(N(_core.matmul(at, bt)), a.T @ b.T, rtol=1e-12)
    s = _core.strided_slice(T(rand(6, 8)), [0, 0], [6, 8], [2, 2])  # (3, 4), strided both ways
    np.testing.assert_allclose(N(_core.matmul(s, T(a))), N(s) @ a, rtol=1e-12)
    i, j = rng.integers(-3, 4, (3, 4)).astype(np.int32), rng.integers(-3, 4, (4, 2)).astype(np.int32)
    got = N(_core.matmul(T(i), T(j)))
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, i @ j)
    h, k = rand(8, 16, dtype=np.float16), rand(16, 4, dtype=np.float16)
    got = N(_core.matmul(T(h), T(k)))
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float32), (h.astype(np.float32) @ k.astype(np.float32)), rtol=2e-2, atol=2e-2)
    # Mixed operand dtypes are refused, as MindSpore 2.10 and PyTorch do (not promoted).
    with pytest.raises(TypeError, match=r"For 'MatMul', the type of 'x2' should be same as 'x1'.*Int32.*Float32"):
        _core.matmul(T(i), T(np.ones((4, 2), np.float32)))


def test_matmul_errors():
    with pytest.raises(ValueError, match="MatMul.*inner"):
        _core.matmul(T(rand(3, 4)), T(rand(5, 2)))
    with pytest.raises(ValueError, match="MatMul"):
        _core.matmul(T(rand(2, 3, 4)), T(rand(3, 4, 2)))
    with pytest.raises(TypeError, match="MatMul.*Bool"):
        _core.matmul(T(np.ones((2, 2), bool)), T(np.ones((2, 2), bool)))
    with pytest.raises(ValueError, match="MatMul.*0-d"):
        _core.matmul(S(1.0, np.float32), T(rand(2)))


@pytest.mark.parametrize("sa,sb", [((3, 4), (4, 2)), ((2, 3, 4), (4, 2)), ((2, 1, 3, 4), (3, 4, 2)), ((4,), (4, 3)),
                                   ((3, 4), (4,)), ((4,), (4,))])
def test_matmul_grad(sa, sb):
    check_grad(lambda x, y: _core.matmul(x, y), [rand(*sa), rand(*sb)])


# --------------------------------------------------------------------------------------------- gradients
BINARY_GRAD = ["add", "sub", "mul", "div", "pow", "maximum", "minimum", "mod"]


@pytest.mark.parametrize("name", BINARY_GRAD)
@pytest.mark.parametrize("sa,sb", [((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((), (3,))])
def test_binary_grad(name, sa, sb):
    a = rand(*sa)
    b = rand(*sb)
    if name == "pow":
        a = np.abs(a) + 0.5
    if name in ("div", "mod"):
        b = np.where(np.abs(b) < 0.2, 0.7, b)
    if name == "mod":  # stay away from the jumps of floor(a/b)
        a = np.floor(a / b) * b + 0.5 * b if a.shape == np.broadcast(a, b).shape else a
    if name in ("maximum", "minimum"):  # no ties
        b = b + 0.01
    fa = (lambda x, y: getattr(_core, name)(x, y))
    if sa == ():
        fa = (lambda x, y: getattr(_core, name)(_core.reshape(x, ()), y))
        a = a.reshape(1)
    check_grad(fa, [a, b])


def test_maximum_minimum_tie_splits_the_gradient():
    """At a == b Maximum/Minimum give each input half (MindSpore's MaximumGrad, PyTorch's maximum backward)."""
    a = np.array([1.0, 2.0])
    for op in (_core.maximum, _core.minimum):
        with _core.GradScope() as s:
            x, y = s.watch_input(T(a)), s.watch_input(T(a))
            gx, gy = _core.gradient([op(x, y)], [None], [x, y])
        np.testing.assert_array_equal(N(gx), [0.5, 0.5])
        np.testing.assert_array_equal(N(gy), [0.5, 0.5])


UNARY_GRAD = ["neg", "exp", "log", "sqrt", "rsqrt", "abs", "square", "erf", "relu", "sigmoid", "tanh", "gelu"]


@pytest.mark.parametrize("name", UNARY_GRAD)
def test_unary_grad(name):
    a = rand(3, 4)
    if name in POSITIVE:
        a = np.abs(a) + 0.2
    if name in ("abs", "relu"):
        a = np.where(np.abs(a) < 0.05, 0.3, a)
    check_grad(lambda x: getattr(_core, name)(x), [a])


def test_gelu_approximate_grad():
    check_grad(lambda x: _core.gelu(x, True), [rand(7)])


def test_select_clip_cast_grads():
    c = T(rng.random((2, 3)) > 0.5)
    check_grad(lambda x, y: _core.select(c, x, y), [rand(2, 3), rand(3)])
    a = rand(10)
    a = np.where(np.abs(np.abs(a) - 0.5) < 0.05, 0.0, a)
    check_grad(lambda x: _core.clip(x, -0.5, 0.5), [a])
    with _core.GradScope() as s:  # through casts (finite differences would see float32 rounding)
        x = s.watch_input(T(rand(4)))
        y = _core.cast(_core.mul(_core.cast(x, D.Float32), 3.0), D.Float64)
        (g,) = _core.gradient([y], [None], [x])
    assert g.dtype == D.Float64
    np.testing.assert_array_equal(N(g), np.full(4, 3.0))


def second_derivative(fn, a):
    """d/dx of sum(d/dx sum(fn(x))) through nested transforms (the backward pass is recorded)."""
    with _core.GradScope() as outer:
        x = outer.watch_input(T(a))
        with _core.GradScope() as inner:
            xi = inner.watch_input(x)
            (g,) = _core.gradient([fn(xi)], [None], [xi])
        (gg,) = _core.gradient([g], [None], [x])
    return N(gg)


@pytest.mark.parametrize("name,d2", [
    ("exp", np.exp),
    ("sqrt", lambda x: -0.25 * x ** -1.5),
    ("rsqrt", lambda x: 0.75 * x ** -2.5),
    ("sigmoid", lambda x: (lambda s: s * (1 - s) * (1 - 2 * s))(1 / (1 + np.exp(-x)))),
    ("tanh", lambda x: -2 * np.tanh(x) * (1 - np.tanh(x) ** 2)),
    ("log", lambda x: -1 / x ** 2),
    ("square", lambda x: np.full_like(x, 2.0)),
])
def test_unary_second_derivative(name, d2):
    # Regression: bprops that reuse the op's output must still carry its history when grad of grad is taken.
    a = np.abs(rand(6)) + 0.3
    np.testing.assert_allclose(second_derivative(getattr(_core, name), a), d2(a), rtol=1e-10)


def test_pow_second_derivative_in_exponent():
    a = np.abs(rand(4)) + 0.5
    b = T(np.full(4, 1.5))
    got = second_derivative(lambda x: _core.pow(b, x), a)  # d²/dx² 1.5^x = 1.5^x ln²1.5
    np.testing.assert_allclose(got, 1.5 ** a * np.log(1.5) ** 2, rtol=1e-10)


def test_second_order_through_elementwise():
    a = rand(5)
    with _core.GradScope() as outer:
        x = outer.watch_input(T(a))
        with _core.GradScope() as inner:
            xi = inner.watch_input(x)
            (g,) = _core.gradient([_core.mul(_core.tanh(xi), _core.exp(xi))], [None], [xi])
        (gg,) = _core.gradient([g], [None], [x])
    t, e = np.tanh(a), np.exp(a)
    d1t = 1 - t ** 2
    d2t = -2 * t * d1t
    np.testing.assert_allclose(N(gg), d2t * e + 2 * d1t * e + t * e, rtol=1e-10)


# --------------------------------------------------------------------------------------------- creation / random
def test_full_zeros_ones_like_arange():
    f = N(_core.full((2, 3), 2.5, D.Float16))
    assert f.dtype == np.float16 and (f == 2.5).all()
    assert N(_core.full((), 7, D.Int32)).shape == ()
    z = _core.zeros_like(T(rand(2, 2).astype(np.int8)))
    assert z.dtype == D.Int8 and not N(z).any()
    assert (N(_core.ones_like(T(rand(3)))) == 1).all()
    np.testing.assert_array_equal(N(_core.arange(0, 5, 1, D.Int64)), np.arange(5))
    np.testing.assert_allclose(N(_core.arange(1, 2, 0.25, D.Float32)), np.arange(1, 2, 0.25, dtype=np.float32))
    np.testing.assert_array_equal(N(_core.arange(5, 0, -2, D.Int32)), np.arange(5, 0, -2))
    assert N(_core.arange(3, 1, 1, D.Float32)).shape == (0,)
    with pytest.raises(ValueError, match="arange.*step"):
        _core.arange(0, 3, 0, D.Float32)
    with pytest.raises(ValueError, match="full"):
        _core.full((2, -1), 0.0, D.Float32)


def test_standard_normal_reproducible_and_distribution():
    a = N(_core.standard_normal((1000,), D.Float32, 42, 0))
    b = N(_core.standard_normal((1000,), D.Float32, 42, 0))
    c = N(_core.standard_normal((1000,), D.Float32, 42, 1))
    d = N(_core.standard_normal((1000,), D.Float32, 43, 0))
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c) and not np.allclose(a, d)
    big = N(_core.standard_normal((100_000,), D.Float64, 7, 3))
    assert abs(big.mean()) < 0.02 and abs(big.std() - 1) < 0.02
    assert np.isfinite(big).all()
    h = N(_core.standard_normal((5, 7), D.Float16, 1, 0))
    assert h.dtype == np.float16 and h.shape == (5, 7)
    with pytest.raises(ValueError, match="randn"):
        _core.standard_normal((3,), D.Int32, 0, 0)


def test_uniform_real_and_int():
    u = N(_core.uniform_real((50_000,), D.Float32, 3, 0))
    assert u.min() >= 0 and u.max() < 1 and abs(u.mean() - 0.5) < 0.01
    np.testing.assert_array_equal(u, N(_core.uniform_real((50_000,), D.Float32, 3, 0)))
    r = N(_core.uniform_int((20_000,), -3, 4, D.Int32, 5, 0))
    assert r.dtype == np.int32 and r.min() == -3 and r.max() == 3
    counts = np.bincount(r + 3)
    assert counts.min() > 20_000 / 7 * 0.9
    r8 = N(_core.uniform_int((100,), 0, 2, D.Int8, 5, 1))
    assert set(np.unique(r8)) <= {0, 1}
    with pytest.raises(ValueError, match="randint.*high"):
        _core.uniform_int((3,), 4, 4, D.Int32, 0, 0)
    # odd sizes draw the same prefix
    np.testing.assert_array_equal(N(_core.uniform_real((7,), D.Float64, 9, 2))[:6],
                                  N(_core.uniform_real((6,), D.Float64, 9, 2)))
