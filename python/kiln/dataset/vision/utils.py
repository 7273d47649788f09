"""MindSpore's `mindspore.dataset.vision.utils` enums: `Inter`, `Border`, `ImageBatchFormat`, `ConvertMode`."""
import enum

__all__ = ["Border", "ConvertMode", "ImageBatchFormat", "Inter"]


class Inter(enum.IntEnum):
    """Interpolation modes (MindSpore's values).

    NEAREST: nearest neighbour (OpenCV's rule: source index floor(x * in / out)).
    ANTIALIAS: Pillow's LANCZOS; PIL Image input only, as in MindSpore.
    LINEAR / BILINEAR: bilinear, half-pixel centres, no antialiasing (OpenCV INTER_LINEAR).
    CUBIC / BICUBIC: bicubic convolution with a = -0.75, no antialiasing (OpenCV INTER_CUBIC).
    AREA: pixel-area averaging (OpenCV INTER_AREA).
    PILCUBIC: Pillow's antialiased bicubic (a = -0.5)."""
    NEAREST = 0
    ANTIALIAS = 1
    BILINEAR = LINEAR = 2
    BICUBIC = CUBIC = 3
    AREA = 4
    PILCUBIC = 5


class Border(str, enum.Enum):
    """Padding modes: CONSTANT (fill value), EDGE (repeat the last pixel), REFLECT (mirror without the edge pixel:
    NumPy "reflect", OpenCV BORDER_REFLECT_101), SYMMETRIC (mirror with the edge pixel: NumPy "symmetric")."""
    CONSTANT = "constant"
    EDGE = "edge"
    REFLECT = "reflect"
    SYMMETRIC = "symmetric"

    def __str__(self):  # pylint: disable=invalid-str-returned
        return self.value


class ImageBatchFormat(enum.IntEnum):
    """Layout of an image batch: NHWC or NCHW."""
    NHWC = 0
    NCHW = 1


class ConvertMode(enum.IntEnum):
    """Colour conversions of `ConvertColor` (OpenCV's cvtColor codes, as MindSpore names them)."""
    COLOR_BGR2BGRA = 0
    COLOR_RGB2RGBA = 0
    COLOR_BGRA2BGR = 1
    COLOR_RGBA2RGB = 1
    COLOR_BGR2RGBA = 2
    COLOR_RGB2BGRA = 2
    COLOR_RGBA2BGR = 3
    COLOR_BGRA2RGB = 3
    COLOR_BGR2RGB = 4
    COLOR_RGB2BGR = 4
    COLOR_BGRA2RGBA = 5
    COLOR_RGBA2BGRA = 5
    COLOR_BGR2GRAY = 6
    COLOR_RGB2GRAY = 7
    COLOR_GRAY2BGR = 8
    COLOR_GRAY2RGB = 8
    COLOR_GRAY2BGRA = 9
    COLOR_GRAY2RGBA = 9
    COLOR_BGRA2GRAY = 10
    COLOR_RGBA2GRAY = 11
