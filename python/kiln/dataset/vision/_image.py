"""Image kernels of kiln.dataset.vision on HWC NumPy arrays.

Pillow does the resampling it does the way MindSpore (OpenCV) does: bilinear without antialiasing through
`Image.transform(AFFINE)` (same half-pixel mapping as OpenCV INTER_LINEAR), rotation (`Image.rotate`), PILCUBIC and
ANTIALIAS (`Image.resize`). OpenCV's bicubic (a = -0.75) and pixel-area rules have no Pillow equivalent; they are
separable weight matrices applied with NumPy (`W_y @ img @ W_x.T`), the formulas of OpenCV's `resize`
(imgproc/src/resize.cpp, documented in cv::InterpolationFlags). Nearest is an index gather with OpenCV's rule.

Where OpenCV itself (opencv-python-headless) is installed, LINEAR, CUBIC and AREA resizes of the dtypes it handles
(uint8, uint16, int16, float32, float64) run on `cv2.resize` — the library MindSpore's own operations use, so the
results are MindSpore's, and 10-20x faster than the paths above, which remain for the other dtypes and when OpenCV
is absent (Note [OpenCV resize], docs/decisions/opencv-resize.md)."""
import math

import numpy as np
from PIL import Image

from .utils import Inter

try:
    import cv2 as _cv2
    _cv2.setNumThreads(1)  # the dataset's workers are the parallelism; OpenCV's own threads would oversubscribe
except ImportError:  # optional: the NumPy/Pillow paths below give the same rule
    _cv2 = None
_CV2_DTYPES = (np.uint8, np.uint16, np.int16, np.float32, np.float64)

_RESAMPLE = {Inter.NEAREST: Image.Resampling.NEAREST, Inter.BILINEAR: Image.Resampling.BILINEAR,
             Inter.BICUBIC: Image.Resampling.BICUBIC, Inter.ANTIALIAS: Image.Resampling.LANCZOS,
             Inter.PILCUBIC: Image.Resampling.BICUBIC, Inter.AREA: Image.Resampling.BOX}

# dtypes the geometric operations accept (MindSpore's OpenCV-backed ops refuse 32/64-bit integers)
_GEOM_DTYPES = (np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.float16, np.float32, np.float64)


def check_image(img, op, min_rank=2, max_rank=None):
    """RuntimeError (MindSpore's kind) unless `img` is an array of rank in [min_rank, max_rank]."""
    if img.ndim < min_rank or (max_rank is not None and img.ndim > max_rank):
        want = "<H,W> or <H,W,C>" if max_rank == 3 else f"at least {min_rank} dimensions"
        raise RuntimeError(f"{op}: the image should have {want}, but got shape {img.shape} "
                           f"(rank {img.ndim}). You may need to perform Decode first.")
    hw = img.shape[:2] if img.ndim <= 3 else img.shape[-3:-1]
    if 0 in hw:
        raise RuntimeError(f"{op}: the image is empty: height and width must be > 0, but got shape {img.shape}.")
    if img.dtype.kind not in "biuf":
        raise RuntimeError(f"{op}: the image should be numeric (bool, int, uint or float), but got {img.dtype}.")


def check_geom_dtype(img, op):
    if not any(img.dtype == d for d in _GEOM_DTYPES):
        raise RuntimeError(f"{op}: the data type of image tensor does not match the requirement of operator. "
                           "Expecting tensor in type of (bool, int8, uint8, int16, uint16, float16, float32, "
                           f"float64), but got {img.dtype}.")


def over_images(img, fn):
    """Applies `fn` (HWC or HW -> HWC or HW) to one image (rank 2/3) or each image of a batch (rank >= 4: ...HWC)."""
    if img.ndim <= 3:
        return fn(img)
    lead = img.shape[:-3]
    flat = img.reshape((-1,) + img.shape[-3:])
    outs = [fn(x) for x in flat]
    out = np.stack(outs) if outs else np.empty((0,) + img.shape[-3:], img.dtype)
    return out.reshape(lead + out.shape[1:])


def _cast_back(out, dtype):
    """Float results back to the image's dtype: round and saturate integers (OpenCV's saturate_cast)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return out.astype(dtype)
    if dtype == np.bool_:
        return out >= 0.5
    info = np.iinfo(dtype)
    return np.clip(np.rint(out), info.min, info.max).astype(dtype)


def _planes(img):
    """HW / HWC image -> list of 2-D planes and a function rebuilding the image's layout from planes."""
    if img.ndim == 2:
        return [img], lambda ps: ps[0]
    return [img[:, :, c] for c in range(img.shape[2])], lambda ps: np.stack(ps, axis=2)


def pil_apply(img, fn, fill=0):
    """Runs `fn(pil_image, fill) -> pil_image` on an HW/HWC array: uint8 1/3/4 channels as L/RGB/RGBA images,
    anything else per channel as 32-bit float ('F') images (results rounded/saturated back to the dtype)."""
    dtype = img.dtype
    fills = np.broadcast_to(np.asarray(fill, dtype=np.float64), (img.shape[2] if img.ndim == 3 else 1,))
    if dtype == np.uint8 and (img.ndim == 2 or img.shape[2] in (1, 3, 4)):
        if img.ndim == 2 or img.shape[2] == 1:
            out = np.asarray(fn(Image.fromarray(img.reshape(img.shape[:2]), "L"), int(fills[0])))
            return out if img.ndim == 2 else out[:, :, None]
        mode = "RGB" if img.shape[2] == 3 else "RGBA"
        return np.asarray(fn(Image.fromarray(img, mode), tuple(int(v) for v in fills)))
    src = img.astype(np.uint8) if dtype == np.bool_ else img
    planes, rebuild = _planes(src)
    outs = [np.asarray(fn(Image.fromarray(np.ascontiguousarray(p, dtype=np.float32), "F"), float(fills[i])))
            for i, p in enumerate(planes)]
    return _cast_back(rebuild(outs).astype(np.float64), dtype)


# ---------------------------------------------------------------- resize

def _nearest_index(in_n, out_n):
    return np.minimum(np.floor(np.arange(out_n) * (in_n / out_n)).astype(np.int64), in_n - 1)


def _cubic_weights(in_n, out_n, a=-0.75):
    scale = in_n / out_n
    src = (np.arange(out_n) + 0.5) * scale - 0.5
    base = np.floor(src).astype(np.int64)
    t = src - base
    w = np.zeros((out_n, in_n))
    rows = np.arange(out_n)
    for k in (-1, 0, 1, 2):
        x = np.abs(t - k)
        wk = np.where(x <= 1, ((a + 2) * x - (a + 3)) * x * x + 1,
                      np.where(x < 2, ((a * x - 5 * a) * x + 8 * a) * x - 4 * a, 0.0))
        np.add.at(w, (rows, np.clip(base + k, 0, in_n - 1)), wk)
    return w


def _area_down_weights(in_n, out_n):
    """Exact pixel-area weights (output pixel i covers source [i*s, (i+1)*s], s = in/out >= 1)."""
    scale = in_n / out_n
    lo = np.arange(out_n)[:, None] * scale
    hi = lo + scale
    j = np.arange(in_n)[None, :]
    overlap = np.clip(np.minimum(hi, j + 1) - np.maximum(lo, j), 0, None)
    return overlap / scale


def _area_up_weights(in_n, out_n):
    """OpenCV INTER_AREA when enlarging: linear taps with fraction fx = frac((x+1) - (floor(x*s)+1)/s)."""
    scale = in_n / out_n
    inv = out_n / in_n
    x = np.arange(out_n)
    sx = np.floor(x * scale).astype(np.int64)
    fx = (x + 1) - (sx + 1) * inv
    fx = np.where(fx <= 0, 0.0, fx - np.floor(fx))
    w = np.zeros((out_n, in_n))
    np.add.at(w, (x, np.clip(sx, 0, in_n - 1)), 1 - fx)
    np.add.at(w, (x, np.clip(sx + 1, 0, in_n - 1)), fx)
    return w


def _separable(img, wy, wx):
    work = img.astype(np.float64 if img.dtype == np.float64 else np.float32)
    wy = wy.astype(work.dtype)
    wx = wx.astype(work.dtype)
    if img.ndim == 2:
        out = wy @ work @ wx.T
    else:
        out = np.einsum("oh,hwc->owc", wy, work)
        out = np.einsum("pw,owc->opc", wx, out)
    return _cast_back(out, img.dtype)


_CV2_INTER = {} if _cv2 is None else {Inter.LINEAR: _cv2.INTER_LINEAR, Inter.BICUBIC: _cv2.INTER_CUBIC,
                                       Inter.AREA: _cv2.INTER_AREA}


def resize_array(img, size, inter):
    """Resizes an HW/HWC array to `size` = (h, w) with OpenCV's rule for `inter` (see the module docstring)."""
    oh, ow = size
    ih, iw = img.shape[:2]
    if _cv2 is not None and inter in _CV2_INTER and img.dtype.type in _CV2_DTYPES and (img.ndim == 2 or
                                                                                      img.shape[2] <= 512):
        out = _cv2.resize(np.ascontiguousarray(img), (ow, oh), interpolation=_CV2_INTER[inter])
        return out.reshape(oh, ow, *img.shape[2:])  # OpenCV drops a single channel axis
    if inter == Inter.NEAREST:
        return img[_nearest_index(ih, oh)][:, _nearest_index(iw, ow)]
    if inter == Inter.BICUBIC:
        return _separable(img, _cubic_weights(ih, oh), _cubic_weights(iw, ow))
    if inter == Inter.AREA:
        if oh <= ih and ow <= iw:
            return _separable(img, _area_down_weights(ih, oh), _area_down_weights(iw, ow))
        return _separable(img, _area_up_weights(ih, oh), _area_up_weights(iw, ow))
    if inter == Inter.PILCUBIC:
        return pil_apply(img, lambda im, _: im.resize((ow, oh), Image.Resampling.BICUBIC))
    # bilinear: Pillow's affine transform samples source ((x+0.5)*s - 0.5), as OpenCV; edges replicate
    sx, sy = iw / ow, ih / oh
    return pil_apply(img, lambda im, _: _affine_resize(im, ow, oh, sx, sy))


def _affine_resize(im, ow, oh, sx, sy):
    # Pillow samples output pixel x at source (x + 0.5) * sx in its edge-based coordinates, always inside the
    # image, and clamps the neighbour beyond the last pixel: OpenCV's half-pixel mapping with BORDER_REPLICATE
    return im.transform((ow, oh), Image.Transform.AFFINE, (sx, 0, 0, 0, sy, 0), resample=Image.Resampling.BILINEAR)


def resized_shape(h, w, size):
    """MindSpore's output (h, w) for Resize's `size`: an int resizes the shorter side (the other keeps the aspect
    ratio, truncated to int), a pair is (h, w)."""
    if isinstance(size, int):
        if h <= w:
            return size, int(w * size / h)
        return int(h * size / w), size
    return tuple(size)


def pad_array(img, top, bottom, left, right, fill, mode):
    """Pads an HW/HWC array; `mode` a Border value ("constant", "edge", "reflect", "symmetric")."""
    widths = [(top, bottom), (left, right)] + [(0, 0)] * (img.ndim - 2)
    if mode != "constant":
        return np.pad(img, widths, mode=mode)
    fills = np.asarray(fill)
    if img.ndim == 3 and fills.ndim == 1 and fills.size == img.shape[2]:
        out = np.empty((img.shape[0] + top + bottom, img.shape[1] + left + right, img.shape[2]), img.dtype)
        out[...] = fills.astype(img.dtype)
        out[top:top + img.shape[0], left:left + img.shape[1]] = img
        return out
    value = fills.reshape(-1)[0] if fills.ndim else fills
    return np.pad(img, widths, mode="constant", constant_values=np.asarray(value).astype(img.dtype))


def rotate_array(img, degrees, resample, expand, center, fill_value):
    """Rotates an HW/HWC array `degrees` counter-clockwise as OpenCV's warpAffine does for MindSpore.

    The matrix is OpenCV's `getRotationMatrix2D(center, degrees, 1)` (centre default ((W-1)/2, (H-1)/2) in pixel
    coordinates); with `expand` the output is round(W|cos| + H|sin|) x round(W|sin| + H|cos|) and the image is
    recentred by half the unrounded growth. Pillow's `Image.transform(AFFINE)` resamples; the image is first framed
    with `fill_value` so samples near the border blend with the fill (OpenCV's BORDER_CONSTANT) instead of stopping
    at the edge. AREA rotates bilinearly, as MindSpore."""
    mode = {Inter.NEAREST: Image.Resampling.NEAREST, Inter.BILINEAR: Image.Resampling.BILINEAR,
            Inter.AREA: Image.Resampling.BILINEAR, Inter.BICUBIC: Image.Resampling.BICUBIC}[resample]
    h, w = img.shape[:2]
    cx, cy = ((w - 1) / 2.0, (h - 1) / 2.0) if center is None else (float(center[0]), float(center[1]))
    rad = math.radians(degrees)
    a, b = math.cos(rad), math.sin(rad)
    fwd = np.array([[a, b, (1 - a) * cx - b * cy], [-b, a, b * cx + (1 - a) * cy]])
    ow, oh = w, h
    if expand:
        bw, bh = h * abs(b) + w * abs(a), h * abs(a) + w * abs(b)  # the rotated rectangle's bounding box
        ow, oh = int(round(bw)), int(round(bh))
        fwd[0, 2] += (bw - w) / 2.0  # recentred with the unrounded box, as MindSpore
        fwd[1, 2] += (bh - h) / 2.0
    lin = np.linalg.inv(fwd[:, :2])
    inv = np.hstack([lin, -lin @ fwd[:, 2:]])  # output pixel -> input pixel (pixel-centre coordinates)
    pad = 0 if resample == Inter.NEAREST else 2
    # Pillow samples at pixel centres (+0.5) and its input has `pad` fill pixels before the image
    ia, ib, ic = inv[0]
    id_, ie, if_ = inv[1]
    data = (ia, ib, ic + 0.5 - 0.5 * ia - 0.5 * ib + pad, id_, ie, if_ + 0.5 - 0.5 * id_ - 0.5 * ie + pad)

    def fn(im, fill):
        if pad:
            framed = Image.new(im.mode, (im.width + 2 * pad, im.height + 2 * pad), fill)
            framed.paste(im, (pad, pad))
            im = framed
        return im.transform((ow, oh), Image.Transform.AFFINE, data, resample=mode, fillcolor=fill)
    return pil_apply(img, fn, fill_value)
