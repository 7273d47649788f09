"""The `mint` functions whose MindSpore 2.10 signature differs from the `ops` function of the same op: thin
adapters (PyTorch-flavoured argument names `input`/`dim`/`keepdim`, PyTorch defaults and overloads) that call the
same Kiln op. Each is declared with `@defop(name="mint.<name>")` (kiln/ops/_opdef.py: a mint-only adapter), so
kiln.mint picks it up through `mint_names("")`; tests/python/test_mint.py checks each against NumPy.

The functions whose mint signature equals the ops one are not here: they are the ops functions themselves (declared
with `mint=` on their @defop, or listed in kiln/mint/__init__.py's table of same-signature ops)."""
import builtins
import numbers

from ..ops import _kernels
from ..common import dtype as mstype
from ..common.tensor import Tensor
from .._args import dtype_arg, int_arg, shape_arg
from .. import ops
from ..ops._opdef import defop
from ..ops import function as _fn
from .._reduce_dtype import reduce_as


def _t(x, op, name="input"):
    if not isinstance(x, Tensor):
        raise TypeError(f"For 'mint.{op}', the argument '{name}' must be a Tensor, but got {type(x).__name__}.")
    return x


def _dim(dim, op, name="dim"):
    """None, an int or a tuple/list of ints (the reduced dims)."""
    if dim is None:
        return None
    if isinstance(dim, (tuple, list)):
        return tuple(int_arg(f"mint.{op}", name, d) for d in dim)
    return int_arg(f"mint.{op}", name, dim)


# ---------------------------------------------------------------------------------------------- arithmetic

def _alpha(other, alpha, op):
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Number):
        raise TypeError(f"For 'mint.{op}', 'alpha' must be a number, but got {type(alpha).__name__}.")
    if alpha == 1:
        return other
    if isinstance(other, numbers.Number) and not isinstance(other, bool):
        return other * alpha  # a Python number stays weak (does not widen the tensor's dtype)
    return ops.mul(other, alpha)


@defop(name="mint.add")
def add(input, other, *, alpha=1):
    """mint.add(input, other, *, alpha=1): input + alpha·other, broadcasting (either may be a Python number; the
    result dtype is ops.add's of the two). alpha a Python number (TypeError otherwise); alpha == 1 is ops.add."""
    return ops.add(input, _alpha(other, alpha, "add"))


@defop(name="mint.sub")
def sub(input, other, *, alpha=1):
    """mint.sub(input, other, *, alpha=1): input − alpha·other, broadcasting (as mint.add)."""
    return ops.sub(input, _alpha(other, alpha, "sub"))


# ---------------------------------------------------------------------------------------------- reductions

@defop(name="mint.all")
def all(input, dim=None, keepdim=False):
    """mint.all(input, dim=None, keepdim=False): True where every element along `dim` (None: all; an int or a tuple)
    is nonzero; a Bool tensor (ops.all)."""
    return ops.all(_t(input, "all"), _dim(dim, "all"), keepdim)


@defop(name="mint.any")
def any(input, dim=None, keepdim=False):
    """mint.any(input, dim=None, keepdim=False): True where some element along `dim` is nonzero; Bool (ops.any)."""
    return ops.any(_t(input, "any"), _dim(dim, "any"), keepdim)


def _all_if_empty(dims):
    return None if dims == () else dims


@defop(name="mint.amax")
def amax(input, dim=(), keepdim=False):
    """mint.amax(input, dim=(), keepdim=False): the maximum over `dim` (() or None: over all elements); the
    gradient is split among tied maxima (ops.amax)."""
    return ops.amax(_t(input, "amax"), _all_if_empty(_dim(dim, "amax")), keepdim)


@defop(name="mint.amin")
def amin(input, dim=(), keepdim=False):
    """mint.amin(input, dim=(), keepdim=False): the minimum over `dim` (() or None: over all elements) (ops.amin)."""
    return ops.amin(_t(input, "amin"), _all_if_empty(_dim(dim, "amin")), keepdim)


@defop(name="mint.argmin")
def argmin(input, dim=None, keepdim=False):
    """mint.argmin(input, dim=None, keepdim=False): Int64 index of the first minimum along `dim` (None: of the
    flattened tensor) (ops.argmin)."""
    return ops.argmin(_t(input, "argmin"), None if dim is None else int_arg("mint.argmin", "dim", dim), keepdim)


def _extreme(op, input, dim, keepdim, args, kw):
    """mint.max / mint.min's overloads: (input), (input, dim, keepdim=False), (input, other)."""
    _t(input, op)
    if "other" in kw or (dim is not None and isinstance(dim, Tensor)):
        other = kw.pop("other") if "other" in kw else dim
        if kw or args or keepdim is not False:
            raise TypeError(f"mint.{op}(input, other) takes no further arguments")
        return (ops.maximum if op == "max" else ops.minimum)(input, other)
    if kw or args:
        raise TypeError(f"mint.{op}() got unexpected arguments {args or ''}{sorted(kw) or ''}; it takes (input), "
                        f"(input, dim, keepdim=False) or (input, other)")
    if dim is None:
        if keepdim is not False:
            raise TypeError(f"mint.{op}(input) takes no 'keepdim' (give a 'dim')")
        return (_kernels.amax if op == "max" else _kernels.amin)(input, None, False)
    fn = _fn.max if op == "max" else _fn.min
    return fn(input, int_arg(f"mint.{op}", "dim", dim), bool(keepdim))


@defop(name="mint.max")
def max(input, dim=None, keepdim=False, *args, **kwargs):
    """mint.max, PyTorch's overloads: max(input) the largest element (a 0-d tensor; NaN if any is NaN);
    max(input, dim, keepdim=False) a tuple (values, indices: Int64) along the int `dim`, the index of the first
    maximum, the values' gradient going to it; max(input, other) the elementwise maximum (ops.maximum).
    Raises TypeError for other argument combinations."""
    return _extreme("max", input, dim, keepdim, args, kwargs)


@defop(name="mint.min")
def min(input, dim=None, keepdim=False, *args, **kwargs):
    """mint.min, as mint.max for the minimum: min(input), min(input, dim, keepdim=False) -> (values, indices),
    min(input, other) (ops.minimum)."""
    return _extreme("min", input, dim, keepdim, args, kwargs)


@defop(name="mint.mean")
def mean(input, dim=None, keepdim=False, *, dtype=None):
    """mint.mean(input, dim=None, keepdim=False, *, dtype=None): the mean over `dim` (None: all; int or tuple),
    computed in `dtype` when given (of input cast to it; no widened copy of input where the cast keeps its values:
    kiln/_reduce_dtype.py) (ops.mean)."""
    x = _t(input, "mean")
    if dtype is None:
        return ops.mean(x, _dim(dim, "mean"), keepdim)
    return reduce_as("mean", x, dtype_arg("mint.mean", "dtype", dtype), _fn._axes(_dim(dim, "mean"), "mean"),
                     keepdim)


@defop(name="mint.prod")
def prod(input, dim=None, keepdim=False, *, dtype=None):
    """mint.prod(input, dim=None, keepdim=False, *, dtype=None): the product over `dim` (None: all; an int),
    computed in `dtype` when given (of input cast to it; no widened copy of input where the cast keeps its values:
    kiln/_reduce_dtype.py) (ops.prod; integer inputs give Int64 as there)."""
    x = _t(input, "prod")
    if dtype is None:
        return ops.prod(x, _dim(dim, "prod"), keepdim)
    return reduce_as("prod", x, dtype_arg("mint.prod", "dtype", dtype), _fn._axes(_dim(dim, "prod"), "prod"),
                     keepdim)


@defop(name="mint.cumsum")
def cumsum(input, dim, dtype=None):
    """mint.cumsum(input, dim, dtype=None): the running sum along `dim`, in `dtype` when given (ops.cumsum)."""
    return ops.cumsum(_t(input, "cumsum"), int_arg("mint.cumsum", "dim", dim), dtype)


@defop(name="mint.softmax")
def softmax(input, dim, *, dtype=None):
    """mint.softmax(input, dim, *, dtype=None): exp(x − max) / Σ exp(x − max) along `dim` (input cast to `dtype`
    first when given) (ops.softmax)."""
    return _fn.softmax(_t(input, "softmax"), int_arg("mint.softmax", "dim", dim), dtype=dtype)


# ---------------------------------------------------------------------------------------------- sorting

def _stable(stable, op):
    if not isinstance(stable, bool):
        raise TypeError(f"For 'mint.{op}', 'stable' must be a bool, but got {type(stable).__name__}.")


@defop(name="mint.sort")
def sort(input, *, dim=-1, descending=False, stable=False):
    """mint.sort(input, *, dim=-1, descending=False, stable=False): (values, indices) sorted along `dim`; indices
    Int64 (PyTorch's; ops.sort gives Int32). Kiln's sort is always stable (equal values keep their order), which
    satisfies stable=True and stable=False alike. NaN sorts last (ascending)."""
    _stable(stable, "sort")
    values, indices = ops.sort(_t(input, "sort"), int_arg("mint.sort", "dim", dim), descending)
    return values, _kernels.cast(indices, mstype.int64)


@defop(name="mint.argsort")
def argsort(input, dim=-1, descending=False, stable=False):
    """mint.argsort(input, dim=-1, descending=False, stable=False): the Int64 indices that sort `input` along `dim`
    (stable, as mint.sort)."""
    _stable(stable, "argsort")
    out = ops.argsort(_t(input, "argsort"), int_arg("mint.argsort", "dim", dim), descending)
    return _kernels.cast(out, mstype.int64)


# ---------------------------------------------------------------------------------------------- shapes

@defop(name="mint.cat", mint=("cat", "concat"))
def cat(tensors, dim=0):
    """mint.cat(tensors, dim=0) (also mint.concat): joins a tuple/list of tensors along the existing dim `dim`
    (dtypes promoted) (ops.concat)."""
    return _fn.concat(tensors, int_arg("mint.cat", "dim", dim))


@defop(name="mint.stack")
def stack(tensors, dim=0):
    """mint.stack(tensors, dim=0): joins same-shape tensors along a new dim `dim` (ops.stack)."""
    return _fn.stack(tensors, int_arg("mint.stack", "dim", dim))


@defop(name="mint.split")
def split(tensor, split_size_or_sections, dim=0):
    """mint.split(tensor, split_size_or_sections, dim=0): a tuple of views of `tensor` along `dim`, each of size
    split_size_or_sections (an int; the last may be smaller) or of the listed sizes (ops.split)."""
    return _fn.split(tensor, split_size_or_sections, int_arg("mint.split", "dim", dim))


@defop(name="mint.flatten", mint=("flatten", "nn.functional.flatten"))
def flatten(input, start_dim=0, end_dim=-1):
    """mint.flatten(input, start_dim=0, end_dim=-1): dims start_dim..end_dim merged into one (PyTorch's default
    flattens everything; ops.flatten keeps dim 0). A 0-d input gives shape (1,)."""
    return _t(input, "flatten").flatten(int_arg("mint.flatten", "start_dim", start_dim),
                                        int_arg("mint.flatten", "end_dim", end_dim))


@defop(name="mint.squeeze")
def squeeze(input, dim):
    """mint.squeeze(input, dim): the size-1 dims listed in `dim` (an int or a tuple) removed; a listed dim of
    another size is kept (PyTorch's rule). A view."""
    x = _t(input, "squeeze")
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    nd = x.ndim
    keep = []
    for d in dims:
        d = int_arg("mint.squeeze", "dim", d)
        if not -builtins.max(nd, 1) <= d < builtins.max(nd, 1):
            raise ValueError(f"For 'mint.squeeze', 'dim' {d} is out of range for a {nd}-D tensor.")
        d %= builtins.max(nd, 1)
        if nd and x.shape[d] == 1:
            keep.append(d)
    return x.squeeze(tuple(sorted(set(keep)))) if keep else x.view(x.shape)


@defop(name="mint.transpose")
def transpose(input, dim0, dim1):
    """mint.transpose(input, dim0, dim1): `input` with dims dim0 and dim1 swapped (a view)."""
    x = _t(input, "transpose")
    nd = builtins.max(x.ndim, 1)
    d0, d1 = (int_arg("mint.transpose", n, d) for n, d in (("dim0", dim0), ("dim1", dim1)))
    for d in (d0, d1):
        if not -nd <= d < nd:
            raise ValueError(f"For 'mint.transpose', dim {d} is out of range for a {x.ndim}-D tensor.")
    if x.ndim == 0:
        return x.view(())
    perm = list(range(x.ndim))
    perm[d0 % nd], perm[d1 % nd] = perm[d1 % nd], perm[d0 % nd]
    return x.transpose(perm)


@defop(name="mint.narrow")
def narrow(input, dim, start, length):
    """mint.narrow(input, dim, start, length): the slice [start, start + length) of `input` along `dim` (a view);
    ops.narrow with PyTorch's argument name. ValueError for start outside [0, n] or start + length > n (n the size
    of dim) or dim out of range; TypeError for non-int arguments."""
    return ops.narrow(_t(input, "narrow"), dim, start, length)


@defop(name="mint.permute")
def permute(input, dims):
    """mint.permute(input, dims): output dim i is input dim dims[i] (a view) (ops.permute)."""
    return _fn.transpose(_t(input, "permute"), shape_arg("mint.permute", "dims", dims))


@defop(name="mint.gather")
def gather(input, dim, index):
    """mint.gather(input, dim, index): out[i][j] = input[index[i][j]][j] for dim 0 (PyTorch's gather; MindSpore's
    ops.gather_elements): `index` an integer tensor of input's rank."""
    return ops.gather_elements(_t(input, "gather"), int_arg("mint.gather", "dim", dim), index)


@defop(name="mint.select")
def select(input, dim, index):
    """mint.select(input, dim, index): the slice of `input` at position `index` (an int, negative from the end) of
    dim `dim`; that dim is removed (input[..., index, ...]). IndexError for an index out of range."""
    y = _kernels._view_select(input, dim, index)  # C++ for a concrete tensor and valid plain ints (the same view)
    if y is not NotImplemented:
        return y
    x = _t(input, "select")
    dim = int_arg("mint.select", "dim", dim)
    index = int_arg("mint.select", "index", index)
    if x.ndim == 0 or not -x.ndim <= dim < x.ndim:
        raise ValueError(f"For 'mint.select', 'dim' {dim} is out of range for a {x.ndim}-D tensor.")
    n = x.shape[dim]
    if not -n <= index < n:
        raise IndexError(f"For 'mint.select', 'index' {index} is out of range for dim {dim} of size {n}.")
    return x[(slice(None),) * (dim % x.ndim) + (index,)]


@defop(name="mint.where")
def where(condition, input=None, other=None):
    """mint.where(condition, input, other): input where condition (a Bool tensor) is True, else other (broadcast;
    either may be a number) (ops.where). mint.where(condition): condition's nonzero positions as a tuple of Int64
    tensors, one per dim (ops.nonzero(as_tuple=True))."""
    if input is None and other is None:
        return ops.nonzero(_t(condition, "where", "condition"), as_tuple=True)
    if input is None or other is None:
        raise TypeError("mint.where() takes (condition) or (condition, input, other)")
    return _fn.where(condition, input, other)


@defop(name="mint.meshgrid")
def meshgrid(*tensors, indexing=None):
    """mint.meshgrid(*tensors, indexing=None): coordinate grids of 1-D tensors; indexing 'ij' (the default, as
    PyTorch) gives shape (len(t0), len(t1), ...), 'xy' swaps the first two (ops.meshgrid)."""
    if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)):
        tensors = tuple(tensors[0])
    return ops.meshgrid(*tensors, indexing="ij" if indexing is None else indexing)


# ---------------------------------------------------------------------------------------------- creation

@defop(name="mint.linspace")
def linspace(start, end, steps, *, dtype=None):
    """mint.linspace(start, end, steps, *, dtype=None): `steps` evenly spaced values from start to end inclusive,
    Float32 unless `dtype` (an integer dtype truncates the values toward zero, as PyTorch) (ops.linspace)."""
    out = ops.linspace(start, end, steps)
    return out if dtype is None else _kernels.cast(out, dtype_arg("mint.linspace", "dtype", dtype))


def _no_generator(generator, device, op):
    if generator is not None:
        raise TypeError(f"For 'mint.{op}', Kiln takes no 'generator' object (the random state is the global seed "
                        f"of kiln.set_seed); pass generator=None, got {type(generator).__name__}.")
    if device not in (None, "CPU", "cpu"):
        raise ValueError(f"For 'mint.{op}', 'device' must be None or 'CPU' on this build, got {device!r}.")


@defop(name="mint.randn")
def randn(*size, generator=None, dtype=None, device=None):
    """mint.randn(*size, generator=None, dtype=None, device=None): standard normal samples of shape `size` (ints or
    one tuple), Float32 unless `dtype` (a float dtype), drawn from the global seed (kiln.set_seed; Kiln has no
    Generator objects: generator must be None, TypeError otherwise) (ops.randn)."""
    _no_generator(generator, device, "randn")
    return ops.randn(*size, dtype=dtype)


@defop(name="mint.rand")
def rand(*size, generator=None, dtype=None, device=None):
    """mint.rand(*size, generator=None, dtype=None, device=None): uniform [0, 1) samples of shape `size`, as
    mint.randn (ops.rand)."""
    _no_generator(generator, device, "rand")
    return ops.rand(*size, dtype=dtype)


@defop(name="mint.randint")
def randint(*args, generator=None, dtype=None, device=None, **kwargs):
    """mint.randint(low=0, high, size, *, generator=None, dtype=None, device=None), PyTorch's overloads
    randint(high, size) and randint(low, high, size): integers uniform in [low, high) of shape `size` (a tuple),
    Int64 unless `dtype`, from the global seed (generator must be None) (ops.randint). ValueError if high <= low."""
    _no_generator(generator, device, "randint")
    names = ("low", "high", "size")
    given = dict(zip(names[3 - len(args):] if len(args) < 3 else names, args)) if len(args) <= 3 else None
    if given is None:
        raise TypeError(f"mint.randint() takes at most 3 positional arguments, got {len(args)}")
    for k, v in kwargs.items():
        if k not in names or k in given:
            raise TypeError(f"mint.randint() got an unexpected or repeated argument '{k}'")
        given[k] = v
    if "high" not in given or "size" not in given:
        raise TypeError("mint.randint() needs 'high' and 'size' (randint(high, size) or randint(low, high, size))")
    size = given["size"]
    if isinstance(size, int) and not isinstance(size, bool):
        raise TypeError("For 'mint.randint', 'size' must be a tuple or list of ints, but got an int.")
    return ops.randint(given.get("low", 0), given["high"], size, dtype=dtype)


def _like(input, dtype, device, generator, op):
    _t(input, op)
    _no_generator(generator, device, op)
    return input.dtype if dtype is None else dtype_arg(f"mint.{op}", "dtype", dtype)


@defop(name="mint.rand_like")
def rand_like(input, *, dtype=None, device=None):
    """mint.rand_like(input, *, dtype=None, device=None): uniform [0, 1) samples of input's shape, input's dtype
    unless `dtype` (a float dtype: ValueError otherwise) (ops.rand)."""
    return ops.rand(tuple(input.shape) if isinstance(input, Tensor) else (),
                    dtype=_like(input, dtype, device, None, "rand_like"))


@defop(name="mint.randn_like")
def randn_like(input, *, dtype=None, device=None):
    """mint.randn_like(input, *, dtype=None, device=None): standard normal samples of input's shape and dtype
    (unless `dtype`) (ops.randn)."""
    return ops.randn(tuple(input.shape) if isinstance(input, Tensor) else (),
                     dtype=_like(input, dtype, device, None, "randn_like"))


@defop(name="mint.empty")
def empty(*size, dtype=None, device=None):
    """mint.empty(*size, dtype=None, device=None): a tensor of shape `size` (ints or one tuple), Float32 unless
    `dtype`, whose values are unspecified (PyTorch's); Kiln fills it with zeros."""
    _no_generator(None, device, "empty")
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    return _fn.zeros(tuple(size), dtype_arg("mint.empty", "dtype", dtype, mstype.float32))


@defop(name="mint.empty_like")
def empty_like(input, *, dtype=None, device=None):
    """mint.empty_like(input, *, dtype=None, device=None): an unspecified-valued tensor of input's shape and dtype
    (unless `dtype`); Kiln fills it with zeros."""
    return _fn.zeros(tuple(input.shape) if isinstance(input, Tensor) else (),
                     _like(input, dtype, device, None, "empty_like"))


@defop(name="mint.clone")
def clone(input):
    """mint.clone(input): a new tensor with input's values (TensorCopy: differentiable, traced in Graph mode); a
    write into it does not reach input."""
    return _kernels.tensor_copy(_t(input, "clone"))


@defop(name="mint.item")
def item(input):
    """mint.item(input): the value of a one-element tensor as a Python number (Tensor.item; ValueError for more
    elements, RuntimeError while compiling)."""
    return _t(input, "item").item()


def _statistic(input, dim, correction, keepdim, op):
    from ..common import _tensor_methods
    return _tensor_methods._moments(_t(input, op), dim, correction, keepdim, op)


@defop(name="mint.var")
def var(input, dim=None, *, correction=1, keepdim=False):
    """mint.var(input, dim=None, *, correction=1, keepdim=False): Σ(x − mean)² / (n − correction) over `dim`
    (None: all; an int or a tuple); integer inputs compute in Float32; n − correction ≤ 0 gives inf/NaN."""
    return _statistic(input, dim, correction, keepdim, "var")


@defop(name="mint.std")
def std(input, dim=None, *, correction=1, keepdim=False):
    """mint.std(input, dim=None, *, correction=1, keepdim=False): √mint.var(...) (Bessel's correction by
    default, as PyTorch)."""
    return ops.sqrt(_statistic(input, dim, correction, keepdim, "std"))


@defop(name="mint.var_mean")
def var_mean(input, dim=None, *, correction=1, keepdim=False):
    """mint.var_mean(input, dim=None, *, correction=1, keepdim=False): the tuple (mint.var(...), mean over dim)."""
    x = _t(input, "var_mean")
    xf = mstype.as_float_input(x, "var_mean")
    return _statistic(x, dim, correction, keepdim, "var_mean"), _kernels.mean(xf, _dim(dim, "var_mean"), keepdim)


@defop(name="mint.std_mean")
def std_mean(input, dim=None, *, correction=1, keepdim=False):
    """mint.std_mean(input, dim=None, *, correction=1, keepdim=False): the tuple (mint.std(...), mean over dim)."""
    v, m = var_mean(input, dim, correction=correction, keepdim=keepdim)
    return ops.sqrt(v), m
