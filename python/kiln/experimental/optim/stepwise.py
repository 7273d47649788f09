"""kiln.experimental.optim's ASGD, RMSprop and Rprop (MindSpore 2.10's mindspore.experimental.optim classes of
those names: PyTorch's formulas, composed of Kiln ops; the first-step and threshold cases are selects, so that one
update runs eagerly, compiled, and inside a compiled training step)."""
from ... import ops as _ops
from ...ops import _kernels
from ...common import dtype as mstype
from . import _checks
from .adaptive import _advance, _as, _step_counter
from .optimizer import Optimizer

__all__ = ["ASGD", "RMSprop", "Rprop"]

_F32 = mstype.float32


class ASGD(Optimizer):
    r"""Averaged SGD [Polyak & Juditsky 1992] (PyTorch's formula, as MindSpore's), per group with lambd λd, alpha
    α, t0; t is the step count including this step, η the step size (γ at the first step), μ the averaging rate:

        g ← −g if maximize;   g ← g + λ·w
        w ← w·(1 − λd·η) − η·g
        ax ← ax + μ·(w − ax)   (ax ← w while μ = 1)
        η ← γ / (1 + λd·γ·t)^α;   μ ← 1 / max(1, t − t0)

    Args: params, lr (> 0, default 0.01), lambd (float, default 1e-4), alpha (default 0.75), t0 (float, default
        1e6), weight_decay (≥ 0, default 0.0), maximize (bool, default False).
    State Parameters: `eta_<name>`, `mu_<name>` (0-d float32), `ax.<name>` (the average), `step_t`. Returns True.
    Raises: ValueError for lr ≤ 0 or weight_decay < 0; TypeError for a lambd or t0 that is not a float, a
        non-number alpha, a non-bool maximize; the Optimizer errors.
    """

    def __init__(self, params, lr=0.01, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0.0, maximize=False):
        name = type(self).__name__
        _checks.lr_value(lr, name, strict=True)
        _checks.number(weight_decay, "weight_decay", name, lower=0.0)
        for arg, v in (("lambd", lambd), ("t0", t0)):
            if not isinstance(v, float):
                raise TypeError(f"For 'ASGD', the type of {arg} must be float, but got {type(v)}.")
        _checks.number(alpha, "alpha", name)
        _checks.flag(maximize, "maximize", name)
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                                      maximize=maximize))
        self._scalar_state("mu", "mu", 1.0)
        self._scalar_state("eta", "eta", 0.0)
        self._param_state("ax", "ax")
        _step_counter(self)

    def construct(self, gradients):
        self._check_gradients(gradients)
        t = _advance(self)
        first = _ops.equal(t, _kernels.full([], 1.0, _F32))
        for group, start, end in self._group_ranges():
            lambd, alpha, t0 = float(group["lambd"]), float(group["alpha"]), float(group["t0"])
            lr = self._group_lr(group, _F32)
            for i in range(start, end):
                p = self.parameters[i]
                dt = p.dtype
                g = self._prepared_gradient(p, gradients[i], group["weight_decay"], group["maximize"])
                eta = _kernels.select(first, lr, self.eta[i])
                w = _ops.sub(_ops.mul(p, _as(_ops.sub(1.0, _ops.mul(eta, lambd)), dt)),
                              _ops.mul(g, _as(eta, dt)))
                _kernels.assign(p, w)
                mu = self.mu[i]
                ax = self.ax[i]
                averaged = _ops.add(ax, _ops.mul(_ops.sub(w, ax), _as(mu, dt)))
                _kernels.assign(ax, _kernels.select(_ops.equal(mu, _kernels.full([], 1.0, _F32)), w, averaged))
                base = _ops.add(_ops.mul(_ops.mul(lr, t), lambd), 1.0)
                _kernels.assign(self.eta[i], _kernels.div(lr, _kernels.pow(base, _kernels.full([], alpha, _F32))))
                _kernels.assign(mu, _kernels.div(1.0, _ops.maximum(_ops.sub(t, t0), _kernels.full([], 1.0, _F32))))
        return True


class RMSprop(Optimizer):
    r"""RMSprop [Hinton, Coursera lecture 6.5] (PyTorch's formula, as MindSpore's), per group with alpha α,
    momentum μ, centered:

        g ← −g if maximize;   g ← g + λ·w
        s ← α·s + (1 − α)·g²
        centered: ḡ ← α·ḡ + (1 − α)·g;   d = √(s − ḡ²) + ε     else d = √s + ε
        μ > 0: b ← μ·b + g/d;   w ← w − γ·b          else w ← w − γ·g/d

    Args: params, lr (> 0, default 1e-2), alpha (≥ 0, default 0.99), eps (> 0, default 1e-8), weight_decay (≥ 0,
        default 0.0), momentum (≥ 0, default 0.0), centered (bool, default False), maximize (bool, default False).
    State Parameters: `mean_square.<name>` (s), `mean_grad.<name>` (ḡ), `moment.<name>` (b), zeros. Returns True.
    Raises: ValueError for a value outside those ranges; TypeError for a non-number or non-bool; the Optimizer
        errors.
    """

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0, centered=False,
                 maximize=False):
        name = type(self).__name__
        _checks.lr_value(lr, name, strict=True)
        _checks.number(alpha, "alpha", name, lower=0.0)
        _checks.number(eps, "eps", name, lower=0.0, strict=True)
        _checks.number(momentum, "momentum", name, lower=0.0)
        _checks.number(weight_decay, "weight_decay", name, lower=0.0)
        _checks.flag(centered, "centered", name)
        _checks.flag(maximize, "maximize", name)
        super().__init__(params, dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                                      weight_decay=weight_decay, maximize=maximize))
        self._param_state("mean_grad", "mean_grad")
        self._param_state("mean_square", "mean_square")
        self._param_state("moment", "moment")

    def construct(self, gradients):
        self._check_gradients(gradients)
        for group, start, end in self._group_ranges():
            alpha, eps, mom = float(group["alpha"]), float(group["eps"]), float(group["momentum"])
            for i in range(start, end):
                p = self.parameters[i]
                g = self._prepared_gradient(p, gradients[i], group["weight_decay"], group["maximize"])
                s = _ops.add(_ops.mul(self.mean_square[i], alpha), _ops.mul(_ops.square(g), 1.0 - alpha))
                _kernels.assign(self.mean_square[i], s)
                if group["centered"]:
                    gbar = _ops.add(_ops.mul(self.mean_grad[i], alpha), _ops.mul(g, 1.0 - alpha))
                    _kernels.assign(self.mean_grad[i], gbar)
                    s = _ops.sub(s, _ops.square(gbar))
                step = _kernels.div(g, _ops.add(_ops.sqrt(s), eps))
                if mom > 0:
                    step = _ops.add(_ops.mul(self.moment[i], mom), step)
                    _kernels.assign(self.moment[i], step)
                _kernels.assign(p, _ops.sub(p, _ops.mul(step, self._group_lr(group, p.dtype))))
        return True


class Rprop(Optimizer):
    r"""Rprop, resilient backpropagation [Riedmiller & Braun 1993] (PyTorch's formula, as MindSpore's), per group
    with etas (η−, η+) and step_sizes (Δmin, Δmax); each element keeps its own step size Δ (γ before the first
    step) and its previous gradient g':

        g ← −g if maximize
        s = sign(g·g');   Δ ← clip(Δ·(η+ if s > 0, η− if s < 0, 1 if s = 0), Δmin, Δmax)
        g ← 0 where s < 0;   g' ← g;   w ← w − sign(g)·Δ

    Args: params, lr (> 0, default 1e-2), etas (η− in (0, 1), η+ > 1; default (0.5, 1.2)), step_sizes (default
        (1e-6, 50)). Keyword Args: maximize (bool, default False).
    State Parameters: `prev.<name>` (g'), `step_size.<name>` (Δ), `step_t`. Returns True.
    Raises: ValueError for etas outside those ranges or lr ≤ 0; TypeError for non-pairs, non-numbers or a non-bool
        maximize; the Optimizer errors.
    """

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, maximize=False):
        name = type(self).__name__
        _checks.lr_value(lr, name, strict=True)
        etas = _checks.pair(etas, "etas", name)
        _checks.pair(step_sizes, "step_sizes", name)
        _checks.number(etas[1], "etas[1]", name, lower=1.0, strict=True)
        _checks.number(etas[0], "etas[0]", name, lower=0.0, strict=True, upper=1.0)
        _checks.flag(maximize, "maximize", name)
        super().__init__(params, dict(lr=lr, etas=etas, step_sizes=step_sizes, maximize=maximize))
        self._param_state("prev", "prev")
        self._param_state("step_size", "step_size")
        _step_counter(self)

    def construct(self, gradients):
        self._check_gradients(gradients)
        t = _advance(self)
        first = _ops.equal(t, _kernels.full([], 1.0, _F32))
        for group, start, end in self._group_ranges():
            eta_minus, eta_plus = (float(e) for e in group["etas"])
            lo, hi = (float(s) for s in group["step_sizes"])
            lr = self._group_lr(group, _F32)
            for i in range(start, end):
                p = self.parameters[i]
                dt = p.dtype
                g = self._prepared_gradient(p, gradients[i], 0.0, group["maximize"])
                size = _kernels.select(first, _ops.add(_kernels.zeros_like(self.step_size[i]), _as(lr, dt)),
                                    self.step_size[i])
                s = _ops.sign(_ops.mul(g, self.prev[i]))
                zero = _kernels.zeros_like(s)
                factor = _kernels.select(_ops.greater(s, zero), _ops.add(zero, eta_plus),
                                      _kernels.select(_ops.less(s, zero), _ops.add(zero, eta_minus),
                                                   _ops.add(zero, 1.0)))
                size = _kernels.clip(_ops.mul(size, factor), lo, hi)
                _kernels.assign(self.step_size[i], size)
                g = _kernels.select(_ops.less(s, zero), zero, g)
                _kernels.assign(self.prev[i], g)
                _kernels.assign(p, _ops.sub(p, _ops.mul(_ops.sign(g), size)))
        return True
