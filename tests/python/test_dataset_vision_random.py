"""kiln.dataset.vision random operations: outputs equal the deterministic operation at the drawn parameters,
distribution sanity over many draws with a fixed seed, bounds, reproducibility under a seed, argument errors."""
import math

import numpy as np
import pytest
from PIL import Image, ImageEnhance

import kiln.dataset.vision as V
from kiln.dataset.vision import Border, Inter, _image, _random
from kiln.dataset.vision._random_transforms import resized_crop_box

RS = np.random.RandomState(1)
IMG = RS.randint(0, 256, (24, 32, 3)).astype(np.uint8)
GRID = np.arange(12 * 16, dtype=np.int16).reshape(12, 16)  # unique values: a crop reveals its offset


@pytest.mark.parametrize("cls,flip", [(V.RandomHorizontalFlip, lambda x: x[:, ::-1]),
                                      (V.RandomVerticalFlip, lambda x: x[::-1])])
def test_random_flip_probability_and_values(cls, flip):
    _random.reseed(11)
    op = cls(0.3)
    flipped = 0
    for _ in range(2000):
        out = op(IMG)
        if np.array_equal(out, flip(IMG)):
            flipped += 1
        else:
            assert np.array_equal(out, IMG)
    assert abs(flipped / 2000 - 0.3) < 0.045  # > 4 standard deviations
    assert np.array_equal(cls(1.0)(IMG), flip(IMG)) and np.array_equal(cls(0.0)(IMG), IMG)
    out = cls(1.0)(Image.fromarray(IMG))
    assert isinstance(out, Image.Image) and np.array_equal(np.asarray(out), flip(IMG))
    with pytest.raises(ValueError, match="prob"):
        cls(1.5)
    with pytest.raises(RuntimeError, match=cls.__name__):
        cls(1.0)(np.zeros(3))


def _offset(crop, source):
    top, left = np.argwhere(source == crop.flat[0])[0]
    return int(top), int(left)


def test_random_crop_windows_inside_and_uniform():
    _random.reseed(3)
    op = V.RandomCrop((5, 7))
    counts = np.zeros((12 - 5 + 1, 16 - 7 + 1), int)
    for _ in range(3000):
        out = op(GRID)
        assert out.shape == (5, 7) and out.dtype == np.int16
        top, left = _offset(out, GRID)
        np.testing.assert_array_equal(out, GRID[top:top + 5, left:left + 7])
        counts[top, left] += 1
    expected = 3000 / counts.size
    assert counts.min() > 0 and np.abs(counts - expected).max() < 5 * math.sqrt(expected)


def test_random_crop_padding_forms():
    _random.reseed(4)
    S = np.arange(12, dtype=np.uint8).reshape(3, 4) + 1
    padded = np.pad(S, [(2, 2), (2, 2)])
    for _ in range(50):  # pad_if_needed pads the missing amount on both sides, then crops at random
        out = V.RandomCrop((5, 6), pad_if_needed=True)(S)
        assert out.shape == (5, 6)
        assert any(np.array_equal(out, padded[t:t + 5, l:l + 6]) for t in range(3) for l in range(3))
    edge = np.pad(S, 1, mode="edge")
    for _ in range(20):
        out = V.RandomCrop((3, 4), padding=1, padding_mode=Border.EDGE)(S)
        assert any(np.array_equal(out, edge[t:t + 3, l:l + 4]) for t in range(3) for l in range(3))
    out = V.RandomCrop((5, 6), padding=(1, 1), fill_value=200)(S)
    assert out.shape == (5, 6) and (out == 200).sum() == 5 * 6 - 12
    pil = V.RandomCrop((3, 4), pad_if_needed=True)(Image.fromarray(S))
    assert isinstance(pil, Image.Image) and np.array_equal(np.asarray(pil), S)


def test_random_crop_errors():
    with pytest.raises(RuntimeError, match="crop size is bigger"):
        V.RandomCrop((5, 6))(np.zeros((3, 4), np.uint8))
    with pytest.raises(TypeError, match="pad_if_needed"):
        V.RandomCrop(3, pad_if_needed=1)
    with pytest.raises(ValueError, match="padding"):
        V.RandomCrop(3, padding=-1)


def test_resized_crop_box_bounds_scale_ratio():
    rng = np.random.default_rng(0)
    h, w = 240, 320
    areas, ratios = [], []
    for _ in range(3000):
        top, left, ch, cw = resized_crop_box(h, w, (0.08, 1.0), (3 / 4, 4 / 3), 10, rng)
        assert 0 <= top and top + ch <= h and 0 <= left and left + cw <= w and ch >= 1 and cw >= 1
        areas.append(ch * cw / (h * w))
        ratios.append(cw / ch)
    areas, ratios = np.array(areas), np.array(ratios)
    assert areas.min() >= 0.08 - 0.01 and areas.max() <= 1.0
    assert ratios.min() >= 0.75 - 0.02 and ratios.max() <= 4 / 3 + 0.02
    assert 0.35 < np.median(areas) < 0.6  # U(0.08, 1) area, less the rejected large draws


def test_resized_crop_box_fallback_is_centre_crop_clamped_to_ratio():
    rng = np.random.default_rng(0)
    # an area larger than the image never fits: centre crop, the whole image when its ratio is inside the range
    assert resized_crop_box(30, 40, (2.0, 3.0), (0.5, 2.0), 10, rng) == (0, 0, 30, 40)
    # a 10:1 image with ratio <= 2: height kept, width = round(h * 2), centred
    assert resized_crop_box(10, 100, (2.0, 3.0), (0.5, 2.0), 10, rng) == (0, 40, 10, 20)
    assert resized_crop_box(100, 10, (2.0, 3.0), (0.5, 2.0), 10, rng) == (40, 0, 20, 10)


def test_random_resized_crop_equals_resize_of_drawn_box():
    op = V.RandomResizedCrop((20, 24), scale=(0.2, 0.9), ratio=(0.5, 2.0), interpolation=Inter.BICUBIC)
    for seed in range(5):
        _random.reseed(seed)
        top, left, ch, cw = resized_crop_box(24, 32, (0.2, 0.9), (0.5, 2.0), 10, _random._rng())
        _random.reseed(seed)
        out = op(IMG)
        assert out.shape == (20, 24, 3) and out.dtype == np.uint8
        ref = _image.resize_array(IMG[top:top + ch, left:left + cw], (20, 24), Inter.BICUBIC)
        np.testing.assert_array_equal(out, ref)
    assert V.RandomResizedCrop(8)(IMG).shape == (8, 8, 3)
    pil = V.RandomResizedCrop(8)(Image.fromarray(IMG))
    assert isinstance(pil, Image.Image) and pil.size == (8, 8)


def test_random_resized_crop_errors():
    with pytest.raises(ValueError, match=r"\(min,max\)"):
        V.RandomResizedCrop(4, scale=(0.5, 0.1))
    with pytest.raises(ValueError, match=r"\(min,max\)"):
        V.RandomResizedCrop(4, ratio=(2, 1))
    with pytest.raises(ValueError, match="max_attempts"):
        V.RandomResizedCrop(4, max_attempts=0)
    with pytest.raises(TypeError, match="PIL image"):
        V.RandomResizedCrop(4, interpolation=Inter.ANTIALIAS)(IMG)


def test_random_rotation_equals_rotate_at_drawn_angle():
    op = V.RandomRotation((10, 40), resample=Inter.BILINEAR, expand=True)
    for seed in range(4):
        _random.reseed(seed)
        angle = _random._rng().uniform(10, 40)
        _random.reseed(seed)
        np.testing.assert_array_equal(op(IMG), V.Rotate(angle, Inter.BILINEAR, expand=True)(IMG))
    _random.reseed(9)
    angles = [_random._rng().uniform(-15, 15) for _ in range(500)]
    assert min(angles) >= -15 and max(angles) <= 15 and abs(np.mean(angles)) < 1.5
    pil = Image.fromarray(IMG)  # PIL input: Pillow's own rotate at the drawn angle (MindSpore's Python op)
    _random.reseed(2)
    angle = _random._rng().uniform(-10, 10)
    _random.reseed(2)
    out = V.RandomRotation(10, Inter.BILINEAR, expand=True, fill_value=(1, 2, 3))(pil)
    ref = pil.rotate(angle, resample=Image.Resampling.BILINEAR, expand=True, fillcolor=(1, 2, 3))
    assert isinstance(out, Image.Image) and out.size == ref.size
    np.testing.assert_array_equal(np.asarray(out), np.asarray(ref))
    assert V.RandomRotation(10, fill_value=9)(Image.fromarray(IMG[:, :, 0])).mode == "L"
    with pytest.raises(ValueError, match="degrees"):
        V.RandomRotation(-5)
    with pytest.raises(ValueError, match=r"\(min,max\)"):
        V.RandomRotation((10, 5))


def test_random_color_adjust_fixed_factors_are_pillow_enhance():
    pil = Image.fromarray(IMG)
    cases = [(dict(brightness=(1.5, 1.5)), ImageEnhance.Brightness(pil).enhance(1.5)),
             (dict(contrast=(0.5, 0.5)), ImageEnhance.Contrast(pil).enhance(0.5)),
             (dict(saturation=(0.3, 0.3)), ImageEnhance.Color(pil).enhance(0.3))]
    for kwargs, ref in cases:
        np.testing.assert_array_equal(V.RandomColorAdjust(**kwargs)(IMG), np.asarray(ref))
        assert isinstance(V.RandomColorAdjust(**kwargs)(pil), Image.Image)
    h, s, v = pil.convert("HSV").split()
    hue = ((np.asarray(h).astype(int) + int(0.2 * 255)) % 256).astype(np.uint8)
    ref = Image.merge("HSV", (Image.fromarray(hue, "L"), s, v)).convert("RGB")
    np.testing.assert_array_equal(V.RandomColorAdjust(hue=(0.2, 0.2))(IMG), np.asarray(ref))
    np.testing.assert_array_equal(V.RandomColorAdjust()(IMG), IMG)  # neutral factors: unchanged
    gray = Image.fromarray(IMG[:, :, 0])
    assert V.RandomColorAdjust(hue=0.5)(gray).mode == "L"


def test_random_color_adjust_ranges_and_seed():
    op = V.RandomColorAdjust(brightness=0.4, contrast=0.4, saturation=0.4, hue=0.1)
    _random.reseed(5)
    first = [op(IMG) for _ in range(3)]
    _random.reseed(5)
    again = [op(IMG) for _ in range(3)]
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(first[0], first[1])
    assert op.brightness == (0.6, 1.4) and op.hue == (-0.1, 0.1)
    assert V.RandomColorAdjust(brightness=2).brightness == (0.0, 3.0)  # lower end clipped at 0


def test_random_color_adjust_errors():
    with pytest.raises(ValueError, match="cannot be negative"):
        V.RandomColorAdjust(brightness=-1)
    with pytest.raises(ValueError, match="hue"):
        V.RandomColorAdjust(hue=0.6)
    with pytest.raises(ValueError, match="contrast"):
        V.RandomColorAdjust(contrast=(2, 1))
    with pytest.raises(TypeError, match="saturation"):
        V.RandomColorAdjust(saturation="x")
    with pytest.raises(RuntimeError, match="dimension"):
        V.RandomColorAdjust(0.5)(IMG[:, :, 0])
    with pytest.raises(RuntimeError, match="channel"):
        V.RandomColorAdjust(0.5)(IMG[:, :, :1])
    with pytest.raises(RuntimeError, match="uint8"):
        V.RandomColorAdjust(0.5)(IMG.astype(np.float32))


def test_random_pipeline_reproducible_under_seed():
    ops = [V.RandomResizedCrop(16), V.RandomHorizontalFlip(), V.RandomRotation(20), V.RandomCrop(12, padding=2),
           V.RandomColorAdjust(0.3, 0.3, 0.3, 0.05)]

    def run(seed):
        _random.reseed(seed)
        outs = []
        for _ in range(4):
            x = IMG
            for op in ops:
                x = op(x)
            outs.append(x)
        return outs
    a, b, c = run(1), run(1), run(2)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not all(np.array_equal(x, y) for x, y in zip(a, c))


def test_operations_are_safe_from_threads():
    from concurrent.futures import ThreadPoolExecutor
    ops = [V.Resize((20, 20)), V.Rotate(17, Inter.BILINEAR), V.Normalize([120] * 3, [60] * 3), V.HWC2CHW(),
           V.Decode()]
    imgs = [RS.randint(0, 256, (30, 40, 3)).astype(np.uint8) for _ in range(8)]
    encoded = [np.frombuffer(_png(i), np.uint8) for i in imgs]

    def pipeline(k):
        x = ops[4](encoded[k])
        for op in ops[:4]:
            x = op(x)
        return x
    expected = [pipeline(k) for k in range(8)]
    with ThreadPoolExecutor(4) as pool:
        for _ in range(3):
            for k, out in enumerate(pool.map(pipeline, range(8))):
                np.testing.assert_array_equal(out, expected[k])


def _png(arr):
    import io
    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, "PNG")
    return buf.getvalue()
