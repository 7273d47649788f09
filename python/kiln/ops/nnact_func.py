"""Activation functions of MindSpore 2.10's `ops` (celu, elu, selu, silu, mish, glu, swiglu, hardshrink, softshrink
(soft_shrink), hardswish, hardtanh, leaky_relu, prelu, rrelu, softmin, softsign, tanhshrink, threshold, fast_gelu,
gumbel_softmax) and their Primitive classes / Tensor methods, each ONE composition of Kiln's kernels (gradients from
the building blocks; Graph mode traces them). kiln.nn's activation cells call these functions.

Rules shared by all of them (pinned against MindSpore 2.10 on CPU):
- Float ops (celu, elu, selu, silu, mish, glu, swiglu, hardshrink, softshrink, hardswish, prelu, rrelu, softmin,
  softsign, fast_gelu, gumbel_softmax) raise TypeError for a non-float Tensor, naming the op and the dtype. hardtanh,
  leaky_relu and threshold also take int Tensors (the result keeps the dtype, as MindSpore); tanhshrink of an int
  Tensor is float32.
- NaN in gives NaN out (the comparisons are written so NaN takes the x branch), except threshold(NaN) = NaN as
  PyTorch (x <= thr is false for NaN).
- Kinks: the gradient at a kink is MindSpore 2.10's (CPU), documented per op and checked by the registry: prelu
  takes the slope at 0, rrelu 0, selu scale (the x ≥ 0 branch), leaky_relu (1 + α)/2 and hardtanh 1/2 at a bound
  (MindSpore builds those two from Maximum/Minimum, whose gradient shares a tie equally); elsewhere a
  `select(x > 0, a(x), b(x))` takes b's gradient at 0.
- The negative branches of celu/elu/selu use expm1 (Kahan's accurate form in trig_func), and exp of min(x, 0), so
  the unused branch never overflows.
"""
import numbers

from .._loader import _core
from .._args import _got, int_arg
from ..common import dtype as mstype
from ..common.tensor import Tensor
from ._opdef import defop
from .trig_func import _expm1

__all__ = ["celu", "elu", "selu", "silu", "mish", "glu", "swiglu", "hardshrink", "softshrink", "hardswish",
           "hardtanh", "leaky_relu", "prelu", "rrelu", "softmin", "softsign", "tanhshrink", "threshold",
           "fast_gelu", "gumbel_softmax"]

_FLOATS = (mstype.float16, mstype.bfloat16, mstype.float32, mstype.float64)


def _float_in(x, op, name="input"):
    if not isinstance(x, Tensor):
        raise TypeError(f"For '{op}', the '{name}' must be a Tensor, but got {type(x).__name__}.")
    if x.dtype not in _FLOATS:
        raise TypeError(f"For '{op}', the '{name}' must be a float16, bfloat16, float32 or float64 Tensor, but got "
                        f"{x.dtype}.")
    return x


def _real_in(x, op, name="input"):
    if not isinstance(x, Tensor):
        raise TypeError(f"For '{op}', the '{name}' must be a Tensor, but got {type(x).__name__}.")
    if x.dtype == mstype.bool_ or x.dtype not in _FLOATS + tuple(mstype.int_type):
        raise TypeError(f"For '{op}', the '{name}' must be a numeric (int or float) Tensor, but got {x.dtype}.")
    return x


def _num(value, op, name):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"For '{op}', the '{name}' must be a float, but got {_got(value)}.")
    return float(value)


def _neg_part_expm1(x, alpha):
    """alpha·(eˣ − 1) evaluated at min(x, 0) (no overflow on the branch a select drops)."""
    xn = _core.select(_core.greater(x, 0.0), _core.zeros_like(x), x)
    return _core.mul(_expm1(xn), alpha)


@defop(primitive="CeLU", prim_attrs={"alpha": ("alpha", 1.0)})
def celu(x, alpha=1.0):
    """MindSpore's ops.celu(x, alpha=1.0) [Barron 2017]: max(0, x) + min(0, α·(exp(x/α) − 1)), element-wise.

    x: a float Tensor of any shape; the result has its shape and dtype. Gradient 1 for x > 0, exp(x/α) below (1 at
    0 from both sides). Raises TypeError for a non-float x or a non-number alpha, ValueError for alpha == 0."""
    x = _float_in(x, "celu", "x")
    alpha = _num(alpha, "celu", "alpha")
    if alpha == 0.0:
        raise ValueError("For 'celu', the 'alpha' must not be 0, but got 0.")
    xn = _core.select(_core.greater(x, 0.0), _core.zeros_like(x), x)
    neg = _core.mul(_expm1(_core.div(xn, alpha)), alpha)
    return _core.select(_core.greater(x, 0.0), x, neg)


@defop(primitive="Elu", prim_attrs={"alpha": ("alpha", 1.0)})
def elu(input_x, alpha=1.0):
    """MindSpore's ops.elu(input_x, alpha=1.0) [Clevert et al. 2015]: x for x > 0, α·(exp(x) − 1) otherwise.

    input_x: a float Tensor; result of its shape and dtype. Gradient 1 for x > 0 and α·exp(x) for x ≤ 0 (α at 0,
    PyTorch's value; MindSpore's CPU kernel only takes α = 1, where both sides agree). Raises TypeError for a
    non-float input or a non-number alpha."""
    x = _float_in(input_x, "elu", "input_x")
    alpha = _num(alpha, "elu", "alpha")
    return _core.select(_core.greater(x, 0.0), x, _neg_part_expm1(x, alpha))


@defop(primitive="SeLU")
def selu(input_x):
    """MindSpore's ops.selu(input_x) [Klambauer et al. 2017]: scale·(x for x > 0, α·(exp(x) − 1) otherwise) with
    α = 1.6732632423543772848, scale = 1.0507009873554804934.

    input_x: a float Tensor; result of its shape and dtype. Gradient scale at and above 0 (scale at 0, as
    MindSpore 2.10), scale·α·exp(x) below 0 (the derivative; MindSpore 2.10's CPU SeLU gradient is not, e.g. −0.117
    at x = −1). One SeLU kernel (elementwise_unary.cpp). Raises TypeError for a non-float input (MindSpore's CPU
    kernel truncates ints)."""
    return _core.selu(_float_in(input_x, "selu", "input_x"))


@defop()
def silu(input):
    """MindSpore's ops.silu(input) (Swish-1) [Hendrycks & Gimpel 2016]: x·σ(x), σ the logistic sigmoid.

    input: a float Tensor; result of its shape and dtype (NaN at x = −inf: −inf·0, as NumPy and PyTorch).
    Raises TypeError for a non-float input."""
    x = _float_in(input, "silu")
    return _core.mul(x, _core.sigmoid(x))


@defop(primitive="Mish")
def mish(x):
    """MindSpore's ops.mish(x) [Misra 2019]: x·tanh(softplus(x)), softplus computed stably (max(x, 0) +
    log1p(exp(−|x|))), so mish(1000) = 1000 (MindSpore 2.10's CPU kernel gives NaN there); NaN at −inf (−inf·0).
    One Mish kernel (elementwise_unary.cpp). x: a float Tensor; result of its shape and dtype. Raises TypeError for
    a non-float x (as MindSpore)."""
    return _core.mish(_float_in(x, "mish", "x"))


def _halves(x, axis, op):
    axis = int_arg(op, "axis", axis)
    if not -x.ndim <= axis < max(x.ndim, 1) or x.ndim == 0:
        raise ValueError(f"For '{op}', the axis must be in [{-x.ndim}, {x.ndim}) for an input of shape "
                         f"{tuple(x.shape)}, but got {axis}.")
    axis %= x.ndim
    n = x.shape[axis]
    if n % 2:
        raise ValueError(f"For '{op}', the size of the input along axis {axis} must be even, but got shape "
                         f"{tuple(x.shape)}.")
    a, b = _core.split(x, [n // 2, n // 2], axis)
    return a, b


@defop(primitive="GLU", prim_attrs={"axis": ("axis", -1)})
def glu(x, axis=-1):
    """MindSpore's ops.glu(x, axis=-1) [Dauphin et al. 2017]: with a, b the first and second halves of x along
    `axis`, a·σ(b).

    x: a float Tensor whose size along axis is even; result: that size halved, x's dtype. Raises TypeError for a
    non-float x or a non-int axis, ValueError for an odd size or an axis out of range."""
    a, b = _halves(_float_in(x, "glu", "x"), axis, "glu")
    return _core.mul(a, _core.sigmoid(b))


@defop()
def swiglu(input, dim=-1):
    """MindSpore's ops.swiglu(input, dim=-1) [Shazeer 2020]: with a, b the first and second halves of input along
    `dim`, Swish(a)·b = a·σ(a)·b. (MindSpore runs it on Ascend only; the formula is its documented one.)

    input: a float Tensor whose size along dim is even; result: that size halved, input's dtype. Raises TypeError
    for a non-float input, ValueError for an odd size or a dim out of range."""
    a, b = _halves(_float_in(input, "swiglu"), dim, "swiglu")
    return _core.mul(_core.mul(a, _core.sigmoid(a)), b)


def _lambd(lambd, op):
    lambd = _num(lambd, op, "lambd")
    if lambd < 0:
        raise ValueError(f"For '{op}', the 'lambd' must be non-negative, but got {lambd}.")
    return lambd


@defop(primitive="HShrink", prim_attrs={"lambd": ("lambd", 0.5)}, tensor="hardshrink",
       mint="nn.functional.hardshrink")
def hardshrink(input, lambd=0.5):
    """MindSpore's ops.hardshrink(input, lambd=0.5): x where |x| > lambd, 0 where |x| ≤ lambd.

    input: a float Tensor; result of its shape and dtype; gradient 1 where |x| > lambd, else 0. NaN stays NaN.
    Raises TypeError for a non-float input or a non-number lambd."""
    x = _float_in(input, "hardshrink")
    lambd = _num(lambd, "hardshrink", "lambd")
    return _core.select(_core.less_equal(_core.abs(x), lambd), _core.zeros_like(x), x)


@defop(primitive="SoftShrink", prim_attrs={"lambd": ("lambd", 0.5)}, tensor="soft_shrink", aliases=("soft_shrink",),
       mint="nn.functional.softshrink")
def softshrink(input, lambd=0.5):
    """MindSpore's ops.softshrink(input, lambd=0.5) (alias soft_shrink): x − lambd for x > lambd, x + lambd for
    x < −lambd, 0 between.

    input: a float Tensor; result of its shape and dtype; gradient 1 where |x| > lambd, else 0. NaN stays NaN.
    Raises TypeError for a non-float input or a non-number lambd, ValueError for lambd < 0."""
    x = _float_in(input, "softshrink")
    lambd = _lambd(lambd, "softshrink")
    shifted = _core.sub(x, _core.mul(_core.stop_gradient(_core.sign(x)), lambd))
    return _core.select(_core.less_equal(_core.abs(x), lambd), _core.zeros_like(x), shifted)


@defop(primitive="HSwish", mint="nn.functional.hardswish")
def hardswish(input):
    """MindSpore's ops.hardswish(input) [Howard et al. 2019, MobileNetV3]: x·relu6(x + 3)/6.

    input: a float Tensor; result of its shape and dtype; 0 at −inf (MindSpore 2.10's value), NaN stays NaN.
    Gradient 0 below −3, (2x + 3)/6 on [−3, 3] (−0.5 at −3 and 1.5 at 3, MindSpore 2.10's and PyTorch's), 1 above
    3. One HSwish kernel (elementwise_unary.cpp). Raises TypeError for a non-float input (MindSpore's CPU kernel
    truncates ints)."""
    return _core.hardswish(_float_in(input, "hardswish"))


def _scalar_like(value, x):
    return int(value) if x.dtype not in _FLOATS else float(value)


@defop()
def hardtanh(input, min_val=-1.0, max_val=1.0):
    """MindSpore's ops.hardtanh(input, min_val=-1.0, max_val=1.0): min(max(x, min_val), max_val) (so min_val >
    max_val gives max_val everywhere, as MindSpore).

    input: an int or float Tensor (result of its shape and dtype; for ints the bounds are truncated to ints).
    Gradient 1 strictly between the bounds, 1/2 at a bound and 0 beyond them (MindSpore 2.10: min(max(x, min_val),
    max_val), whose Maximum/Minimum share a tie's gradient equally). NaN stays NaN. Raises TypeError for a
    non-Tensor/bool input or non-number bounds."""
    x = _real_in(input, "hardtanh")
    lo = _scalar_like(_num(min_val, "hardtanh", "min_val"), x)
    hi = _scalar_like(_num(max_val, "hardtanh", "max_val"), x)
    if x.dtype in _FLOATS:
        return _core.minimum(_core.maximum(x, lo), hi)
    y = _core.select(_core.less_equal(x, lo), _core.full([], lo, x.dtype), x)
    return _core.select(_core.greater_equal(y, hi), _core.full([], hi, x.dtype), y)


def _leaky_relu(x, alpha):
    # max(x, αx) (min for α > 1), as MindSpore 2.10 builds it: the tie at 0 shares the gradient, (1 + α)/2. An int
    # x is multiplied by α truncated to an int (MindSpore: leaky_relu(int, 0.5) is relu, with 3.7 it is 3x below 0).
    if x.dtype in _FLOATS:
        ax = _core.mul(x, alpha)
    else:
        ax = _core.mul(x, _core.full([], float(int(alpha)), x.dtype))
    return _core.maximum(x, ax) if alpha <= 1.0 else _core.minimum(x, ax)


@defop()
def leaky_relu(input, alpha=0.2):
    """MindSpore's ops.leaky_relu(input, alpha=0.2): x where x > 0, alpha·x elsewhere (max(x, alpha·x), or min for
    alpha > 1, as MindSpore).

    input: an int or float Tensor; result of its shape and dtype (ints: x times alpha truncated to an int, as
    MindSpore 2.10, so alpha in (-1, 1) gives relu). Gradient 1 above 0, alpha below 0 and (1 + alpha)/2 at 0 (MindSpore 2.10's value: the tie of its
    Maximum shares the gradient). Raises TypeError for a non-Tensor/bool input or a
    non-number alpha."""
    x = _real_in(input, "leaky_relu")
    return _leaky_relu(x, _num(alpha, "leaky_relu", "alpha"))


@defop(primitive="PReLU", mint="nn.functional.prelu")
def prelu(input, weight):
    """MindSpore's ops.prelu(input, weight) [He et al. 2015]: x where x > 0, weight·x elsewhere, with one slope per
    channel (axis 1) or one shared slope. The gradient w.r.t. input is 1 above 0 and the slope at and below 0 (at
    0: the slope, as MindSpore 2.10's PReLUGrad); w.r.t. weight, x·dy summed below 0 (0 at x = 0).

    input: a float Tensor of any rank; weight: a 1-D float Tensor of 1 element or of input.shape[1] elements (for a
    1-D input, weight may also have input's length: its channels are then the elements), cast to input's dtype.
    Result: input's shape and dtype; gradients for both (the weight's summed over the positions it scales).
    Raises TypeError for non-Tensor or non-float arguments, ValueError for a weight of another size."""
    x = _float_in(input, "prelu")
    w = _float_in(weight, "prelu", "weight")
    if w.ndim != 1:
        raise ValueError(f"For 'prelu', the 'weight' must be a 1-D Tensor, but got shape {tuple(w.shape)}.")
    channels = x.shape[1] if x.ndim >= 2 else (x.shape[0] if x.ndim == 1 else 1)
    if w.shape[0] not in (1, channels):
        raise ValueError(f"For 'prelu', the 'weight' must have 1 or {channels} elements (input axis 1 of input shape "
                         f"{tuple(x.shape)}), but got {w.shape[0]}.")
    if w.dtype != x.dtype:
        w = _core.cast(w, x.dtype)
    if x.ndim >= 2:
        w = _core.reshape(w, [1, w.shape[0]] + [1] * (x.ndim - 2))
    elif x.ndim == 0:
        w = _core.reshape(w, [])
    # the slope where x ≤ 0, else x: MindSpore 2.10's PReLUGrad takes the slope at 0 and 1 at NaN
    return _core.select(_core.less_equal(x, 0.0), _core.mul(x, w), x)


@defop()
def rrelu(input, lower=1.0 / 8, upper=1.0 / 3):
    """MindSpore's ops.rrelu(input, lower=1/8, upper=1/3) [Xu et al. 2015]: x where x ≥ 0, a·x elsewhere with a
    drawn uniformly from [lower, upper) per element on every call (MindSpore's ops.rrelu always samples).

    input: a float Tensor; result of its shape and dtype; the gradient w.r.t. x is 1 above 0, the drawn slope below
    0 and 0 at 0 (MindSpore 2.10, which multiplies x by its sign's parts). Seeded by
    kiln's global seed (kiln.set_seed). Raises TypeError for a non-float input or non-number bounds, ValueError for
    lower > upper."""
    x = _float_in(input, "rrelu")
    lower, upper = _num(lower, "rrelu", "lower"), _num(upper, "rrelu", "upper")
    if lower > upper:
        raise ValueError(f"For 'rrelu', 'lower' must be at most 'upper', but got lower={lower}, upper={upper}.")
    from .function import uniform
    a = _core.stop_gradient(uniform(tuple(x.shape), lower, upper, dtype=mstype.float32))
    if a.dtype != x.dtype:
        a = _core.cast(a, x.dtype)
    # x · (1 above 0, a below 0, 0 at 0): the value x or a·x, the gradient MindSpore's (0 at 0)
    zero = _core.zeros_like(x)
    slope = _core.select(_core.greater(x, 0.0), _core.ones_like(x), _core.select(_core.less(x, 0.0), a, zero))
    return _core.mul(x, slope)


@defop()
def softmin(x, axis=-1, *, dtype=None):
    """MindSpore's ops.softmin(x, axis=-1, *, dtype=None): softmax(−x) along `axis` (an int, or a 1-tuple): exp(−x)
    / Σ exp(−x), computed shifted (no overflow). dtype: cast x to it first (None: keep x's float dtype).

    Raises TypeError for a non-float x (after the cast) or a non-int axis, ValueError for an axis out of range."""
    if not isinstance(x, Tensor):
        raise TypeError(f"For 'softmin', the 'x' must be a Tensor, but got {type(x).__name__}.")
    if dtype is not None:
        from .._args import dtype_arg
        x = _core.cast(x, dtype_arg("softmin", "dtype", dtype))
    x = _float_in(x, "softmin", "x")
    if isinstance(axis, (tuple, list)) and len(axis) == 1:
        axis = axis[0]
    axis = int_arg("softmin", "axis", axis)
    if not -max(x.ndim, 1) <= axis < max(x.ndim, 1):
        raise ValueError(f"For 'softmin', the 'axis' must be in [{-max(x.ndim, 1)}, {max(x.ndim, 1)}) for shape "
                         f"{tuple(x.shape)}, but got {axis}.")
    return _core.softmax(_core.neg(x), axis)


@defop(primitive="Softsign")
def softsign(x):
    """MindSpore's ops.softsign(x): x / (1 + |x|). x: a float Tensor; result of its shape and dtype; gradient
    1/(1 + |x|)². ±inf gives NaN (inf/inf, as the formula in NumPy and PyTorch). Raises TypeError for a non-float x."""
    x = _float_in(x, "softsign", "x")
    return _core.div(x, _core.add(_core.abs(x), 1.0))


@defop()
def tanhshrink(input):
    """MindSpore's ops.tanhshrink(input): x − tanh(x). Int/bool input computes in float32 (MindSpore's result
    dtype); float keeps its dtype. Raises TypeError for a non-Tensor or a complex Tensor (Kiln has no complex tanh;
    MindSpore 2.10 computes it)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"For 'tanhshrink', the 'input' must be a Tensor, but got {type(input).__name__}.")
    mstype.refuse_complex(input, "tanhshrink")
    x = input if input.dtype in _FLOATS else _core.cast(input, mstype.float32)
    return _core.sub(x, _core.tanh(x))


@defop()
def threshold(input, thr, value):
    """MindSpore's ops.threshold(input, thr, value): x where x > thr, `value` elsewhere (x ≤ thr).

    input: an int or float Tensor; thr, value: numbers (truncated to ints for an int input); result: input's shape
    and dtype; gradient 1 where x > thr, else 0. NaN stays NaN (PyTorch's rule). Raises TypeError for a non-Tensor
    or bool input and non-number thr/value."""
    x = _real_in(input, "threshold")
    thr = _scalar_like(_num(thr, "threshold", "thr"), x)
    value = _scalar_like(_num(value, "threshold", "value"), x)
    return _core.select(_core.less_equal(x, thr), _core.full([], value, x.dtype), x)


def _fast_gelu(x):
    return _core.mul(x, _core.sigmoid(_core.mul(x, 1.702)))


@defop(primitive="FastGeLU")
def fast_gelu(x):
    """MindSpore's ops.fast_gelu(x): x / (1 + exp(−1.702·|x|))·exp(0.851·(x − |x|)), which equals x·σ(1.702·x)
    (the form used). x: a float Tensor; result of its shape and dtype. Raises TypeError for a non-float x."""
    return _fast_gelu(_float_in(x, "fast_gelu", "x"))


@defop()
def gumbel_softmax(logits, tau=1.0, hard=False, dim=-1):
    """MindSpore's ops.gumbel_softmax(logits, tau=1.0, hard=False, dim=-1) [Jang et al. 2016]: y = softmax((logits +
    g)/tau) along dim, g = −log(−log U), U ~ Uniform[0, 1) drawn per call (kiln's global seed). hard=True returns the
    one-hot of argmax(y) in the forward pass with y's gradient (straight-through: one_hot − stop_gradient(y) + y).

    logits: a float16/float32 Tensor of rank ≥ 1; tau: a positive float; hard: bool; dim: int in [−rank, rank).
    Raises TypeError for bad types/dtypes, ValueError for tau ≤ 0 or dim out of range."""
    x = _float_in(logits, "gumbel_softmax", "logits")
    if x.ndim == 0:
        raise ValueError("For 'gumbel_softmax', the 'logits' must have rank >= 1, but got a 0-d Tensor.")
    if isinstance(tau, bool) or not isinstance(tau, float):
        raise TypeError(f"For 'gumbel_softmax', the 'tau' must be a float, but got {_got(tau)}.")
    if tau <= 0:
        raise ValueError(f"For 'gumbel_softmax', the 'tau' must be positive, but got {tau}.")
    if not isinstance(hard, bool):
        raise TypeError(f"For 'gumbel_softmax', the 'hard' must be a bool, but got {_got(hard)}.")
    dim = int_arg("gumbel_softmax", "dim", dim)
    if not -x.ndim <= dim < x.ndim:
        raise ValueError(f"For 'gumbel_softmax', the 'dim' must be in [{-x.ndim}, {x.ndim}), but got {dim}.")
    from .function import rand
    u = rand(*x.shape, dtype=mstype.float32)
    # −log(−log U): U = 0 would give −inf; the smallest positive float32 keeps g finite (−log(−log 2⁻¹⁴⁹) ≈ −4.6)
    u = _core.maximum(u, 1.4e-45)
    g = _core.neg(_core.log(_core.neg(_core.log(u))))
    if g.dtype != x.dtype:
        g = _core.cast(g, x.dtype)
    y = _core.softmax(_core.div(_core.add(x, _core.stop_gradient(g)), tau), dim)
    if not hard:
        return y
    idx = _core.argmax(y, dim % x.ndim, True)
    pos = _core.reshape(_core.arange(0, x.shape[dim], 1, idx.dtype), [-1] + [1] * (x.ndim - 1 - dim % x.ndim))
    one_hot = _core.cast(_core.equal(pos, idx), x.dtype)
    return _core.add(_core.stop_gradient(_core.sub(one_hot, y)), y)


