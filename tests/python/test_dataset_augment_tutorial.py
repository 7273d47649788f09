"""Features of the tutorial dataset/augment.md: vision.RandomSelectSubpolicy, vision.RandomColor and
Dataset.sync_wait / sync_update. Expected values are MindSpore 2.10's (CPU build) on the same inputs, checked with
NumPy."""
import collections
import logging

import numpy as np
import pytest

import kiln.dataset as ds
from kiln.dataset import vision
from kiln.dataset.vision._policy_transforms import blend_with_gray


def _img(seed=1, shape=(64, 64, 3)):
    return np.random.default_rng(seed).integers(0, 256, shape, dtype=np.uint8)


# ---------------------------------------------------------------------------------------------- RandomColor
def _reference(img, t):
    """MindSpore's RandomColor for factor t, written out: OpenCV's 15-bit gray, then cv::addWeighted (float32
    weights, fused multiply-add, round half to even)."""
    r, g, b = (img[..., k].astype(np.int64) for k in range(3))
    gray = (r * 9798 + g * 19235 + b * 3735 + (1 << 14)) >> 15
    alpha, beta = np.float32(t), np.float32(1 - np.float32(t))
    inner = (gray * np.float64(beta)).astype(np.float32)
    return np.clip(np.rint((img * np.float64(alpha) + inner[..., None]).astype(np.float32)), 0, 255)


def test_random_color_matches_mindspore_values():
    img = _img(0, (4, 5, 3))
    out = vision.RandomColor((0.5, 0.5))(img)
    assert out.dtype == np.uint8 and out.shape == (4, 5, 3)
    # MindSpore 2.10's first row for this image and factor 0.5
    assert out[0].tolist() == [[111, 128, 160], [215, 210, 224], [60, 134, 68], [210, 212, 168], [218, 188, 102]]
    img = _img(1)
    for t in (0.1, 0.5, 0.73, 1.5, 1.9):  # MindSpore 2.10 gives _reference exactly (0 differing values)
        np.testing.assert_array_equal(vision.RandomColor((t, t))(img), _reference(img, t))
    gray = blend_with_gray(img, 0.0)  # t = 0: the gray image in 3 channels
    np.testing.assert_array_equal(gray[..., 0], gray[..., 2])
    assert blend_with_gray(img, 1.0) is img


def test_random_color_draws_in_range_and_pil_and_errors():
    from PIL import Image
    img = _img(2, (8, 8, 3))
    lo, hi = blend_with_gray(img, 0.2).astype(int), blend_with_gray(img, 0.4).astype(int)
    ds.config.set_seed(0)
    out = vision.RandomColor((0.2, 0.4))(img).astype(int)
    assert ((out >= np.minimum(lo, hi) - 1) & (out <= np.maximum(lo, hi) + 1)).all()
    assert isinstance(vision.RandomColor((0.5, 0.5))(Image.fromarray(img)), Image.Image)  # as MindSpore
    with pytest.raises(ValueError, match=r"degrees should be in \(min,max\) format. Got \(max,min\)."):
        vision.RandomColor((2, 1))
    with pytest.raises(TypeError, match="degrees must be either a tuple or a list."):
        vision.RandomColor(3)
    with pytest.raises(ValueError, match="degrees must be a sequence with length 2."):
        vision.RandomColor((1,))
    with pytest.raises(ValueError, match=r"not within the required interval of \[0, 16777216\]"):
        vision.RandomColor((-1, 1))
    with pytest.raises(RuntimeError, match="image shape is not <H,W,C> or channel is not 3"):
        vision.RandomColor()(img[..., 0])


# ------------------------------------------------------------------------------------ RandomSelectSubpolicy
def test_random_select_subpolicy_picks_one_policy_and_applies_with_prob():
    img = _img(3, (4, 5, 3))
    ds.config.set_seed(0)
    p = vision.RandomSelectSubpolicy([[(vision.VerticalFlip(), 1.0)], [(vision.HorizontalFlip(), 1.0)]])
    kinds = collections.Counter("v" if (o == img[::-1]).all() else "h" if (o == img[:, ::-1]).all() else "?"
                                for o in (p(img) for _ in range(400)))
    assert set(kinds) == {"v", "h"} and 150 < kinds["v"] < 250  # MindSpore 2.10: {'h': 103, 'v': 97} of 200
    p = vision.RandomSelectSubpolicy([[(vision.VerticalFlip(), 0.3)]])
    flipped = sum(not (p(img) == img).all() for _ in range(2000))
    assert 500 < flipped < 700  # MindSpore 2.10: 307 of 1000
    both = vision.RandomSelectSubpolicy([[(vision.HorizontalFlip(), 1.0), (vision.VerticalFlip(), 1.0)]])
    d = ds.NumpySlicesDataset({"a": img[None]}, shuffle=False).map(both, input_columns="a")
    np.testing.assert_array_equal(next(d.create_tuple_iterator(output_numpy=True))[0], img[::-1, ::-1])
    assert vision.RandomSelectSubpolicy([[(lambda x: x + 1, 1.0)]])(img)[0, 0].tolist() == (img[0, 0] + 1).tolist()


@pytest.mark.parametrize("policy, exc, message", [  # MindSpore 2.10's errors
    ([], ValueError, "policy can not be empty."),
    ([[]], ValueError, r"policy\[0\] can not be empty."),
    ([[(vision.VerticalFlip(), 1.5)]], ValueError,
     r"Input prob of \(op, prob\) policy\[0\]\[0\] is not within the required interval of \[0, 1\]."),
    ([[(vision.VerticalFlip(),)]], ValueError, r"Value policy\[0\]\[0\] needs to be a 2-tuple."),
    ([(vision.VerticalFlip(), 0.5)], TypeError, r"Argument policy\[\[0\]\] with value .* is not of type"),
    ([[(1, 0.5)]], TypeError, r"op of \(op, prob\) in policy\[0\]\[0\] is neither a transforms op"),
    ("x", TypeError, "Argument policy with value x is not of type"),
])
def test_random_select_subpolicy_errors(policy, exc, message):
    with pytest.raises(exc, match=message):
        vision.RandomSelectSubpolicy(policy)


# ------------------------------------------------------------------------------------ sync_wait / sync_update
class _Augment:  # the tutorial's
    def __init__(self):
        self.ep_num = 0
        self.step_num = 0

    def preprocess(self, input_):
        return np.array((input_ + self.step_num ** self.ep_num - 1),)

    def update(self, data):
        self.ep_num = data["ep_num"]
        self.step_num = data["step_num"]


def test_sync_wait_tutorial_values():
    dataset = ds.NumpySlicesDataset(list(range(1, 4)), shuffle=False)
    aug = _Augment()
    dataset = dataset.sync_wait(condition_name="policy", callback=aug.update)
    dataset = dataset.map(operations=[aug.preprocess])
    itr = dataset.create_tuple_iterator(num_epochs=5, output_numpy=True)
    seen, step = [], 0
    for ep in range(5):
        for data in itr:
            seen.append(int(data[0]))
            step += 1
            dataset.sync_update(condition_name="policy", data={"ep_num": ep, "step_num": step})
    # MindSpore 2.10 prints these 15 values
    assert seen == [1, 2, 3, 1, 5, 7, 6, 50, 66, 81, 1001, 1333, 1728, 28562, 38418]


def test_sync_wait_counts_batches_and_calls_back():
    calls = []
    d = ds.NumpySlicesDataset(list(range(8)), shuffle=False).sync_wait("c", num_batch=1, callback=calls.append)
    d = d.batch(2)
    out = []
    for x in d.create_tuple_iterator(num_epochs=1, output_numpy=True):
        out.append(x[0].tolist())
        d.sync_update("c", data=len(out))
    assert out == [[0, 1], [2, 3], [4, 5], [6, 7]] and calls == [1, 2, 3, 4]  # MindSpore 2.10
    d = ds.NumpySlicesDataset(list(range(4)), shuffle=False).sync_wait("c", num_batch=2)
    assert d.get_dataset_size() == 4 and d.get_col_names() == ["column_0"]


def test_sync_wait_times_out_and_opens(caplog):
    ds.config.set_callback_timeout(1)
    try:
        d = ds.NumpySlicesDataset(list(range(3)), shuffle=False).sync_wait("c")
        with caplog.at_level(logging.WARNING, logger="kiln.dataset"):
            assert [int(x[0]) for x in d.create_tuple_iterator(output_numpy=True, num_epochs=1)] == [0, 1, 2]
        assert "Timeout happened in sync_wait" in caplog.text
    finally:
        ds.config.set_callback_timeout(60)
    assert ds.config.get_callback_timeout() == 60


def test_sync_errors():  # MindSpore 2.10's errors
    d = ds.NumpySlicesDataset([1, 2], shuffle=False).sync_wait("c")
    with pytest.raises(RuntimeError, match="Condition name not found."):
        d.sync_update("nope")
    with pytest.raises(RuntimeError, match="Sync_update batch size can only be positive integer, got: 0."):
        d.sync_update("c", num_batch=0)
    with pytest.raises(TypeError, match="Argument condition_name with value 3 is not of type str"):
        d.sync_update(3)
    with pytest.raises(RuntimeError, match="No shuffle after sync operators."):
        d.shuffle(2)
    with pytest.raises(RuntimeError, match="Condition name is already in use."):
        d.sync_wait("c")
    with pytest.raises(ValueError, match="num_batch need to be greater than 0."):
        ds.NumpySlicesDataset([1], shuffle=False).sync_wait("x", num_batch=0)
    with pytest.raises(TypeError, match="Argument condition_name with value 1 is not of type"):
        ds.NumpySlicesDataset([1], shuffle=False).sync_wait(1)


# ------------------------------------------------------------------------------------------------ RandomAffine
def _affine_img():
    return (np.arange(7 * 8 * 3).reshape(7, 8, 3) * 5 % 256).astype(np.uint8)


def test_random_affine_nearest_matches_mindspore_pixel_for_pixel():
    img = _affine_img()
    out = vision.RandomAffine(degrees=(30, 30))(img)
    assert out.shape == img.shape and out.dtype == np.uint8
    # MindSpore 2.10's output (channel 0)
    assert out[..., 0].tolist() == [[0, 240, 135, 150, 30, 45, 0, 0], [0, 104, 255, 14, 165, 180, 75, 90],
                                    [224, 119, 134, 29, 29, 180, 195, 90], [88, 239, 254, 149, 164, 59, 74, 225],
                                    [223, 118, 133, 28, 28, 179, 194, 89], [223, 238, 133, 148, 43, 58, 209, 0],
                                    [0, 0, 12, 27, 163, 178, 73, 0]]
    out = vision.RandomAffine(degrees=(17, 17), translate=(0.1, 0.1, 0.05, 0.05), scale=(0.8, 0.8),
                              shear=(5, 5, 7, 7), fill_value=(10, 20, 30))(img)
    assert out[..., 1].tolist() == [[20, 20, 20, 20, 20, 20, 20, 20], [20, 20, 125, 20, 35, 50, 65, 20],
                                    [20, 20, 245, 4, 170, 185, 200, 215], [20, 20, 124, 139, 154, 49, 64, 94],
                                    [20, 93, 244, 3, 18, 48, 199, 214], [20, 213, 243, 138, 153, 168, 183, 78],
                                    [20, 20, 20, 20, 17, 47, 62, 20]]
    ident = vision.RandomAffine(degrees=0)(img)
    np.testing.assert_array_equal(ident, img)


def test_random_affine_draws_and_pipeline():
    img = _affine_img()
    ds.config.set_seed(1)
    a = vision.RandomAffine(degrees=40, translate=(-0.2, 0.2), scale=(0.9, 1.1), shear=10)
    outs = [a(img) for _ in range(3)]
    assert any(not np.array_equal(outs[0], o) for o in outs[1:])
    d = ds.NumpySlicesDataset({"image": img[None]}, shuffle=False)
    d = d.map(vision.RandomAffine(degrees=(90, 90), resample=vision.Inter.BILINEAR), input_columns="image")
    assert next(d.create_tuple_iterator(output_numpy=True))[0].shape == img.shape


@pytest.mark.parametrize("kwargs, exc, message", [  # MindSpore 2.10's errors
    (dict(degrees=-1), ValueError, r"Input degrees is not within the required interval of \[0, 16777216\]."),
    (dict(degrees=(2, 1)), ValueError, r"degrees should be in \(min,max\) format. Got \(max,min\)."),
    (dict(degrees=0, translate=(0.1,)), TypeError, "translate should be a list or tuple of length 2 or 4."),
    (dict(degrees=0, translate=(2, 2)), ValueError, r"Input translate at 0 is not within the required interval"),
    (dict(degrees=0, scale=(2, 1)), ValueError, r"Input scale\[1\] must be equal to or greater than scale\[0\]."),
    (dict(degrees=0, scale=(1,)), TypeError, "scale should be a list or tuple of length 2."),
    (dict(degrees=0, shear=(2, 1)), ValueError, r"Input shear\[1\] must be equal to or greater than shear\[0\]"),
    (dict(degrees=0, shear=-1), ValueError, "Input shear must be greater than 0."),
    (dict(degrees=0, shear=(1, 2, 3)), TypeError, "shear must be of length 2 or 4."),
    (dict(degrees=0, fill_value=(1, 2)), TypeError, "fill_value should be a single integer or a 3-tuple."),
    (dict(degrees=0, resample=1), TypeError, "Argument resample with value 1 is not of type"),
    (dict(degrees=(1, 2, 3)), TypeError, "If degrees is a sequence, the length must be 2."),
])
def test_random_affine_errors(kwargs, exc, message):
    with pytest.raises(exc, match=message):
        vision.RandomAffine(**kwargs)
