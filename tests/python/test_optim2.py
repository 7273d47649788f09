"""Optimizers RMSProp, Adagrad, Lamb, AdamWeightDecay and experimental.optim.AdamW against NumPy implementations of
MindSpore's formulas over 5 steps with weight decay and a learning-rate schedule; parameter groups (no decay for
biases/norms via a name filter, per-group lr); learning-rate schedules inside compiled steps (PyNative == optimizer
compiled == step under kiln.jit == NumPy); ops.clip_by_global_norm / clip_by_value; validation errors."""
import math

import numpy as np
import pytest

import kiln as ms
from kiln import Parameter, Tensor, nn, ops
from kiln.experimental import optim as xoptim

f32 = np.float32
STEPS = 5
SHAPES = {"fc.weight": (3, 4), "fc.bias": (3,), "norm.gamma": (4,), "norm.beta": (4,)}


def make_params(seed=0):
    rng = np.random.default_rng(seed)
    return [Parameter(Tensor(rng.standard_normal(s).astype(f32)), name=n) for n, s in SHAPES.items()]


def grad_seq(seed=1, steps=STEPS):
    rng = np.random.default_rng(seed)
    return [[rng.standard_normal(s).astype(f32) for s in SHAPES.values()] for _ in range(steps)]


def decays(names, wd):
    """MindSpore's default decay filter: names without 'beta'/'gamma'."""
    return [wd if ("beta" not in n and "gamma" not in n) else 0.0 for n in names]


# ----------------------------------------------------------------------------------------- schedules (NumPy)
def sched_values(kind, n=STEPS):
    """(schedule object for the optimizer, NumPy float64 lr per step) for each schedule kind."""
    steps = np.arange(n, dtype=np.float64)
    if kind == "list":
        vals = [0.05, 0.04, 0.03, 0.02, 0.01]
        return list(vals), np.array(vals)
    if kind == "cosine":
        s = np.minimum(steps, 3)
        return nn.CosineDecayLR(0.01, 0.1, 3), 0.01 + 0.5 * 0.09 * (1 + np.cos(np.pi * s / 3))
    if kind == "exponential":
        return nn.ExponentialDecayLR(0.1, 0.5, 2), 0.1 * 0.5 ** (steps / 2)
    if kind == "exponential_stair":
        return nn.ExponentialDecayLR(0.1, 0.5, 2, is_stair=True), 0.1 * 0.5 ** np.floor(steps / 2)
    if kind == "polynomial":
        s = np.minimum(steps, 3)
        return nn.PolynomialDecayLR(0.1, 0.01, 3, 0.5), 0.09 * (1 - s / 3) ** 0.5 + 0.01
    if kind == "polynomial_update":
        d = 2 * np.maximum(np.ceil(steps / 2), 1)
        return nn.PolynomialDecayLR(0.1, 0.01, 2, 2.0, update_decay_steps=True), 0.09 * (1 - steps / d) ** 2 + 0.01
    if kind == "warmup":
        return nn.WarmUpLR(0.1, 3), 0.1 * np.minimum(steps, 3) / 3
    raise ValueError(kind)


# ---------------------------------------------------------------------------------- optimizers (NumPy refs)
def ref_run(kind, w0, seq, lrs, wds, **kw):
    """NumPy (float64) reference of one optimizer. lrs[i][s]: lr of parameter i at step s; wds[i]: its decay (a
    number, or a per-step array for a dynamic weight decay)."""
    ws = [w.astype(np.float64) for w in w0]
    st = [dict() for _ in ws]
    for s, gs in enumerate(seq):
        t = s + 1
        for i, g in enumerate(gs):
            g = g.astype(np.float64)
            w, lr, S = ws[i], float(f32(lrs[i][s])), st[i]
            wd = float(f32(wds[i][s])) if np.ndim(wds[i]) else wds[i]
            if kind == "momentum":
                g = g + wd * w
                S["v"] = kw["momentum"] * S.get("v", 0) + g
                ws[i] = w - lr * S["v"]
            elif kind == "rmsprop":
                g = g + wd * w
                rho, beta, eps = kw.get("decay", 0.9), kw.get("momentum", 0.0), kw.get("epsilon", 1e-10)
                S["ms"] = rho * S.get("ms", np.ones_like(w)) + (1 - rho) * g * g
                den = S["ms"]
                if kw.get("centered"):
                    S["mg"] = rho * S.get("mg", 0) + (1 - rho) * g
                    den = den - S["mg"] ** 2
                S["mom"] = beta * S.get("mom", 0) + lr * g / np.sqrt(den + eps)
                ws[i] = w - S["mom"]
            elif kind == "adagrad":
                g = g + wd * w
                h = S.get("h", np.full_like(w, kw.get("accum", 0.1)))
                if kw.get("update_slots", True):
                    h = h + g * g
                S["h"] = h
                ws[i] = w - lr * g / np.sqrt(h)
            elif kind in ("lamb", "adamwd"):
                b1, b2 = kw.get("beta1", 0.9), kw.get("beta2", 0.999)
                eps = kw.get("eps", 1e-6)
                S["m"] = b1 * S.get("m", 0) + (1 - b1) * g
                S["v"] = b2 * S.get("v", 0) + (1 - b2) * g * g
                if kind == "lamb":
                    mh, vh = S["m"] / (1 - b1 ** t), S["v"] / (1 - b2 ** t)
                    u = mh / (np.sqrt(vh) + eps) + wd * w
                    wn, un = np.linalg.norm(w), np.linalg.norm(u)
                    trust = wn / un if (wn > 0 and un > 0) else 1.0
                    ws[i] = w - lr * trust * u
                else:
                    u = S["m"] / (np.sqrt(S["v"]) + eps) + wd * w
                    ws[i] = w - lr * u
            elif kind == "adam":  # MindSpore's Adam (coupled decay, ε after folding the bias correction)
                g = g + wd * w
                S["m"] = 0.9 * S.get("m", 0) + 0.1 * g
                S["v"] = 0.999 * S.get("v", 0) + 0.001 * g * g
                b1p, b2p = float(f32(0.9) ** t), float(f32(0.999) ** t)  # float32 beta1_power/beta2_power
                alpha = lr * math.sqrt(1 - b2p) / (1 - b1p)
                ws[i] = w - alpha * S["m"] / (np.sqrt(S["v"]) + 1e-8)
            elif kind == "sgd":  # MindSpore's SGD kernel (momentum, first step v = g)
                g = g + wd * w
                S["v"] = g if s == 0 else kw["momentum"] * S["v"] + g
                ws[i] = w - lr * S["v"]
            else:
                raise ValueError(kind)
    return ws


def make_opt(kind, params, lr, wd=0.0, **kw):
    if kind == "momentum":
        return nn.Momentum(params, lr, kw["momentum"], weight_decay=wd)
    if kind == "rmsprop":
        return nn.RMSProp(params, lr, weight_decay=wd, **kw)
    if kind == "adagrad":
        return nn.Adagrad(params, learning_rate=lr, weight_decay=wd, **kw)
    if kind == "lamb":
        return nn.Lamb(params, lr, weight_decay=wd, **kw)
    if kind == "adamwd":
        return nn.AdamWeightDecay(params, lr, weight_decay=wd, **kw)
    if kind == "adam":
        return nn.Adam(params, lr, weight_decay=wd, **kw)
    if kind == "sgd":
        return nn.SGD(params, lr, weight_decay=wd, **kw)
    raise ValueError(kind)


def run(opt, seq, mode="call"):
    """Applies the gradient sequence: 'eager' (construct op by op), 'call' (optimizer(grads): the update is
    compiled), 'jit' (a kiln.jit step that calls the optimizer)."""
    if mode == "jit":
        step = ms.jit(lambda *gs: opt(gs))
    for gs in seq:
        grads = tuple(Tensor(g) for g in gs)
        if mode == "eager":
            assert opt.construct(grads) is True
        elif mode == "call":
            assert opt(grads) is True
        else:
            step(*grads)
    return [p.asnumpy().copy() for p in opt.parameters]


def check(got, want, rtol=2e-5, atol=2e-6):
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


CASES = [
    ("rmsprop", {}),
    ("rmsprop", {"centered": True, "momentum": 0.9, "decay": 0.8, "epsilon": 1e-6}),
    ("adagrad", {}),
    ("adagrad", {"accum": 0.5, "update_slots": False}),
    ("lamb", {}),
    ("lamb", {"beta1": 0.8, "beta2": 0.99, "eps": 1e-4}),
    ("adamwd", {}),
    ("momentum", {"momentum": 0.9}),
]


@pytest.mark.parametrize("kind,kw", CASES + [("adam", {}), ("sgd", {"momentum": 0.9})])
def test_optimizer_with_schedule_and_weight_decay_matches_numpy(kind, kw):
    params = make_params()
    names = [p.name for p in params]
    w0 = [p.asnumpy().copy() for p in params]
    seq = grad_seq()
    sched, lr_vals = sched_values("cosine")
    opt = make_opt(kind, params, sched, wd=0.05, **kw)
    got = run(opt, seq)
    want = ref_run(kind, w0, seq, [lr_vals] * len(params), decays(names, 0.05), **kw)
    check(got, want)
    assert opt.global_step.asnumpy().tolist() == [STEPS]


@pytest.mark.parametrize("kind,kw", CASES + [("adam", {}), ("sgd", {"momentum": 0.9})])
def test_groups_no_decay_for_bias_and_norm_and_group_lr(kind, kw):
    params = make_params()
    w0 = [p.asnumpy().copy() for p in params]
    seq = grad_seq()
    decay = [p for p in params if p.name.endswith("weight")]
    no_decay = [p for p in params if not p.name.endswith("weight")]
    sched, lr_vals = sched_values("warmup")
    groups = [{"params": decay, "weight_decay": 0.1},
              {"params": no_decay, "weight_decay": 0.0, "lr": sched},
              {"order_params": params}]
    opt = make_opt(kind, groups, 0.02, **kw)
    assert [p.name for p in opt.parameters] == list(SHAPES)
    got = run(opt, seq)
    lrs = [np.full(STEPS, 0.02)] + [lr_vals] * 3
    want = ref_run(kind, w0, seq, lrs, [0.1, 0.0, 0.0, 0.0], **kw)
    check(got, want)


@pytest.mark.parametrize("sched_kind", ["list", "cosine", "exponential", "exponential_stair", "polynomial",
                                        "polynomial_update", "warmup"])
@pytest.mark.parametrize("kind,kw", [("momentum", {"momentum": 0.9}), ("lamb", {}), ("rmsprop", {"momentum": 0.5})])
def test_schedules_in_compiled_steps(sched_kind, kind, kw):
    seq = grad_seq(seed=3)
    results = {}
    for mode in ("eager", "call", "jit"):
        params = make_params()
        w0 = [p.asnumpy().copy() for p in params]
        sched, lr_vals = sched_values(sched_kind)
        opt = make_opt(kind, params, sched, wd=0.02, **kw)
        results[mode] = run(opt, seq, mode)
        assert opt.global_step.asnumpy().tolist() == [STEPS]
    want = ref_run(kind, w0, seq, [lr_vals] * 4, decays(list(SHAPES), 0.02), **kw)
    check(results["eager"], want)
    check(results["call"], results["eager"], rtol=1e-6, atol=1e-7)
    check(results["jit"], results["eager"], rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("kind,kw", [("lamb", {}), ("adamwd", {}), ("rmsprop", {}), ("momentum", {"momentum": 0.9})])
def test_dynamic_weight_decay_uses_the_current_step(kind, kw):
    seq = grad_seq()
    for mode in ("call", "jit"):
        params = make_params()
        w0 = [p.asnumpy().copy() for p in params]
        wd_sched = nn.ExponentialDecayLR(0.2, 0.5, 1)  # λ_s = 0.2·0.5^s, a Cell called with global_step
        opt = make_opt(kind, params, 0.05, wd=wd_sched, **kw)
        got = run(opt, seq, mode)
        wd_vals = 0.2 * 0.5 ** np.arange(STEPS)
        wds = [wd_vals if ("beta" not in n and "gamma" not in n) else 0.0 for n in SHAPES]
        check(got, ref_run(kind, w0, seq, [np.full(STEPS, 0.05)] * 4, wds, **kw))


def test_schedule_values_compiled_equal_eager():
    steps = [Tensor(np.array([i], np.int32)) for i in range(6)]
    for kind in ("cosine", "exponential", "exponential_stair", "polynomial", "polynomial_update", "warmup"):
        sched, vals = sched_values(kind, 6)
        eager = np.array([sched(s).asnumpy().reshape(()) for s in steps])
        jf = ms.jit(lambda s, sched=sched: sched(s))
        compiled = np.array([jf(s).asnumpy().reshape(()) for s in steps])
        np.testing.assert_allclose(eager, vals, rtol=1e-6, err_msg=kind)
        np.testing.assert_allclose(compiled, eager, rtol=1e-7, err_msg=kind)
        assert not getattr(sched, "_host_side", False)


class _HostSchedule(nn.LearningRateSchedule):
    """A user schedule that reads the step on the host: must be marked _host_side."""
    _host_side = True

    def construct(self, global_step):
        step = int(global_step.asnumpy().reshape(-1)[0])
        return Tensor(np.array(0.1 / (1 + step), np.float32))


def test_host_side_user_schedule_runs_eagerly():
    params = make_params()
    w0 = [p.asnumpy().copy() for p in params]
    seq = grad_seq()
    opt = nn.Momentum(params, _HostSchedule(), 0.9)
    got = run(opt, seq)
    want = ref_run("momentum", w0, seq, [[0.1 / (1 + s) for s in range(STEPS)]] * 4, [0.0] * 4, momentum=0.9)
    check(got, want)
    # a host-side schedule in one parameter group
    params = make_params()
    opt = nn.Momentum([{"params": params[:2], "lr": _HostSchedule()}, {"params": params[2:]}], 0.02, 0.9)
    got = run(opt, seq)
    lrs = [[0.1 / (1 + s) for s in range(STEPS)]] * 2 + [[0.02] * STEPS] * 2
    check(got, ref_run("momentum", w0, seq, lrs, [0.0] * 4, momentum=0.9))


def test_optimizer_state_names_and_defaults():
    params = make_params()
    names = [p.name for p in params]
    r = nn.RMSProp(params, centered=True)
    assert [p.name for p in r.ms] == ["mean_square." + n for n in names]
    assert [p.name for p in r.moment] == ["moment." + n for n in names]
    assert [p.name for p in r.mg] == ["mean_grad." + n for n in names]
    np.testing.assert_array_equal(r.ms[0].asnumpy(), np.ones(SHAPES["fc.weight"], f32))
    assert float(r.learning_rate.asnumpy()) == pytest.approx(0.1)
    assert (r.decay, r.momentum, r.epsilon) == (0.9, 0.0, 1e-10)
    a = nn.Adagrad(params)
    assert [p.name for p in a.accum] == ["accum." + n for n in names]
    np.testing.assert_allclose(a.accum[1].asnumpy(), np.full(3, 0.1, f32))
    assert float(a.learning_rate.asnumpy()) == pytest.approx(1e-3)
    lamb = nn.Lamb(params, 0.01)
    assert [p.name for p in lamb.moments1] == ["lamb_m." + n for n in names]
    assert [p.name for p in lamb.moments2] == ["lamb_v." + n for n in names]
    assert "mean_grad." + names[0] not in [p.name for p in nn.RMSProp(params).trainable_params()]


def test_optimizer_validation():
    params = make_params()
    with pytest.raises(TypeError):
        nn.RMSProp(params, decay=1)
    with pytest.raises(ValueError):
        nn.RMSProp(params, momentum=-0.1)
    with pytest.raises(ValueError):
        nn.RMSProp(params, epsilon=0.0)
    with pytest.raises(TypeError):
        nn.RMSProp(params, centered=1)
    with pytest.raises(TypeError):
        nn.Adagrad(params, accum=1)
    with pytest.raises(ValueError):
        nn.Adagrad(params, accum=-0.1)
    with pytest.raises(TypeError):
        nn.Adagrad(params, update_slots="yes")
    with pytest.raises(TypeError):
        nn.Lamb(params)  # learning_rate is required
    with pytest.raises(ValueError):
        nn.Lamb(params, 0.1, beta1=1.0)
    with pytest.raises(TypeError):
        nn.Lamb(params, 0.1, eps=1)
    with pytest.raises(ValueError):
        nn.RMSProp(params, learning_rate=-1.0)
    opt = nn.RMSProp(params)
    with pytest.raises(ValueError):
        opt(tuple(Tensor(g) for g in grad_seq()[0][:2]))
    with pytest.raises(TypeError):
        opt(Tensor(np.zeros(3, f32)))


def test_loss_scale_rmsprop_and_adagrad():
    # g/loss_scale and (coupled) decay λ applied before scaling, as MindSpore: same result as loss_scale=1
    seq = grad_seq()
    for kind, cls in (("rmsprop", nn.RMSProp), ("adagrad", nn.Adagrad)):
        params = make_params()
        w0 = [p.asnumpy().copy() for p in params]
        opt = cls(params, learning_rate=0.05, weight_decay=0.01, loss_scale=8.0)
        got = run(opt, [[g * f32(8.0) for g in gs] for gs in seq])
        want = ref_run(kind, w0, seq, [np.full(STEPS, 0.05)] * 4, decays(list(SHAPES), 0.01))
        check(got, want)


# ------------------------------------------------------------------------------------- experimental AdamW
def adamw_ref(w0, seq, groups, lrs, wds, betas=(0.9, 0.999), eps=1e-8, amsgrad=False, maximize=False):
    ws = [w.astype(np.float64) for w in w0]
    m = [np.zeros_like(w) for w in ws]
    v = [np.zeros_like(w) for w in ws]
    vm = [np.zeros_like(w) for w in ws]
    b1, b2 = betas
    for s, gs in enumerate(seq):
        t = s + 1
        for i, g in enumerate(gs):
            g = -g.astype(np.float64) if maximize else g.astype(np.float64)
            lr, wd = lrs[groups[i]], wds[groups[i]]
            w = ws[i] * (1 - lr * wd)
            m[i] = b1 * m[i] + (1 - b1) * g
            v[i] = b2 * v[i] + (1 - b2) * g * g
            den = v[i]
            if amsgrad:
                vm[i] = np.maximum(vm[i], v[i])
                den = vm[i]
            ws[i] = w - lr / (1 - b1 ** t) * m[i] / (np.sqrt(den) / math.sqrt(1 - b2 ** t) + eps)
    return ws


@pytest.mark.parametrize("kw", [{}, {"amsgrad": True}, {"maximize": True, "betas": (0.8, 0.99), "eps": 1e-6}])
def test_experimental_adamw_matches_numpy(kw):
    params = make_params()
    w0 = [p.asnumpy().copy() for p in params]
    seq = grad_seq()
    opt = xoptim.AdamW(params, lr=0.01, weight_decay=0.1, **kw)
    got = run(opt, seq)
    want = adamw_ref(w0, seq, [0] * 4, [0.01], [0.1], **kw)
    check(got, want)
    assert opt.state_step.shape == () and int(opt.state_step.asnumpy()) == STEPS
    names = list(SHAPES)
    assert [p.name for p in opt.exp_avg] == ["exp_avg." + n for n in names]
    assert [p.name for p in opt.exp_avg_sq] == ["exp_avg_sq." + n for n in names]
    assert [p.name for p in opt.max_exp_avg_sq] == ["max_exp_avg_sq." + n for n in names]


def test_experimental_adamw_groups_and_compiled_step():
    seq = grad_seq(seed=4)
    out = {}
    for mode in ("eager", "call", "jit"):
        params = make_params()
        w0 = [p.asnumpy().copy() for p in params]
        groups = [{"params": [p for p in params if p.name.endswith("weight")], "weight_decay": 0.05},
                  {"params": [p for p in params if not p.name.endswith("weight")], "weight_decay": 0.0, "lr": 0.03}]
        opt = xoptim.AdamW(groups, lr=0.01)
        assert opt.param_groups[1]["lr"].name == "learning_rate_group_1"
        assert opt.param_groups[0]["amsgrad"] is False and opt.group_start_id == [0, 1, 4]
        out[mode] = run(opt, seq, mode)
    want = adamw_ref(w0, seq, [0, 1, 1, 1], [0.01, 0.03], [0.05, 0.0])
    check(out["eager"], want)
    check(out["call"], out["eager"], rtol=1e-6, atol=1e-7)
    check(out["jit"], out["eager"], rtol=1e-6, atol=1e-7)
    # changing a group's lr Parameter in place takes effect in the compiled update
    params = make_params()
    opt = xoptim.AdamW(params, lr=0.01, weight_decay=0.0)
    zero = tuple(Tensor(np.zeros(s, f32)) for s in SHAPES.values())
    opt(zero)
    opt.param_groups[0]["lr"].set_data(Tensor(np.array(0.0, f32)))
    before = [p.asnumpy().copy() for p in params]
    opt(tuple(Tensor(g) for g in seq[0]))
    check([p.asnumpy() for p in params], before, rtol=0, atol=0)


def test_experimental_adamw_validation():
    params = make_params()
    with pytest.raises(ValueError):
        xoptim.AdamW(params, lr=-1.0)
    with pytest.raises(ValueError):
        xoptim.AdamW(params, betas=(1.0, 0.9))
    with pytest.raises(ValueError):
        xoptim.AdamW(params, eps=-1e-8)
    with pytest.raises(ValueError):
        xoptim.AdamW(params, weight_decay=-0.1)
    with pytest.raises(ValueError):
        xoptim.AdamW([{"params": params}, {"params": params[:1]}])
    with pytest.raises(TypeError):
        xoptim.AdamW([{"params": set(params)}])
    with pytest.raises(ValueError):
        xoptim.AdamW([])
    with pytest.raises(ValueError):
        xoptim.AdamW(params)(tuple(Tensor(g) for g in grad_seq()[0][:3]))
    assert "Parameter Group 0" in repr(xoptim.AdamW(params))


# --------------------------------------------------------------------------------------------- clipping
def test_clip_by_global_norm_matches_numpy():
    rng = np.random.default_rng(2)
    xs = [rng.standard_normal(s).astype(f32) for s in [(3, 4), (5,), ()]]
    norm = math.sqrt(sum(float((x.astype(np.float64) ** 2).sum()) for x in xs))
    for clip in (0.5, norm * 2, Tensor(np.array(1.5, f32))):
        c = float(clip.asnumpy()) if isinstance(clip, Tensor) else clip
        got = ops.clip_by_global_norm(tuple(Tensor(x) for x in xs), clip)
        assert isinstance(got, tuple) and len(got) == 3
        for g, x in zip(got, xs):
            assert g.shape == x.shape and g.dtype == ms.float32
            np.testing.assert_allclose(g.asnumpy(), x * c / max(norm, c), rtol=1e-6, atol=1e-7)
    got = ops.clip_by_global_norm([Tensor(x) for x in xs], 1.0, use_norm=Tensor(np.array(4.0, f32)))
    assert isinstance(got, list)
    np.testing.assert_allclose(got[0].asnumpy(), xs[0] / 4.0, rtol=1e-6)
    single = ops.clip_by_global_norm(Tensor(xs[0]), 0.1)
    np.testing.assert_allclose(single.asnumpy(), xs[0] * 0.1 / np.linalg.norm(xs[0].astype(np.float64)), rtol=1e-5)
    # float16 stays float16; compiled == eager
    h = Tensor(xs[0].astype(np.float16))
    assert ops.clip_by_global_norm((h,), 0.5)[0].dtype == ms.float16
    jf = ms.jit(lambda a, b, c: ops.clip_by_global_norm((a, b, c), 0.5))
    for e, j in zip(ops.clip_by_global_norm(tuple(Tensor(x) for x in xs), 0.5), jf(*[Tensor(x) for x in xs])):
        np.testing.assert_allclose(j.asnumpy(), e.asnumpy(), rtol=1e-6)


def test_clip_in_a_compiled_training_step_matches_eager():
    seq = grad_seq()
    out = {}
    for mode in ("eager", "jit"):
        params = make_params()
        opt = nn.Momentum(params, 0.1, 0.9)

        def step(*gs):
            return opt(ops.clip_by_global_norm(gs, 1.0))
        if mode == "jit":
            step = ms.jit(step)
        for gs in seq:
            step(*[Tensor(g) for g in gs])
        out[mode] = [p.asnumpy() for p in params]
    check(out["jit"], out["eager"], rtol=1e-6, atol=1e-7)


def test_clip_by_value_and_errors():
    x = np.linspace(-2, 2, 9).astype(f32)
    np.testing.assert_allclose(ops.clip_by_value(Tensor(x), -1.0, 0.5).asnumpy(), np.clip(x, -1.0, 0.5))
    np.testing.assert_allclose(ops.clip_by_value(Tensor(x), clip_value_max=Tensor(np.array(0.3, f32))).asnumpy(),
                               np.minimum(x, 0.3))
    lo, hi = ops.clip_by_value([Tensor(x), Tensor(x * 2)], -1.0, 1.0)
    np.testing.assert_allclose(hi.asnumpy(), np.clip(x * 2, -1, 1))
    with pytest.raises(ValueError):
        ops.clip_by_value(Tensor(x))
    with pytest.raises(TypeError):
        ops.clip_by_value(Tensor(x), "a", 1.0)
    with pytest.raises(TypeError):
        ops.clip_by_value([x], 0.0, 1.0)
    with pytest.raises(ValueError):
        ops.clip_by_global_norm((Tensor(x),), 0.0)
    with pytest.raises(TypeError):
        ops.clip_by_global_norm((x,), 1.0)
    with pytest.raises(TypeError):
        ops.clip_by_global_norm((Tensor(x),), "1")
    with pytest.raises(ValueError):
        ops.clip_by_global_norm((), 1.0)


# ------------------------------------------------------------------------------------ the new unary ops
def test_cos_sin_floor_ceil_forward_and_grad():
    x = np.array([-2.5, -1.0, -0.3, 0.0, 0.7, 3.2])
    np.testing.assert_allclose(ops.cos(Tensor(x)).asnumpy(), np.cos(x), rtol=1e-15)
    np.testing.assert_allclose(ops.sin(Tensor(x)).asnumpy(), np.sin(x), rtol=1e-15)
    np.testing.assert_array_equal(ops.floor(Tensor(x)).asnumpy(), np.floor(x))
    np.testing.assert_array_equal(ops.ceil(Tensor(x.astype(f32))).asnumpy(), np.ceil(x.astype(f32)))
    assert ops.floor(Tensor(np.array([3, -2], np.int32))).dtype == ms.int32
    assert ops.cos(Tensor(np.array([0, 1], np.int32))).dtype == ms.float32
    assert ops.Cos()(Tensor(x)).shape == x.shape
    g = ms.grad(lambda v: ops.sum(ops.cos(v) * ops.sin(v)))(Tensor(x)).asnumpy()
    np.testing.assert_allclose(g, np.cos(x) ** 2 - np.sin(x) ** 2, rtol=1e-12)
    g2 = ms.grad(ms.grad(lambda v: ops.sum(ops.sin(v))))(Tensor(x)).asnumpy()  # second derivative
    np.testing.assert_allclose(g2, -np.sin(x), rtol=1e-12, atol=1e-15)
    gf = ms.grad(lambda v: ops.sum(ops.floor(v) + ops.ceil(v) + v))(Tensor(x)).asnumpy()
    np.testing.assert_array_equal(gf, np.ones_like(x))
