"""Optimizers against NumPy implementations of MindSpore's formulas (../shared/reference/mindspore_api.md §5):
Adam (plain, Nesterov, AMSGrad, weight decay with the 'beta'/'gamma' name filter, loss scale), SGD (momentum,
dampening, Nesterov, weight decay), Momentum; learning-rate forms, parameter groups, validation, and an end-to-end
training run of the seed program's network."""
import math

import numpy as np
import pytest

import kiln as ms
from kiln import Parameter, Tensor, nn

f32 = np.float32


def make_params(seed=0):
    rng = np.random.default_rng(seed)
    shapes = {"fc.weight": (3, 4), "fc.bias": (3,), "norm.beta": (4,), "norm.gamma": (4,)}
    return [Parameter(Tensor(rng.standard_normal(s).astype(f32)), name=n) for n, s in shapes.items()]


def grad_seq(params, steps=5, seed=1):
    rng = np.random.default_rng(seed)
    return [[rng.standard_normal(p.shape).astype(f32) for p in params] for _ in range(steps)]


def run(opt, params, seq):
    for gs in seq:
        assert opt(tuple(Tensor(g) for g in gs)) is True
    return [p.asnumpy() for p in params]


def prep(ws, gs, names, wd, loss_scale):
    """MindSpore's decay (λ·loss_scale, names without beta/gamma) then 1/loss_scale scaling, in float32."""
    out = []
    for w, g, n in zip(ws, gs, names):
        if wd > 0 and "beta" not in n and "gamma" not in n:
            g = w * f32(wd * loss_scale) + g
        if loss_scale != 1.0:
            g = g * f32(1.0 / loss_scale)
        out.append(g)
    return out


def adam_ref(ws, seq, names, lr=1e-3, b1=0.9, b2=0.999, eps=1e-8, nesterov=False, wd=0.0, loss_scale=1.0,
             amsgrad=False):
    ws = [w.copy() for w in ws]
    m = [np.zeros_like(w) for w in ws]
    v = [np.zeros_like(w) for w in ws]
    vh = [np.zeros_like(w) for w in ws]
    b1p = b2p = f32(1)
    for gs in seq:
        gs = prep(ws, gs, names, wd, loss_scale)
        b1p, b2p = f32(b1p * f32(b1)), f32(b2p * f32(b2))
        lr_t = f32(float(f32(lr)) * math.sqrt(1 - float(b2p)) / (1 - float(b1p)))
        for i, g in enumerate(gs):
            m[i] = f32(b1) * m[i] + f32(1 - b1) * g
            v[i] = f32(b2) * v[i] + f32(1 - b2) * g * g
            num = f32(b1) * m[i] + f32(1 - b1) * g if nesterov else m[i]
            den = v[i]
            if amsgrad:
                vh[i] = np.maximum(vh[i], v[i])
                den = vh[i]
            ws[i] = ws[i] - lr_t * num / (np.sqrt(den) + f32(eps))
    return ws


def sgd_ref(ws, seq, lrs, momentum=0.0, dampening=0.0, wd=0.0, nesterov=False, loss_scale=1.0, names=None):
    """names: with wd > 0, parameters whose name holds 'beta'/'gamma' are not decayed (MindSpore's filter)."""
    ws = [w.copy() for w in ws]
    acc = [np.zeros_like(w) for w in ws]
    for step, gs in enumerate(seq):
        lr = f32(lrs[min(step, len(lrs) - 1)])
        for i, g in enumerate(gs):
            if loss_scale != 1.0:
                g = g * f32(1 / loss_scale)
            if names is None or ("beta" not in names[i] and "gamma" not in names[i]):
                g = g + f32(wd) * ws[i]
            if momentum > 0:
                acc[i] = g if step == 0 else f32(momentum) * acc[i] + f32(1 - dampening) * g
                upd = g + f32(momentum) * acc[i] if nesterov else acc[i]
            else:
                upd = g
            ws[i] = ws[i] - lr * upd
    return ws


def momentum_ref(ws, seq, names, lrs, momentum, nesterov=False, wd=0.0, loss_scale=1.0):
    ws = [w.copy() for w in ws]
    acc = [np.zeros_like(w) for w in ws]
    for step, gs in enumerate(seq):
        lr = f32(lrs[min(step, len(lrs) - 1)])
        gs = prep(ws, gs, names, wd, loss_scale)
        for i, g in enumerate(gs):
            acc[i] = f32(momentum) * acc[i] + g
            ws[i] = ws[i] - lr * (g + f32(momentum) * acc[i] if nesterov else acc[i])
    return ws


def check(got, want, rtol=2e-5, atol=1e-6):
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


# ------------------------------------------------------------------------------------------------------ Adam
@pytest.mark.parametrize("kw", [
    {},
    {"use_nesterov": True},
    {"weight_decay": 0.1},
    {"weight_decay": 0.05, "loss_scale": 8.0, "use_nesterov": True},
    {"use_amsgrad": True, "beta1": 0.8, "eps": 1e-6},
])
def test_adam_matches_numpy(kw):
    params = make_params()
    names = [p.name for p in params]
    w0 = [p.asnumpy().copy() for p in params]
    seq = grad_seq(params)
    opt = nn.Adam(params, learning_rate=0.01, **kw)
    got = run(opt, params, seq)
    want = adam_ref(w0, seq, names, lr=0.01, b1=kw.get("beta1", 0.9), eps=kw.get("eps", 1e-8),
                    nesterov=kw.get("use_nesterov", False), wd=kw.get("weight_decay", 0.0),
                    loss_scale=kw.get("loss_scale", 1.0), amsgrad=kw.get("use_amsgrad", False))
    check(got, want)
    np.testing.assert_allclose(opt.beta1_power.asnumpy(), [f32(kw.get("beta1", 0.9)) ** 5], rtol=1e-6)
    assert opt.global_step.asnumpy().tolist() == [5]


def test_adam_state_names_and_types():
    params = make_params()
    opt = nn.Adam(params, learning_rate=0.01)
    assert isinstance(opt.parameters, ms.ParameterTuple)
    assert [p.name for p in opt.parameters] == [p.name for p in params]
    assert [p.name for p in opt.moment1] == ["moment1." + p.name for p in params]
    assert [p.name for p in opt.moment2] == ["moment2." + p.name for p in params]
    assert opt.beta1_power.name == "beta1_power" and opt.beta2_power.name == "beta2_power"
    assert opt.beta1_power.shape == () and opt.beta2_power.shape == ()  # as MindSpore: a MindSpore Adam checkpoint loads
    assert opt.beta1_power.asnumpy().tolist() == 1.0 and opt.beta1_power.dtype == ms.float32
    assert opt.learning_rate.name == "learning_rate" and opt.learning_rate.shape == ()
    np.testing.assert_allclose(float(opt.learning_rate), 0.01, rtol=1e-7)
    assert opt.global_step.name == "global_step" and opt.global_step.dtype == ms.int32
    names = [p.name for p in opt.get_parameters()]
    assert names[:2] == ["global_step", "learning_rate"]
    assert "moment1.fc.weight" in names and "beta2_power" in names
    # weight decay skips 'beta'/'gamma' names
    assert opt.decay_flags == (True, True, False, False)


def test_adam_validation():
    params = make_params()
    with pytest.raises(TypeError):
        nn.Adam(params, beta1=1)
    with pytest.raises(ValueError):
        nn.Adam(params, beta1=1.0)
    with pytest.raises(ValueError):
        nn.Adam(params, beta2=0.0)
    with pytest.raises(ValueError):
        nn.Adam(params, eps=0.0)
    with pytest.raises(TypeError):
        nn.Adam(params, use_nesterov=1)
    with pytest.raises(ValueError):
        nn.Adam(params, use_lazy=True, use_offload=True)
    with pytest.raises(ValueError):
        nn.Adam(params, bogus=True)
    with pytest.raises(ValueError):
        nn.Adam(params, learning_rate=-1.0)
    with pytest.raises(ValueError, match="can not be None"):
        nn.Adam(None)
    with pytest.raises(ValueError, match="must not be empty"):
        nn.Adam([])
    with pytest.raises(TypeError):
        nn.Adam([params[0], 3])
    with pytest.raises(TypeError):
        nn.Adam(params, loss_scale="1")
    with pytest.raises(ValueError):
        nn.Adam(params, loss_scale=0.0)
    with pytest.raises(ValueError):
        nn.Adam(params, weight_decay=-0.1)
    with pytest.raises(TypeError):
        nn.Adam(params, learning_rate="0.1")
    with pytest.raises(ValueError):
        nn.Adam(params, learning_rate=Tensor(np.ones((2, 2), f32)))


def test_bad_gradients():
    params = make_params()
    opt = nn.Adam(params)
    grads = [Tensor(np.zeros(p.shape, f32)) for p in params]
    with pytest.raises(ValueError) as e:
        opt(tuple(grads[:3]))
    assert "(3)" in str(e.value) and "(4)" in str(e.value)
    with pytest.raises(ValueError, match="fc.weight"):
        opt((Tensor(np.zeros((4, 3), f32)),) + tuple(grads[1:]))
    with pytest.raises(TypeError):
        opt(grads[0])
    with pytest.raises(TypeError):
        opt((None,) + tuple(grads[1:]))
    # nothing was updated by the rejected calls
    assert opt.global_step.asnumpy().tolist() == [0]
    assert opt(grads) is True  # a list is accepted


# ------------------------------------------------------------------------------------------------------- SGD
@pytest.mark.parametrize("kw", [
    {},
    {"momentum": 0.9},
    {"momentum": 0.9, "dampening": 0.3},
    {"momentum": 0.8, "nesterov": True},
    {"momentum": 0.9, "weight_decay": 0.1, "loss_scale": 4.0},
    {"weight_decay": 0.2},
])
def test_sgd_matches_numpy(kw):
    params = make_params()
    w0 = [p.asnumpy().copy() for p in params]
    seq = grad_seq(params)
    opt = nn.SGD(params, learning_rate=0.05, **kw)
    got = run(opt, params, seq)
    want = sgd_ref(w0, seq, [0.05], momentum=kw.get("momentum", 0.0), dampening=kw.get("dampening", 0.0),
                   wd=kw.get("weight_decay", 0.0), nesterov=kw.get("nesterov", False),
                   loss_scale=kw.get("loss_scale", 1.0), names=[p.name for p in params])
    check(got, want)
    assert [p.name for p in opt.accum] == ["accum." + p.name for p in params]
    assert [p.name for p in opt.stat] == ["stat." + p.name for p in params]
    assert opt.momentum.name == "momentum"


def test_sgd_validation():
    params = make_params()
    with pytest.raises(ValueError):
        nn.SGD(params, momentum=-0.1)
    with pytest.raises(ValueError):
        nn.SGD(params, momentum=0.0, nesterov=True)
    with pytest.raises(ValueError):
        nn.SGD(params, momentum=0.9, dampening=0.1, nesterov=True)
    with pytest.raises(TypeError):
        nn.SGD(params, momentum="0.9")
    with pytest.raises(TypeError):
        nn.SGD(params, weight_decay=nn.ExponentialDecayLR(0.1, 0.9, 1))
    assert nn.SGD(params, momentum=1).momentum.dtype == ms.float32  # ints are converted


# -------------------------------------------------------------------------------------------------- Momentum
@pytest.mark.parametrize("kw", [{}, {"use_nesterov": True}, {"weight_decay": 0.1, "loss_scale": 2.0}])
def test_momentum_matches_numpy(kw):
    params = make_params()
    names = [p.name for p in params]
    w0 = [p.asnumpy().copy() for p in params]
    seq = grad_seq(params)
    opt = nn.Momentum(params, 0.1, 0.9, **kw)
    got = run(opt, params, seq)
    want = momentum_ref(w0, seq, names, [0.1], 0.9, nesterov=kw.get("use_nesterov", False),
                        wd=kw.get("weight_decay", 0.0), loss_scale=kw.get("loss_scale", 1.0))
    check(got, want)
    assert [p.name for p in opt.moments] == ["moments." + n for n in names]


def test_momentum_validation():
    params = make_params()
    with pytest.raises(TypeError):
        nn.Momentum(params, 0.1, 1)  # momentum must be a float
    with pytest.raises(ValueError):
        nn.Momentum(params, 0.1, -0.5)
    with pytest.raises(TypeError):
        nn.Momentum(params, learning_rate=0.1)  # momentum is required


# ------------------------------------------------------------------------------------------- learning rates
def test_learning_rate_list_per_step_and_past_end():
    params = make_params()
    w0 = [p.asnumpy().copy() for p in params]
    seq = grad_seq(params)
    lrs = [0.1, 0.2, 0.3]
    opt = nn.SGD(params, learning_rate=lrs)
    assert opt.dynamic_lr
    got = run(opt, params, seq)
    check(got, sgd_ref(w0, seq, lrs))


def test_learning_rate_tensor_forms():
    params = make_params()
    w0 = [p.asnumpy().copy() for p in params]
    seq = grad_seq(params)
    opt = nn.SGD(params, learning_rate=Tensor(np.array([0.3, 0.2, 0.1, 0.05, 0.01], f32)))
    check(run(opt, params, seq), sgd_ref(w0, seq, [0.3, 0.2, 0.1, 0.05, 0.01]))
    params = make_params()
    opt = nn.SGD(params, learning_rate=Tensor(np.array(0.2, np.float64)))
    assert not opt.dynamic_lr and opt.learning_rate.dtype == ms.float32
    check(run(opt, params, seq), sgd_ref(w0, seq, [0.2]))


def test_learning_rate_schedule_and_get_lr():
    params = make_params()
    w0 = [p.asnumpy().copy() for p in params]
    seq = grad_seq(params)
    sched = nn.ExponentialDecayLR(0.1, 0.5, 2)
    opt = nn.SGD(params, learning_rate=sched)
    check(run(opt, params, seq), sgd_ref(w0, seq, [0.1 * 0.5 ** (i / 2) for i in range(5)]))
    stair = nn.ExponentialDecayLR(0.1, 0.5, 2, is_stair=True)
    np.testing.assert_allclose(float(stair(Tensor(np.array([3], np.int32)))), 0.05, rtol=1e-6)
    warm = nn.WarmUpLR(0.1, 4)
    np.testing.assert_allclose(float(warm(Tensor(np.array([2], np.int32)))), 0.05, rtol=1e-6)
    cos = nn.CosineDecayLR(0.01, 0.1, 4)
    np.testing.assert_allclose(float(cos(Tensor(np.array([2], np.int32)))), 0.055, rtol=1e-6)
    poly = nn.PolynomialDecayLR(0.1, 0.01, 4, 2.0)
    np.testing.assert_allclose(float(poly(Tensor(np.array([2], np.int32)))), 0.09 * 0.25 + 0.01, rtol=1e-6)
    # get_lr: the fixed lr Parameter; a dynamic lr for the current step (and, as MindSpore, a step increment)
    fixed = nn.Adam(make_params(), learning_rate=0.02)
    assert fixed.get_lr() is fixed.learning_rate
    dyn = nn.Adam(make_params(), learning_rate=[0.5, 0.25])
    np.testing.assert_allclose(float(dyn.get_lr()), 0.5)
    np.testing.assert_allclose(float(dyn.get_lr()), 0.25)


def test_group_params():
    params = make_params()
    names = [p.name for p in params]
    w0 = [p.asnumpy().copy() for p in params]
    seq = grad_seq(params)
    groups = [{"params": params[:2], "lr": 0.5, "weight_decay": 0.1}, {"params": params[2:]}]
    opt = nn.Momentum(groups, learning_rate=0.1, momentum=0.9, weight_decay=0.0)
    assert opt.is_group and opt.is_group_lr
    assert [p.name for p in opt.learning_rate] == ["learning_rate_group_0", "learning_rate_group_0",
                                                   "learning_rate", "learning_rate"]
    got = run(opt, params, seq)
    want_a = momentum_ref(w0[:2], [g[:2] for g in seq], names[:2], [0.5], 0.9, wd=0.1)
    want_b = momentum_ref(w0[2:], [g[2:] for g in seq], names[2:], [0.1], 0.9)
    check(got, want_a + want_b)
    lr = opt.get_lr_parameter(params[0])
    assert lr.name == "learning_rate_group_0"


def test_group_params_order_and_errors():
    params = make_params()
    groups = [{"params": params[2:]}, {"params": params[:2], "lr": 0.01}, {"order_params": params}]
    opt = nn.Adam(groups, learning_rate=0.1)
    assert [p.name for p in opt.parameters] == [p.name for p in params]
    with pytest.raises(KeyError):
        nn.Adam([{"params": params, "bogus": 1}])
    with pytest.raises(RuntimeError):
        nn.Adam([{"params": params}, {"params": params[:1]}])
    with pytest.raises(TypeError):
        nn.Adam([{"params": params}, params[0]])


def test_group_dynamic_lr():
    params = make_params()
    w0 = [p.asnumpy().copy() for p in params]
    seq = grad_seq(params)
    groups = [{"params": params[:2], "lr": [0.3, 0.2, 0.1, 0.1, 0.1]}, {"params": params[2:]}]
    opt = nn.SGD(groups, learning_rate=0.05)
    assert opt.dynamic_lr and opt.is_group_lr
    got = run(opt, params, seq)
    want = sgd_ref(w0[:2], [g[:2] for g in seq], [0.3, 0.2, 0.1]) + \
        sgd_ref(w0[2:], [g[2:] for g in seq], [0.05])
    check(got, want)


def test_adam_weight_decay():
    params = make_params()
    names = [p.name for p in params]
    w0 = [p.asnumpy().copy() for p in params]
    seq = grad_seq(params)
    opt = nn.AdamWeightDecay(params, learning_rate=0.01, weight_decay=0.1)
    got = run(opt, params, seq)
    ws = [w.copy() for w in w0]
    m = [np.zeros_like(w) for w in ws]
    v = [np.zeros_like(w) for w in ws]
    for gs in seq:
        for i, g in enumerate(gs):
            m[i] = f32(0.9) * m[i] + f32(0.1) * g
            v[i] = f32(0.999) * v[i] + f32(1 - 0.999) * g * g
            u = m[i] / (np.sqrt(v[i]) + f32(1e-6))
            if "beta" not in names[i] and "gamma" not in names[i]:
                u = u + f32(0.1) * ws[i]
            ws[i] = ws[i] - f32(0.01) * u
    check(got, ws)
    assert [p.name for p in opt.moments1] == ["adam_m." + n for n in names]


# ---------------------------------------------------------------------------------------------- end to end
class SimpleMLP(nn.Cell):
    def __init__(self, input_size, hidden_size, output_size):
        super().__init__()
        self.fc1 = nn.Dense(input_size, hidden_size)
        self.relu = nn.ReLU()
        self.fc2 = nn.Dense(hidden_size, output_size)

    def construct(self, x):
        return self.fc2(self.relu(self.fc1(x)))


def test_end_to_end_training_decreases_loss():
    ms.set_seed(0)
    net = SimpleMLP(10, 16, 1)
    loss_fn = nn.MSELoss()
    optimizer = nn.Adam(net.trainable_params(), learning_rate=0.01)

    def forward_fn(data, label):
        logits = net(data)
        return loss_fn(logits, label), logits

    grad_fn = ms.value_and_grad(forward_fn, None, optimizer.parameters, has_aux=True)
    rng = np.random.default_rng(0)
    data = Tensor(rng.standard_normal((32, 10)).astype(f32))
    label = Tensor(rng.standard_normal((32, 1)).astype(f32))
    losses = []
    for _ in range(50):
        (loss, logits), grads = grad_fn(data, label)
        assert len(grads) == 4 and logits.shape == (32, 1) and loss.shape == ()
        optimizer(grads)
        losses.append(float(loss))
    assert losses[-1] < 0.7 * losses[0]
    assert all(np.isfinite(losses))
    assert optimizer.global_step.asnumpy().tolist() == [50]


def test_dynamic_lr_lists():
    # Expected values: the examples of MindSpore's documentation of these functions.
    np.testing.assert_allclose(nn.piecewise_constant_lr([2, 5, 10], [0.1, 0.05, 0.01]),
                               [0.1, 0.1, 0.05, 0.05, 0.05, 0.01, 0.01, 0.01, 0.01, 0.01])
    np.testing.assert_allclose(nn.exponential_decay_lr(0.1, 0.9, 6, 2, 1), [0.1, 0.1, 0.09, 0.09, 0.081, 0.081])
    np.testing.assert_allclose(nn.natural_exp_decay_lr(0.1, 0.9, 6, 2, 2, True),
                               [0.1, 0.1, 0.1, 0.1, 0.016529888822158657, 0.016529888822158657])
    np.testing.assert_allclose(nn.inverse_decay_lr(0.1, 0.5, 6, 1, 1, True),
                               [0.1, 0.1 / 1.5, 0.05, 0.04, 0.1 / 3, 0.1 / 3.5])
    np.testing.assert_allclose(nn.cosine_decay_lr(0.01, 0.1, 6, 2, 2), [0.1, 0.1, 0.055, 0.055, 0.01, 0.01])
    np.testing.assert_allclose(nn.polynomial_decay_lr(0.1, 0.01, 6, 2, 2, 0.5),
                               [0.1, 0.1, 0.07363961030678928, 0.07363961030678928, 0.01, 0.01])
    np.testing.assert_allclose(nn.warmup_lr(0.1, 6, 2, 2), [0.0, 0.0, 0.05, 0.05, 0.1, 0.1])
    with pytest.raises(ValueError):
        nn.piecewise_constant_lr([2, 5], [0.1])
    with pytest.raises(TypeError):
        nn.exponential_decay_lr(1, 0.9, 6, 2, 1)
    with pytest.raises(ValueError):
        nn.cosine_decay_lr(0.1, 0.01, 6, 2, 2)
