"""kiln.experimental.optim's Adadelta, Adagrad, Adamax, NAdam and RAdam (MindSpore 2.10's
mindspore.experimental.optim classes of those names: PyTorch's formulas, composed of Kiln ops, so that one update
runs eagerly, compiled, and inside a compiled training step)."""
from ... import ops as _ops
from ...ops import _kernels
from ...common import dtype as mstype
from ...common.parameter import Parameter
from . import _checks
from .optimizer import Optimizer

__all__ = ["Adadelta", "Adagrad", "Adamax", "NAdam", "RAdam"]

_F32 = mstype.float32


def _as(t, dtype):
    return t if t.dtype == dtype else _kernels.cast(t, dtype)


def _pow(base, exponent):
    """base (a float) ** exponent (a float32 Tensor), float32."""
    return _kernels.pow(_kernels.full([], float(base), _F32), exponent)


def _step_counter(opt):
    opt.step_t = Parameter(_kernels.full([], 0, mstype.int32), "step_t")


def _advance(opt):
    """Increments `step_t` and returns the new count t as a float32 Tensor."""
    t = _ops.add(opt.step_t, 1)
    _kernels.assign(opt.step_t, t)
    return _kernels.cast(t, _F32)


class Adadelta(Optimizer):
    r"""Adadelta [Zeiler 2012] (PyTorch's formula; MindSpore runs it with its ApplyAdadelta kernel), per group:

        g ← −g if maximize;   g ← g + λ·w
        a ← ρ·a + (1 − ρ)·g²
        Δ = √(u + ε) / √(a + ε) · g
        u ← ρ·u + (1 − ρ)·Δ²
        w ← w − γ·Δ

    Args: params (Parameters or group dicts), lr (> 0, default 1.0), rho (in [0, 1], default 0.9), eps (> 0,
        default 1e-6), weight_decay (≥ 0, default 0.0). Keyword Args: maximize (bool, default False).
    State Parameters: `accum.<name>` (a), `accum_update.<name>` (u), zeros. Inputs: gradients aligned with
        `optimizer.parameters`. Returns True.
    Raises: ValueError for a value outside those ranges; TypeError for a non-number or non-bool; the Optimizer
        errors.
    """

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0.0, *, maximize=False):
        name = type(self).__name__
        _checks.lr_value(lr, name, strict=True)
        _checks.number(eps, "eps", name, lower=0.0, strict=True)
        _checks.number(weight_decay, "weight_decay", name, lower=0.0)
        _checks.number(rho, "rho", name, lower=0.0, upper=1.0, upper_strict=False)
        _checks.flag(maximize, "maximize", name)
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize))
        self._param_state("accum", "accum")
        self._param_state("accum_update", "accum_update")

    def construct(self, gradients):
        self._check_gradients(gradients)
        for group, start, end in self._group_ranges():
            rho, eps = float(group["rho"]), float(group["eps"])
            for i in range(start, end):
                p = self.parameters[i]
                g = self._prepared_gradient(p, gradients[i], group["weight_decay"], group["maximize"])
                a, u = self.accum[i], self.accum_update[i]
                a_new = _ops.add(_ops.mul(a, rho), _ops.mul(_ops.square(g), 1.0 - rho))
                delta = _ops.mul(_kernels.div(_ops.sqrt(_ops.add(u, eps)), _ops.sqrt(_ops.add(a_new, eps))), g)
                _kernels.assign(a, a_new)
                _kernels.assign(u, _ops.add(_ops.mul(u, rho), _ops.mul(_ops.square(delta), 1.0 - rho)))
                _kernels.assign(p, _ops.sub(p, _ops.mul(delta, self._group_lr(group, p.dtype))))
        return True


class Adagrad(Optimizer):
    r"""Adagrad [Duchi et al. 2011] (PyTorch's formula; MindSpore runs it with ApplyAdagradV2), per group; t is the
    step count including this step:

        g ← −g if maximize;   g ← g + λ·w
        γ̃ = γ / (1 + (t − 1)·lr_decay)
        s ← s + g²;   w ← w − γ̃·g / (√s + ε)

    Args: params, lr (> 0, default 1e-2), lr_decay (≥ 0, default 0.0), weight_decay (≥ 0, default 0.0),
        initial_accumulator_value (≥ 0, default 0.0; the start of s, per group), eps (> 0, default 1e-10).
        Keyword Args: maximize (bool, default False).
    State Parameters: `accum.<name>` (s), `step_t` (int32, 0-d). Returns True.
    Raises: ValueError for a value outside those ranges; TypeError for a non-number or non-bool; the Optimizer
        errors.
    """

    def __init__(self, params, lr=1e-2, lr_decay=0.0, weight_decay=0.0, initial_accumulator_value=0.0, eps=1e-10, *,
                 maximize=False):
        name = type(self).__name__
        _checks.lr_value(lr, name, strict=True)
        _checks.number(lr_decay, "lr_decay", name, lower=0.0)
        _checks.number(weight_decay, "weight_decay", name, lower=0.0)
        _checks.number(initial_accumulator_value, "initial_accumulator_value", name, lower=0.0)
        _checks.number(eps, "eps", name, lower=0.0, strict=True)
        _checks.flag(maximize, "maximize", name)
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value, maximize=maximize))
        # Each group's own initial_accumulator_value (PyTorch's; MindSpore 2.10 uses the constructor's for all).
        self._param_state("accum", "accum", lambda group: _checks.number(
            group["initial_accumulator_value"], "initial_accumulator_value", name, lower=0.0))
        _step_counter(self)

    def construct(self, gradients):
        self._check_gradients(gradients)
        done = _kernels.cast(self.step_t, _F32)  # t − 1
        _kernels.assign(self.step_t, _ops.add(self.step_t, 1))
        for group, start, end in self._group_ranges():
            eps = float(group["eps"])
            lr = _kernels.div(self._group_lr(group, _F32), _ops.add(_ops.mul(done, float(group["lr_decay"])), 1.0))
            for i in range(start, end):
                p = self.parameters[i]
                g = self._prepared_gradient(p, gradients[i], group["weight_decay"], group["maximize"])
                s = _ops.add(self.accum[i], _ops.square(g))
                _kernels.assign(self.accum[i], s)
                step = _kernels.div(g, _ops.add(_ops.sqrt(s), eps))
                _kernels.assign(p, _ops.sub(p, _ops.mul(step, _as(lr, p.dtype))))
        return True


class Adamax(Optimizer):
    r"""Adamax, Adam's infinity-norm variant [Kingma & Ba 2015, §7.1] (PyTorch's formula, as MindSpore's), per
    group; t is the step count including this step:

        g ← −g if maximize;   g ← g + λ·w
        m ← β1·m + (1 − β1)·g;   u ← max(β2·u, |g| + ε)
        w ← w − γ/(1 − β1ᵗ) · m / u

    Args: params, lr (> 0, default 2e-3), betas (two floats in [0, 1), default (0.9, 0.999)), eps (> 0, default
        1e-8), weight_decay (≥ 0, default 0.0). Keyword Args: maximize (bool, default False).
    State Parameters: `exp_avg.<name>` (m), `exp_inf.<name>` (u), `step_t`. Returns True.
    Raises: ValueError for a value outside those ranges; TypeError for a non-number or non-bool; the Optimizer
        errors.
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, *, maximize=False):
        name = type(self).__name__
        _checks.lr_value(lr, name, strict=True)
        _checks.number(weight_decay, "weight_decay", name, lower=0.0)
        _checks.number(eps, "eps", name, lower=0.0, strict=True)
        _checks.beta_pair(betas, name)
        _checks.flag(maximize, "maximize", name)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize))
        _step_counter(self)
        self._param_state("exp_avg", "exp_avg")
        self._param_state("exp_inf", "exp_inf")

    def construct(self, gradients):
        self._check_gradients(gradients)
        t = _advance(self)
        for group, start, end in self._group_ranges():
            beta1, beta2 = (float(b) for b in group["betas"])
            eps = float(group["eps"])
            clr = _kernels.div(self._group_lr(group, _F32), _ops.sub(1.0, _pow(beta1, t)))
            for i in range(start, end):
                p = self.parameters[i]
                g = self._prepared_gradient(p, gradients[i], group["weight_decay"], group["maximize"])
                m = _ops.add(_ops.mul(self.exp_avg[i], beta1), _ops.mul(g, 1.0 - beta1))
                u = _ops.maximum(_ops.mul(self.exp_inf[i], beta2), _ops.add(_ops.abs(g), eps))
                _kernels.assign(self.exp_avg[i], m)
                _kernels.assign(self.exp_inf[i], u)
                _kernels.assign(p, _ops.sub(p, _ops.mul(_kernels.div(m, u), _as(clr, p.dtype))))
        return True


class NAdam(Optimizer):
    r"""NAdam, Adam with Nesterov momentum [Dozat 2016] (PyTorch's formula, as MindSpore's; no maximize option, as
    MindSpore 2.10's), per group with momentum_decay ψ; t is the step count including this step:

        g ← g + λ·w
        μₜ = β1·(1 − ½·0.96^(t·ψ));   μₜ₊₁ = β1·(1 − ½·0.96^((t+1)·ψ));   Π ← Π·μₜ   (Π starts at 1)
        m ← β1·m + (1 − β1)·g;   v ← β2·v + (1 − β2)·g²;   d = √(v / (1 − β2ᵗ)) + ε
        w ← w − γ·(1 − μₜ)/(1 − Π) · g/d − γ·μₜ₊₁/(1 − Π·μₜ₊₁) · m/d

    Args: params, lr (> 0, default 2e-3), betas (two floats in [0, 1), default (0.9, 0.999)), eps (> 0, default
        1e-8), weight_decay (≥ 0, default 0.0), momentum_decay (≥ 0, default 4e-3).
    State Parameters: `exp_avg.<name>`, `exp_avg_sq.<name>` (zeros), `mu_product_<name>` (0-d float32, 1),
        `step_t`. Returns True.
    Raises: ValueError for a value outside those ranges; TypeError for a non-number; the Optimizer errors.
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, momentum_decay=4e-3):
        name = type(self).__name__
        _checks.lr_value(lr, name, strict=True)
        _checks.number(eps, "eps", name, lower=0.0, strict=True)
        _checks.number(weight_decay, "weight_decay", name, lower=0.0)
        _checks.number(momentum_decay, "momentum_decay", name, lower=0.0)
        _checks.beta_pair(betas, name)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay))
        _step_counter(self)
        self._param_state("exp_avg", "exp_avg")
        self._param_state("exp_avg_sq", "exp_avg_sq")
        self._scalar_state("mu_product", "mu_product", 1.0)

    def construct(self, gradients):
        self._check_gradients(gradients)
        t = _advance(self)
        for group, start, end in self._group_ranges():
            beta1, beta2 = (float(b) for b in group["betas"])
            eps, psi = float(group["eps"]), float(group["momentum_decay"])
            bc2 = _ops.sub(1.0, _pow(beta2, t))
            mu = _ops.mul(_ops.sub(1.0, _ops.mul(_pow(0.96, _ops.mul(t, psi)), 0.5)), beta1)
            mu_next = _ops.mul(_ops.sub(1.0, _ops.mul(_pow(0.96, _ops.mul(_ops.add(t, 1.0), psi)), 0.5)), beta1)
            lr = self._group_lr(group, _F32)
            for i in range(start, end):
                p = self.parameters[i]
                dt = p.dtype
                g = self._prepared_gradient(p, gradients[i], group["weight_decay"])
                prod = _ops.mul(self.mu_product[i], mu)
                _kernels.assign(self.mu_product[i], prod)
                m = _ops.add(_ops.mul(self.exp_avg[i], beta1), _ops.mul(g, 1.0 - beta1))
                v = _ops.add(_ops.mul(self.exp_avg_sq[i], beta2), _ops.mul(_ops.square(g), 1.0 - beta2))
                _kernels.assign(self.exp_avg[i], m)
                _kernels.assign(self.exp_avg_sq[i], v)
                denom = _ops.add(_ops.sqrt(_kernels.div(v, _as(bc2, dt))), eps)
                c_grad = _kernels.div(_ops.mul(lr, _ops.sub(1.0, mu)), _ops.sub(1.0, prod))
                c_avg = _kernels.div(_ops.mul(lr, mu_next), _ops.sub(1.0, _ops.mul(prod, mu_next)))
                w = _ops.sub(p, _ops.mul(_kernels.div(g, denom), _as(c_grad, dt)))
                _kernels.assign(p, _ops.sub(w, _ops.mul(_kernels.div(m, denom), _as(c_avg, dt))))
        return True


class RAdam(Optimizer):
    r"""RAdam, rectified Adam [Liu et al. 2020] (PyTorch's formula, as MindSpore's; no maximize option, as
    MindSpore 2.10's), per group; t is the step count including this step:

        g ← g + λ·w
        m ← β1·m + (1 − β1)·g;   v ← β2·v + (1 − β2)·g²;   m̂ = m / (1 − β1ᵗ)
        ρ∞ = 2/(1 − β2) − 1;   ρₜ = ρ∞ − 2t·β2ᵗ/(1 − β2ᵗ)
        ρₜ > 5:  r = √((ρₜ − 4)(ρₜ − 2)ρ∞ / ((ρ∞ − 4)(ρ∞ − 2)ρₜ));   w ← w − γ·m̂·r·√(1 − β2ᵗ)/(√v + ε)
        else:    w ← w − γ·m̂

    Args: params, lr (> 0, default 1e-3), betas (two floats in [0, 1), default (0.9, 0.999)), eps (> 0, default
        1e-8), weight_decay (≥ 0, default 0.0).
    State Parameters: `exp_avg.<name>`, `exp_avg_sq.<name>`, `step_t`. Returns True.
    Raises: ValueError for a value outside those ranges; TypeError for a non-number; the Optimizer errors.
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        name = type(self).__name__
        _checks.lr_value(lr, name, strict=True)
        _checks.number(weight_decay, "weight_decay", name, lower=0.0)
        _checks.number(eps, "eps", name, lower=0.0, strict=True)
        _checks.beta_pair(betas, name)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))
        _step_counter(self)
        self._param_state("exp_avg", "exp_avg")
        self._param_state("exp_avg_sq", "exp_avg_sq")

    def construct(self, gradients):
        self._check_gradients(gradients)
        t = _advance(self)
        for group, start, end in self._group_ranges():
            beta1, beta2 = (float(b) for b in group["betas"])
            eps = float(group["eps"])
            bc1 = _ops.sub(1.0, _pow(beta1, t))
            b2t = _pow(beta2, t)
            bc2 = _ops.sub(1.0, b2t)
            rho_inf = 2.0 / (1.0 - beta2) - 1.0
            rho_t = _ops.sub(rho_inf, _kernels.div(_ops.mul(_ops.mul(t, b2t), 2.0), bc2))
            rect = _ops.sqrt(_kernels.div(_ops.mul(_ops.mul(_ops.sub(rho_t, 4.0), _ops.sub(rho_t, 2.0)), rho_inf),
                                        _ops.mul(rho_t, (rho_inf - 4.0) * (rho_inf - 2.0))))
            rectified = _ops.greater(rho_t, _kernels.full([], 5.0, _F32))
            lr = self._group_lr(group, _F32)
            for i in range(start, end):
                p = self.parameters[i]
                dt = p.dtype
                g = self._prepared_gradient(p, gradients[i], group["weight_decay"])
                m = _ops.add(_ops.mul(self.exp_avg[i], beta1), _ops.mul(g, 1.0 - beta1))
                v = _ops.add(_ops.mul(self.exp_avg_sq[i], beta2), _ops.mul(_ops.square(g), 1.0 - beta2))
                _kernels.assign(self.exp_avg[i], m)
                _kernels.assign(self.exp_avg_sq[i], v)
                m_hat_lr = _ops.mul(_kernels.div(m, _as(bc1, dt)), _as(lr, dt))
                adaptive = _kernels.div(_as(_ops.mul(_ops.sqrt(bc2), rect), dt), _ops.add(_ops.sqrt(v), eps))
                _kernels.assign(p, _ops.sub(p, _kernels.select(rectified, _ops.mul(m_hat_lr, adaptive), m_hat_lr)))
        return True
