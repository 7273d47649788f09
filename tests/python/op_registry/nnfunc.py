"""Registry entries of the NN-functional ops of kiln/ops/nnact_func.py (activations), nnpool_func.py (pooling,
conv3d, unpooling, lrn) and nnloss_func.py (losses, similarity, ctc_loss, embedding, grid_sample, affine_grid):
one row per @defop op. References are direct NumPy/SciPy formulas or loops, never the code under test."""
import math

import numpy as np
import scipy.special

import kiln
from kiln import Tensor, ops

from .base import F16, F32, F64, FLOATS, I32, I64, NC, OpInfo, Sample, arr, np_sigmoid, np_softmax, register, \
    unary_samples
from .state import _check_uniform01


# ---------------------------------------------------------------------------------------------- activations

def _act_samples(dtype, rng):
    yield from unary_samples(-4.0, 4.0)(dtype, rng)


def _act(name, op, ref, cname=("Select",), dtypes=FLOATS, **kw):
    register(OpInfo(name, cname, op, ref, _act_samples, dtypes, differentiable=True, **kw))


_SELU_A, _SELU_S = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
_F16_LOOSE = {F16: (4e-3, 4e-3)}

_act("celu", lambda x: ops.celu(x, 2.0), lambda x: np.where(x > 0, x, 2.0 * np.expm1(np.minimum(x, 0) / 2.0)),
     ("Select", "Exp", "Div"), tol=_F16_LOOSE, notes="alpha = 2; gradient exp(x/α) below 0, 1 at 0 from both sides")
_act("elu", ops.elu, lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0))), ("Select", "Exp"), tol=_F16_LOOSE)
_act("selu", ops.selu, lambda x: _SELU_S * np.where(x > 0, x, _SELU_A * np.expm1(np.minimum(x, 0))),
     ("Select", "Exp", "Mul"), tol=_F16_LOOSE, kinks={0.0: _SELU_S * _SELU_A},
     notes="gradient scale·α at 0 (the x ≤ 0 branch, as PyTorch)")
_act("silu", ops.silu, lambda x: x * np_sigmoid(x), ("Mul", "Sigmoid"), tol=_F16_LOOSE)
_act("mish", ops.mish, lambda x: x * np.tanh(np.logaddexp(0, x)), ("Mul", "Tanh", "Log1p"), tol=_F16_LOOSE)
_act("hardshrink", ops.hardshrink, lambda x: np.where(np.abs(x) <= 0.5, 0.0, x), ("Select", "Abs", "LessEqual"))
_act("softshrink", lambda x: ops.softshrink(x, 0.75), lambda x: np.where(np.abs(x) <= 0.75, 0.0, x - np.sign(x) * 0.75),
     ("Select", "Abs", "Sign", "Sub"))
_act("hardswish", ops.hardswish, lambda x: x * np.clip(x + 3, 0, 6) / 6, ("Mul", "Maximum", "Minimum", "Div"))
register(OpInfo("hardtanh", ("Select", "LessEqual", "GreaterEqual"), lambda x: ops.hardtanh(x, -0.5, 2.0),
                lambda x: np.minimum(np.maximum(x, -0.5 if x.dtype.kind == "f" else 0), 2.0).astype(x.dtype),
                _act_samples, FLOATS + (I32,), differentiable=True, ref_upcast=False,
                notes="int input keeps its dtype (bounds truncated: −0.5 → 0)"))
_act("leaky_relu", ops.leaky_relu, lambda x: np.where(x > 0, x, 0.2 * x), ("Select", "Mul", "Greater"),
     kinks={0.0: 0.2}, notes="gradient alpha at 0 (as PyTorch)")
_act("softsign", ops.softsign, lambda x: x / (1 + np.abs(x)), ("Div", "Abs", "Add"))
_act("tanhshrink", ops.tanhshrink, lambda x: x - np.tanh(x), ("Sub", "Tanh"), dtypes=FLOATS + (I32,),
     notes="int input → Float32 (R-f32)")
_act("threshold", lambda x: ops.threshold(x, 0.25, 9.0), lambda x: np.where(x <= 0.25, 9.0, x),
     ("Select", "LessEqual"))
_act("fast_gelu", ops.fast_gelu, lambda x: x * np_sigmoid(1.702 * x), ("Mul", "Sigmoid"), tol=_F16_LOOSE)


def _axis_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype, -3, 3)  # noqa: E731
    yield Sample((a((2, 6)),))
    yield Sample((a((4, 3, 2)),), dict(axis=0), desc="axis 0")
    yield Sample((NC(a((4, 2)), "T"),), dict(axis=1), desc="transposed view")
    yield Sample((a((0, 4)),), desc="empty")


def _np_halves(x, axis):
    return np.split(x, 2, axis=axis)


def _np_glu(x, axis=-1):
    a, b = _np_halves(x, axis)
    return a * np_sigmoid(b)


def _np_swiglu(x, dim=-1):
    a, b = _np_halves(x, dim)
    return a * np_sigmoid(a) * b


register(OpInfo("glu", ("Mul", "Sigmoid", "StridedSlice"), ops.glu, _np_glu, _axis_samples, FLOATS, differentiable=True,
                tol=_F16_LOOSE))
register(OpInfo("swiglu", ("Mul", "Sigmoid", "StridedSlice"),
                lambda x, axis=-1: ops.swiglu(x, axis), lambda x, axis=-1: _np_swiglu(x, axis),
                _axis_samples, FLOATS, differentiable=True, tol=_F16_LOOSE))
register(OpInfo("softmin", ("Softmax", "Neg"), ops.softmin, lambda x, axis=-1: np_softmax(-x, axis), _axis_samples,
                FLOATS, differentiable=True, special_ref=lambda x, axis=-1: np_softmax(-x, axis)))


def _prelu_samples(dtype, rng):
    a = lambda s, lo=-2, hi=2: arr(rng, s, dtype, lo, hi)  # noqa: E731
    yield Sample((a((2, 3, 4)), a((3,), 0.05, 0.5)), desc="per channel")
    yield Sample((a((2, 3)), a((1,), 0.05, 0.5)), desc="shared slope")
    yield Sample((a((5,)), a((5,), 0.05, 0.5)), desc="1-D: one slope per element")
    yield Sample((NC(a((2, 3)), "T"), a((3,), 0.05, 0.5)), desc="transposed view")


def _np_prelu(x, w):
    if x.ndim >= 2:
        w = w.reshape((1, -1) + (1,) * (x.ndim - 2))
    return np.where(x >= 0, x, w * x)


register(OpInfo("prelu", ("Select", "GreaterEqual", "Mul"), ops.prelu, _np_prelu, _prelu_samples, FLOATS,
                differentiable=True, kinks={0.0: 1.0}, notes="gradient 1 at x = 0 (the x ≥ 0 branch)"))


# Random activations: distribution checks (the gradient is checked in tests/python/test_nn_functional_ext.py).
register(OpInfo("rrelu", ("UniformReal", "Select", "Mul"), kind="random", dtypes=(F32, F64),
                draw=lambda shape, dtype, seed=None: ops.rrelu(Tensor(-np.ones(shape, dtype)), 0.125, 0.375),
                check=lambda x, d: _check_uniform01((-x.astype(np.float64) - 0.125) / 0.25, d),
                notes="rrelu(−1) = −a with a ~ Uniform[lower, upper)"))
register(OpInfo("gumbel_softmax", ("UniformReal", "Log", "Softmax"), kind="random", dtypes=(F32,),
                draw=lambda shape, dtype, seed=None: ops.gumbel_softmax(Tensor(np.zeros(tuple(shape) + (2,), dtype)))
                [..., 0],
                check=_check_uniform01,
                notes="two equal logits: y₀ = σ(g₀ − g₁) with g₀ − g₁ ~ Logistic(0, 1), so y₀ ~ Uniform(0, 1)"))
