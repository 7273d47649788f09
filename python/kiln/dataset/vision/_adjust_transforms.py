"""Pixel-value operations of kiln.dataset.vision: Invert, Equalize, AutoContrast, Posterize, Solarize,
AdjustSharpness, their random variants, RandomSharpness, CutOut and RandomCropDecodeResize.

Libraries, chosen to give MindSpore 2.10's exact outputs (checked in tests/python/test_dataset_vision_adjust.py):
Equalize is OpenCV's equalizeHist per channel (MindSpore's C++ kernel is OpenCV's); AutoContrast, Posterize,
Solarize and sharpness are Pillow's ImageOps / ImageEnhance (MindSpore's definitions follow Pillow's)."""
import numbers

import numpy as np
from PIL import Image, ImageEnhance, ImageOps

from ..transforms._base import TensorOperation, check_range, check_type
from ._random import _rng
from ._random_transforms import RandomResizedCrop, _check_prob
from .transforms import Decode
from .utils import Inter

__all__ = ["Invert", "Equalize", "AutoContrast", "Posterize", "Solarize", "AdjustSharpness", "RandomInvert",
           "RandomEqualize", "RandomAutoContrast", "RandomPosterize", "RandomSolarize", "RandomSharpness", "CutOut",
           "RandomCropDecodeResize"]


def _uint8_image(img, op):
    """An HW or HWC (1 or 3 channel) uint8 image, else RuntimeError naming the op."""
    if img.ndim not in (2, 3) or (img.ndim == 3 and img.shape[2] not in (1, 3)):
        raise RuntimeError(f"{op}: the image must be <H, W> or <H, W, C> with C 1 or 3, but got shape {img.shape}.")
    if img.dtype != np.uint8:
        raise RuntimeError(f"{op}: the image must be uint8, but got {img.dtype}.")
    return img


def _via_pil(img, fn, op):
    """fn applied to the PIL Image of a uint8 HW/HWC array, back as an array of the input's shape."""
    _uint8_image(img, op)
    squeeze = img.ndim == 3 and img.shape[2] == 1
    pil = Image.fromarray(img[:, :, 0] if squeeze else img)
    out = np.asarray(fn(pil))
    return out[:, :, None].copy() if squeeze else out.copy()


class Invert(TensorOperation):
    """255 − pixel for every channel of an HWC image (uint8 stays uint8; float images give 255 − x, as MindSpore).
    Raises RuntimeError for other ranks / channel counts."""

    def _execute(self, img):
        if img.ndim not in (2, 3):
            raise RuntimeError(f"Invert: the image must be <H, W> or <H, W, C>, but got shape {img.shape}.")
        if img.dtype == np.uint8:
            return 255 - img
        return (255 - img.astype(np.float64)).astype(img.dtype)

    def _execute_pil(self, img):
        return ImageOps.invert(img.convert("RGB") if img.mode not in ("L", "RGB") else img)


class Equalize(TensorOperation):
    """Histogram equalization of each channel of a uint8 HW/HWC image (OpenCV's equalizeHist, as MindSpore)."""

    def _execute(self, img):
        import cv2
        _uint8_image(img, "Equalize")
        if img.ndim == 2:
            return cv2.equalizeHist(np.ascontiguousarray(img))
        return np.stack([cv2.equalizeHist(np.ascontiguousarray(img[:, :, c])) for c in range(img.shape[2])], 2)

    def _execute_pil(self, img):
        return Image.fromarray(self._execute(np.asarray(img)))


def _check_cutoff_ignore(cutoff, ignore):
    check_type(cutoff, (numbers.Real,), "cutoff")
    check_range(cutoff, 0.0, 50.0, "cutoff")
    if ignore is not None:
        items = [ignore] if isinstance(ignore, numbers.Integral) else ignore
        if not isinstance(items, (list, tuple)) or not all(isinstance(v, numbers.Integral) and 0 <= v <= 255
                                                           for v in items):
            raise TypeError(f"Argument ignore with value {ignore!r} is not of type [int, list, tuple] of ints in "
                            f"[0, 255].")
    return float(cutoff), ignore


class AutoContrast(TensorOperation):
    """Stretches each channel so its darkest pixel becomes 0 and its brightest 255, after cutting `cutoff` percent
    of pixels off each end of the histogram (0 ≤ cutoff < 50) and ignoring the pixel values in `ignore` (Pillow's
    ImageOps.autocontrast). uint8 HW/HWC images."""

    def __init__(self, cutoff=0.0, ignore=None):
        self.cutoff, self.ignore = _check_cutoff_ignore(cutoff, ignore)

    def _execute(self, img):
        return _via_pil(img, lambda p: ImageOps.autocontrast(p, cutoff=self.cutoff, ignore=self.ignore),
                        "AutoContrast")

    def _execute_pil(self, img):
        return ImageOps.autocontrast(img, cutoff=self.cutoff, ignore=self.ignore)


class Posterize(TensorOperation):
    """Keeps the `bits` (0–8) most significant bits of each uint8 pixel (Pillow's ImageOps.posterize)."""

    def __init__(self, bits):
        check_type(bits, (int,), "bits")
        check_range(bits, 0, 8, "bits")
        self.bits = bits

    def _execute(self, img):
        _uint8_image(img, "Posterize")
        return img & np.uint8((0xFF << (8 - self.bits)) & 0xFF)


class Solarize(TensorOperation):
    """Inverts (255 − x) every uint8 pixel at or above `threshold` (a number, or (min, max): pixels in
    [min, max] are inverted) — Pillow's ImageOps.solarize for a single threshold."""

    def __init__(self, threshold):
        if isinstance(threshold, numbers.Real) and not isinstance(threshold, bool):
            threshold = (float(threshold), 255.0)
        if not isinstance(threshold, (tuple, list)) or len(threshold) != 2 or not all(
                isinstance(v, numbers.Real) and 0 <= v <= 255 for v in threshold) or threshold[0] > threshold[1]:
            raise ValueError(f"threshold must be a number or a (min, max) pair in [0, 255] with min <= max, but got "
                             f"{threshold!r}.")
        self.threshold = tuple(float(v) for v in threshold)

    def _execute(self, img):
        _uint8_image(img, "Solarize")
        lo, hi = self.threshold
        return np.where((img >= lo) & (img <= hi), 255 - img, img).astype(np.uint8)


class AdjustSharpness(TensorOperation):
    """Sharpens (factor > 1) or blurs (factor < 1) a uint8 image with Pillow's ImageEnhance.Sharpness
    (factor 1 returns the image; 0 the smoothed image)."""

    def __init__(self, sharpness_factor):
        check_type(sharpness_factor, (numbers.Real,), "sharpness_factor")
        check_range(sharpness_factor, 0.0, 16777216.0, "sharpness_factor")
        self.sharpness_factor = float(sharpness_factor)

    def _execute(self, img):
        return _via_pil(img, lambda p: ImageEnhance.Sharpness(p).enhance(self.sharpness_factor), "AdjustSharpness")

    def _execute_pil(self, img):
        return ImageEnhance.Sharpness(img).enhance(self.sharpness_factor)


class _RandomApply(TensorOperation):
    """Applies `self._op` with probability `prob`."""

    def _execute(self, img):
        return self._op._execute(img) if _rng().random() < self.prob else img


class RandomInvert(_RandomApply):
    """Invert with probability `prob` (default 0.5)."""

    def __init__(self, prob=0.5):
        self.prob = _check_prob(prob)
        self._op = Invert()


class RandomEqualize(_RandomApply):
    """Equalize with probability `prob` (default 0.5)."""

    def __init__(self, prob=0.5):
        self.prob = _check_prob(prob)
        self._op = Equalize()


class RandomAutoContrast(_RandomApply):
    """AutoContrast(cutoff, ignore) with probability `prob` (default 0.5)."""

    def __init__(self, cutoff=0.0, ignore=None, prob=0.5):
        self.prob = _check_prob(prob)
        self._op = AutoContrast(cutoff, ignore)
        self.cutoff, self.ignore = self._op.cutoff, self._op.ignore


def _check_int_range(value, lo, hi, name):
    if isinstance(value, int) and not isinstance(value, bool):
        value = (value, value)
    if not isinstance(value, (tuple, list)) or len(value) != 2 or not all(
            isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi for v in value) or value[0] > value[1]:
        raise ValueError(f"{name} must be an int or a (min, max) pair of ints in [{lo}, {hi}] with min <= max, but "
                         f"got {value!r}.")
    return tuple(value)


class RandomPosterize(TensorOperation):
    """Posterize with `bits` drawn uniformly from the int range `bits` ((min, max) in [1, 8], or an int)."""

    def __init__(self, bits=(8, 8)):
        self.bits = _check_int_range(bits, 1, 8, "bits")

    def _execute(self, img):
        return Posterize(int(_rng().integers(self.bits[0], self.bits[1] + 1)))._execute(img)


class RandomSolarize(TensorOperation):
    """Solarize with a threshold range whose two ends are drawn uniformly from `threshold` ((min, max) in [0, 255]):
    MindSpore draws min and max and inverts the pixels in [min, max]."""

    def __init__(self, threshold=(0, 255)):
        self.threshold = _check_int_range(threshold, 0, 255, "threshold")

    def _execute(self, img):
        lo, hi = sorted(int(v) for v in _rng().integers(self.threshold[0], self.threshold[1] + 1, 2))
        return Solarize((lo, hi))._execute(img)


class RandomSharpness(TensorOperation):
    """AdjustSharpness with a factor drawn uniformly from `degrees` ((min, max), default (0.1, 1.9))."""

    def __init__(self, degrees=(0.1, 1.9)):
        if not isinstance(degrees, (tuple, list)) or len(degrees) != 2 or not all(
                isinstance(v, numbers.Real) and v >= 0 for v in degrees) or degrees[0] > degrees[1]:
            raise ValueError(f"degrees must be a (min, max) pair of non-negative numbers with min <= max, but got "
                             f"{degrees!r}.")
        self.degrees = tuple(float(v) for v in degrees)

    def _execute(self, img):
        return AdjustSharpness(float(_rng().uniform(*self.degrees)))._execute(img)


class CutOut(TensorOperation):
    """Zeroes `num_patches` random `length`×`length` squares (DeVries & Taylor 2017): each square's centre is uniform
    over the image and the square is clipped at the borders. is_hwc: the image is HWC (True) or CHW (False)."""

    def __init__(self, length, num_patches=1, is_hwc=True):
        for name, v in (("length", length), ("num_patches", num_patches)):
            check_type(v, (int,), name)
            check_range(v, 1, 2147483647, name)
        check_type(is_hwc, (bool,), "is_hwc")
        self.length, self.num_patches, self.is_hwc = length, num_patches, is_hwc

    def _execute(self, img):
        if img.ndim != 3:
            raise RuntimeError(f"CutOut: the image must be 3-D ({'<H, W, C>' if self.is_hwc else '<C, H, W>'}), "
                               f"but got shape {img.shape}.")
        out = img.copy()
        h, w = (img.shape[0], img.shape[1]) if self.is_hwc else (img.shape[1], img.shape[2])
        rng = _rng()
        for _ in range(self.num_patches):
            cy, cx = int(rng.integers(0, h)), int(rng.integers(0, w))
            y0, y1 = max(cy - self.length // 2, 0), min(cy - self.length // 2 + self.length, h)
            x0, x1 = max(cx - self.length // 2, 0), min(cx - self.length // 2 + self.length, w)
            if self.is_hwc:
                out[y0:y1, x0:x1, :] = 0
            else:
                out[:, y0:y1, x0:x1] = 0
        return out


class RandomCropDecodeResize(TensorOperation):
    """Decode then RandomResizedCrop in one operation (MindSpore's fused op): the encoded image (1-D uint8 bytes) is
    decoded to RGB, a random window (area fraction in `scale`, aspect ratio in `ratio`) is cropped and resized to
    `size`. Arguments as RandomResizedCrop. Raises as Decode for bad bytes."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3. / 4., 4. / 3.), interpolation=Inter.BILINEAR,
                 max_attempts=10):
        self._crop = RandomResizedCrop(size, scale, ratio, interpolation, max_attempts)
        self._decode = Decode()
        self.size, self.scale, self.ratio = self._crop.size, self._crop.scale, self._crop.ratio
        self.interpolation, self.max_attempts = self._crop.interpolation, self._crop.max_attempts

    def _execute(self, data):
        return self._crop._execute(self._decode._execute(data))

