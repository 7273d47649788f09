"""Detection primitives of MindSpore 2.10 with no functional form: ops.NMSWithMask and ops.ROIAlign. Both are
compositions of Kiln kernels (sort, gather, elementwise, matmul), so they run in Graph mode; ROIAlign is
differentiable with respect to the features. Semantics follow MindSpore's CPU kernels (pinned against MindSpore 2.10
on CPU; tests/python/test_names_ops.py).

NMSWithMask (greedy non-maximum suppression, fixed-shape outputs):
  boxes sorted by score, descending (ties keep their input order; MindSpore's bitonic sort leaves tie order
  unspecified); IoU(a, b) = I / (area_a + area_b − I) with areas (x2 − x1)·(y2 − y1) (no +1), I the overlap area;
  going down the sorted list, a box still selected suppresses every later box whose IoU with it is > iou_threshold
  (a NaN IoU, from two empty boxes, suppresses nothing).
ROIAlign (He et al., "Mask R-CNN", 2017): each output bin averages sample_num × sample_num bilinear samples taken at
  the centres of a regular grid in the bin; a sample outside [−1, H] × [−1, W] counts 0, coordinates in [−1, 0) clamp
  to 0. Bilinear weights separate into a row and a column factor, so the sampling is two matrix products per RoI:
  out = Wy · F · Wxᵀ (Wy: samples × H, Wx: samples × W), then the mean over each bin's samples."""

from .._loader import _core
from .._args import _got, _is_int
from ..common import dtype as mstype
from .function import _tensor_arg
from .primitives import Primitive

__all__ = ["NMSWithMask", "ROIAlign"]

_FLOAT16_32 = (mstype.float16, mstype.float32)


class NMSWithMask(Primitive):
    """NMSWithMask(iou_threshold=0.5)(bboxes) -> (output_boxes, output_idx, selected_mask).

    Args:
        iou_threshold (float): boxes overlapping a kept box by an IoU above it are suppressed. Default 0.5.
    Inputs:
        bboxes: Float16/Float32 Tensor (N, 5), N ≥ 1: (x1, y1, x2, y2, score) per box.
    Outputs:
        output_boxes: (N, 5), same dtype: the boxes sorted by score, descending (as MindSpore on CPU/GPU).
        output_idx: Int32 (N,): the indexes of output_boxes, 0..N−1 (MindSpore's CPU kernel's value).
        selected_mask: Bool (N,): True for the boxes kept by the suppression (module docstring).
    Raises:
        TypeError: iou_threshold not a float (MindSpore's check: a float, an int is refused too); bboxes not a
            Tensor, or not Float16/Float32.
        ValueError: bboxes not of shape (N, 5) with N ≥ 1."""

    def __init__(self, iou_threshold=0.5):
        super().__init__("NMSWithMask")
        if not isinstance(iou_threshold, float):
            raise TypeError(f"For 'NMSWithMask', the 'iou_threshold' must be a float, but got {_got(iou_threshold)}.")
        self.iou_threshold = iou_threshold

    def __call__(self, bboxes):
        b = _tensor_arg(bboxes, "NMSWithMask", "bboxes")
        if b.dtype not in _FLOAT16_32:
            raise TypeError(f"For 'NMSWithMask', the 'bboxes' must be a Float16 or Float32 Tensor, but got {b.dtype}.")
        if b.ndim != 2 or b.shape[1] != 5 or b.shape[0] < 1:
            raise ValueError(f"For 'NMSWithMask', the 'bboxes' must have shape (N, 5) with N >= 1, but got "
                             f"{tuple(b.shape)}.")
        n = b.shape[0]
        order = _core.argsort(b[:, 4], 0, True)  # stable: equal scores keep their input order
        boxes = _core.gather(b, order, 0)
        x1, y1, x2, y2 = (boxes[:, i] for i in range(4))
        area = _core.mul(_core.sub(x2, x1), _core.sub(y2, y1))
        col = lambda v: _core.reshape(v, [n, 1])
        row = lambda v: _core.reshape(v, [1, n])
        w = _core.maximum(_core.sub(_core.minimum(col(x2), row(x2)), _core.maximum(col(x1), row(x1))), 0.0)
        h = _core.maximum(_core.sub(_core.minimum(col(y2), row(y2)), _core.maximum(col(y1), row(y1))), 0.0)
        inter = _core.mul(w, h)
        iou = _core.div(inter, _core.sub(_core.add(col(area), row(area)), inter))
        later = _core.greater(row(_core.arange(0, n, 1, mstype.int32)), col(_core.arange(0, n, 1, mstype.int32)))
        # suppress[i, j]: box i (if still selected) removes box j > i
        suppress = _core.logical_and(later, _core.greater(iou, float(self.iou_threshold)))
        keep = _core.full([n], True, mstype.bool_)
        for i in range(n - 1):  # greedy, in score order (a fixed number of steps: it traces in Graph mode)
            drop = _core.logical_and(keep[i], suppress[i])
            keep = _core.logical_and(keep, _core.logical_not(drop))
        return boxes, _core.arange(0, n, 1, mstype.int32), keep


def _axis_weights(coord, size, dtype):
    """Bilinear weights of sample coordinates `coord` (R, S) on a grid of `size` points: (R, S, size), each row
    holding (1 − l) at floor(c) and l at floor(c) + 1 (clamped at the last point; 0 for c outside [−1, size])."""
    valid = _core.logical_and(_core.greater_equal(coord, -1.0), _core.less_equal(coord, float(size)))
    c = _core.maximum(coord, 0.0)
    low = _core.floor(c)
    at_end = _core.greater_equal(low, float(size - 1))
    low = _core.select(at_end, _core.full([], float(size - 1), dtype), low)
    c = _core.select(at_end, low, c)
    frac = _core.sub(c, low)
    high = _core.minimum(_core.add(low, 1.0), float(size - 1))
    grid = _core.reshape(_core.arange(0, size, 1, dtype), [1, 1, size])
    low3, high3 = _core.expand_dims(low, -1), _core.expand_dims(high, -1)
    wl = _core.mul(_core.cast(_core.equal(grid, low3), dtype), _core.expand_dims(_core.sub(1.0, frac), -1))
    wh = _core.mul(_core.cast(_core.equal(grid, high3), dtype), _core.expand_dims(frac, -1))
    return _core.mul(_core.add(wl, wh), _core.expand_dims(_core.cast(valid, dtype), -1))  # at the end: frac 0


class ROIAlign(Primitive):
    """ROIAlign(pooled_height, pooled_width, spatial_scale, sample_num=2, roi_end_mode=1)(features, rois).

    Args:
        pooled_height, pooled_width (int): output bins per RoI, ≥ 1.
        spatial_scale (float): feature-map size / image size (RoI coordinates are multiplied by it).
        sample_num (int): samples per bin along each axis. Default 2. Kiln needs ≥ 1 (MindSpore's ≤ 0 chooses
            ⌊RoI size / pooled size⌋ per RoI, a data-dependent shape: ValueError here).
        roi_end_mode (int): 1 adds 1 to the RoI's end corner before scaling; 0 (legacy) does not, and widens a RoI
            smaller than 1 to 1. Default 1.
    Inputs:
        features: Float16/Float32 (N, C, H, W).
        rois: (R, 5) float: (image_index, x1, y1, x2, y2) in image coordinates (cast to features' dtype).
    Output:
        (R, C, pooled_height, pooled_width), features' dtype. A RoI with |x1| and |x2| below 0.001 (an empty padding
        row) gives zeros, as MindSpore's CPU kernel. Differentiable with respect to features.
    Raises:
        TypeError: an int attribute that is not an int, spatial_scale not a float (MindSpore's checks), features or
            rois not Tensors, features not Float16/Float32.
        ValueError: pooled sizes < 1, sample_num < 1, roi_end_mode not 0/1, features not 4-D, rois not (R, 5), or
            (in PyNative, where the values are known) an image_index outside [0, N − 1]."""

    def __init__(self, pooled_height, pooled_width, spatial_scale, sample_num=2, roi_end_mode=1):
        super().__init__("ROIAlign")
        for name, v in (("pooled_height", pooled_height), ("pooled_width", pooled_width),
                        ("sample_num", sample_num), ("roi_end_mode", roi_end_mode)):
            if not _is_int(v):
                raise TypeError(f"For 'ROIAlign', the type of '{name}' should be 'int', but got {_got(v)}.")
        if not isinstance(spatial_scale, float):
            raise TypeError(f"For 'ROIAlign', the type of 'spatial_scale' should be 'float', but got "
                            f"{_got(spatial_scale)}.")
        if pooled_height < 1 or pooled_width < 1:
            raise ValueError(f"For 'ROIAlign', 'pooled_height' and 'pooled_width' must be >= 1, but got "
                             f"{pooled_height} and {pooled_width}.")
        if roi_end_mode not in (0, 1):
            raise ValueError(f"For 'ROIAlign', the 'roi_end_mode' must be in range of [0, 1], but got {roi_end_mode}.")
        if sample_num < 1:
            raise ValueError(f"For 'ROIAlign', Kiln needs 'sample_num' >= 1 (MindSpore's adaptive sampling for "
                             f"sample_num <= 0 gives data-dependent shapes), but got {sample_num}.")
        self.pooled_height, self.pooled_width = int(pooled_height), int(pooled_width)
        self.spatial_scale, self.sample_num, self.roi_end_mode = spatial_scale, int(sample_num), int(roi_end_mode)

    def __call__(self, features, rois):
        x = _tensor_arg(features, "ROIAlign", "features")
        r = _tensor_arg(rois, "ROIAlign", "rois")
        if x.dtype not in _FLOAT16_32:
            raise TypeError(f"For 'ROIAlign', the 'features' must be a Float16 or Float32 Tensor, but got {x.dtype}.")
        if not mstype.is_float(r.dtype):
            raise TypeError(f"For 'ROIAlign', the 'rois' must be a float Tensor, but got {r.dtype}.")
        if x.ndim != 4:
            raise ValueError(f"For 'ROIAlign', the 'features' must be 4-D (N, C, H, W), but got shape "
                             f"{tuple(x.shape)}.")
        if r.ndim != 2 or r.shape[1] != 5:
            raise ValueError(f"For 'ROIAlign', the 'rois' must have shape (R, 5), but got {tuple(r.shape)}.")
        dt = x.dtype
        if r.dtype != dt:
            r = _core.cast(r, dt)
        nb, c, hgt, wid = x.shape
        nr = r.shape[0]
        ph, pw, g = self.pooled_height, self.pooled_width, self.sample_num
        if nr and not _core.tracing():  # values known (PyNative): check the image indices
            idx = r[:, 0].asnumpy()
            if (idx < 0).any() or (idx > nb - 1).any():
                raise ValueError(f"For 'ROIAlign', each image_index (rois[:, 0]) must be in [0, {nb - 1}], but got "
                                 f"{idx.tolist()}.")
        s = float(self.spatial_scale)
        batch = _core.cast(_core.floor(_core.add(r[:, 0], 0.5 + 0.00007)), mstype.int64)
        start_w, start_h = _core.mul(r[:, 1], s), _core.mul(r[:, 2], s)
        roi_w = _core.sub(_core.mul(_core.add(r[:, 3], float(self.roi_end_mode)), s), start_w)
        roi_h = _core.sub(_core.mul(_core.add(r[:, 4], float(self.roi_end_mode)), s), start_h)
        if self.roi_end_mode == 0:
            roi_w, roi_h = _core.maximum(roi_w, 1.0), _core.maximum(roi_h, 1.0)
        # sample k of bin p along an axis: start + p·bin + (k + 0.5)·bin/g = start + bin·(p + (k + 0.5)/g)
        frac_h = [p + (k + 0.5) / g for p in range(ph) for k in range(g)]
        frac_w = [p + (k + 0.5) / g for p in range(pw) for k in range(g)]
        fh = _core.reshape(_core.Tensor(frac_h, dt), [1, ph * g])
        fw = _core.reshape(_core.Tensor(frac_w, dt), [1, pw * g])
        bin_h = _core.reshape(_core.div(roi_h, float(ph)), [nr, 1])
        bin_w = _core.reshape(_core.div(roi_w, float(pw)), [nr, 1])
        ys = _core.add(_core.reshape(start_h, [nr, 1]), _core.mul(bin_h, fh))
        xs = _core.add(_core.reshape(start_w, [nr, 1]), _core.mul(bin_w, fw))
        wy = _core.expand_dims(_axis_weights(ys, hgt, dt), 1)   # (R, 1, PH·g, H)
        wx = _core.expand_dims(_axis_weights(xs, wid, dt), 1)   # (R, 1, PW·g, W)
        f = _core.gather(x, batch, 0)                           # (R, C, H, W)
        out = _core.matmul(_core.matmul(wy, f), wx, False, True)  # (R, C, PH·g, PW·g)
        out = _core.reshape(out, [nr, c, ph, g, pw, g])
        out = _core.div(_core.sum(_core.sum(out, [5], False), [3], False), float(g * g))
        # MindSpore's CPU kernel leaves a RoI whose x1 and x2 are both within 0.001 of 0 (a padding row) at 0
        empty = _core.logical_and(_core.less(_core.abs(r[:, 1]), 0.001), _core.less(_core.abs(r[:, 3]), 0.001))
        return _core.select(_core.reshape(empty, [nr, 1, 1, 1]), _core.full([], 0.0, dt), out)
