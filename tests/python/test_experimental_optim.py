"""kiln.experimental.optim (MindSpore 2.10's mindspore.experimental.optim): every optimizer's trajectory against a
NumPy implementation of its formula, per-group options, eager / compiled / inside-a-jit parity, add_param_group,
argument errors."""
import numpy as np
import pytest

import kiln as ms
from kiln import Parameter, Tensor, nn
from kiln.experimental import optim

RNG = np.random.default_rng(7)
W0 = [RNG.standard_normal(3).astype(np.float32), RNG.standard_normal((2, 2)).astype(np.float32)]
GRADS = [[RNG.standard_normal(w.shape).astype(np.float32) for w in W0] for _ in range(5)]
# The sign of gradient 0 flips at step 3 (Rprop's sign logic), a zero entry at step 2.
GRADS[2][0][1] = 0.0
GRADS[3][0] = -GRADS[2][0]


# ----------------------------------------------------------------------- NumPy references (float64)
# Formulas: PyTorch's torch.optim documentation ("Algorithm" sections), which MindSpore 2.10's
# mindspore.experimental.optim documentation reproduces; Adam as MindSpore's (its fused kernel, ε after the bias
# correction; see kiln.experimental.optim.Adam).
def _g(w, g, o, maximize_key="maximize"):
    g = -g if o.get(maximize_key, False) else g
    return g + o.get("weight_decay", 0.0) * w


def ref_adam(w, grads, o):
    b1, b2 = o["betas"]
    m = v = vmax = 0.0
    for t, g in enumerate(grads, 1):
        g = _g(w, g, o)
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        vmax = np.maximum(vmax, v)
        d = vmax if o["amsgrad"] else v
        w = w - o["lr"] * np.sqrt(1 - b2 ** t) / (1 - b1 ** t) * m / (np.sqrt(d) + o["eps"])
    return w


def ref_adamw(w, grads, o):
    b1, b2 = o["betas"]
    m = v = 0.0
    for t, g in enumerate(grads, 1):
        g = -g if o["maximize"] else g
        w = w * (1 - o["lr"] * o["weight_decay"])
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        w = w - o["lr"] / (1 - b1 ** t) * m / (np.sqrt(v) / np.sqrt(1 - b2 ** t) + o["eps"])
    return w


def ref_sgd(w, grads, o):
    b = None
    for g in grads:
        g = _g(w, g, o)
        if o["momentum"]:
            b = g if b is None else o["momentum"] * b + (1 - o["dampening"]) * g
            g = g + o["momentum"] * b if o["nesterov"] else b
        w = w - o["lr"] * g
    return w


def ref_adadelta(w, grads, o):
    a = u = 0.0
    rho, eps = o["rho"], o["eps"]
    for g in grads:
        g = _g(w, g, o)
        a = rho * a + (1 - rho) * g * g
        d = np.sqrt(u + eps) / np.sqrt(a + eps) * g
        u = rho * u + (1 - rho) * d * d
        w = w - o["lr"] * d
    return w


def ref_adagrad(w, grads, o):
    s = o["initial_accumulator_value"]
    for t, g in enumerate(grads, 1):
        g = _g(w, g, o)
        s = s + g * g
        w = w - o["lr"] / (1 + (t - 1) * o["lr_decay"]) * g / (np.sqrt(s) + o["eps"])
    return w


def ref_adamax(w, grads, o):
    b1, b2 = o["betas"]
    m = u = 0.0
    for t, g in enumerate(grads, 1):
        g = _g(w, g, o)
        m = b1 * m + (1 - b1) * g
        u = np.maximum(b2 * u, np.abs(g) + o["eps"])
        w = w - o["lr"] / (1 - b1 ** t) * m / u
    return w


def ref_asgd(w, grads, o):
    lr, lambd, alpha, t0 = o["lr"], o["lambd"], o["alpha"], o["t0"]
    eta, mu, ax = lr, 1.0, np.zeros_like(w)
    for t, g in enumerate(grads, 1):
        g = _g(w, g, o)
        w = w * (1 - lambd * eta) - eta * g
        ax = w if mu == 1 else ax + mu * (w - ax)
        eta = lr / (1 + lambd * lr * t) ** alpha
        mu = 1 / max(1, t - t0)
    return w


def ref_nadam(w, grads, o):
    b1, b2 = o["betas"]
    m = v = 0.0
    prod = 1.0
    for t, g in enumerate(grads, 1):
        g = _g(w, g, o)
        mu = b1 * (1 - 0.5 * 0.96 ** (t * o["momentum_decay"]))
        mu_next = b1 * (1 - 0.5 * 0.96 ** ((t + 1) * o["momentum_decay"]))
        prod *= mu
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        d = np.sqrt(v / (1 - b2 ** t)) + o["eps"]
        w = w - o["lr"] * (1 - mu) / (1 - prod) * g / d - o["lr"] * mu_next / (1 - prod * mu_next) * m / d
    return w


def ref_radam(w, grads, o):
    b1, b2 = o["betas"]
    m = v = 0.0
    rho_inf = 2 / (1 - b2) - 1
    for t, g in enumerate(grads, 1):
        g = _g(w, g, o)
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        m_hat = m / (1 - b1 ** t)
        rho_t = rho_inf - 2 * t * b2 ** t / (1 - b2 ** t)
        if rho_t > 5:
            r = np.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            w = w - o["lr"] * m_hat * r * np.sqrt(1 - b2 ** t) / (np.sqrt(v) + o["eps"])
        else:
            w = w - o["lr"] * m_hat
    return w


def ref_rmsprop(w, grads, o):
    s = gbar = b = 0.0
    a = o["alpha"]
    for g in grads:
        g = _g(w, g, o)
        s = a * s + (1 - a) * g * g
        if o["centered"]:
            gbar = a * gbar + (1 - a) * g
            d = np.sqrt(s - gbar * gbar) + o["eps"]
        else:
            d = np.sqrt(s) + o["eps"]
        if o["momentum"] > 0:
            b = o["momentum"] * b + g / d
            w = w - o["lr"] * b
        else:
            w = w - o["lr"] * g / d
    return w


def ref_rprop(w, grads, o):
    em, ep = o["etas"]
    lo, hi = o["step_sizes"]
    size = np.full_like(w, o["lr"])
    prev = np.zeros_like(w)
    for g in grads:
        g = -g if o["maximize"] else g
        s = np.sign(g * prev)
        size = np.clip(size * np.where(s > 0, ep, np.where(s < 0, em, 1.0)), lo, hi)
        g = np.where(s < 0, 0.0, g)
        prev = g
        w = w - np.sign(g) * size
    return w


# name -> (class, reference, defaults of the reference, group-0 options, group-1 options)
CASES = {
    "Adam": (optim.Adam, ref_adam, dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False,
                                        maximize=False),
             dict(lr=0.05, weight_decay=0.1), dict(lr=0.02, amsgrad=True, betas=(0.8, 0.88), maximize=True)),
    "AdamW": (optim.AdamW, ref_adamw, dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False,
                                           maximize=False),
              dict(lr=0.05), dict(lr=0.02, weight_decay=0.3, maximize=True)),
    "SGD": (optim.SGD, ref_sgd, dict(lr=0.1, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False,
                                     maximize=False),
            dict(momentum=0.9, dampening=0.2, weight_decay=0.05), dict(lr=0.03, momentum=0.8, nesterov=True)),
    "Adadelta": (optim.Adadelta, ref_adadelta, dict(lr=1.0, rho=0.9, eps=1e-6, weight_decay=0.0, maximize=False),
                 dict(rho=0.5, weight_decay=0.1), dict(lr=0.5, maximize=True)),
    "Adagrad": (optim.Adagrad, ref_adagrad, dict(lr=1e-2, lr_decay=0.0, weight_decay=0.0,
                                                 initial_accumulator_value=0.0, eps=1e-10, maximize=False),
                dict(lr=0.1, lr_decay=0.3, initial_accumulator_value=0.5), dict(lr=0.05, weight_decay=0.2)),
    "Adamax": (optim.Adamax, ref_adamax, dict(lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
                                              maximize=False),
               dict(lr=0.05), dict(lr=0.1, betas=(0.5, 0.9), weight_decay=0.1, maximize=True)),
    "ASGD": (optim.ASGD, ref_asgd, dict(lr=0.01, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0.0, maximize=False),
             dict(lr=0.1, lambd=0.1), dict(lr=0.05, t0=2.0, alpha=0.5, weight_decay=0.1)),
    "NAdam": (optim.NAdam, ref_nadam, dict(lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
                                           momentum_decay=4e-3),
              dict(lr=0.05), dict(lr=0.1, momentum_decay=0.1, weight_decay=0.2)),
    "RAdam": (optim.RAdam, ref_radam, dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0),
              dict(lr=0.05), dict(lr=0.1, betas=(0.5, 0.6), weight_decay=0.1)),  # β2 0.6: rectified from step 2
    "RMSprop": (optim.RMSprop, ref_rmsprop, dict(lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0,
                                                 centered=False, maximize=False),
                dict(lr=0.01, centered=True, momentum=0.5), dict(lr=0.02, alpha=0.9, weight_decay=0.1,
                                                                 maximize=True)),
    "Rprop": (optim.Rprop, ref_rprop, dict(lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), maximize=False),
              dict(lr=0.05), dict(lr=0.1, etas=(0.3, 1.5), step_sizes=(0.02, 0.12), maximize=True)),
}


def _make(name):
    cls, _, base, opt0, opt1 = CASES[name]
    ps = [Parameter(Tensor(w.copy()), f"w{i}") for i, w in enumerate(W0)]
    return ps, cls([dict(params=[ps[0]], **opt0), dict(params=[ps[1]], **opt1)], lr=base["lr"])


def _expected(name, steps):
    _, ref, base, opt0, opt1 = CASES[name]
    out = []
    for i, o in enumerate((opt0, opt1)):
        opts = dict(base, **o)
        out.append(ref(W0[i].astype(np.float64), [GRADS[s][i].astype(np.float64) for s in range(steps)], opts))
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_trajectory_matches_numpy_with_per_group_options(name):
    ps, opt = _make(name)
    for s in range(5):
        assert opt(tuple(Tensor(g) for g in GRADS[s])) is True
    for p, want in zip(ps, _expected(name, 5)):
        np.testing.assert_allclose(p.asnumpy(), want, rtol=2e-5, atol=2e-6, err_msg=name)


@pytest.mark.parametrize("name", sorted(CASES))
def test_eager_compiled_and_jit_step_agree(name):
    """The same update eagerly (construct called directly), compiled (optimizer(grads)) and traced inline in a
    @jit training step with value_and_grad."""
    finals = []
    for mode in ("eager", "compiled", "jit"):
        ps, opt = _make(name)
        gs = [tuple(Tensor(g) for g in GRADS[s]) for s in range(3)]
        if mode == "jit":
            @ms.jit
            def step(g0, g1):
                opt((g0, g1))
                return g0
            for g in gs:
                step(*g)
        for g in gs:
            if mode == "eager":
                opt.construct(g)
            elif mode == "compiled":
                opt(g)
        finals.append([p.asnumpy() for p in ps])
    for other in finals[1:]:
        for a, b in zip(finals[0], other):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7, err_msg=name)
    for p, want in zip(finals[0], _expected(name, 3)):
        np.testing.assert_allclose(p, want, rtol=2e-5, atol=2e-6, err_msg=name)


def test_value_and_grad_training_in_both_modes():
    """A tutorial-style training loop (value_and_grad over optimizer.parameters, StepLR) eagerly and in @jit."""
    x = Tensor(np.arange(8, dtype=np.float32).reshape(2, 4) / 8)
    y = Tensor(np.array([[0.5, -1, 2], [1, 0, -0.5]], np.float32))
    results = []
    for use_jit in (False, True):
        net = nn.Dense(4, 3, weight_init="ones", bias_init="zeros")
        optimizer = optim.Adam(net.trainable_params(), lr=0.1)
        scheduler = optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
        loss_fn = nn.MAELoss()
        grad_fn = ms.value_and_grad(lambda d, l: loss_fn(net(d), l), None, optimizer.parameters)

        def train_step(d, l):
            loss, grads = grad_fn(d, l)
            optimizer(grads)
            return loss
        step = ms.jit(train_step) if use_jit else train_step
        losses = []
        for _ in range(4):
            losses.append(float(step(x, y)))
            scheduler.step()
        results.append((losses, net.weight.asnumpy()))
        assert losses[-1] < losses[0]
        np.testing.assert_allclose(float(scheduler.get_last_lr()[0]), 0.025, rtol=1e-6)
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-5)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-5, atol=1e-6)


# ----------------------------------------------------------------------- groups, state, recompilation
def _params(*shapes):
    return [Parameter(Tensor(np.ones(s, np.float32)), f"p{i}") for i, s in enumerate(shapes)]


def test_param_groups_layout_repr_and_lr_parameters():
    a, b = _params(2, 3)
    opt = optim.Adam([{"params": [a], "weight_decay": 0.01, "lr": 0.9, "amsgrad": True},
                      {"params": b, "lr": 0.66, "eps": 1e-6, "betas": (0.8, 0.88), "name": "head"}], lr=0.01)
    g0, g1 = opt.param_groups
    # The group's own keys first, then the defaults in the optimizer's order (MindSpore 2.10's dict order).
    assert list(g0) == ["params", "weight_decay", "lr", "amsgrad", "betas", "eps", "maximize"]
    assert list(g1) == ["params", "lr", "eps", "betas", "name", "weight_decay", "amsgrad", "maximize"]
    assert g1["name"] == "head" and g1["params"] == [b]
    assert isinstance(g0["lr"], Parameter) and g0["lr"].name == "learning_rate_group_0"
    assert opt.lrs == [g0["lr"], g1["lr"]] and opt.group_start_id == [0, 1, 2]
    np.testing.assert_allclose(g1["lr"].value().asnumpy(), 0.66, rtol=1e-7)
    assert repr(opt).startswith("Adam (\nParameter Group 0\n    amsgrad: True\n    betas: (0.9, 0.999)\n")
    assert "    weight_decay: 0.01\n\nParameter Group 1\n" in repr(opt) and repr(opt).endswith("weight_decay: 0.0\n)")


def test_lr_and_options_changed_between_compiled_steps():
    (a,) = _params(3)
    opt = optim.SGD([a], lr=0.1)
    g = (Tensor(np.ones(3, np.float32)),)
    opt(g)
    np.testing.assert_allclose(a.asnumpy(), 0.9, rtol=1e-6)
    ms.ops.assign(opt.param_groups[0]["lr"], Tensor(0.5, ms.float32))  # the lr Parameter, read at run time
    opt(g)
    np.testing.assert_allclose(a.asnumpy(), 0.4, rtol=1e-6)
    opt.param_groups[0]["weight_decay"] = 1.0  # a constant of the compiled update: compiled again
    opt(g)
    np.testing.assert_allclose(a.asnumpy(), 0.4 - 0.5 * (1 + 0.4), rtol=1e-6)


def test_add_param_group_extends_parameters_and_state():
    a, b = _params(2, 3)
    opt = optim.Adagrad([a], lr=0.1, initial_accumulator_value=0.5)
    opt((Tensor(np.ones(2, np.float32)),))
    opt.add_param_group({"params": b, "lr": 0.2})
    assert opt.parameters == (a, b) and opt.group_start_id == [0, 1, 2]
    assert [p.name for p in opt.accum] == ["accum.p0", "accum.p1"]
    np.testing.assert_allclose(opt.accum[1].asnumpy(), 0.5)
    opt((Tensor(np.ones(2, np.float32)), Tensor(np.ones(3, np.float32))))
    # b's first step: lr 0.2 decayed by step 1 (lr_decay 0): 1 − 0.2·1/√1.5
    np.testing.assert_allclose(b.asnumpy(), 1 - 0.2 / np.sqrt(1.5), rtol=1e-6)
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [a]})


def test_float16_parameters():
    p = Parameter(Tensor(np.ones(4, np.float16)), "h")
    for cls, kw in ((optim.Adam, {}), (optim.SGD, {"momentum": 0.9}), (optim.RAdam, {}), (optim.Rprop, {}),
                    (optim.ASGD, {}), (optim.NAdam, {}), (optim.Adamax, {})):
        q = Parameter(Tensor(np.ones(4, np.float16)), "h")
        opt = cls([q], lr=0.1, **kw)
        opt((Tensor(np.full(4, 0.5, np.float16)),))
        assert q.dtype == ms.float16 and np.all(q.asnumpy() < 1), cls.__name__
    del p


# ----------------------------------------------------------------------- errors
@pytest.mark.parametrize("make, exc, match", [
    (lambda p: optim.Adam([p], lr=-0.1), ValueError, "Invalid learning rate: -0.1"),
    (lambda p: optim.Adam([p], lr="0.1"), TypeError, "'lr' must be int, float or a 0-d Tensor, but got str"),
    (lambda p: optim.Adam([p], betas=(1.0, 0.9)), ValueError, "Invalid beta parameter at index 0: 1.0"),
    (lambda p: optim.Adam([p], betas=0.9), TypeError, "'betas' must be a tuple of two floats"),
    (lambda p: optim.Adam([p], amsgrad=1), TypeError, "'amsgrad' must be bool, but got int"),
    (lambda p: optim.Adam([1.0]), TypeError, "can only optimize Parameters, but one of the params is float"),
    (lambda p: optim.Adam([]), ValueError, "must not be empty"),
    (lambda p: optim.Adam(None), ValueError, "can not be None"),
    (lambda p: optim.Adam([{"params": {p}}]), TypeError, "ordered collections"),
    (lambda p: optim.Adam([{"lr": 0.1}]), KeyError, "must have the key 'params'"),
    (lambda p: optim.Adam([{"params": [p], "lr": -1.0}]), ValueError, "must be at least 0.0, but got -1.0"),
    (lambda p: optim.Adam([{"params": [p], "weight_decay": "x"}]), TypeError, "'weight_decay' must be int or float"),
    (lambda p: optim.Adam([{"params": [p]}, {"params": [p]}]), ValueError, "more than one parameter group"),
    (lambda p: optim.SGD([p], lr=0.1, nesterov=True), ValueError, "'nesterov' is true, 'momentum' must be > 0.0"),
    (lambda p: optim.SGD([p], lr=0.1, momentum=-1), ValueError, "'momentum' must be greater than or equal to 0"),
    (lambda p: optim.Adadelta([p], lr=0.0), ValueError, "Invalid learning rate: 0.0"),
    (lambda p: optim.Adadelta([p], rho=1.5), ValueError, "'rho' must be less than or equal to 1.0"),
    (lambda p: optim.Adagrad([p], eps=0.0), ValueError, "'eps' must be greater than 0.0"),
    (lambda p: optim.ASGD([p], lambd=1), TypeError, "type of lambd must be float"),
    (lambda p: optim.RMSprop([p], centered=0), TypeError, "'centered' must be bool"),
    (lambda p: optim.Rprop([p], etas=(0.5, 1.0)), ValueError, r"'etas\[1\]' must be greater than 1.0"),
    (lambda p: optim.Adam([p], lr=Tensor(np.ones(2, np.float32))), ValueError, "scalar"),
])
def test_argument_errors(make, exc, match):
    (p,) = _params(2)
    with pytest.raises(exc, match=match):
        make(p)


def test_gradient_errors():
    a, b = _params(2, 3)
    opt = optim.Adam([a, b])
    with pytest.raises(ValueError, match=r"number of gradients \(1\) must be the same as the number of parameters"):
        opt((Tensor(np.ones(2, np.float32)),))
    with pytest.raises(ValueError, match=r"gradient 1 has shape \(2,\), but its parameter 'p1' has shape \(3,\)"):
        opt((Tensor(np.ones(2, np.float32)), Tensor(np.ones(2, np.float32))))
    with pytest.raises(TypeError, match="must be a tuple or list of Tensors"):
        opt(Tensor(np.ones(2, np.float32)))
    with pytest.raises(TypeError, match="gradient 0 .* must be a Tensor, but got float"):
        opt((1.0, Tensor(np.ones(3, np.float32))))
    with pytest.raises(TypeError, match="param group must be a dict, but got list"):
        opt.add_param_group([a])


def test_exports_are_mindspore_2_10s():
    names = {"ASGD", "Adadelta", "Adagrad", "Adam", "AdamW", "Adamax", "NAdam", "Optimizer", "RAdam", "RMSprop",
             "Rprop", "SGD", "lr_scheduler"}
    assert set(optim.__all__) == names and all(hasattr(optim, n) for n in names)
    assert ms.experimental.optim is optim


def test_mae_loss():
    """nn.MAELoss: |logits − labels| broadcast, reduced ('mean' default) — values from MindSpore 2.10."""
    x = Tensor(np.array([[1, 2], [3, 5]], np.float32))
    y = Tensor(np.array([0, 0], np.float32))
    np.testing.assert_allclose(float(nn.MAELoss()(x, y)), 2.75)
    np.testing.assert_allclose(float(nn.MAELoss("sum")(x, y)), 11.0)
    np.testing.assert_allclose(nn.MAELoss("none")(Tensor(np.array([1, -2], np.float32)),
                                                  Tensor(np.zeros(2, np.float32))).asnumpy(), [1, 2])
    with pytest.raises(ValueError, match="the 'reduction' must be in"):
        nn.MAELoss("x")
    with pytest.raises(TypeError):
        nn.MAELoss()(np.ones(2, np.float32), y)
