"""Clipping of tensors and of gradient tuples (MindSpore's ops.clip_by_value, ops.clip_by_global_norm), written with
Kiln ops so that they run eagerly and inside compiled steps (GRAPH_MODE / kiln.jit)."""
import numbers

from .._loader import _core
from ..common import dtype as mstype

__all__ = ["clip_by_value", "clip_by_global_norm"]

_Tensor = _core.Tensor


def _clip_one(x, lo, hi):
    if not isinstance(x, _Tensor):
        raise TypeError(f"For 'clip_by_value', the 'x' must be a Tensor or a list/tuple of Tensors, but got an element "
                        f"of type {type(x).__name__}.")
    # MindSpore's clip_by_value is min(max(x, lo), hi) as ops, so its gradient is theirs: 0.5 to x at a bound (a
    # tie), 1 at a NaN x — unlike ops.clamp (1 at the bounds, 0 at NaN, as PyTorch's clamp).
    if lo is not None:
        x = _core.maximum(x, lo)
    if hi is not None:
        x = _core.minimum(x, hi)
    return x


def clip_by_value(x, clip_value_min=None, clip_value_max=None):
    """Clips `x` elementwise to [clip_value_min, clip_value_max]: min(max(x, min), max), differentiated as those
    ops (MindSpore's rule): x gets 1 inside, 0.5 at a bound, 1 where x is NaN; see ops.clamp for PyTorch's rule.

    Args:
        x: a Tensor, or a list/tuple of Tensors (each clipped; the same container type is returned).
        clip_value_min, clip_value_max: a number or Tensor (broadcast against x), or None for no bound on that side;
            not both None. With min > max every element becomes max (as MindSpore/NumPy's clip).
    Returns: Tensor(s) with x's shape (broadcast with the bounds) and the promoted dtype.
    Raises: ValueError (both bounds None), TypeError (x not a Tensor / list / tuple of Tensors, bounds of another
        type)."""
    if clip_value_min is None and clip_value_max is None:
        raise ValueError("For 'clip_by_value', the 'clip_value_min' and 'clip_value_max' cannot be None at the same "
                         "time.")
    for name, v in (("clip_value_min", clip_value_min), ("clip_value_max", clip_value_max)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (numbers.Real, _Tensor))):
            raise TypeError(f"For 'clip_by_value', the '{name}' must be a number, a Tensor or None, but got "
                            f"{type(v).__name__}.")
    if isinstance(x, (tuple, list)):
        return type(x)(_clip_one(t, clip_value_min, clip_value_max) for t in x)
    return _clip_one(x, clip_value_min, clip_value_max)


def clip_by_global_norm(x, clip_norm=1.0, use_norm=None):
    r"""Scales a tuple of tensors (usually gradients) so that their global L2 norm is at most `clip_norm`:

        global_norm = √(Σ_i Σ x_i²)   (computed in float32, or float64 when an input is float64)
        x_i ← x_i · clip_norm / max(global_norm, clip_norm)       (each cast back to its dtype)

    so nothing changes when global_norm ≤ clip_norm [Pascanu et al. 2013; MindSpore's ops.clip_by_global_norm].

    Args:
        x: a tuple/list of Tensors (a single Tensor is treated as a 1-tuple and returned as a Tensor).
        clip_norm (float/int > 0, or a 0-d/1-element float Tensor): the maximum global norm. Default 1.0.
        use_norm: None (compute the global norm; for the output of nn.DistributedGradReducer under optimizer
            parallel, whose sliced gradients are this process's dim-0 slices, the slices' squares are all-reduced
            over the processes first, so that the norm is that of the whole gradients, as in plain data parallel),
            or a precomputed global norm (number or Tensor) to use instead —
            MindSpore accepts only None here; Kiln also takes a value, as TensorFlow's clip_by_global_norm does.
    Returns: a tuple (list for a list input) of Tensors with the inputs' shapes and dtypes.
    Raises: TypeError (x not Tensors, clip_norm of another type), ValueError (clip_norm ≤ 0 or an empty x)."""
    single = isinstance(x, _Tensor)
    xs = (x,) if single else x
    if not isinstance(xs, (tuple, list)) or not all(isinstance(t, _Tensor) for t in xs):
        raise TypeError(f"For 'clip_by_global_norm', the 'x' must be a Tensor or a tuple/list of Tensors, but got "
                        f"{type(x).__name__}.")
    if not xs:
        raise ValueError("For 'clip_by_global_norm', the 'x' must not be empty.")
    if isinstance(clip_norm, _Tensor):
        if clip_norm.size != 1:
            raise ValueError(f"For 'clip_by_global_norm', a Tensor 'clip_norm' must hold one value, but got shape "
                             f"{tuple(clip_norm.shape)}.")
        clip = _core.reshape(clip_norm, [])
    elif isinstance(clip_norm, numbers.Real) and not isinstance(clip_norm, bool):
        if clip_norm <= 0:
            raise ValueError(f"For 'clip_by_global_norm', the 'clip_norm' must be greater than 0, but got "
                             f"{clip_norm}.")
        clip = float(clip_norm)
    else:
        raise TypeError(f"For 'clip_by_global_norm', the 'clip_norm' must be a float, int or Tensor, but got "
                        f"{type(clip_norm).__name__}.")
    ct = mstype.float64 if any(t.dtype == mstype.float64 for t in xs) else mstype.float32
    if use_norm is None:
        # Gradients of nn.DistributedGradReducer under optimizer parallel: those at `sliced` are this process's dim-0
        # slices; their squares are summed over the processes (an all-reduce), so the norm is the whole gradients'.
        sliced = getattr(x, "_kiln_sliced", ()) if not single else ()
        total, parts = None, {}
        for i, t in enumerate(xs):
            tc = t if t.dtype == ct else _core.cast(t, ct)
            s = _core.sum(_core.square(tc), None, False)
            if i in sliced:
                parts[i] = s
            else:
                total = s if total is None else _core.add(total, s)
        if parts:
            s = x._kiln_reducer._slices_square_sum(parts)
            total = s if total is None else _core.add(total, s)
        norm = _core.sqrt(total)
    elif isinstance(use_norm, _Tensor):
        norm = _core.cast(_core.reshape(use_norm, []), ct)
    elif isinstance(use_norm, numbers.Real) and not isinstance(use_norm, bool):
        norm = _core.full([], float(use_norm), ct)
    else:
        raise TypeError(f"For 'clip_by_global_norm', the 'use_norm' must be None, a number or a Tensor, but got "
                        f"{type(use_norm).__name__}.")
    if isinstance(clip, _Tensor) and clip.dtype != ct:
        clip = _core.cast(clip, ct)
    scale = _core.div(clip, _core.maximum(norm, clip))
    out = []
    for t in xs:
        s = scale if t.dtype == ct else _core.cast(scale, t.dtype) if mstype.is_float(t.dtype) else scale
        r = _core.mul(t, s)
        out.append(r if r.dtype == t.dtype else _core.cast(r, t.dtype))
    if single:
        return out[0]
    return type(x)(out) if isinstance(x, list) else tuple(out)
