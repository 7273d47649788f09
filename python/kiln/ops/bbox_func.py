"""Bounding-box ops for detection networks (MindSpore 2.10's ops.iou, bounding_box_encode, bounding_box_decode,
check_valid and the IOU, BoundingBoxEncode, BoundingBoxDecode, CheckValid primitives), plus FloatStatus and
scalar_cast. Built from elementwise Kiln ops, so they run in Graph mode and encode/decode/iou are differentiable.

Boxes are (x1, y1, x2, y2) in pixels with inclusive corners: a box's width is x2 − x1 + 1 (MindSpore's and the R-CNN
family's convention; values checked against MindSpore 2.10 on CPU)."""
import math
import numbers

from .._loader import _core
from .._args import _got
from ..common import dtype as mstype
from .function import _tensor_arg
from .primitives import Primitive

__all__ = ["iou", "bounding_box_encode", "bounding_box_decode", "check_valid", "scalar_cast",
           "IOU", "BoundingBoxEncode", "BoundingBoxDecode", "CheckValid", "FloatStatus", "ScalarCast"]


def _boxes(x, op, name):
    x = _tensor_arg(x, op, name)
    if x.ndim != 2 or x.shape[1] not in (4, 5) or not mstype.is_float(x.dtype):
        raise ValueError(f"For '{op}', '{name}' must be a float Tensor of shape (N, 4), but got shape "
                         f"{tuple(x.shape)} and dtype {x.dtype}.")
    return x


def _col(x, i):
    return x[:, i]


def iou(anchor_boxes, gt_boxes, mode="iou"):
    """MindSpore's ops.iou(anchor_boxes, gt_boxes, mode='iou'): the (M, N) overlap of M ground-truth boxes with N
    anchors: intersection / union ('iou') or intersection / ground-truth area ('iof'). anchor_boxes (N, 4),
    gt_boxes (M, 4), float. Raises ValueError for bad shapes or mode."""
    a = _boxes(anchor_boxes, "iou", "anchor_boxes")
    g = _boxes(gt_boxes, "iou", "gt_boxes")
    if mode not in ("iou", "iof"):
        raise ValueError(f"For 'iou', 'mode' must be 'iou' or 'iof', but got {mode!r}.")
    ax1, ay1, ax2, ay2 = (_core.reshape(_col(a, i), [1, -1]) for i in range(4))  # (1, N)
    gx1, gy1, gx2, gy2 = (_core.reshape(_col(g, i), [-1, 1]) for i in range(4))  # (M, 1)
    iw = _core.maximum(_core.add(_core.sub(_core.minimum(ax2, gx2), _core.maximum(ax1, gx1)), 1.0), 0.0)
    ih = _core.maximum(_core.add(_core.sub(_core.minimum(ay2, gy2), _core.maximum(ay1, gy1)), 1.0), 0.0)
    inter = _core.mul(iw, ih)
    area_a = _core.mul(_core.add(_core.sub(ax2, ax1), 1.0), _core.add(_core.sub(ay2, ay1), 1.0))
    area_g = _core.mul(_core.add(_core.sub(gx2, gx1), 1.0), _core.add(_core.sub(gy2, gy1), 1.0))
    denom = _core.sub(_core.add(area_a, area_g), inter) if mode == "iou" else _core.broadcast_to(
        area_g, list(inter.shape))
    return _core.div(inter, denom)


def _four(v, name, op):
    if not isinstance(v, (tuple, list)) or len(v) != 4 or not all(
            isinstance(x, numbers.Real) and not isinstance(x, bool) for x in v):
        raise TypeError(f"For '{op}', '{name}' must be a tuple of 4 floats, but got {_got(v)}.")
    return tuple(float(x) for x in v)


def _centres(b):
    x1, y1, x2, y2 = (_col(b, i) for i in range(4))
    w = _core.add(_core.sub(x2, x1), 1.0)
    h = _core.add(_core.sub(y2, y1), 1.0)
    return _core.add(x1, _core.mul(w, 0.5)), _core.add(y1, _core.mul(h, 0.5)), w, h


def bounding_box_encode(anchor_box, groundtruth_box, means=(0.0, 0.0, 0.0, 0.0), stds=(1.0, 1.0, 1.0, 1.0)):
    """MindSpore's ops.bounding_box_encode: the (N, 4) deltas taking each anchor to its ground-truth box:
    ((gx − px)/pw, (gy − py)/ph, log(gw/pw), log(gh/ph)), each normalized as (d − mean)/std; (px, py, pw, ph) are
    centre and size with inclusive corners. Raises ValueError for shapes that differ, TypeError for bad means/stds."""
    op = "bounding_box_encode"
    p = _boxes(anchor_box, op, "anchor_box")
    g = _boxes(groundtruth_box, op, "groundtruth_box")
    if tuple(p.shape) != tuple(g.shape):
        raise ValueError(f"For '{op}', 'anchor_box' and 'groundtruth_box' must have one shape, but got "
                         f"{tuple(p.shape)} and {tuple(g.shape)}.")
    means, stds = _four(means, "means", op), _four(stds, "stds", op)
    px, py, pw, ph = _centres(p)
    gx, gy, gw, gh = _centres(g)
    ds = [_core.div(_core.sub(gx, px), pw), _core.div(_core.sub(gy, py), ph),
          _core.log(_core.div(gw, pw)), _core.log(_core.div(gh, ph))]
    ds = [_core.div(_core.sub(d, m), s) for d, m, s in zip(ds, means, stds)]
    return _core.stack(ds, 1)


def bounding_box_decode(anchor_box, deltas, max_shape, means=(0.0, 0.0, 0.0, 0.0), stds=(1.0, 1.0, 1.0, 1.0),
                        wh_ratio_clip=0.016):
    """MindSpore's ops.bounding_box_decode: the boxes that `deltas` (as bounding_box_encode makes them) give for
    each anchor: d = delta·std + mean, dw/dh clipped to ±|log(wh_ratio_clip)|, centre (px + pw·dx, py + ph·dy), size
    (pw·e^dw, ph·e^dh), corners x1 = cx − w/2 + 0.5, x2 = cx + w/2 − 0.5 (inclusive), then x clipped to
    [0, max_shape[1]] and y to [0, max_shape[0]] (max_shape = (height, width)). Raises TypeError / ValueError."""
    op = "bounding_box_decode"
    p = _boxes(anchor_box, op, "anchor_box")
    d = _boxes(deltas, op, "deltas")
    if tuple(p.shape) != tuple(d.shape):
        raise ValueError(f"For '{op}', 'anchor_box' and 'deltas' must have one shape, but got {tuple(p.shape)} and "
                         f"{tuple(d.shape)}.")
    if not isinstance(max_shape, (tuple, list)) or len(max_shape) != 2 or not all(
            isinstance(v, numbers.Real) and not isinstance(v, bool) and v > 0 for v in max_shape):
        raise TypeError(f"For '{op}', 'max_shape' must be a tuple (height, width) of positive numbers, but got "
                        f"{_got(max_shape)}.")
    if isinstance(wh_ratio_clip, bool) or not isinstance(wh_ratio_clip, numbers.Real) or wh_ratio_clip <= 0:
        raise TypeError(f"For '{op}', 'wh_ratio_clip' must be a positive float, but got {_got(wh_ratio_clip)}.")
    means, stds = _four(means, "means", op), _four(stds, "stds", op)
    dx, dy, dw, dh = (_core.add(_core.mul(_col(d, i), stds[i]), means[i]) for i in range(4))
    lim = abs(math.log(wh_ratio_clip))
    dw = _core.clip(dw, -lim, lim)
    dh = _core.clip(dh, -lim, lim)
    px, py, pw, ph = _centres(p)
    px, py = _core.sub(px, 0.5), _core.sub(py, 0.5)  # the inclusive centre: (x1 + x2)/2
    cx, cy = _core.add(px, _core.mul(pw, dx)), _core.add(py, _core.mul(ph, dy))
    w, h = _core.mul(pw, _core.exp(dw)), _core.mul(ph, _core.exp(dh))
    hw, hh = _core.mul(w, 0.5), _core.mul(h, 0.5)
    x1 = _core.clip(_core.add(_core.sub(cx, hw), 0.5), 0.0, float(max_shape[1]))
    y1 = _core.clip(_core.add(_core.sub(cy, hh), 0.5), 0.0, float(max_shape[0]))
    x2 = _core.clip(_core.sub(_core.add(cx, hw), 0.5), 0.0, float(max_shape[1]))
    y2 = _core.clip(_core.sub(_core.add(cy, hh), 0.5), 0.0, float(max_shape[0]))
    return _core.stack([x1, y1, x2, y2], 1)


def check_valid(bboxes, img_metas):
    """MindSpore's ops.check_valid(bboxes, img_metas): Bool (N,), True where box (x1, y1, x2, y2) lies inside the
    image of img_metas = (height, width, ratio): x1 >= 0, y1 >= 0, x2 <= width·ratio − 1, y2 <= height·ratio − 1.
    Raises ValueError for bad shapes."""
    b = _boxes(bboxes, "check_valid", "bboxes")
    m = _tensor_arg(img_metas, "check_valid", "img_metas")
    if tuple(m.shape) != (3,):
        raise ValueError(f"For 'check_valid', 'img_metas' must have shape (3,) (height, width, ratio), but got "
                         f"{tuple(m.shape)}.")
    m = m if m.dtype == b.dtype else _core.cast(m, b.dtype)
    h = _core.sub(_core.mul(m[0], m[2]), 1.0)
    w = _core.sub(_core.mul(m[1], m[2]), 1.0)
    ok = _core.logical_and(_core.greater_equal(_col(b, 0), 0.0), _core.greater_equal(_col(b, 1), 0.0))
    ok = _core.logical_and(ok, _core.less_equal(_col(b, 2), w))
    return _core.logical_and(ok, _core.less_equal(_col(b, 3), h))


def scalar_cast(input_x, input_y):
    """MindSpore's ops.scalar_cast(input_x, input_y): the Python number input_x converted to the type of dtype
    input_y (int dtypes truncate toward zero, float dtypes give a float, bool gives a bool)."""
    if isinstance(input_x, bool) or not isinstance(input_x, numbers.Real):
        raise TypeError(f"For 'scalar_cast', 'input_x' must be a number, but got {_got(input_x)}.")
    dt = mstype.to_dtype(input_y, "input_y", "scalar_cast")
    if dt == mstype.bool_:
        return bool(input_x)
    if mstype.is_float(dt):
        return float(input_x)
    return int(input_x)


class IOU(Primitive):
    """IOU(mode='iou')(anchor_boxes, gt_boxes): see ops.iou."""

    def __init__(self, mode="iou"):
        super().__init__("IOU")
        if mode not in ("iou", "iof"):
            raise ValueError(f"For 'IOU', 'mode' must be 'iou' or 'iof', but got {mode!r}.")
        self.mode = mode

    def __call__(self, anchor_boxes, gt_boxes):
        return iou(anchor_boxes, gt_boxes, self.mode)


class BoundingBoxEncode(Primitive):
    """BoundingBoxEncode(means=(0.0, 0.0, 0.0, 0.0), stds=(1.0, 1.0, 1.0, 1.0))(anchor_box, groundtruth_box): see
    ops.bounding_box_encode."""

    def __init__(self, means=(0.0, 0.0, 0.0, 0.0), stds=(1.0, 1.0, 1.0, 1.0)):
        super().__init__("BoundingBoxEncode")
        self.means, self.stds = _four(means, "means", self.name), _four(stds, "stds", self.name)

    def __call__(self, anchor_box, groundtruth_box):
        return bounding_box_encode(anchor_box, groundtruth_box, self.means, self.stds)


class BoundingBoxDecode(Primitive):
    """BoundingBoxDecode(max_shape, means=(0.0, 0.0, 0.0, 0.0), stds=(1.0, 1.0, 1.0, 1.0), wh_ratio_clip=0.016)
    (anchor_box, deltas): see ops.bounding_box_decode."""

    def __init__(self, max_shape, means=(0.0, 0.0, 0.0, 0.0), stds=(1.0, 1.0, 1.0, 1.0), wh_ratio_clip=0.016):
        super().__init__("BoundingBoxDecode")
        self.max_shape, self.wh_ratio_clip = max_shape, wh_ratio_clip
        self.means, self.stds = _four(means, "means", self.name), _four(stds, "stds", self.name)

    def __call__(self, anchor_box, deltas):
        return bounding_box_decode(anchor_box, deltas, self.max_shape, self.means, self.stds, self.wh_ratio_clip)


class CheckValid(Primitive):
    """CheckValid()(bboxes, img_metas): see ops.check_valid."""

    def __call__(self, bboxes, img_metas):
        return check_valid(bboxes, img_metas)


class FloatStatus(Primitive):
    """FloatStatus()(x): a (1,) Tensor of x's float dtype holding 1 if x has a NaN or ±inf element, else 0 (the
    overflow check of loss-scaling cells). Raises TypeError for a non-float x."""

    def __call__(self, x):
        x = _tensor_arg(x, "FloatStatus", "x")
        if not mstype.is_float(x.dtype):
            raise TypeError(f"For 'FloatStatus', 'x' must be a float Tensor, but got {x.dtype}.")
        if x.size == 0:
            return _core.full([1], 0.0, x.dtype)
        nonfinite = _core.not_equal(_core.sub(x, x), 0.0)  # x − x is NaN exactly for NaN and ±inf
        return _core.reshape(_core.cast(_core.reduce_any(nonfinite, None, False), x.dtype), [1])


class ScalarCast(Primitive):
    """ScalarCast()(input_x, input_y): see ops.scalar_cast."""

    def __call__(self, input_x, input_y):
        return scalar_cast(input_x, input_y)
