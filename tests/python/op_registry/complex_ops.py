"""Registry entries of kiln/ops/complex_func.py (real, imag, conj, angle, view_as_real): the registry draws real
arrays, so each entry builds its complex tensor from two of them with ops.Complex (the ViewAsComplex op) and reads
the result back as real values (the ViewAsReal op). The complex arithmetic, matmul, reductions and their gradients
are tested in tests/python/test_complex.py."""
import numpy as np

from kiln import ops

from .base import F32, F64, OpInfo, Sample, arr, register

FL = (F32, F64)


def _pair_samples(dtype, rng):
    yield Sample((arr(rng, (2, 3), dtype), arr(rng, (2, 3), dtype)), desc="2-D")
    yield Sample((arr(rng, (), dtype), arr(rng, (), dtype)), desc="0-d")
    yield Sample((arr(rng, (4,), dtype, away=0.25), arr(rng, (4,), dtype, away=0.25)), desc="1-D, away from 0")


def _z(re, im):
    return ops.Complex()(re, im)


def _entry(name, op, ref, **kw):
    register(OpInfo(name, ("ViewAsComplex", "ViewAsReal"), op, ref, _pair_samples, FL, differentiable=True, **kw))


_entry("real", lambda re, im: ops.real(_z(re, im)), lambda re, im: np.asarray(re))
_entry("imag", lambda re, im: ops.imag(_z(re, im)), lambda re, im: np.asarray(im))
_entry("conj", lambda re, im: ops.view_as_real(ops.conj(_z(re, im))),
       lambda re, im: np.stack([np.asarray(re), -np.asarray(im)], -1))
_entry("view_as_real", lambda re, im: ops.view_as_real(_z(re, im)),
       lambda re, im: np.stack([np.asarray(re), np.asarray(im)], -1))
# angle = atan2(imag, real): a jump of 2 pi across the negative real axis and a singularity at 0 (as atan2's entry).
_entry("angle", lambda re, im: ops.angle(_z(re, im)), lambda re, im: np.arctan2(im, re), kinks={0.0: None})
