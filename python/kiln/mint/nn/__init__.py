"""kiln.mint.nn — MindSpore 2.10's `mindspore.mint.nn`: layers with PyTorch-style constructors (`bias=`,
`groups=`, `padding=` with PyTorch's defaults, `momentum` as PyTorch's), as thin subclasses of the kiln.nn layers
that compute them (the same ops, the same Parameters). Classes whose constructor already is PyTorch's are kiln.nn's
own (`mint.nn.ReLU is nn.ReLU`, as in MindSpore for ReLU, Identity and Cell).

Parameter names are MindSpore 2.10 mint.nn's (PyTorch's): a BatchNorm's `weight`, `bias`, `running_mean`,
`running_var` and `num_batches_tracked`, a LayerNorm's and GroupNorm's `weight`/`bias`, an Embedding's and a PReLU's
`weight` -- so checkpoints and state_dicts of mint.nn models load between MindSpore and Kiln. The kiln.nn attribute
names (`gamma`, `moving_mean`, `embedding_table`, ...) still read the same Parameters (see _TorchNames)."""
import numbers

import numpy as np

from ...common import _indexing
from ...common.parameter import Parameter
from ...common.initializer import Normal
from ...common.tensor import Tensor
from ... import nn as _nn
from ... import ops as _ops
from . import functional  # noqa: F401 (re-export)
from . import functional as F

__all__ = ["Cell", "Identity", "ReLU", "Sigmoid", "Tanh", "LogSigmoid", "Mish", "Flatten", "Upsample",
           "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "MSELoss", "L1Loss", "CrossEntropyLoss", "NLLLoss", "BCELoss",
           "GroupNorm", "Linear", "Conv1d", "Conv2d", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LayerNorm",
           "Embedding", "Dropout", "Dropout2d", "GELU", "ReLU6", "SiLU", "ELU", "Softmax", "LogSoftmax", "MaxPool2d",
           "AvgPool1d", "AvgPool2d", "BCEWithLogitsLoss", "SmoothL1Loss", "KLDivLoss", "PReLU"]

# The same classes as kiln.nn: their constructors already take PyTorch's arguments.
Cell = _nn.Cell
Identity = _nn.Identity
ReLU = _nn.ReLU
Sigmoid = _nn.Sigmoid
Tanh = _nn.Tanh
LogSigmoid = _nn.LogSigmoid
Mish = _nn.Mish
Flatten = _nn.Flatten
Upsample = _nn.Upsample
AdaptiveAvgPool1d = _nn.AdaptiveAvgPool1d
AdaptiveAvgPool2d = _nn.AdaptiveAvgPool2d
MSELoss = _nn.MSELoss
L1Loss = _nn.L1Loss
CrossEntropyLoss = _nn.CrossEntropyLoss
NLLLoss = _nn.NLLLoss
BCELoss = _nn.BCELoss


class _TorchNames:
    """Mixin for a mint.nn layer built on a kiln.nn layer whose Parameters MindSpore's mint.nn names differently:
    `_TORCH_NAMES` maps the kiln.nn attribute to mint's. `_use_torch_names()` (called at the end of __init__)
    re-registers each Parameter under mint's name (so parameter names, checkpoints and state_dict keys are mint's);
    reading the kiln.nn name (the base layer's construct reads `self.gamma`) returns the same Parameter."""

    _TORCH_NAMES = {}

    def _use_torch_names(self):
        params = self.__dict__["_params"]
        for old, new in self._TORCH_NAMES.items():
            p = params.get(old)
            if p is None:
                continue
            self._unregister(old)
            if p.name in (old, _KILN_PARAM_NAMES.get(old)):
                p.name = new
            setattr(self, new, p)

    def __getattr__(self, name):
        new = type(self)._TORCH_NAMES.get(name)
        if new is not None:
            return getattr(self, new)
        return super().__getattr__(name)


# The Parameter names kiln.nn gives where they differ from the attribute (a stand-alone BatchNorm's 'mean').
_ONE_I64 = Tensor(np.array(1, np.int64))
_KILN_PARAM_NAMES = {"moving_mean": "mean", "moving_variance": "variance", "w": "a"}
_BN_NAMES = {"gamma": "weight", "beta": "bias", "moving_mean": "running_mean", "moving_variance": "running_var"}
_NORM_NAMES = {"gamma": "weight", "beta": "bias"}


def _bool(value, name, cls):
    if not isinstance(value, bool):
        raise TypeError(f"For 'mint.nn.{cls}', '{name}' must be a bool, but got {type(value).__name__}.")
    return value


def _dtype(dtype):
    from ...common import dtype as mstype
    return mstype.float32 if dtype is None else dtype


class Linear(_nn.Dense):
    """mint.nn.Linear(in_features, out_features, bias=True, weight_init=None, bias_init=None, dtype=None):
    y = x·Wᵀ + b for x (*, in_features) -> (*, out_features); weight (out_features, in_features) HeUniform(√5) and
    bias Uniform(1/√in_features) by default (PyTorch's), dtype Float32 unless given. A kiln.nn.Dense."""

    _in_name = "in_features"

    def __init__(self, in_features, out_features, bias=True, weight_init=None, bias_init=None, dtype=None):
        super().__init__(in_features, out_features, weight_init=weight_init, bias_init=bias_init,
                         has_bias=_bool(bias, "bias", "Linear"), dtype=_dtype(dtype))
        self.in_features, self.out_features = in_features, out_features


_PAD_MODES = ("zeros", "reflect", "replicate", "circular")


def _conv_args(cls, padding, padding_mode, nd):
    """kiln.nn's (pad_mode, padding) for PyTorch's padding (int, tuple per spatial dim, 'same', 'valid') and the
    pre-padding (F.pad amounts) for a non-zeros padding_mode."""
    if padding_mode not in _PAD_MODES:
        raise ValueError(f"For 'mint.nn.{cls}', 'padding_mode' must be one of {list(_PAD_MODES)}, but got "
                         f"{padding_mode!r}.")
    if isinstance(padding, str):
        if padding not in ("same", "valid"):
            raise ValueError(f"For 'mint.nn.{cls}', 'padding' as a string must be 'same' or 'valid', but got "
                             f"{padding!r}.")
        if padding == "same" and padding_mode != "zeros":
            raise ValueError(f"For 'mint.nn.{cls}', padding='same' takes padding_mode='zeros' only in Kiln.")
        return padding, 0, None
    if isinstance(padding, numbers.Integral) and not isinstance(padding, bool):
        per_dim = (int(padding),) * nd
    elif isinstance(padding, (tuple, list)) and len(padding) == nd and all(
            isinstance(p, numbers.Integral) and not isinstance(p, bool) for p in padding):
        per_dim = tuple(int(p) for p in padding)
    else:
        raise TypeError(f"For 'mint.nn.{cls}', 'padding' must be an int, a tuple of {nd} ints, 'same' or 'valid', "
                        f"but got {padding!r}.")
    if any(p < 0 for p in per_dim):
        raise ValueError(f"For 'mint.nn.{cls}', 'padding' must be non-negative, but got {padding!r}.")
    if padding_mode != "zeros":
        pre = []
        for p in reversed(per_dim):
            pre += [p, p]
        return "valid", 0, tuple(pre)
    if not any(per_dim):
        return "valid", 0, None
    if nd == 1:
        return "pad", per_dim[0], None
    return "pad", (per_dim[0], per_dim[0], per_dim[1], per_dim[1]), None


class Conv2d(_nn.Conv2d):
    """mint.nn.Conv2d(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
    padding_mode='zeros', dtype=None): PyTorch's Conv2d on (N, C, H, W): padding an int or (h, w) added to each
    side, or 'same'/'valid'; padding_mode 'zeros', 'reflect', 'replicate' or 'circular' (the input padded by F.pad
    first). Weight HeUniform(√5), bias Uniform(1/√fan_in) (PyTorch's). A kiln.nn.Conv2d."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", dtype=None):
        pad_mode, pad, self._prepad = _conv_args("Conv2d", padding, padding_mode, 2)
        super().__init__(in_channels, out_channels, kernel_size, stride, pad_mode, pad, dilation, groups,
                         _bool(bias, "bias", "Conv2d"), dtype=_dtype(dtype))
        self.padding_mode = padding_mode

    def construct(self, x):
        if self._prepad is not None:
            x = _ops.pad(x, self._prepad, self.padding_mode)
        return super().construct(x)


class Conv1d(_nn.Conv1d):
    """mint.nn.Conv1d(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
    padding_mode='zeros', dtype=None): PyTorch's Conv1d on (N, C, L), as mint.nn.Conv2d. A kiln.nn.Conv1d."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", dtype=None):
        pad_mode, pad, self._prepad = _conv_args("Conv1d", padding, padding_mode, 1)
        super().__init__(in_channels, out_channels, kernel_size, stride, pad_mode, pad, dilation, groups,
                         _bool(bias, "bias", "Conv1d"), dtype=_dtype(dtype))
        self.padding_mode = padding_mode

    def construct(self, x):
        if self._prepad is not None:
            x = _ops.pad(x, self._prepad, self.padding_mode)
        return super().construct(x)


def _bn_kwargs(cls, eps, momentum, affine, track_running_stats, dtype):
    if isinstance(momentum, bool) or not isinstance(momentum, numbers.Real) or not 0.0 <= momentum <= 1.0:
        raise ValueError(f"For 'mint.nn.{cls}', 'momentum' must be a float in [0, 1], but got {momentum!r}.")
    _bool(track_running_stats, "track_running_stats", cls)
    return dict(eps=eps, momentum=1.0 - float(momentum), affine=_bool(affine, "affine", cls),
                use_batch_statistics=None if track_running_stats else True, dtype=_dtype(dtype))


def _batch_norm(base, nd_doc):
    class BatchNorm(_TorchNames, base):
        __doc__ = (f"mint.nn.{base.__name__}(num_features, eps=1e-5, momentum=0.1, affine=True, "
                   f"track_running_stats=True, dtype=None): batch normalization of {nd_doc} inputs, PyTorch's "
                   "convention: running = (1 − momentum)·running + momentum·batch statistic (kiln.nn's momentum is "
                   "1 − this); track_running_stats=False normalizes with the batch statistics in eval too. "
                   "Parameters weight, bias, running_mean, running_var and num_batches_tracked (Int64, 0-d: the "
                   "training forward passes counted while track_running_stats), as MindSpore's mint.nn. "
                   f"A kiln.nn.{base.__name__}.")

        _TORCH_NAMES = _BN_NAMES

        def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                     dtype=None):
            super().__init__(num_features, **_bn_kwargs(base.__name__, eps, momentum, affine, track_running_stats,
                                                        dtype))
            self.track_running_stats = track_running_stats
            self._use_torch_names()
            self.num_batches_tracked = Parameter(Tensor(np.array(0, np.int64)), name="num_batches_tracked",
                                                 requires_grad=False)

        def construct(self, x):
            if self.training and self.track_running_stats:
                _ops.assign_add(self.num_batches_tracked, _ONE_I64)
            return super().construct(x)

    BatchNorm.__name__ = BatchNorm.__qualname__ = base.__name__
    BatchNorm.__module__ = __name__
    return BatchNorm


BatchNorm1d = _batch_norm(_nn.BatchNorm1d, "(N, C) or (N, C, L)")
BatchNorm2d = _batch_norm(_nn.BatchNorm2d, "(N, C, H, W)")
BatchNorm3d = _batch_norm(_nn.BatchNorm3d, "(N, C, D, H, W)")


class LayerNorm(_TorchNames, _nn.LayerNorm):
    """mint.nn.LayerNorm(normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, dtype=None): normalizes
    over the trailing dims `normalized_shape` (an int or a tuple), then ·weight + bias; elementwise_affine=False
    keeps weight = 1 and bias = 0 fixed (not trainable), bias=False keeps bias = 0 fixed. A kiln.nn.LayerNorm
    (whose gamma/beta are these weight/bias)."""

    _TORCH_NAMES = _NORM_NAMES

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, dtype=None):
        shape = (normalized_shape,) if isinstance(normalized_shape, numbers.Integral) else tuple(normalized_shape)
        n = len(shape)
        super().__init__(shape, begin_norm_axis=-n, begin_params_axis=-n, epsilon=eps, dtype=_dtype(dtype))
        self.elementwise_affine = _bool(elementwise_affine, "elementwise_affine", "LayerNorm")
        self.gamma.requires_grad = elementwise_affine
        self.beta.requires_grad = elementwise_affine and _bool(bias, "bias", "LayerNorm")
        self._use_torch_names()


class GroupNorm(_TorchNames, _nn.GroupNorm):
    """mint.nn.GroupNorm(num_groups, num_channels, eps=1e-5, affine=True, dtype=None): group normalization of
    (N, C, *) inputs, Parameters weight/bias (MindSpore's mint names). A kiln.nn.GroupNorm (gamma/beta)."""

    _TORCH_NAMES = _NORM_NAMES

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, dtype=None):
        super().__init__(num_groups, num_channels, eps=eps, affine=affine,
                         **({} if dtype is None else {"dtype": dtype}))
        self._use_torch_names()


class Embedding(_TorchNames, _nn.Embedding):
    """mint.nn.Embedding(num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
    scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False, dtype=None): a lookup table of
    num_embeddings vectors, initialized N(0, 1) (PyTorch's; the padding_idx row zeros) or from `_weight` (a Tensor
    of shape (num_embeddings, embedding_dim)); _freeze=True makes it not trainable. Kiln takes max_norm=None,
    scale_grad_by_freq=False and sparse=False only (ValueError otherwise: the renormalizing lookup and sparse
    gradients are not Kiln ops). A kiln.nn.Embedding."""

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False, dtype=None):
        for name, value, ok in (("max_norm", max_norm, None), ("scale_grad_by_freq", scale_grad_by_freq, False),
                                ("sparse", sparse, False)):
            if value is not ok:
                raise ValueError(f"For 'mint.nn.Embedding', Kiln supports {name}={ok!r} only, but got {value!r}.")
        table = Normal(1.0) if _weight is None else _weight
        if _weight is not None and (not isinstance(_weight, Tensor) or
                                    tuple(_weight.shape) != (num_embeddings, embedding_dim)):
            raise ValueError(f"For 'mint.nn.Embedding', '_weight' must be a Tensor of shape "
                             f"{(num_embeddings, embedding_dim)}, but got {getattr(_weight, 'shape', _weight)}.")
        super().__init__(num_embeddings, embedding_dim, embedding_table=table, padding_idx=padding_idx,
                         **({} if dtype is None else {"dtype": dtype}))
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.embedding_table.requires_grad = not _bool(_freeze, "_freeze", "Embedding")
        self._use_torch_names()

    _TORCH_NAMES = {"embedding_table": "weight"}


class Dropout(_nn.Dropout):
    """mint.nn.Dropout(p=0.5, inplace=False): in training, each element zeroed with probability p and the others
    scaled by 1/(1 − p); the identity in eval (set_train(False)). A kiln.nn.Dropout."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__(p=p)
        self.inplace = _bool(inplace, "inplace", "Dropout")

    def construct(self, x):
        y = super().construct(x)
        return _indexing.assign(x, y, "mint.nn.Dropout") if self.inplace and self.training else y


class Dropout2d(_nn.Dropout2d):
    """mint.nn.Dropout2d(p=0.5, inplace=False): whole channels of (N, C, H, W) zeroed with probability p in
    training, the others scaled by 1/(1 − p). A kiln.nn.Dropout2d."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__(p=p)
        self.inplace = _bool(inplace, "inplace", "Dropout2d")

    def construct(self, x):
        y = super().construct(x)
        return _indexing.assign(x, y, "mint.nn.Dropout2d") if self.inplace and self.training else y


class GELU(_nn.GELU):
    """mint.nn.GELU(approximate='none'): x·Φ(x) with erf ('none') or the tanh approximation ('tanh'). A
    kiln.nn.GELU (whose own flag is approximate=True for 'tanh')."""

    def __init__(self, approximate="none"):
        if approximate not in ("none", "tanh"):
            raise ValueError(f"For 'mint.nn.GELU', 'approximate' must be 'none' or 'tanh', but got {approximate!r}.")
        super().__init__(approximate=approximate == "tanh")


class ReLU6(_nn.ReLU6):
    """mint.nn.ReLU6(inplace=False): min(max(x, 0), 6); inplace=True writes the result into the input."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = _bool(inplace, "inplace", "ReLU6")

    def construct(self, x):
        y = super().construct(x)
        return _indexing.assign(x, y, "mint.nn.ReLU6") if self.inplace else y


class SiLU(_nn.SiLU):
    """mint.nn.SiLU(inplace=False): x·sigmoid(x); inplace=True writes the result into the input."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = _bool(inplace, "inplace", "SiLU")

    def construct(self, x):
        y = super().construct(x)
        return _indexing.assign(x, y, "mint.nn.SiLU") if self.inplace else y


class ELU(_nn.ELU):
    """mint.nn.ELU(alpha=1.0, inplace=False): x for x > 0, alpha·(eˣ − 1) otherwise; inplace=True writes the
    result into the input."""

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__(alpha)
        self.inplace = _bool(inplace, "inplace", "ELU")

    def construct(self, x):
        y = super().construct(x)
        return _indexing.assign(x, y, "mint.nn.ELU") if self.inplace else y


class Softmax(_nn.Softmax):
    """mint.nn.Softmax(dim=None): softmax along `dim` (None: PyTorch's implicit dim, 0 for 0/1/3-D inputs, else 1)."""

    def __init__(self, dim=None):
        super().__init__(-1 if dim is None else dim)
        self.dim = dim

    def construct(self, x):
        return F.softmax(x, self.dim)


class LogSoftmax(_nn.LogSoftmax):
    """mint.nn.LogSoftmax(dim=None): log-softmax along `dim` (None as mint.nn.Softmax)."""

    def __init__(self, dim=None):
        super().__init__(-1 if dim is None else dim)
        self.dim = dim

    def construct(self, x):
        return F.log_softmax(x, self.dim)


class MaxPool2d(_nn.MaxPool2d):
    """mint.nn.MaxPool2d(kernel_size=1, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
    max pooling of (N, C, H, W) or (C, H, W); stride None = kernel_size; padding an int or (h, w) on each side
    (at most half the kernel). A kiln.nn.MaxPool2d."""

    def __init__(self, kernel_size=1, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__(kernel_size, kernel_size if stride is None else stride, "pad",
                         padding, dilation, return_indices, ceil_mode)


class AvgPool2d(_nn.AvgPool2d):
    """mint.nn.AvgPool2d(kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
    divisor_override=None): average pooling of (N, C, H, W) or (C, H, W); stride None = kernel_size. A
    kiln.nn.AvgPool2d."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__(kernel_size, kernel_size if stride is None else stride, "pad" if padding else "valid",
                         padding, ceil_mode, count_include_pad, divisor_override)


class AvgPool1d(_nn.AvgPool1d):
    """mint.nn.AvgPool1d(kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True): average
    pooling of (N, C, L); stride None = kernel_size. A kiln.nn.AvgPool1d."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
        super().__init__(kernel_size, kernel_size if stride is None else stride, "pad" if padding else "valid",
                         padding, ceil_mode, count_include_pad)


class BCEWithLogitsLoss(_nn.BCEWithLogitsLoss):
    """mint.nn.BCEWithLogitsLoss(weight=None, reduction='mean', pos_weight=None) (kiln.nn's takes reduction first)."""

    def __init__(self, weight=None, reduction="mean", pos_weight=None):
        super().__init__(reduction, weight, pos_weight)


class SmoothL1Loss(_nn.SmoothL1Loss):
    """mint.nn.SmoothL1Loss(reduction='mean', beta=1.0): PyTorch's order and default reduction ('mean'; kiln.nn's
    default is 'none')."""

    def __init__(self, reduction="mean", beta=1.0):
        super().__init__(float(beta) if isinstance(beta, int) and not isinstance(beta, bool) else beta, reduction)


class KLDivLoss(_nn.KLDivLoss):
    """mint.nn.KLDivLoss(reduction='mean', log_target=False): F.kl_div(input, target, reduction, log_target)."""

    def __init__(self, reduction="mean", log_target=False):
        super().__init__(reduction)
        self.log_target = _bool(log_target, "log_target", "KLDivLoss")
        self._reduction = reduction

    def construct(self, input, target):
        return F.kl_div(input, target, self._reduction, self.log_target)


class PReLU(_TorchNames, _nn.PReLU):
    """mint.nn.PReLU(num_parameters=1, init=0.25, dtype=None): max(0, x) + w·min(0, x) with one learnable w per
    channel (num_parameters = 1 or C), initialized to `init`. A kiln.nn.PReLU."""

    def __init__(self, num_parameters=1, init=0.25, dtype=None):
        if dtype is not None and dtype != _dtype(None):
            raise ValueError(f"For 'mint.nn.PReLU', Kiln's PReLU weight is Float32; got dtype={dtype}.")
        super().__init__(channel=num_parameters, w=init)
        self._use_torch_names()

    _TORCH_NAMES = {"w": "weight"}


# ---------------------------------------------------------------------------------------------- padding layers

def _pad_amounts(padding, nd, cls):
    """PyTorch's padding of an N-d pad layer: an int (every side) or 2·N ints (left, right, top, bottom, ...)."""
    if isinstance(padding, numbers.Integral) and not isinstance(padding, bool):
        return (int(padding),) * (2 * nd)
    if isinstance(padding, (tuple, list)) and len(padding) == 2 * nd and all(
            isinstance(p, numbers.Integral) and not isinstance(p, bool) for p in padding):
        return tuple(int(p) for p in padding)
    raise TypeError(f"For 'mint.nn.{cls}', 'padding' must be an int or a tuple of {2 * nd} ints, but got "
                    f"{padding!r}.")


class _PadNd(Cell):
    _nd = 1
    _mode = "constant"

    def __init__(self, padding, value=0.0):
        super().__init__()
        self.padding = _pad_amounts(padding, self._nd, type(self).__name__)
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"For 'mint.nn.{type(self).__name__}', 'value' must be a number, but got "
                            f"{type(value).__name__}.")
        self.value = float(value)

    def construct(self, x):
        if self._mode == "constant":
            return F.pad(x, self.padding, "constant", self.value)
        return F.pad(x, self.padding, self._mode)

    def extend_repr(self):
        return f"padding={self.padding}" + (f", value={self.value}" if self._mode == "constant" else "")


def _pad_class(name, nd, mode, with_value):
    what = {"constant": "the constant `value`" if with_value else "zeros", "reflect": "the reflection of the input "
            "(mirror without the edge)", "replicate": "copies of the edge values"}[mode]

    if with_value:
        def __init__(self, padding, value):
            _PadNd.__init__(self, padding, value)
        sig = "padding, value"
    else:
        def __init__(self, padding):
            _PadNd.__init__(self, padding, 0.0)
        sig = "padding"
    doc = (f"mint.nn.{name}({sig}): pads the last {nd} dim(s) of the input with {what}; padding an int (each "
           f"side) or {2 * nd} ints (left, right{', top, bottom' if nd > 1 else ''}{', front, back' if nd > 2 else ''})"
           f" (F.pad, mode '{mode}').")
    cls = type(name, (_PadNd,), {"_nd": nd, "_mode": mode, "__init__": __init__, "__doc__": doc,
                                 "__module__": __name__})
    return cls


for _nd in (1, 2, 3):
    for _name, _mode, _value in (("ConstantPad", "constant", True), ("ZeroPad", "constant", False),
                                 ("ReflectionPad", "reflect", False), ("ReplicationPad", "replicate", False)):
        globals()[f"{_name}{_nd}d"] = _pad_class(f"{_name}{_nd}d", _nd, _mode, _value)
        __all__.append(f"{_name}{_nd}d")


class Hardsigmoid(Cell):
    """mint.nn.Hardsigmoid(): max(0, min(1, x/6 + 1/2)) (ops.hardsigmoid)."""

    def construct(self, x):
        return _ops.hardsigmoid(x)


class SoftMarginLoss(Cell):
    """mint.nn.SoftMarginLoss(reduction='mean'): log(1 + e^(−y·x)) reduced by 'none', 'mean' or 'sum'
    (ops.soft_margin_loss)."""

    def __init__(self, reduction="mean"):
        super().__init__()
        if reduction not in ("none", "mean", "sum"):
            raise ValueError(f"For 'mint.nn.SoftMarginLoss', 'reduction' must be 'none', 'mean' or 'sum', but got "
                             f"{reduction!r}.")
        self.reduction = reduction

    def construct(self, input, target):
        return _ops.soft_margin_loss(input, target, self.reduction)


class UpsamplingNearest2d(Cell):
    """mint.nn.UpsamplingNearest2d(size=None, scale_factor=None): nearest-neighbour upsampling of (N, C, H, W) to
    `size` or by `scale_factor` (exactly one of them) (ops.interpolate, mode 'nearest')."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__()
        if (size is None) == (scale_factor is None):
            raise ValueError("For 'mint.nn.UpsamplingNearest2d', give exactly one of 'size' and 'scale_factor'.")
        self.size, self.scale_factor = size, scale_factor

    def construct(self, x):
        return _ops.interpolate(x, self.size, self.scale_factor, "nearest")


class UpsamplingBilinear2d(Cell):
    """mint.nn.UpsamplingBilinear2d(size=None, scale_factor=None): bilinear upsampling of (N, C, H, W) with
    align_corners=True (PyTorch's UpsamplingBilinear2d) to `size` or by `scale_factor` (exactly one of them)
    (ops.interpolate)."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__()
        if (size is None) == (scale_factor is None):
            raise ValueError("For 'mint.nn.UpsamplingBilinear2d', give exactly one of 'size' and 'scale_factor'.")
        self.size, self.scale_factor = size, scale_factor

    def construct(self, x):
        return _ops.interpolate(x, self.size, self.scale_factor, "bilinear", True)


__all__ += ["Hardsigmoid", "SoftMarginLoss", "UpsamplingNearest2d", "UpsamplingBilinear2d"]

from ._layers_more import (AvgPool3d, GLU, Hardshrink, Hardswish, Hardtanh, PixelShuffle, SELU,  # noqa: E402,F401 (re-export: listed by _more_layers below)
                           Softshrink, Threshold)
from ._layers_more import __all__ as _more_layers  # noqa: E402 (next to the import above)

AdaptiveAvgPool3d = _nn.AdaptiveAvgPool3d  # the same constructor (output_size)
AdaptiveMaxPool2d = _nn.AdaptiveMaxPool2d  # the same constructor (output_size, return_indices=False)
__all__.extend(_more_layers)
__all__ += ["AdaptiveAvgPool3d", "AdaptiveMaxPool2d"]
