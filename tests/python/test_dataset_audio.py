"""kiln.dataset.audio.BassBiquad (tutorial dataset/eager.md), checked against MindSpore 2.10: a float64 NumPy
reference of the cookbook low-shelf filter (MindSpore's float32 outputs agree with it within 1e-5), clamping to
[-1, 1] after the recursion (MindSpore's values on a loud input equal the clamped reference exactly) and MindSpore's
argument errors."""
import math

import numpy as np
import pytest

import kiln.dataset as ds
from kiln.dataset import audio


def _reference(x, sr, gain, f0=100.0, q=0.707):
    w0 = 2 * math.pi * f0 / sr
    alpha = math.sin(w0) / 2 / q
    a_ = 10 ** (gain / 40)
    t1, t2, t3 = 2 * math.sqrt(a_) * alpha, (a_ - 1) * math.cos(w0), (a_ + 1) * math.cos(w0)
    b = np.array([a_ * ((a_ + 1) - t2 + t1), 2 * a_ * ((a_ - 1) - t3), a_ * ((a_ + 1) - t2 - t1)])
    a = np.array([(a_ + 1) + t2 + t1, -2 * ((a_ - 1) + t3), (a_ + 1) + t2 - t1])
    b, a = b / a[0], a / a[0]
    flat = x.reshape(-1, x.shape[-1]).astype(np.float64)
    y = np.zeros_like(flat)
    for i in range(flat.shape[1]):
        y[:, i] = b[0] * flat[:, i]
        if i >= 1:
            y[:, i] += b[1] * flat[:, i - 1] - a[1] * y[:, i - 1]
        if i >= 2:
            y[:, i] += b[2] * flat[:, i - 2] - a[2] * y[:, i - 2]
    return np.clip(y, -1, 1).reshape(x.shape)


def test_bass_biquad_values():
    rng = np.random.default_rng(0)
    x = rng.uniform(-0.3, 0.3, 200).astype(np.float32)
    out = audio.BassBiquad(16000, 10.0)(x)
    assert out.dtype == np.float32 and out.shape == (200,)
    np.testing.assert_allclose(out, _reference(x, 16000, 10.0), atol=1e-5)
    # MindSpore 2.10's first outputs for this input
    np.testing.assert_allclose(out[:4], [0.08351944, -0.13767998, -0.28171915, -0.3057192], atol=1e-6)
    x2 = rng.uniform(-0.9, 0.9, (2, 100)).astype(np.float32)
    np.testing.assert_allclose(audio.BassBiquad(8000, -5.0)(x2), _reference(x2, 8000, -5.0), atol=1e-5)
    loud = (rng.uniform(-1, 1, 300) * 16000).astype(np.float32)  # the tutorial's int16 scale: clamped after
    np.testing.assert_array_equal(audio.BassBiquad(16000, 10.0)(loud), _reference(loud, 16000, 10.0))
    assert audio.BassBiquad(16000, 10.0)(np.array([0.1, 0.2])).dtype == np.float64
    assert audio.transforms.BassBiquad is audio.BassBiquad


def test_bass_biquad_in_a_pipeline():
    x = np.random.default_rng(1).uniform(-0.5, 0.5, (3, 50)).astype(np.float32)
    d = ds.NumpySlicesDataset({"w": x}, shuffle=False).map(audio.BassBiquad(16000, 3.0, 200.0, 0.5), input_columns="w")
    got = np.stack([r[0] for r in d.create_tuple_iterator(output_numpy=True)])
    np.testing.assert_allclose(got, _reference(x, 16000, 3.0, 200.0, 0.5), atol=1e-5)


def test_bass_biquad_errors():  # MindSpore 2.10's words
    with pytest.raises(ValueError, match=r"Input sample_rate is not within the required interval of "
                                         r"\[-2147483648, 0\) and \(0, 2147483647\]."):
        audio.BassBiquad(0, 1.0)
    with pytest.raises(ValueError, match=r"Input Q is not within the required interval of \(0, 1\]."):
        audio.BassBiquad(16000, 1.0, 100, 0)
    with pytest.raises(TypeError, match="Argument sample_rate with value 16000.5 is not of type"):
        audio.BassBiquad(16000.5, 1.0)
    with pytest.raises(TypeError, match="Argument gain with value a is not of type"):
        audio.BassBiquad(16000, "a")
    with pytest.raises(RuntimeError, match=r"Expecting tensor in type of \[float, double\]. But got type int16."):
        audio.BassBiquad(16000, 1.0)(np.array([1, 2], np.int16))


@pytest.mark.parametrize("shape", [(0,), (2, 0), (0, 5)])
def test_bass_biquad_empty_waveform_raises_naming_the_op(shape):
    # MindSpore 2.10: "Input Tensor has no data." (Kiln raised NumPy's "cannot reshape array of size 0")
    with pytest.raises(RuntimeError, match=r"BassBiquad: Input Tensor has no data"):
        audio.BassBiquad(16000, 3.0)(np.zeros(shape, np.float32))
