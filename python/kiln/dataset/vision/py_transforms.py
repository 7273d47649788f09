"""MindSpore 1.x's deprecated `mindspore.dataset.vision.py_transforms`: the Python (PIL Image) operations.

Most are `kiln.dataset.vision`'s classes, which take PIL Images and return PIL Images where 1.x did. Two differ
in 1.x and are defined here: `Decode` returns a PIL Image, and `Normalize` works on CHW float arrays (the output of
`ToTensor`), with mean/std per channel."""
from . import transforms as _t
from .transforms import (CenterCrop, Grayscale, HWC2CHW, Pad, RandomColorAdjust, RandomCrop,
                         RandomHorizontalFlip, RandomResizedCrop, RandomRotation, RandomVerticalFlip, Resize, ToPIL,
                         ToTensor, ToType)
from .utils import Border, Inter

__all__ = ["CenterCrop", "Decode", "Grayscale", "HWC2CHW", "Normalize", "Pad", "RandomColorAdjust", "RandomCrop",
           "RandomHorizontalFlip", "RandomResizedCrop", "RandomRotation", "RandomVerticalFlip", "Resize", "ToPIL",
           "ToTensor", "ToType", "Border", "Inter"]


class Decode(_t.Decode):
    """Encoded image bytes (1-D uint8 array or bytes) -> RGB PIL Image (1.x `py_transforms.Decode`).

    Raises TypeError for input that is not 1-D, ValueError for undecodable data."""

    def __init__(self):
        super().__init__(to_pil=True)


class Normalize(_t.Normalize):
    """`(img - mean) / std` per channel of a CHW float array (1.x `py_transforms.Normalize`, applied after
    `ToTensor`), float32 out. Raises RuntimeError when the channel count differs from len(mean)."""

    def __init__(self, mean, std):
        super().__init__(mean, std, is_hwc=False)
