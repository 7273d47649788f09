"""dropout1d, channel_shuffle (+ the ChannelShuffle primitive), bidense, rms_norm and add_rms_norm of MindSpore
2.10's `ops`, compositions of Kiln's kernels (gradients from the building blocks)."""
from .._loader import _core
from .._args import int_arg
from ..common import dtype as mstype
from ..common.tensor import Tensor
from ._opdef import defop

__all__ = ["dropout1d", "channel_shuffle", "bidense", "rms_norm", "add_rms_norm"]

_FLOATS = (mstype.float16, mstype.bfloat16, mstype.float32, mstype.float64)


@defop()
def dropout1d(input, p=0.5, training=True):
    """MindSpore's ops.dropout1d(input, p=0.5, training=True): whole channels of the (N, C, L) (or (C, L)) input
    zeroed with probability p (one draw per (sample, channel), kiln's global seed), the others scaled by 1/(1 − p);
    the input itself when not training or p = 0.
    Raises TypeError for a non-float Tensor or a non-number p, ValueError for a rank other than 2 or 3 or p outside
    [0, 1]."""
    from .loss_func import _check_p
    op = "dropout1d"
    if not isinstance(input, Tensor):
        raise TypeError(f"For '{op}', the 'input' must be a Tensor, but got {type(input).__name__}.")
    if input.dtype not in _FLOATS:
        raise TypeError(f"For '{op}', the 'input' must be a float Tensor, but got {input.dtype}.")
    if input.ndim not in (2, 3):
        raise ValueError(f"For '{op}', the 'input' must be 2-D (C, L) or 3-D (N, C, L), but got shape "
                         f"{tuple(input.shape)}.")
    p = _check_p(p, op)
    if not isinstance(training, bool):
        raise TypeError(f"For '{op}', the 'training' must be a bool, but got {type(training).__name__}.")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return _core.zeros_like(input)
    from .function import rand
    keep = 1.0 - p
    u = rand(*(list(input.shape[:-1]) + [1]), dtype=mstype.float32)
    mask = _core.cast(_core.less(u, keep), input.dtype)
    return _core.mul(input, _core.mul(mask, 1.0 / keep))


@defop(primitive="ChannelShuffle", prim_attrs={"group": ("groups", 1)})
def channel_shuffle(x, groups):
    """MindSpore's ops.channel_shuffle(x, groups) [Zhang et al. 2018, ShuffleNet]: the C channels of x (N, C, *)
    seen as (groups, C/groups) and transposed: out[:, k·groups + g] = x[:, g·(C/groups) + k].
    x: a Tensor of rank ≥ 3 (any dtype); groups: a positive int dividing C. Raises TypeError / ValueError for bad
    types, a rank below 3 or a groups that does not divide C."""
    op = "channel_shuffle"
    if not isinstance(x, Tensor):
        raise TypeError(f"For '{op}', the 'x' must be a Tensor, but got {type(x).__name__}.")
    groups = int_arg(op, "groups", groups)
    if x.ndim < 3:
        raise ValueError(f"For '{op}', the 'x' must have rank >= 3 (N, C, *), but got shape {tuple(x.shape)}.")
    c = x.shape[1]
    if groups < 1 or c % groups:
        raise ValueError(f"For '{op}', the 'groups' must be a positive divisor of the {c} channels, but got {groups}.")
    n, rest = x.shape[0], list(x.shape[2:])
    y = _core.reshape(x, [n, groups, c // groups] + rest)
    y = _core.transpose(y, [0, 2, 1] + list(range(3, 3 + len(rest))))
    return _core.reshape(y, [n, c] + rest)


@defop()
def bidense(input1, input2, weight, bias=None):
    """MindSpore's ops.bidense(input1, input2, weight, bias=None): the bilinear map
        y[..., o] = Σ_ij input1[..., i]·weight[o, i, j]·input2[..., j] + bias[o].
    input1 (*, in1), input2 (*, in2) with the same leading dims (or 1-D: then y is (out,)); weight (out, in1, in2);
    bias (out,) or None; one float dtype. Raises TypeError for non-Tensors / non-float or mismatched dtypes,
    ValueError for shapes that do not fit."""
    op = "bidense"
    for name, t in (("input1", input1), ("input2", input2), ("weight", weight)):
        if not isinstance(t, Tensor):
            raise TypeError(f"For '{op}', the '{name}' must be a Tensor, but got {type(t).__name__}.")
        if t.dtype not in _FLOATS:
            raise TypeError(f"For '{op}', the '{name}' must be a float Tensor, but got {t.dtype}.")
    if not input1.dtype == input2.dtype == weight.dtype:
        raise TypeError(f"For '{op}', input1, input2 and weight must have one dtype, but got {input1.dtype}, "
                        f"{input2.dtype} and {weight.dtype}.")
    if weight.ndim != 3 or input1.ndim < 1 or input1.shape[-1] != weight.shape[1] or \
            input2.shape[-1:] != weight.shape[2:] or tuple(input1.shape[:-1]) != tuple(input2.shape[:-1]):
        raise ValueError(f"For '{op}', the shapes must be input1 (*, in1), input2 (*, in2) and weight (out, in1, in2), "
                         f"but got {tuple(input1.shape)}, {tuple(input2.shape)} and {tuple(weight.shape)}.")
    out, in1, in2 = weight.shape
    lead = list(input1.shape[:-1])
    x1 = _core.reshape(input1, [-1, in1])
    x2 = _core.reshape(input2, [-1, 1, in2])
    w = _core.reshape(_core.transpose(weight, [1, 0, 2]), [in1, out * in2])
    t = _core.reshape(_core.matmul(x1, w), [-1, out, in2])
    y = _core.sum(_core.mul(t, x2), [2], False)  # (M, out)
    if bias is not None:
        if not isinstance(bias, Tensor):
            raise TypeError(f"For '{op}', the 'bias' must be a Tensor or None, but got {type(bias).__name__}.")
        if bias.dtype != input1.dtype or tuple(bias.shape) != (out,):
            raise ValueError(f"For '{op}', the 'bias' must be a ({out},) Tensor of dtype {input1.dtype}, but got "
                             f"shape {tuple(bias.shape)} and dtype {bias.dtype}.")
        y = _core.add(y, bias)
    return _core.reshape(y, lead + [out])


def _rms(x, gamma, epsilon, op):
    for name, t in (("x", x), ("gamma", gamma)):
        if not isinstance(t, Tensor):
            raise TypeError(f"For '{op}', the '{name}' must be a Tensor, but got {type(t).__name__}.")
        if t.dtype not in _FLOATS:
            raise TypeError(f"For '{op}', the '{name}' must be a float Tensor, but got {t.dtype}.")
    if gamma.dtype != x.dtype:
        raise TypeError(f"For '{op}', the 'gamma' must have x's dtype {x.dtype}, but got {gamma.dtype}.")
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not 0 < epsilon <= 1:
        raise ValueError(f"For '{op}', the 'epsilon' must be a float in (0, 1], but got {epsilon!r}.")
    k = gamma.ndim
    if k > x.ndim or tuple(x.shape[x.ndim - k:]) != tuple(gamma.shape):
        raise ValueError(f"For '{op}', the 'gamma' shape {tuple(gamma.shape)} must equal the trailing dims of x's "
                         f"shape {tuple(x.shape)}.")
    axes = list(range(x.ndim - k, x.ndim))
    xf = x if x.dtype in (mstype.float32, mstype.float64) else _core.cast(x, mstype.float32)
    rstd = _core.rsqrt(_core.add(_core.mean(_core.square(xf), axes, True), float(epsilon)))
    y = _core.mul(_core.mul(xf, rstd), gamma if gamma.dtype == xf.dtype else _core.cast(gamma, xf.dtype))
    return (y if y.dtype == x.dtype else _core.cast(y, x.dtype)), rstd


@defop()
def rms_norm(x, gamma, epsilon=1e-06):
    """MindSpore's ops.rms_norm(x, gamma, epsilon=1e-06) -> (y, rstd) [Zhang & Sennrich 2019]:
        rstd = 1/√(mean(x², over the trailing gamma.ndim dims) + epsilon),  y = x·rstd·gamma.
    x, gamma: float Tensors of one dtype, gamma's shape the trailing dims of x's; y: x's shape and dtype; rstd:
    x's leading dims with the normalized ones kept as 1, float32 (float64 for float64 x), computed in float32 for
    float16/bfloat16 x. Raises TypeError for non-float or mismatched dtypes, ValueError for shapes or an epsilon
    outside (0, 1]."""
    return _rms(x, gamma, epsilon, "rms_norm")


@defop()
def add_rms_norm(x1, x2, gamma, epsilon=1e-06):
    """MindSpore's ops.add_rms_norm(x1, x2, gamma, epsilon=1e-06) -> (y, rstd, x): x = x1 + x2 (one shape and
    dtype), then rms_norm(x, gamma, epsilon) (see rms_norm). Raises as rms_norm, and ValueError for x1, x2 of
    different shapes."""
    op = "add_rms_norm"
    for name, t in (("x1", x1), ("x2", x2)):
        if not isinstance(t, Tensor):
            raise TypeError(f"For '{op}', the '{name}' must be a Tensor, but got {type(t).__name__}.")
    if tuple(x1.shape) != tuple(x2.shape) or x1.dtype != x2.dtype:
        raise ValueError(f"For '{op}', 'x1' and 'x2' must have one shape and dtype, but got {tuple(x1.shape)} "
                         f"{x1.dtype} and {tuple(x2.shape)} {x2.dtype}.")
    x = _core.add(x1, x2)
    y, rstd = _rms(x, gamma, epsilon, op)
    return y, rstd, x
