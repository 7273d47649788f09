"""Normalization layers: MindSpore's nn.BatchNorm1d, nn.BatchNorm2d, nn.LayerNorm, nn.GroupNorm (MindSpore 2.x
mindspore/nn/layer/normalization.py for names, defaults, Parameters and checks).

BatchNorm: in training (or with use_batch_statistics=True) the batch mean and the biased batch variance normalize
the input, and the moving statistics are updated in place with `ops.assign`, with the UNBIASED batch variance:
    moving_mean     = momentum·moving_mean     + (1 − momentum)·batch_mean
    moving_variance = momentum·moving_variance + (1 − momentum)·batch_var·M/(M − 1)
where M is the number of elements per channel (N for (N, C), N·L or N·H·W otherwise) — what MindSpore 2.x gives
(BatchNorm1d(2, momentum=0.9) on [[1,2],[3,6],[5,7],[7,1]] leaves moving_variance = [1.5667, 1.7667]) and
PyTorch's running_var. M = 1 would divide by zero (MindSpore stores NaN); Kiln raises ValueError instead, as
PyTorch does ("Expected more than 1 value per channel when training"). The assigns are recorded side effects in
graph mode, so PyNative and compiled training update the statistics identically. In evaluation the moving
statistics normalize.
"""
import numbers

from ... import ops as _ops
from ...common.tensor import Tensor as _Tensor
from ...ops import _kernels
from ...common import dtype as mstype
from ...common.initializer import initializer
from ...common.parameter import Parameter
from ...ops import nn_func as NF
from .._check import check_input
from ..cell import Cell
from .basic import _check_positive_int

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LayerNorm", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d",
           "InstanceNorm3d"]


class _BatchNorm(Cell):
    """Batch normalization base: Parameters `gamma`, `beta` (trainable when affine), `moving_mean`,
    `moving_variance` (not trainable; their Parameter names are 'mean' and 'variance', as MindSpore's, prefixed with
    the cell's path once the layer sits in a network)."""

    _dims = ()

    # Under to_float the kernel takes a low-precision x with float32 scale/bias/statistics (as MindSpore's
    # BatchNorm): its Parameters are not cast (nn/_mixed_precision.py).
    _mp_casts_params = True

    def __init__(self, num_features, eps=1e-5, momentum=0.9, affine=True, gamma_init="ones", beta_init="zeros",
                 moving_mean_init="zeros", moving_var_init="ones", use_batch_statistics=None, data_format="NCHW",
                 dtype=mstype.float32):
        super().__init__()
        name = self.cls_name
        if isinstance(num_features, bool) or not isinstance(num_features, numbers.Integral):
            raise TypeError(f"For '{name}', the 'num_features' must be int, but got {type(num_features).__name__}.")
        if num_features < 1:
            raise ValueError(f"For '{name}', the 'num_features' must be at least 1, but got {num_features}.")
        if isinstance(eps, bool) or not isinstance(eps, numbers.Real):
            raise TypeError(f"For '{name}', the 'eps' must be float, but got {type(eps).__name__}.")
        if isinstance(momentum, bool) or not isinstance(momentum, numbers.Real) or momentum < 0 or momentum > 1:
            raise ValueError(f"For '{name}', the 'momentum' must be a number in range [0, 1], but got {momentum}.")
        if data_format not in ("NCHW", "NHWC"):
            raise ValueError(f"For '{name}', the 'format' must be one of ['NCHW', 'NHWC'], but got {data_format!r}.")
        if data_format == "NHWC":
            raise ValueError(f"For '{name}', the 'NHWC' format only support in GPU target, but got device target CPU.")
        if use_batch_statistics is not None and not isinstance(use_batch_statistics, bool):
            raise ValueError(f"For '{name}', the 'use_batch_statistics' must be a boolean value or None, but got "
                             f"{use_batch_statistics}.")
        self.num_features = int(num_features)
        self.eps = float(eps)
        self.momentum = float(momentum)
        self.affine = affine
        self.use_batch_statistics = use_batch_statistics
        self.format = data_format
        self.moving_mean = Parameter(initializer(moving_mean_init, num_features, dtype=dtype), name="mean",
                                     requires_grad=False)
        self.moving_variance = Parameter(initializer(moving_var_init, num_features, dtype=dtype), name="variance",
                                         requires_grad=False)
        self.gamma = Parameter(initializer(gamma_init, num_features, dtype=dtype), name="gamma", requires_grad=affine)
        self.beta = Parameter(initializer(beta_init, num_features, dtype=dtype), name="beta", requires_grad=affine)

    def _check_input(self, x):
        name = self.cls_name
        if not isinstance(x, _Tensor):
            raise TypeError(f"For '{name}', the input must be a Tensor, but got {type(x).__name__}.")
        if x.ndim not in self._dims:
            raise ValueError(f"For '{name}', the input must have {' or '.join(map(str, self._dims))} dims, but got "
                             f"{x.ndim} (shape {tuple(x.shape)}).")
        if x.shape[1] != self.num_features:
            raise ValueError(f"For '{name}', the input channels (x.shape[1]) must be equal to num_features "
                             f"{self.num_features}, but got {x.shape[1]} (x shape {tuple(x.shape)}).")

    def construct(self, x):
        self._check_input(x)
        use_batch = self.training if self.use_batch_statistics is None else self.use_batch_statistics
        mm, mv = self.moving_mean, self.moving_variance
        if use_batch:
            unbias = NF._unbias_factor(x, self.cls_name)
        y, bm, bv = _kernels.batch_norm(x, self.gamma, self.beta, mm, mv, use_batch, self.eps)
        if use_batch:
            m = self.momentum
            _kernels.assign(mm, _ops.add(_ops.mul(mm, m), _ops.mul(_kernels.stop_gradient(bm), 1.0 - m)))
            _kernels.assign(mv, _ops.add(_ops.mul(mv, m), _ops.mul(_kernels.stop_gradient(bv), (1.0 - m) * unbias)))
        return y

    def extend_repr(self):
        return (f"num_features={self.num_features}, eps={self.eps}, momentum={self.momentum}, gamma={self.gamma}, "
                f"beta={self.beta}, moving_mean={self.moving_mean}, moving_variance={self.moving_variance}")


class BatchNorm1d(_BatchNorm):
    r"""Batch normalization over (N, C) or (N, C, L): statistics per channel C over the other axes.

    Args: num_features (int ≥ 1), eps (1e-5), momentum (0.9, in [0, 1]), affine (True), gamma_init ('ones'),
    beta_init ('zeros'), moving_mean_init ('zeros'), moving_var_init ('ones'), use_batch_statistics (None: batch
    statistics while training, moving ones in evaluation; True/False force one), data_format ('NCHW'), dtype.
    Raises ValueError for an input of another rank or channel count.
    """
    _dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    r"""Batch normalization over (N, C, H, W): statistics per channel over (N, H, W). Args as BatchNorm1d.
    Raises ValueError for an input that is not 4-D ("For 'BatchNorm2d', the input must have 4 dims, ...") or whose
    channel count differs from num_features."""
    _dims = (4,)


class BatchNorm3d(_BatchNorm):
    r"""Batch normalization over (N, C, D, H, W): statistics per channel over (N, D, H, W). Args as BatchNorm1d
    (data_format 'NCDHW' is the only layout). Raises ValueError for an input that is not 5-D or whose channel count
    differs from num_features."""
    _dims = (5,)

    def __init__(self, num_features, eps=1e-5, momentum=0.9, affine=True, gamma_init="ones", beta_init="zeros",
                 moving_mean_init="zeros", moving_var_init="ones", use_batch_statistics=None, data_format="NCDHW",
                 dtype=mstype.float32):
        if data_format != "NCDHW":
            raise ValueError(f"For 'BatchNorm3d', the 'data_format' must be 'NCDHW', but got {data_format!r}.")
        super().__init__(num_features, eps, momentum, affine, gamma_init, beta_init, moving_mean_init,
                         moving_var_init, use_batch_statistics, "NCHW", dtype)


class LayerNorm(Cell):
    r"""Layer normalization: y = (x − E[x]) / √(Var[x] + ε) · γ + β over axes begin_norm_axis … R − 1 (biased
    variance); γ, β have shape normalized_shape = x.shape[begin_params_axis:].

    Args: normalized_shape (tuple/list of ints), begin_norm_axis (-1), begin_params_axis (-1), gamma_init ('ones'),
    beta_init ('zeros'), epsilon (1e-7, MindSpore's default), dtype.
    Attribute `layer_norm`: MindSpore's ops.LayerNorm primitive with these axes and epsilon, returning (y, mean,
    variance) — what subclasses call in their construct.
    Raises TypeError if normalized_shape is not a tuple/list, ValueError if it is empty or does not match the input.
    """

    def __init__(self, normalized_shape, begin_norm_axis=-1, begin_params_axis=-1, gamma_init="ones",
                 beta_init="zeros", epsilon=1e-7, dtype=mstype.float32):
        super().__init__()
        name = self.cls_name
        if not isinstance(normalized_shape, (tuple, list)):
            raise TypeError(f"For '{name}', the type of 'normalized_shape' must be tuple[int] or list[int], but got "
                            f"{normalized_shape} and the type is {type(normalized_shape)}.")
        if not normalized_shape:
            raise ValueError(f"Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
                             f"element, but got normalized_shape = {normalized_shape}")
        for n, v in (("begin_norm_axis", begin_norm_axis), ("begin_params_axis", begin_params_axis)):
            if isinstance(v, bool) or not isinstance(v, int):
                raise TypeError(f"For '{name}', the '{n}' must be int, but got {type(v).__name__}.")
        if isinstance(epsilon, bool) or not isinstance(epsilon, float):
            raise TypeError(f"For '{name}', the 'epsilon' must be float, but got {type(epsilon).__name__}.")
        self.normalized_shape = normalized_shape
        self.begin_norm_axis = begin_norm_axis
        self.begin_params_axis = begin_params_axis
        self.epsilon = epsilon
        self.gamma = Parameter(initializer(gamma_init, normalized_shape, dtype=dtype), name="gamma")
        self.beta = Parameter(initializer(beta_init, normalized_shape, dtype=dtype), name="beta")
        # MindSpore's attribute: the LayerNorm primitive, which model-zoo subclasses call in their construct
        # (`y, _, _ = self.layer_norm(x, self.gamma, self.beta)`, e.g. mindcv's ConvNextLayerNorm)
        from ...ops.primitives_nn import LayerNorm as _LayerNormPrim
        self.layer_norm = _LayerNormPrim(begin_norm_axis, begin_params_axis, epsilon)

    def construct(self, input_x):
        check_input(input_x, self.cls_name, "input_x")
        return _kernels.layer_norm(input_x, self.gamma, self.beta, self.begin_norm_axis, self.begin_params_axis,
                                self.epsilon)

    def extend_repr(self):
        return (f"normalized_shape={self.normalized_shape}, begin_norm_axis={self.begin_norm_axis}, "
                f"begin_params_axis={self.begin_params_axis}, gamma{self.gamma}, beta={self.beta}")


class GroupNorm(Cell):
    r"""Group normalization over (N, C, *): C split into num_groups groups, statistics over each group and all
    positions (biased variance), then per-channel γ, β ((num_channels,)).

    Args: num_groups, num_channels (positive ints, num_channels divisible by num_groups), eps (1e-5), affine (True),
    gamma_init ('ones'), beta_init ('zeros'), dtype.
    Raises ValueError for an input whose channel count differs from num_channels.
    """

    def __init__(self, num_groups, num_channels, eps=1e-05, affine=True, gamma_init="ones", beta_init="zeros",
                 dtype=mstype.float32):
        super().__init__()
        name = self.cls_name
        self.num_groups = _check_positive_int(num_groups, "num_groups", name)
        self.num_channels = _check_positive_int(num_channels, "num_channels", name)
        if num_channels % num_groups != 0:
            raise ValueError(f"For '{name}', the 'num_channels' must be divided by 'num_groups', but got "
                             f"'num_channels': {num_channels}, 'num_groups': {num_groups}.")
        if not isinstance(eps, float):
            raise TypeError(f"For '{name}', the 'eps' must be float, but got {type(eps).__name__}.")
        if not isinstance(affine, bool):
            raise TypeError(f"For '{name}', the 'affine' must be bool, but got {type(affine).__name__}.")
        self.eps = eps
        self.affine = affine
        self.gamma = Parameter(initializer(gamma_init, num_channels, dtype=dtype), name="gamma", requires_grad=affine)
        self.beta = Parameter(initializer(beta_init, num_channels, dtype=dtype), name="beta", requires_grad=affine)

    def construct(self, x):
        if check_input(x, self.cls_name).ndim < 2 or x.shape[1] != self.num_channels:
            raise ValueError(f"For '{self.cls_name}', the channel(the second dim of the input 'x') must be equal to "
                             f"num_channels, but got channel: {x.shape[1] if x.ndim > 1 else None}, num_channels: "
                             f"{self.num_channels}.")
        return NF.group_norm(x, self.num_groups, self.gamma, self.beta, self.eps)

    def extend_repr(self):
        return f"num_groups={self.num_groups}, num_channels={self.num_channels}"


class _InstanceNorm(Cell):
    r"""Instance normalization (Ulyanov et al. 2016): each (sample, channel) plane normalized by its own mean and
    biased variance, y = (x − mean)/sqrt(var + eps)·gamma + beta, in training and in evaluation alike (MindSpore's
    InstanceNorm kernel); Kiln runs it as a GroupNorm with one group per channel.

    The moving statistics `mean`/`variance` (not trainable) are kept as MindSpore's and PyTorch's running stats: in
    training, moving = (1 − momentum)·moving + momentum·s with s the batch average of the per-instance mean and
    unbiased variance. They do not enter the output.

    Args: num_features (int ≥ 1), eps (1e-5), momentum (0.1, in [0, 1]), affine (True: trainable gamma/beta),
    gamma_init ('ones'), beta_init ('zeros'), dtype (float32).
    Raises TypeError / ValueError for bad arguments, an input of the wrong rank or channel count, and (in training)
    a plane of a single element (its unbiased variance divides by zero)."""

    _dims = ()

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, gamma_init="ones", beta_init="zeros",
                 dtype=mstype.float32):
        super().__init__()
        name = self.cls_name
        self.num_features = _check_positive_int(num_features, "num_features", name)
        if isinstance(eps, bool) or not isinstance(eps, numbers.Real) or eps <= 0:
            raise ValueError(f"For '{name}', the 'eps' must be a positive float, but got {eps!r}.")
        if isinstance(momentum, bool) or not isinstance(momentum, numbers.Real) or not 0 <= momentum <= 1:
            raise ValueError(f"For '{name}', the 'momentum' must be a number in range [0, 1], but got {momentum!r}.")
        if not isinstance(affine, bool):
            raise TypeError(f"For '{name}', the 'affine' must be bool, but got {type(affine).__name__}.")
        self.eps, self.momentum, self.affine = float(eps), float(momentum), affine
        self.moving_mean = Parameter(initializer("zeros", num_features, dtype=dtype), name="mean",
                                     requires_grad=False)
        self.moving_variance = Parameter(initializer("ones", num_features, dtype=dtype), name="variance",
                                         requires_grad=False)
        self.gamma = Parameter(initializer(gamma_init, num_features, dtype=dtype), name="gamma", requires_grad=affine)
        self.beta = Parameter(initializer(beta_init, num_features, dtype=dtype), name="beta", requires_grad=affine)

    def construct(self, x):
        name = self.cls_name
        check_input(x, name)
        if x.ndim not in self._dims or x.shape[1] != self.num_features:
            raise ValueError(f"For '{name}', the input must have {self._dims[0]} dims with {self.num_features} "
                             f"channels on axis 1, but got shape {tuple(x.shape)}.")
        y = NF.group_norm(x, self.num_features, self.gamma, self.beta, self.eps)
        if self.training:
            axes = list(range(2, x.ndim))
            m = 1
            for d in x.shape[2:]:
                m *= d
            if m < 2:
                raise ValueError(f"For '{name}', each plane needs more than 1 value in training, but got input shape "
                                 f"{tuple(x.shape)}.")
            xs = _kernels.stop_gradient(x)
            mean = _kernels.mean(xs, axes, True)
            var = _kernels.div(_kernels.sum(_ops.square(_ops.sub(xs, mean)), axes, False), float(m - 1))
            mom = self.momentum
            mm, mv = self.moving_mean, self.moving_variance
            _kernels.assign(mm, _ops.add(_ops.mul(mm, 1.0 - mom), _ops.mul(_kernels.mean(_kernels.squeeze(mean, axes),
                                                                                       [0], False), mom)))
            _kernels.assign(mv, _ops.add(_ops.mul(mv, 1.0 - mom), _ops.mul(_kernels.mean(var, [0], False), mom)))
        return y

    def extend_repr(self):
        return (f"num_features={self.num_features}, eps={self.eps}, momentum={self.momentum}, gamma={self.gamma}, "
                f"beta={self.beta}, moving_mean={self.moving_mean}, moving_variance={self.moving_variance}")


class InstanceNorm1d(_InstanceNorm):
    """Instance normalization of (N, C, L) inputs; see _InstanceNorm."""
    _dims = (3,)


class InstanceNorm2d(_InstanceNorm):
    """Instance normalization of (N, C, H, W) inputs; see _InstanceNorm."""
    _dims = (4,)


class InstanceNorm3d(_InstanceNorm):
    """Instance normalization of (N, C, D, H, W) inputs; see _InstanceNorm."""
    _dims = (5,)
