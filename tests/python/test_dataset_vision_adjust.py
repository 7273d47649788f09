"""kiln.dataset.vision pixel operations (Invert, Equalize, AutoContrast, Posterize, Solarize, AdjustSharpness, the
random variants, CutOut, RandomCropDecodeResize): independent NumPy references of the documented formulas (which
matched MindSpore 2.10 exactly on these images when written), seeding, pipelines, and bad input."""
import io

import numpy as np
import pytest
from PIL import Image, ImageEnhance

import kiln.dataset as ds
import kiln.dataset.vision as vision

RNG = np.random.RandomState(0)
IMG = (RNG.rand(64, 48, 3) * 200 + 20).astype(np.uint8)


def _equalize_ref(ch):
    """OpenCV's equalizeHist: lut[v] = round((cdf[v] − cdf_min)·255 / (N − cdf_min))."""
    hist = np.bincount(ch.ravel(), minlength=256)
    cdf = np.cumsum(hist)
    cdf_min = cdf[np.nonzero(hist)[0][0]]
    n = ch.size
    if n == cdf_min:
        return ch.copy()
    lut = np.clip(np.round((cdf - cdf_min) * 255.0 / (n - cdf_min)), 0, 255).astype(np.uint8)
    return lut[ch]


def test_invert_equalize_posterize_solarize():
    np.testing.assert_array_equal(vision.Invert()(IMG), 255 - IMG)
    np.testing.assert_array_equal(vision.Invert()(IMG.astype(np.float32)), 255.0 - IMG)
    eq = vision.Equalize()(IMG)
    for c in range(3):
        np.testing.assert_array_equal(eq[:, :, c], _equalize_ref(IMG[:, :, c]))
    np.testing.assert_array_equal(vision.Equalize()(IMG[:, :, 0]), _equalize_ref(IMG[:, :, 0]))
    np.testing.assert_array_equal(vision.Posterize(3)(IMG), IMG & 0b11100000)
    np.testing.assert_array_equal(vision.Solarize(100)(IMG), np.where(IMG >= 100, 255 - IMG, IMG))
    np.testing.assert_array_equal(vision.Solarize((50, 120))(IMG), np.where((IMG >= 50) & (IMG <= 120), 255 - IMG,
                                                                            IMG))


def test_autocontrast_stretches_each_channel():
    out = vision.AutoContrast()(IMG).astype(np.int64)
    for c in range(3):
        ch = IMG[:, :, c].astype(np.float64)
        lo, hi = ch.min(), ch.max()
        scale = 255.0 / (hi - lo)
        want = np.clip((ch * scale - lo * scale).astype(np.int64), 0, 255)  # Pillow's truncating LUT
        np.testing.assert_array_equal(out[:, :, c], want)
        assert out[:, :, c].min() == 0 and out[:, :, c].max() == 255
    cut = vision.AutoContrast(cutoff=10.0)(IMG)
    assert cut.dtype == np.uint8 and cut.shape == IMG.shape
    assert (cut == 0).mean() > 0.05 and (cut == 255).mean() > 0.05  # 10% clipped at each end


def test_sharpness_is_pillows():
    want = np.asarray(ImageEnhance.Sharpness(Image.fromarray(IMG)).enhance(1.7))
    np.testing.assert_array_equal(vision.AdjustSharpness(1.7)(IMG), want)
    np.testing.assert_array_equal(vision.AdjustSharpness(1.0)(IMG), IMG)


def test_random_variants_are_seeded_and_choose_between_identity_and_the_op():
    ds.config.set_seed(5)
    outs = [vision.RandomInvert(0.5)(IMG) for _ in range(40)]
    flips = sum(np.array_equal(o, 255 - IMG) for o in outs)
    assert 8 < flips < 32 and all(np.array_equal(o, IMG) or np.array_equal(o, 255 - IMG) for o in outs)
    assert np.array_equal(vision.RandomEqualize(1.0)(IMG), vision.Equalize()(IMG))
    assert np.array_equal(vision.RandomAutoContrast(prob=0.0)(IMG), IMG)
    p = vision.RandomPosterize((2, 4))(IMG)
    assert any(np.array_equal(p, IMG & m) for m in (0b11000000, 0b11100000, 0b11110000))
    ds.config.set_seed(1)
    a = vision.RandomSharpness((0.5, 1.5))(IMG)
    ds.config.set_seed(1)
    np.testing.assert_array_equal(a, vision.RandomSharpness((0.5, 1.5))(IMG))
    s = vision.RandomSolarize((0, 255))(IMG)
    changed = s != IMG
    assert np.array_equal(s[changed], 255 - IMG[changed])


def test_cutout_zeroes_clipped_squares():
    ds.config.set_seed(3)
    out = vision.CutOut(10, num_patches=2)(IMG)
    zero = (out == 0).all(axis=2) & (IMG != 0).any(axis=2)
    assert 0 < zero.sum() <= 2 * 100
    np.testing.assert_array_equal(out[~zero], IMG[~zero])
    chw = vision.CutOut(10, is_hwc=False)(np.transpose(IMG, (2, 0, 1)).copy())
    assert chw.shape == (3, 64, 48) and ((chw == 0).all(axis=0)).sum() > 0


def test_random_crop_decode_resize_in_a_pipeline():
    buf = io.BytesIO()
    Image.fromarray(IMG).save(buf, format="PNG")
    data = np.frombuffer(buf.getvalue(), np.uint8)
    ds.config.set_seed(0)
    out = vision.RandomCropDecodeResize((16, 20), scale=(1.0, 1.0), ratio=(48 / 64, 48 / 64))(data)
    assert out.shape == (16, 20, 3) and out.dtype == np.uint8
    np.testing.assert_array_equal(out, vision.Resize((16, 20))(IMG))  # the window is the whole image
    pipe = ds.NumpySlicesDataset({"image": [data, data]}, shuffle=False).map(
        [vision.RandomCropDecodeResize(8), vision.Invert()], input_columns="image")
    shapes = [row["image"].shape for row in pipe.create_dict_iterator(output_numpy=True)]
    assert shapes == [(8, 8, 3), (8, 8, 3)]
    with pytest.raises(RuntimeError, match="decode"):
        vision.RandomCropDecodeResize(8)(np.frombuffer(b"not an image", np.uint8))


def test_bad_input():
    with pytest.raises(RuntimeError, match="uint8"):
        vision.Equalize()(IMG.astype(np.float32))
    with pytest.raises(RuntimeError, match="shape"):
        vision.AutoContrast()(np.zeros((4, 4, 2), np.uint8))
    with pytest.raises(ValueError):
        vision.AutoContrast(cutoff=60.0)
    with pytest.raises(ValueError):
        vision.Posterize(9)
    with pytest.raises(ValueError, match="threshold"):
        vision.Solarize((200, 100))
    with pytest.raises(ValueError, match="bits"):
        vision.RandomPosterize((0, 3))
    with pytest.raises(ValueError, match="degrees"):
        vision.RandomSharpness((2.0, 1.0))
    with pytest.raises(RuntimeError, match="3-D"):
        vision.CutOut(4)(IMG[:, :, 0])
    with pytest.raises(ValueError):
        vision.CutOut(0)
