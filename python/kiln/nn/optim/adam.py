"""nn.Adam and nn.AdamWeightDecay with MindSpore's formulas (../shared/reference/mindspore_api.md §5.2–5.3)."""
from ... import ops as _ops
from ...ops import _kernels
from ...common import dtype as mstype
from ...common.initializer import initializer
from ...common.parameter import Parameter
from ._validate import check_open_unit, check_positive, check_type
from .optimizer import Optimizer

__all__ = ["Adam", "AdamWeightDecay"]


def _check_param_value(beta1, beta2, eps, cls_name):
    check_type(beta1, (float,), "beta1", cls_name)
    check_type(beta2, (float,), "beta2", cls_name)
    check_type(eps, (float,), "eps", cls_name)
    check_open_unit(beta1, "beta1", cls_name)
    check_open_unit(beta2, "beta2", cls_name)
    check_positive(eps, "eps", cls_name)


class Adam(Optimizer):
    r"""Adam [Kingma & Ba 2015] as MindSpore computes it (ε added after folding the bias correction into the step):

        (weight decay and loss scale as nn.Optimizer; t = the step count after this step)
        β1ᵗ ← β1ᵗ⁻¹·β1,  β2ᵗ ← β2ᵗ⁻¹·β2          (the `beta1_power` / `beta2_power` Parameters, float32)
        m ← β1·m + (1 − β1)·g
        v ← β2·v + (1 − β2)·g²
        α = lr·√(1 − β2ᵗ) / (1 − β1ᵗ)
        w ← w − α·m / (√v + ε)                    (use_nesterov: (β1·m + (1 − β1)·g) in place of m)
        use_amsgrad: v̂ ← max(v̂, v); w ← w − α·m / (√v̂ + ε)

    Equivalently PyTorch's Adam with ε_pt = ε/√(1 − β2ᵗ), so the first steps differ from PyTorch when √v ≈ ε.

    Args:
        params: Parameters or group dicts (see nn.Optimizer); learning_rate (default 1e-3): see nn.Optimizer.
        beta1, beta2 (float in (0, 1); defaults 0.9, 0.999), eps (float > 0; default 1e-8).
        use_locking (bool; no effect), use_nesterov (bool), weight_decay, loss_scale: see nn.Optimizer.
        use_amsgrad (bool). kwargs: use_lazy, use_offload (bool; identical results for dense gradients).

    State Parameters: `beta1_power`, `beta2_power` (float32, shape () as MindSpore's, start at 1), `moment1.<name>`,
    `moment2.<name>` (zeros like each parameter), `vhat.<name>` with amsgrad; plus `global_step`,
    `learning_rate`.

    Inputs: gradients, a tuple aligned with `optimizer.parameters`. Returns True.

    Raises:
        TypeError: beta1/beta2/eps not float (ints are rejected), flags not bool.
        ValueError: beta outside (0, 1), eps ≤ 0, unknown kwargs, use_lazy with use_offload, use_amsgrad with
            use_lazy/use_offload; and the nn.Optimizer errors.
    """

    _support_parallel_optimizer = True  # element-wise update: runs on slices (kiln/nn/optim/_parallel.py)

    def __init__(self, params, learning_rate=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, use_locking=False,
                 use_nesterov=False, weight_decay=0.0, loss_scale=1.0, use_amsgrad=False, **kwargs):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        name = self.cls_name
        unknown = set(kwargs) - {"use_lazy", "use_offload"}
        if unknown:
            raise ValueError(f"For '{name}', the keyword arguments can only be 'use_lazy' or 'use_offload', but got "
                             f"{sorted(unknown)}.")
        use_lazy = kwargs.get("use_lazy", False)
        use_offload = kwargs.get("use_offload", False)
        _check_param_value(beta1, beta2, eps, name)
        for flag, v in (("use_locking", use_locking), ("use_nesterov", use_nesterov), ("use_amsgrad", use_amsgrad),
                        ("use_lazy", use_lazy), ("use_offload", use_offload)):
            check_type(v, (bool,), flag, name)
        if use_lazy and use_offload:
            raise ValueError(f"For '{name}', 'use_lazy' and 'use_offload' can not both be True.")
        if use_amsgrad and (use_lazy or use_offload):
            raise ValueError(f"For '{name}', 'use_amsgrad' can not be used with 'use_lazy' or 'use_offload'.")
        self.use_lazy, self.use_offload = use_lazy, use_offload
        self.use_locking, self.use_nesterov, self.use_amsgrad = use_locking, use_nesterov, use_amsgrad
        self.beta1 = _kernels.full([], beta1, mstype.float32)
        self.beta2 = _kernels.full([], beta2, mstype.float32)
        self.eps = _kernels.full([], eps, mstype.float32)
        self.beta1_power = Parameter(initializer(1, [], mstype.float32), name="beta1_power")
        self.beta2_power = Parameter(initializer(1, [], mstype.float32), name="beta2_power")
        self.moment1 = self._parameters.clone(prefix="moment1", init="zeros")
        self.moment2 = self._parameters.clone(prefix="moment2", init="zeros")
        if use_amsgrad:
            self.vhat = self._parameters.clone(prefix="vhat", init="zeros")
        d = self.__dict__
        d["_hyper"] = (float(beta1), float(beta2), float(eps))

    def construct(self, gradients):
        grads, lrs = self._prepare(gradients)
        b1p = _ops.mul(self.beta1_power, self.beta1)
        _kernels.assign(self.beta1_power, b1p)
        b2p = _ops.mul(self.beta2_power, self.beta2)
        _kernels.assign(self.beta2_power, b2p)
        beta1, beta2, eps = self._hyper
        if self.use_amsgrad:
            for p, m, v, vh, g, lr in zip(self._parameters, self.moment1, self.moment2, self.vhat, grads, lrs):
                _amsgrad_update(p, m, v, vh, b1p, b2p, lr, beta1, beta2, eps, g)
            return True
        adam = _kernels.adam
        nesterov = self.use_nesterov
        for p, m, v, g, lr in zip(self._parameters, self.moment1, self.moment2, grads, lrs):
            adam(p, m, v, b1p, b2p, lr, beta1, beta2, eps, g, nesterov)
        return True


def _amsgrad_update(p, m, v, vhat, b1p, b2p, lr, beta1, beta2, eps, g):
    """AMSGrad (MindSpore's ApplyAdamWithAmsgrad), composed of Kiln ops, in place."""
    dt = p.dtype
    if g.dtype != dt:
        g = _kernels.cast(g, dt)
    m_new = _ops.add(_ops.mul(m, beta1), _ops.mul(g, 1.0 - beta1))
    v_new = _ops.add(_ops.mul(v, beta2), _ops.mul(_ops.square(g), 1.0 - beta2))
    vh_new = _ops.maximum(vhat, v_new)
    lr_t = _kernels.div(_ops.mul(lr, _ops.sqrt(_ops.sub(1.0, b2p))), _ops.sub(1.0, b1p))
    if lr_t.dtype != dt:
        lr_t = _kernels.cast(lr_t, dt)
    step = _kernels.div(m_new, _ops.add(_ops.sqrt(vh_new), eps))
    _kernels.assign(m, m_new)
    _kernels.assign(v, v_new)
    _kernels.assign(vhat, vh_new)
    _kernels.assign(p, _ops.sub(p, _ops.mul(lr_t, step)))


class AdamWeightDecay(Optimizer):
    r"""Adam with decoupled weight decay as MindSpore's nn.AdamWeightDecay (no bias correction):

        m ← β1·m + (1 − β1)·g;  v ← β2·v + (1 − β2)·g²;  u = m / (√v + ε)
        u ← u + λ·w   (parameters selected by the decay filter, see nn.Optimizer);   w ← w − lr·u

    Args: params, learning_rate (1e-3), beta1 (0.9), beta2 (0.999), eps (1e-6), weight_decay (0.0).
    State Parameters: `adam_m.<name>`, `adam_v.<name>`. Returns True.
    Raises: as Adam for beta1/beta2/eps.
    """

    _support_parallel_optimizer = True  # element-wise update: runs on slices (kiln/nn/optim/_parallel.py)

    def __init__(self, params, learning_rate=1e-3, beta1=0.9, beta2=0.999, eps=1e-6, weight_decay=0.0):
        super().__init__(learning_rate, params, weight_decay)
        _check_param_value(beta1, beta2, eps, self.cls_name)
        self.beta1 = _kernels.full([], beta1, mstype.float32)
        self.beta2 = _kernels.full([], beta2, mstype.float32)
        self.eps = _kernels.full([], eps, mstype.float32)
        self.moments1 = self._parameters.clone(prefix="adam_m", init="zeros")
        self.moments2 = self._parameters.clone(prefix="adam_v", init="zeros")
        self.__dict__["_hyper"] = (float(beta1), float(beta2), float(eps))

    def construct(self, gradients):
        wds = self.get_weight_decay()  # before _prepare advances global_step (a dynamic decay sees this step)
        grads, lrs = self._prepare(gradients, decay=False)
        beta1, beta2, eps = self._hyper
        flags = self.decay_flags
        if not isinstance(wds, tuple):
            wds = (wds,) * self.param_length
        for i, (p, m, v, g, lr) in enumerate(zip(self._parameters, self.moments1, self.moments2, grads, lrs)):
            dt = p.dtype
            if g.dtype != dt:
                g = _kernels.cast(g, dt)
            m_new = _ops.add(_ops.mul(m, beta1), _ops.mul(g, 1.0 - beta1))
            v_new = _ops.add(_ops.mul(v, beta2), _ops.mul(_ops.square(g), 1.0 - beta2))
            u = _kernels.div(m_new, _ops.add(_ops.sqrt(v_new), eps))
            if flags[i]:
                u = _ops.add(u, _ops.mul(p, wds[i]))
            lr_c = lr if lr.dtype == dt else _kernels.cast(lr, dt)
            _kernels.assign(m, m_new)
            _kernels.assign(v, v_new)
            _kernels.assign(p, _ops.sub(p, _ops.mul(u, lr_c)))
        return True
