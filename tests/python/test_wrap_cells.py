"""WithLossCell, WithEvalCell and TrainOneStepCell: outputs, a step against a NumPy reference, PyNative/GRAPH
parity (the whole step compiled into one graph), sens, return_grad and argument errors."""
import numpy as np
import pytest

import kiln as ms
from kiln import nn, Tensor


def _data(seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((8, 3)).astype(np.float32), rng.standard_normal((8, 2)).astype(np.float32))


def _dense(w, b):
    return nn.Dense(3, 2, weight_init=Tensor(w), bias_init=Tensor(b))


def test_with_loss_and_eval_cells():
    x, y = _data()
    net = nn.Dense(3, 2)
    wl = nn.WithLossCell(net, nn.MSELoss())
    pred = net(Tensor(x)).asnumpy()
    assert float(wl(Tensor(x), Tensor(y)).asnumpy()) == pytest.approx(np.mean((pred - y) ** 2), rel=1e-6)
    assert wl.backbone_network is net
    assert [p.name for p in wl.trainable_params()] == ["weight", "bias"]  # names kept (auto_prefix=False)
    loss, out, label = nn.WithEvalCell(net, nn.MSELoss())(Tensor(x), Tensor(y))
    np.testing.assert_array_equal(out.asnumpy(), pred)
    np.testing.assert_array_equal(label.asnumpy(), y)
    loss16, out16, _ = nn.WithEvalCell(net, nn.MSELoss(), add_cast_fp32=True)(Tensor(x), Tensor(y))
    assert out16.dtype == ms.float32
    with pytest.raises(TypeError, match="add_cast_fp32"):
        nn.WithEvalCell(net, nn.MSELoss(), 1)
    with pytest.raises(TypeError, match="loss_fn"):
        nn.WithLossCell(net, lambda a, b: a)


def test_train_one_step_matches_numpy_sgd():
    x, y = _data()
    rng = np.random.default_rng(1)
    w = rng.standard_normal((2, 3)).astype(np.float32)
    b = np.zeros(2, np.float32)
    net = _dense(w, b)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params(), 0.1))
    ws, bs = w.astype(np.float64), b.astype(np.float64)
    for _ in range(3):
        pred = x @ ws.T + bs
        ref_loss = np.mean((pred - y) ** 2)
        g = 2 * (pred - y) / pred.size
        ws, bs = ws - 0.1 * g.T @ x, bs - 0.1 * g.sum(0)
        assert float(step(Tensor(x), Tensor(y)).asnumpy()) == pytest.approx(ref_loss, rel=1e-5)  # before update
    np.testing.assert_allclose(net.weight.asnumpy(), ws, rtol=1e-5)
    np.testing.assert_allclose(net.bias.asnumpy(), bs, rtol=1e-5, atol=1e-7)


def _run(mode, sens=None, loss_scale=1.0, steps=5):
    ms.set_context(mode=mode)
    try:
        x, y = _data()
        rng = np.random.default_rng(2)
        net = _dense(rng.standard_normal((2, 3)).astype(np.float32), np.zeros(2, np.float32))
        opt = nn.Adam(net.trainable_params(), 0.05, loss_scale=loss_scale)
        step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), opt, sens=sens)
        step.set_train()
        return [float(step(Tensor(x), Tensor(y)).asnumpy()) for _ in range(steps)], step
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


def test_pynative_graph_parity_and_single_graph():
    eager, _ = _run(ms.PYNATIVE_MODE)
    graph, step = _run(ms.GRAPH_MODE)
    np.testing.assert_allclose(graph, eager, rtol=1e-6)
    assert eager[-1] < eager[0]
    jf = step._jit_construct
    assert jf.trace_count == 1 and len(jf.graphs) == 1  # forward + backward + update: one graph, compiled once


def test_sens_scales_the_gradients():
    ref, _ = _run(ms.PYNATIVE_MODE)
    scaled, _ = _run(ms.PYNATIVE_MODE, sens=8.0, loss_scale=8.0)  # the optimizer's loss_scale undoes sens
    np.testing.assert_allclose(scaled, ref, rtol=1e-5)


def test_return_grad_and_errors():
    x, y = _data()
    net = nn.Dense(3, 2)
    opt = nn.SGD(net.trainable_params(), 0.0)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), opt, return_grad=True)
    loss, grads = step(Tensor(x), Tensor(y))
    assert list(grads) == ["weight", "bias"] and grads["weight"].shape == (2, 3)
    pred = x @ net.weight.asnumpy().T + net.bias.asnumpy()
    np.testing.assert_allclose(grads["bias"].asnumpy(), (2 * (pred - y) / pred.size).sum(0), rtol=1e-5, atol=1e-7)
    with pytest.raises(ValueError, match="sens"):
        nn.TrainOneStepCell(net, opt, sens=0)
    with pytest.raises(TypeError, match="sens"):
        nn.TrainOneStepCell(net, opt, sens="1")
    with pytest.raises(TypeError, match="optimizer"):
        nn.TrainOneStepCell(net, net)
    with pytest.raises(TypeError, match="return_grad"):
        nn.TrainOneStepCell(net, opt, return_grad=1)

    class Two(nn.Cell):
        def construct(self, a, b):
            return a, b

    with pytest.raises(TypeError, match="Tensor"):
        nn.TrainOneStepCell(Two(), opt)(Tensor(x), Tensor(y))
