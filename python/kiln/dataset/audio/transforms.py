"""MindSpore's `mindspore.dataset.audio.transforms`, the part the tutorials use: `BassBiquad` (tutorial
dataset/eager.md). Semantics checked against MindSpore 2.10 (tests/python/test_dataset_audio.py)."""
import math
import numbers

import numpy as np

from ..transforms._base import TensorOperation

_INT32_MIN, _INT32_MAX = -2**31, 2**31 - 1


def _check_real(value, name):
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise TypeError(f"Argument {name} with value {value} is not of type [<class 'float'>, <class 'int'>], but "
                        f"got {type(value)}.")
    return float(value)


def biquad_filter(waveform, b, a, op):
    """y = lfilter(b, a, x) along the last axis (direct form, zero initial state, recursion on the unclamped
    values in float64), then clamped to [-1, 1] and cast back to the input's dtype: MindSpore's LFilter as its
    biquad operations call it (clamp=True). `waveform` must be a non-empty float32/float64 array of at least one
    axis (RuntimeError naming `op`)."""
    if waveform.dtype not in (np.float32, np.float64):
        raise RuntimeError(f"{op}: the data type of input tensor does not match the requirement of operator. "
                           f"Expecting tensor in type of [float, double]. But got type {waveform.dtype}.")
    if waveform.ndim < 1:
        raise RuntimeError(f"{op}: the shape of input tensor does not match the requirement of operator. "
                           f"Expecting tensor in shape of <..., time>. But got a scalar.")
    if waveform.size == 0:  # MindSpore 2.10: "Input Tensor has no data." (reshape(-1, 0) raised NumPy's ValueError)
        raise RuntimeError(f"{op}: Input Tensor has no data, got shape {waveform.shape}.")
    b0, b1, b2 = (v / a[0] for v in b)
    a1, a2 = a[1] / a[0], a[2] / a[0]
    flat = waveform.reshape(-1, waveform.shape[-1]).astype(np.float64)
    out = np.empty_like(flat)
    for c in range(flat.shape[0]):
        x1 = x2 = y1 = y2 = 0.0
        row = []
        for xi in flat[c].tolist():
            yi = b0 * xi + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2
            row.append(yi)
            x2, x1, y2, y1 = x1, xi, y1, yi
        out[c] = row
    return np.clip(out, -1.0, 1.0).astype(waveform.dtype).reshape(waveform.shape)


class BassBiquad(TensorOperation):
    """A two-pole low-shelf ("bass") filter on a waveform (..., time): the Audio EQ Cookbook's low shelf (as SoX
    and torchaudio's bass_biquad), w0 = 2 pi central_freq / sample_rate, alpha = sin(w0) / (2 Q),
    A = 10^(gain / 40); output clamped to [-1, 1] (MindSpore's BassBiquad).

    Args:
        sample_rate (int): sampling rate in Hz, nonzero int32.
        gain (float): boost (> 0) or cut (< 0) in dB at 0 Hz.
        central_freq (float): the shelf's central frequency in Hz. Default 100.0.
        Q (float): quality factor in (0, 1]. Default 0.707.

    Input: float32/float64 array (..., time); output of the same shape and dtype.

    Raises (MindSpore's words):
        TypeError: sample_rate not an int; gain, central_freq or Q not a number.
        ValueError: sample_rate 0 or outside int32; Q outside (0, 1].
        RuntimeError (when called): an integer waveform, a scalar, an empty waveform.
    """

    def __init__(self, sample_rate, gain, central_freq=100.0, Q=0.707):
        if not isinstance(sample_rate, int) or isinstance(sample_rate, bool):
            raise TypeError(f"Argument sample_rate with value {sample_rate} is not of type [<class 'int'>], but got "
                            f"{type(sample_rate)}.")
        if sample_rate == 0 or not _INT32_MIN <= sample_rate <= _INT32_MAX:
            raise ValueError(f"Input sample_rate is not within the required interval of [{_INT32_MIN}, 0) and "
                             f"(0, {_INT32_MAX}].")
        self.sample_rate = sample_rate
        self.gain = _check_real(gain, "gain")
        self.central_freq = _check_real(central_freq, "central_freq")
        self.Q = _check_real(Q, "Q")
        if not 0 < self.Q <= 1:
            raise ValueError("Input Q is not within the required interval of (0, 1].")

    def coefficients(self):
        """(b, a): the filter's [b0, b1, b2] and [a0, a1, a2] (not normalized)."""
        w0 = 2 * math.pi * self.central_freq / self.sample_rate
        alpha = math.sin(w0) / 2 / self.Q
        amp = math.exp(self.gain / 40 * math.log(10))
        t1, t2, t3 = 2 * math.sqrt(amp) * alpha, (amp - 1) * math.cos(w0), (amp + 1) * math.cos(w0)
        b = [amp * ((amp + 1) - t2 + t1), 2 * amp * ((amp - 1) - t3), amp * ((amp + 1) - t2 - t1)]
        a = [(amp + 1) + t2 + t1, -2 * ((amp - 1) + t3), (amp + 1) + t2 - t1]
        return b, a

    def _execute(self, waveform):
        return biquad_filter(waveform, *self.coefficients(), "BassBiquad")


__all__ = ["BassBiquad"]
