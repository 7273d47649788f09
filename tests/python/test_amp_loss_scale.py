"""Loss scaling: float16 overflow, amp.all_finite, the scalers' state machines (MindSpore 2.10-verified sequences),
the update cells, and TrainOneStepWithLossScaleCell skipping an overflowing step in PyNative and Graph mode; the
O2 loss curve against float32 on the LeNet example. The seeds with the O2 tip: test_amp_seeds.py."""
import os
import sys

import numpy as np
import pytest

import kiln as ms
from kiln import nn, ops, amp, Tensor, Parameter

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def test_float16_overflows_to_inf_and_bfloat16_does_not():
    big = Tensor(np.array([60000.0, -60000.0, 1.0], np.float32))
    h = big.astype(ms.float16) * Tensor(np.array(2.0, np.float16))
    assert h.dtype == ms.float16
    np.testing.assert_array_equal(h.asnumpy(), np.array([np.inf, -np.inf, 2.0], np.float16))
    np.testing.assert_array_equal(Tensor(np.array([1e5], np.float32)).astype(ms.float16).asnumpy(), [np.inf])
    b = (big.astype(ms.bfloat16) * 2).astype(ms.float32).asnumpy()
    assert np.isfinite(b).all() and abs(b[0] - 120000) / 120000 < 1e-2


def test_all_finite():
    f = amp.all_finite
    assert f([Tensor([1.0, 2.0]), Tensor([[3.0]])]).asnumpy() == np.True_
    assert f((Tensor([1.0, np.inf]), Tensor([1.0]))).asnumpy() == np.False_
    assert f([Tensor([1.0]), Tensor([-np.inf])]).asnumpy() == np.False_
    assert f([Tensor([np.nan], ms.float32)]).asnumpy() == np.False_
    assert f([Tensor(np.array([65504.0], np.float16))]).asnumpy() == np.True_
    assert f([Tensor(np.array([np.inf], np.float16))]).asnumpy() == np.False_
    assert f([Tensor([1.0]).astype(ms.bfloat16)]).asnumpy() == np.True_
    assert f([Tensor([1, 2])]).asnumpy() == np.True_  # integers are always finite
    assert f([]).asnumpy() == np.True_
    r = f([Tensor([3.4e38, -3.4e38])])
    assert r.shape == () and r.dtype == ms.bool_ and r.asnumpy() == np.True_
    with pytest.raises(TypeError, match="all_finite"):
        f(Tensor([1.0]))
    with pytest.raises(TypeError, match="element 1"):
        f([Tensor([1.0]), 2.0])


def test_static_loss_scaler():
    s = amp.StaticLossScaler(1024)
    assert s.scale_value.dtype == ms.float32 and float(s.scale_value.asnumpy()) == 1024.0
    out = s.unscale((Tensor(np.array([1.5, 1.0]), ms.float16), Tensor(np.array([1.2]), ms.float16)))
    # MindSpore 2.10: [1.4648e-03, 9.7656e-04], [1.1721e-03]
    assert isinstance(out, tuple) and out[0].dtype == ms.float16
    np.testing.assert_array_equal(out[0].asnumpy(), np.array([1.4648e-03, 9.7656e-04], np.float16))
    np.testing.assert_array_equal(out[1].asnumpy(), np.array([1.1721e-03], np.float16))
    np.testing.assert_array_equal(s.scale(Tensor([0.5])).asnumpy(), [512.0])
    assert s.adjust(Tensor(False)) is False and float(s.scale_value.asnumpy()) == 1024.0
    for bad, err in ((0.5, ValueError), (True, TypeError), ("2", TypeError)):
        with pytest.raises(err, match="scale_value"):
            amp.StaticLossScaler(bad)
    with pytest.raises(TypeError, match="element 0"):
        s.scale([1.0])


def _run_scaler(s, flags):
    out = []
    for f in flags:
        assert s.adjust(Tensor(f)) is True
        out.append((float(s.scale_value.asnumpy()), int(s.counter.asnumpy())))
    return out


def test_dynamic_loss_scaler_state_machine():
    # Sequences printed by MindSpore 2.10 for the same calls.
    s = amp.DynamicLossScaler(1024, 2, 3)
    assert _run_scaler(s, [True, True, True, True, False, False, True, True, True]) == [
        (1024.0, 1), (1024.0, 2), (2048.0, 0), (2048.0, 1), (1024.0, 0), (512.0, 0), (512.0, 1), (512.0, 2),
        (1024.0, 0)]
    s = amp.DynamicLossScaler(2, 2, 1)  # floor at 1, then growth again
    assert [v for v, _ in _run_scaler(s, [False, False, False, True])] == [1.0, 1.0, 1.0, 2.0]
    s = amp.DynamicLossScaler(3e38, 2, 1)  # no growth past float32's max
    _run_scaler(s, [True, True])
    assert float(s.scale_value.asnumpy()) == float(np.float32(3e38))
    for args, err, what in (((1024, 0, 3), ValueError, "scale_factor"), ((1024, 2, 0), ValueError, "scale_window"),
                            ((1024, 2.0, 3), TypeError, "scale_factor"), ((0.9, 2, 3), ValueError, "scale_value")):
        with pytest.raises(err, match=what):
            amp.DynamicLossScaler(*args)
    with pytest.raises(TypeError, match="grads_finite"):
        amp.DynamicLossScaler(4, 2, 1).adjust(True)


def test_dynamic_loss_scaler_in_a_compiled_step_matches_pynative():
    """The tutorial's step with the branch written as a select: the scaler's Parameters update inside the graph."""
    def make():
        ms.set_seed(0)
        net = nn.Dense(4, 2)
        opt = nn.SGD(net.trainable_params(), 0.1)
        scaler = amp.DynamicLossScaler(2 ** 16, 2, 2)

        def forward(x, y):
            return scaler.scale(nn.MSELoss()(net(x), y))
        grad_fn = ms.value_and_grad(forward, None, net.trainable_params())

        def step(x, y):
            loss, grads = grad_fn(x, y)
            finite = amp.all_finite(grads)
            grads = scaler.unscale(grads)
            grads = tuple(ops.select(finite, g, ops.zeros_like(g)) for g in grads)
            loss = ops.depend(scaler.unscale(loss), opt(grads))
            scaler.adjust(finite)
            return loss
        return net, scaler, step

    x = Tensor(np.ones((3, 4), np.float32))
    y = Tensor(np.zeros((3, 2), np.float32))
    results = []
    for compiled in (False, True):
        net, scaler, step = make()
        fn = ms.jit(step) if compiled else step
        losses = [float(fn(x, y).asnumpy()) for _ in range(5)]
        results.append((losses, float(scaler.scale_value.asnumpy()), int(scaler.counter.asnumpy()),
                        net.weight.asnumpy().copy()))
    assert results[0][1] == results[1][1] == 2 ** 18 and results[0][2] == results[1][2] == 1
    assert results[0][0] == results[1][0]
    np.testing.assert_array_equal(results[0][3], results[1][3])


def test_dynamic_loss_scale_update_cell():
    cell = nn.DynamicLossScaleUpdateCell(1024, 2, 3)
    p = Parameter(Tensor(1024.0, ms.float32), name="s")
    seq = []
    for f in [False, False, False, False, True, False, False, False]:
        cell(p, Tensor(f))
        seq.append(float(p.asnumpy()))
    assert seq == [1024.0, 1024.0, 2048.0, 2048.0, 1024.0, 1024.0, 1024.0, 2048.0]  # MindSpore 2.10's
    cell = nn.DynamicLossScaleUpdateCell(2, 2, 1)
    p = Parameter(Tensor(2.0, ms.float32), name="s")
    for _ in range(3):
        cell(p, Tensor(True))
    assert float(p.asnumpy()) == 1.0  # floor
    cell = nn.DynamicLossScaleUpdateCell(3e38, 2, 1)
    p = Parameter(Tensor(3e38, ms.float32), name="s")
    cell(p, Tensor(False))
    assert float(p.asnumpy()) == float(np.float32(3e38))  # no growth to inf


def _scaled_step(scale, mode):
    ms.set_context(mode=mode)
    ms.set_seed(0)
    net = nn.Dense(3, 2)
    opt = nn.Momentum(net.trainable_params(), 0.1, 0.9)
    upd = nn.DynamicLossScaleUpdateCell(scale, 2, 1000)
    return net, opt, nn.TrainOneStepWithLossScaleCell(nn.WithLossCell(net, nn.MSELoss()), opt, scale_sense=upd)


@pytest.mark.parametrize("mode", [ms.PYNATIVE_MODE, ms.GRAPH_MODE])
def test_an_overflowing_step_leaves_weights_unchanged(mode):
    try:
        x = Tensor(np.full((2, 3), 1e30, np.float32))  # (1e30)^2 * scale overflows float32
        y = Tensor(np.zeros((2, 2), np.float32))
        net, opt, step = _scaled_step(2.0 ** 10, mode)
        w0 = net.weight.asnumpy().copy()
        moments0 = [m.asnumpy().copy() for m in opt.moments]
        loss, cond, scale = step(x, y)
        assert bool(cond.asnumpy()) and float(scale.asnumpy()) == 1024.0
        np.testing.assert_array_equal(net.weight.asnumpy(), w0)
        for m, m0 in zip(opt.moments, moments0):
            np.testing.assert_array_equal(m.asnumpy(), m0)
        assert float(step.scale_sense.asnumpy()) == 512.0  # halved
        # a finite step then updates the weights
        x = Tensor(np.ones((2, 3), np.float32))
        _, cond, scale = step(x, y)
        assert not bool(cond.asnumpy()) and float(scale.asnumpy()) == 512.0
        assert not np.array_equal(net.weight.asnumpy(), w0)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


def test_loss_scaled_training_is_the_same_in_both_modes():
    def run(mode):
        try:
            net, _, step = _scaled_step(2.0 ** 20, mode)
            rng = np.random.default_rng(0)
            out = []
            for i in range(6):
                x = Tensor((rng.standard_normal((4, 3)) * (1e19 if i == 2 else 1)).astype(np.float32))
                loss, cond, scale = step(x, Tensor(np.zeros((4, 2), np.float32)))
                out.append((float(loss.asnumpy()), bool(cond.asnumpy()), float(scale.asnumpy())))
            return out, net.weight.asnumpy()
        finally:
            ms.set_context(mode=ms.PYNATIVE_MODE)
    a, b = run(ms.PYNATIVE_MODE), run(ms.GRAPH_MODE)
    assert a[0] == b[0] and [c for _, c, _ in a[0]] == [False, False, True, False, False, False]
    np.testing.assert_array_equal(a[1], b[1])


def test_o2_loss_curve_within_a_few_percent_of_float32_on_lenet():
    sys.path.insert(0, os.path.join(REPO, "examples"))
    try:
        import train_lenet_digits as ex
    finally:
        sys.path.pop(0)
    (x, y), _ = ex.load_data()
    curves = {}
    for level, dtype in (("O0", ms.float16), ("O2", ms.bfloat16), ("O2", ms.float16)):
        ms.set_seed(1)
        net = ex.LeNet()
        net.dropout.p = 0.0  # the curves compare precision, not dropout masks
        net = amp.auto_mixed_precision(net, level, dtype)
        opt = nn.Adam(net.trainable_params(), learning_rate=0.005)
        step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True,
                                                                                         reduction="mean")), opt)
        step.set_train()
        losses = []
        for i in range(0, 64 * 10, 64):
            losses.append(float(step(Tensor(x[i:i + 64]), Tensor(y[i:i + 64])).asnumpy()))
        curves[(level, str(dtype))] = np.array(losses)
    ref = curves[("O0", "Float16")]
    assert ref[-1] < 0.6 * ref[0]
    for key, c in curves.items():
        assert np.all(np.abs(c - ref) <= 0.05 * ref + 0.02), (key, c, ref)
