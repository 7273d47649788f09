"""Helpers of kiln.train.model: argument checks, dataset rows, ahead-of-time compilation."""
import numbers

from ..common.tensor import Tensor as _Tensor



def _check_int(value, name, api, minimum=None):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"For '{api}', the '{name}' must be int, but got {type(value).__name__}.")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"For '{api}', the '{name}' must be >= {minimum}, but got {value}.")
    return value


def _check_bool(value, name, api):
    if not isinstance(value, bool):
        raise TypeError(f"For '{api}', the '{name}' must be bool, but got {type(value).__name__}.")
    return value


def _check_dataset(dataset, name, api):
    for attr in ("create_tuple_iterator", "get_dataset_size"):
        if not callable(getattr(dataset, attr, None)):
            raise TypeError(f"For '{api}', the '{name}' must be a kiln.dataset Dataset (with {attr}()), but got "
                            f"{type(dataset).__name__}.")


def _as_tuple(element):
    if isinstance(element, _Tensor):
        return (element,)
    return tuple(element)


def _transform_callbacks(callbacks):
    if callbacks is None:
        return []
    if isinstance(callbacks, (list, tuple)):
        return list(callbacks)
    return [callbacks]


def _first_batch(dataset):
    for element in dataset.create_tuple_iterator(num_epochs=1, output_numpy=False):
        return _as_tuple(element)
    raise ValueError("There is no valid data in dataset, please check dataset file firstly.")


def _precompile(cell, args):
    """Traces and compiles cell's construct for these arguments without running it (kiln.jit's cache then holds
    the graph the first real call uses)."""
    from .._compiler.structure import _flatten
    jf = cell._compiled_construct()
    tensors = []
    struct = _flatten((tuple(args), {}), tensors)
    key = jf._key(struct, tensors, jf._train_flags(), [])
    if key not in jf._cache:
        jf._compile(struct, tensors, tuple(args), {})
