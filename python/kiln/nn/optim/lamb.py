"""nn.Lamb with MindSpore's formula (its Lamb kernel)."""
from ... import ops as _ops
from ...common.tensor import Tensor as _Tensor
from ...ops import _kernels
from ...common import dtype as mstype
from ._validate import check_open_unit, check_positive, check_type
from .optimizer import Optimizer
from .rmsprop import _step_lr

__all__ = ["Lamb"]

_LOW = (mstype.float16, mstype.bfloat16)


def _norm(x):
    return _ops.sqrt(_kernels.sum(_ops.square(x), None, False))


class Lamb(Optimizer):
    r"""LAMB, layer-wise adaptive moments [You et al. 2019, arXiv:1904.00962], as MindSpore's Lamb kernel computes
    it (t = the step count including this step, i.e. global_step after its increment):

        m ← β1·m + (1 − β1)·g;   v ← β2·v + (1 − β2)·g²
        m̂ = m/(1 − β1ᵗ);  v̂ = v/(1 − β2ᵗ)
        u = m̂/(√v̂ + ε) + λ·w                 (λ only for parameters selected by the decay filter / groups)
        r = ‖w‖/‖u‖ if ‖w‖ > 0 and ‖u‖ > 0, else 1      (the trust ratio, per parameter, not clipped)
        w ← w − lr·r·u

    Computed in float32 for float16/bfloat16 parameters (the state keeps the parameter's dtype).

    Args:
        params: Parameters or group dicts (see nn.Optimizer); learning_rate (required): see nn.Optimizer.
        beta1 (float in (0, 1), default 0.9), beta2 (float in (0, 1), default 0.999), eps (float > 0, default 1e-6),
        weight_decay (float ≥ 0 or a Cell schedule, default 0.0). No loss_scale (as MindSpore).
    State Parameters: `lamb_m.<name>`, `lamb_v.<name>` (zeros); plus `global_step`, `learning_rate`.
    Inputs: gradients, a tuple aligned with `optimizer.parameters`. Returns True.
    Raises:
        TypeError: beta1/beta2/eps not float.
        ValueError: beta outside (0, 1), eps ≤ 0; and the nn.Optimizer errors.
    """

    def __init__(self, params, learning_rate, beta1=0.9, beta2=0.999, eps=1e-6, weight_decay=0.0):
        super().__init__(learning_rate, params, weight_decay)
        name = self.cls_name
        check_type(beta1, (float,), "beta1", name)
        check_type(beta2, (float,), "beta2", name)
        check_type(eps, (float,), "eps", name)
        check_open_unit(beta1, "beta1", name)
        check_open_unit(beta2, "beta2", name)
        check_positive(eps, "eps", name)
        self.beta1 = _kernels.full([], beta1, mstype.float32)
        self.beta2 = _kernels.full([], beta2, mstype.float32)
        self.eps = _kernels.full([], eps, mstype.float32)
        self.params = self._parameters
        self.moments1 = self._parameters.clone(prefix="lamb_m", init="zeros")
        self.moments2 = self._parameters.clone(prefix="lamb_v", init="zeros")
        self.__dict__["_hyper"] = (float(beta1), float(beta2), float(eps))

    def construct(self, gradients):
        # t and a dynamic weight decay are read before _prepare increments global_step (as MindSpore, which calls
        # get_weight_decay before get_lr; the same values in PyNative and in a graph).
        t = _kernels.reshape(_ops.add(_kernels.cast(self.global_step, mstype.float32), 1.0), [])
        wds = self.get_weight_decay() if self.exec_weight_decay else 0.0
        grads, lrs = self._prepare(gradients, decay=False)
        beta1, beta2, eps = self._hyper
        bc1 = _ops.sub(1.0, _kernels.pow(beta1, t))
        bc2 = _ops.sub(1.0, _kernels.pow(beta2, t))
        flags = self.decay_flags
        if not isinstance(wds, tuple):
            wds = (wds,) * self.param_length
        for i, (p, m, v, g, lr) in enumerate(zip(self._parameters, self.moments1, self.moments2, grads, lrs)):
            dt = p.dtype
            ct = mstype.float32 if dt in _LOW else dt
            w = p if dt == ct else _kernels.cast(p, ct)
            g = g if g.dtype == ct else _kernels.cast(g, ct)
            mc = m if m.dtype == ct else _kernels.cast(m, ct)
            vc = v if v.dtype == ct else _kernels.cast(v, ct)
            m_new = _ops.add(_ops.mul(mc, beta1), _ops.mul(g, 1.0 - beta1))
            v_new = _ops.add(_ops.mul(vc, beta2), _ops.mul(_ops.square(g), 1.0 - beta2))
            m_hat = _kernels.div(m_new, _step_lr(bc1, ct))
            v_hat = _kernels.div(v_new, _step_lr(bc2, ct))
            u = _kernels.div(m_hat, _ops.add(_ops.sqrt(v_hat), eps))
            if flags[i]:
                wd = wds[i]
                if isinstance(wd, _Tensor):
                    wd = _step_lr(wd, ct)
                u = _ops.add(u, _ops.mul(w, wd))
            w_norm = _norm(w)
            u_norm = _norm(u)
            one = _kernels.ones_like(w_norm)
            trust = _kernels.select(_ops.greater(w_norm, 0.0),
                                 _kernels.select(_ops.greater(u_norm, 0.0), _kernels.div(w_norm, u_norm), one), one)
            w_new = _ops.sub(w, _ops.mul(_ops.mul(trust, _step_lr(lr, ct)), u))
            _kernels.assign(m, m_new)
            _kernels.assign(v, v_new)
            _kernels.assign(p, w_new)
        return True
