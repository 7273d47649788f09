"""RandomSelectSubpolicy and RandomColor of kiln.dataset.vision (tutorial dataset/augment.md). They draw from
`_random._rng()` (seeded by `kiln.dataset.config.set_seed`)."""
import math
import numbers

import numpy as np

from ..transforms._base import TensorOperation, check_range
from ..transforms.transforms import _apply, _input_row, _result
from ._random import _rng


class RandomSelectSubpolicy(TensorOperation):
    """Picks one sub-policy uniformly at random and runs its (operation, prob) pairs in order, each with its
    probability (MindSpore's random_select_subpolicy_op: a uniform policy index, then a U[0, 1) draw per pair).

    Args:
        policy (list[list[tuple[op, float]]]): the sub-policies; each a non-empty list of (operation or Python
            callable, probability in [0, 1]) pairs.

    Raises (MindSpore's words):
        TypeError: policy or a sub-policy not a list, an operation that is not callable.
        ValueError: an empty policy or sub-policy, a pair that is not a 2-tuple, a probability outside [0, 1].
    """
    _num_inputs = None

    def __init__(self, policy):
        if not isinstance(policy, list):
            raise TypeError(f"Argument policy with value {policy} is not of type [<class 'list'>], but got "
                            f"{type(policy)}.")
        if not policy:
            raise ValueError("policy can not be empty.")
        for i, sub in enumerate(policy):
            if not isinstance(sub, list):
                raise TypeError(f"Argument policy[[{i}]] with value {sub} is not of type [<class 'list'>], but got "
                                f"{type(sub)}.")
            if not sub:
                raise ValueError(f"policy[{i}] can not be empty.")
            for j, pair in enumerate(sub):
                if not isinstance(pair, tuple) or len(pair) != 2:
                    raise ValueError(f"Value policy[{i}][{j}] needs to be a 2-tuple.")
                op, prob = pair
                if not callable(op):
                    raise TypeError(f"op of (op, prob) in policy[{i}][{j}] is neither a transforms op "
                                    "(TensorOperation) nor a callable pyfunc.")
                if not isinstance(prob, numbers.Real) or isinstance(prob, bool):
                    raise TypeError(f"prob of (op, prob) policy[{i}][{j}] must be a number, but got {prob!r}.")
                if not 0 <= prob <= 1:
                    raise ValueError(f"Input prob of (op, prob) policy[{i}][{j}] is not within the required "
                                     "interval of [0, 1].")
        self.policy = [[(op, float(prob)) for op, prob in sub] for sub in policy]

    def __call__(self, *args):
        rng = _rng()
        sub = self.policy[int(rng.integers(len(self.policy)))]
        row = _input_row(args)
        for op, prob in sub:
            if rng.random() < prob:
                row = _apply([op], row)
        return _result(row)


def _gray_u8(img):
    """OpenCV's COLOR_RGB2GRAY of a uint8 HWC RGB array: 15-bit fixed point (R*9798 + G*19235 + B*3735 + 2^14)
    >> 15 (cv::cvtColor's 8-bit path, which MindSpore's RandomColor calls)."""
    r, g, b = (img[..., k].astype(np.int32) for k in range(3))
    return ((r * 9798 + g * 19235 + b * 3735 + (1 << 14)) >> 15).astype(np.uint8)


def blend_with_gray(img, t):
    """MindSpore's RandomColor for one factor t: the image blended with its grayscale version, out = img*t +
    gray*(1-t), as cv::addWeighted computes it for uint8 (float32 weights, a fused multiply-add, rounding to
    nearest even, saturation to 0..255). |t - 1| < 0.00195 returns the image, |t| < 0.00195 the gray image."""
    eps = 0.00195
    if abs(t - 1.0) < eps:
        return img
    gray = _gray_u8(img)
    if abs(t) < eps:
        return np.repeat(gray[..., None], 3, axis=2)
    alpha = np.float32(t)
    beta = np.float32(np.float32(1) - alpha)
    inner = (gray.astype(np.float64) * np.float64(beta)).astype(np.float32)  # gray*beta + 0, rounded to float32
    out = (img.astype(np.float64) * np.float64(alpha) + inner[..., None]).astype(np.float32)  # fma, one rounding
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


class RandomColor(TensorOperation):
    """Blends the image with its grayscale version by a factor t drawn from U[degrees[0], degrees[1]] (t = 1: the
    image, 0: gray, above 1: more saturated), MindSpore's RandomColor (random_color_op.cc; see blend_with_gray).

    Input: uint8 HWC RGB array (3 channels) or a PIL Image (RGB; returned as a PIL Image).

    Args:
        degrees (tuple[float, float]): the range of t, 0 <= min <= max <= 16777216. Default (0.1, 1.9).

    Raises:
        TypeError: degrees not a list/tuple. ValueError: not of length 2, out of range, or (max, min).
        RuntimeError (when called): not an HWC image with 3 channels, or not uint8.
    """

    def __init__(self, degrees=(0.1, 1.9)):
        if not isinstance(degrees, (list, tuple)):
            raise TypeError("degrees must be either a tuple or a list.")
        if len(degrees) != 2:
            raise ValueError("degrees must be a sequence with length 2.")
        for d in degrees:
            if not isinstance(d, numbers.Real) or isinstance(d, bool):
                raise TypeError(f"degrees must be a sequence of numbers, but got {degrees!r}.")
            check_range(d, 0, 16777216, "degrees")
        if degrees[0] > degrees[1]:
            raise ValueError("degrees should be in (min,max) format. Got (max,min).")
        self.degrees = (float(degrees[0]), float(degrees[1]))

    def _execute_pil(self, img):
        from PIL import Image
        return Image.fromarray(self._execute(np.asarray(img.convert("RGB"))))

    def _execute(self, img):
        if img.ndim != 3 or img.shape[2] != 3:
            raise RuntimeError(f"RandomColor: image shape is not <H,W,C> or channel is not 3, got shape "
                               f"{img.shape}.")
        if img.dtype != np.uint8:
            raise RuntimeError(f"RandomColor: the image must be uint8, but got {img.dtype}.")
        t = float(np.float32(_rng().uniform(*self.degrees)))
        return np.ascontiguousarray(blend_with_gray(img, t))





def _f32(v):
    return np.float32(v)


def affine_matrix(height, width, degrees, translation, scale, shear):
    """MindSpore's GetAffineMatrix (image_utils.cc): M = T * C * RSS * C^-1 with C the centre ((w-1)/2, (h-1)/2),
    RSS rotation * scale * shear (shear_y negated, angles in degrees), T the translation in pixels. Returns the
    2x3 forward matrix (float64) given to cv::warpAffine; computed in double, it gives MindSpore 2.10's
    nearest-neighbour outputs pixel for pixel."""
    a, sx, sy = (math.radians(v) for v in (degrees, shear[0], -shear[1]))
    if math.cos(sy) == 0:
        raise RuntimeError("RandomAffine: cos(shear_y) should not be zero.")
    cx, cy = (width - 1) / 2.0, (height - 1) / 2.0
    m0 = scale * math.cos(a + sy) / math.cos(sy)
    m1 = scale * (-math.cos(a + sy) * math.tan(sx) / math.cos(sy) - math.sin(a))
    m3 = scale * math.sin(a + sy) / math.cos(sy)
    m4 = scale * (-math.sin(a + sy) * math.tan(sx) / math.cos(sy) + math.cos(a))
    m2 = (1 - m0) * cx - m1 * cy + translation[0]
    m5 = (1 - m4) * cy - m3 * cx + translation[1]
    return np.array([[m0, m1, m2], [m3, m4, m5]], dtype=np.float64)


class RandomAffine(TensorOperation):
    """A random affine transformation about the image centre (MindSpore's RandomAffine: random_affine_op.cc and
    GetAffineMatrix/Affine of image_utils.cc): per call it draws the rotation in `degrees`, a translation in the
    `translate` fractions of the width/height, a scale in `scale` and the x/y shears in `shear` (degrees), builds
    MindSpore's matrix (affine_matrix) and warps with OpenCV's warpAffine (`resample`: NEAREST, BILINEAR,
    BICUBIC, AREA), filling outside pixels with `fill_value`. The draws come from Kiln's seeded generator, so a
    seed repeats a run but not MindSpore's draws. With fixed ranges, NEAREST gives MindSpore 2.10's output pixel for
    pixel; BILINEAR/BICUBIC differ from it by a few grey levels at some pixels (OpenCV builds differ).

    Args:
        degrees (float | tuple[float, float]): rotation range in degrees (a number d: (-d, d); d >= 0).
        translate (tuple of 2 or 4 floats in [-1, 1], optional): (min_x, max_x) or (min_x, max_x, min_y, max_y)
            as fractions of the width/height (2 values: no vertical translation). Default none.
        scale (tuple[float, float], optional): scale range, 0 <= min <= max, max > 0. Default (1, 1).
        shear (float | tuple of 2 or 4 floats, optional): a number s: x shear in (-s, s); 2 values: x range;
            4 values: x and y ranges (degrees). Default none.
        resample (Inter): interpolation. Default Inter.NEAREST.
        fill_value (int | tuple[int, int, int]): the fill colour, 0..255. Default 0.

    Input: HWC or HW array (uint8 or float32). Raises TypeError / ValueError for bad arguments (MindSpore's words).
    """

    def __init__(self, degrees, translate=None, scale=None, shear=None, resample=None, fill_value=0):
        from .transforms import check_fill, check_inter
        from .utils import Inter
        self.degrees = _range_of(degrees)
        if translate is not None:
            if not isinstance(translate, (list, tuple)):
                raise TypeError(f"Argument translate with value {translate} is not of type [<class 'list'>, "
                                f"<class 'tuple'>], but got {type(translate)}.")
            if len(translate) not in (2, 4):
                raise TypeError("translate should be a list or tuple of length 2 or 4.")
            for i, t in enumerate(translate):
                if not isinstance(t, numbers.Real) or isinstance(t, bool):
                    raise TypeError(f"Argument translate[{i}] with value {t} is not of type [<class 'int'>, "
                                    f"<class 'float'>], but got {type(t)}.")
                if not -1.0 <= t <= 1.0:
                    raise ValueError(f"Input translate at {i} is not within the required interval of [-1.0, 1.0].")
            translate = tuple(float(t) for t in translate)
            if len(translate) == 2:
                translate = translate + (0.0, 0.0)
        self.translate = translate or (0.0, 0.0, 0.0, 0.0)
        if scale is not None:
            if not isinstance(scale, (list, tuple)) or len(scale) != 2:
                raise TypeError("scale should be a list or tuple of length 2.")
            if scale[0] > scale[1]:
                raise ValueError("Input scale[1] must be equal to or greater than scale[0].")
            for v in scale:
                check_range(v, 0, 16777216, "scale")
            if scale[1] <= 0:
                raise ValueError("Input scale[1] must be greater than 0.")
        self.scale = tuple(float(v) for v in scale) if scale is not None else (1.0, 1.0)
        if shear is not None:
            if isinstance(shear, numbers.Real) and not isinstance(shear, bool):
                if shear <= 0:
                    raise ValueError("Input shear must be greater than 0.")
                shear = (-float(shear), float(shear), 0.0, 0.0)
            elif isinstance(shear, (list, tuple)):
                if len(shear) not in (2, 4):
                    raise TypeError("shear must be of length 2 or 4.")
                if len(shear) == 2 and shear[0] > shear[1]:
                    raise ValueError("Input shear[1] must be equal to or greater than shear[0]")
                if len(shear) == 4 and (shear[0] > shear[1] or shear[2] > shear[3]):
                    raise ValueError("Input shear[1] must be equal to or greater than shear[0] and shear[3] must be "
                                     "equal to or greater than shear[2].")
                shear = tuple(float(v) for v in shear) + ((0.0, 0.0) if len(shear) == 2 else ())
            else:
                raise TypeError(f"Argument shear with value {shear} is not of type [<class 'numbers.Number'>, "
                                f"<class 'tuple'>, <class 'list'>], but got {type(shear)}.")
        self.shear = shear or (0.0, 0.0, 0.0, 0.0)
        self.resample = check_inter(Inter.NEAREST if resample is None else resample, "resample",
                                    (Inter.NEAREST, Inter.BILINEAR, Inter.BICUBIC, Inter.AREA))
        if not isinstance(fill_value, (int, tuple)) or isinstance(fill_value, bool):
            raise TypeError("fill_value should be a single integer or a 3-tuple.")
        fill = check_fill(fill_value)
        self.fill_value = fill if isinstance(fill, tuple) else (fill, fill, fill)

    def _execute_pil(self, img):
        from PIL import Image
        return Image.fromarray(self._execute(np.asarray(img)))

    def _execute(self, img):
        import cv2

        from .utils import Inter
        if img.ndim not in (2, 3):
            raise RuntimeError(f"RandomAffine: the image should be <H,W> or <H,W,C>, but got shape {img.shape}.")
        h, w = img.shape[:2]
        rng = _rng()
        t = self.translate
        draw = [rng.uniform(*self.degrees), rng.uniform(_f32(t[0] * w), _f32(t[1] * w)),
                rng.uniform(_f32(t[2] * h), _f32(t[3] * h)), rng.uniform(*self.scale),
                rng.uniform(*self.shear[:2]), rng.uniform(*self.shear[2:])]
        degrees, tx, ty, scale, shx, shy = (float(_f32(v)) for v in draw)
        matrix = affine_matrix(h, w, float(np.fmod(degrees, 360.0)), (tx, ty), scale, (shx, shy))
        flags = {Inter.NEAREST: cv2.INTER_NEAREST, Inter.BILINEAR: cv2.INTER_LINEAR, Inter.BICUBIC: cv2.INTER_CUBIC,
                 Inter.AREA: cv2.INTER_AREA}[self.resample]
        fill = self.fill_value if img.ndim == 3 else self.fill_value[0]
        out = cv2.warpAffine(np.ascontiguousarray(img), matrix, (w, h), flags=flags, borderMode=cv2.BORDER_CONSTANT,
                             borderValue=fill)
        return out.reshape(img.shape)


def _range_of(degrees):
    if isinstance(degrees, numbers.Real) and not isinstance(degrees, bool):
        if not 0 <= degrees <= 16777216:
            raise ValueError("Input degrees is not within the required interval of [0, 16777216].")
        return (-float(degrees), float(degrees))
    if isinstance(degrees, (list, tuple)):
        if len(degrees) != 2:
            raise TypeError("If degrees is a sequence, the length must be 2.")
        for v in degrees:
            if not isinstance(v, numbers.Real) or isinstance(v, bool):
                raise TypeError(f"Argument degrees with value {degrees} is not of type [<class 'int'>, "
                                "<class 'float'>].")
        if degrees[0] > degrees[1]:
            raise ValueError("degrees should be in (min,max) format. Got (max,min).")
        return (float(degrees[0]), float(degrees[1]))
    raise TypeError(f"Argument degrees with value {degrees} is not of type [<class 'int'>, <class 'float'>, "
                    f"<class 'list'>, <class 'tuple'>], but got {type(degrees)}.")
