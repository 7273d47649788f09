"""Issue 23: ops.unfold / ops.fold as one Im2Col / Col2Im op each, ops.mirror_pad (and ops.pad 'reflect', nn.Pad
REFLECT / SYMMETRIC, nn.ReflectionPad*d) as one MirrorPad op, ops.pdist as one Pdist op (src/ops/im2col.cpp,
src/ops/pdist.cpp), with their backward ops. The registry rows (tests/python/op_registry/shapes.py, array.py,
opsmath_reduce.py) check values against NumPy/SciPy, float64 finite-difference gradients and PyNative against Graph
mode; here: MindSpore 2.10's values (obtained with the oracle, /work/shared/tools/ms_oracle.py) at the places where
the gradient is a convention (pdist at distance 0, equal coordinates for p < 1, ties for p = inf), the single node in
a graph, errors in both modes, and export."""
import math
import re

import numpy as np
import pytest

import kiln
from kiln import Tensor, nn, ops

INF = math.inf


def _nodes(fn, *args):
    jf = kiln.jit(fn)
    jf(*args)
    return [n for g in jf.graphs for n in re.findall(r"= (\w+)\(", g.graph_before.to_text())]


# ---------------------------------------------------------------------------------------------- MindSpore's values

def test_unfold_fold_mindspore_values():
    im = Tensor(np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4))
    # MindSpore 2.10: ops.unfold(im, 3, 1, 1, 2) and the gradient of its sum
    want = [[[0, 0, 0, 5], [0, 0, 4, 6], [0, 0, 5, 7], [0, 1, 0, 9], [0, 2, 8, 10], [1, 3, 9, 11], [0, 5, 0, 13],
             [4, 6, 12, 14], [5, 7, 13, 15]]]
    np.testing.assert_array_equal(ops.unfold(im, 3, 1, 1, 2).asnumpy(), want)
    g = kiln.grad(lambda t: ops.unfold(t, 3, 1, 1, 2).sum())(im)
    np.testing.assert_array_equal(g.asnumpy(), [[[[1, 2, 1, 1], [2, 4, 2, 2], [1, 2, 1, 1], [1, 2, 1, 1]]]])
    # MindSpore 2.10: ops.fold(arange(36).reshape(1, 9, 4), (4, 4), 3, 1, 1, 2)
    c = Tensor(np.arange(36, dtype=np.float32).reshape(1, 9, 4))
    np.testing.assert_array_equal(ops.fold(c, Tensor(np.array([4, 4], np.int32)), 3, 1, 1, 2).asnumpy(),
                                  [[[[16, 33, 17, 21], [34, 70, 36, 44], [18, 37, 19, 23], [30, 61, 31, 35]]]])


def test_mirror_pad_mindspore_values():
    x = Tensor(np.arange(12, dtype=np.float32).reshape(3, 4) * 0.5 - 1)
    w = Tensor((np.arange(1, 51, dtype=np.float32).reshape(5, 10) % 7) - 3)
    f = lambda t: ops.mirror_pad(t, Tensor(np.array([[1, 1], [3, 3]], np.int64)), "REFLECT")
    # MindSpore 2.10's values
    np.testing.assert_array_equal(f(x).asnumpy()[1], [0.5, 0.0, -0.5, -1.0, -0.5, 0.0, 0.5, 0.0, -0.5, -1.0])
    np.testing.assert_array_equal(kiln.grad(lambda t: (f(t) * w).sum())(x).asnumpy(),
                                  [[0, 3, 2, 1], [-3, -6, -2, 0], [5, 0, -1, -1]])
    w2 = Tensor((np.arange(1, 55, dtype=np.float32).reshape(6, 9) % 5) - 2)
    g = lambda t: ops.mirror_pad(t, Tensor(np.array([[3, 0], [1, 4]], np.int64)), "SYMMETRIC")
    np.testing.assert_array_equal(g(x).asnumpy()[:, 0], [3.0, 1.0, -1.0, -1.0, 1.0, 3.0])
    np.testing.assert_array_equal(kiln.grad(lambda t: (g(t) * w2).sum())(x).asnumpy(),
                                  [[2, -6, -1, 4], [-3, 4, -1, -1], [2, 4, 4, -6]])


def _pdist_input():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 3)).astype(np.float32)
    x[3] = x[1]  # a pair at distance 0
    x[4, 0] = x[0, 0]  # an equal coordinate (p < 1)
    x[2] = x[0] + np.array([0.5, 0.5, -0.5], np.float32)  # |diff| ties in every coordinate (p = inf)
    cot = rng.standard_normal((10,)).astype(np.float32)
    return x, cot


# MindSpore 2.10's ops.pdist(x, p) and the gradient of (pdist(x, p) * cot).sum() for _pdist_input (oracle, float32)
_MS_PDIST = {
    0.0: ([3.0, 3.0, 3.0, 2.0, 3.0, 0.0, 3.0, 3.0, 3.0, 3.0],
          [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]),
    0.5: ([1.7099091, 4.5, 1.7099091, 2.7817731, 4.5904579, 0.0, 3.9010987, 4.5904579, 7.0250883, 3.9010987],
          [[-7.8675203, 1.806208, -3.7295644], [-15.1606522, -5.6370211, 8.6915407], [0.8049892, 0.434044, 0.7050759], [-7.5234857, -1.0196133, -0.8397536], [29.7466698, 4.4163823, -4.8272986]]),
    1.0: ([0.7032222, 1.5, 0.7032222, 1.9730204, 1.6455671, 0.0, 1.9452139, 1.6455671, 2.4730206, 1.9452139],
          [[-0.5043085, -0.092678, -1.1811961], [-1.6767094, -1.6767094, 3.1412442], [0.1845697, 0.1845697, 0.5184504], [0.0780247, 0.0780247, 0.5545756], [1.9184235, 1.506793, -3.0330744]]),
    1.5: ([0.5488481, 1.0400419, 0.5488481, 1.8987021, 1.2147124, 0.0, 1.7015183, 1.2147124, 1.8100641, 1.7015183],
          [[0.1730927, -0.4338168, -0.7144548], [-0.691177, -0.8609126, 2.2949529], [0.054448, 0.1481787, 0.5239911], [0.3972283, 0.4550447, 0.819759], [0.0664079, 0.691506, -2.924248]]),
    2.0: ([0.4909613, 0.8660254, 0.4909613, 1.8883245, 1.0661192, 0.0, 1.6385729, 1.0661192, 1.586229, 1.6385729],
          [[0.2697403, -0.5287855, -0.4985358], [-0.4956009, -0.5458982, 1.9727014], [-0.0190964, 0.13557, 0.5431643], [0.3269014, 0.6490465, 0.9279759], [-0.0819444, 0.2900672, -2.9453058]]),
    3.0: ([0.4438043, 0.7211248, 0.4438043, 1.8863946, 0.9618273, 0.0, 1.6116012, 0.9618273, 1.440864, 1.6116012],
          [[0.2593426, -0.6045185, -0.2639384], [-0.304304, -0.3673685, 1.7036929], [-0.1086856, 0.1296164, 0.5671083], [0.1955962, 0.8136609, 0.9885606], [-0.0419492, 0.0286097, -2.9954233]]),
    INF: ([0.4035645, 0.5, 0.4035645, 1.8863337, 0.9035645, 0.0, 1.607506, 0.9035645, 1.3863337, 1.607506],
          [[0.544259, -0.5043085, -0.1326285], [0.0, -0.310246, 1.3664634], [-0.544259, -0.1669403, 0.8957691], [0.0, 0.9814948, 0.9034702], [0.0, 0.0, -3.0330744]]),
}


@pytest.mark.parametrize("p", sorted(_MS_PDIST))
def test_pdist_mindspore_values_and_gradient_conventions(p):
    x, cot = _pdist_input()
    want_y, want_g = _MS_PDIST[p]
    t = Tensor(x)
    np.testing.assert_allclose(ops.pdist(t, p).asnumpy(), want_y, rtol=2e-6, atol=1e-6)
    g = kiln.grad(lambda a: (ops.pdist(a, p) * Tensor(cot)).sum())(t)
    np.testing.assert_allclose(g.asnumpy(), want_g, rtol=1e-5, atol=1e-5)


def test_pdist_float16_and_empty():
    x = np.random.default_rng(1).standard_normal((4, 3))
    want = ops.pdist(Tensor(x)).asnumpy()
    np.testing.assert_allclose(ops.pdist(Tensor(x.astype(np.float16))).asnumpy(), want, rtol=2e-3, atol=2e-3)
    assert ops.pdist(Tensor(np.zeros((0, 3), np.float32))).shape == (0,)


# ---------------------------------------------------------------------------------------------- one node

@pytest.mark.parametrize("fn, x, op", [
    (lambda t: ops.unfold(t, 2, 1, 1, 1), np.ones((1, 2, 4, 4), np.float32), "Im2Col"),
    (lambda t: ops.fold(t, (4, 4), 2, 1, 0, 2), np.ones((1, 8, 4), np.float32), "Col2Im"),
    (lambda t: ops.mirror_pad(t, [[1, 1], [2, 2]], "SYMMETRIC"), np.ones((2, 3), np.float32), "MirrorPad"),
    (lambda t: ops.pad(t, (1, 2), "reflect"), np.ones((2, 3), np.float32), "MirrorPad"),
    (lambda t: ops.pdist(t, 3.0), np.ones((4, 3), np.float32), "Pdist"),
])
def test_one_node(fn, x, op):
    assert _nodes(fn, Tensor(x)) == [op]


def test_pad_layers_are_one_mirror_pad():
    x = Tensor(np.arange(24, dtype=np.float32).reshape(1, 2, 3, 4))
    for layer, np_mode, pairs in [(nn.ReflectionPad2d((1, 2, 0, 2)), "reflect", [(0, 0), (0, 0), (0, 2), (1, 2)]),
                                  (nn.Pad(((0, 0), (0, 0), (1, 1), (2, 0)), "SYMMETRIC"), "symmetric",
                                   [(0, 0), (0, 0), (1, 1), (2, 0)])]:
        np.testing.assert_array_equal(layer(x).asnumpy(), np.pad(x.asnumpy(), pairs, np_mode))
        assert _nodes(layer, x) == ["MirrorPad"]


# ---------------------------------------------------------------------------------------------- errors

_BAD = [
    (lambda: ops.unfold(Tensor(np.zeros((1, 4, 4), np.float32)), 2), ValueError, r"unfold.*4-D.*\(1, 4, 4\)"),
    (lambda: ops.unfold(Tensor(np.zeros((1, 1, 4, 4), np.float32)), 5), ValueError, "unfold.*does not fit"),
    (lambda: ops.unfold(Tensor(np.zeros((1, 1, 4, 4), np.float32)), 0), ValueError, "unfold.*kernel_size"),
    (lambda: ops.unfold(Tensor(np.zeros((1, 1, 4, 4), np.float32)), 2, stride=0), ValueError, "unfold.*stride"),
    (lambda: ops.unfold(Tensor(np.zeros((1, 1, 4, 4), np.float32)), 2.5), TypeError, "unfold.*kernel_size"),
    (lambda: ops.fold(Tensor(np.zeros((1, 8, 5), np.float32)), (4, 4), 2, 1, 0, 2), ValueError,
     r"fold.*\(1, 8, 5\)"),
    (lambda: ops.fold(Tensor(np.zeros((8, 4), np.float32)), (4, 4), 2), ValueError, "fold.*3-D"),
    (lambda: ops.mirror_pad(Tensor(np.zeros((3, 4), np.float32)), [[3, 0], [0, 0]], "REFLECT"), ValueError,
     r"mirror_pad.*\(3, 0\).*length 3"),
    (lambda: ops.mirror_pad(Tensor(np.zeros((3, 4), np.float32)), [[0, 0], [0, 0]], "EDGE"), ValueError,
     "mirror_pad.*mode"),
    (lambda: ops.mirror_pad(Tensor(np.zeros((3, 4), np.float32)), [[0, 0]], "REFLECT"), ValueError,
     "mirror_pad.*paddings"),
    (lambda: ops.pdist(Tensor(np.zeros((2, 2, 2), np.float32))), ValueError, r"pdist.*2-D.*\(2, 2, 2\)"),
    (lambda: ops.pdist(Tensor(np.zeros((2, 2), np.float32)), -1.0), ValueError, "pdist.*p"),
    (lambda: ops.pdist(Tensor(np.zeros((2, 2), np.int32))), TypeError, "pdist"),
]


@pytest.mark.parametrize("mode", ["pynative", "graph"])
@pytest.mark.parametrize("k", range(len(_BAD)))
def test_errors(k, mode):
    call, exc, msg = _BAD[k]
    with pytest.raises(exc, match=msg):
        if mode == "graph":
            kiln.jit(lambda: call())()
        else:
            call()


def test_core_ops_check_their_attributes():
    """The C++ ops refuse bad attributes themselves (callers other than the Python functions: graphs, bprops)."""
    from kiln import _core
    x = Tensor(np.zeros((1, 1, 4, 4), np.float32))
    with pytest.raises(ValueError, match="Im2Col.*kernel_size"):
        _core.im2col(x, [0, 2], [1, 1], [0, 0], [1, 1])
    with pytest.raises(ValueError, match="Im2Col.*does not fit"):
        _core.im2col(x, [5, 5], [1, 1], [0, 0], [1, 1])
    with pytest.raises(ValueError, match="Col2Im.*does not match"):
        _core.col2im(Tensor(np.zeros((1, 4, 5), np.float32)), [4, 4], [2, 2], [1, 1], [0, 0], [2, 2])
    with pytest.raises(ValueError, match=r"MirrorPad.*\[0, 3\].*REFLECT"):
        _core.mirror_pad(Tensor(np.zeros((3, 4), np.float32)), [0, 0, 4, 0], "REFLECT")
    with pytest.raises(ValueError, match="Pdist.*2-D"):
        _core.pdist(Tensor(np.zeros((3,), np.float32)), 2.0)


# ---------------------------------------------------------------------------------------------- export

def test_export_onnx(tmp_path):
    ort = pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    cases = {
        "unfold": (lambda t: ops.unfold(t, (3, 2), (1, 2), 1, (2, 1)), (2, 3, 5, 6)),
        "unfold_nopad": (lambda t: ops.unfold(t, 2, 1, 0, 2), (1, 2, 4, 4)),
        "mirror_reflect": (lambda t: ops.mirror_pad(t, [[0, 0], [1, 2], [2, 2], [0, 5]], "REFLECT"), (2, 3, 5, 6)),
        "mirror_symmetric": (lambda t: ops.pad(t, (1, 2), "reflect") + nn.Pad(((0, 0), (3, 3)), "SYMMETRIC")(t)[:, 2:-1],
                             (3, 4)),
    }
    for p in (0.0, 0.5, 1.0, 2.0, 3.0, INF):
        cases[f"pdist{p}"] = (lambda t, p=p: ops.pdist(t, p), (5, 3))
    for name, (fn, shape) in cases.items():
        x = Tensor(np.random.default_rng(0).standard_normal(shape).astype(np.float32))
        path = str(tmp_path / name)
        kiln.export(fn, x, file_name=path, file_format="ONNX")
        sess = ort.InferenceSession(path + ".onnx", providers=["CPUExecutionProvider"])
        got = sess.run(None, {sess.get_inputs()[0].name: x.asnumpy()})[0]
        np.testing.assert_allclose(got, fn(x).asnumpy(), rtol=1e-5, atol=1e-6, err_msg=name)


def test_export_mindir_runs_in_kiln(tmp_path):
    class Net(nn.Cell):
        def construct(self, x, y):
            return (ops.unfold(x, 3, 1, 1, 2), ops.mirror_pad(x, [[0, 0], [0, 0], [1, 1], [3, 3]], "SYMMETRIC"),
                    ops.pdist(y), ops.pdist(y, 0.0), ops.pdist(y, INF), ops.pdist(y, 1.5))
    rng = np.random.default_rng(0)
    x = Tensor(rng.standard_normal((1, 2, 4, 4)).astype(np.float32))
    y = Tensor(rng.standard_normal((4, 3)).astype(np.float32))
    net = Net()
    path = str(tmp_path / "m")
    kiln.export(net, x, y, file_name=path, file_format="MINDIR")
    got = nn.GraphCell(kiln.load(path + ".mindir"))(x, y)
    for a, b in zip(got, net(x, y)):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-5, atol=1e-6)


def test_fold_refuses_export_with_its_reason(tmp_path):
    with pytest.raises(ValueError, match="Col2Im"):
        kiln.export(lambda t: ops.fold(t, (4, 4), 2, 1, 0, 2), Tensor(np.ones((1, 8, 4), np.float32)),
                    file_name=str(tmp_path / "f"), file_format="ONNX")
