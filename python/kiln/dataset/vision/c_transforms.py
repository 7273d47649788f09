"""MindSpore 1.x's deprecated `mindspore.dataset.vision.c_transforms`: the same operations as
`kiln.dataset.vision` (MindSpore 2.x merged the C++ operations into `vision.transforms` unchanged)."""
from .transforms import (CenterCrop, ConvertColor, Crop, Decode, HorizontalFlip, HWC2CHW, Normalize,
                         NormalizePad, Pad, RandomColorAdjust, RandomCrop, RandomHorizontalFlip, RandomResizedCrop,
                         RandomRotation, RandomVerticalFlip, Rescale, Resize, Rotate, VerticalFlip)
from .utils import Border, ConvertMode, ImageBatchFormat, Inter

__all__ = ["CenterCrop", "ConvertColor", "Crop", "Decode", "HorizontalFlip", "HWC2CHW", "Normalize", "NormalizePad",
           "Pad", "RandomColorAdjust", "RandomCrop", "RandomHorizontalFlip", "RandomResizedCrop", "RandomRotation",
           "RandomVerticalFlip", "Rescale", "Resize", "Rotate", "VerticalFlip", "Border", "ConvertMode",
           "ImageBatchFormat", "Inter"]
