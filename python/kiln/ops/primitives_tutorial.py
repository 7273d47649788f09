"""Primitive classes that MindSpore's optimizer, custom-layer and static-graph tutorials call directly: ApplyMomentum
(a custom optimizer's update), Dropout2D/Dropout3D (a custom dropout layer) and TransposeView (a view + in-place
example). Both reuse Kiln's kernels: the in-place
momentum update of nn.Momentum (`_core.apply_momentum`) and the channel dropout of ops.dropout2d."""
from .._loader import _core
from ..common import dtype as mstype
from ..common.parameter import Parameter
from ..common.tensor import Tensor
from .primitives import Primitive

__all__ = ["ApplyMomentum", "Dropout2D", "Dropout3D", "TransposeView"]


def _as_tensor(v, like, name, op):
    if isinstance(v, Tensor):
        return v if v.dtype == like.dtype else _core.cast(v, like.dtype)
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return _core.cast(Tensor(float(v)), like.dtype)
    raise TypeError(f"For '{op}', the '{name}' must be a Tensor or a float, but got {type(v).__name__}.")


class ApplyMomentum(Primitive):
    """ApplyMomentum(use_nesterov=False, use_locking=False, gradient_scale=1.0): MindSpore's momentum update, in
    place: accumulation ← momentum·accumulation + gradient·gradient_scale; variable ← variable − lr·accumulation
    (use_nesterov: variable ← variable − lr·(gradient + momentum·accumulation)).

    `__call__(variable, accumulation, learning_rate, gradient, momentum)`: variable and accumulation are Parameters
    (updated in place), learning_rate and momentum floats or scalar Tensors. Returns a Tensor with the updated
    variable's values.
    Raises TypeError for non-bool flags, variable/accumulation that are not Parameters, or lr/momentum of other types;
    ValueError when the shapes of variable, accumulation and gradient differ."""

    def __init__(self, use_nesterov=False, use_locking=False, gradient_scale=1.0):
        super().__init__("ApplyMomentum")
        for n, v in (("use_nesterov", use_nesterov), ("use_locking", use_locking)):
            if not isinstance(v, bool):
                raise TypeError(f"For 'ApplyMomentum', the '{n}' must be bool, but got {type(v).__name__}.")
        if not isinstance(gradient_scale, (int, float)) or isinstance(gradient_scale, bool):
            raise TypeError(f"For 'ApplyMomentum', the 'gradient_scale' must be a float, but got "
                            f"{type(gradient_scale).__name__}.")
        self.use_nesterov, self.use_locking, self.gradient_scale = use_nesterov, use_locking, float(gradient_scale)

    def __call__(self, variable, accumulation, learning_rate, gradient, momentum):
        op = "ApplyMomentum"
        for n, v in (("variable", variable), ("accumulation", accumulation)):
            if not isinstance(v, Parameter):
                raise TypeError(f"For '{op}', the '{n}' must be a Parameter, but got {type(v).__name__}.")
        if not isinstance(gradient, Tensor):
            raise TypeError(f"For '{op}', the 'gradient' must be a Tensor, but got {type(gradient).__name__}.")
        if not (tuple(variable.shape) == tuple(accumulation.shape) == tuple(gradient.shape)):
            raise ValueError(f"For '{op}', variable, accumulation and gradient must have one shape, but got "
                             f"{tuple(variable.shape)}, {tuple(accumulation.shape)} and {tuple(gradient.shape)}.")
        if isinstance(momentum, Tensor):
            momentum = float(momentum.asnumpy())
        elif not isinstance(momentum, (int, float)) or isinstance(momentum, bool):
            raise TypeError(f"For '{op}', the 'momentum' must be a Tensor or a float, but got "
                            f"{type(momentum).__name__}.")
        lr = _as_tensor(learning_rate, variable, "learning_rate", op)
        g = gradient if gradient.dtype == variable.dtype else _core.cast(gradient, variable.dtype)
        if self.gradient_scale != 1.0:
            g = _core.mul(g, self.gradient_scale)
        _core.apply_momentum(variable, accumulation, lr, g, float(momentum), self.use_nesterov)
        return _core.identity(variable)  # a Tensor with the updated values (MindSpore returns one, not the Parameter)


class _ChannelDropout(Primitive):
    _rank = 4

    def __init__(self, keep_prob=0.5):
        name = type(self).__name__
        super().__init__(name)
        if not isinstance(keep_prob, (int, float)) or isinstance(keep_prob, bool):
            raise TypeError(f"For '{name}', the 'keep_prob' must be a float, but got {type(keep_prob).__name__}.")
        if not 0.0 <= keep_prob <= 1.0:
            raise ValueError(f"For '{name}', the 'keep_prob' must be in [0.0, 1.0], but got {keep_prob}.")
        self.keep_prob = float(keep_prob)

    def __call__(self, x):
        from .function import rand
        name = type(self).__name__
        if not isinstance(x, Tensor):
            raise TypeError(f"For '{name}', the input must be a Tensor, but got {type(x).__name__}.")
        if len(x.shape) != self._rank:
            raise ValueError(f"For '{name}', the input must be {self._rank}-D, but got shape {tuple(x.shape)}.")
        keep = self.keep_prob
        u = rand(*(list(x.shape[:2]) + [1] * (self._rank - 2)), dtype=mstype.float32)
        mask = _core.broadcast_to(_core.less(u, keep), tuple(x.shape))
        if keep == 0.0:
            return _core.zeros_like(x), mask
        out = _core.mul(x, _core.mul(_core.cast(mask, x.dtype), 1.0 / keep))
        return out, mask


class Dropout2D(_ChannelDropout):
    """Dropout2D(keep_prob=0.5)(x): whole channels of the (N, C, H, W) input kept with probability keep_prob (one
    draw per (sample, channel)) and scaled by 1/keep_prob, the others zeroed. Returns (output, mask): mask is a Bool
    Tensor of x's shape (True where kept). Raises TypeError (non-float keep_prob, non-Tensor x), ValueError
    (keep_prob outside [0, 1], x not 4-D)."""
    _rank = 4


class Dropout3D(_ChannelDropout):
    """Dropout3D(keep_prob=0.5)(x): Dropout2D for (N, C, D, H, W) inputs; returns (output, mask)."""
    _rank = 5


class TransposeView(Primitive):
    """TransposeView()(input, input_perm): `input` with its dims permuted (output dim i is input dim
    input_perm[i]), as a view that shares input's storage: an in-place write into it (ops.Assign, add_) reaches
    input, in PyNative and in compiled code (MindSpore 2.10's view primitive). Same values as ops.transpose.
    Raises TypeError for a non-Tensor input or a perm that is not a tuple/list of ints, ValueError for a perm that
    is not a permutation of range(input.ndim)."""

    def __call__(self, input, input_perm):
        if not isinstance(input, Tensor):
            raise TypeError(f"For 'TransposeView', the 'input' must be a Tensor, but got {type(input).__name__}.")
        if not isinstance(input_perm, (tuple, list)) or \
                not all(isinstance(p, int) and not isinstance(p, bool) for p in input_perm):
            raise TypeError(f"For 'TransposeView', 'input_perm' must be a tuple or list of ints, but got "
                            f"{input_perm!r}.")
        perm = list(input_perm)
        nd = input.ndim
        if sorted(p % nd if nd else p for p in perm) != list(range(nd)) or any(not -nd <= p < nd for p in perm):
            raise ValueError(f"For 'TransposeView', 'input_perm' must be a permutation of range({nd}) for a {nd}-D "
                             f"input, but got {tuple(input_perm)}.")
        return input.transpose(tuple(p % nd for p in perm)) if nd else input.view(())
