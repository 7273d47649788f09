"""Basic layers: Dense, Flatten, Identity, Dropout, Pad, ClipByNorm (MindSpore's `nn.Dense`, ...; ../shared/reference/mindspore_api.md
§4.1)."""
import math
import numbers

from ... import ops as _ops
from ...common.tensor import Tensor as _Tensor
from ...ops import _kernels
from ...common import dtype as mstype
from ...common.initializer import HeUniform, Uniform, initializer
from ...common.parameter import Parameter
from ...ops import function as F
from ...ops.primitives import Primitive
from .._check import check_input
from ..cell import Cell
from .activation import get_activation

__all__ = ["Dense", "Flatten", "Identity", "Dropout", "Dropout2d", "Dropout3d", "Pad", "ClipByNorm", "Unfold"]


def _check_positive_int(value, name, cls_name):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"For '{cls_name}', the '{name}' must be int, but got {type(value).__name__}.")
    if value <= 0:
        raise ValueError(f"For '{cls_name}', the '{name}' must be a positive int, but got {value}.")
    return int(value)


class Dense(Cell):
    r"""Fully connected layer: y = activation(x · Wᵀ + b).

    Args:
        in_channels (int), out_channels (int): positive.
        weight_init: Initializer / name / number / Tensor of shape (out_channels, in_channels). Default
            HeUniform(negative_slope=√5), i.e. W ~ U(−1/√in_channels, 1/√in_channels).
        bias_init: likewise for the (out_channels,) bias. Default Uniform(1/√in_channels).
        has_bias (bool): default True.
        activation: None, a name for get_activation ('relu', ...), a Cell or a Primitive.
        dtype: Parameter dtype (default float32).

    Inputs: x of shape (*, in_channels) with rank ≥ 2 (ranks > 2 are flattened to (−1, in_channels) and the result
    reshaped to (*, out_channels)).

    Parameters: `weight` (out_channels, in_channels), `bias` (out_channels,).
    Attributes (MindSpore's, for subclasses): `matmul` (MatMul(transpose_b=True)), `bias_add` (BiasAdd),
    `reshape`, `shape_op`.

    Raises:
        TypeError / ValueError: bad channel counts, has_bias not bool, activation of another type.
        ValueError: a Tensor init of the wrong shape; input of rank < 2
            ("For 'Dense', the dimension of 'x' should not be less than 2, but got 1.").
    """

    _mp_casts_params = True  # casts its weight and bias under to_float itself (nn/_mixed_precision.py)

    def __init__(self, in_channels, out_channels, weight_init=None, bias_init=None, has_bias=True, activation=None,
                 dtype=mstype.float32):
        super().__init__()
        name = type(self).__name__
        self.in_channels = _check_positive_int(in_channels, "in_channels", name)
        self.out_channels = _check_positive_int(out_channels, "out_channels", name)
        if not isinstance(has_bias, bool):
            raise TypeError(f"For '{name}', the 'has_bias' must be bool, but got {type(has_bias).__name__}.")
        self.has_bias = has_bias
        if isinstance(weight_init, _Tensor):
            if weight_init.ndim != 2 or weight_init.shape[0] != out_channels or weight_init.shape[1] != in_channels:
                raise ValueError(f"For '{name}', weight init shape error. The ndim of 'weight_init' must be equal "
                                 f"to 2, and the first dim must be equal to 'out_channels', and the second dim must be "
                                 f"equal to 'in_channels'. But got 'weight_init' shape {tuple(weight_init.shape)}, "
                                 f"'out_channels': {out_channels}, 'in_channels': {in_channels}.")
        if weight_init is None:
            weight_init = HeUniform(math.sqrt(5))
        self.weight = Parameter(initializer(weight_init, [out_channels, in_channels], dtype=dtype), name="weight")
        self.bias = None
        if self.has_bias:
            if isinstance(bias_init, _Tensor):
                if bias_init.ndim != 1 or bias_init.shape[0] != out_channels:
                    raise ValueError(f"For '{name}', bias init shape error. The ndim of 'bias_init' must be equal "
                                     f"to 1, and the first dim must be equal to 'out_channels'. But got 'bias_init' "
                                     f"shape {tuple(bias_init.shape)}, 'out_channels': {out_channels}.")
            if bias_init is None:
                bias_init = Uniform(scale=1 / math.sqrt(in_channels))
            self.bias = Parameter(initializer(bias_init, [out_channels], dtype=dtype), name="bias")
        self.activation = get_activation(activation, name) if isinstance(activation, str) else activation
        if activation is not None and not isinstance(self.activation, (Cell, Primitive)):
            raise TypeError(f"For '{name}', the 'activation' must be str or Cell or Primitive, but got "
                            f"{type(activation).__name__}.")
        self.activation_flag = self.activation is not None
        # MindSpore's attributes, for subclasses that call them in their construct
        from ...ops import BiasAdd, MatMul, Reshape, Shape
        self.matmul = MatMul(transpose_b=True)
        self.bias_add = BiasAdd()
        self.reshape = Reshape()
        self.shape_op = Shape()

    _in_name = "in_channels"  # the constructor's name for the input size (mint.nn.Linear: in_features)

    def construct(self, x):
        nd = check_input(x, type(self).__name__).ndim
        if nd >= 1 and type(x.shape[-1]) is int and x.shape[-1] != self.in_channels:
            raise ValueError(f"For '{type(self).__name__}', the last dimension of the input must be {self._in_name}="
                             f"{self.in_channels}, but got an input of shape {tuple(x.shape)}.")
        w = self.weight
        b = self.bias
        if self._mp_dtype is not None:
            w = _kernels.cast(w, self._mp_dtype)
            if b is not None:
                b = _kernels.cast(b, self._mp_dtype)
        if nd == 2:
            y = _kernels.matmul(x, w, False, True)
            if b is not None:
                y = _ops.add(y, b)
            if self.activation_flag:
                y = self.activation(y)
            return y
        if nd < 2:
            raise ValueError(f"For '{type(self).__name__}', the dimension of 'x' should not be less than 2, but got "
                             f"{nd}.")
        shape = x.shape
        y = _kernels.matmul(_kernels.reshape(x, [-1, shape[-1]]), w, False, True)
        if b is not None:
            y = _ops.add(y, b)
        if self.activation_flag:
            y = self.activation(y)
        return _kernels.reshape(y, list(shape[:-1]) + [y.shape[-1]])

    def extend_repr(self):
        s = f"input_channels={self.in_channels}, output_channels={self.out_channels}"
        if self.has_bias:
            s += f", has_bias={self.has_bias}"
        if self.activation_flag:
            s += f", activation={self.activation}"
        return s


class Flatten(Cell):
    """Flattens dims start_dim..end_dim (default 1..−1: keeps the batch dim) into one.

    Raises ValueError if an axis is out of range for the input or start_dim comes after end_dim."""

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        for n, v in (("start_dim", start_dim), ("end_dim", end_dim)):
            if isinstance(v, bool) or not isinstance(v, int):
                raise TypeError(f"For 'Flatten', the '{n}' must be int, but got {type(v).__name__}.")
        self.start_dim = start_dim
        self.end_dim = end_dim

    def construct(self, x):
        ndim = check_input(x, "Flatten").ndim or 1
        s, e = self.start_dim, self.end_dim
        for axis in (s, e):
            if axis < -ndim or axis >= ndim:
                raise ValueError(f"For 'Flatten', 'start_dim' or 'end_dim' out of range: got start_dim={s}, "
                                 f"end_dim={e} for an input of rank {x.ndim}.")
        s, e = s % ndim, e % ndim
        if s > e:
            raise ValueError("For 'Flatten', 'start_dim' cannot come after 'end_dim'.")
        if x.ndim == 0:
            return _kernels.reshape(x, [1])
        shape = x.shape
        return _kernels.reshape(x, list(shape[:s]) + [-1] + list(shape[e + 1:]))


class Identity(Cell):
    """Returns its input unchanged."""

    def construct(self, x):
        return x


class Dropout(Cell):
    """Dropout: in training, each element is zeroed with probability p (= 1 − keep_prob) and the rest scaled by
    1/(1 − p); in eval (training=False, the default) the input is returned unchanged.

    Args:
        keep_prob (float in (0, 1]): MindSpore's older argument (default 0.5), used when p is None.
        p (float in [0, 1)): drop probability; overrides keep_prob.
    The mask comes from ops.rand, so kiln.set_seed makes it reproducible.

    Raises:
        TypeError: keep_prob not a float / p not a number.
        ValueError: keep_prob outside (0, 1] or p outside [0, 1).
    """

    def __init__(self, keep_prob=0.5, p=None, dtype=mstype.float32):
        super().__init__()
        name = type(self).__name__
        if p is None:
            if isinstance(keep_prob, bool) or not isinstance(keep_prob, float):
                raise TypeError(f"For '{name}', the type of 'keep_prob' should be 'float', but got "
                                f"{type(keep_prob).__name__}.")
            if keep_prob <= 0 or keep_prob > 1:
                raise ValueError(f"For '{name}', the 'keep_prob' must be a number in range (0, 1], but got "
                                 f"{keep_prob}.")
        else:
            if isinstance(p, bool) or not isinstance(p, (int, float)):
                raise TypeError(f"For '{name}', the type of 'p' should be 'float' or 'int', but got "
                                f"{type(p).__name__}.")
            if p < 0 or p >= 1:
                raise ValueError(f"For '{name}', the 'p' must be a number in range [0, 1), but got {p}.")
            keep_prob = 1.0 - p
        self.p = p
        self.keep_prob = keep_prob

    def construct(self, x):
        if not self.training or self.keep_prob == 1.0:
            return x
        keep = self.keep_prob
        u = F.rand(*check_input(x, "Dropout").shape, dtype=mstype.float32)
        mask = _kernels.cast(_ops.less(u, keep), x.dtype)
        return _ops.mul(x, _ops.mul(mask, 1.0 / keep))

    def extend_repr(self):
        if self.p is None:
            return f"keep_prob={self.keep_prob}"
        return f"p={self.p}"



class _DropoutNd(Cell):
    """Channel dropout layers: in training, ops.dropout2d / dropout3d with probability p; in evaluation the input
    unchanged. Raises TypeError / ValueError for p outside [0, 1]."""

    _fn = None

    def __init__(self, p=0.5):
        super().__init__()
        name = type(self).__name__
        if isinstance(p, bool) or not isinstance(p, (int, float)):
            raise TypeError(f"For '{name}', the 'p' must be float, but got {type(p).__name__}.")
        if not 0 <= p <= 1:
            raise ValueError(f"For '{name}', the 'p' must be in range [0, 1], but got {p}.")
        self.p = float(p)

    def construct(self, x):
        from ...ops import loss_func
        return getattr(loss_func, self._fn)(x, self.p, self.training)

    def extend_repr(self):
        return f"p={self.p}"


class Dropout2d(_DropoutNd):
    """Zeroes whole channels of (N, C, H, W) inputs with probability p while training (see ops.dropout2d)."""
    _fn = "dropout2d"


class Dropout3d(_DropoutNd):
    """Zeroes whole channels of (N, C, D, H, W) inputs with probability p while training (see ops.dropout3d)."""
    _fn = "dropout3d"

class Pad(Cell):
    """Pads a tensor: paddings[i] = (before, after) non-negative amounts for every dim i of the input.

    Args:
        paddings: a tuple of (before, after) int pairs, one per input dim (ValueError at call time otherwise).
        mode: "CONSTANT" (zeros), "REFLECT" (mirror without the edge; amounts below the dim size) or "SYMMETRIC"
            (mirror with the edge; amounts at most the dim size).
    Input x of any dtype; output x's dtype, dim i grown by before + after. Gradient: the sum over every copy.
    Raises TypeError for malformed paddings, ValueError for another mode or amounts the mode does not allow.
    """

    def __init__(self, paddings, mode="CONSTANT"):
        super().__init__()
        if mode not in ("CONSTANT", "REFLECT", "SYMMETRIC"):
            raise ValueError(f"For 'Pad', the 'mode' must be 'CONSTANT', 'REFLECT' or 'SYMMETRIC', but got {mode!r}.")
        if not isinstance(paddings, (tuple, list)):
            raise TypeError(f"For 'Pad', the 'paddings' must be a tuple of (before, after) pairs, but got "
                            f"{type(paddings).__name__}.")
        self.paddings, self.mode = paddings, mode

    def construct(self, x):
        from ...ops import array_func
        x = check_input(x, "Pad")
        pairs = array_func.paddings_arg(self.paddings, x, "Pad")
        return array_func.pad_pairs(x, pairs, self.mode.lower(), None, "Pad")


class ClipByNorm(Cell):
    r"""Scales x so that its L2 norm over `axis` is at most clip_norm:
    out = x · clip_norm / max(‖x‖₂ over axis (kept dims), clip_norm)  (MindSpore's documented formula).

    Args:
        axis: None (the norm of all of x), an int, or a tuple/list of ints.
    construct(x, clip_norm): x a float Tensor; clip_norm a Tensor broadcastable to the norm's shape (kept dims).
    Output float32 (as MindSpore). A zero x stays zero. Note: MindSpore 2.10's CPU kernel gives other values than
    this formula when `axis` is set; Kiln follows the formula.
    Raises TypeError for a bad axis type or non-Tensor inputs.
    """

    def __init__(self, axis=None):
        super().__init__()
        if axis is not None and (isinstance(axis, bool) or not isinstance(axis, (int, tuple, list))):
            raise TypeError(f"For 'ClipByNorm', the type of 'axis' should be one of '['int', 'tuple', 'list']', but "
                            f"got type '{type(axis).__name__}'.")
        self.axis = axis

    def construct(self, x, clip_norm):
        if not isinstance(x, _Tensor) or not isinstance(clip_norm, _Tensor):
            raise TypeError("For 'ClipByNorm', the input args must be tensor.")
        x = _kernels.cast(x, mstype.float32)
        axis = None if self.axis is None else ([self.axis] if isinstance(self.axis, int) else list(self.axis))
        # The floor keeps the gradient finite at x = 0 (sqrt' is infinite at 0); it changes no value unless
        # clip_norm < 1e-15, since max(norm, clip_norm) then picks clip_norm either way.
        norm = _ops.sqrt(_ops.maximum(_kernels.sum(_ops.square(x), axis, True), 1e-30))
        limit = _kernels.cast(clip_norm, mstype.float32)
        return _kernels.div(_ops.mul(x, limit), _ops.maximum(norm, limit))


class Unfold(Cell):
    r"""Extracts image patches as channels (MindSpore 2.10's deprecated nn.Unfold, its ExtractImagePatches
    primitive; TensorFlow's extract_image_patches on NCHW data).

    Args:
        ksizes, strides, rates (tuple or list): [1, row, col, 1] each: the patch size, the distance between patch
            origins and the spacing of the patch's samples (dilation); row and col positive ints.
        padding (str): 'valid' (patches inside the image) or 'same' (⌈in / stride⌉ positions, zeros outside), any
            case. Default 'valid'.

    Inputs: x (N, C, H, W). Outputs: (N, kr·kc·C, out_rows, out_cols), x's dtype; output channel (i·kc + j)·C + c
    is input channel c at patch cell (i, j); 'valid': out = (in − (k + (k − 1)(rate − 1))) // stride + 1.
    See kiln/ops/patches_func.py for the exact rule (MindSpore's kernel). MindSpore's CPU build has no kernel for
    it (its GPU one defines the values).

    Raises:
        TypeError: ksizes not a tuple / list (MindSpore checks only ksizes' type; a strides or rates without a
            length raises TypeError too).
        ValueError: an argument not of the form [1, row, col, 1] or with row / col not a positive int; at the call,
            a padding other than 'valid' / 'same', a non-4-D input or a patch larger than the input ('valid').
    """

    def __init__(self, ksizes, strides, rates, padding="valid"):
        super().__init__()
        name = self.cls_name
        if not isinstance(ksizes, (tuple, list)):
            raise TypeError(f"For '{name}', the type of 'ksizes' should be one of '['tuple', 'list']', but got type "
                            f"'{type(ksizes).__name__}'.")
        for arg, val in (("ksize", ksizes), ("stride", strides), ("rate", rates)):
            if len(val) != 4 or val[0] != 1 or val[3] != 1:
                raise ValueError(f"For '{name}' the format of '{arg}s' must be [1, {arg}_row, {arg}_col, 1], but got "
                                 f"{val}.")
            if not (isinstance(val[1], int) and isinstance(val[2], int)) or val[1] < 1 or val[2] < 1:
                raise ValueError(f"For '{name}' the {arg}_row and {arg}_col in '{arg}s' must be an positive integer "
                                 f"number, but got {arg}_row is {val[1]}, {arg}_col is {val[2]}")
        if not isinstance(padding, str):
            raise TypeError(f"For 'ExtractImagePatches', the input 'padding' should be a str, but got "
                            f"{type(padding)}.")
        self._ksizes = (int(ksizes[1]), int(ksizes[2]))
        self._strides = (int(strides[1]), int(strides[2]))
        self._rates = (int(rates[1]), int(rates[2]))
        self._padding = padding

    def construct(self, input_x):
        from ...ops.patches_func import extract_image_patches
        return extract_image_patches(input_x, self._ksizes, self._strides, self._rates, self._padding)
