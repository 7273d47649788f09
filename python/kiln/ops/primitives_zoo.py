"""Primitive classes model zoos use (issue 24), each built on Kiln's existing functional op (never a second
formula): Erf, ReLU6, HSigmoid, Softplus, MaskedFill, KLDivLoss, BCEWithLogitsLoss, LpNorm, Padding, ResizeLinear1D,
CropAndResize, UniformCandidateSampler, and ops.matrix_solve with its MatrixSolve primitive.

The constructors check their attributes as MindSpore 2.10's do (TypeError for a wrong type, ValueError for a value
out of range) and the calls check the input dtypes MindSpore 2.10's CPU kernels accept (TypeError otherwise)."""
import numpy as np

from .._loader import _core
from ..common import dtype as mstype
from ..common.tensor import Tensor
from .function import _tensor_arg
from .index_func import _tensor_to_ints
from .primitives import Primitive
from ._opdef import defop

__all__ = ["Erf", "ReLU6", "HSigmoid", "Softplus", "MaskedFill", "KLDivLoss", "BCEWithLogitsLoss", "LpNorm", "Padding",
           "ResizeLinear1D", "CropAndResize", "UniformCandidateSampler", "MatrixSolve", "matrix_solve"]

_F16_32 = (mstype.float16, mstype.float32)
_F16_32_64 = (mstype.float16, mstype.float32, mstype.float64)
_FLOATS = (mstype.float16, mstype.bfloat16, mstype.float32, mstype.float64)


def _check_dtype(op, name, x, allowed):
    x = _tensor_arg(x, op, name)
    if x.dtype not in allowed:
        raise TypeError(f"For primitive[{op}], the input argument[{name}] must be a type of "
                        f"{{{', '.join('Tensor[' + str(d) + ']' for d in allowed)}}}, but got Tensor[{x.dtype}].")
    return x


def _check_type(op, name, value, types, type_names):
    if isinstance(value, bool) and bool not in types:
        ok = False
    else:
        ok = isinstance(value, types)
    if not ok:
        raise TypeError(f"For '{op}', the type of '{name}' should be '{type_names}', but got type "
                        f"'{type(value).__name__}'.")
    return value


def _check_reduction(op, reduction, allowed):
    if not isinstance(reduction, str) or reduction not in allowed:
        raise ValueError(f"For '{op}', the 'reduction' must be str and must be in '{list(allowed)}', but got "
                         f"{reduction!r}.")
    return reduction


class Erf(Primitive):
    """MindSpore's Erf()(x): the error function of a float16/float32/float64 Tensor (ops.erf); same shape and dtype.
    Raises TypeError for another dtype."""

    def __call__(self, x):
        from . import erf
        return erf(_check_dtype("Erf", "x", x, _F16_32_64))


class ReLU6(Primitive):
    """MindSpore's ReLU6()(x): min(max(x, 0), 6) of a float16/float32 Tensor (ops.relu6, whose gradient is MindSpore's
    ReLU6Grad). Raises TypeError for another dtype (MindSpore 2.10 refuses int32)."""

    def __call__(self, x):
        from .activation_func import relu6
        return relu6(_check_dtype("ReLU6", "input_x", x, _F16_32))


class HSigmoid(Primitive):
    """MindSpore's HSigmoid()(input_x): relu6(x + 3) / 6 of a float16/bfloat16/float32/float64 Tensor
    (ops.hardsigmoid: one HSigmoid kernel, gradient 1/6 strictly inside (−3, 3)); same shape and dtype. Raises
    TypeError for another dtype (MindSpore 2.10 refuses UInt8, Bool and Complex64; its CPU kernel truncates
    int8..int64 results to ints, which Kiln refuses as its HSwish primitive does)."""

    def __call__(self, input_x):
        from .activation_func import hardsigmoid
        return hardsigmoid(_check_dtype("HSigmoid", "input_x", input_x, _FLOATS))


class Softplus(Primitive):
    """MindSpore's Softplus()(x): log(1 + exp(x)) of a float16/float32/float64 Tensor (ops.softplus, computed
    stably). Raises TypeError for another dtype."""

    def __call__(self, x):
        from .activation_func import softplus
        return softplus(_check_dtype("Softplus", "x", x, _F16_32_64))


class MaskedFill(Primitive):
    """MindSpore's MaskedFill()(input, mask, value): `value` (a 0-d Tensor of input's dtype, or a Python number) where
    the Bool `mask` (broadcast against input) is True (ops.masked_fill). Raises TypeError for a non-Bool mask or a
    value Tensor of another dtype than input's (MindSpore 2.10's CPU kernel refuses it)."""

    def __call__(self, input, mask, value):
        from .index_func import masked_fill
        x = _tensor_arg(input, "MaskedFill", "input")
        m = _tensor_arg(mask, "MaskedFill", "mask")
        if m.dtype != mstype.bool_:
            raise TypeError(f"For primitive[MaskedFill], the input argument[mask] must be a type of {{Bool}}, but "
                            f"got {m.dtype}.")
        if isinstance(value, Tensor) and value.dtype != x.dtype:
            raise TypeError(f"For primitive[MaskedFill], 'value' must have the dtype of 'input' ({x.dtype}), but got "
                            f"{value.dtype}.")
        return masked_fill(x, m, value)


class KLDivLoss(Primitive):
    """MindSpore's KLDivLoss(reduction='mean')(logits, labels): labels·(log labels − logits) reduced by 'none', 'mean'
    (over all elements), 'sum' or 'batchmean' (sum / batch size) — ops.kl_div. Raises ValueError for another
    reduction."""

    def __init__(self, reduction="mean"):
        super().__init__("KLDivLoss")
        self.reduction = _check_reduction("KLDivLoss", reduction, ("none", "mean", "batchmean", "sum"))

    def __call__(self, logits, labels):
        from .loss_func import kl_div
        return kl_div(logits, labels, self.reduction)


class BCEWithLogitsLoss(Primitive):
    """MindSpore's BCEWithLogitsLoss(reduction='mean')(logits, label, weight=None, pos_weight=None): the binary
    cross entropy of sigmoid(logits), with the optional broadcast weight and positive-class weight
    (ops.binary_cross_entropy_with_logits). Raises ValueError for a reduction other than 'none', 'mean', 'sum'."""

    def __init__(self, reduction="mean"):
        super().__init__("BCEWithLogitsLoss")
        if reduction not in ("none", "mean", "sum"):
            raise ValueError(f"Failed to convert the value {reduction!r} of input 'reduction' of "
                             f"'BCEWithLogitsLoss' to enum: it must be one of 'none', 'mean', 'sum'.")
        self.reduction = reduction

    def __call__(self, logits, label, weight=None, pos_weight=None):
        from .loss_func import binary_cross_entropy_with_logits
        return binary_cross_entropy_with_logits(logits, label, weight, pos_weight, self.reduction)


class LpNorm(Primitive):
    """MindSpore's LpNorm(axis, p=2, keep_dims=False, epsilon=1e-12)(input): the p-norm (sum |x|^p)^(1/p) over
    `axis` (an int or a tuple/list of ints; p = 0 counts the non-zero elements), raised to at least `epsilon`
    (ops.vector_norm, then maximum). float16/float32 input; same dtype out.

    Raises TypeError (p not an int, axis not an int/tuple/list of ints, keep_dims not a bool, epsilon not a float,
    another input dtype), ValueError (p < 0, epsilon < 0, an axis outside [-rank, rank), no axis or more axes
    than the rank)."""

    def __init__(self, axis, p=2, keep_dims=False, epsilon=1e-12):
        super().__init__("LpNorm")
        _check_type("LpNorm", "p", p, (int,), "int")
        _check_type("LpNorm", "axis", axis, (int, tuple, list), "['int', 'tuple', 'list']")
        _check_type("LpNorm", "keep_dims", keep_dims, (bool,), "bool")
        _check_type("LpNorm", "epsilon", epsilon, (float,), "float")
        if p < 0:
            raise ValueError(f"For 'LpNorm', the 'p' must be int and must >= 0, but got '{p}' with type 'int'.")
        if epsilon < 0:
            raise ValueError(f"For 'LpNorm', the 'epsilon' must be float and must >= 0, but got '{epsilon}'.")
        if isinstance(axis, int):
            axis = [axis]
        else:
            for a in axis:
                _check_type("LpNorm", "element_of_axis", a, (int,), "int")
        self.axis, self.p, self.keep_dims, self.epsilon = list(axis), p, keep_dims, epsilon

    def __call__(self, input):
        from .math_norm_func import vector_norm
        x = _check_dtype("LpNorm", "input", input, _F16_32)
        r = x.ndim
        if not 0 < len(self.axis) <= r:
            raise ValueError(f"For primitive[LpNorm], the axis size must be in (0,{r + 1}), but got "
                             f"{len(self.axis)}.")
        for a in self.axis:
            if not -r <= a < r:
                raise ValueError(f"For primitive[LpNorm], the axis value must be in [{-r},{r}), but got {a}.")
        n = vector_norm(x, self.p, tuple(self.axis), self.keep_dims)
        return _core.maximum(n, _core.full([], self.epsilon, n.dtype))


class Padding(Primitive):
    """MindSpore's Padding(pad_dim_size=8)(x): x (rank ≥ 2, last dim 1) with its last dim extended to pad_dim_size by
    zeros (ops.pad); same dtype. Raises TypeError/ValueError for pad_dim_size not an int > 0, ValueError for a rank
    below 2 or a last dim other than 1."""

    def __init__(self, pad_dim_size=8):
        super().__init__("Padding")
        _check_type("Padding", "pad_dim_size", pad_dim_size, (int,), "int")
        if pad_dim_size <= 0:
            raise ValueError(f"For 'Padding', the 'pad_dim_size' must be int and must > 0, but got "
                             f"'{pad_dim_size}' with type 'int'.")
        self.pad_dim_size = pad_dim_size

    def __call__(self, x):
        from .array_func import pad
        x = _tensor_arg(x, "Padding", "x")
        if x.ndim < 2:
            raise ValueError(f"For primitive[Padding], the x rank must be greater than or equal to 2, but got "
                             f"{x.ndim}.")
        if x.shape[-1] != 1:
            raise ValueError(f"For 'Padding', the last dimension of 'x' must be 1, but got: {x.shape[-1]}.")
        return pad(x, (0, self.pad_dim_size - 1)) if self.pad_dim_size > 1 else _core.identity(x)


class ResizeLinear1D(Primitive):
    """MindSpore's ResizeLinear1D(coordinate_transformation_mode='align_corners')(x, size): linear interpolation of
    x (N, C, W), float16/32/64, to width size (a 1-element int32/int64 Tensor or a tuple of one int), by
    ops.interpolate(mode='linear'): 'align_corners' maps the end samples onto each other, 'half_pixel' samples at
    pixel centres (clamped at the borders). A width of 1 takes x[..., 0] in both modes (MindSpore 2.10's kernel).

    Raises ValueError (another mode, x not 3-D, a size that is not one positive int), TypeError (another dtype)."""

    def __init__(self, coordinate_transformation_mode="align_corners"):
        super().__init__("ResizeLinear1D")
        if coordinate_transformation_mode not in ("align_corners", "half_pixel"):
            raise ValueError(f"For 'ResizeLinear1D', 'coordinate_transformation_mode' must be 'align_corners' or "
                             f"'half_pixel', but got {coordinate_transformation_mode!r}.")
        self.coordinate_transformation_mode = coordinate_transformation_mode

    def __call__(self, x, size):
        from .resize_func import interpolate
        x = _check_dtype("ResizeLinear1D", "x", x, _F16_32_64)
        if x.ndim != 3:
            raise ValueError(f"For primitive[ResizeLinear1D], the image rank must be equal to 3, but got {x.ndim}.")
        if isinstance(size, Tensor):
            if size.dtype not in (mstype.int32, mstype.int64):
                raise TypeError(f"For primitive[ResizeLinear1D], 'size' must be an int32/int64 Tensor, but got "
                                f"{size.dtype}.")
            size = _tensor_to_ints("ResizeLinear1D", "size", size)
        if not (isinstance(size, (tuple, list)) and len(size) == 1 and isinstance(size[0], int)
                and not isinstance(size[0], bool) and size[0] > 0):
            raise ValueError(f"For primitive[ResizeLinear1D], 'size' must hold one positive int, but got {size}.")
        w = size[0]
        if w == 1:
            return _core.strided_slice(x, [0, 0, 0], [x.shape[0], x.shape[1], 1], [1, 1, 1])
        return interpolate(x, size=w, mode="linear",
                           align_corners=self.coordinate_transformation_mode == "align_corners")


class CropAndResize(Primitive):
    """MindSpore's CropAndResize(method='bilinear', extrapolation_value=0.0)(x, boxes, box_index, crop_size)
    (TensorFlow's crop_and_resize): x (batch, H, W, C) of a real dtype; boxes (n, 4) float32 normalized
    [y1, x1, y2, x2] (y2 < y1 flips the crop); box_index (n,) int32 in [0, batch); crop_size a tuple (or int32
    Tensor) (crop_h, crop_w). Output (n, crop_h, crop_w, C) float32. Sample row i of box b is at
    y = y1·(H−1) + i·(y2−y1)·(H−1)/(crop_h−1) (the box centre when crop_h = 1), likewise x; a sample outside the image
    is `extrapolation_value`. 'bilinear' interpolates the 4 neighbours, 'nearest' takes the rounded one. Built from
    Gather, Floor and arithmetic, so gradients reach x and boxes (MindSpore's CropAndResizeGradImage/GradBoxes).
    'bilinear_v2' (MindSpore's own variant, inferred from MindSpore 2.10's CPU outputs): the box corners become whole
    pixels, y1p = trunc(y1·H), y2p = trunc(y2·H); sample i is at y1p + (i + 0.5)·(y2p − y1p + 1)/crop_h − 0.5,
    clamped into [y1p, y2p] (lower bound last) and then into [0, H − 1] (likewise x with W), interpolated bilinearly;
    no sample is extrapolated, and the positions do not depend on the boxes continuously (no gradient to boxes).

    Raises TypeError (extrapolation_value not a float, non-float boxes, non-int box_index), ValueError (another
    method, x not 4-D, boxes not (n, 4), box_index not (n,), a box_index outside [0, batch), crop_size not two
    positive ints)."""

    def __init__(self, method="bilinear", extrapolation_value=0.0):
        super().__init__("CropAndResize")
        _check_type("CropAndResize", "method", method, (str,), "str")
        if method not in ("bilinear", "nearest", "bilinear_v2"):
            raise ValueError(f"For 'CropAndResize', the 'method' must be str and must be in "
                             f"'['bilinear', 'nearest', 'bilinear_v2']', but got {method!r}.")
        _check_type("CropAndResize", "extrapolation_value", extrapolation_value, (float,), "float")
        self.method, self.extrapolation_value = method, extrapolation_value

    def __call__(self, x, boxes, box_index, crop_size):
        x = _tensor_arg(x, "CropAndResize", "x")
        boxes = _tensor_arg(boxes, "CropAndResize", "boxes")
        box_index = _tensor_arg(box_index, "CropAndResize", "box_index")
        if x.ndim != 4:
            raise ValueError(f"For primitive[CropAndResize], the [x] rank must be equal to 4, but got {x.ndim}.")
        if x.dtype == mstype.bool_:
            raise TypeError("For primitive[CropAndResize], 'x' must be a real number Tensor, but got Bool.")
        if not mstype.is_float(boxes.dtype):
            raise TypeError(f"For primitive[CropAndResize], 'boxes' must be a float Tensor, but got {boxes.dtype}.")
        if box_index.dtype not in (mstype.int32, mstype.int64):
            raise TypeError(f"For primitive[CropAndResize], 'box_index' must be an int32 Tensor, but got "
                            f"{box_index.dtype}.")
        if boxes.ndim != 2 or boxes.shape[1] != 4:
            raise ValueError(f"For primitive[CropAndResize], 'boxes' must have shape (num_boxes, 4), but got "
                             f"{tuple(boxes.shape)}.")
        n = boxes.shape[0]
        if tuple(box_index.shape) != (n,):
            raise ValueError(f"For primitive[CropAndResize], 'box_index' must have shape ({n},), but got "
                             f"{tuple(box_index.shape)}.")
        if isinstance(crop_size, Tensor):
            crop_size = _tensor_to_ints("CropAndResize", "crop_size", crop_size)
        if not (isinstance(crop_size, (tuple, list)) and len(crop_size) == 2
                and all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in crop_size)):
            raise ValueError(f"For 'CropAndResize', 'crop_size' must be a tuple of two positive ints, but got "
                             f"{crop_size}.")
        batch, h, w, c = x.shape
        bi = _core.cast(box_index, mstype.int64)
        if not _core.tracing():
            vals = np.asarray(bi.asnumpy())
            bad = vals[(vals < 0) | (vals >= batch)]
            if bad.size:
                raise ValueError(f"For 'CropAndResize', the value of box_index must be in [0, {batch}), but got "
                                 f"[{bad[0]}].")
        ch, cw = crop_size
        xf = x if x.dtype == mstype.float32 else _core.cast(x, mstype.float32)
        b = boxes if boxes.dtype == mstype.float32 else _core.cast(boxes, mstype.float32)

        def col(j):
            return _core.strided_slice(b, [0, j], [n, j + 1], [1, 1])  # (n, 1)

        def coords(lo, hi, size, crop):
            if crop > 1:
                steps = Tensor(np.arange(crop, dtype=np.float32).reshape(1, crop))
                scale = _core.mul(_core.sub(hi, lo), float(size - 1) / (crop - 1))
                return _core.add(_core.mul(lo, float(size - 1)), _core.mul(steps, scale))  # (n, crop)
            return _core.mul(_core.add(lo, hi), 0.5 * (size - 1))  # (n, 1)

        def coords_v2(lo, hi, size, crop):
            # corners truncated to whole pixels of the size-scaled box, samples at the centres of `crop` equal
            # parts of [lo_px, hi_px + 1), clamped into [lo_px, hi_px] and then into the image
            lo = _core.cast(_core.cast(_core.mul(_core.stop_gradient(lo), float(size)), mstype.int64), mstype.float32)
            hi = _core.cast(_core.cast(_core.mul(_core.stop_gradient(hi), float(size)), mstype.int64), mstype.float32)
            step = _core.div(_core.add(_core.sub(hi, lo), 1.0), float(crop))
            centres = Tensor((np.arange(crop, dtype=np.float32) + 0.5).reshape(1, crop))
            v = _core.sub(_core.add(lo, _core.mul(centres, step)), 0.5)
            v = _core.maximum(_core.minimum(v, hi), lo)
            return _core.minimum(_core.maximum(v, 0.0), float(size - 1))

        if self.method == "bilinear_v2":
            ys = coords_v2(col(0), col(2), h, ch)  # (n, ch)
            xs = coords_v2(col(1), col(3), w, cw)  # (n, cw)
        else:
            ys = coords(col(0), col(2), h, ch)  # (n, ch)
            xs = coords(col(1), col(3), w, cw)  # (n, cw)
        inside = _core.logical_and(
            _core.expand_dims(_core.logical_and(_core.greater_equal(ys, 0.0), _core.less_equal(ys, float(h - 1))), 2),
            _core.expand_dims(_core.logical_and(_core.greater_equal(xs, 0.0), _core.less_equal(xs, float(w - 1))), 1))
        flat = _core.reshape(xf, [batch * h * w, c])
        base = _core.reshape(_core.mul(bi, h * w), [n, 1, 1])

        def index(v, size):  # clamped integer positions (outside samples are replaced afterwards)
            v = _core.minimum(_core.maximum(v, 0.0), float(size - 1))
            return _core.cast(v, mstype.int64)

        def gather(yi, xi):  # yi (n, ch), xi (n, cw) -> (n, ch, cw, C)
            idx = _core.add(_core.add(base, _core.expand_dims(_core.mul(yi, w), 2)), _core.expand_dims(xi, 1))
            return _core.reshape(_core.gather(flat, _core.reshape(idx, [-1]), 0), [n, ch, cw, c])

        ys_c, xs_c = _core.stop_gradient(ys), _core.stop_gradient(xs)
        if self.method == "nearest":
            out = gather(index(_core.floor(_core.add(ys_c, 0.5)), h), index(_core.floor(_core.add(xs_c, 0.5)), w))
        else:
            y0, x0 = _core.floor(ys_c), _core.floor(xs_c)
            ty, tx = index(y0, h), index(x0, w)
            by, rx = index(_core.ceil(ys_c), h), index(_core.ceil(xs_c), w)
            yl = _core.reshape(_core.sub(ys, y0), [n, ch, 1, 1])
            xl = _core.reshape(_core.sub(xs, x0), [n, 1, cw, 1])
            tl, tr, bl, br = gather(ty, tx), gather(ty, rx), gather(by, tx), gather(by, rx)
            top = _core.add(tl, _core.mul(_core.sub(tr, tl), xl))
            bottom = _core.add(bl, _core.mul(_core.sub(br, bl), xl))
            out = _core.add(top, _core.mul(_core.sub(bottom, top), yl))
        fill = _core.full([], self.extrapolation_value, mstype.float32)
        return _core.select(_core.expand_dims(inside, 3), out, fill)


class UniformCandidateSampler(Primitive):
    """MindSpore's UniformCandidateSampler(num_true, num_sampled, unique, range_max, seed=0,
    remove_accidental_hits=False)(true_classes): num_sampled classes drawn uniformly from [0, range_max)
    (TensorFlow's uniform candidate sampler): with unique=True without repeats; with remove_accidental_hits=True
    the classes in true_classes are never drawn. true_classes (batch, num_true) int32/int64.

    Returns (sampled_candidates (num_sampled,) of true_classes' dtype, true_expected_count (batch, num_true)
    float32, sampled_expected_count (num_sampled,) float32). The expected count of every class is
    num_sampled/range_max when each try was kept (num_tries == num_sampled), else 1 − (1 − 1/range_max)^num_tries
    (TensorFlow's ExpectedCountHelper; num_tries counts the draws, rejected ones included). Draws come from Kiln's
    seeded generator (kiln.set_seed / `seed`), so the values differ from MindSpore's; PyNative only (the number of
    draws is data dependent).

    Raises TypeError (attributes of the wrong type, true_classes not int32/int64), ValueError (num_true, num_sampled
    or range_max < 1, seed < 0, unique with num_sampled > range_max, true_classes not (batch, num_true), too few
    classes left to draw without repeats), RuntimeError (called inside a compiled function)."""

    def __init__(self, num_true, num_sampled, unique, range_max, seed=0, remove_accidental_hits=False):
        super().__init__("UniformCandidateSampler")
        op = "UniformCandidateSampler"
        for name, value in (("num_true", num_true), ("num_sampled", num_sampled), ("range_max", range_max),
                            ("seed", seed)):
            _check_type(op, name, value, (int,), "int")
        _check_type(op, "unique", unique, (bool,), "bool")
        _check_type(op, "remove_accidental_hits", remove_accidental_hits, (bool,), "bool")
        for name, value in (("num_true", num_true), ("num_sampled", num_sampled), ("range_max", range_max)):
            if value < 1:
                raise ValueError(f"For '{op}', the '{name}' must be a positive int, but got {value}.")
        if seed < 0:
            raise ValueError(f"For '{op}', the 'seed' must be a non-negative int, but got {seed}.")
        if unique and num_sampled > range_max:
            raise ValueError(f"For '{op}', the value of num_sampled should be <= value of range_max: {range_max}, "
                             f"but got {num_sampled}.")
        self.num_true, self.num_sampled, self.unique, self.range_max = num_true, num_sampled, unique, range_max
        self.seed, self.remove_accidental_hits = seed, remove_accidental_hits

    def __call__(self, true_classes):
        from ..common import seed as _seed
        op = "UniformCandidateSampler"
        if _core.tracing():
            raise RuntimeError(f"For '{op}', Kiln draws the candidates in PyNative only (the number of draws is data "
                               f"dependent); call it outside the compiled function and pass the result in.")
        t = _check_dtype(op, "true_classes", true_classes, (mstype.int32, mstype.int64))
        if t.ndim != 2:
            raise ValueError(f"For primitive[{op}], the dimension of input must be equal to 2, but got {t.ndim}.")
        if t.shape[1] != self.num_true:
            raise ValueError(f"For primitive[{op}], the num_true must be equal to {t.shape[1]}, but got "
                             f"{self.num_true}.")
        banned = set(int(v) for v in np.asarray(t.asnumpy()).reshape(-1)) if self.remove_accidental_hits else set()
        banned &= set(range(self.range_max))
        if (self.unique or banned) and self.range_max - len(banned) < (self.num_sampled if self.unique else 1):
            raise ValueError(f"For '{op}', only {self.range_max - len(banned)} classes of [0, {self.range_max}) can be "
                             f"drawn, fewer than num_sampled = {self.num_sampled}.")
        s, stream = _seed._next_key(op, self.seed or None)
        rng = np.random.default_rng([int(s) % (2 ** 63), int(stream) % (2 ** 63)])
        picked, seen, tries = [], set(), 0
        while len(picked) < self.num_sampled:
            v = int(rng.integers(0, self.range_max))
            tries += 1
            if v in banned or (self.unique and v in seen):
                continue
            picked.append(v)
            seen.add(v)
        p = 1.0 / self.range_max
        expected = p * self.num_sampled if tries == self.num_sampled else -np.expm1(tries * np.log1p(-p))
        np_dt = mstype.dtype_to_nptype(t.dtype)
        return (Tensor(np.array(picked, dtype=np_dt)),
                Tensor(np.full(tuple(t.shape), expected, np.float32)),
                Tensor(np.full((self.num_sampled,), expected, np.float32)))


@defop()
def matrix_solve(matrix, rhs, adjoint=False):
    """MindSpore's ops.matrix_solve(matrix, rhs, adjoint=False): X with matrix·X = rhs (adjoint=True: matrixᴴ·X =
    rhs, the transpose for real dtypes), for matrix (..., M, M) and rhs (..., M, K) of the same float dtype and
    rank; X has rhs's shape and dtype. Computed as MatrixInverse(matrix)·rhs (Kiln's pivoted LU), so its gradient is
    the inverse's and the product's.

    Raises TypeError (adjoint not a bool, a non-float dtype, matrix and rhs of different dtypes), ValueError (rank
    below 2, ranks that differ, a non-square matrix, rhs's M different from matrix's, and in PyNative a matrix that
    is not invertible)."""
    from . import transpose
    op = "MatrixSolve"
    _check_type(op, "adjoint", adjoint, (bool,), "bool")
    a = _check_dtype(op, "matrix type", matrix, _F16_32_64)
    b = _tensor_arg(rhs, op, "rhs")
    if a.dtype != b.dtype:
        raise TypeError(f"For primitive[{op}], the input type must be same: 'matrix' is {a.dtype}, 'rhs' is "
                        f"{b.dtype}.")
    if a.ndim < 2:
        raise ValueError(f"For primitive[{op}], the dimension of 'matrix' must be greater than or equal to 2 , but "
                         f"got {a.ndim}.")
    if a.ndim != b.ndim:
        raise ValueError(f"For primitive[{op}], the dimension of 'matrix' must be equal to the dimension of 'rhs' "
                         f"which is {b.ndim} , but got {a.ndim}.")
    if a.shape[-1] != a.shape[-2]:
        raise ValueError(f"For primitive[{op}], the M in the shape of 'matrix' [..., M, M] must be equal to "
                         f"{a.shape[-2]} , but got {a.shape[-1]}.")
    if b.shape[-2] != a.shape[-1]:
        raise ValueError(f"For primitive[{op}], the M in the shape of 'matrix' [..., M, M] must be equal to M in the "
                         f"shape of 'rhs' [..., M, K] which is {b.shape[-2]} , but got {a.shape[-1]}.")
    if adjoint:
        perm = list(range(a.ndim - 2)) + [a.ndim - 1, a.ndim - 2]
        a = transpose(a, tuple(perm))
    inv = _core.inverse(a)  # the MatrixInverse op (pivoted LU in double); float16 too, as MatrixSolve takes it
    if not _core.tracing():
        vals = np.asarray(_core.stop_gradient(inv).asnumpy())
        if not np.all(np.isfinite(vals)) and np.all(np.isfinite(np.asarray(a.asnumpy()))):
            raise ValueError(f"For '{op}', the input 'matrix' is not invertible.")
    return _core.matmul(inv, b)


class MatrixSolve(Primitive):
    """MindSpore's MatrixSolve(adjoint=False)(matrix, rhs): ops.matrix_solve(matrix, rhs, adjoint). Raises TypeError
    at construction for an adjoint that is not a bool (and what ops.matrix_solve raises at the call)."""

    def __init__(self, adjoint=False):
        super().__init__("MatrixSolve")
        self.adjoint = _check_type("MatrixSolve", "adjoint", adjoint, (bool,), "bool")

    def __call__(self, matrix, rhs):
        return matrix_solve(matrix, rhs, self.adjoint)
