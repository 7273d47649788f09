"""ops.NMSWithMask, ops.ROIAlign and ops.MaxPool3D: NumPy references of MindSpore's
CPU algorithms, values pinned against MindSpore 2.10 (CPU), Graph mode, gradients and bad inputs."""
import numpy as np
import pytest

import kiln as ms
from kiln import ops, nn, Tensor


# ------------------------------------------------------------------------------------------------ NMSWithMask
def _nms_ref(b, thr):
    order = np.argsort(-b[:, 4], kind="stable")
    s = b[order]
    n = len(s)
    keep = np.ones(n, bool)
    area = (s[:, 2] - s[:, 0]) * (s[:, 3] - s[:, 1])
    with np.errstate(invalid="ignore", divide="ignore"):
        for i in range(n - 1):
            if not keep[i]:
                continue
            for j in range(i + 1, n):
                w = max(min(s[i, 2], s[j, 2]) - max(s[i, 0], s[j, 0]), 0)
                h = max(min(s[i, 3], s[j, 3]) - max(s[i, 1], s[j, 1]), 0)
                inter = np.float32(w * h)
                if inter / (area[i] + area[j] - inter) > np.float32(thr):
                    keep[j] = False
    return s, keep


_BOXES = np.array([[0, 0, 10, 10, 0.9], [1, 1, 11, 11, 0.8], [20, 20, 30, 30, 0.7], [0, 0, 10, 10, 0.95],
                   [2, 2, 5, 5, 0.1]], np.float32)


def test_nms_with_mask_mindspore_values():
    out, idx, mask = ops.NMSWithMask(0.5)(Tensor(_BOXES))
    # MindSpore 2.10 (CPU): boxes sorted by score, idx 0..N-1, the mask of the kept boxes
    np.testing.assert_array_equal(out.asnumpy(), _BOXES[[3, 0, 1, 2, 4]])
    assert out.dtype == ms.float32 and idx.dtype == ms.int32 and mask.dtype == ms.bool_
    np.testing.assert_array_equal(idx.asnumpy(), np.arange(5, dtype=np.int32))
    np.testing.assert_array_equal(mask.asnumpy(), [True, False, False, True, True])
    # IoU 9/100 of the small box with the top one: kept at 0.1 (no +1 in the areas), suppressed at 0.05
    assert ops.NMSWithMask(0.1)(Tensor(_BOXES))[2].asnumpy().tolist() == [True, False, False, True, True]
    assert ops.NMSWithMask(0.05)(Tensor(_BOXES))[2].asnumpy().tolist() == [True, False, False, True, False]
    # the doc example of MindSpore: indices[mask] == [0 1 2]
    bbox = np.array([[100.0, 100.0, 50.0, 68.0, 0.63], [150.0, 75.0, 165.0, 115.0, 0.55],
                     [12.0, 190.0, 288.0, 200.0, 0.9], [28.0, 130.0, 106.0, 172.0, 0.3]])
    bbox[:, 2] += bbox[:, 0]
    bbox[:, 3] += bbox[:, 1]
    _, i, m = ops.NMSWithMask(0.1)(Tensor(bbox, ms.float32))
    assert i.asnumpy()[m.asnumpy()].tolist() == [0, 1, 2]


def test_nms_with_mask_threshold_is_strict_and_suppressed_boxes_do_not_suppress():
    b = np.array([[0, 0, 2, 2, 0.9], [1, 0, 3, 2, 0.8]], np.float32)  # IoU exactly 1/3
    assert ops.NMSWithMask(1 / 3)(Tensor(b))[2].asnumpy().tolist() == [True, True]
    assert ops.NMSWithMask(0.3)(Tensor(b))[2].asnumpy().tolist() == [True, False]
    # a chain: B overlaps A (suppressed), C overlaps B only: C survives because B was suppressed
    chain = np.array([[0, 0, 10, 10, 0.9], [4, 0, 14, 10, 0.8], [9, 0, 19, 10, 0.7]], np.float32)
    assert ops.NMSWithMask(0.3)(Tensor(chain))[2].asnumpy().tolist() == [True, False, True]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_nms_with_mask_matches_numpy_greedy(seed):
    rng = np.random.RandomState(seed)
    b = rng.rand(40, 5).astype(np.float32)
    b[:, 2:4] = b[:, 0:2] + rng.rand(40, 2).astype(np.float32) * 0.5
    for thr in (0.0, 0.2, 0.5, 0.9):
        out, _, mask = ops.NMSWithMask(thr)(Tensor(b))
        ref_s, ref_k = _nms_ref(b, thr)
        np.testing.assert_array_equal(out.asnumpy(), ref_s)
        np.testing.assert_array_equal(mask.asnumpy(), ref_k)
    # MindSpore 2.10 on this input (seed 0 only): the kept pattern at 0.2
    if seed == 0:
        bb = np.random.RandomState(0).rand(30, 5).astype(np.float32)
        bb[:, 2:4] += bb[:, 0:2]
        assert ops.NMSWithMask(0.2)(Tensor(bb))[2].asnumpy().astype(int).tolist() == \
            _nms_ref(bb, 0.2)[1].astype(int).tolist()


def test_nms_with_mask_float16_and_graph_mode(graph_mode):
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.nms = ops.NMSWithMask(0.5)

        def construct(self, x):
            return self.nms(x)

    out, idx, mask = Net()(Tensor(_BOXES))
    np.testing.assert_array_equal(mask.asnumpy(), [True, False, False, True, True])
    np.testing.assert_array_equal(out.asnumpy(), _BOXES[[3, 0, 1, 2, 4]])
    out16, _, m16 = Net()(Tensor(_BOXES.astype(np.float16)))
    assert out16.dtype == ms.float16 and m16.asnumpy().tolist() == [True, False, False, True, True]


def test_nms_with_mask_errors():
    with pytest.raises(TypeError, match="iou_threshold"):
        ops.NMSWithMask(1)
    with pytest.raises(ValueError, match=r"\(N, 5\)"):
        ops.NMSWithMask(0.5)(Tensor(_BOXES[:, :4]))
    with pytest.raises(ValueError, match=r"\(N, 5\)"):
        ops.NMSWithMask(0.5)(Tensor(np.zeros((0, 5), np.float32)))
    with pytest.raises(TypeError, match="Float16 or Float32"):
        ops.NMSWithMask(0.5)(Tensor(_BOXES.astype(np.int32)))
    with pytest.raises(TypeError):
        ops.NMSWithMask(0.5)(_BOXES)


# --------------------------------------------------------------------------------------------------- ROIAlign
def _roi_align_ref(x, rois, ph, pw, scale, g, mode):
    """MindSpore's CPU ROIAlign, one sample at a time, in float64."""
    n, c, h, w = x.shape
    out = np.zeros((len(rois), c, ph, pw))
    for r, roi in enumerate(rois.astype(np.float64)):
        if abs(roi[1]) < 0.001 and abs(roi[3]) < 0.001:
            continue
        b = int(np.rint(roi[0]))
        sw, sh = roi[1] * scale, roi[2] * scale
        rw, rh = (roi[3] + mode) * scale - sw, (roi[4] + mode) * scale - sh
        if mode == 0:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        bh, bw = rh / ph, rw / pw
        for i in range(ph):
            for j in range(pw):
                acc = np.zeros(c)
                for iy in range(g):
                    y = sh + i * bh + (iy + 0.5) * bh / g
                    for ix in range(g):
                        xx = sw + j * bw + (ix + 0.5) * bw / g
                        if y < -1 or y > h or xx < -1 or xx > w:
                            continue
                        yy, xc = max(y, 0.0), max(xx, 0.0)
                        y0, x0 = int(np.floor(yy)), int(np.floor(xc))
                        if y0 >= h - 1:
                            y0 = y1 = h - 1
                            yy = float(y0)
                        else:
                            y1 = y0 + 1
                        if x0 >= w - 1:
                            x0 = x1 = w - 1
                            xc = float(x0)
                        else:
                            x1 = x0 + 1
                        ly, lx = yy - y0, xc - x0
                        acc += ((1 - ly) * (1 - lx) * x[b, :, y0, x0] + (1 - ly) * lx * x[b, :, y0, x1]
                                + ly * (1 - lx) * x[b, :, y1, x0] + ly * lx * x[b, :, y1, x1])
                out[r, :, i, j] = acc / (g * g)
    return out


_FEAT = np.arange(2 * 2 * 6 * 6, dtype=np.float32).reshape(2, 2, 6, 6)
_ROIS = np.array([[0, 0.5, 0.7, 4.2, 3.9], [1, 1.1, 0.0, 5.5, 5.9], [0, -1, -1, 2, 2]], np.float32)


def test_roi_align_mindspore_values():
    r = ops.ROIAlign(2, 2, 1.0, 2, 1)(Tensor(_FEAT), Tensor(_ROIS)).asnumpy()
    # MindSpore 2.10 (CPU)
    ms_vals = [[[[12.175, 14.525], [24.775, 27.125]], [[48.175, 50.525], [60.775, 63.125]]],
               [[[84.8, 87.0875], [50.1625, 51.3062]], [[120.8, 123.0875], [68.1625, 69.3062]]],
               [[[1.75, 3.5], [12.25, 14.0]], [[37.75, 39.5], [48.25, 50.0]]]]
    np.testing.assert_allclose(r, ms_vals, atol=1e-4)
    r0 = ops.ROIAlign(2, 2, 1.0, 2, 0)(Tensor(_FEAT), Tensor(_ROIS)).asnumpy()
    np.testing.assert_allclose(r0[2], [[[0.4375, 1.625], [7.5625, 8.75]], [[36.4375, 37.625], [43.5625, 44.75]]],
                               atol=1e-4)
    ex = ops.ROIAlign(2, 2, 0.5, 2)(Tensor(np.array([[[[1., 2.], [3., 4.]]]], np.float32)),
                                     Tensor(np.array([[0, 0.2, 0.3, 0.2, 0.3]], np.float32)))
    np.testing.assert_allclose(ex.asnumpy(), [[[[1.775, 2.025], [2.275, 2.525]]]], rtol=1e-6)  # MindSpore's doc


@pytest.mark.parametrize("args", [(2, 2, 1.0, 2, 1), (3, 2, 0.5, 1, 1), (2, 3, 1.0, 3, 0), (1, 1, 0.25, 4, 1)])
def test_roi_align_matches_numpy_reference(args):
    rng = np.random.RandomState(3)
    x = rng.randn(2, 3, 7, 9).astype(np.float32)
    rois = np.array([[0, 0.3, 0.2, 6.5, 5.1], [1, 2.0, 1.0, 3.0, 9.0], [1, -2, -2, 11, 8], [0, 0, 0, 0, 0],
                     [0, 7.9, 5.5, 8.9, 6.7]], np.float32)  # (no sample exactly on the border)
    got = ops.ROIAlign(*args)(Tensor(x), Tensor(rois)).asnumpy()
    np.testing.assert_allclose(got, _roi_align_ref(x, rois, *args), rtol=1e-5, atol=1e-5)
    assert got[3].max() == 0 and got[3].min() == 0  # MindSpore leaves a zero "padding" RoI at 0


def test_roi_align_graph_mode_and_gradient(graph_mode):
    x = np.random.RandomState(1).randn(1, 2, 5, 5).astype(np.float32)
    rois = np.array([[0, 0.5, 0.5, 3.5, 3.0]], np.float32)
    roi = ops.ROIAlign(2, 2, 1.0, 2, 1)

    @ms.jit
    def f(a, r):
        return roi(a, r)

    np.testing.assert_allclose(f(Tensor(x), Tensor(rois)).asnumpy(), _roi_align_ref(x, rois, 2, 2, 1.0, 2, 1),
                               rtol=1e-5, atol=1e-5)
    # d sum(out) / d x: the total bilinear weight each input cell receives, by finite differences in float64
    g = ms.grad(lambda a: roi(a, Tensor(rois)).sum())(Tensor(x)).asnumpy()
    eps = 1e-3
    num = np.zeros_like(x, dtype=np.float64)
    for idx in np.ndindex(x.shape):
        d = np.zeros_like(x, dtype=np.float64)
        d[idx] = eps
        num[idx] = (_roi_align_ref(x + d, rois, 2, 2, 1.0, 2, 1).sum()
                    - _roi_align_ref(x - d, rois, 2, 2, 1.0, 2, 1).sum()) / (2 * eps)
    np.testing.assert_allclose(g, num, atol=1e-4)


def test_roi_align_errors():
    feat, rois = Tensor(_FEAT), Tensor(_ROIS)
    with pytest.raises(TypeError, match="spatial_scale"):
        ops.ROIAlign(2, 2, 1, 2, 1)
    with pytest.raises(TypeError, match="pooled_height"):
        ops.ROIAlign(2.0, 2, 1.0)
    with pytest.raises(ValueError, match="pooled"):
        ops.ROIAlign(0, 2, 1.0)
    with pytest.raises(ValueError, match="roi_end_mode"):
        ops.ROIAlign(2, 2, 1.0, 2, 2)
    with pytest.raises(ValueError, match="sample_num"):
        ops.ROIAlign(2, 2, 1.0, 0)
    with pytest.raises(ValueError, match=r"\(R, 5\)"):
        ops.ROIAlign(2, 2, 1.0)(feat, Tensor(np.zeros((2, 4), np.float32)))
    with pytest.raises(ValueError, match="4-D"):
        ops.ROIAlign(2, 2, 1.0)(Tensor(_FEAT[0]), rois)
    with pytest.raises(TypeError, match="Float16 or Float32"):
        ops.ROIAlign(2, 2, 1.0)(Tensor(_FEAT.astype(np.int32)), rois)
    with pytest.raises(ValueError, match="image_index"):
        ops.ROIAlign(2, 2, 1.0)(feat, Tensor(np.array([[2, 0, 0, 2, 2]], np.float32)))
    out16 = ops.ROIAlign(2, 2, 1.0)(Tensor(_FEAT.astype(np.float16)), rois)
    assert out16.dtype == ms.float16


# -------------------------------------------------------------------------------------------------- MaxPool3D
def _pool3d_ref(x, k, s, pads, ceil):
    xp = np.pad(x, [(0, 0), (0, 0)] + [(pads[2 * i], pads[2 * i + 1]) for i in range(3)], constant_values=-np.inf)
    outs = []
    for i in range(3):
        span = x.shape[2 + i] + pads[2 * i] + pads[2 * i + 1] - k[i]
        o = (-(-span // s[i]) if ceil else span // s[i]) + 1
        if ceil and (o - 1) * s[i] >= x.shape[2 + i] + pads[2 * i]:
            o -= 1
        outs.append(o)
    y = np.full(x.shape[:2] + tuple(outs), -np.inf, x.dtype)
    for d, h, w in np.ndindex(*outs):
        win = xp[:, :, d * s[0]:d * s[0] + k[0], h * s[1]:h * s[1] + k[1], w * s[2]:w * s[2] + k[2]]
        y[:, :, d, h, w] = win.reshape(x.shape[0], x.shape[1], -1).max(-1)
    return y


def test_max_pool3d_modes_match_numpy_and_mindspore():
    x = np.random.RandomState(0).randn(1, 1, 4, 6, 7).astype(np.float32)
    t = Tensor(x)
    # SAME: total padding (ceil(in/s) − 1)·s + k − in, the odd unit at the back
    np.testing.assert_array_equal(ops.MaxPool3D(3, 2, "same")(t).asnumpy(),
                                  _pool3d_ref(x, (3, 3, 3), (2, 2, 2), (0, 1, 0, 1, 1, 1), False))
    np.testing.assert_array_equal(ops.MaxPool3D(2, 3, "SAME")(t).asnumpy(),
                                  _pool3d_ref(x, (2, 2, 2), (3, 3, 3), (0, 1, 0, 1, 0, 1), False))
    pads = (1, 0, 1, 1, 0, 1)
    for ceil in (True, False):
        got = ops.MaxPool3D(3, 2, "pad", pads, ceil_mode=ceil)(t).asnumpy()
        np.testing.assert_array_equal(got, _pool3d_ref(x, (3, 3, 3), (2, 2, 2), pads, ceil))
    assert ops.MaxPool3D(3, 2, "pad", pads, ceil_mode=True)(t).shape == (1, 1, 2, 4, 4)  # MindSpore 2.10
    assert ops.MaxPool3D(3, 2, "pad", pads)(t).shape == (1, 1, 2, 3, 3)
    np.testing.assert_array_equal(ops.MaxPool3D((1, 2, 3), (1, 2, 1))(t).asnumpy(),
                                  _pool3d_ref(x, (1, 2, 3), (1, 2, 1), (0,) * 6, False))
    # padding never wins (MindSpore: the maxima of negative inputs stay negative)
    neg = -1 - Tensor(np.arange(27, dtype=np.float32).reshape(1, 1, 3, 3, 3))
    assert ops.MaxPool3D(2, 2, "pad", 1)(neg).asnumpy().ravel().tolist() == \
        [-1.0, -2.0, -4.0, -5.0, -10.0, -11.0, -13.0, -14.0]
    assert ops.MaxPool3D(2, 2, "same")(neg).asnumpy().ravel().tolist() == \
        [-1.0, -3.0, -7.0, -9.0, -19.0, -21.0, -25.0, -27.0]
    assert ops.MaxPool3D(2)(Tensor(x.astype(np.float16))).dtype == ms.float16


def test_max_pool3d_graph_mode_and_gradient(graph_mode):
    x = np.random.RandomState(2).randn(1, 2, 4, 4, 4).astype(np.float32)
    pool = ops.MaxPool3D(2, 2)
    np.testing.assert_array_equal(ms.jit(lambda a: pool(a))(Tensor(x)).asnumpy(),
                                  _pool3d_ref(x, (2, 2, 2), (2, 2, 2), (0,) * 6, False))
    g = ms.grad(lambda a: pool(a).sum())(Tensor(x)).asnumpy()
    ref = np.zeros_like(x)
    for c, d, h, w in np.ndindex(2, 2, 2, 2):
        win = x[0, c, 2 * d:2 * d + 2, 2 * h:2 * h + 2, 2 * w:2 * w + 2]
        i = np.unravel_index(np.argmax(win), win.shape)
        ref[0, c, 2 * d + i[0], 2 * h + i[1], 2 * w + i[2]] = 1
    np.testing.assert_array_equal(g, ref)


def test_max_pool3d_errors():
    x = Tensor(np.zeros((1, 1, 4, 6, 7), np.float32))
    with pytest.raises(ValueError, match="kernel_size"):
        ops.MaxPool3D(0)
    with pytest.raises(ValueError, match="strides"):
        ops.MaxPool3D(2, 0)
    with pytest.raises(TypeError, match="kernel_size"):
        ops.MaxPool3D(2.0)
    with pytest.raises(ValueError, match="kernel_size"):
        ops.MaxPool3D((1, 1, 2, 2, 2))
    with pytest.raises(ValueError, match="pad_mode"):
        ops.MaxPool3D(pad_mode="xx")
    with pytest.raises(ValueError, match="pad_list"):
        ops.MaxPool3D(pad_mode="pad", pad_list=-1)
    with pytest.raises(ValueError, match="pad_list"):
        ops.MaxPool3D(pad_mode="pad", pad_list=(1, 1))
    with pytest.raises(ValueError, match="pad_list"):
        ops.MaxPool3D(2, 2, "same", 1)
    with pytest.raises(ValueError, match="ceil_mode"):
        ops.MaxPool3D(2, 2, "valid", ceil_mode=True)
    with pytest.raises(ValueError, match="data_format"):
        ops.MaxPool3D(data_format="NDHWC")
    with pytest.raises(ValueError, match="padding"):
        ops.MaxPool3D(2, 1, "pad", 2)
    with pytest.raises(ValueError, match="5-D"):
        ops.MaxPool3D(2)(x[0])
    with pytest.raises(TypeError, match="Float16, Float32 or Float64"):
        ops.MaxPool3D(2)(Tensor(np.zeros((1, 1, 4, 4, 4), np.int32)))
    with pytest.raises(ValueError, match="empty"):
        ops.MaxPool3D(8)(x)


# ---------------------------------------------------------------------------------------------------- CTCLoss
_X = np.random.RandomState(0).randn(5, 2, 4).astype(np.float32)
_LI = np.array([[0, 0], [0, 1], [1, 0], [1, 1], [1, 2]], np.int64)
_LV = np.array([1, 1, 2, 2, 0], np.int32)
_SL = np.array([5, 4], np.int32)


def _ctc_ref(x, labels, seq_len, merge=True):
    """−log p(labels | x), by enumerating every path of blank-augmented frames (float64), TensorFlow's decoding:
    merge repeats (if merge) then drop blanks (class C − 1)."""
    import itertools
    t, c = seq_len, x.shape[-1]
    lp = x[:t].astype(np.float64)
    lp = lp - np.log(np.exp(lp).sum(-1, keepdims=True))
    total = 0.0
    for path in itertools.product(range(c), repeat=t):
        out, prev = [], None
        for k in path:
            if k != c - 1 and (not merge or k != prev):
                out.append(k)
            prev = k
        if out == list(labels):
            total += np.exp(sum(lp[i, k] for i, k in enumerate(path)))
    return -np.log(total)


@pytest.mark.parametrize("kw", [{}, {"preprocess_collapse_repeated": True}, {"ctc_merge_repeated": False}])
def test_ctc_loss_primitive_mindspore_values_and_path_enumeration(kw):
    loss, grad = ops.CTCLoss(**kw)(Tensor(_X), Tensor(_LI), Tensor(_LV), Tensor(_SL))
    ms_loss = {(): [7.560427, 4.509538], ("preprocess_collapse_repeated",): [6.008798, 3.558160],
               ("ctc_merge_repeated",): [6.811489, 4.035429]}[tuple(kw)]  # MindSpore 2.10 (CPU)
    np.testing.assert_allclose(loss.asnumpy(), ms_loss, rtol=1e-5)
    labels = [[1, 1], [2, 2, 0]]
    if kw.get("preprocess_collapse_repeated"):
        labels = [[1], [2, 0]]
    merge = kw.get("ctc_merge_repeated", True)
    ref = [_ctc_ref(_X[:, b], labels[b], int(_SL[b]), merge) for b in range(2)]
    np.testing.assert_allclose(loss.asnumpy(), ref, rtol=1e-5)
    assert grad.shape == (5, 2, 4) and grad.dtype == ms.float32
    # MindSpore 2.10's gradient of entry 0 at frame 0, and d loss / d x by central differences of the enumeration
    ms_g0 = {(): [0.30097, -0.44751, 0.13723, 0.00931], ("preprocess_collapse_repeated",): [0.30097, -0.00125,
             0.13723, -0.43695], ("ctc_merge_repeated",): [0.30097, -0.13086, 0.13723, -0.30734]}[tuple(kw)]
    np.testing.assert_allclose(grad.asnumpy()[0, 0], ms_g0, atol=1e-5)
    eps, b = 1e-4, 0
    for k in range(4):
        d = np.zeros_like(_X[:, b], dtype=np.float64)
        d[2, k] = eps
        num = (_ctc_ref(_X[:, b] + d, labels[b], 5, merge) - _ctc_ref(_X[:, b] - d, labels[b], 5, merge)) / (2 * eps)
        assert abs(grad.asnumpy()[2, b, k] - num) < 1e-4
    assert np.all(grad.asnumpy()[4:, 1] == 0)  # entry 1 has 4 frames: no gradient on frame 4


def test_ctc_loss_primitive_longer_labels_and_graph_mode(graph_mode):
    short = Tensor(np.array([5, 2], np.int32))
    prim = ops.CTCLoss(ignore_longer_outputs_than_inputs=True)
    loss, grad = ms.jit(lambda *a: prim(*a))(Tensor(_X), Tensor(_LI), Tensor(_LV), short)
    np.testing.assert_allclose(loss.asnumpy(), [7.560427, 0.0], rtol=1e-5)  # MindSpore 2.10
    assert np.all(grad.asnumpy()[:, 1] == 0)


def test_ctc_loss_primitive_errors():
    x, li, lv, sl = Tensor(_X), Tensor(_LI), Tensor(_LV), Tensor(_SL)
    with pytest.raises(ValueError, match="sequence length: 2 and label length: 3"):
        ops.CTCLoss()(x, li, lv, Tensor(np.array([5, 2], np.int32)))
    with pytest.raises(ValueError, match="blank"):
        ops.CTCLoss()(x, li, Tensor(np.array([1, 1, 3, 2, 0], np.int32)), sl)
    with pytest.raises(TypeError, match="bool"):
        ops.CTCLoss(1)
    with pytest.raises(TypeError, match="Int32"):
        ops.CTCLoss()(x, li, Tensor(_LV.astype(np.int64)), sl)
    with pytest.raises(TypeError, match="Float16, Float32 or Float64"):
        ops.CTCLoss()(Tensor(_X.astype(np.int32)), li, lv, sl)
    with pytest.raises(ValueError, match="3-D"):
        ops.CTCLoss()(Tensor(_X[0]), li, lv, sl)
    with pytest.raises(ValueError, match="0..len-1"):
        ops.CTCLoss()(x, Tensor(np.array([[0, 1]], np.int64)), Tensor(np.array([1], np.int32)), sl)
