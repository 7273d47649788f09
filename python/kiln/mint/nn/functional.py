"""kiln.mint.nn.functional — MindSpore 2.10's `mindspore.mint.nn.functional` (PyTorch's torch.nn.functional
names and arguments) on Kiln's ops.

As kiln.mint: the ops function itself where the signatures agree (declared with `mint="nn.functional.<name>"` on
its @defop, or listed in SAME), else a thin adapter declared here with `@defop(name="mint.nn.functional.<name>")`.
`inplace=True` (relu, relu6, dropout, ...) writes the result into `input` (Tensor's in-place rule: in place in
PyNative and for Parameters, a functional write that `input` is rebound to under a gradient or in a graph) and
returns `input`."""
from ...ops import _kernels
from ...common import _indexing
from ...common.tensor import Tensor
from ..._args import dtype_arg, int_arg
from ... import ops
from ...ops._opdef import defop
from ...ops import function as _fn
from .._names import collect as _collect

_P = "mint.nn.functional."


def _t(x, op, name="input"):
    if not isinstance(x, Tensor):
        raise TypeError(f"For '{_P}{op}', the argument '{name}' must be a Tensor, but got {type(x).__name__}.")
    return x


def _inplace(input, out, inplace, op):
    if not isinstance(inplace, bool):
        raise TypeError(f"For '{_P}{op}', 'inplace' must be a bool, but got {type(inplace).__name__}.")
    if not inplace:
        return out
    return _indexing.assign(input, out, f"{_P}{op}")


# ---------------------------------------------------------------------------------------------- activations

@defop(name=_P + "relu")
def relu(input, inplace=False):
    """F.relu(input, inplace=False): max(input, 0) (gradient 0 at 0); inplace=True writes it into input."""
    return _inplace(input, ops.relu(_t(input, "relu")), inplace, "relu")


@defop(name=_P + "relu6")
def relu6(input, inplace=False):
    """F.relu6(input, inplace=False): min(max(input, 0), 6) (ops.relu6); inplace=True writes it into input."""
    return _inplace(input, ops.relu6(_t(input, "relu6")), inplace, "relu6")


@defop(name=_P + "gelu")
def gelu(input, approximate="none"):
    """F.gelu(input, approximate='none'): x·Φ(x), with erf ('none') or the tanh approximation ('tanh')
    [Hendrycks & Gimpel 2016] (ops.gelu). ValueError for another `approximate`."""
    return _fn.gelu(_t(input, "gelu"), approximate)


@defop(name=_P + "logsigmoid")
def logsigmoid(input):
    """F.logsigmoid(input): log(1 / (1 + e⁻ˣ)), computed stably (ops.logsigmoid)."""
    return ops.logsigmoid(_t(input, "logsigmoid"))


def _legacy_dim(x, dim, op):
    """PyTorch's implicit softmax dim (dim=None): 0 for 0-, 1- and 3-D inputs, else 1."""
    if dim is None:
        return 0 if x.ndim in (0, 1, 3) else 1
    return int_arg(_P + op, "dim", dim)


@defop(name=_P + "softmax")
def softmax(input, dim=None, dtype=None):
    """F.softmax(input, dim=None, dtype=None): softmax along `dim` (None: PyTorch's implicit dim, 0 for 0/1/3-D
    inputs and 1 otherwise), input cast to `dtype` first when given (ops.softmax)."""
    x = _t(input, "softmax")
    return _fn.softmax(x, _legacy_dim(x, dim, "softmax"), dtype=dtype)


@defop(name=_P + "log_softmax")
def log_softmax(input, dim=None, *, dtype=None):
    """F.log_softmax(input, dim=None, *, dtype=None): log of softmax along `dim` (None as F.softmax), input cast to
    `dtype` first when given (ops.log_softmax)."""
    x = _t(input, "log_softmax")
    if dtype is not None:
        x = _kernels.cast(x, dtype_arg(_P + "log_softmax", "dtype", dtype))
    return _fn.log_softmax(x, _legacy_dim(x, dim, "log_softmax"))


@defop(name=_P + "dropout")
def dropout(input, p=0.5, training=True, inplace=False):
    """F.dropout(input, p=0.5, training=True, inplace=False): each element zeroed with probability p, the others
    scaled by 1/(1 − p), in training (ops.dropout; the mask follows kiln.set_seed); input itself otherwise."""
    return _inplace(input, ops.dropout(_t(input, "dropout"), p, training), inplace and training, "dropout")


@defop(name=_P + "dropout2d")
def dropout2d(input, p=0.5, training=True, inplace=False):
    """F.dropout2d(input, p=0.5, training=True, inplace=False): whole channels of an (N, C, H, W) input zeroed with
    probability p, the others scaled by 1/(1 − p) (ops.dropout2d)."""
    return _inplace(input, ops.dropout2d(_t(input, "dropout2d"), p, training), inplace and training, "dropout2d")


# ---------------------------------------------------------------------------------------------- layers

@defop(name=_P + "linear")
def linear(input, weight, bias=None):
    """F.linear(input, weight, bias=None): input @ weightᵀ + bias. input (*, in), weight (out, in), bias (out,) or
    None; result (*, out). ValueError when the inner sizes differ (MatMul's message)."""
    _t(input, "linear")
    _t(weight, "linear", "weight")
    if weight.ndim != 2:
        raise ValueError(f"For '{_P}linear', 'weight' must be 2-D (out_features, in_features), but got shape "
                         f"{tuple(weight.shape)}.")
    y = _kernels.matmul(input, _kernels.transpose(weight, [1, 0]))
    return y if bias is None else ops.add(y, bias)


@defop(name=_P + "conv2d")
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """F.conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1): 2-D cross-correlation of
    (N, C, H, W) input with (C_out, C/groups, KH, KW) weight; padding an int, (h, w) (each side) or 'same'/'valid'
    (ops.conv2d with pad_mode 'pad')."""
    return ops.conv2d(_t(input, "conv2d"), weight, bias, stride, "valid", padding, dilation, groups)


@defop(name=_P + "conv1d")
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """F.conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1): 1-D cross-correlation of
    (N, C, L) input with (C_out, C/groups, K) weight; padding an int (each side) or 'same'/'valid' (ops.conv1d)."""
    if isinstance(padding, (tuple, list)) and len(padding) == 1:
        padding = padding[0]
    return ops.conv1d(_t(input, "conv1d"), weight, bias, stride, "valid", padding, dilation, groups)


@defop(name=_P + "max_pool2d")
def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """F.max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    max pooling of (N, C, H, W) or (C, H, W); stride None = kernel_size; padded positions never win; with
    return_indices also the Int64 flat index (h·W + w) of each maximum (ops.max_pool2d)."""
    return ops.max_pool2d(_t(input, "max_pool2d"), kernel_size, stride, padding, dilation, return_indices, ceil_mode)


@defop(name=_P + "avg_pool2d")
def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """F.avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
    divisor_override=None): average pooling of (N, C, H, W) or (C, H, W); stride None = kernel_size (ops.avg_pool2d)."""
    return ops.avg_pool2d(_t(input, "avg_pool2d"), kernel_size, stride, padding, ceil_mode, count_include_pad,
                          0 if divisor_override is None else divisor_override)


@defop(name=_P + "batch_norm")
def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,
               eps=1e-5):
    """F.batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,
    eps=1e-5): normalizes (N, C, ...) over every dim but 1 — with the batch statistics in training (updating the
    running ones in place: r ← (1 − momentum)·r + momentum·batch, unbiased variance), else with the running ones;
    then ·weight + bias (ones / zeros when None) (ops.batch_norm)."""
    x = _t(input, "batch_norm")
    c = x.shape[1] if x.ndim > 1 else None
    if c is None:
        raise ValueError(f"For '{_P}batch_norm', 'input' must have at least 2 dims (N, C, ...), but got shape "
                         f"{tuple(x.shape)}.")
    if weight is None:
        weight = _kernels.full([c], 1.0, x.dtype)
    if bias is None:
        bias = _kernels.full([c], 0.0, x.dtype)
    return ops.batch_norm(x, running_mean, running_var, weight, bias, training, momentum, eps)


@defop(name=_P + "pad")
def pad(input, pad, mode="constant", value=None):
    """F.pad(input, pad, mode='constant', value=None): `pad` = (before, after) for the last dim, then the one
    before it, ...; mode 'constant' (value, 0 when None), 'reflect', 'replicate' or 'circular' (ops.pad)."""
    return ops.pad(_t(input, "pad"), pad, mode, value)


@defop(name=_P + "one_hot")
def one_hot(tensor, num_classes=-1):
    """F.one_hot(tensor, num_classes=-1): Int64 one-hot vectors of an integer index tensor along a new last dim of
    size num_classes (-1: the largest index + 1, read from the values, so PyNative only). ValueError for an index
    < 0 or >= num_classes (PyTorch's; checked where the values are known, not while compiling)."""
    _t(tensor, "one_hot", "tensor")
    n = int_arg(_P + "one_hot", "num_classes", num_classes)
    if n == -1:
        if tensor._symbolic:
            raise ValueError(f"For '{_P}one_hot', num_classes=-1 needs the index values, unknown while compiling; "
                             f"give num_classes explicitly.")
        vals = tensor.asnumpy()
        if vals.size and vals.min() < 0:
            raise ValueError(f"For '{_P}one_hot', the indices must be non-negative, but got {vals.min()}.")
        n = int(vals.max()) + 1 if vals.size else 0
    elif n < 0:
        raise ValueError(f"For '{_P}one_hot', 'num_classes' must be -1 or >= 0, but got {n}.")
    elif not tensor._symbolic:
        vals = tensor.asnumpy()
        if vals.size and (vals.min() < 0 or vals.max() >= n):
            bad = vals.min() if vals.min() < 0 else vals.max()
            raise ValueError(f"For '{_P}one_hot', the indices must be in [0, num_classes={n}), but got {bad}.")
    return ops.one_hot(tensor, n, 1, 0, -1)


@defop(name=_P + "upsample")
def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """F.upsample(input, size=None, scale_factor=None, mode='nearest', align_corners=None): F.interpolate without
    recompute_scale_factor (ops.interpolate: exactly one of size and scale_factor; modes as there)."""
    return ops.interpolate(_t(input, "upsample"), size, scale_factor, mode, align_corners)


# ---------------------------------------------------------------------------------------------- losses

@defop(name=_P + "binary_cross_entropy")
def binary_cross_entropy(input, target, weight=None, reduction="mean"):
    """F.binary_cross_entropy(input, target, weight=None, reduction='mean'): −w·(y·log x + (1 − y)·log(1 − x)) for
    probabilities x in [0, 1] (ops.binary_cross_entropy)."""
    return ops.binary_cross_entropy(_t(input, "binary_cross_entropy"), target, weight, reduction)


@defop(name=_P + "binary_cross_entropy_with_logits")
def binary_cross_entropy_with_logits(input, target, weight=None, reduction="mean", pos_weight=None):
    """F.binary_cross_entropy_with_logits(input, target, weight=None, reduction='mean', pos_weight=None): binary
    cross entropy of sigmoid(input), computed stably (ops.binary_cross_entropy_with_logits; note the order of
    `reduction` and `pos_weight` differs from the ops function)."""
    return ops.binary_cross_entropy_with_logits(_t(input, "binary_cross_entropy_with_logits"), target, weight,
                                                pos_weight, reduction)


@defop(name=_P + "nll_loss")
def nll_loss(input, target, weight=None, ignore_index=-100, reduction="mean"):
    """F.nll_loss(input, target, weight=None, ignore_index=-100, reduction='mean'): −w[y]·input[y] for
    log-probabilities (classes on dim 1) and Int class indices (ops.nll_loss)."""
    return ops.nll_loss(_t(input, "nll_loss"), target, weight, ignore_index, reduction)


@defop(name=_P + "smooth_l1_loss")
def smooth_l1_loss(input, target, reduction="mean", beta=1.0):
    """F.smooth_l1_loss(input, target, reduction='mean', beta=1.0): with d = |input − target|, 0.5·d²/beta where
    d < beta, else d − 0.5·beta; reduced ('mean' by default, unlike ops.smooth_l1_loss's 'none')."""
    return ops.smooth_l1_loss(_t(input, "smooth_l1_loss"), target, beta, reduction)


@defop(name=_P + "kl_div")
def kl_div(input, target, reduction="mean", log_target=False):
    """F.kl_div(input, target, reduction='mean', log_target=False): the pointwise KL divergence of log-probabilities
    `input` from `target` — target·(log target − input), or with log_target e^target·(target − input) — reduced by
    'none', 'sum', 'mean' (over all elements) or 'batchmean' (sum / batch size) (ops.kl_div)."""
    _t(input, "kl_div")
    if not isinstance(log_target, bool):
        raise TypeError(f"For '{_P}kl_div', 'log_target' must be a bool, but got {type(log_target).__name__}.")
    if not log_target:
        return ops.kl_div(input, target, reduction)
    if reduction not in ("none", "sum", "mean", "batchmean"):
        raise ValueError(f"For '{_P}kl_div', 'reduction' must be 'none', 'sum', 'mean' or 'batchmean', but got "
                         f"{reduction!r}.")
    loss = ops.mul(ops.exp(target), ops.sub(target, input))
    if reduction == "none":
        return loss
    total = _kernels.sum(loss, None, False)
    if reduction == "sum":
        return total
    n = loss.size if reduction == "mean" else (loss.shape[0] if loss.ndim else 1)
    return _kernels.div(total, float(n))


# mint.nn.functional name -> ops name: the same signature and semantics in MindSpore 2.10.
SAME = {n: n for n in (
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "conv_transpose2d", "cross_entropy",
    "group_norm", "hardsigmoid", "interpolate", "l1_loss", "layer_norm", "mse_loss", "sigmoid", "soft_margin_loss",
    "softplus", "tanh")}

globals().update(_collect("nn.functional", SAME))
