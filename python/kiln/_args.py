"""Shared validation of the non-tensor arguments of kiln.ops functions and Primitives: shapes, axes, ints,
dtypes and sequences of Tensors.

Every helper takes the op's name (MindSpore's spelling of the user-facing function) and the argument's name, and
raises TypeError / ValueError in MindSpore's style ("For 'reshape', the 'shape' must be ...") instead of the bare
Python errors ("'float' object is not iterable") that list()/tuple()/int() would give."""
import numbers

import numpy as np

from . import _engine
from .common import dtype as mstype


def _is_int(v):
    t = type(v)
    if t is int:  # the common case first: these checks run on every op call
        return True
    return t is not bool and isinstance(v, (numbers.Integral, np.integer)) and not isinstance(v, np.bool_)


def _got(value):
    """Short description of a value for an error message (a Tensor by shape and dtype, never its data)."""
    if isinstance(value, _engine.Tensor):
        return f"Tensor(shape={list(value.shape)}, dtype={value.dtype})"
    if isinstance(value, (bool, int, float, str)) or value is None:
        return f"{type(value).__name__} {value!r}"
    if isinstance(value, (tuple, list)) and len(value) <= 8:
        return f"{type(value).__name__} ({', '.join(type(v).__name__ for v in value)})"
    return type(value).__name__


def int_arg(op, name, value, minimum=None):
    """`value` as a Python int (a NumPy integer is accepted). TypeError for bool/float/None/str/Tensor...,
    ValueError below `minimum`."""
    if not _is_int(value):
        raise TypeError(f"For '{op}', the '{name}' must be an int, but got {_got(value)}.")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"For '{op}', the '{name}' must be >= {minimum}, but got {value}.")
    return value


def number_arg(op, name, value):
    """`value` as a Python float (int, float or a NumPy number; not bool). TypeError otherwise."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, np.number)):
        raise TypeError(f"For '{op}', the '{name}' must be a number, but got {_got(value)}.")
    return float(value)


def shape_arg(op, name, value, minimum=None):
    """A shape argument as a tuple of ints: an int (one dim), a tuple/list of ints, or a 1-D (or 0-d) integer
    Tensor. TypeError for anything else (float, None, str, a float Tensor, a list holding a float...);
    ValueError for a dim below `minimum` (e.g. 0 for a created tensor's size)."""
    t = type(value)
    if (t is tuple or t is list) and all(type(v) is int for v in value):  # fast path: plain Python ints
        dims = tuple(value)
    elif _is_int(value):
        dims = (int(value),)
    elif isinstance(value, _engine.Tensor):
        if value.dtype not in mstype.int_type or value.ndim > 1:
            raise TypeError(f"For '{op}', the '{name}' must be an int, a tuple/list of ints or a 1-D integer Tensor, "
                            f"but got {_got(value)}.")
        dims = tuple(int(v) for v in value.asnumpy().reshape(-1))
    elif isinstance(value, (tuple, list)) and all(_is_int(v) for v in value):
        dims = tuple(int(v) for v in value)
    else:
        raise TypeError(f"For '{op}', the '{name}' must be an int or a tuple/list of ints, but got {_got(value)}.")
    if minimum is not None and any(d < minimum for d in dims):
        raise ValueError(f"For '{op}', every dim of '{name}' must be >= {minimum}, but got {dims}.")
    return dims


def axes_arg(op, name, value, allow_none=True):
    """An axis argument: None (when allowed), an int, or a tuple/list of ints (returned as a tuple).
    TypeError otherwise."""
    if value is None and allow_none:
        return None
    if _is_int(value):
        return int(value)
    if isinstance(value, (tuple, list)) and all(_is_int(v) for v in value):
        return tuple(int(v) for v in value)
    what = "None, an int or a tuple/list of ints" if allow_none else "an int or a tuple/list of ints"
    raise TypeError(f"For '{op}', the '{name}' must be {what}, but got {_got(value)}.")


def dtype_arg(op, name, value, default=None):
    """A dtype argument as a Kiln dtype (a Kiln/MindSpore dtype, NumPy dtype or Python type); `default` when
    `value` is None and a default is given. TypeError naming the op otherwise (a Tensor is described by shape and
    dtype, not dumped)."""
    if value is None and default is not None:
        return default
    return mstype.to_dtype(value, name, op)


def tensors_arg(op, name, value):
    """A sequence-of-Tensors argument (concat, stack...) as a list. TypeError naming the first bad element."""
    if isinstance(value, _engine.Tensor) or not isinstance(value, (tuple, list)):
        raise TypeError(f"For '{op}', the '{name}' must be a tuple or list of Tensors, but got {_got(value)}.")
    for i, v in enumerate(value):
        if not isinstance(v, _engine.Tensor):
            raise TypeError(f"For '{op}', the '{name}' must be a tuple or list of Tensors, but element {i} is "
                            f"{_got(v)}.")
    return list(value)


def broadcast_shapes(*shapes):
    """The broadcast of `shapes` (tuples or lists of ints) as a tuple, by NumPy's rule (numpy.broadcast_shapes's
    result), in plain Python: NumPy's function builds arrays and costs microseconds on every op call. Raises
    ValueError (the shapes) when they do not broadcast; the caller names its op."""
    # plain ints, as NumPy's result: comparing the SymInt sizes of a dynamic-shape trace would add guards to it
    shapes = [tuple(map(int, s)) for s in shapes]
    first = shapes[0] if shapes else ()
    for s in shapes[1:]:
        if s != first:
            break
    else:  # all equal: the common case
        return first
    out = [1] * max(len(s) for s in shapes)
    n = len(out)
    for s in shapes:
        off = n - len(s)
        for i, d in enumerate(s):
            o = out[off + i]
            if d != o:
                if o == 1:
                    out[off + i] = d
                elif d != 1:
                    raise ValueError(f"shapes {shapes} do not broadcast")
    return tuple(out)
