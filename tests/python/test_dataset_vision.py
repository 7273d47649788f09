"""kiln.dataset.vision: deterministic image operations against NumPy/Pillow references computed here, and against
values recorded from MindSpore 2.10 (OpenCV) for the interpolating ones (tolerances stated at each check)."""
import io
import math

import numpy as np
import pytest
from PIL import Image, ImageOps

import kiln
import kiln.dataset.vision as V
from kiln.dataset.vision import Border, ConvertMode, Inter

RS = np.random.RandomState(0)
IMG = RS.randint(0, 256, (6, 8, 3)).astype(np.uint8)
BIG = RS.randint(0, 256, (37, 53, 3)).astype(np.uint8)
S = np.arange(12, dtype=np.uint8).reshape(3, 4)
# MindSpore 2.10 eager outputs (channel 0) for FIX = ((arange(60) * 37 + 11) % 256).reshape(4, 5, 3) uint8
FIX = ((np.arange(4 * 5 * 3) * 37 + 11) % 256).astype(np.uint8).reshape(4, 5, 3)
MS_FIXTURES = {
    "resize_NEAREST_3x4": [[11, 122, 233, 88], [54, 165, 20, 131], [97, 208, 63, 174]],
    "resize_NEAREST_7x8": [[11, 11, 122, 122, 233, 88, 88, 199], [11, 11, 122, 122, 233, 88, 88, 199],
        [54, 54, 165, 165, 20, 131, 131, 242], [54, 54, 165, 165, 20, 131, 131, 242],
        [97, 97, 208, 208, 63, 174, 174, 29], [97, 97, 208, 208, 63, 174, 174, 29],
        [140, 140, 251, 251, 106, 217, 217, 72]],
    "resize_LINEAR_3x4": [[32, 155, 133, 192], [89, 132, 111, 138], [147, 189, 168, 83]],
    "resize_LINEAR_7x8": [[11, 60, 129, 198, 187, 97, 150, 199], [26, 75, 138, 151, 140, 107, 166, 214],
        [51, 99, 154, 75, 64, 122, 190, 239], [76, 124, 177, 87, 76, 146, 143, 136],
        [100, 148, 202, 111, 101, 170, 95, 32], [125, 173, 227, 136, 125, 195, 120, 57],
        [140, 188, 242, 151, 141, 210, 135, 72]],
    "resize_CUBIC_3x4": [[27, 173, 125, 196], [89, 129, 95, 139], [148, 198, 178, 79]],
    "resize_CUBIC_7x8": [[0, 44, 130, 239, 214, 88, 133, 205], [13, 69, 140, 163, 137, 98, 168, 239],
        [39, 108, 158, 63, 38, 116, 204, 255], [65, 137, 182, 58, 39, 146, 154, 134],
        [91, 161, 209, 103, 92, 179, 98, 7], [118, 187, 236, 130, 118, 206, 122, 29],
        [134, 204, 252, 146, 134, 221, 148, 63]],
    "resize_AREA_3x4": [[44, 152, 131, 188], [98, 128, 108, 139], [151, 182, 162, 90]],
    "resize_AREA_7x8": [[11, 55, 122, 211, 204, 88, 155, 199], [22, 66, 133, 170, 163, 99, 165, 210],
        [54, 98, 165, 49, 42, 131, 198, 242], [76, 120, 187, 71, 64, 153, 142, 136],
        [97, 141, 208, 92, 85, 174, 87, 29], [129, 174, 240, 124, 117, 206, 119, 61],
        [140, 184, 251, 135, 128, 217, 130, 72]],
    "resize_PILCUBIC_3x4": [[37, 157, 127, 194], [104, 123, 97, 145], [160, 184, 162, 85]],
    "resize_PILCUBIC_7x8": [[0, 45, 126, 230, 211, 88, 144, 204], [14, 64, 138, 166, 147, 99, 169, 229],
        [43, 101, 160, 61, 42, 121, 205, 255], [68, 127, 184, 64, 49, 148, 149, 135],
        [92, 151, 209, 101, 91, 177, 91, 14], [121, 180, 238, 130, 119, 206, 118, 40],
        [135, 194, 252, 144, 133, 220, 138, 65]],
    "rotate_nearest_30": [[0, 233, 88, 242, 242], [122, 165, 20, 174, 29], [54, 165, 63, 174, 217],
        [97, 97, 251, 106, 0]],
    "rotate_linear_30": [[24, 151, 120, 187, 107], [73, 134, 50, 151, 36], [55, 170, 97, 151, 146],
        [47, 152, 207, 82, 40]],
    "rotate_linear_30_expand": [[0, 0, 4, 78, 119, 0], [0, 59, 184, 108, 226, 41], [8, 112, 101, 90, 130, 30],
        [17, 94, 169, 72, 190, 95], [0, 78, 190, 173, 80, 6], [0, 42, 103, 39, 0, 0]],
    "gray": [[41, 152, 84, 118, 200], [84, 195, 50, 161, 93], [127, 209, 93, 204, 59], [170, 102, 136, 218, 102]],
}


def encode(arr, fmt, **kw):
    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, fmt, **kw)
    return np.frombuffer(buf.getvalue(), np.uint8)


# ---------------------------------------------------------------- NumPy references for OpenCV's resize rules

def ref_nearest(img, oh, ow):
    h, w = img.shape[:2]
    return img[[min(int(math.floor(i * h / oh)), h - 1) for i in range(oh)]][
        :, [min(int(math.floor(j * w / ow)), w - 1) for j in range(ow)]]


def _taps(n_in, n_out, kernel, support):
    """For each output index: source indices (clamped) and kernel weights, half-pixel centres."""
    src = (np.arange(n_out) + 0.5) * n_in / n_out - 0.5
    base = np.floor(src).astype(int)
    offs = np.arange(-support + 1, support + 1)
    idx = base[:, None] + offs[None, :]
    wts = kernel(src[:, None] - idx)
    return np.clip(idx, 0, n_in - 1), wts


def ref_separable(img, oh, ow, kernel, support):
    x = img.astype(np.float64)
    iy, wy = _taps(img.shape[0], oh, kernel, support)
    ix, wx = _taps(img.shape[1], ow, kernel, support)
    rows = (x[iy] * wy[:, :, None, None]).sum(1)          # (oh, W, C)
    return (rows[:, ix] * wx[None, :, :, None]).sum(2)    # (oh, ow, C)


def tri(d):
    return np.maximum(0, 1 - np.abs(d))


def cubic075(d, a=-0.75):
    x = np.abs(d)
    return np.where(x <= 1, ((a + 2) * x - (a + 3)) * x * x + 1,
                    np.where(x < 2, ((a * x - 5 * a) * x + 8 * a) * x - 4 * a, 0))


def ref_area_down(img, oh, ow):
    """Mean over each output pixel's source rectangle, via the integral of the piecewise-constant image."""
    x = img.astype(np.float64)

    def integrate(arr, n_out, axis):
        n = arr.shape[axis]
        cum = np.concatenate([np.zeros_like(np.take(arr, [0], axis)), np.cumsum(arr, axis)], axis)
        edges = np.arange(n_out + 1) * n / n_out

        def at(t):  # integral from 0 to t
            k = np.minimum(np.floor(t).astype(int), n - 1)
            frac = (t - k).reshape([-1 if a == axis else 1 for a in range(arr.ndim)])
            return np.take(cum, k, axis) + frac * np.take(arr, k, axis)
        return (at(edges[1:]) - at(edges[:-1])) / (n / n_out)
    return integrate(integrate(x, oh, 0), ow, 1)


def round_sat(x):
    return np.clip(np.rint(x), 0, 255)


# ---------------------------------------------------------------- Resize

@pytest.mark.parametrize("size", [(3, 5), (4, 4), (13, 29), (64, 96), (100, 77)])
def test_resize_nearest_exact(size):
    for img in (IMG, BIG):
        np.testing.assert_array_equal(V.Resize(size, Inter.NEAREST)(img), ref_nearest(img, *size))


@pytest.mark.parametrize("size", [(3, 5), (4, 4), (13, 29), (64, 96), (100, 77)])
def test_resize_linear_and_cubic_vs_numpy(size):
    for img in (IMG, BIG):
        out = V.Resize(size)(img)
        assert out.dtype == np.uint8 and out.shape == size + (3,)
        # Pillow's 8-bit bilinear rounds its coefficients: at most 1 level from the exact value
        assert np.abs(out - round_sat(ref_separable(img, *size, tri, 1))).max() <= 1
        out = V.Resize(size, Inter.BICUBIC)(img)
        assert np.abs(out - round_sat(ref_separable(img, *size, cubic075, 2))).max() <= 1
        f = img.astype(np.float32)
        out = V.Resize(size)(f)
        assert out.dtype == np.float32
        np.testing.assert_allclose(out, ref_separable(f, *size, tri, 1), atol=2e-3)  # float32 'F' images


@pytest.mark.parametrize("size", [(3, 5), (4, 4), (13, 29), (12, 50), (37, 53)])
def test_resize_area_downscale_vs_numpy(size):
    out = V.Resize(size, Inter.AREA)(BIG)
    assert np.abs(out - round_sat(ref_area_down(BIG, *size))).max() <= 1


def test_resize_pilcubic_is_pillow_bicubic():
    for size in ((3, 5), (64, 96)):
        ref = np.asarray(Image.fromarray(BIG).resize(size[::-1], Image.Resampling.BICUBIC))
        np.testing.assert_array_equal(V.Resize(size, Inter.PILCUBIC)(BIG), ref)


@pytest.mark.parametrize("mode", ["NEAREST", "LINEAR", "CUBIC", "AREA", "PILCUBIC"])
def test_resize_matches_mindspore(mode):
    # measured against MindSpore 2.10 (OpenCV fixed point): NEAREST exact, the others within 1 level
    tol = 0 if mode == "NEAREST" else 1
    for size in ((3, 4), (7, 8)):
        ref = np.array(MS_FIXTURES[f"resize_{mode}_{size[0]}x{size[1]}"])
        out = V.Resize(size, getattr(Inter, mode))(FIX)[:, :, 0].astype(int)
        assert np.abs(out - ref).max() <= tol


def test_resize_int_size_keeps_aspect_and_layouts():
    assert V.Resize(4)(IMG).shape == (4, 5, 3)             # 8 * 4 / 6 = 5.33 -> 5 (MindSpore)
    assert V.Resize(4)(np.zeros((8, 6, 3), np.uint8)).shape == (5, 4, 3)
    assert V.Resize(5)(np.zeros((7, 10), np.uint8)).shape == (5, 7)
    assert V.Resize((3, 5))(IMG[:, :, :1]).shape == (3, 5, 1)
    assert V.Resize((3, 5))(np.zeros((6, 8, 5), np.uint8)).shape == (3, 5, 5)
    batch = RS.randint(0, 256, (2, 6, 8, 3)).astype(np.uint8)
    out = V.Resize((3, 5))(batch)
    assert out.shape == (2, 3, 5, 3)
    np.testing.assert_array_equal(out[1], V.Resize((3, 5))(batch[1]))
    assert V.Resize((3, 5))(np.zeros((6, 8, 3), bool)).dtype == np.bool_
    out = V.Resize((17, 23))(BIG.astype(np.uint16) * 200)
    assert out.dtype == np.uint16


def test_resize_pil_in_pil_out():
    pil = Image.fromarray(IMG)
    for inter, res in ((Inter.LINEAR, Image.Resampling.BILINEAR), (Inter.NEAREST, Image.Resampling.NEAREST),
                       (Inter.BICUBIC, Image.Resampling.BICUBIC), (Inter.ANTIALIAS, Image.Resampling.LANCZOS)):
        out = V.Resize((3, 5), inter)(pil)
        assert isinstance(out, Image.Image)
        np.testing.assert_array_equal(np.asarray(out), np.asarray(pil.resize((5, 3), res)))


def test_resize_errors():
    with pytest.raises(ValueError, match=r"\[1, 16777216\]"):
        V.Resize(0)
    with pytest.raises(TypeError, match="length 2"):
        V.Resize((3, 5, 1))
    with pytest.raises(TypeError, match="interpolation"):
        V.Resize(3, "bilinear")
    with pytest.raises(RuntimeError, match="int64"):
        V.Resize((3, 5))(np.zeros((6, 8, 3), np.int64))
    with pytest.raises(RuntimeError, match="Resize"):
        V.Resize((3, 5))(np.zeros(5, np.uint8))
    with pytest.raises(TypeError, match="PIL image"):
        V.Resize((3, 5), Inter.ANTIALIAS)(IMG)
    with pytest.raises(TypeError, match="numpy.ndarray input only"):
        V.Resize((3, 5), Inter.AREA)(Image.fromarray(IMG))
    with pytest.raises(RuntimeError, match="1000 times"):
        V.Resize((3000, 5))(np.zeros((2, 3), np.uint8))
    with pytest.raises(RuntimeError, match="1 input column"):
        V.Resize(3)(IMG, IMG)


# ---------------------------------------------------------------- Decode, ToPIL

def test_decode_png_exact_and_modes():
    np.testing.assert_array_equal(V.Decode()(encode(BIG, "PNG")), BIG)
    gray = BIG[:, :, 0]
    out = V.Decode()(encode(gray, "PNG"))
    assert out.shape == (37, 53, 3)
    np.testing.assert_array_equal(out, np.stack([gray] * 3, 2))
    rgba = np.dstack([BIG, BIG[:, :, :1]])
    np.testing.assert_array_equal(V.Decode()(encode(rgba, "PNG").tobytes()), BIG)  # bytes input; alpha dropped
    np.testing.assert_array_equal(V.Decode()(encode(BIG, "BMP")), BIG)
    pil = V.Decode(to_pil=True)(encode(gray, "PNG"))
    assert isinstance(pil, Image.Image) and pil.mode == "RGB"


def test_decode_jpeg_is_pillows_decoder():
    data = encode(BIG, "JPEG", quality=90)
    ref = np.asarray(Image.open(io.BytesIO(data.tobytes())).convert("RGB"))
    out = V.Decode()(data)
    assert out.dtype == np.uint8 and out.shape == (37, 53, 3)
    np.testing.assert_array_equal(out, ref)


def test_decode_errors():
    with pytest.raises(RuntimeError, match="Decode: image decode failed"):
        V.Decode()(np.frombuffer(b"abcdef", np.uint8))
    with pytest.raises(ValueError, match="decode"):
        V.Decode(to_pil=True)(np.frombuffer(b"abcdef", np.uint8))
    with pytest.raises(TypeError, match="should be 1, but got 2"):
        V.Decode()(np.zeros((2, 2), np.uint8))
    with pytest.raises(RuntimeError, match="uint8"):
        V.Decode()(encode(IMG, "PNG").astype(np.int32))
    with pytest.raises(TypeError, match="to_pil"):
        V.Decode(1)


def test_topil_modes_and_errors():
    assert V.ToPIL()(IMG).mode == "RGB"
    assert V.ToPIL()(IMG[:, :, 0]).mode == "L"
    assert V.ToPIL()(IMG[:, :, :1]).mode == "L"
    assert V.ToPIL()(np.zeros((2, 2, 4), np.uint8)).mode == "RGBA"
    assert V.ToPIL()(np.zeros((2, 2, 2), np.uint8)).mode == "LA"
    assert V.ToPIL()(np.zeros((2, 2), np.float32)).mode == "F"
    np.testing.assert_array_equal(np.asarray(V.ToPIL()(IMG)), IMG)
    pil = Image.fromarray(IMG)
    assert V.ToPIL()(pil) is pil
    with pytest.raises(TypeError, match="float32"):
        V.ToPIL()(IMG.astype(np.float32))
    with pytest.raises(ValueError, match="2 or 3. Got 1"):
        V.ToPIL()(np.zeros(3))


# ---------------------------------------------------------------- Rescale, Normalize, NormalizePad, layout, dtype

def test_rescale():
    out = V.Rescale(1 / 255, 0)(IMG)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, IMG.astype(np.float32) * np.float32(1 / 255))  # MindSpore: bit-equal
    np.testing.assert_array_equal(V.Rescale(2, 1)(IMG[:, :, 0]), IMG[:, :, 0].astype(np.float32) * 2 + 1)
    with pytest.raises(TypeError, match="rescale"):
        V.Rescale("a", 1)
    with pytest.raises(RuntimeError, match="numeric"):
        V.Rescale(1, 0)(np.array(["a"]))


def test_normalize_hwc_chw_gray_batch():
    mean, std = [0.485 * 255, 0.456 * 255, 0.406 * 255], [0.229 * 255, 0.224 * 255, 0.225 * 255]
    ref = (IMG.astype(np.float32) - np.float32(mean)) / np.float32(std)
    out = V.Normalize(mean, std)(IMG)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, ref, rtol=1e-6)
    np.testing.assert_allclose(out[0, 0], [0.8275537, -1.2128851, 0.23477127], rtol=1e-6)  # MindSpore 2.10
    chw = V.Normalize(mean, std, is_hwc=False)(IMG.transpose(2, 0, 1))
    np.testing.assert_allclose(chw, ref.transpose(2, 0, 1), rtol=1e-6)
    g = IMG[:, :, 0]
    np.testing.assert_allclose(V.Normalize([100], [50])(g), (g - 100.0) / 50, rtol=1e-6)
    assert V.Normalize([100], [50])(IMG[:, :, :1]).shape == (6, 8, 1)
    np.testing.assert_allclose(V.Normalize([100], [50])(IMG), (IMG - 100.0) / 50, rtol=1e-6)  # one value for all
    batch = RS.randint(0, 256, (5, 2, 2, 3)).astype(np.uint8)
    np.testing.assert_allclose(V.Normalize(mean, std)(batch), (batch - np.float32(mean)) / np.float32(std),
                               rtol=1e-6)
    np.testing.assert_allclose(V.Normalize([0.5] * 3, [0.5] * 3)(Image.fromarray(IMG)), (IMG - 0.5) / 0.5)
    t = kiln.Tensor(IMG.astype(np.float32))
    np.testing.assert_allclose(V.Normalize(mean, std)(t), ref, rtol=1e-6)


def test_normalize_errors():
    with pytest.raises(ValueError, match=r"mean\[0\].*\[0, 255\]"):
        V.Normalize([300] * 3, [50] * 3)
    with pytest.raises(ValueError, match=r"std\[0\].*\(0, 255\]"):
        V.Normalize([100] * 3, [0] * 3)
    with pytest.raises(ValueError, match="Length of mean and std"):
        V.Normalize([100] * 3, [50] * 2)
    with pytest.raises(TypeError, match="mean"):
        V.Normalize(100, 50)
    with pytest.raises(RuntimeError, match="channels: 4, size of mean: 3"):
        V.Normalize([100] * 3, [50] * 3)(np.zeros((2, 2, 4), np.uint8))
    with pytest.raises(RuntimeError, match="channels: 6"):
        V.Normalize([100] * 3, [50] * 3, is_hwc=False)(IMG)
    with pytest.raises(RuntimeError, match="at least 2"):
        V.Normalize([1], [1])(np.array([1, 2]))


def test_normalize_pad():
    out = V.NormalizePad([100] * 3, [50] * 3)(IMG)
    assert out.shape == (6, 8, 4) and out.dtype == np.float32
    np.testing.assert_allclose(out[..., :3], (IMG - 100.0) / 50, rtol=1e-6)
    assert not out[..., 3].any()
    assert V.NormalizePad([100] * 3, [50] * 3, dtype="float16")(IMG).dtype == np.float16
    assert V.NormalizePad([100] * 3, [50] * 3, is_hwc=False)(IMG.transpose(2, 0, 1)).shape == (4, 6, 8)
    assert V.NormalizePad([100], [50])(IMG[:, :, 0]).shape == (6, 8, 2)
    with pytest.raises(ValueError, match="float32 or float16"):
        V.NormalizePad([100] * 3, [50] * 3, dtype="int8")


def test_hwc2chw():
    np.testing.assert_array_equal(V.HWC2CHW()(IMG), IMG.transpose(2, 0, 1))
    np.testing.assert_array_equal(V.HWC2CHW()(IMG[:, :, 0]), IMG[:, :, 0])  # (H, W) unchanged
    assert V.HWC2CHW()(IMG[:, :, :1]).shape == (1, 6, 8)
    np.testing.assert_array_equal(V.HWC2CHW()(Image.fromarray(IMG)), IMG.transpose(2, 0, 1))
    for bad in (np.zeros(5), np.zeros((2, 2, 3, 1))):
        with pytest.raises(RuntimeError, match="HWC2CHW"):
            V.HWC2CHW()(bad)


def test_totensor_and_totype():
    out = V.ToTensor()(IMG)
    assert out.dtype == np.float32 and out.shape == (3, 6, 8)
    np.testing.assert_array_equal(out, (IMG.astype(np.float32) / np.float32(255)).transpose(2, 0, 1))
    assert V.ToTensor()(IMG[:, :, 0]).shape == (1, 6, 8)
    np.testing.assert_array_equal(V.ToTensor()(Image.fromarray(IMG)), out)
    assert V.ToTensor(np.float64)(IMG).dtype == np.float64
    assert V.ToTensor(kiln.float16)(IMG).dtype == np.float16
    np.testing.assert_allclose(V.ToTensor()(IMG.astype(np.float32)), out)  # floats are divided by 255 too
    with pytest.raises(RuntimeError, match="ToTensor"):
        V.ToTensor()(np.zeros(5))
    out = V.ToType(np.int16)(IMG)
    assert out.dtype == np.int16 and (out == IMG).all()
    assert V.ToType(kiln.float32)(IMG).dtype == np.float32


# ---------------------------------------------------------------- crops, pads, flips

def test_center_crop_arrays():
    np.testing.assert_array_equal(V.CenterCrop(4)(IMG), IMG[1:5, 2:6])
    np.testing.assert_array_equal(V.CenterCrop((3, 5))(IMG), IMG[1:4, 1:6])  # floor((H - h) / 2)
    # larger than the image: zero padding, ceil(d/2) before (MindSpore 2.10's output)
    np.testing.assert_array_equal(V.CenterCrop((5, 5))(S), np.pad(S, [(1, 1), (1, 0)]))
    np.testing.assert_array_equal(V.CenterCrop((3, 8))(S), np.pad(S, [(0, 0), (2, 2)]))
    assert V.CenterCrop((2, 2))(IMG[:, :, :1]).shape == (2, 2, 1)
    assert V.CenterCrop((2, 2))(IMG.astype(np.float32)).dtype == np.float32
    with pytest.raises(ValueError, match=r"\[1, 16777216\]"):
        V.CenterCrop(0)
    with pytest.raises(RuntimeError, match="CenterCrop"):
        V.CenterCrop(2)(np.zeros(5))


def test_center_crop_pil_uses_python_rounding():
    pil = Image.fromarray(S)
    np.testing.assert_array_equal(np.asarray(V.CenterCrop((2, 1))(pil)), [[2], [6]])  # round(1.5) = 2
    np.testing.assert_array_equal(np.asarray(V.CenterCrop((5, 5))(pil)), np.pad(S, [(1, 1), (0, 1)]))
    assert isinstance(V.CenterCrop(2)(pil), Image.Image)


def test_crop():
    np.testing.assert_array_equal(V.Crop((1, 2), 2)(S), S[1:3, 2:4])
    np.testing.assert_array_equal(V.Crop((1, 1), (2, 3))(IMG), IMG[1:3, 1:4])
    with pytest.raises(RuntimeError, match="width dimension: 5 exceeds image width: 4"):
        V.Crop((1, 2), (2, 3))(S)
    with pytest.raises(RuntimeError, match="height dimension: 4 exceeds image height: 3"):
        V.Crop((2, 0), (2, 3))(S)
    with pytest.raises(ValueError, match=r"coordinates\[0\]"):
        V.Crop((-1, 2), (2, 3))
    with pytest.raises(RuntimeError, match="Crop"):
        V.Crop((0, 0), (2, 2))(np.zeros((2, 3, 4, 5)))


@pytest.mark.parametrize("mode,npmode", [(Border.EDGE, "edge"), (Border.REFLECT, "reflect"),
                                         (Border.SYMMETRIC, "symmetric")])
def test_pad_modes_are_numpy_pad(mode, npmode):
    np.testing.assert_array_equal(V.Pad(1, padding_mode=mode)(S), np.pad(S, 1, mode=npmode))
    np.testing.assert_array_equal(V.Pad((1, 2, 3, 0), padding_mode=mode)(IMG),
                                  np.pad(IMG, [(2, 0), (1, 3), (0, 0)], mode=npmode))


def test_pad_constant_forms():
    np.testing.assert_array_equal(V.Pad(1)(S), np.pad(S, 1))
    np.testing.assert_array_equal(V.Pad((1, 2))(S), np.pad(S, [(2, 2), (1, 1)]))  # (left/right, top/bottom)
    np.testing.assert_array_equal(V.Pad((1, 2, 3, 0), 7)(S), np.pad(S, [(2, 0), (1, 3)], constant_values=7))
    out = V.Pad(1, fill_value=(1, 2, 3))(IMG)
    assert out[0, 0].tolist() == [1, 2, 3] and (out[1:-1, 1:-1] == IMG).all()
    np.testing.assert_array_equal(V.Pad(1, fill_value=(1, 2, 3))(S), np.pad(S, 1, constant_values=1))
    assert V.Pad(1, fill_value=7)(IMG[:, :, :1]).shape == (8, 10, 1)
    # REFLECT wider than the image reflects again (MindSpore 2.10's output equals NumPy's)
    np.testing.assert_array_equal(V.Pad(4, padding_mode=Border.REFLECT)(S), np.pad(S, 4, mode="reflect"))
    out = V.Pad(1)(Image.fromarray(S))
    assert isinstance(out, Image.Image) and out.mode == "L"
    np.testing.assert_array_equal(np.asarray(out), np.pad(S, 1))


def test_pad_errors():
    with pytest.raises(ValueError, match="2 or 4"):
        V.Pad((1, 2, 3))
    with pytest.raises(ValueError, match="padding"):
        V.Pad(-1)
    with pytest.raises(ValueError, match="fill_value"):
        V.Pad(1, fill_value=256)
    with pytest.raises(TypeError, match="padding_mode"):
        V.Pad(1, padding_mode="edge")
    with pytest.raises(RuntimeError, match="Pad"):
        V.Pad(1)(np.zeros(3))


def test_flips():
    np.testing.assert_array_equal(V.HorizontalFlip()(S), S[:, ::-1])
    np.testing.assert_array_equal(V.VerticalFlip()(S), S[::-1])
    np.testing.assert_array_equal(V.HorizontalFlip()(IMG), IMG[:, ::-1])
    batch = RS.randint(0, 9, (2, 3, 3, 3)).astype(np.uint8)
    np.testing.assert_array_equal(V.HorizontalFlip()(batch), batch[:, :, ::-1])
    np.testing.assert_array_equal(V.VerticalFlip()(batch), batch[:, ::-1])
    np.testing.assert_array_equal(V.HorizontalFlip()(Image.fromarray(S)), S[:, ::-1])  # array out, as MindSpore
    with pytest.raises(RuntimeError, match="two dimensions"):
        V.HorizontalFlip()(np.zeros(3))
    with pytest.raises(RuntimeError, match="int64"):
        V.VerticalFlip()(np.zeros((2, 2), np.int64))


# ---------------------------------------------------------------- Rotate

def test_rotate_right_angles_exact():
    np.testing.assert_array_equal(V.Rotate(90, expand=True)(S), np.rot90(S))
    np.testing.assert_array_equal(V.Rotate(-90, expand=True)(IMG), np.rot90(IMG, -1))
    np.testing.assert_array_equal(V.Rotate(180)(IMG), IMG[::-1, ::-1])
    out = V.Rotate(90)(S)  # same size, about the centre (1.5, 1): MindSpore 2.10's output
    np.testing.assert_array_equal(out, [[3, 7, 11, 0], [2, 6, 10, 0], [1, 5, 9, 0]])


def test_rotate_matches_mindspore():
    np.testing.assert_array_equal(V.Rotate(30)(FIX)[:, :, 0], MS_FIXTURES["rotate_nearest_30"])
    # bilinear: OpenCV quantizes coordinates to 1/32 pixel; measured at most 5 levels on noise images
    out = V.Rotate(30, Inter.BILINEAR)(FIX)[:, :, 0].astype(int)
    assert np.abs(out - MS_FIXTURES["rotate_linear_30"]).max() <= 5
    out = V.Rotate(30, Inter.BILINEAR, expand=True)(FIX)[:, :, 0].astype(int)
    assert out.shape == (6, 6)
    assert np.abs(out - MS_FIXTURES["rotate_linear_30_expand"]).max() <= 5


def test_rotate_vs_reference_sampling():
    # nearest rotation by 30 degrees about ((W-1)/2, (H-1)/2): each output pixel is the input pixel nearest to its
    # inverse-rotated position (or the fill outside)
    h, w = BIG.shape[:2]
    out = V.Rotate(30, fill_value=(1, 2, 3))(BIG)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float64)
    cx, cy = (w - 1) / 2, (h - 1) / 2
    t = math.radians(30)
    sx = math.cos(t) * (xx - cx) - math.sin(t) * (yy - cy) + cx
    sy = math.sin(t) * (xx - cx) + math.cos(t) * (yy - cy) + cy
    ix, iy = np.floor(sx + 0.5).astype(int), np.floor(sy + 0.5).astype(int)
    inside = (ix >= 0) & (ix < w) & (iy >= 0) & (iy < h)
    ref = np.empty_like(BIG)
    ref[:] = (1, 2, 3)
    ref[inside] = BIG[iy[inside], ix[inside]]
    ties = (np.abs(sx - np.floor(sx) - 0.5) < 1e-6) | (np.abs(sy - np.floor(sy) - 0.5) < 1e-6)
    assert ((out != ref).any(-1) & ~ties).sum() == 0


def test_rotate_layouts_and_errors():
    assert V.Rotate(30, expand=True)(IMG).shape == (9, 10, 3)        # round(9.196), round(9.928): MindSpore
    assert V.Rotate(-45, expand=True)(BIG).shape == (64, 64, 3)
    assert V.Rotate(30)(IMG[:, :, 0]).shape == (6, 8)
    out = V.Rotate(30)(IMG.astype(np.float32))
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, V.Rotate(30)(IMG).astype(np.float32))  # same sampling for floats
    assert V.Rotate(30)(RS.randint(0, 9, (3, 3, 3, 3)).astype(np.uint8)).shape == (3, 3, 3, 3)
    assert isinstance(V.Rotate(30)(Image.fromarray(IMG)), np.ndarray)
    with pytest.raises(ValueError, match="resample"):
        V.Rotate(30, Inter.PILCUBIC)
    with pytest.raises(TypeError, match="degrees"):
        V.Rotate("30")
    with pytest.raises(ValueError, match="center"):
        V.Rotate(30, center=(1, 2, 3))
    with pytest.raises(RuntimeError, match="Rotate"):
        V.Rotate(30)(np.zeros(4, np.uint8))


# ---------------------------------------------------------------- colour

def test_grayscale_pil_only():
    pil = Image.fromarray(IMG)
    out = V.Grayscale()(pil)
    assert out.mode == "L"
    np.testing.assert_array_equal(np.asarray(out), np.asarray(ImageOps.grayscale(pil)))
    assert V.Grayscale(3)(pil).mode == "RGB"
    with pytest.raises(TypeError, match="PIL image"):
        V.Grayscale()(IMG)
    with pytest.raises(ValueError, match="1 or 3"):
        V.Grayscale(2)


def test_convert_color():
    x = BIG.astype(np.int64)
    gray = (x[..., 0] * 9798 + x[..., 1] * 19235 + x[..., 2] * 3735 + 16384) >> 15
    np.testing.assert_array_equal(V.ConvertColor(ConvertMode.COLOR_RGB2GRAY)(BIG), gray)
    np.testing.assert_array_equal(V.ConvertColor(ConvertMode.COLOR_RGB2GRAY)(FIX), MS_FIXTURES["gray"])
    np.testing.assert_array_equal(V.ConvertColor(ConvertMode.COLOR_BGR2GRAY)(BIG[..., ::-1].copy()), gray)
    np.testing.assert_array_equal(V.ConvertColor(ConvertMode.COLOR_RGB2BGR)(IMG), IMG[..., ::-1])
    rgba = V.ConvertColor(ConvertMode.COLOR_RGB2RGBA)(IMG)
    assert rgba.shape == (6, 8, 4) and (rgba[..., 3] == 255).all() and (rgba[..., :3] == IMG).all()
    np.testing.assert_array_equal(V.ConvertColor(ConvertMode.COLOR_RGBA2BGR)(rgba), IMG[..., ::-1])
    np.testing.assert_array_equal(V.ConvertColor(ConvertMode.COLOR_GRAY2RGB)(IMG[:, :, 0]),
                                  np.stack([IMG[:, :, 0]] * 3, 2))
    f = V.ConvertColor(ConvertMode.COLOR_RGB2GRAY)(IMG.astype(np.float32))
    np.testing.assert_allclose(f, IMG @ np.array([0.299, 0.587, 0.114]), rtol=1e-6)
    with pytest.raises(RuntimeError, match="3 channel"):
        V.ConvertColor(ConvertMode.COLOR_RGB2GRAY)(IMG[:, :, 0])
    with pytest.raises(TypeError, match="convert_mode"):
        V.ConvertColor(7)


# ---------------------------------------------------------------- enums and module paths

def test_enums_and_module_paths():
    assert Inter.LINEAR is Inter.BILINEAR and Inter.CUBIC is Inter.BICUBIC
    assert [int(i) for i in Inter] == [0, 1, 2, 3, 4, 5]
    assert Border.CONSTANT.value == "constant" and str(Border.EDGE) == "edge"
    assert [int(f) for f in V.ImageBatchFormat] == [0, 1]
    assert ConvertMode.COLOR_RGB2BGR == 4 and ConvertMode.COLOR_RGBA2GRAY == 11
    import kiln.dataset.vision.c_transforms as C
    import kiln.dataset.vision.py_transforms as P
    import kiln.dataset.vision.transforms as VT
    assert C.Normalize is V.Normalize and C.Resize is V.Resize and C.Inter is Inter and VT.Crop is V.Crop
    assert P.ToTensor is V.ToTensor and P.Resize is V.Resize
    assert isinstance(P.Decode()(encode(IMG, "PNG")), Image.Image)
    chw = P.ToTensor()(Image.fromarray(IMG))
    np.testing.assert_allclose(P.Normalize([0.5] * 3, [0.25] * 3)(chw), (chw - 0.5) / 0.25, rtol=1e-6)


def test_bad_inputs_give_clear_errors():
    empty = np.zeros((0, 5, 3), np.uint8)
    for op in (V.Resize((3, 3)), V.CenterCrop(2), V.Rotate(10), V.Pad(1), V.RandomCrop(1), V.RandomResizedCrop(3)):
        with pytest.raises(RuntimeError, match=f"{type(op).__name__}: the image is empty"):
            op(empty)
    with pytest.raises(RuntimeError, match="Pad: the image should be numeric"):
        V.Pad(1)(np.array([["a"]]))
    with pytest.raises(TypeError, match="Resize: invalid user input"):
        V.Resize(3)(None)
    with pytest.raises(TypeError, match="invalid user input"):
        V.Resize(3)([[1], [1, 2]])
    with pytest.raises(RuntimeError, match="Decode: image decode failed"):
        V.Decode()(encode(BIG, "PNG")[:100])
    with pytest.raises(RuntimeError, match="Decode: image decode failed"):
        V.Decode()(np.zeros(0, np.uint8))
    with pytest.raises(RuntimeError, match="ToType: cannot cast"):
        V.ToType(np.int32)(np.array([["1", "x"]]))
    # non-contiguous views and NaN are handled, not rejected
    assert V.Resize((3, 3))(np.zeros((12, 16, 3), np.uint8)[::2, ::2]).shape == (3, 3, 3)
    assert np.isnan(V.Normalize([1], [1])(np.full((2, 2), np.nan))).all()


def test_mindspore_style_eager_script_under_compat(tmp_path):
    import subprocess
    import sys
    import textwrap
    from helpers import subprocess_env
    script = tmp_path / "eager.py"
    script.write_text(textwrap.dedent("""
        import numpy as np
        from PIL import Image
        import mindspore
        import mindspore.dataset.vision as vision
        import mindspore.dataset.vision.c_transforms as c_vision
        import mindspore.dataset.vision.py_transforms as py_vision
        import mindspore.dataset.transforms as transforms
        import mindspore.dataset.transforms.c_transforms as c_trans
        from mindspore.dataset.vision import Inter
        from mindspore.dataset.vision.transforms import HWC2CHW
        img = (np.arange(32 * 48 * 3) % 251).astype(np.uint8).reshape(32, 48, 3)
        pil = Image.fromarray(img)
        x = vision.Pad(2)(vision.CenterCrop((20, 20))(vision.Resize(size=24, interpolation=Inter.BICUBIC)(pil)))
        assert x.size == (24, 24), x.size
        y = transforms.Compose([vision.Rescale(1 / 255., 0), vision.Normalize(mean=(0.1307,), std=(0.3081,)),
                                HWC2CHW()])(img[:, :, :1])
        assert y.shape == (1, 32, 48) and y.dtype == np.float32
        assert c_trans.TypeCast(mindspore.int32)(np.array(3)).dtype == np.int32
        assert py_vision.ToTensor()(pil).shape == (3, 32, 48)
        assert c_vision.RandomResizedCrop(16)(img).shape == (16, 16, 3)
        print("ok")
    """))
    r = subprocess.run([sys.executable, "-m", "kiln.compat", str(script)], env=subprocess_env(), cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"


@pytest.mark.parametrize("inter", ["LINEAR", "BICUBIC", "AREA"])
@pytest.mark.parametrize("size", [(17, 23), (61, 45)])
def test_resize_without_opencv_follows_the_same_rule(monkeypatch, inter, size):
    """The Pillow/NumPy paths (used without OpenCV and for other dtypes) give OpenCV's results within one grey
    level (rounding of the fixed-point arithmetic), down- and upscaling."""
    from kiln.dataset.vision import _image
    if _image._cv2 is None:
        pytest.skip("OpenCV not installed: the fallback is what every other resize test checks")
    img = np.random.default_rng(1).integers(0, 256, (40, 30, 3), dtype=np.uint8)
    mode = getattr(Inter, inter)
    with_cv2 = V.Resize(size, mode)(img)
    monkeypatch.setattr(_image, "_cv2", None)
    without = V.Resize(size, mode)(img)
    assert without.shape == with_cv2.shape == (*size, 3) and without.dtype == np.uint8
    assert np.abs(without.astype(int) - with_cv2).max() <= 1
