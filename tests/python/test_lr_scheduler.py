"""kiln.experimental.optim.lr_scheduler: each scheduler's lr sequence against values pinned with MindSpore 2.10,
step(epoch), the base class's contract (get_last_lr copies, lr Parameters changed in place, user subclasses) and
argument errors."""
import math

import numpy as np
import pytest

import kiln as ms
from kiln import Parameter, Tensor
from kiln.experimental import optim

S = optim.lr_scheduler


def _opt():
    a = Parameter(Tensor(np.ones(2, np.float32)), "a")
    b = Parameter(Tensor(np.ones(2, np.float32)), "b")
    return optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1)


MAKE = {
    "StepLR": lambda o: S.StepLR(o, step_size=3, gamma=0.5),
    "MultiStepLR": lambda o: S.MultiStepLR(o, milestones=[2, 5, 5], gamma=0.1),
    "ExponentialLR": lambda o: S.ExponentialLR(o, gamma=0.9),
    "LinearLR": lambda o: S.LinearLR(o, start_factor=0.25, end_factor=1.0, total_iters=4),
    "ConstantLR": lambda o: S.ConstantLR(o, factor=0.5, total_iters=3),
    "PolynomialLR": lambda o: S.PolynomialLR(o, total_iters=5, power=2.0),
    "CosineAnnealingLR": lambda o: S.CosineAnnealingLR(o, T_max=4, eta_min=0.01),
    "LambdaLR": lambda o: S.LambdaLR(o, lr_lambda=lambda e: 0.9 ** e),
    "MultiplicativeLR": lambda o: S.MultiplicativeLR(o, lr_lambda=lambda e: 0.8),
    "CyclicLR": lambda o: S.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=2, step_size_down=3),
    "CyclicLR2": lambda o: S.CyclicLR(o, base_lr=[0.01, 0.02], max_lr=[0.1, 0.3], step_size_up=2,
                                      mode="triangular2"),
    "CyclicLRexp": lambda o: S.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=2, mode="exp_range", gamma=0.9),
    "CosineAnnealingWarmRestarts": lambda o: S.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.001),
}

# get_last_lr() of both groups after construction and after each of 10 step() calls, printed by MindSpore 2.10
# (mindspore.experimental.optim.lr_scheduler, CPU) for the schedulers above on _opt() (lrs 0.1 and 0.5), rounded
# to 7 digits.
PINNED = {
    "StepLR": [[0.1, 0.5], [0.1, 0.5], [0.1, 0.5], [0.05, 0.25], [0.05, 0.25], [0.05, 0.25], [0.025, 0.125],
               [0.025, 0.125], [0.025, 0.125], [0.0125, 0.0625], [0.0125, 0.0625]],
    "MultiStepLR": [[0.1, 0.5], [0.1, 0.5], [0.01, 0.05], [0.01, 0.05], [0.01, 0.05], [0.0001, 0.0005],
                    [0.0001, 0.0005], [0.0001, 0.0005], [0.0001, 0.0005], [0.0001, 0.0005], [0.0001, 0.0005]],
    "ExponentialLR": [[0.1, 0.5], [0.09, 0.45], [0.081, 0.405], [0.0729, 0.3645], [0.06561, 0.32805],
                      [0.059049, 0.295245], [0.0531441, 0.2657205], [0.0478297, 0.2391484], [0.0430467, 0.2152336],
                      [0.038742, 0.1937102], [0.0348678, 0.1743392]],
    "LinearLR": [[0.025, 0.125], [0.04375, 0.21875], [0.0625, 0.3125], [0.08125, 0.40625], [0.1, 0.5], [0.1, 0.5],
                 [0.1, 0.5], [0.1, 0.5], [0.1, 0.5], [0.1, 0.5], [0.1, 0.5]],
    "ConstantLR": [[0.05, 0.25], [0.05, 0.25], [0.05, 0.25], [0.1, 0.5], [0.1, 0.5], [0.1, 0.5], [0.1, 0.5],
                   [0.1, 0.5], [0.1, 0.5], [0.1, 0.5], [0.1, 0.5]],
    "PolynomialLR": [[0.1, 0.5], [0.064, 0.32], [0.036, 0.18], [0.016, 0.08], [0.004, 0.02], [0.0, 0.0], [0.0, 0.0],
                     [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0]],
    "CosineAnnealingLR": [[0.1, 0.5], [0.0868198, 0.4282412], [0.055, 0.255], [0.0231802, 0.0817588], [0.01, 0.01],
                          [0.0231802, 0.0817588], [0.055, 0.2549999], [0.0868198, 0.428241], [0.1, 0.4999998],
                          [0.0868198, 0.428241], [0.055, 0.2549998]],
    "LambdaLR": [[0.1, 0.5], [0.09, 0.45], [0.081, 0.405], [0.0729, 0.3645], [0.06561, 0.32805],
                 [0.059049, 0.295245], [0.0531441, 0.2657205], [0.0478297, 0.2391484], [0.0430467, 0.2152336],
                 [0.038742, 0.1937102], [0.0348678, 0.1743392]],
    "MultiplicativeLR": [[0.1, 0.5], [0.08, 0.4], [0.064, 0.32], [0.0512, 0.256], [0.04096, 0.2048],
                         [0.032768, 0.16384], [0.0262144, 0.131072], [0.0209715, 0.1048576], [0.0167772, 0.0838861],
                         [0.0134218, 0.0671089], [0.0107374, 0.0536871]],
    "CyclicLR": [[0.01, 0.01], [0.055, 0.055], [0.1, 0.1], [0.07, 0.07], [0.04, 0.04], [0.01, 0.01], [0.055, 0.055],
                 [0.1, 0.1], [0.07, 0.07], [0.04, 0.04], [0.01, 0.01]],
    "CyclicLR2": [[0.01, 0.02], [0.055, 0.16], [0.1, 0.3], [0.055, 0.16], [0.01, 0.02], [0.0325, 0.09],
                  [0.055, 0.16], [0.0325, 0.09], [0.01, 0.02], [0.02125, 0.055], [0.0325, 0.09]],
    "CyclicLRexp": [[0.01, 0.01], [0.0505, 0.0505], [0.0829, 0.0829], [0.042805, 0.042805], [0.01, 0.01],
                    [0.036572, 0.036572], [0.0578297, 0.0578297], [0.0315234, 0.0315234], [0.01, 0.01],
                    [0.0274339, 0.0274339], [0.0413811, 0.0413811]],
    "CosineAnnealingWarmRestarts": [[0.1, 0.5], [0.07525, 0.37525], [0.02575, 0.12575], [0.1, 0.5],
                                    [0.0933683, 0.4665734], [0.07525, 0.37525], [0.0505, 0.2505], [0.02575, 0.12575],
                                    [0.0076317, 0.0344266], [0.1, 0.5], [0.0983133, 0.4914985]],
}
# SequentialLR([LinearLR(start_factor=0.5, total_iters=2), ExponentialLR(gamma=0.9)], milestones=[3]), 8 steps;
# ReduceLROnPlateau(mode='min', factor=0.5, patience=1, cooldown=1, min_lr=[0.0, 0.2]) after each metric of
# METRICS; step(epoch) at epochs 7, 2, 10 — all from MindSpore 2.10.
METRICS = [1.0, 0.9, 0.95, 0.95, 0.95, 0.95, 0.5, 0.6, 0.6, 0.6, 0.6, 0.6]
SEQUENTIAL = [[0.05, 0.25], [0.075, 0.375], [0.1, 0.5], [0.1, 0.5], [0.09, 0.45], [0.081, 0.405], [0.0729, 0.3645],
              [0.06561, 0.32805], [0.059049, 0.295245]]
PLATEAU = [[0.1, 0.5], [0.1, 0.5], [0.1, 0.5], [0.05, 0.25], [0.05, 0.25], [0.05, 0.25], [0.05, 0.25], [0.05, 0.25],
           [0.025, 0.2], [0.025, 0.2], [0.025, 0.2], [0.0125, 0.2]]
STEP_AT_EPOCH = [[0.025, 0.125], [0.1, 0.5], [0.0125, 0.0625]]
EXPONENTIAL_AT_EPOCH = [[0.0478297, 0.2391484], [0.081, 0.405], [0.0348678, 0.1743392]]
COSINE_AT_EPOCH = [[0.0868198, 0.4282412], [0.055, 0.255], [0.055, 0.2549999]]


def _lrs(s):
    return [float(v) for v in s.get_last_lr()]


@pytest.mark.parametrize("name", sorted(PINNED))
def test_sequence_matches_mindspore(name):
    s = MAKE[name](_opt())
    got = [_lrs(s)]
    for _ in range(10):
        assert s.step() is True
        got.append(_lrs(s))
    np.testing.assert_allclose(got, PINNED[name], rtol=2e-6, atol=1e-7)


def test_sequential_and_plateau_match_mindspore():
    o = _opt()
    s = S.SequentialLR(o, [S.LinearLR(o, start_factor=0.5, total_iters=2), S.ExponentialLR(o, gamma=0.9)],
                       milestones=[3])
    got = [_lrs(s)]
    for _ in range(8):
        s.step()
        got.append(_lrs(s))
    np.testing.assert_allclose(got, SEQUENTIAL, rtol=2e-6, atol=1e-7)
    o = _opt()
    p = S.ReduceLROnPlateau(o, mode="min", factor=0.5, patience=1, cooldown=1, min_lr=[0.0, 0.2])
    got = []
    for m in METRICS:
        p.step(Tensor(m, ms.float32) if m == 0.5 else m)
        got.append(_lrs(p))
    np.testing.assert_allclose(got, PLATEAU, rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("name, want", [("StepLR", STEP_AT_EPOCH), ("ExponentialLR", EXPONENTIAL_AT_EPOCH),
                                        ("CosineAnnealingLR", COSINE_AT_EPOCH)])
def test_step_to_epoch_closed_form_matches_mindspore(name, want):
    s = MAKE[name](_opt())
    got = []
    for e in (7, 2, 10):
        s.step(e)
        got.append(_lrs(s))
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-7)


def test_warm_restarts_jump_to_epoch_matches_pytorch_formula():
    """step(epoch) with T_mult > 1 (MindSpore 2.10 raises TypeError there: its Log called with two arguments);
    PyTorch's formula: n = ⌊log_Tm(e/T0·(Tm − 1) + 1)⌋, T_cur = e − T0·(Tmⁿ − 1)/(Tm − 1), T_i = T0·Tmⁿ."""
    s = MAKE["CosineAnnealingWarmRestarts"](_opt())
    for e in (7, 2, 10, 4.5):
        s.step(e)
        if e < 3:
            t_cur, t_i = e, 3
        else:
            n = int(math.log(e / 3 * (2 - 1) + 1, 2))
            t_cur, t_i = e - 3 * (2 ** n - 1) / (2 - 1), 3 * 2 ** n
        want = [0.001 + (b - 0.001) * (1 + math.cos(math.pi * t_cur / t_i)) / 2 for b in (0.1, 0.5)]
        np.testing.assert_allclose(_lrs(s), want, rtol=2e-6)
        assert float(s.last_epoch) == math.floor(e)


def test_scheduler_writes_the_optimizers_lr_parameters_and_copies_on_read():
    o = _opt()
    s = S.StepLR(o, step_size=1, gamma=0.5)
    last = s.get_last_lr()
    assert isinstance(last[0], Tensor) and last[0].shape == () and last[0].dtype == ms.float32
    assert s._last_lr[0] is o.param_groups[0]["lr"] and s.last_epoch.name == "last_epoch_StepLR"
    s.step()
    np.testing.assert_allclose(float(o.param_groups[0]["lr"]), 0.05, rtol=1e-7)
    np.testing.assert_allclose(float(last[0]), 0.1, rtol=1e-7)  # the earlier read is unchanged
    np.testing.assert_allclose(float(o.param_groups[1]["initial_lr"]), 0.5, rtol=1e-7)
    ms.ops.assign(o.param_groups[0]["lr"], Tensor(1.0, ms.float32))  # chainable: the next step scales it
    s.step()
    np.testing.assert_allclose(_lrs(s), [0.5, 0.125], rtol=1e-6)


def test_mindspore_style_subclass():
    """A scheduler written for MindSpore: get_lr with Tensor arithmetic on _last_lr and last_epoch."""
    class Halve(S.LRScheduler):
        def get_lr(self):
            if self.last_epoch == 0:
                return [lr * 1.0 for lr in self._last_lr]
            return [lr * 0.5 for lr in self._last_lr]
    s = Halve(_opt())
    s.step()
    s.step()
    np.testing.assert_allclose(_lrs(s), [0.025, 0.125], rtol=1e-6)


def test_resume_needs_initial_lr():
    o = _opt()
    with pytest.raises(KeyError, match=r"'initial_lr' is not specified in param_groups\[0\]"):
        S.StepLR(o, step_size=2, last_epoch=3)
    S.StepLR(o, step_size=2)
    s = S.StepLR(o, step_size=2, gamma=0.5, last_epoch=3)  # resumes: the first step is epoch 4
    assert float(s.last_epoch) == 4.0


@pytest.mark.parametrize("make, exc, match", [
    (lambda o: S.StepLR(o, step_size=2.0), TypeError, "'step_size' must be int"),
    (lambda o: S.StepLR(o, step_size=0), ValueError, "'step_size' must be > 0"),
    (lambda o: S.StepLR(o, step_size=2, gamma=1), TypeError, "'gamma' must be float"),
    (lambda o: S.StepLR(object(), step_size=2), TypeError, "'optimizer' must be a kiln.experimental.optim"),
    (lambda o: S.StepLR(o, step_size=2, last_epoch=-2), ValueError, "invalid last_epoch: -2"),
    (lambda o: S.LinearLR(o, start_factor=0.0), ValueError, "starting multiplicative factor"),
    (lambda o: S.ConstantLR(o, factor=2.0), ValueError, "between 0 and 1"),
    (lambda o: S.PolynomialLR(o, power=-1.0), ValueError, "'power' must be >= 0"),
    (lambda o: S.CosineAnnealingLR(o, T_max=0), ValueError, "'T_max' must be > 0"),
    (lambda o: S.MultiStepLR(o, milestones=(2, 3)), TypeError, "'milestones' must be a list of int"),
    (lambda o: S.LambdaLR(o, lr_lambda=[lambda e: 1.0]), ValueError, "Expected 2 lr_lambdas, but got 1"),
    (lambda o: S.LambdaLR(o, lr_lambda=0.5), TypeError, "must be a function"),
    (lambda o: S.CyclicLR(o, 0.01, 0.1, mode="sine"), ValueError, "mode is invalid"),
    (lambda o: S.CyclicLR(o, [0.01], 0.1), ValueError, "Expected 2 values for base_lr, got 1"),
    (lambda o: S.CosineAnnealingWarmRestarts(o, T_0=0), ValueError, "T_0 should be an integer greater than 0"),
    (lambda o: S.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=0), ValueError, "T_mult should be an integer"),
    (lambda o: S.ReduceLROnPlateau(o, factor=1.0), ValueError, "factor should be less than 1.0"),
    (lambda o: S.ReduceLROnPlateau(o, mode="up"), ValueError, "`mode` should be 'min' or 'max'"),
    (lambda o: S.ReduceLROnPlateau(o).step("x"), TypeError, "'metrics' must be a number"),
    (lambda o: S.SequentialLR(o, [S.StepLR(o, 2)], milestones=[1]), ValueError, "one more than the number"),
    (lambda o: S.SequentialLR(o, [S.StepLR(_opt(), 2), S.StepLR(o, 2)], milestones=[1]), ValueError,
     "same optimizer"),
    (lambda o: S.StepLR(o, 2).step("3"), TypeError, "'epoch' must be a number"),
])
def test_errors(make, exc, match):
    with pytest.raises(exc, match=match):
        make(_opt())


def test_exports_are_mindspore_2_10s():
    names = {"ConstantLR", "CosineAnnealingLR", "CosineAnnealingWarmRestarts", "CyclicLR", "ExponentialLR",
             "LRScheduler", "LambdaLR", "LinearLR", "MultiStepLR", "MultiplicativeLR", "PolynomialLR",
             "ReduceLROnPlateau", "SequentialLR", "StepLR"}
    assert set(S.__all__) == names and all(hasattr(S, n) for n in names)


def test_step_inside_a_compiled_function_is_a_clear_error():
    o = _opt()
    s = S.StepLR(o, step_size=1)
    p = S.ReduceLROnPlateau(o)

    @ms.jit
    def bad(x):
        s.step()
        return x

    @ms.jit
    def bad_plateau(x):
        p.step(1.0)
        return x
    for fn in (bad, bad_plateau):
        with pytest.raises(RuntimeError, match="step\\(\\) runs eagerly: call it outside the compiled"):
            fn(Tensor(np.ones(2, np.float32)))
    np.testing.assert_allclose(_lrs(s), [0.1, 0.5], rtol=1e-7)  # nothing changed
