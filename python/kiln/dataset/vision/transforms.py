"""MindSpore's `mindspore.dataset.vision.transforms`: image operations on HWC arrays (uint8 in unless noted).

Operations MindSpore also implements on PIL Images (Decode, Resize, CenterCrop, Pad, the Random* ops, ToPIL,
Grayscale) return a PIL Image for a PIL Image input; the others convert a PIL input with `np.asarray` and return
arrays. Data errors (wrong rank, channels, dtype) raise RuntimeError as MindSpore's C++ operations do; bad
constructor arguments raise TypeError / ValueError with MindSpore's messages. See docs/dataset_transforms.md and
docs/decisions/dataset-vision-transforms.md for the measured differences from MindSpore's OpenCV kernels."""
import functools
import io

import numpy as np
from PIL import Image, UnidentifiedImageError

from ..transforms._base import (PyTensorOperation, TensorOperation, check_number, check_range, check_type, is_pil,
                                to_numpy_dtype)
from . import _image
from .utils import Border, ConvertMode, ImageBatchFormat, Inter  # noqa: F401  (re-exported as in MindSpore)

__all__ = ["CenterCrop", "ConvertColor", "Crop", "Decode", "Grayscale", "HWC2CHW", "HorizontalFlip", "Normalize",
           "NormalizePad", "Pad", "Rescale", "Resize", "Rotate", "ToPIL", "ToTensor", "ToType", "VerticalFlip"]

_MAX_SIZE = 16777216
_MAX_INT = 2147483647


def check_size(size, name="size"):
    """`size`: an int or a (h, w) pair of ints in [1, 16777216]; returns it (tuple for pairs)."""
    if isinstance(size, (list, tuple)):
        if len(size) != 2:
            raise TypeError("Size should be a single integer or a list/tuple (h, w) of length 2.")
        for v in size:
            check_type(v, (int,), name)
            check_range(v, 1, _MAX_SIZE, name)
        return tuple(size)
    if not isinstance(size, int) or isinstance(size, bool):
        raise TypeError(f"Argument {name} with value {size!r} is not of type [int, list, tuple], "
                        f"but got {type(size)}.")
    check_range(size, 1, _MAX_SIZE, name)
    return size


def check_inter(interpolation, name="interpolation", allowed=None):
    check_type(interpolation, (Inter,), name)
    if allowed is not None and interpolation not in allowed:
        raise ValueError(f"Argument {name}: {interpolation!r} is not supported here; expected one of "
                         f"{[i.name for i in allowed]}.")
    return Inter(interpolation)


def check_fill(fill_value, name="fill_value"):
    """An int in [0, 255] or a 3-tuple of them."""
    if isinstance(fill_value, (list, tuple)):
        if len(fill_value) != 3:
            raise TypeError(f"{name} should be a single integer or a 3-tuple.")
        for v in fill_value:
            check_type(v, (int,), name)
            check_range(v, 0, 255, name)
        return tuple(fill_value)
    check_type(fill_value, (int,), name)
    check_range(fill_value, 0, 255, name)
    return fill_value


def check_padding(padding):
    """Pad's `padding` -> (left, top, right, bottom)."""
    if isinstance(padding, (list, tuple)):
        if len(padding) not in (2, 4):
            raise ValueError("The size of the padding list or tuple should be 2 or 4.")
        for v in padding:
            check_type(v, (int,), "padding")
            check_range(v, 0, _MAX_INT, "padding")
        return tuple(padding) * 2 if len(padding) == 2 else tuple(padding)
    check_type(padding, (int,), "padding")
    check_range(padding, 0, _MAX_INT, "padding")
    return (padding,) * 4


def check_border(mode, name="padding_mode"):
    check_type(mode, (Border,), name)
    return Border(mode)


def _to_pil_like(arr, like):
    """An array back to a PIL Image of the mode of `like` when possible."""
    return Image.fromarray(arr, like.mode if like.mode in ("L", "RGB", "RGBA", "LA", "F", "I") else None)


# ---------------------------------------------------------------- decoding and conversion

class Decode(TensorOperation):
    """Decodes an encoded image (1-D uint8 array or bytes: JPEG, PNG, BMP, GIF, TIFF, WebP as Pillow reads them)
    into an RGB HWC uint8 array, or an RGB PIL Image when `to_pil` is True (default False).

    Grayscale, palette and RGBA files come out as 3-channel RGB (alpha dropped), as in MindSpore. Raises TypeError
    for input that is not 1-D, RuntimeError ("Decode: image decode failed.") for undecodable data (ValueError with
    `to_pil`)."""

    def __init__(self, to_pil=False):
        check_type(to_pil, (bool,), "to_pil")
        self.to_pil = to_pil
        self._python_impl = to_pil

    def __call__(self, img):
        if is_pil(img):
            raise TypeError("Decode: the input is already a decoded PIL Image; Decode takes the encoded bytes.")
        return super().__call__(img)

    def _execute(self, data):
        if data.dtype.kind == "S" and data.size == 1:  # one bytes value (a MindRecord bytes field), as MindSpore
            data = np.frombuffer(data.tobytes(), dtype=np.uint8)
        if data.ndim != 1:
            raise TypeError(f"The number of array dimensions of the encoded image should be 1, but got {data.ndim}.")
        if data.dtype != np.uint8:
            if self.to_pil:
                raise ValueError(f"Decode: the encoded image should be uint8 bytes, but got {data.dtype}.")
            raise RuntimeError(f"Decode: image decode failed: the encoded image should be uint8 bytes, "
                               f"but got {data.dtype}.")
        try:
            with Image.open(io.BytesIO(data.tobytes())) as im:
                im = im.convert("RGB")
        except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
            if self.to_pil:
                raise ValueError(f"cannot identify image file: Failed to decode given image ({exc}).") from exc
            raise RuntimeError(f"Decode: image decode failed ({len(data)} bytes): {exc}") from exc
        return im if self.to_pil else np.asarray(im).copy()


class ToPIL(PyTensorOperation):
    """Converts an HW / HWC NumPy image to a PIL Image (PIL input passes through).

    (H, W, 1) and (H, W) uint8 give mode 'L'; (H, W, 2/3/4) uint8 give 'LA' / 'RGB' / 'RGBA'; 2-D int16/int32/
    float32 give 'I;16' / 'I' / 'F'. Raises ValueError for rank other than 2 or 3, TypeError for other dtypes."""

    def __call__(self, img):
        if is_pil(img):
            return img
        return super().__call__(img)

    def _execute(self, img):
        if img.ndim not in (2, 3):
            raise ValueError(f"The dimension of input image should be 2 or 3. Got {img.ndim}.")
        if img.ndim == 3 and img.shape[2] == 1:
            img = img[:, :, 0]
        if img.ndim == 3:
            modes = {2: "LA", 3: "RGB", 4: "RGBA"}
            if img.shape[2] not in modes:
                raise ValueError(f"ToPIL: the channel of the input image should be 1, 2, 3 or 4, but got "
                                 f"{img.shape[2]}.")
            if img.dtype != np.uint8:
                raise TypeError(f"The input image type {img.dtype} is not supported when image shape is [H, W, 2], "
                                "[H, W, 3] or [H, W, 4].")
            return Image.fromarray(np.ascontiguousarray(img), modes[img.shape[2]])
        if img.dtype == np.bool_:
            img = img.astype(np.uint8) * 255
        if img.dtype not in (np.uint8, np.int16, np.int32, np.float32):
            raise TypeError(f"ToPIL: the input image type {img.dtype} is not supported for shape [H, W]; "
                            "expected uint8, int16, int32 or float32.")
        return Image.fromarray(np.ascontiguousarray(img))


class ToTensor(TensorOperation):
    """HWC image in [0, 255] -> CHW array of `output_type` (default numpy.float32) divided by 255.

    (H, W) input gives (1, H, W). PIL Images are converted first. Raises RuntimeError for rank other than 2 or 3."""

    def __init__(self, output_type=np.float32):
        self.output_type = output_type
        self._dtype = to_numpy_dtype(output_type, "output_type")

    def _execute_pil(self, img):
        return self._execute(np.asarray(img))

    def _execute(self, img):
        if img.ndim == 2:
            img = img[:, :, None]
        if img.ndim != 3:
            raise RuntimeError(f"ToTensor: image shape should be <H,W> or <H,W,C>, but got shape {img.shape}.")
        out = img.astype(np.float32) / np.float32(255)
        return np.ascontiguousarray(out.transpose(2, 0, 1)).astype(self._dtype)


class ToType(TensorOperation):
    """Casts the image to `data_type` (kiln dtype, NumPy dtype or name), as `transforms.TypeCast`."""

    def __init__(self, data_type):
        self.data_type = data_type
        self._dtype = to_numpy_dtype(data_type)

    _batchable = True

    def _execute_batch(self, batch):
        return batch.astype(self._dtype) if batch.dtype.kind in "biuf" else None

    def _execute(self, img):
        try:
            return img.astype(self._dtype)
        except (TypeError, ValueError) as exc:
            raise RuntimeError(f"ToType: cannot cast the input of dtype {img.dtype} to {self._dtype}: {exc}") \
                from exc


class HWC2CHW(TensorOperation):
    """(H, W, C) -> (C, H, W); (H, W) is returned unchanged. Raises RuntimeError for other ranks."""

    _batchable = True

    def _execute_batch(self, batch):
        if batch.ndim == 3:  # rows (H, W): unchanged
            return batch
        return np.ascontiguousarray(batch.transpose(0, 3, 1, 2)) if batch.ndim == 4 else None

    def _execute(self, img):
        if img.ndim == 2:
            return img
        if img.ndim != 3:
            raise RuntimeError(f"HWC2CHW: image shape should be <H,W> or <H,W,C>, but got shape {img.shape} "
                               f"(rank {img.ndim}).")
        return np.ascontiguousarray(img.transpose(2, 0, 1))


class Rescale(TensorOperation):
    """`img * rescale + shift` as float32 (any input dtype)."""

    def __init__(self, rescale, shift):
        check_number(rescale, "rescale")
        check_number(shift, "shift")
        self.rescale, self.shift = rescale, shift

    _batchable = True

    def _execute(self, img):
        if img.dtype.kind not in "biuf":
            raise RuntimeError(f"Rescale: the input should be numeric, but got {img.dtype}.")
        return img.astype(np.float32) * np.float32(self.rescale) + np.float32(self.shift)

    def _execute_batch(self, batch):
        return self._execute(batch) if batch.dtype.kind in "biuf" else None


def _check_mean_std(mean, std):
    check_type(mean, (list, tuple), "mean")
    check_type(std, (list, tuple), "std")
    if len(mean) != len(std):
        raise ValueError("Length of mean and std must be equal.")
    if not mean:
        raise ValueError("mean and std must not be empty.")
    for i, (m, s) in enumerate(zip(mean, std)):
        check_number(m, f"mean[{i}]")
        check_number(s, f"std[{i}]")
        check_range(m, 0, 255, f"mean[{i}]")
        check_range(s, 0, 255, f"std[{i}]", left_open=True)
    return list(mean), list(std)


@functools.lru_cache(maxsize=64)  # thread-safe and bounded; one entry per (mean, std, width, channels) in use
def _channel_rows(mean, std, width, channels):
    """Mean and std repeated along an HWC image row of `width` pixels: float32 arrays of width * channels values
    (read-only: shared by every call)."""
    rows = []
    for v in (mean, std):
        row = np.tile(np.broadcast_to(np.asarray(v, np.float32), (channels,)), width)
        row.flags.writeable = False
        rows.append(row)
    return tuple(rows)


def _normalize(img, mean, std, is_hwc, op):
    if img.ndim < 2:
        raise RuntimeError(f"{op}: the image should have at least 2 dimensions, but got shape {img.shape}.")
    if img.dtype.kind not in "biuf":
        raise RuntimeError(f"{op}: the input should be numeric, but got {img.dtype}.")
    if img.ndim == 2:
        img = img[:, :, None] if is_hwc else img[None]
    axis = -1 if is_hwc else -3
    channels = img.shape[axis]
    if len(mean) not in (1, channels):
        raise RuntimeError(f"{op}: number of channels does not match the size of mean and std vectors, got "
                           f"channels: {channels}, size of mean: {len(mean)}")
    x = img.astype(np.float32)
    if is_hwc:
        # view each row as (W * C) values so the per-channel constants broadcast along a long inner loop
        rows = x.reshape(-1, x.shape[-2] * channels)
        m_row, s_row = _channel_rows(tuple(mean), tuple(std), x.shape[-2], channels)
        np.subtract(rows, m_row, out=rows)
        np.divide(rows, s_row, out=rows)
        return x, axis
    m = np.asarray(mean, np.float32)
    s = np.asarray(std, np.float32)
    shape = [1] * img.ndim
    shape[axis] = len(mean)
    return (x - m.reshape(shape)) / s.reshape(shape), axis


class Normalize(TensorOperation):
    """`(img - mean) / std` per channel, float32 out.

    Args:
        mean, std (list of float): one value per channel (or one for all), mean in [0, 255], std in (0, 255].
        is_hwc (bool): channels last (default True) or first (CHW).
    (H, W) is one channel; rank 4+ inputs are batches. Raises RuntimeError when the channel count differs from
    len(mean) (unless len(mean) == 1)."""

    def __init__(self, mean, std, is_hwc=True):
        self.mean, self.std = _check_mean_std(mean, std)
        check_type(is_hwc, (bool,), "is_hwc")
        self.is_hwc = is_hwc

    _batchable = True

    def _execute(self, img):
        squeeze = img.ndim == 2
        out, _ = _normalize(img, self.mean, self.std, self.is_hwc, "Normalize")
        return out.reshape(img.shape) if squeeze else out

    def _execute_batch(self, batch):
        if batch.ndim != 4 or batch.dtype.kind not in "biuf":  # rows other than (H, W, C) / (C, H, W): row by row
            return None
        channels = batch.shape[-1] if self.is_hwc else batch.shape[-3]
        if len(self.mean) not in (1, channels):
            return None
        return _normalize(batch, self.mean, self.std, self.is_hwc, "Normalize")[0]


class NormalizePad(TensorOperation):
    """`Normalize` then one extra all-zero channel (3 -> 4 channels), output dtype "float32" (default) or
    "float16"."""

    def __init__(self, mean, std, dtype="float32", is_hwc=True):
        self.mean, self.std = _check_mean_std(mean, std)
        check_type(dtype, (str,), "dtype")
        if dtype not in ("float32", "float16"):
            raise ValueError("dtype only supports float32 or float16.")
        check_type(is_hwc, (bool,), "is_hwc")
        self.dtype, self.is_hwc = dtype, is_hwc

    def _execute(self, img):
        out, axis = _normalize(img, self.mean, self.std, self.is_hwc, "NormalizePad")
        zeros_shape = list(out.shape)
        zeros_shape[axis] = 1
        return np.concatenate([out, np.zeros(zeros_shape, np.float32)], axis=axis).astype(self.dtype)


# ---------------------------------------------------------------- geometry

class Resize(TensorOperation):
    """Resizes to `size`: an int resizes the shorter side to it keeping the aspect ratio (longer side truncated),
    (h, w) gives that size.

    interpolation (Inter, default Inter.LINEAR): NEAREST, LINEAR, CUBIC, AREA, PILCUBIC on arrays (OpenCV's
    rules, see `Inter`); on PIL Images Pillow's own resize (NEAREST, BILINEAR, BICUBIC, ANTIALIAS = LANCZOS).
    Arrays keep their dtype (integers rounded and saturated); rank 4 inputs are batches of HWC images.
    Raises RuntimeError for int32/int64 images (as MindSpore) or rank < 2; TypeError for ANTIALIAS on an array."""

    def __init__(self, size, interpolation=Inter.LINEAR):
        self.size = check_size(size)
        self.interpolation = check_inter(interpolation)

    def _execute_pil(self, img):
        if self.interpolation in (Inter.AREA, Inter.PILCUBIC):
            raise TypeError(f"Resize: {self.interpolation.name} interpolation supports numpy.ndarray input only.")
        w, h = img.size
        oh, ow = _image.resized_shape(h, w, self.size)
        return img.resize((ow, oh), _image._RESAMPLE[self.interpolation])  # pylint: disable=protected-access

    def _execute(self, img):
        if self.interpolation == Inter.ANTIALIAS:
            raise TypeError(f"img should be PIL image. Got {type(img)}. Use Decode() for encoded data or ToPIL() "
                            "for decoded data.")
        _image.check_image(img, "Resize")
        _image.check_geom_dtype(img, "Resize")
        h, w = img.shape[-3:-1] if img.ndim >= 4 else img.shape[:2]
        size = _image.resized_shape(h, w, self.size)
        if size[0] > h * 1000 or size[1] > w * 1000:
            raise RuntimeError("Resize: the resizing width or height is too big, it's 1000 times bigger than the "
                               f"original image, got output height: {size[0]}, width: {size[1]}, and original image "
                               f"size: {h}, {w}")
        return _image.over_images(img, lambda x: _image.resize_array(x, size, self.interpolation))


def _crop_array(img, top, left, h, w):
    return np.ascontiguousarray(img[top:top + h, left:left + w])


class Crop(TensorOperation):
    """Crops the (top, left) = `coordinates` box of `size` (int or (h, w)).

    Raises RuntimeError when the box leaves the image or the image rank is not 2 or 3."""

    def __init__(self, coordinates, size):
        check_type(coordinates, (list, tuple), "coordinates")
        if len(coordinates) != 2:
            raise TypeError("coordinates should be a list/tuple (top, left) of length 2.")
        for i, v in enumerate(coordinates):
            check_type(v, (int,), f"coordinates[{i}]")
            check_range(v, 0, _MAX_INT, f"coordinates[{i}]")
        self.coordinates = tuple(coordinates)
        self.size = check_size(size)

    def _execute(self, img):
        _image.check_image(img, "Crop", max_rank=3)
        h, w = (self.size, self.size) if isinstance(self.size, int) else self.size
        top, left = self.coordinates
        if top + h > img.shape[0]:
            raise RuntimeError(f"Crop: Crop height dimension: {top + h} exceeds image height: {img.shape[0]}")
        if left + w > img.shape[1]:
            raise RuntimeError(f"Crop: Crop width dimension: {left + w} exceeds image width: {img.shape[1]}")
        return _crop_array(img, top, left, h, w)


class CenterCrop(TensorOperation):
    """Crops the centre `size` (int or (h, w)); a crop larger than the image pads it with zeros first.

    Arrays: offsets floor((H - h) / 2), padding ceil(d / 2) before and floor(d / 2) after (MindSpore's C++ op).
    PIL Images: offsets round((H - h) / 2) with Python's rounding, as MindSpore's Python op (Pillow crop)."""

    def __init__(self, size):
        self.size = check_size(size)

    def _hw(self):
        return (self.size, self.size) if isinstance(self.size, int) else self.size

    def _execute_pil(self, img):
        ch, cw = self._hw()
        w, h = img.size
        top, left = int(round((h - ch) / 2.0)), int(round((w - cw) / 2.0))
        return img.crop((left, top, left + cw, top + ch))

    def _execute(self, img):
        _image.check_image(img, "CenterCrop")
        ch, cw = self._hw()

        def one(x):
            dh, dw = max(ch - x.shape[0], 0), max(cw - x.shape[1], 0)
            if dh or dw:
                x = _image.pad_array(x, (dh + 1) // 2, dh // 2, (dw + 1) // 2, dw // 2, 0, "constant")
            top, left = (x.shape[0] - ch) // 2, (x.shape[1] - cw) // 2
            return _crop_array(x, top, left, ch, cw)
        return _image.over_images(img, one)


class Pad(TensorOperation):
    """Pads the image borders.

    Args:
        padding (int or sequence): all sides; (left/right, top/bottom); or (left, top, right, bottom). >= 0.
        fill_value (int or 3-tuple in [0, 255], default 0): the CONSTANT value (per channel for a tuple).
        padding_mode (Border, default Border.CONSTANT): CONSTANT, EDGE, REFLECT, SYMMETRIC.
    Raises RuntimeError for an image of rank other than 2 or 3."""

    def __init__(self, padding, fill_value=0, padding_mode=Border.CONSTANT):
        self.padding = check_padding(padding)
        self.fill_value = check_fill(fill_value)
        self.padding_mode = check_border(padding_mode)

    def _execute_pil(self, img):
        return _to_pil_like(self._execute(np.asarray(img)), img)

    def _execute(self, img):
        _image.check_image(img, "Pad", max_rank=3)
        left, top, right, bottom = self.padding
        fill = self.fill_value
        if isinstance(fill, tuple) and (img.ndim == 2 or img.shape[2] != 3):
            fill = fill[0]
        return _image.pad_array(img, top, bottom, left, right, fill, self.padding_mode.value)


def _flip(img, axis, op):
    if img.ndim < 2:
        raise RuntimeError(f"{op}: the image tensor should have at least two dimensions, but got shape "
                           f"{img.shape}. You may need to perform Decode first.")
    if img.dtype in (np.int64, np.uint32, np.uint64) or img.dtype.kind not in "biuf":
        raise RuntimeError(f"{op}: the data type of image tensor does not match the requirement of operator. "
                           "Expecting tensor in type of (bool, int8, uint8, int16, uint16, int32, float16, float32, "
                           f"float64), but got {img.dtype}.")
    ax = axis if img.ndim <= 3 else img.ndim - 3 + axis
    return np.ascontiguousarray(np.flip(img, axis=ax))


class HorizontalFlip(TensorOperation):
    """Mirrors the image left-right (rank >= 4: each image of the batch)."""

    def _execute(self, img):
        return _flip(img, 1, "HorizontalFlip")


class VerticalFlip(TensorOperation):
    """Mirrors the image top-bottom (rank >= 4: each image of the batch)."""

    def _execute(self, img):
        return _flip(img, 0, "VerticalFlip")


_ROTATE_INTER = (Inter.NEAREST, Inter.BILINEAR, Inter.BICUBIC, Inter.AREA)


def check_rotation_args(resample, expand, center, fill_value):
    resample = check_inter(resample, "resample", _ROTATE_INTER)
    check_type(expand, (bool,), "expand")
    if center is not None:
        check_type(center, (list, tuple), "center")
        if len(center) != 2:
            raise ValueError("center should be a tuple (x, y) of length 2.")
        for v in center:
            check_number(v, "center")
        center = tuple(center)
    return resample, expand, center, check_fill(fill_value)


class Rotate(TensorOperation):
    """Rotates the image by `degrees` counter-clockwise around `center` ((x, y) in pixels, default the image
    centre).

    resample: Inter.NEAREST (default), BILINEAR, BICUBIC (AREA = BILINEAR); expand (default False) enlarges the
    output to hold the whole rotated image; fill_value (int or 3-tuple, default 0) fills the outside.
    Works per image on batches (rank 4). Raises RuntimeError for rank < 2 or 32/64-bit integer images."""

    def __init__(self, degrees, resample=Inter.NEAREST, expand=False, center=None, fill_value=0):
        check_number(degrees, "degrees")
        self.degrees = degrees
        self.resample, self.expand, self.center, self.fill_value = check_rotation_args(resample, expand, center,
                                                                                     fill_value)

    def _execute(self, img):
        _image.check_image(img, "Rotate")
        _image.check_geom_dtype(img, "Rotate")
        return _image.over_images(img, lambda x: _image.rotate_array(x, self.degrees, self.resample, self.expand,
                                                              self.center, self.fill_value))


from ._color_transforms import ConvertColor, Grayscale  # noqa: E402 (these modules import the classes above)
from ._random_transforms import (RandomColorAdjust, RandomCrop, RandomHorizontalFlip,  # noqa: E402 (they import the classes above)
                                 RandomResizedCrop, RandomRotation, RandomVerticalFlip)

__all__ += ["RandomColorAdjust", "RandomCrop", "RandomHorizontalFlip", "RandomResizedCrop", "RandomRotation",
            "RandomVerticalFlip"]
from ._adjust_transforms import *  # noqa: E402, F403  (Invert, Equalize, AutoContrast, CutOut, ...)
from . import _adjust_transforms  # noqa: E402 (after the classes it imports)

__all__ += _adjust_transforms.__all__
from ._policy_transforms import RandomAffine, RandomColor, RandomSelectSubpolicy  # noqa: E402 (imports kiln.dataset.transforms)

__all__ += ["RandomAffine", "RandomColor", "RandomSelectSubpolicy"]
