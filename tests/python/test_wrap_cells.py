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


def _loss_scale_run(mode, make_scale, xs, opt="adam"):
    ms.set_context(mode=mode)
    try:
        ms.set_seed(0)
        net = nn.Dense(3, 2)
        optimizer = nn.Adam(net.trainable_params(), 0.1) if opt == "adam" else nn.SGD(net.trainable_params(), 0.1)
        cell = nn.TrainOneStepWithLossScaleCell(nn.WithLossCell(net, nn.MSELoss()), optimizer, make_scale())
        y = Tensor(np.zeros((4, 2), np.float32))
        out = []
        for x in xs:
            loss, cond, scale = cell(Tensor(x), y)
            assert cond.dtype == ms.bool_ and cond.shape == ()
            out.append((float(loss.asnumpy()), bool(cond.asnumpy()), float(scale.asnumpy()),
                        float(cell.scale_sense.asnumpy())))
        return out, net.weight.asnumpy().copy(), int(optimizer.global_step.asnumpy()[0]), cell
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


def _xs_with_overflow():
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((4, 3)).astype(np.float32) for _ in range(6)]
    xs[2][0, 0] = np.inf
    xs[4][1, 1] = np.nan
    return xs


@pytest.mark.parametrize("kind", ["tensor", "fixed", "dynamic"])
def test_loss_scale_cell_skips_overflow_steps_same_in_both_modes(kind):
    make = {"tensor": lambda: Tensor(np.float32(8.0)), "fixed": lambda: nn.FixedLossScaleUpdateCell(16.0),
            "dynamic": lambda: nn.DynamicLossScaleUpdateCell(2.0 ** 10, 2, 2)}[kind]
    xs = _xs_with_overflow()
    eager, w_e, steps_e, _ = _loss_scale_run(ms.PYNATIVE_MODE, make, xs)
    graph, w_g, steps_g, cell = _loss_scale_run(ms.GRAPH_MODE, make, xs)
    assert [r[1] for r in eager] == [False, False, True, False, True, False]
    assert steps_e == steps_g == 4  # the optimizer ran only on the 4 finite steps (global_step restored)
    np.testing.assert_array_equal(w_g, w_e)
    for a, b in zip(eager, graph):
        np.testing.assert_array_equal(np.array(a), np.array(b))  # NaN == NaN here
    assert cell._jit_construct.trace_count == 1
    if kind == "dynamic":
        # (scale used, scale after): grows after 2 clean steps, halves on each overflow (MindSpore's rule).
        assert [(r[2], r[3]) for r in eager] == [(1024.0, 1024.0), (1024.0, 2048.0), (2048.0, 1024.0),
                                                 (1024.0, 1024.0), (1024.0, 512.0), (512.0, 512.0)]
    else:
        assert {r[2] for r in eager} == {8.0 if kind == "tensor" else 16.0}


def test_loss_scale_cell_steps_equal_the_unscaled_steps():
    """Without overflow, scaling by a power of two and unscaling gives exactly the plain step."""
    xs = [x for i, x in enumerate(_xs_with_overflow()) if i not in (2, 4)]
    scaled, w_s, _, _ = _loss_scale_run(ms.PYNATIVE_MODE, lambda: Tensor(np.float32(1024.0)), xs, opt="sgd")
    ms.set_seed(0)
    net = nn.Dense(3, 2)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params(), 0.1))
    plain = [float(step(Tensor(x), Tensor(np.zeros((4, 2), np.float32))).asnumpy()) for x in xs]
    assert [r[0] for r in scaled] == plain
    np.testing.assert_array_equal(w_s, net.weight.asnumpy())


def test_loss_scale_cell_errors_and_set_sense_scale():
    net = nn.Dense(3, 2)
    opt = nn.SGD(net.trainable_params(), 0.1)
    wl = nn.WithLossCell(net, nn.MSELoss())
    with pytest.raises(TypeError, match="scale_sense"):
        nn.TrainOneStepWithLossScaleCell(wl, opt, 8.0)
    with pytest.raises(ValueError, match="shape"):
        nn.TrainOneStepWithLossScaleCell(wl, opt, Tensor(np.ones(2, np.float32)))
    cell = nn.TrainOneStepWithLossScaleCell(wl, opt, Tensor(np.array([4.0], np.float32)))
    cell.set_sense_scale(Tensor(np.array([2.0], np.float32)))
    assert cell.scale_sense.asnumpy().tolist() == [2.0]
    with pytest.raises(TypeError, match="sens"):
        cell.set_sense_scale(2.0)
    with pytest.raises(ValueError, match="positive"):
        nn.DynamicLossScaleUpdateCell(8.0, 0, 10)
    with pytest.raises(TypeError, match="loss_scale_value"):
        nn.FixedLossScaleUpdateCell("8")
