"""kiln.dataset.vision — MindSpore's `mindspore.dataset.vision`: image operations (decode, resize, crop, flip,
pad, rotate, normalize, layout and dtype conversion, random augmentations) on HWC NumPy arrays and PIL Images.
Decoding and resampling use Pillow; see docs/dataset_transforms.md."""
from . import transforms, utils  # noqa: F401 (re-export)
from .transforms import (CenterCrop, ConvertColor, Crop, Decode, Grayscale, HorizontalFlip, HWC2CHW,  # noqa: F401 (re-export)
                         Normalize, NormalizePad, Pad, RandomAffine, RandomColor, RandomColorAdjust, RandomCrop,
                         RandomHorizontalFlip, RandomResizedCrop, RandomRotation, RandomSelectSubpolicy,
                         RandomVerticalFlip, Rescale, Resize, Rotate, ToPIL, ToTensor, ToType, VerticalFlip)
from ._adjust_transforms import (AdjustSharpness, AutoContrast, CutOut, Equalize, Invert, Posterize,  # noqa: F401 (re-export)
                                 RandomAutoContrast, RandomCropDecodeResize, RandomEqualize, RandomInvert,
                                 RandomPosterize, RandomSharpness, RandomSolarize, Solarize)
from .utils import Border, ConvertMode, ImageBatchFormat, Inter  # noqa: F401 (re-export)
