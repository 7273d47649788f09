"""Test helpers: NumPy conversion and gradient checks against central finite differences in float64."""
import os

import numpy as np

import kiln
from kiln import _core

# The directory holding the kiln package under test (the installed one under ./run.sh test, python/ in a dev build).
KILN_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(kiln.__file__)))


def subprocess_env(extra_path=()):
    """Environment for a child interpreter that must import the same kiln as this test process.

    Puts `extra_path` and then the tested package's parent first on PYTHONPATH (never this tree's python/, which holds
    no built extension when kiln is installed), and forces UTF-8 standard streams."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([*extra_path, KILN_PARENT])
    env.pop("PYTHONSAFEPATH", None)
    env["PYTHONIOENCODING"] = "utf-8"
    return env


def T(a, dtype=None):
    """A kiln tensor from array-like `a` (NumPy dtype kept unless `dtype` is given)."""
    arr = np.asarray(np.asarray(a, dtype=dtype, order="C"))
    return _core.Tensor._from_numpy(arr)


def N(t):
    """A NumPy copy of a kiln tensor."""
    return np.array(t.asnumpy(), copy=True)


def analytic_grads(fn, inputs):
    """Gradients of sum(fn(*inputs)) w.r.t. each float input, through Kiln's tape. inputs: NumPy arrays."""
    ts = [T(a) for a in inputs]
    with _core.GradScope() as scope:
        leaves = [scope.watch_input(t) for t in ts]
        out = fn(*leaves)
        grads = _core.gradient([out], [None], leaves)
    return [N(g) for g in grads]


def numeric_grads(fn, inputs, eps=1e-6):
    """Central finite differences of sum(fn(*inputs)) in float64."""
    inputs = [np.array(a, dtype=np.float64, copy=True) for a in inputs]
    grads = []
    for i, a in enumerate(inputs):
        g = np.zeros_like(a)
        it = np.nditer(a, flags=["multi_index"])
        for _ in it:
            idx = it.multi_index
            orig = a[idx]
            a[idx] = orig + eps
            plus = N(fn(*[T(x) for x in inputs])).sum()
            a[idx] = orig - eps
            minus = N(fn(*[T(x) for x in inputs])).sum()
            a[idx] = orig
            g[idx] = (plus - minus) / (2 * eps)
        grads.append(g)
    return grads


def central_difference(f, x, eps=1e-6):
    """Central finite differences in float64 of a scalar NumPy function f (array -> float) at x (same shape as x)."""
    x = np.array(x, np.float64, copy=True)
    g = np.zeros_like(x)
    for i in np.ndindex(*x.shape):
        o = x[i]
        x[i] = o + eps
        fp = f(x)
        x[i] = o - eps
        fm = f(x)
        x[i] = o
        g[i] = (fp - fm) / (2 * eps)
    return g


def check_grad(fn, inputs, rtol=1e-5, atol=1e-6):
    """Asserts that Kiln's gradients of sum(fn(*inputs)) match float64 finite differences."""
    inputs = [np.asarray(a, dtype=np.float64) for a in inputs]
    got = analytic_grads(fn, inputs)
    want = numeric_grads(fn, inputs)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape, f"input {i}: grad shape {g.shape} vs {w.shape}"
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=f"gradient of input {i}")


def summation_bound(a, b, transpose_a=False, transpose_b=False):
    """The forward error bound of a float32 matrix product in any summation order (blocked, FMA, split over
    threads): |fl(A·B) − A·B| ≤ γ_K·(|A|·|B|) elementwise, γ_K = K·u / (1 − K·u), u = 2⁻²⁴ (Higham, *Accuracy and
    Stability of Numerical Algorithms*, 2nd ed., §3.5). Returns γ_K·(|A|·|B|) in float64, shaped as the product."""
    a64 = np.abs(np.asarray(a, np.float64))
    b64 = np.abs(np.asarray(b, np.float64))
    a64 = a64.T if transpose_a else a64
    b64 = b64.T if transpose_b else b64
    k = a64.shape[-1]
    u = 2.0 ** -24
    return (k * u / (1 - k * u)) * (a64 @ b64)


def assert_within_summation_bound(got, other, a, b, transpose_a=False, transpose_b=False):
    """Asserts that two float32 results of the same product A·B (e.g. from kernels that oneDNN picked differently
    for a view and its copy, or on two ISAs) differ by at most twice the bound of `summation_bound`: each is within
    one bound of the exact product."""
    bound = 2 * summation_bound(a, b, transpose_a, transpose_b)
    diff = np.abs(np.asarray(got, np.float64) - np.asarray(other, np.float64))
    bad = diff > bound
    assert not bad.any(), (f"{int(bad.sum())} of {bad.size} elements differ by more than the summation bound; "
                           f"worst excess {float((diff - bound).max()):.3g}")
