"""Primitive classes of MindSpore 2.10 with a form of their own: ops.MaxPool3D (attributes pad_mode / pad_list /
ceil_mode, unlike ops.max_pool3d) over Kiln's 3-D max pooling.

The Ascend loss-scale status primitives (NPUAllocFloatStatus / NPUGetFloatStatus / NPUClearFloatStatus) are not
provided: they read an Ascend NPU's overflow register, which MindSpore 2.10 on CPU refuses to run too, and a name
whose every call fails would only look present (docs/decisions/priority-names.md). Overflow checks on CPU:
amp.all_finite."""
from .._args import _got, _is_int
from ..common import dtype as mstype
from .function import _tensor_arg
from .nnpool_func import _max_pool3d
from .primitives import Primitive

__all__ = ["MaxPool3D"]


def _three(value, name):
    if _is_int(value) and not isinstance(value, bool):
        t = (int(value),) * 3
    elif isinstance(value, tuple) and len(value) == 3 and all(_is_int(v) for v in value):
        t = tuple(int(v) for v in value)
    elif isinstance(value, (int, tuple)):
        raise ValueError(f"For 'MaxPool3D', the parameter '{name}' must be an positive integer or a tuple of three "
                         f"positive integer, but got {value!r}.")
    else:
        raise TypeError(f"For 'MaxPool3D', the type of '{name}' should be one of ['int', 'tuple'], but got "
                        f"{_got(value)}.")
    if min(t) < 1:
        raise ValueError(f"For 'MaxPool3D', the parameter '{name}' must be an positive integer or a tuple of three "
                         f"positive integer, but got {value!r}.")
    return t


class MaxPool3D(Primitive):
    """MaxPool3D(kernel_size=1, strides=1, pad_mode='VALID', pad_list=0, ceil_mode=None, data_format='NCDHW')(x):
    3-D max pooling of x (N, C, D, H, W), Float16/32/64; padded positions never win.

    Args:
        kernel_size, strides: int or (d, h, w), positive.
        pad_mode: 'VALID' (no padding: O = ⌊(in − k)/s⌋ + 1), 'SAME' (O = ⌈in/s⌉; total padding
            max((O − 1)·s + k − in, 0) per dim, the odd unit at the back/bottom/right) or 'PAD' (case-insensitive).
        pad_list: with 'PAD', an int, (d, h, w) (both sides) or (head, tail, top, bottom, left, right); 0 otherwise.
            Each side smaller than the kernel and head + tail ≤ kernel (MindSpore's rule).
        ceil_mode: with 'PAD' only, True rounds the output size up (O = ⌈(in + pads − k)/s⌉ + 1); None/False down.
        data_format: 'NCDHW' only (as MindSpore).
    Returns: (N, C, D', H', W'), x's dtype; differentiable (the gradient goes to the chosen element).
    Raises:
        TypeError: kernel_size/strides not int/tuple, x not a Tensor or not float.
        ValueError: non-positive or malformed sizes, unknown pad_mode, pad_list with a non-'PAD' mode or negative,
            ceil_mode with 'SAME'/'VALID', data_format not 'NCDHW', x not 5-D, or a window larger than the padded
            input (an empty output)."""

    def __init__(self, kernel_size=1, strides=1, pad_mode="VALID", pad_list=0, ceil_mode=None, data_format="NCDHW"):
        super().__init__("MaxPool3D")
        self.kernel_size = _three(kernel_size, "kernel_size")
        self.strides = _three(strides, "strides")
        mode = pad_mode.upper() if isinstance(pad_mode, str) else pad_mode
        if mode not in ("VALID", "SAME", "PAD"):
            raise ValueError(f"For 'MaxPool3D', the 'pad_mode' must be str and must be in ['VALID', 'SAME', 'PAD'], "
                             f"but got {pad_mode!r}.")
        if data_format != "NCDHW":
            raise ValueError(f"For 'MaxPool3D', the 'data_format' must be str and must be in ['NCDHW'], but got "
                             f"{data_format!r}.")
        if _is_int(pad_list) and not isinstance(pad_list, bool):
            pads = (int(pad_list),) * 6
        elif isinstance(pad_list, tuple) and len(pad_list) in (3, 6) and all(_is_int(v) for v in pad_list):
            pads = tuple(int(v) for v in pad_list)
            if len(pads) == 3:
                pads = (pads[0], pads[0], pads[1], pads[1], pads[2], pads[2])
        else:
            raise ValueError(f"For 'MaxPool3D', attr 'pad_list' must be an positive int number or a tuple of three or "
                             f"six positive int numbers, but got {pad_list!r}.")
        if min(pads) < 0:
            raise ValueError(f"For 'MaxPool3D', the 'pad_list item' must be int and must >= 0, but got {pad_list!r}.")
        if mode != "PAD" and any(pads):
            raise ValueError(f"For 'MaxPool3D', the 'pad_list' must be zero or (0, 0, 0, 0, 0, 0) when 'pad_mode' is "
                             f"not \"pad\", but got 'pad_list' is {pad_list!r} and 'pad_mode' is {pad_mode!r}.")
        if mode != "PAD" and ceil_mode is not None:
            raise ValueError("When the 'pad_mode' is 'same' or 'valid', the 'ceil_mode' only supports 'None'.")
        if ceil_mode is not None and not isinstance(ceil_mode, bool):
            raise TypeError(f"For 'MaxPool3D', the 'ceil_mode' must be None or a bool, but got {_got(ceil_mode)}.")
        for i, dim in enumerate(("depth", "height", "width")):
            k = self.kernel_size[i]
            if pads[2 * i] + pads[2 * i + 1] > k or max(pads[2 * i], pads[2 * i + 1]) >= k:
                raise ValueError(f"For 'MaxPool3D', the padding on each side must be smaller than the kernel and "
                                 f"their sum at most the kernel size on {dim}, but got padding "
                                 f"{list(pads[2 * i:2 * i + 2])} and kernel {k}.")
        self.pad_mode, self.pad_list, self.ceil_mode, self.data_format = mode, pads, ceil_mode, data_format

    def __call__(self, x):
        x = _tensor_arg(x, "MaxPool3D", "x")
        if x.dtype not in (mstype.float16, mstype.float32, mstype.float64):
            raise TypeError(f"For 'MaxPool3D', the 'x' must be a Float16, Float32 or Float64 Tensor, but got "
                            f"{x.dtype}.")
        if x.ndim != 5:
            raise ValueError(f"For 'MaxPool3D', the 'x' must be 5-D (N, C, D, H, W), but got shape {tuple(x.shape)}.")
        k, s = self.kernel_size, self.strides
        pads = self.pad_list
        if self.pad_mode == "SAME":
            pads = []
            for i in range(3):
                size = x.shape[2 + i]
                total = max((-(-size // s[i]) - 1) * s[i] + k[i] - size, 0)
                pads += [total // 2, total - total // 2]
        elif self.pad_mode == "VALID":
            pads = (0,) * 6
        for i in range(3):
            if x.shape[2 + i] + pads[2 * i] + pads[2 * i + 1] < k[i]:
                raise ValueError(f"For 'MaxPool3D', the kernel {k} is larger than the padded input "
                                 f"{tuple(x.shape[2:])} with pads {tuple(pads)}: the output would be empty.")
        y, _ = _max_pool3d(x, k, s, tuple(pads), (1, 1, 1), bool(self.ceil_mode), False)
        return y
