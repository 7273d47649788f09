"""MindSpore 2.10's complex-number functions: ops.real, imag, conj, angle, view_as_real and the Complex,
ComplexAbs, Real, Imag, Conj, Angle primitives (docs/decisions/complex-dtypes.md).

A Complex64/Complex128 tensor's parts are reached through one C++ op, ViewAsReal (shape S -> S + [2], Float32/64;
its inverse ViewAsComplex): every function here is real ops on those pairs, so both modes and the gradients follow
from the real ops. Gradients follow MindSpore's convention: for a real loss L and z = x + iy, dL/dz is returned as
dL/dx + i dL/dy (checked with MindSpore 2.10: grad of ops.angle(z).sum() is (-y + ix) / |z|^2)."""
import numpy as np

from .._loader import _core
from ..common import dtype as mstype
from .function import _tensor_arg
from ._opdef import defop
from .primitives import Primitive

__all__ = ["real", "imag", "conj", "angle", "view_as_real", "Complex", "ComplexAbs"]


def _pairs(x):
    return _core.view_as_real(x)


def _part_dtype(dtype):
    return mstype.float64 if dtype == mstype.complex128 else mstype.float32


@defop(primitive="Real", tensor="real")
def real(input):
    """MindSpore's ops.real(input): the real part; Complex64 -> Float32, Complex128 -> Float64, same shape; a real
    Tensor is returned as is. Raises TypeError for a non-Tensor."""
    x = _tensor_arg(input, "real")
    if not mstype.is_complex(x.dtype):
        return x
    return _pairs(x)[..., 0]


@defop(primitive="Imag", tensor="imag")
def imag(input):
    """MindSpore's ops.imag(input): the imaginary part; Complex64 -> Float32, Complex128 -> Float64, same shape; a
    real Tensor gives zeros of its dtype. Raises TypeError for a non-Tensor."""
    x = _tensor_arg(input, "imag")
    if not mstype.is_complex(x.dtype):
        return _core.zeros_like(x)
    return _pairs(x)[..., 1]


@defop(primitive="Conj", tensor="conj")
def conj(input):
    """MindSpore's ops.conj(input): the complex conjugate x - iy (same dtype and shape); a real Tensor is returned
    as is. Raises TypeError for a non-Tensor."""
    x = _tensor_arg(input, "conj")
    if not mstype.is_complex(x.dtype):
        return x
    sign = _core.Tensor._from_numpy(np.array([1.0, -1.0], mstype.dtype_to_nptype(_part_dtype(x.dtype))))
    return _core.view_as_complex(_core.mul(_pairs(x), sign))


@defop(primitive="Angle", tensor="angle")
def angle(input):
    """MindSpore's ops.angle(input): the argument atan2(imag, real) in (-pi, pi]; Complex64 -> Float32,
    Complex128 -> Float64. Raises TypeError for a non-Tensor or a real Tensor (as MindSpore 2.10's CPU kernel)."""
    x = _tensor_arg(input, "angle")
    if not mstype.is_complex(x.dtype):
        raise TypeError(f"For 'Angle', the input must be a Complex64 or Complex128 Tensor, but got {x.dtype}.")
    p = _pairs(x)
    return _core.atan2(p[..., 1], p[..., 0])


@defop(tensor="view_as_real")
def view_as_real(input):
    """MindSpore's ops.view_as_real(input): a Complex64/Complex128 Tensor of shape S as Float32/Float64 of shape
    S + [2] holding (real, imag) (a copy in Kiln). Raises TypeError for a non-Tensor or a real Tensor."""
    x = _tensor_arg(input, "view_as_real")
    if not mstype.is_complex(x.dtype):
        raise TypeError("For view_as_real, the dtype of input Tensor must be complex.")
    return _core.view_as_real(x)


def _complex_abs(x):
    """|z| = hypot(real, imag) of a complex Tensor, as its part dtype (the Hypot kernel: no overflow of real^2 for
    |z| near the dtype's largest value, no underflow for tiny |z|; NumPy's abs; gradient z/|z|, 0 at z = 0)."""
    p = _pairs(x)
    return _core.hypot(p[..., 0], p[..., 1])


class Complex(Primitive):
    """MindSpore's ops.Complex()(real, imag): the complex Tensor real + i*imag. Both Float32 (-> Complex64) or both
    Float64 (-> Complex128), of the same shape. Raises TypeError for other or different dtypes, ValueError for
    different shapes."""

    def __call__(self, real, imag):
        re, im = _tensor_arg(real, "Complex", "real"), _tensor_arg(imag, "Complex", "imag")
        for name, t in (("real", re), ("imag", im)):
            if t.dtype not in (mstype.float32, mstype.float64):
                raise TypeError(f"For primitive[Complex], the input argument[{name}] must be a type of "
                                f"{{Tensor[Float32], Tensor[Float64]}}, but got Tensor[{t.dtype}].")
        if re.dtype != im.dtype:
            raise TypeError(f"For primitive[Complex], the input type must be same, but got {re.dtype} and "
                            f"{im.dtype}.")
        if tuple(re.shape) != tuple(im.shape):
            raise ValueError(f"For primitive[Complex], real and imag must have the same shape, but got "
                             f"{list(re.shape)} and {list(im.shape)}.")
        return _core.view_as_complex(_core.stack([re, im], -1))


class ComplexAbs(Primitive):
    """MindSpore's ops.ComplexAbs()(x): |x| = sqrt(real^2 + imag^2) of a Complex64/Complex128 Tensor, as Float32 /
    Float64 (ops.abs of a complex Tensor is MindSpore's complex |x| + 0j instead). Raises TypeError for a real
    Tensor."""

    def __call__(self, x):
        x = _tensor_arg(x, "ComplexAbs", "x")
        if not mstype.is_complex(x.dtype):
            raise TypeError(f"For primitive[ComplexAbs], the input must be a Complex64 or Complex128 Tensor, but "
                            f"got {x.dtype}.")
        return _complex_abs(x)
