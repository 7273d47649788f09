"""The random image operations of kiln.dataset.vision. They draw from `_random._rng()` (seeded by
`kiln.dataset.config.set_seed`; one stream per thread and worker process)."""
import math
import numbers

import numpy as np
from PIL import Image, ImageEnhance

from ..transforms._base import TensorOperation, check_number, check_range, check_type
from . import _image
from ._random import _rng
from .transforms import (_crop_array, _to_pil_like, check_border, check_fill, check_inter, check_padding,
                         check_rotation_args, check_size)
from .utils import Border, Inter


def _check_prob(prob):
    check_type(prob, (numbers.Real,), "prob")
    check_range(prob, 0.0, 1.0, "prob")
    return float(prob)


class RandomHorizontalFlip(TensorOperation):
    """Mirrors the image left-right with probability `prob` (default 0.5). PIL input gives a PIL Image."""

    def __init__(self, prob=0.5):
        self.prob = _check_prob(prob)

    def _execute_pil(self, img):
        return img.transpose(Image.Transpose.FLIP_LEFT_RIGHT) if _rng().random() < self.prob else img

    def _execute(self, img):
        _image.check_image(img, "RandomHorizontalFlip")
        if _rng().random() < self.prob:
            return np.ascontiguousarray(np.flip(img, axis=1 if img.ndim <= 3 else img.ndim - 2))
        return img


class RandomVerticalFlip(TensorOperation):
    """Mirrors the image top-bottom with probability `prob` (default 0.5). PIL input gives a PIL Image."""

    def __init__(self, prob=0.5):
        self.prob = _check_prob(prob)

    def _execute_pil(self, img):
        return img.transpose(Image.Transpose.FLIP_TOP_BOTTOM) if _rng().random() < self.prob else img

    def _execute(self, img):
        _image.check_image(img, "RandomVerticalFlip")
        if _rng().random() < self.prob:
            return np.ascontiguousarray(np.flip(img, axis=0 if img.ndim <= 3 else img.ndim - 3))
        return img


class RandomCrop(TensorOperation):
    """Crops a random `size` (int or (h, w)) window, every position equally likely.

    Args:
        padding (int or sequence, default None): padding applied first, as `Pad`'s.
        pad_if_needed (bool, default False): pad an image smaller than `size` by the missing amount on both
            sides of that dimension.
        fill_value (int or 3-tuple, default 0), padding_mode (Border, default CONSTANT): as `Pad`.
    Raises RuntimeError when the (padded) image is smaller than the crop."""

    def __init__(self, size, padding=None, pad_if_needed=False, fill_value=0, padding_mode=Border.CONSTANT):
        self.size = check_size(size)
        self.padding = None if padding is None else check_padding(padding)
        check_type(pad_if_needed, (bool,), "pad_if_needed")
        self.pad_if_needed = pad_if_needed
        self.fill_value = check_fill(fill_value)
        self.padding_mode = check_border(padding_mode)

    def _execute_pil(self, img):
        return _to_pil_like(self._execute(np.asarray(img)), img)

    def _pad(self, img, top, bottom, left, right):
        fill = self.fill_value
        if isinstance(fill, tuple) and (img.ndim == 2 or img.shape[2] != 3):
            fill = fill[0]
        return _image.pad_array(img, top, bottom, left, right, fill, self.padding_mode.value)

    def _execute(self, img):
        _image.check_image(img, "RandomCrop", max_rank=3)
        ch, cw = (self.size, self.size) if isinstance(self.size, int) else self.size
        if self.padding is not None:
            left, top, right, bottom = self.padding
            img = self._pad(img, top, bottom, left, right)
        if self.pad_if_needed:
            dh, dw = max(ch - img.shape[0], 0), max(cw - img.shape[1], 0)
            if dh or dw:
                img = self._pad(img, dh, dh, dw, dw)
        h, w = img.shape[:2]
        if ch > h or cw > w:
            raise RuntimeError("RandomCrop: invalid crop size, crop size is bigger than the image dimensions, got "
                               f"crop height: {ch}, crop width: {cw}, image shape {img.shape}")
        rng = _rng()
        top = int(rng.integers(0, h - ch + 1))
        left = int(rng.integers(0, w - cw + 1))
        return _crop_array(img, top, left, ch, cw)


def _check_min_max(value, name, low=0.0):
    check_type(value, (list, tuple), name)
    if len(value) != 2:
        raise TypeError(f"{name} should be a list/tuple of length 2.")
    for v in value:
        check_number(v, name)
        check_range(v, low, _image_max(), name)
    if value[0] > value[1]:
        raise ValueError(f"{name} should be in (min,max) format. Got (max,min).")
    return (float(value[0]), float(value[1]))


def _image_max():
    return 16777216


def resized_crop_box(h, w, scale, ratio, max_attempts, rng):
    """(top, left, height, width) of RandomResizedCrop's window: up to `max_attempts` tries of area fraction
    U(scale) and log-uniform aspect ratio w/h in `ratio`; then the centre crop clamped to `ratio`
    (the Inception-style algorithm MindSpore and torchvision use)."""
    area = h * w
    log_lo, log_hi = math.log(ratio[0]), math.log(ratio[1])
    for _ in range(max_attempts):
        target = area * rng.uniform(scale[0], scale[1])
        aspect = math.exp(rng.uniform(log_lo, log_hi))
        cw = int(round(math.sqrt(target * aspect)))
        ch = int(round(math.sqrt(target / aspect)))
        if 0 < cw <= w and 0 < ch <= h:
            top = int(rng.integers(0, h - ch + 1))
            left = int(rng.integers(0, w - cw + 1))
            return top, left, ch, cw
    in_ratio = w / h
    if in_ratio < ratio[0]:
        cw, ch = w, int(round(w / ratio[0]))
    elif in_ratio > ratio[1]:
        ch, cw = h, int(round(h * ratio[1]))
    else:
        cw, ch = w, h
    ch, cw = max(1, min(ch, h)), max(1, min(cw, w))
    return (h - ch) // 2, (w - cw) // 2, ch, cw


class RandomResizedCrop(TensorOperation):
    """Crops a random window (area fraction in `scale`, aspect ratio w/h in `ratio`) and resizes it to `size`.

    Args:
        size (int or (h, w)), scale ((min, max), default (0.08, 1.0)), ratio ((min, max), default (3/4, 4/3)),
        interpolation (Inter, default BILINEAR; as `Resize`), max_attempts (int >= 1, default 10).
    Raises RuntimeError for rank < 2 or unsupported image dtypes."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3. / 4., 4. / 3.), interpolation=Inter.BILINEAR,
                 max_attempts=10):
        self.size = check_size(size)
        self.scale = _check_min_max(scale, "scale")
        self.ratio = _check_min_max(ratio, "ratio")
        if self.ratio[0] <= 0:
            raise ValueError("ratio should be positive.")
        self.interpolation = check_inter(interpolation)
        check_type(max_attempts, (int,), "max_attempts")
        check_range(max_attempts, 1, 2147483647, "max_attempts")
        self.max_attempts = max_attempts

    def _out_size(self):
        return (self.size, self.size) if isinstance(self.size, int) else self.size

    def _execute_pil(self, img):
        w, h = img.size
        top, left, ch, cw = resized_crop_box(h, w, self.scale, self.ratio, self.max_attempts, _rng())
        oh, ow = self._out_size()
        crop = img.crop((left, top, left + cw, top + ch))  # crop, then resize: MindSpore's Python op
        return crop.resize((ow, oh), _image._RESAMPLE[self.interpolation])  # pylint: disable=protected-access

    def _execute(self, img):
        if self.interpolation == Inter.ANTIALIAS:
            raise TypeError(f"img should be PIL image. Got {type(img)}. Use Decode() for encoded data or ToPIL() "
                            "for decoded data.")
        _image.check_image(img, "RandomResizedCrop", max_rank=3)
        _image.check_geom_dtype(img, "RandomResizedCrop")
        top, left, ch, cw = resized_crop_box(img.shape[0], img.shape[1], self.scale, self.ratio,
                                             self.max_attempts, _rng())
        crop = img[top:top + ch, left:left + cw]
        return _image.resize_array(crop, self._out_size(), self.interpolation)


class RandomRotation(TensorOperation):
    """Rotates by an angle drawn uniformly from `degrees` ((min, max), or a number d >= 0 meaning (-d, d)).

    Other arguments as `Rotate` (resample default NEAREST, expand, center, fill_value). Arrays rotate as `Rotate`
    (OpenCV's conventions); a PIL Image is rotated by Pillow's `Image.rotate` and returned as a PIL Image, as
    MindSpore's Python implementation does."""

    def __init__(self, degrees, resample=Inter.NEAREST, expand=False, center=None, fill_value=0):
        if isinstance(degrees, numbers.Number) and not isinstance(degrees, bool):
            check_range(degrees, 0, 16777216, "degrees")
            degrees = (-float(degrees), float(degrees))
        else:
            check_type(degrees, (list, tuple), "degrees")
            if len(degrees) != 2:
                raise TypeError("degrees should be a single number or a list/tuple of length 2.")
            for v in degrees:
                check_number(v, "degrees")
            if degrees[0] > degrees[1]:
                raise ValueError("degrees should be in (min,max) format. Got (max,min).")
            degrees = (float(degrees[0]), float(degrees[1]))
        self.degrees = degrees
        self.resample, self.expand, self.center, self.fill_value = check_rotation_args(resample, expand, center,
                                                                                     fill_value)

    def _angle(self):
        return float(_rng().uniform(self.degrees[0], self.degrees[1]))

    def _execute_pil(self, img):
        # MindSpore's Python op: Pillow's own rotate (Pillow's centre convention and expanded size)
        resample = {Inter.NEAREST: Image.Resampling.NEAREST, Inter.BICUBIC: Image.Resampling.BICUBIC}.get(
            self.resample, Image.Resampling.BILINEAR)
        fill = self.fill_value
        if len(img.getbands()) == 1:
            fill = fill[0] if isinstance(fill, tuple) else fill
        elif not isinstance(fill, tuple):
            fill = (fill,) * len(img.getbands())
        return img.rotate(self._angle(), resample=resample, expand=self.expand, center=self.center, fillcolor=fill)

    def _execute(self, img):
        _image.check_image(img, "RandomRotation", max_rank=3)
        _image.check_geom_dtype(img, "RandomRotation")
        return _image.rotate_array(img, self._angle(), self.resample, self.expand, self.center, self.fill_value)


def _factor_range(value, name, center=1.0, bound=(0.0, float("inf")), non_negative=True):
    if isinstance(value, numbers.Number) and not isinstance(value, bool):
        if value < 0:
            raise ValueError(f"The input value of {name} cannot be negative.")
        lo, hi = center - value, center + value
        if non_negative:
            lo = max(0.0, lo)
        if not bound[0] <= lo <= hi <= bound[1]:
            raise ValueError(f"Input {name} is not within the required interval of [{bound[0]}, {bound[1]}].")
        return (float(lo), float(hi))
    if isinstance(value, (list, tuple)) and len(value) == 2:
        for v in value:
            check_number(v, name)
        if not bound[0] <= value[0] <= value[1] <= bound[1]:
            raise ValueError(f"Please check your value range of {name} is valid and within the bound {bound}.")
        return (float(value[0]), float(value[1]))
    raise TypeError(f"Input of {name} should be either a single value, or a list/tuple of length 2.")


def _adjust_hue(img, factor):
    if img.mode in ("L", "1", "I", "F"):
        return img
    mode = img.mode
    h, s, v = img.convert("HSV").split()
    hue = np.asarray(h, dtype=np.uint8) + np.uint8(int(factor * 255) & 0xFF)  # wraps around, as MindSpore
    return Image.merge("HSV", (Image.fromarray(hue.astype(np.uint8), "L"), s, v)).convert(mode)


class RandomColorAdjust(TensorOperation):
    """Randomly changes brightness, contrast, saturation (factors) and hue (shift), applied in a random order.

    Each of brightness/contrast/saturation is a number b >= 0 (factor from U[max(0, 1 - b), 1 + b]) or a
    (min, max) range; hue is h in [0, 0.5] (shift from U[-h, h]) or a range within [-0.5, 0.5]. Defaults leave
    the image unchanged. Adjustments are Pillow's ImageEnhance (Brightness, Contrast, Color) and an HSV hue
    rotation, the formulas of MindSpore's Python implementation; a neutral factor (1, or 0 for hue) is skipped.
    Arrays must be HWC uint8 RGB (RuntimeError otherwise); PIL Images give PIL Images."""

    def __init__(self, brightness=(1, 1), contrast=(1, 1), saturation=(1, 1), hue=(0, 0)):
        self.brightness = _factor_range(brightness, "brightness")
        self.contrast = _factor_range(contrast, "contrast")
        self.saturation = _factor_range(saturation, "saturation")
        self.hue = _factor_range(hue, "hue", center=0.0, bound=(-0.5, 0.5), non_negative=False)

    def _execute_pil(self, img):
        rng = _rng()
        b, c, s, h = (rng.uniform(*r) for r in (self.brightness, self.contrast, self.saturation, self.hue))
        steps = [lambda im: ImageEnhance.Brightness(im).enhance(b),
                 lambda im: ImageEnhance.Contrast(im).enhance(c),
                 lambda im: ImageEnhance.Color(im).enhance(s),
                 lambda im: _adjust_hue(im, h)]
        identity = (b == 1.0, c == 1.0, s == 1.0, h == 0.0)
        for i in rng.permutation(4):
            if not identity[i]:  # a neutral factor leaves the image exactly unchanged (no HSV round trip)
                img = steps[i](img)
        return img

    def _execute(self, img):
        if img.ndim != 3:
            raise RuntimeError("RandomColorAdjust: the dimension of image tensor does not match the requirement "
                               f"of operator. Expecting tensor in dimension of (3), in shape of <H, W, C>. But got "
                               f"shape {img.shape}.")
        if img.shape[2] != 3:
            raise RuntimeError("RandomColorAdjust: the channel of image tensor does not match the requirement of "
                               f"operator. Expecting tensor in channel of (3). But got channel {img.shape[2]}.")
        if img.dtype != np.uint8:
            raise RuntimeError(f"RandomColorAdjust: expecting a uint8 image, but got {img.dtype}.")
        return np.asarray(self._execute_pil(Image.fromarray(img, "RGB"))).copy()
