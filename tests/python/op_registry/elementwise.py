"""Registry entries: elementwise binary and unary ops, softmax and activations."""

import numpy as np
import scipy.special

import kiln
from kiln import Tensor, _core, ops


from .base import (
    ALL, BOOL, F16, F32, F64, FLOATS, I32, I64, NC, NUMERIC, OpInfo, Sample, UINTS, arr, binary_samples,
    is_wide_uint, np_gelu, np_log_softmax, np_log_softmax_plain, np_sigmoid, np_softmax, np_value, register,
    unary_samples)


# ---------------------------------------------------------------------------------------------- elementwise binary


_NONZERO = (-2.0, 2.0, 0.5)  # (low, high, away): |x| in [0.5, 2] with random sign; ints in [-2, 2] without 0
_BOOL_DIFF = ("bool op bool stays Bool (NumPy: int8 for floor_divide/mod/power, TypeError for subtract); MindSpore "
              "rejects arithmetic on Bool")

register(OpInfo("add", ("Add",), ops.add, np.add, binary_samples(), ALL + UINTS, differentiable=True, binary=True))
register(OpInfo("sub", ("Sub",), ops.sub, np.subtract, binary_samples(), NUMERIC + UINTS, differentiable=True,
                binary=True,
                dtype_exceptions={"bool,bool": _BOOL_DIFF}))
register(OpInfo("mul", ("Mul",), ops.mul, np.multiply, binary_samples(), ALL + UINTS, differentiable=True, binary=True))
register(OpInfo("div", ("Div",), ops.div, np.true_divide, binary_samples(rhs=_NONZERO, scalars=(2.5, 3)),
                NUMERIC, differentiable=True, binary=True,
                notes="int / int is Float32 (MindSpore; NumPy float64): rule R-f32"))
register(OpInfo("floor_div", ("FloorDiv",), ops.floor_div, np.floor_divide,
                binary_samples(lhs=(-5.0, 5.0, 0.0), rhs=(-3.0, 3.0, 1.0), scalars=(2.5, 3)), NUMERIC, binary=True,
                dtype_exceptions={"bool,bool": _BOOL_DIFF}))
register(OpInfo("floor_mod", ("FloorMod",), ops.floor_mod, np.mod,
                binary_samples(lhs=(-5.0, 5.0, 0.0), rhs=(-3.0, 3.0, 1.0), scalars=(2.5, 3)), NUMERIC,
                differentiable=True, binary=True, dtype_exceptions={"bool,bool": _BOOL_DIFF},
                tol={F16: (2e-3, 4e-3)}, notes="sign follows the divisor (Python/NumPy floor modulo)",
                kinks={0.0: 1.0, 1000.0: 1.0, -1000.0: 1.0}))  # x mod y jumps where x is a multiple of y (0; ±1000
#                                                              for y = 2.5); d/dx is 1 there too


def _pow_samples(dtype, rng):
    if dtype.kind == "f":
        yield from binary_samples(lhs=(0.5, 2.0, 0.0), rhs=(-2.0, 2.0, 0.0), scalars=(2.0, 0.5))(dtype, rng)
    else:
        yield Sample((arr(rng, (2, 3), dtype, -3, 3), arr(rng, (2, 3), dtype, 0, 3)))
        yield Sample((arr(rng, (3, 1), dtype, -3, 3), arr(rng, (1, 4), dtype, 0, 3)), desc="broadcast")
        yield Sample((arr(rng, (2, 3), dtype, -3, 3), 2), desc="python int exponent")
        yield Sample((2, arr(rng, (2, 3), dtype, 0, 4)), desc="python int base")
        yield Sample((arr(rng, (2, 3), dtype, -3, 3), 0.5), desc="int ** python float → Float32 (R-f32)",
                     graph=True)


def _np_pow_c99(x, y):
    """np.power with the exponent as an array: NumPy (and PyTorch) take sqrt for a scalar exponent 0.5, giving
    pow(−inf, 0.5) = NaN; C99's pow, which Kiln uses, gives +inf (Annex F: pow(−∞, y) = +∞ for y > 0 not odd)."""
    dt = np.result_type(x, y)  # (a Python-scalar exponent stays weak, NEP 50)
    x, ya = np.asarray(x), np.asarray(y)
    return np.power(x, np.array(np.broadcast_to(ya, np.broadcast_shapes(x.shape, ya.shape)), dtype=dt))


register(OpInfo("pow", ("Pow",), ops.pow, np.power, _pow_samples, NUMERIC, differentiable=True, binary=True,
                special_ref=_np_pow_c99,
                dtype_exceptions={"bool,bool": _BOOL_DIFF}, tol={F16: (3e-3, 3e-3)},
                kinks={0.0: None}))  # base 0: x^y is undefined left of 0 (the samples' base domain is x > 0)
register(OpInfo("maximum", ("Maximum",), ops.maximum, np.maximum, binary_samples(), ALL + UINTS, differentiable=True,
                binary=True))
register(OpInfo("minimum", ("Minimum",), ops.minimum, np.minimum, binary_samples(), ALL + UINTS, differentiable=True,
                binary=True))


def _cmp_samples(dtype, rng):
    """Small integers so that ties (equality) occur; also weak scalars and NaN-free floats."""
    vals = [0, 1] if dtype == BOOL else [0, 1, 2, 3] if dtype.kind == "u" else [-1, 0, 1, 2]
    a = lambda s: rng.choice(vals, s).astype(dtype)
    yield Sample((a((3, 4)), a((3, 4))))
    yield Sample((a((3, 1)), a((1, 4))), desc="broadcast both")
    yield Sample((a(()), a((2, 3))), desc="0-d lhs")
    yield Sample((a((0, 2)), a((2,))), desc="empty")
    yield Sample((NC(a((3, 4)), "T"), a((4,))), desc="transposed view")
    yield Sample((a((2, 3)), True if dtype == BOOL or is_wide_uint(dtype) else 1), desc="python scalar rhs")
    if dtype.kind in "iu" and not is_wide_uint(dtype):
        yield Sample((a((2, 3)), 0.5), desc="int tensor vs python float")
    if dtype.kind == "f":
        yield Sample((1.0, a((2, 3))), desc="python scalar lhs")


for _name, _op, _ref, _cname in [("equal", ops.equal, np.equal, "Equal"),
                                 ("not_equal", ops.not_equal, np.not_equal, "NotEqual"),
                                 ("greater", ops.greater, np.greater, "Greater"),
                                 ("greater_equal", ops.greater_equal, np.greater_equal, "GreaterEqual"),
                                 ("less", ops.less, np.less, "Less"),
                                 ("less_equal", ops.less_equal, np.less_equal, "LessEqual")]:
    register(OpInfo(_name, (_cname,), _op, _ref, _cmp_samples, ALL + UINTS, binary=True))

for _name, _op, _ref, _cname in [("logical_and", ops.logical_and, np.logical_and, "LogicalAnd"),
                                 ("logical_or", ops.logical_or, np.logical_or, "LogicalOr"),
                                 ("logical_xor", ops.logical_xor, np.logical_xor, "LogicalXor")]:
    register(OpInfo(_name, (_cname,), _op, _ref, _cmp_samples, (BOOL, I32, F32), binary=True,
                    notes="non-bool inputs are truth-tested (nonzero → True), as NumPy"))


# Tensor operators (bound in C++) on a few samples: same ops, incl. reflected operators with a scalar on the left.
def _operator_samples(kind):
    def gen(dtype, rng):
        if kind == "div":
            b = lambda s: arr(rng, s, dtype, *_NONZERO)
        else:
            b = lambda s: arr(rng, s, dtype, 0.5 if kind == "pow" else -2.0, 2.0)
        a = lambda s: arr(rng, s, dtype, 0.5 if kind == "pow" else -2.0, 2.0)
        yield Sample((a((2, 3)), b((3,))), desc="broadcast")
        yield Sample((a((2, 3)), 2.0), desc="python scalar rhs")
        yield Sample((3.0 if kind != "pow" else 1.5, b((2, 3))), desc="reflected (python scalar lhs)")
    return gen


for _name, _fn, _ref, _cname in [("operator.add", lambda x, y: x + y, np.add, "Add"),
                                 ("operator.sub", lambda x, y: x - y, np.subtract, "Sub"),
                                 ("operator.mul", lambda x, y: x * y, np.multiply, "Mul"),
                                 ("operator.truediv", lambda x, y: x / y, np.true_divide, "Div"),
                                 ("operator.pow", lambda x, y: x ** y, np.power, "Pow")]:
    register(OpInfo(_name, (_cname,), _fn, _ref, _operator_samples(_name.split(".")[1]), (F32, F64),
                    differentiable=True, kinks={0.0: None} if _cname == "Pow" else {},
                    special_ref=_np_pow_c99 if _cname == "Pow" else None))
register(OpInfo("operator.floordiv_mod", ("FloorDiv", "FloorMod"), lambda x, y: (x // y, x % y),
                lambda x, y: (np.floor_divide(x, y), np.mod(x, y)), _operator_samples("div"), (F32, I32)))
register(OpInfo("operator.compare", ("Less", "GreaterEqual", "Equal", "NotEqual"),
                lambda x, y: (x < y, x >= y, x == y, x != y),
                lambda x, y: (x < y, x >= y, x == y, x != y), _cmp_samples, (F32, I32)))
# Tensor's &, |, ^ are MindSpore's BitwiseAnd/Or/Xor: logical on Bool, bitwise on integers (NumPy's operators too).
register(OpInfo("operator.bitwise", ("BitwiseAnd", "BitwiseOr", "BitwiseXor"),
                lambda x, y: (x & y, x | y, x ^ y), lambda x, y: (x & y, x | y, x ^ y),
                lambda dtype, rng: (s for s in _cmp_samples(dtype, rng) if "python float" not in s.desc),
                (BOOL, I32)))  # (a float operand is MindSpore's TypeError: tests/python/test_bitwise_ops.py)
register(OpInfo("operator.neg", ("Neg",), lambda x: -x, np.negative, unary_samples(), (F32, I32),
                differentiable=True))


def _select_samples(dtype, rng):
    c = lambda s: rng.random(s) < 0.5
    a = lambda s: arr(rng, s, dtype)
    yield Sample((c((2, 3)), a((2, 3)), a((2, 3))))
    yield Sample((c((3, 1)), a((1, 4)), a((3, 4))), desc="broadcast all three")
    yield Sample((c(()), a((2, 3)), a((3,))), desc="0-d condition")
    yield Sample((c((0, 3)), a((3,)), a((1, 3))), desc="empty")
    yield Sample((NC(c((3, 4)), "T"), NC(a((3, 4)), "step"), a((4,))), desc="views")
    yield Sample((c((2, 3)), a((2, 3)), True if is_wide_uint(dtype) else 1 if dtype.kind != "f" else 0.5),
                 desc="python scalar y")


register(OpInfo("where", ("Select",), ops.where, np.where, _select_samples, ALL + UINTS, differentiable=True,
                notes="condition must be Bool (TypeError otherwise); gradients go to x and y"))


def _clip_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype, -3, 3)
    yield Sample((a((3, 4)),), dict(min=-1, max=1))
    yield Sample((a((2, 3)),), dict(min=0, max=None), desc="lower bound only")
    yield Sample((NC(a((3, 4)), "T"),), dict(min=None, max=1), desc="upper only, view")
    yield Sample((a(()),), dict(min=-1, max=1), desc="0-d")


register(OpInfo("clamp", ("Maximum", "Minimum"), ops.clamp,
                lambda x, min=None, max=None: np.clip(x, min, max),
                _clip_samples, NUMERIC, differentiable=True,
                kinks={0.0: 1.0}, notes="gradient 1 at a bound (x == min or max), 0 outside and at NaN, as "
                                        "PyTorch's clamp and MindSpore's ops.clamp"))


# ---------------------------------------------------------------------------------------------- elementwise unary

def _same_dtype(sample):
    """out_dtype for ops whose result has the input's dtype (where the NumPy/SciPy reference widens)."""
    return np_value(sample.args[0]).dtype


def _unary(name, cname, op, ref, dtypes=FLOATS, low=-2.0, high=2.0, away=0.0, diff=True, **kw):
    return register(OpInfo(name, (cname,), op, ref, unary_samples(low, high, away), dtypes, differentiable=diff, **kw))


_unary("neg", "Neg", ops.neg, np.negative, NUMERIC)
_unary("exp", "Exp", ops.exp, np.exp, FLOATS + (I32,), notes="int input → Float32 (R-f32)")
_unary("log", "Log", ops.log, np.log, FLOATS + (I32,), low=0.5, high=3.0)
_unary("sqrt", "Sqrt", ops.sqrt, np.sqrt, FLOATS + (I32,), low=0.5, high=3.0,
       kinks={0.0: np.inf})  # d√x/dx → +∞ at 0 (left of 0 undefined); Kiln gives +inf·dy, as PyTorch
_unary("rsqrt", "Rsqrt", ops.rsqrt, lambda x: 1 / np.sqrt(x), FLOATS, low=0.5, high=3.0)
_unary("abs", "Abs", ops.abs, np.abs, NUMERIC, high=2.0, away=0.25, kinks={0.0: 0.0})  # sign(0) = 0
_unary("sign", "Sign", ops.sign, np.sign, NUMERIC, diff=False)
_unary("square", "Square", ops.square, np.square, NUMERIC)
_unary("erf", "Erf", ops.erf, scipy.special.erf, FLOATS, out_dtype=_same_dtype)
_unary("relu", "ReLU", ops.relu, lambda x: np.maximum(x, np.zeros((), x.dtype)), NUMERIC, away=0.1,
       kinks={0.0: 0.0}, notes="relu(nan) = nan (np.maximum, torch.relu); gradient 0 at 0 (MindSpore)")
_unary("sigmoid", "Sigmoid", ops.sigmoid, np_sigmoid, FLOATS)
_unary("tanh", "Tanh", ops.tanh, np.tanh, FLOATS)
_unary("gelu", "GeLU", ops.gelu, np_gelu, FLOATS, out_dtype=_same_dtype)
register(OpInfo("gelu_tanh", ("GeLU", "GeLUGrad"), lambda x: ops.gelu(x, approximate="tanh"),
                lambda x: np_gelu(x, "tanh"), unary_samples(), FLOATS, differentiable=True, out_dtype=_same_dtype,
                notes="the gradient is the fused GeLUGrad kernel (both forms) unless the backward pass is itself "
                      "differentiated (then Kiln ops)"))
if hasattr(ops, "sin"):  # (added with the compiled learning-rate schedules)
    _unary("sin", "Sin", ops.sin, np.sin, FLOATS + (I32,), low=-4.0, high=4.0)
    _unary("cos", "Cos", ops.cos, np.cos, FLOATS + (I32,), low=-4.0, high=4.0)
    _unary("floor", "Floor", ops.floor, np.floor, NUMERIC, low=-3.0, high=3.0, diff=False, out_dtype=_same_dtype,
           notes="integer inputs are returned unchanged in their dtype (NumPy: float64)")
    _unary("ceil", "Ceil", ops.ceil, np.ceil, NUMERIC, low=-3.0, high=3.0, diff=False, out_dtype=_same_dtype)
_unary("logical_not", "LogicalNot", ops.logical_not, np.logical_not, (BOOL, I32, F32), diff=False)


def _cast_samples(dtype, rng):
    # Values with fractions and negatives (float → int truncates toward zero), zeros (→ bool False).
    def x(s):
        return np.round(arr(rng, s, F64, -4, 4), 1).astype(dtype) if dtype.kind == "f" else arr(rng, s, dtype, -4, 4)
    for target in (F64, F32, F16, I32, I64, BOOL) + (UINTS if dtype.kind in "biu" else ()):
        if target == dtype:  # (float → unsigned only for non-negative values: test_unsigned_dtypes.py)
            continue
        small = target.kind == "f" and dtype.kind == "f" and dtype == F64
        yield Sample((x((2, 3)),), dict(dtype=target), desc=f"to {target}", grad=small and target == F32)
    yield Sample((NC(x((3, 4)), "T"),), dict(dtype=F64 if dtype != F64 else F32), desc="view", grad=False)
    yield Sample((x(()),), dict(dtype=I32), desc="0-d to int", grad=False)
    yield Sample((x((0, 2)),), dict(dtype=F32 if dtype != F32 else F64), desc="empty", grad=False)


def _np_cast(x, dtype):
    return x.astype(dtype)


register(OpInfo("cast", ("Cast",), lambda x, dtype: ops.cast(x, dtype), _np_cast, _cast_samples, ALL + UINTS,
                out_dtype=lambda s: np.dtype(s.kwargs["dtype"]), ref_upcast=False, differentiable=True,
                grad_eps=1e-2, grad_tol=(1e-5, 1e-5),
                special_ok=lambda s: np.dtype(s.kwargs["dtype"]).kind == "f",
                notes="special values only for float targets (float NaN/inf → int is undefined: NumPy warns); "
                      "float → int truncates toward zero; gradient (float → float) is cast back; FD uses a large "
                      "step since Cast is linear and the float32 result is rounded"))
register(OpInfo("identity", ("Identity",), _core.identity, lambda x: x.copy(), unary_samples(), ALL + UINTS,
                differentiable=True, notes="the Python API reaches it through Tensor(tensor) and Parameter.value()"))
register(OpInfo("tensor_copy_ctor", (), lambda x: Tensor(x), lambda x: x.copy(), unary_samples(),
                (F32, I64)))
register(OpInfo("stop_gradient", ("StopGradient",), ops.stop_gradient, lambda x: x.copy(), unary_samples(), ALL + UINTS,
                notes="not differentiable by design; test_stop_gradient_blocks_gradient checks the zero gradient in "
                      "both modes"))
register(OpInfo("depend", ("Depend",), lambda x, y: ops.depend(x, ops.mul(y, 2.0)), lambda x, y: x.copy(),
                lambda dtype, rng: iter([Sample((arr(rng, (2, 3), dtype), arr(rng, (3,), dtype))),
                                         Sample((NC(arr(rng, (3, 2), dtype), "T"), arr(rng, (), dtype)),
                                                desc="view")]),
                FLOATS, differentiable=True, notes="the gradient flows to `value` only (FD of `expr` is zero)"))


# ---------------------------------------------------------------------------------------------- softmax

def _softmax_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype, -3, 3)
    yield Sample((a((2, 5)),), dict(axis=-1))
    yield Sample((a((3, 4, 2)),), dict(axis=1), desc="middle axis")
    yield Sample((a((3, 4)),), dict(axis=0))
    yield Sample((a((6,)),), dict(axis=0), desc="1-D")
    yield Sample((a((1, 4)),), dict(axis=-2), desc="size-1 axis, negative")
    yield Sample((a((0, 4)),), dict(axis=-1), desc="empty")
    yield Sample((NC(a((4, 3)), "T"),), dict(axis=-1), desc="transposed view")


register(OpInfo("softmax", ("Softmax",), ops.softmax, np_softmax, _softmax_samples, FLOATS, differentiable=True))
register(OpInfo("log_softmax", ("LogSoftmax",), ops.log_softmax, np_log_softmax, _softmax_samples, FLOATS,
                differentiable=True, special_ref=lambda x, axis=-1: np_log_softmax_plain(x, axis),
                notes="special values: (x − max) − log Σ exp(x − max) as PyTorch (a +inf entry gives a NaN row); "
                      "SciPy replaces a non-finite max by 0 and gives −inf for the other entries"))


# ---------------------------------------------------------------------------------------------- activations
# kiln.ops' stable activation functions and kiln.nn's activation cells that compose several ops (the one-op cells —
# ReLU, Sigmoid, Tanh, GELU, Softmax, LogSoftmax — are the op entries above). References are the textbook formulas
# in float64 (np.logaddexp for softplus). x·g(x) forms (SiLU, Mish, FastGelu, HSwish, GELU) give NaN at x = −inf
# (−inf·0), in NumPy, PyTorch and Kiln alike.

def _np_leaky_relu(x):
    return np.where(x >= 0, x, 0.2 * x)


def _np_elu(x):
    return np.where(x > 0, x, np.expm1(np.minimum(x, 0)))


def _np_hsigmoid(x):
    return np.clip(x + 3, 0, 6) / 6


def _cell(cls, *args):
    cell = cls(*args)
    return lambda x: cell(x)


def _act_samples(dtype, rng):
    """unary_samples over [−4, 4] (past the corners of relu6/hsigmoid/hswish) without exact corners."""
    yield from unary_samples(-4.0, 4.0)(dtype, rng)


_unary("log1p", "Log1p", ops.log1p, np.log1p, FLOATS + (I32,), low=-0.5, high=2.0,
       notes="accurate for |x| ≪ 1 (C's log1p); int input → Float32 (R-f32)")
register(OpInfo("softplus", ("Softplus",), ops.softplus,
                lambda x: np.logaddexp(0, x), _act_samples, FLOATS, differentiable=True,
                notes="max(x, 0) + log1p(exp(−|x|)) [Mächler 2012]: no overflow at ±1000; gradient σ(x) (0.5 at 0)"))
register(OpInfo("softplus_beta", ("Softplus", "Select", "Greater", "Mul", "Div"),
                lambda x: ops.softplus(x, beta=2, threshold=5),
                lambda x: np.where(2 * x > 5, x, np.logaddexp(0, 2 * x) / 2), _act_samples, (F32, F64),
                differentiable=True, notes="log(1 + exp(βx))/β, and x where βx > threshold"))
register(OpInfo("logsigmoid", ("LogSigmoid",), ops.logsigmoid,
                lambda x: -np.logaddexp(0, -x), _act_samples, FLOATS, differentiable=True,
                notes="min(x, 0) − log1p(exp(−|x|)): −1000 → −1000 (gradient 1), 1000 → 0 (gradient 0), "
                      "gradient 0.5 at 0"))
register(OpInfo("nn.LogSigmoid", ("LogSigmoid",), _cell(kiln.nn.LogSigmoid),
                lambda x: -np.logaddexp(0, -x), _act_samples, FLOATS, differentiable=True))
register(OpInfo("nn.Softplus", ("Softplus",), _cell(kiln.nn.Softplus),
                lambda x: np.logaddexp(0, x), _act_samples, FLOATS, differentiable=True))
register(OpInfo("nn.Mish", ("Mish",), _cell(kiln.nn.Mish),
                lambda x: x * np.tanh(np.logaddexp(0, x)), _act_samples, FLOATS, differentiable=True,
                tol={F16: (4e-3, 4e-3)}))
register(OpInfo("nn.ReLU6", ("ReLU", "Select", "Greater"), _cell(kiln.nn.ReLU6), lambda x: np.clip(x, 0, 6),
                _act_samples, FLOATS, differentiable=True, kinks={0.0: 0.0},
                notes="gradient dy·[0 < x ≤ 6] (MindSpore's ReLU6Grad: 0 at 0)"))
register(OpInfo("nn.HSigmoid", ("HSigmoid",), _cell(kiln.nn.HSigmoid),
                _np_hsigmoid, _act_samples, FLOATS, differentiable=True,
                notes="gradient dy/6·[−3 < x < 3] (MindSpore's HSigmoidGrad, PyTorch)"))
register(OpInfo("nn.HSwish", ("HSwish",), _cell(kiln.nn.HSwish),
                lambda x: x * _np_hsigmoid(x), _act_samples, FLOATS, differentiable=True,
                special_ref=lambda x: np.where(x <= -3, 0.0, x * _np_hsigmoid(x)),
                notes="0 at −inf (MindSpore 2.10's value)"))
register(OpInfo("nn.SiLU", ("Mul", "Sigmoid"), _cell(kiln.nn.SiLU), lambda x: x * np_sigmoid(x), _act_samples,
                FLOATS, differentiable=True))
register(OpInfo("nn.FastGelu", ("Mul", "Sigmoid"), _cell(kiln.nn.FastGelu), lambda x: x * np_sigmoid(1.702 * x),
                _act_samples, FLOATS, differentiable=True, tol={F16: (4e-3, 4e-3)}))
register(OpInfo("nn.ELU", ("Select", "Expm1", "Greater"), _cell(kiln.nn.ELU), _np_elu, _act_samples, FLOATS,
                differentiable=True, tol={F16: (3e-3, 3e-3)}, notes="alpha = 1: the derivative is 1 at 0 from both sides"))
register(OpInfo("nn.LeakyReLU", ("Mul", "Maximum"), _cell(kiln.nn.LeakyReLU, 0.2), _np_leaky_relu,
                _act_samples, FLOATS, differentiable=True, kinks={0.0: 0.6},
                notes="gradient (1 + alpha)/2 at 0 (max(x, αx)'s tie, as MindSpore 2.10)"))
register(OpInfo("nn.Softsign", ("Div", "Abs", "Add"), _cell(kiln.nn.Softsign), lambda x: x / (1 + np.abs(x)),
                _act_samples, FLOATS, differentiable=True,
                notes="±inf → inf/inf = NaN (the formula x / (1 + |x|), as PyTorch)"))
