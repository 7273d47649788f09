"""`kiln.mutable`: marks a value as a variable input of compiled functions (it does not specialize the graph).

A compiled function (kiln.jit, a GRAPH_MODE Cell) is compiled once per signature: the shapes and dtypes of its
Tensor arguments and the *values* of its other arguments (Python numbers, tuples of numbers ...), which are baked
into the graph as constants. `mutable(3)` passed instead of `3` becomes a 0-d tensor input of the graph (int64 for
int, float32 for float, bool for bool), so calls with other values reuse the same graph; inside the compiled
function the value is a 0-d Tensor, and results computed from it are Tensors. Tensors (and tuples, lists and dicts
of them) are graph inputs already: mutable returns them marked, otherwise unchanged. Outside compiled functions a
mutable number is an ordinary number (an int / float subclass).
"""
from .tensor import Tensor


class _Int(int):
    """An int that compiled functions take as a 0-d int64 tensor input (see kiln.mutable)."""
    __ms_mutable__ = True


class _Float(float):
    """A float that compiled functions take as a 0-d float32 tensor input (see kiln.mutable)."""
    __ms_mutable__ = True


class _Bool(int):
    """A bool that compiled functions take as a 0-d bool tensor input (see kiln.mutable); `bool` itself cannot be
    subclassed, so this is an int 0/1 that prints as False/True."""
    __ms_mutable__ = True

    def __repr__(self):
        return "True" if self else "False"

    __str__ = __repr__


class _Tuple(tuple):
    __ms_mutable__ = True


class _List(list):
    __ms_mutable__ = True


class _Dict(dict):
    __ms_mutable__ = True


SCALARS = {_Int: "int64", _Float: "float32", _Bool: "bool"}


def scalar_tensor(value):
    """The 0-d tensor a mutable number becomes as a graph input."""
    from . import dtype as mstype
    return Tensor(int(value) if type(value) is not _Float else float(value),
                  getattr(mstype, {"int64": "int64", "float32": "float32", "bool": "bool_"}[SCALARS[type(value)]]))


def _check(value, seen):
    if isinstance(value, (Tensor, bool, int, float)):
        return True
    if isinstance(value, (tuple, list, dict)):
        if id(value) in seen:
            return False
        seen.add(id(value))
        items = value.values() if isinstance(value, dict) else value
        ok = all(_check(v, seen) for v in items)
        seen.discard(id(value))
        return ok
    return False


def mutable(input_data, dynamic_len=False):
    """Marks `input_data` as a variable input of compiled functions (MindSpore's `mutable`).

    Args:
        input_data (Union[Tensor, bool, int, float, tuple, list, dict]): the value; tuples, lists and dicts may nest
            these types (no self-reference).
        dynamic_len (bool): MindSpore's dynamic-length sequences; Kiln supports only False (default).

    Returns:
        A number: an int / float subclass (bool: an int 0/1 printing as True/False) that a compiled function takes
        as a 0-d tensor input (int64 / float32 / bool), so that other values reuse the compiled graph. A tuple,
        list or dict: a marked copy of the same type (its tensors are graph inputs as always; its numbers are
        constants of the graph). A Tensor: the same tensor.

    Raises:
        TypeError: `input_data` of another type (or a self-referencing structure), or `dynamic_len` not a bool.
        ValueError: `dynamic_len=True` (dynamic-length sequences are not supported by Kiln).
    """
    if not _check(input_data, set()):
        raise TypeError(f"For 'mutable', the 'input_data' should be one of (bool, int, float, Tensor, tuple, list, "
                        f"dict) or their nested structures with no self-reference, but got "
                        f"{type(input_data).__name__}: {input_data!r}.")
    if not isinstance(dynamic_len, bool):
        raise TypeError(f"For 'mutable', the 'dynamic_len' should be bool, but got {type(dynamic_len).__name__}.")
    if dynamic_len:
        raise ValueError("For 'mutable', dynamic_len=True (a sequence whose length does not specialize the graph) "
                         "is not supported by Kiln; pass the sequence as a Tensor, or use dynamic_len=False.")
    if isinstance(input_data, Tensor):
        return input_data
    if isinstance(input_data, bool):
        return _Bool(input_data)
    if isinstance(input_data, int):
        return _Int(input_data)
    if isinstance(input_data, float):
        return _Float(input_data)
    if isinstance(input_data, list):
        return _List(input_data)
    if isinstance(input_data, tuple):
        return _Tuple(input_data)
    return _Dict(input_data)
