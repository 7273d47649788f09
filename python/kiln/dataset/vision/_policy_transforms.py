"""RandomSelectSubpolicy and RandomColor of kiln.dataset.vision (tutorial dataset/augment.md). They draw from
`_random._rng()` (seeded by `kiln.dataset.config.set_seed`)."""
import numbers

import numpy as np

from ..transforms._base import TensorOperation, check_range
from ..transforms.transforms import _apply, _input_row, _result
from ._random import _rng


class RandomSelectSubpolicy(TensorOperation):
    """Picks one sub-policy uniformly at random and runs its (operation, prob) pairs in order, each with its
    probability (MindSpore's random_select_subpolicy_op: a uniform policy index, then a U[0, 1) draw per pair).

    Args:
        policy (list[list[tuple[op, float]]]): the sub-policies; each a non-empty list of (operation or Python
            callable, probability in [0, 1]) pairs.

    Raises (MindSpore's words):
        TypeError: policy or a sub-policy not a list, an operation that is not callable.
        ValueError: an empty policy or sub-policy, a pair that is not a 2-tuple, a probability outside [0, 1].
    """
    _num_inputs = None

    def __init__(self, policy):
        if not isinstance(policy, list):
            raise TypeError(f"Argument policy with value {policy} is not of type [<class 'list'>], but got "
                            f"{type(policy)}.")
        if not policy:
            raise ValueError("policy can not be empty.")
        for i, sub in enumerate(policy):
            if not isinstance(sub, list):
                raise TypeError(f"Argument policy[[{i}]] with value {sub} is not of type [<class 'list'>], but got "
                                f"{type(sub)}.")
            if not sub:
                raise ValueError(f"policy[{i}] can not be empty.")
            for j, pair in enumerate(sub):
                if not isinstance(pair, tuple) or len(pair) != 2:
                    raise ValueError(f"Value policy[{i}][{j}] needs to be a 2-tuple.")
                op, prob = pair
                if not callable(op):
                    raise TypeError(f"op of (op, prob) in policy[{i}][{j}] is neither a transforms op "
                                    "(TensorOperation) nor a callable pyfunc.")
                if not isinstance(prob, numbers.Real) or isinstance(prob, bool):
                    raise TypeError(f"prob of (op, prob) policy[{i}][{j}] must be a number, but got {prob!r}.")
                if not 0 <= prob <= 1:
                    raise ValueError(f"Input prob of (op, prob) policy[{i}][{j}] is not within the required "
                                     "interval of [0, 1].")
        self.policy = [[(op, float(prob)) for op, prob in sub] for sub in policy]

    def __call__(self, *args):
        rng = _rng()
        sub = self.policy[int(rng.integers(len(self.policy)))]
        row = _input_row(args)
        for op, prob in sub:
            if rng.random() < prob:
                row = _apply([op], row)
        return _result(row)


def _gray_u8(img):
    """OpenCV's COLOR_RGB2GRAY of a uint8 HWC RGB array: 15-bit fixed point (R*9798 + G*19235 + B*3735 + 2^14)
    >> 15 (cv::cvtColor's 8-bit path, which MindSpore's RandomColor calls)."""
    r, g, b = (img[..., k].astype(np.int32) for k in range(3))
    return ((r * 9798 + g * 19235 + b * 3735 + (1 << 14)) >> 15).astype(np.uint8)


def blend_with_gray(img, t):
    """MindSpore's RandomColor for one factor t: the image blended with its grayscale version, out = img*t +
    gray*(1-t), as cv::addWeighted computes it for uint8 (float32 weights, a fused multiply-add, rounding to
    nearest even, saturation to 0..255). |t - 1| < 0.00195 returns the image, |t| < 0.00195 the gray image."""
    eps = 0.00195
    if abs(t - 1.0) < eps:
        return img
    gray = _gray_u8(img)
    if abs(t) < eps:
        return np.repeat(gray[..., None], 3, axis=2)
    alpha = np.float32(t)
    beta = np.float32(np.float32(1) - alpha)
    inner = (gray.astype(np.float64) * np.float64(beta)).astype(np.float32)  # gray*beta + 0, rounded to float32
    out = (img.astype(np.float64) * np.float64(alpha) + inner[..., None]).astype(np.float32)  # fma, one rounding
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


class RandomColor(TensorOperation):
    """Blends the image with its grayscale version by a factor t drawn from U[degrees[0], degrees[1]] (t = 1: the
    image, 0: gray, above 1: more saturated), MindSpore's RandomColor (random_color_op.cc; see blend_with_gray).

    Input: uint8 HWC RGB array (3 channels) or a PIL Image (RGB; returned as a PIL Image).

    Args:
        degrees (tuple[float, float]): the range of t, 0 <= min <= max <= 16777216. Default (0.1, 1.9).

    Raises:
        TypeError: degrees not a list/tuple. ValueError: not of length 2, out of range, or (max, min).
        RuntimeError (when called): not an HWC image with 3 channels, or not uint8.
    """

    def __init__(self, degrees=(0.1, 1.9)):
        if not isinstance(degrees, (list, tuple)):
            raise TypeError("degrees must be either a tuple or a list.")
        if len(degrees) != 2:
            raise ValueError("degrees must be a sequence with length 2.")
        for d in degrees:
            if not isinstance(d, numbers.Real) or isinstance(d, bool):
                raise TypeError(f"degrees must be a sequence of numbers, but got {degrees!r}.")
            check_range(d, 0, 16777216, "degrees")
        if degrees[0] > degrees[1]:
            raise ValueError("degrees should be in (min,max) format. Got (max,min).")
        self.degrees = (float(degrees[0]), float(degrees[1]))

    def _execute_pil(self, img):
        from PIL import Image
        return Image.fromarray(self._execute(np.asarray(img.convert("RGB"))))

    def _execute(self, img):
        if img.ndim != 3 or img.shape[2] != 3:
            raise RuntimeError(f"RandomColor: image shape is not <H,W,C> or channel is not 3, got shape "
                               f"{img.shape}.")
        if img.dtype != np.uint8:
            raise RuntimeError(f"RandomColor: the image must be uint8, but got {img.dtype}.")
        t = float(np.float32(_rng().uniform(*self.degrees)))
        return np.ascontiguousarray(blend_with_gray(img, t))



