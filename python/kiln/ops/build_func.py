"""Ops that build a new Tensor out of others by index tables: MindSpore 2.10's ops.cartesian_prod, combinations,
block_diag and vander (split from kiln/ops/shape_func.py). Compositions of Kiln's Gather, Concat, Fill and Mul
kernels, so gradients and Graph mode are theirs; the index tables come from NumPy / itertools on static shapes."""
import builtins
import itertools

import numpy as np

from .._loader import _core
from .._args import int_arg
from ..common import dtype as mstype
from ..common.tensor import Tensor
from ._opdef import defop
from .function import _tensor_arg

__all__ = ["cartesian_prod", "combinations", "block_diag", "vander"]


# ---------------------------------------------------------------------------------------------- products, blocks

@defop()
def cartesian_prod(*inputs):
    """MindSpore's ops.cartesian_prod(*inputs): the Cartesian product of 1-D Tensors, shape (Π nᵢ, k) in
    row-major order (one input of length n gives (n, 1), as MindSpore). Dtypes promoted as ops.stack's. TypeError
    for a non-Tensor, ValueError for an input that is not 1-D."""
    if not inputs:
        raise ValueError("For 'cartesian_prod', at least one input is required.")
    ts = []
    for i, x in enumerate(inputs):
        x = _tensor_arg(x, "cartesian_prod", f"inputs[{i}]")
        if x.ndim != 1:
            raise ValueError(f"For 'cartesian_prod', every input must be 1-D, but inputs[{i}] has shape "
                             f"{tuple(x.shape)}.")
        ts.append(x)
    grids = np.indices([x.shape[0] for x in ts]).reshape(len(ts), -1)
    cols = [_core.gather(x, Tensor(grids[i].astype(np.int64)), 0) for i, x in enumerate(ts)]
    return _core.stack(cols, 1)


@defop()
def combinations(input, r=2, with_replacement=False):
    """MindSpore's ops.combinations(input, r=2, with_replacement=False): the length-r combinations of the 1-D
    input's elements (itertools.combinations / combinations_with_replacement order), shape (count, r); no
    combination gives shape (0,). Gradient: to the picked elements. TypeError for a non-int r, ValueError for a
    non-1-D input or r <= 0."""
    x = _tensor_arg(input, "combinations")
    r = int_arg("combinations", "r", r)
    if x.ndim != 1:
        raise ValueError(f"For 'combinations', the input must be 1-D, but got shape {tuple(x.shape)}.")
    if r <= 0:
        raise ValueError(f"For 'combinations', 'r' must be > 0, but got {r}.")
    gen = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    idx = np.array(list(gen(range(x.shape[0]), r)), np.int64).reshape(-1, r)
    if idx.size == 0:
        return _core.reshape(_core.gather(x, Tensor(np.zeros((0,), np.int64)), 0), [0])
    return _core.gather(x, Tensor(idx), 0)


@defop()
def block_diag(*inputs):
    """MindSpore's ops.block_diag(*inputs): a block-diagonal matrix of the inputs (0-d as (1, 1), 1-D (n,) as
    (1, n), 2-D as they are), zeros elsewhere; shape (Σ rows, Σ cols). Dtypes promoted to a common one (MindSpore's
    CPU kernel refuses mixed dtypes; PyTorch promotes). TypeError for a non-Tensor, ValueError for rank > 2."""
    if not inputs:
        raise ValueError("For 'block_diag', at least one input is required.")
    mats = []
    for i, x in enumerate(inputs):
        x = _tensor_arg(x, "block_diag", f"inputs[{i}]")
        if x.ndim > 2:
            raise ValueError(f"For 'block_diag', every input must have rank <= 2, but inputs[{i}] has shape "
                             f"{tuple(x.shape)}.")
        mats.append(_core.reshape(x, [1, -1]) if x.ndim < 2 else x)
    dt = mats[0].dtype
    for m in mats[1:]:
        dt = _core.promote_types(dt, m.dtype)
    mats = [m if m.dtype == dt else _core.cast(m, dt) for m in mats]
    total = builtins.sum(m.shape[1] for m in mats)
    rows, left = [], 0
    for m in mats:
        h, w = m.shape
        parts = []
        if left:
            parts.append(_core.full([h, left], 0.0, dt))
        parts.append(m)
        if total - left - w:
            parts.append(_core.full([h, total - left - w], 0.0, dt))
        rows.append(_core.concat(parts, 1) if len(parts) > 1 else m)
        left += w
    return _core.concat(rows, 0)


@defop()
def vander(x, N=None):
    """MindSpore's ops.vander(x, N=None): the Vandermonde matrix of the 1-D x, out[i, j] = x[i]^(N − 1 − j), shape
    (len(x), N) (N None: len(x)); an integer x gives Int64 (as MindSpore), a float x keeps its dtype. Gradient
    w.r.t. x (float). TypeError for a non-Tensor or non-int N, ValueError for x not 1-D or N < 0."""
    x = _tensor_arg(x, "vander", "x")
    if x.ndim != 1:
        raise ValueError(f"For 'vander', x must be 1-D, but got shape {tuple(x.shape)}.")
    n = x.shape[0] if N is None else int_arg("vander", "N", N, 0)
    if not mstype.is_float(x.dtype):
        x = _core.cast(x, mstype.int64)
    if n == 0:
        return _core.full([x.shape[0], 0], 0.0, x.dtype)
    cols = [_core.full([x.shape[0], 1], 1.0, x.dtype)]
    col = _core.reshape(x, [-1, 1])
    power = cols[0]
    for _ in range(n - 1):  # repeated products: exact for integers, no pow of negative bases
        power = _core.mul(power, col)
        cols.append(power)
    return _core.concat(cols[::-1], 1)
