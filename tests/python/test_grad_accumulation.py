"""Gradient accumulation (issue 27): kiln.parallel.nn.GradAccumulation and nn.GradAccumulationCell.

Forward and TrainOneStepCell values are MindSpore 2.10's (oracle, stand-alone CPU); Model.train with k micro-batches
equals one step on the k-times batch (weights after several steps within 1e-5) in PyNative and Graph mode, and under
2 processes data parallel (python -m kiln.msrun); only one micro-batch's activations are alive at a time (peak
memory); argument errors are MindSpore's."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import kiln as ms
from kiln import Tensor, nn, ops
from kiln import dataset as ds
from kiln.parallel.nn import GradAccumulation

from helpers import subprocess_env
from test_distributed import launch, logs


def _data():
    np.random.seed(0)
    x = np.random.randn(8, 4).astype(np.float32)
    y = np.random.randn(8, 2).astype(np.float32)
    return x, y


def _dense():
    return nn.Dense(4, 2, weight_init=Tensor(np.arange(8, dtype=np.float32).reshape(2, 4) / 10), bias_init="zeros")


@pytest.fixture(params=[False, True], ids=["pynative", "graph"])
def mode(request):
    ms.set_context(mode=ms.GRAPH_MODE if request.param else ms.PYNATIVE_MODE)
    yield request.param
    ms.set_context(mode=ms.PYNATIVE_MODE)


def test_forward_and_train_one_step_match_mindspore(mode):
    """MindSpore 2.10 (CPU, both modes): the forward is the SUM of the 4 micro-batch losses (11.975989, 4 times the
    whole batch's 2.9939973), and TrainOneStepCell differentiates that sum (SGD lr 0.1, one step)."""
    x, y = _data()
    net = _dense()
    ga = GradAccumulation(nn.WithLossCell(net, nn.MSELoss()), 4)
    np.testing.assert_allclose(ga(Tensor(x), Tensor(y)).asnumpy(), 11.975989, rtol=1e-6)
    step = nn.TrainOneStepCell(ga, nn.SGD(net.trainable_params(), 0.1))
    step.set_train()
    np.testing.assert_allclose(step(Tensor(x), Tensor(y)).asnumpy(), 11.975989, rtol=1e-6)
    want = [-0.2182687520980835, -0.04344489425420761, -0.014651492238044739, 0.21791565418243408,
            -0.7214832305908203, 0.4895201325416565, 0.38240164518356323, 0.06839364767074585]  # MindSpore 2.10
    np.testing.assert_allclose(net.weight.asnumpy().ravel(), want, rtol=0, atol=1e-6)


def _train(micro, graph_steps=3, cls=GradAccumulation, use_model=True, seed=5):
    ms.set_seed(seed)
    net = nn.SequentialCell([nn.Dense(4, 8), nn.Tanh(), nn.Dense(8, 2)])
    loss_net = nn.WithLossCell(net, nn.MSELoss())
    opt = nn.Momentum(net.trainable_params(), 0.1, 0.9)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((8 * graph_steps, 4)).astype(np.float32)
    y = rng.standard_normal((8 * graph_steps, 2)).astype(np.float32)
    wrapped = cls(loss_net, micro) if micro > 1 else loss_net
    if use_model:
        model = ms.Model(wrapped, optimizer=opt)
        model.train(1, ds.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(8), dataset_sink_mode=False)
    else:  # an own step: TrainOneStepCell with sens = 1/micro_size (what Model builds)
        step = nn.TrainOneStepCell(wrapped, opt, sens=1.0 / micro if micro > 1 else None)
        step.set_train()
        for s in range(graph_steps):
            step(Tensor(x[8 * s:8 * s + 8]), Tensor(y[8 * s:8 * s + 8]))
    return [p.asnumpy() for p in net.trainable_params()]


@pytest.mark.parametrize("micro", [2, 4])
@pytest.mark.parametrize("use_model", [True, False], ids=["model", "train_one_step"])
def test_accumulation_equals_one_step_on_the_whole_batch(mode, micro, use_model):
    ref = _train(1, use_model=use_model)
    got = _train(micro, use_model=use_model, cls=GradAccumulation if micro == 2 else nn.GradAccumulationCell)
    for a, b in zip(got, ref):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-5)
    ms.set_seed(5)
    start = [p.asnumpy() for p in nn.SequentialCell([nn.Dense(4, 8), nn.Tanh(), nn.Dense(8, 2)]).trainable_params()]
    assert max(np.abs(a - b).max() for a, b in zip(ref, start)) > 1e-2  # it trained


def test_input_gradients_and_non_scalar_outputs(mode):
    """Gradients w.r.t. differentiated inputs are accumulated too; a network returning a non-scalar gets the
    gradient of the summed output (exact, without the memory saving)."""
    rng = np.random.default_rng(2)
    x = Tensor(rng.standard_normal((6, 4)).astype(np.float32))
    net = _dense()
    ga = GradAccumulation(net, 3)
    sens = Tensor(rng.standard_normal((2, 2)).astype(np.float32))

    def fn_ga(t):
        return ops.sum(ga(t) * sens)

    def fn_ref(t):
        return ops.sum((net(t[0:2]) + net(t[2:4]) + net(t[4:6])) * sens)
    g = ms.grad(fn_ga, 0, net.trainable_params())
    r = ms.grad(fn_ref, 0, net.trainable_params())
    if mode:
        g, r = ms.jit(g), ms.jit(r)
    (gx, gw), (rx, rw) = g(x), r(x)
    np.testing.assert_allclose(gx.asnumpy(), rx.asnumpy(), rtol=0, atol=1e-6)
    for a, b in zip(gw, rw):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=0, atol=1e-6)
    loss_net = nn.WithLossCell(net, nn.MSELoss())
    y = Tensor(rng.standard_normal((6, 2)).astype(np.float32))
    gx2 = ms.grad(GradAccumulation(loss_net, 3), 0)(x, y)
    rx2 = ms.grad(lambda a, b: loss_net(a[0:2], b[0:2]) + loss_net(a[2:4], b[2:4]) + loss_net(a[4:6], b[4:6]), 0)(x, y)
    np.testing.assert_allclose(gx2.asnumpy(), rx2.asnumpy(), rtol=0, atol=1e-6)


def test_argument_errors():
    """MindSpore 2.10's messages."""
    with pytest.raises(ValueError, match="'micro_size' must be large than 0, but got 0"):
        GradAccumulation(nn.Dense(2, 2), 0)
    with pytest.raises(TypeError, match="'micro_size' must be integer, but got the type : <class 'float'>"):
        GradAccumulation(nn.Dense(2, 2), 2.0)
    with pytest.raises(TypeError, match="For 'GradAccumulationCell', the argument 'network' must cell type"):
        nn.GradAccumulationCell(lambda x: x, 2)
    x, y = _data()
    with pytest.raises(ValueError, match=r"the 0th dimension shape of input\(8\) must be divided by micro size\(3\)"):
        GradAccumulation(nn.WithLossCell(_dense(), nn.MSELoss()), 3)(Tensor(x), Tensor(y))
    net = _dense()
    with pytest.raises(ValueError, match="amp_level='O0'"):
        ms.Model(GradAccumulation(nn.WithLossCell(net, nn.MSELoss()), 2), optimizer=nn.SGD(net.trainable_params()),
                 amp_level="O2").train(1, ds.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(8))


_PEAK = """
import sys
import numpy as np
import kiln as ms
from kiln import Tensor, nn, ops, runtime
from kiln.parallel.nn import GradAccumulation
graph, micro = sys.argv[1] == "graph", int(sys.argv[2])
ms.set_seed(0)
net = nn.SequentialCell([nn.Dense(64, 512), nn.ReLU(), nn.Dense(512, 512), nn.ReLU(), nn.Dense(512, 64)])
loss_net = nn.WithLossCell(net, nn.MSELoss())
if micro > 1:
    loss_net = GradAccumulation(loss_net, micro)
fn = ms.value_and_grad(loss_net, None, net.trainable_params())
if graph:
    fn = ms.jit(fn)
rng = np.random.default_rng(0)
x = Tensor(rng.standard_normal((2048, 64)).astype(np.float32))
y = Tensor(rng.standard_normal((2048, 64)).astype(np.float32))
base = runtime.memory_allocated()
runtime.reset_peak_memory_stats()
loss, grads = fn(x, y)  # Graph mode: the compiled graph's planned buffers are allocated in this first call
print(runtime.max_memory_allocated() - base)
"""


@pytest.mark.parametrize("graph", ["pynative", "graph"])
def test_accumulation_lowers_peak_memory(graph):
    """A 2048-row batch through 512-wide layers (~16 MiB of activations, ~1.3 MiB of weights): 8 micro-batches keep
    one micro-batch's activations alive at a time, so the step's peak falls well below the whole batch's."""
    def peak(micro):
        r = subprocess.run([sys.executable, "-c", textwrap.dedent(_PEAK), graph, str(micro)], capture_output=True,
                           text=True, env=subprocess_env(), timeout=300)
        assert r.returncode == 0, r.stderr
        return int(r.stdout.split()[-1])
    whole, accu = peak(1), peak(8)
    assert accu <= 0.7 * whole, (graph, whole, accu)


def test_grad_accumulation_data_parallel_two_processes(tmp_path):
    r, _ = launch("grad_accu_train.py", tmp_path, tmp_path=tmp_path, timeout=180)
    assert r.returncode == 0, r.stdout + r.stderr + logs(tmp_path)
    for tag in ("pynative", "graph"):
        ref = np.load(tmp_path / f"{tag}_ref.npz")
        w0, w1 = np.load(tmp_path / f"{tag}_rank0.npz"), np.load(tmp_path / f"{tag}_rank1.npz")
        assert sorted(ref.files) == sorted(w0.files) == sorted(w1.files) and len(ref.files) == 4
        for name in ref.files:
            np.testing.assert_array_equal(w0[name], w1[name], err_msg=f"{tag}: ranks differ in {name}")
            np.testing.assert_allclose(w0[name], ref[name], rtol=0, atol=1e-5, err_msg=f"{tag}: {name}")
    assert os.path.exists(tmp_path / "logs")


def test_micro_batch_interleaved(mode):
    """MindSpore 2.10: MicroBatchInterleaved(WithLossCell(dense), 2) returns the sum of the two halves' losses
    (5.9879947, both modes); a non-scalar network's outputs are summed too; gradients are those of the sum; its
    argument errors."""
    from kiln.parallel.nn import MicroBatchInterleaved
    assert nn.MicroBatchInterleaved is MicroBatchInterleaved
    x, y = _data()
    net = _dense()
    m = MicroBatchInterleaved(nn.WithLossCell(net, nn.MSELoss()), 2)
    np.testing.assert_allclose(m(Tensor(x), Tensor(y)).asnumpy(), 5.9879947, rtol=1e-6)
    w = np.arange(8, dtype=np.float32).reshape(2, 4) / 10
    out = MicroBatchInterleaved(net, 2)(Tensor(x)).asnumpy()
    np.testing.assert_allclose(out, x[:4] @ w.T + x[4:] @ w.T, rtol=1e-6, atol=1e-6)
    g = ms.grad(lambda t: ops.sum(MicroBatchInterleaved(net, 2)(t) ** 2))(Tensor(x)).asnumpy()
    s = x[:4] @ w.T + x[4:] @ w.T
    np.testing.assert_allclose(g, np.concatenate([2 * s @ w, 2 * s @ w]), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="'interleave_num' must be large than 0, but got 0"):
        MicroBatchInterleaved(net, 0)
    with pytest.raises(TypeError, match="'interleave_num' must be integer, but got the type : <class 'float'>"):
        MicroBatchInterleaved(net, 2.0)
    with pytest.raises(ValueError, match=r"input\(8\) must be divided by micro size\(3\)"):
        MicroBatchInterleaved(net, 3)(Tensor(x))


class _TwoOutputs(nn.Cell):
    def construct(self, x):
        return x * 2, x + 1


def test_tuple_output_raises(mode):
    """MindSpore 2.10 sums the micro-batch outputs with Add, which takes Tensors and numbers only: a network that
    returns a tuple raises TypeError ("Failed calling Add with Add()(input=Tuple<Tensor, Tensor>, ...)") in
    GradAccumulation and MicroBatchInterleaved. Kiln used to stack the tuple into one Tensor and return a (2, 3, 4)
    sum; now a TypeError naming the wrapper, also without a grad transform. An empty batch (0 rows) gives an empty
    sum, as in MindSpore."""
    from kiln.parallel.nn import MicroBatchInterleaved
    x = Tensor(np.arange(24, dtype=np.float32).reshape(6, 4))
    for wrap, name in ((GradAccumulation, "GradAccumulation"), (MicroBatchInterleaved, "MicroBatchInterleaved")):
        with pytest.raises(TypeError, match=f"For '{name}', the network must return a Tensor or a number.*tuple"):
            wrap(_TwoOutputs(), 2)(x)
    with pytest.raises(TypeError, match="For 'GradAccumulation', the network must return a Tensor"):
        ms.grad(lambda t: GradAccumulation(_TwoOutputs(), 2)(t))(x)
    out = GradAccumulation(nn.ReLU(), 2)(x[:0])
    assert out.shape == (0, 4)
