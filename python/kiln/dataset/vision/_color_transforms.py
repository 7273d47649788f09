"""Colour operations of kiln.dataset.vision: Grayscale (PIL) and ConvertColor (OpenCV's cvtColor rules)."""
import numpy as np

from ..transforms._base import PyTensorOperation, TensorOperation, check_type, is_pil
from .utils import ConvertMode

class Grayscale(PyTensorOperation):
    """PIL Image -> grayscale PIL Image ('L', or 'RGB' with three equal channels when `num_output_channels` is 3).

    PIL input only, as MindSpore (TypeError for arrays: use ToPIL first). Luma = Pillow's ITU-R 601-2
    (R*299 + G*587 + B*114) / 1000."""

    def __init__(self, num_output_channels=1):
        check_type(num_output_channels, (int,), "num_output_channels")
        if num_output_channels not in (1, 3):
            raise ValueError(f"Number of channels of the output grayscale image should be either 1 or 3. "
                             f"Got {num_output_channels}.")
        self.num_output_channels = num_output_channels

    def __call__(self, img):
        if not is_pil(img):
            raise TypeError(f"img should be PIL image. Got {type(img)}. Use Decode() for encoded data or ToPIL() "
                            "for decoded data.")
        gray = img.convert("L")
        return gray if self.num_output_channels == 1 else gray.convert("RGB")


_ORDERS = {ConvertMode.COLOR_BGR2RGB: ([2, 1, 0], 3, False), ConvertMode.COLOR_BGRA2BGR: ([0, 1, 2], 4, False),
           ConvertMode.COLOR_RGBA2BGR: ([2, 1, 0], 4, False), ConvertMode.COLOR_BGRA2RGBA: ([2, 1, 0, 3], 4, False),
           ConvertMode.COLOR_BGR2BGRA: ([0, 1, 2], 3, True), ConvertMode.COLOR_BGR2RGBA: ([2, 1, 0], 3, True)}


def _gray_from(img, r, g, b):
    """OpenCV 4's cvtColor luma: uint8 in 15-bit fixed point ((R*9798 + G*19235 + B*3735 + 2**14) >> 15), floats
    0.299R + 0.587G + 0.114B."""
    if img.dtype == np.uint8:
        x = img.astype(np.int32)
        return ((x[..., r] * 9798 + x[..., g] * 19235 + x[..., b] * 3735 + 16384) >> 15).astype(np.uint8)
    x = img.astype(np.float64)
    return (0.299 * x[..., r] + 0.587 * x[..., g] + 0.114 * x[..., b]).astype(img.dtype)


class ConvertColor(TensorOperation):
    """Converts between colour spaces (`ConvertMode`: channel reorders, adding/dropping alpha, to/from gray)
    with OpenCV's cvtColor rules, on uint8 or float HWC arrays (alpha added = 255 for uint8, 1.0 for floats).

    Raises RuntimeError when the image's channel count does not fit the mode."""

    def __init__(self, convert_mode):
        check_type(convert_mode, (ConvertMode,), "convert_mode")
        self.convert_mode = ConvertMode(convert_mode)

    def _execute(self, img):
        mode = self.convert_mode
        gray_in = mode in (ConvertMode.COLOR_GRAY2BGR, ConvertMode.COLOR_GRAY2BGRA)
        channels = 1 if gray_in else (4 if mode in (ConvertMode.COLOR_BGRA2GRAY, ConvertMode.COLOR_RGBA2GRAY)
                                      else _ORDERS[mode][1] if mode in _ORDERS else 3)
        have = 1 if img.ndim == 2 else (img.shape[2] if img.ndim == 3 else -1)
        if have != channels:
            raise RuntimeError(f"ConvertColor: {mode.name} expects an image of {channels} channel(s) "
                               f"(<H,W,{channels}>), but got shape {img.shape}.")
        alpha = 255 if img.dtype == np.uint8 else 1
        if gray_in:
            g = img.reshape(img.shape[:2])
            out = [g, g, g] + ([np.full_like(g, alpha)] if mode == ConvertMode.COLOR_GRAY2BGRA else [])
            return np.stack(out, axis=2)
        if mode in (ConvertMode.COLOR_BGR2GRAY, ConvertMode.COLOR_BGRA2GRAY):
            return _gray_from(img, 2, 1, 0)
        if mode in (ConvertMode.COLOR_RGB2GRAY, ConvertMode.COLOR_RGBA2GRAY):
            return _gray_from(img, 0, 1, 2)
        order, _, add_alpha = _ORDERS[mode]
        out = img[:, :, order]
        if add_alpha:
            out = np.concatenate([out, np.full(img.shape[:2] + (1,), alpha, img.dtype)], axis=2)
        return np.ascontiguousarray(out)
