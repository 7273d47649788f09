"""The Diagonal view op and DiagEmbed (ops.diagonal, Tensor.diagonal, trace, diag_embed, diagflat, diag) and the
VarMean op (ops.var, std, var_mean, std_mean): values against NumPy, gradients against float64 central differences,
PyNative against kiln.jit, the view's storage sharing and write-through (MindSpore 2.10's ops.diagonal is a view too:
a write into it reaches the input), and errors (issue 23)."""
import re

import numpy as np
import pytest

import kiln
from kiln import Tensor, ops
from kiln.common import _views

from helpers import central_difference
from op_registry.shapes import _np_diag_embed  # the registry's NumPy reference of diag_embed

DIAG_CASES = [  # shape, offset, dim1, dim2
    ((3, 4), 0, 0, 1), ((3, 4), 1, 0, 1), ((3, 4), -2, 0, 1), ((4, 3), 2, 1, 0), ((2, 3, 4), 1, 2, 0),
    ((2, 3, 4), -1, -1, -2), ((2, 3, 4, 5), 0, 1, 3), ((3, 4), 4, 0, 1), ((3, 4), -3, 0, 1), ((3, 4), 9, 0, 1),
    ((0, 4), 0, 0, 1), ((2, 0, 3), 1, 0, 2),
]


@pytest.mark.parametrize("shape, offset, d1, d2", DIAG_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.bool_, np.float16])
def test_diagonal_matches_numpy_and_is_a_view(shape, offset, d1, d2, dtype):
    a = (np.arange(int(np.prod(shape))).reshape(shape) % 7).astype(dtype)
    x = Tensor(a)
    y = ops.diagonal(x, offset, d1, d2)
    ref = np.diagonal(a, offset, d1, d2)
    assert y.shape == ref.shape and y.dtype == x.dtype
    np.testing.assert_array_equal(y.asnumpy(), ref)
    np.testing.assert_array_equal(x.diagonal(offset, d1, d2).asnumpy(), ref)
    if y.size:
        assert y._shares_storage(x)  # no copy, as PyTorch's and MindSpore's diagonal


def test_diagonal_of_strided_views():
    a = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    x = Tensor(a)
    v = x[:, 1:, ::-2]  # non-contiguous, negative stride
    np.testing.assert_array_equal(ops.diagonal(v, 1, 0, 2).asnumpy(), np.diagonal(a[:, 1:, ::-2], 1, 0, 2))
    t = ops.transpose(x, (2, 0, 1))
    np.testing.assert_array_equal(ops.diagonal(t, -1, 2, 0).asnumpy(), np.diagonal(a.transpose(2, 0, 1), -1, 2, 0))
    np.testing.assert_allclose(ops.trace(x[1, ::-1]).asnumpy(), np.trace(a[1, ::-1]), rtol=1e-6)


def test_diagonal_write_reaches_the_input():
    """MindSpore 2.10 (PyNative): d = ops.diagonal(x); d[0] = 100 writes x[0, 0]; the same here, and under a
    gradient (a functional write, through the view record) too."""
    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    x = Tensor(a.copy())
    d = ops.diagonal(x, 1)
    d[1] = 100.0
    a[1, 2] = 100.0
    np.testing.assert_array_equal(x.asnumpy(), a)
    assert _views.view_info(d)[1] == (("diagonal", 1, 0, 1),)

    def loss(t):
        b = t * 1.0
        dg = ops.diagonal(b, -1)
        dg[0] = t[0, 0] * 3.0  # b[1, 0]
        return (b * t).sum()

    def loss_np(t):
        b = t * 1.0
        b[1, 0] = t[0, 0] * 3.0
        return float((b * t).sum())

    t0 = np.linspace(-1.0, 1.0, 12).reshape(3, 4)
    np.testing.assert_allclose(float(loss(Tensor(t0))), loss_np(t0.copy()))
    np.testing.assert_allclose(kiln.grad(loss)(Tensor(t0)).asnumpy(), central_difference(loss_np, t0), rtol=1e-6)


def test_diagonal_errors():
    x = Tensor(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match="'dim1' and 'dim2' must differ"):
        ops.diagonal(x, 0, 1, -1)
    with pytest.raises(ValueError, match="dim2"):
        ops.diagonal(x, 0, 0, 2)
    with pytest.raises(ValueError, match="dim1"):
        ops.diagonal(x, 0, -3, 1)
    with pytest.raises(ValueError, match="rank >= 2"):
        ops.diagonal(Tensor(np.ones(3, np.float32)))
    with pytest.raises(ValueError, match="'dim1' and 'dim2' must differ"):
        kiln._core.diagonal(x, 0, 0, -2)  # the C++ op's own check
    with pytest.raises(ValueError, match="does not match the diagonal shape"):
        kiln._core.diag_embed(Tensor(np.ones(3, np.float32)), [3, 3], 1, 0, 1)



# name, Kiln function, NumPy reference, input shape
GRAD_CASES = [
    ("diagonal", lambda t: ops.diagonal(t, 1, 2, 0), lambda a: np.diagonal(a, 1, 2, 0), (2, 3, 4)),
    ("diagonal-below", lambda t: ops.diagonal(t, -1), lambda a: np.diagonal(a, -1), (3, 4)),
    ("Tensor.diagonal", lambda t: t.diagonal(0, -1, -2), lambda a: np.diagonal(a, 0, -1, -2), (2, 3, 3)),
    ("trace", ops.trace, lambda a: np.trace(a), (3, 4)),
    ("diag_embed", lambda t: ops.diag_embed(t, 1, 0, 2), lambda a: _np_diag_embed(a, 1, 0, 2), (2, 3)),
    ("diag_embed-below", lambda t: ops.diag_embed(t, -2), lambda a: _np_diag_embed(a, -2), (3,)),
    ("diagflat", lambda t: ops.diagflat(t, -1), lambda a: np.diagflat(a, -1), (2, 2)),
    ("diag", ops.diag, lambda a: np.diagflat(a.reshape(-1)).reshape(a.shape * 2), (2, 2)),
]


@pytest.mark.parametrize("name, f, ref, shape", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_diag_family_values_and_gradients(name, f, ref, shape, mode):
    a = np.sin(np.arange(1, int(np.prod(shape)) + 1, dtype=np.float64)).reshape(shape)
    out = ref(a)
    w = np.cos(np.arange(np.size(out), dtype=np.float64)).reshape(np.shape(out))

    def loss(t):
        return (f(t) * Tensor(w)).sum() + (f(t * t) * f(t)).sum()  # grad of grad-friendly: f applied twice

    def loss_np(x):
        return float((ref(x) * w).sum() + (ref(x * x) * ref(x)).sum())

    fwd = kiln.jit(f) if mode == "graph" else f
    np.testing.assert_allclose(fwd(Tensor(a)).asnumpy(), out, rtol=1e-12)
    g = kiln.grad(loss)
    if mode == "graph":
        g = kiln.jit(g)
    np.testing.assert_allclose(g(Tensor(a)).asnumpy(), central_difference(loss_np, a), rtol=1e-6, atol=1e-8)


def test_second_order_gradient_of_diagonal():
    a = np.linspace(-1.0, 1.5, 12).reshape(3, 4)

    def f(t):
        return (ops.diagonal(t * t * t, 1) ** 2).sum()

    def gsum(t):
        return kiln.grad(f)(t).sum()

    def gsum_np(x):
        d = np.zeros_like(x)
        i = np.arange(3)
        d[i, i + 1] = 6 * x[i, i + 1] ** 5
        return float(d.sum())

    np.testing.assert_allclose(kiln.grad(gsum)(Tensor(a)).asnumpy(), central_difference(gsum_np, a), rtol=1e-5,
                               atol=1e-7)


@pytest.mark.parametrize("f, nodes", [
    (lambda t: ops.diagonal(t, 1), ["Diagonal"]),
    (lambda t: ops.diag_embed(t[0]), ["StridedSlice", "Reshape", "DiagEmbed"]),
    (ops.trace, ["Diagonal", "ReduceSum"]),
    (lambda t: ops.var(t, 1), ["VarMean"]),
    (lambda t: ops.std_mean(t, ddof=1), ["VarMean"]),
])
def test_graph_nodes(f, nodes):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    fn = kiln.jit(f)
    out, want = fn(Tensor(a)), f(Tensor(a))
    for o, w in zip(out if isinstance(out, tuple) else (out,), want if isinstance(want, tuple) else (want,)):
        np.testing.assert_allclose(o.asnumpy(), w.asnumpy(), rtol=1e-6)
    assert re.findall(r"= (\w+)\(", fn.graphs[0].graph_before.to_text()) == nodes


# ------------------------------------------------------------------------------------------------ moments

def _np_var(x, axis=None, ddof=0, keepdims=False):
    ax = tuple(axis) if isinstance(axis, (tuple, list)) else axis
    n = x.size if ax is None else int(np.prod([x.shape[a] for a in np.atleast_1d(ax)]))
    v = np.var(x.astype(np.float64), axis=ax, keepdims=keepdims) * n
    with np.errstate(divide="ignore", invalid="ignore"):  # NumPy's rule: divided by max(n - ddof, 0)
        return v / max(n - int(ddof), 0)


MOM_CASES = [((2, 3), {}), ((2, 3), dict(axis=1, ddof=1, keepdims=True)), ((3, 2, 4), dict(axis=(0, 2), ddof=True)),
             ((3, 2, 4), dict(axis=(2, -3), keepdims=True)), ((4,), dict(axis=0, ddof=2)), ((5, 3), dict(axis=-2)),
             ((2, 3), dict(axis=[], ddof=0)), ((2, 3), dict(axis=0, ddof=-1))]


@pytest.mark.parametrize("shape, kw", MOM_CASES)
@pytest.mark.parametrize("dtype, rtol", [(np.float32, 1e-5), (np.float64, 1e-12), (np.float16, 2e-3)])
def test_moments_match_numpy(shape, kw, dtype, rtol):
    a = (np.random.default_rng(0).standard_normal(shape) * 3 + 10).astype(dtype)
    x = Tensor(a)
    axis = kw.get("axis")
    if axis == []:  # Kiln's reading of an empty axis list: all axes (ReduceSum's)
        kw_np = {k: v for k, v in kw.items() if k != "axis"}
    else:
        kw_np = kw
    v = _np_var(a, **kw_np)
    m = np.mean(a.astype(np.float64), axis=tuple(np.atleast_1d(axis)) if axis not in (None, []) else None,
                keepdims=kw.get("keepdims", False))
    np.testing.assert_allclose(ops.var(x, **kw).asnumpy(), v, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(ops.std(x, **kw).asnumpy(), np.sqrt(v), rtol=rtol, atol=rtol)
    vm, mm = ops.var_mean(x, **kw)
    sm, mm2 = ops.std_mean(x, **kw)
    for got, want in ((vm, v), (mm, m), (sm, np.sqrt(v)), (mm2, m)):
        assert got.dtype == x.dtype and got.shape == np.shape(want)
        np.testing.assert_allclose(got.asnumpy(), want, rtol=rtol, atol=rtol)


def test_moments_accumulate_in_double():
    """float32 values with a large mean and a tiny spread: the two passes in double keep the variance, where a
    float32 mean and float32 deviations lose it."""
    a = (1e4 + np.array([0.0, 1e-3, 2e-3, 3e-3] * 8)).astype(np.float32)
    np.testing.assert_allclose(ops.var(Tensor(a)).asnumpy(), np.var(a.astype(np.float64)), rtol=1e-5)


def test_moments_edge_cases():
    x = Tensor(np.ones((1, 3), np.float32))
    assert np.isnan(ops.var(x, 0, ddof=1).asnumpy()).all()  # N - ddof = 0 and 0/0 (MindSpore 2.10: NaN)
    # N - ddof <= 0 with a nonzero sum of squares: inf (NumPy; MindSpore 2.10 gives inf for ddof = N)
    assert np.isposinf(ops.var(Tensor(np.array([1.0, 2, 3], np.float32)), ddof=3).asnumpy())
    np.testing.assert_array_equal(ops.var(Tensor(np.array([[1.0, 2], [3, 5]], np.float32)), 1, ddof=2).asnumpy(),
                                  [np.inf, np.inf])
    assert np.isposinf(ops.var(Tensor(np.array([1.0, 2, 3])), ddof=5).asnumpy())  # NumPy: max(N - ddof, 0) = 0
    std, mean = ops.std_mean(Tensor(np.zeros((0, 2), np.float32)), 0)
    assert std.shape == (2,) and np.isnan(std.asnumpy()).all() and np.isnan(mean.asnumpy()).all()
    with pytest.raises(TypeError):
        ops.var(Tensor(np.ones(3, np.int32)))
    with pytest.raises(ValueError):
        ops.std(Tensor(np.ones((2, 3), np.float32)), (0, 0))


MOM_GRAD = [((2, 3), dict()), ((3, 4), dict(axis=1, ddof=1)), ((2, 3, 2), dict(axis=(0, 2), keepdims=True)),
            ((4,), dict(axis=0, ddof=2))]


@pytest.mark.parametrize("shape, kw", MOM_GRAD)
@pytest.mark.parametrize("name", ["var", "std", "var_mean", "std_mean"])
@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_moments_gradients(shape, kw, name, mode):
    a = np.sin(np.arange(1, int(np.prod(shape)) + 1, dtype=np.float64) * 1.7).reshape(shape)
    axis = kw.get("axis")
    np_axis = tuple(np.atleast_1d(axis)) if axis is not None else None
    ddof, keep = kw.get("ddof", 0), kw.get("keepdims", False)

    def ref(x):
        v = _np_var(x, axis, ddof, keep)
        s = np.sqrt(v) if name.startswith("std") else v
        return (s, np.mean(x, axis=np_axis, keepdims=keep)) if name.endswith("mean") else (s,)

    ws = [np.cos(np.arange(np.size(r), dtype=np.float64) + 1).reshape(np.shape(r)) for r in ref(a)]

    def loss(t):
        out = getattr(ops, name)(t, **kw)
        out = out if isinstance(out, tuple) else (out,)
        return sum((o * Tensor(w)).sum() for o, w in zip(out, ws))

    def loss_np(x):
        return float(sum((r * w).sum() for r, w in zip(ref(x), ws)))

    g = kiln.grad(loss)
    if mode == "graph":
        g = kiln.jit(g)
    np.testing.assert_allclose(g(Tensor(a)).asnumpy(), central_difference(loss_np, a), rtol=1e-6, atol=1e-8)


def test_std_gradient_is_zero_where_std_is_zero():
    x = Tensor(np.array([[2.0, 2.0, 2.0], [1.0, 2.0, 4.0]]))
    g = kiln.grad(lambda t: ops.std(t, 1).sum())(x).asnumpy()
    np.testing.assert_array_equal(g[0], 0.0)
    d = np.array([1.0, 2.0, 4.0])
    np.testing.assert_allclose(g[1], (d - d.mean()) / (3 * d.std()), rtol=1e-12)


def test_mindir_roundtrip_of_the_diagonal_ops(tmp_path):
    """Diagonal and DiagEmbed export to MindIR as the compositions they replaced (Transpose/Reshape/Gather,
    Gather/Select/Reshape/Transpose); the reloaded graph gives the same values."""
    from kiln import nn

    class Net(nn.Cell):
        def construct(self, x):
            return (ops.diagonal(x, 1, 2, 0) * 2, ops.trace(x[0]), ops.diag_embed(x[0], -1, 2, 0),
                    ops.diagflat(x[1, 0], 1), ops.diagonal(x, 9))

    a = np.sin(np.arange(24, dtype=np.float32)).reshape(2, 3, 4)
    x = Tensor(a)
    net = Net()
    want = [o.asnumpy() for o in net(x)]
    kiln.export(net, x, file_name=str(tmp_path / "diag"), file_format="MINDIR")
    g = kiln.load(str(tmp_path / "diag.mindir"))
    got = [o.asnumpy() for o in nn.GraphCell(g)(x)]
    assert "Gather" in set(g.primitives)
    refs = [np.diagonal(a, 1, 2, 0) * 2, np.trace(a[0]), _np_diag_embed(a[0], -1, 2, 0), np.diagflat(a[1, 0], 1),
            np.diagonal(a, 9)]
    for w, o, r in zip(want, got, refs):
        assert o.shape == r.shape
        np.testing.assert_allclose(o, r, rtol=1e-6, atol=1e-6)
        np.testing.assert_array_equal(w, o)


def test_matrix_diag_part_and_matrix_diag_of_one_diagonal():
    """One diagonal: matrix_diag_part is a copy of the Diagonal view (a write into it does not reach x, as
    MindSpore's new tensor), matrix_diag with padding 0 one DiagEmbed; values, gradients and errors as before."""
    a = np.sin(np.arange(24, dtype=np.float64)).reshape(2, 3, 4)
    x = Tensor(a.copy())
    for k in (0, 2, -2, 3):
        d = ops.matrix_diag_part(x, k, 0.0)
        np.testing.assert_array_equal(d.asnumpy(), np.diagonal(a, k, -2, -1))
        assert not d.size or not d._shares_storage(x)
    d = ops.matrix_diag_part(x, 1, 5.0)
    d[0, 0] = 100.0
    np.testing.assert_array_equal(x.asnumpy(), a)
    with pytest.raises(ValueError, match="outside"):
        ops.matrix_diag_part(x, 4, 0.0)
    with pytest.raises(TypeError, match="padding_value"):
        ops.matrix_diag_part(x, 0, "0")
    v = np.arange(1.0, 4.0)
    for k, rows, cols in ((0, -1, -1), (1, -1, -1), (-1, 4, 3), (1, 3, 5)):
        got = ops.matrix_diag(Tensor(v), k, rows, cols).asnumpy()
        r = rows if rows != -1 else 3 + abs(k)
        c = cols if cols != -1 else 3 + abs(k)
        want = np.zeros((r, c))
        i = np.arange(3)
        want[(i, i + k) if k >= 0 else (i - k, i)] = v
        np.testing.assert_array_equal(got, want)
    neg = ops.matrix_diag(Tensor(v), 0, padding_value=-0.0).asnumpy()  # -0.0 padding keeps its sign (old path)
    assert np.signbit(neg[0, 1])

    def loss(t):
        return (ops.matrix_diag_part(t, -1, 0.0) * Tensor(np.arange(1.0, 3.0))).sum() + \
            (ops.matrix_diag(ops.matrix_diag_part(t, 1, 0.0), 1) ** 2).sum()

    def loss_np(t):
        return float((np.diagonal(t, -1, -2, -1) * np.arange(1.0, 3.0)).sum() + (np.diagonal(t, 1, -2, -1) ** 2).sum())

    t0 = a[0]
    for g in (kiln.grad(loss), kiln.jit(kiln.grad(loss))):
        np.testing.assert_allclose(g(Tensor(t0)).asnumpy(), central_difference(loss_np, t0), rtol=1e-6, atol=1e-8)


def test_tensor_and_mint_moments_take_var_mean():
    """Tensor.var/std and mint.var/std/var_mean: an int ddof below n is one VarMean (values and gradients as
    before); a float ddof or n − ddof <= 0 keep the composition and its NumPy values (inf)."""
    from kiln import mint
    a = np.sin(np.arange(1, 13, dtype=np.float64) * 1.3).reshape(3, 4)
    x = Tensor(a)
    np.testing.assert_allclose(x.var().asnumpy(), a.var(), rtol=1e-12)
    np.testing.assert_allclose(x.std(axis=1, ddof=1, keepdims=True).asnumpy(), a.std(1, ddof=1, keepdims=True),
                               rtol=1e-12)
    np.testing.assert_allclose(mint.var(x, 0).asnumpy(), a.var(0, ddof=1), rtol=1e-12)
    np.testing.assert_allclose(mint.var_mean(x, (0, 1))[0].asnumpy(), a.var(ddof=1), rtol=1e-12)
    np.testing.assert_allclose(x.var(axis=0, ddof=0.5).asnumpy(), a.var(0) * 3 / 2.5, rtol=1e-12)
    assert np.isinf(x.var(axis=0, ddof=3).asnumpy()).all()
    np.testing.assert_allclose(Tensor(np.arange(4)).var().asnumpy(), 1.25)  # integers compute in float32
    fn = kiln.jit(lambda t: t.var(axis=1))
    np.testing.assert_allclose(fn(x).asnumpy(), a.var(1), rtol=1e-12)
    assert re.findall(r"= (\w+)\(", fn.graphs[0].graph_before.to_text()) == ["VarMean"]

    def loss(t):
        return (t.std(axis=0, ddof=1) * Tensor(np.arange(1.0, 5.0))).sum() + mint.var(t, 1).sum()

    def loss_np(t):
        return float((t.std(0, ddof=1) * np.arange(1.0, 5.0)).sum() + t.var(1, ddof=1).sum())

    for g in (kiln.grad(loss), kiln.jit(kiln.grad(loss))):
        np.testing.assert_allclose(g(x).asnumpy(), central_difference(loss_np, a), rtol=1e-6, atol=1e-8)
