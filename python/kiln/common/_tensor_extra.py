"""Tensor members MindSpore 2.10 has and real code uses: `Tensor.device`, `Tensor.resize`, `Tensor.index`,
`Tensor.init_data` (attached to kiln.Tensor by kiln/common/tensor.py). Built from Kiln's kernels, so resize and index
trace in Graph mode and have gradients."""
from .._loader import _core
from .._args import _got, _is_int
from . import dtype as mstype
from ._deferred_init import tensor_init_data

__all__ = ["device", "resize", "index", "tensor_init_data"]


def device(self):
    """MindSpore's Tensor.device: the name of the device holding the tensor, 'CPU' (MindSpore 2.10 on CPU returns
    the str 'CPU'; Kiln's one target today)."""
    return "CPU"


def resize(self, *new_shape):
    """MindSpore's Tensor.resize(*new_shape): a NEW Tensor of shape `new_shape` (ints, or one tuple of ints) holding
    this tensor's elements in row-major order, cut off when the new size is smaller and padded with zeros (False
    for Bool) when it is larger (NumPy's ndarray.resize with zero fill; MindSpore returns the new tensor instead of
    resizing in place). No argument returns a copy of the same shape. Same dtype; differentiable.

    Raises:
        TypeError: a dim that is not an int (a float, a list: MindSpore also refuses lists), or a mix of a tuple
            and ints.
        ValueError: a negative dim."""
    if len(new_shape) == 1 and isinstance(new_shape[0], tuple):
        new_shape = new_shape[0]
    for d in new_shape:
        if not _is_int(d):
            raise TypeError(f"For 'Tensor.resize', the new shape must be ints or one tuple of ints, but got "
                            f"{_got(d)} in {new_shape!r}.")
        if d < 0:
            raise ValueError(f"For 'Tensor.resize', the new shape must have non-negative dims, but got {new_shape!r}.")
    shape = [int(d) for d in new_shape] if new_shape else list(self.shape)
    n_new = 1
    for d in shape:
        n_new *= d
    flat = _core.reshape(self, [-1])
    n = flat.shape[0]
    if n_new <= n:
        flat = flat[:n_new]
    else:
        flat = _core.concat([flat, _core.full([n_new - n], 0, self.dtype)], 0)
    return _core.reshape(flat, shape)


def index(self, indices):
    """MindSpore's Tensor.index(indices) (PyTorch's aten::index): advanced indexing by a tuple (or list) of
    Tensors, `x.index((i0, i1))` == `x[i0, i1]`: integer Tensors select along successive dims (broadcast together;
    negative values count from the end), a Bool Tensor is a mask over the dims it covers. The dims not indexed are
    kept. MindSpore 2.10 runs it on Ascend only (NotImplementedError on CPU); Kiln runs it everywhere with these
    semantics. An empty tuple returns a copy.

    Raises:
        TypeError: `indices` not a tuple/list, an element not a Tensor, or a Tensor that is neither integer nor Bool.
        IndexError: an index out of range or more indices than dims."""
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"For 'Tensor.index', the argument 'indices' must be a tuple of Tensor, but got "
                        f"{_got(indices)}.")
    for pos, t in enumerate(indices):
        if not isinstance(t, _core.Tensor):
            raise TypeError(f"For 'Tensor.index', the argument 'indices' must be a tuple of Tensor, but got "
                            f"{_got(t)} at position {pos}.")
        if t.dtype != mstype.bool_ and t.dtype not in mstype.int_type:
            raise TypeError(f"For 'Tensor.index', each index must be an integer or Bool Tensor, but got dtype "
                            f"{t.dtype} at position {pos}.")
    if not indices:
        return _core.identity(self)
    return self[tuple(indices)]
