"""Registry entries of the shape/layout ops of kiln/ops/shape_func.py (stacking, splitting, rotating, moving axes,
repeating, taking, index helpers and queries). References are NumPy's (SciPy's block_diag); MindSpore-specific
shapes (cartesian_prod of one input, combinations without any) are pinned in tests/python/test_ops_array_ext.py."""
import itertools

import numpy as np
import scipy.linalg

import kiln
from kiln import Tensor, ops

from .base import BOOL, F16, F32, F64, FLOATS, I32, I64, NC, OpInfo, Sample, arr, np_broadcast_to, register

FL = (F32, F64)
MOVE = FLOATS + (I32, BOOL)  # data movement: every dtype moves unchanged


def _row(name, kernels, op, ref, samples, dtypes=MOVE, differentiable=True, **kw):
    register(OpInfo(name, kernels, op, ref, samples, dtypes, differentiable=differentiable, **kw))


def _samples(*make):
    """A sample generator from functions (a, rng) -> Sample, where a(shape) draws an array of the entry's dtype."""
    def gen(dtype, rng):
        a = lambda s: arr(rng, s, dtype)
        for m in make:
            yield m(a, rng)
    return gen


# ---------------------------------------------------------------------------------------------- at least n-d

for _n in (1, 2, 3):
    _np_fn = getattr(np, f"atleast_{_n}d")
    _row(f"atleast_{_n}d", ("Reshape",), lambda *xs, _f=getattr(ops, f"atleast_{_n}d"): _f(xs[0] if len(xs) == 1
                                                                                              else list(xs)),
         lambda *xs, _f=_np_fn: _f(*xs),
         _samples(lambda a, r: Sample((a(()),), desc="0-d"),
                  lambda a, r: Sample((a((3,)),), desc="1-D"),
                  lambda a, r: Sample((a((2, 3)),), desc="2-D"),
                  lambda a, r: Sample((a(()), a((2,)), a((2, 2))), desc="sequence")))


# ---------------------------------------------------------------------------------------------- stacking

def _stack_samples(a, r):
    return Sample((a((2, 3)), a((2, 1)), NC(a((2, 3)), "T")), desc="2-D, a view")


_row("hstack", ("Concat",), lambda *xs: ops.hstack(list(xs)), lambda *xs: np.hstack(xs),
     _samples(_stack_samples, lambda a, r: Sample((a((3,)), a(()), a((2,))), desc="1-D and 0-d"),
              lambda a, r: Sample((a((2, 2, 1)), a((2, 3, 1))), desc="3-D")))
_row("vstack", ("Concat",), lambda *xs: ops.vstack(list(xs)), lambda *xs: np.vstack(xs),
     _samples(lambda a, r: Sample((a((2, 3)), a((3,)), NC(a((2, 3)), "T"))),
              lambda a, r: Sample((a((4,)), a((4,))), desc="1-D")))
_row("row_stack", ("Concat",), lambda *xs: ops.row_stack(list(xs)), lambda *xs: np.vstack(xs),
     _samples(lambda a, r: Sample((a((2, 3)), a((3,))))))
_row("dstack", ("Concat",), lambda *xs: ops.dstack(list(xs)), lambda *xs: np.dstack(xs),
     _samples(lambda a, r: Sample((a((2,)), a((2,))), desc="1-D"),
              lambda a, r: Sample((a((2, 3)), a((2, 3, 2))), desc="2-D and 3-D")))
_row("column_stack", ("Concat",), lambda *xs: ops.column_stack(list(xs)), lambda *xs: np.column_stack(xs),
     _samples(lambda a, r: Sample((a((3,)), a((3, 2)), a((3,))), desc="1-D and 2-D"),
              lambda a, r: Sample((a(()), a((1,))), desc="0-d")))


# ---------------------------------------------------------------------------------------------- splitting

def _np_tensor_split(x, ios, axis=0):
    return tuple(np.array_split(x, ios, axis) if isinstance(ios, int) else np.split(x, ios, axis))


def _split_samples(a, r):
    return [Sample((a((7, 2)),), dict(ios=3, axis=0), desc="uneven sections"),
            Sample((a((2, 6)),), dict(ios=[1, -2, 10], axis=-1), desc="indices: negative, past the end"),
            Sample((NC(a((4, 3)), "T"),), dict(ios=2, axis=1), desc="view"),
            Sample((a((2, 2)),), dict(ios=5, axis=0), desc="more sections than elements")]


_row("tensor_split", ("StridedSlice",), lambda x, ios, axis: ops.tensor_split(x, ios, axis), _np_tensor_split,
     lambda dtype, rng: iter(_split_samples(lambda s: arr(rng, s, dtype), rng)))
for _name, _ax in (("hsplit", 1), ("vsplit", 0), ("dsplit", 2)):
    _row(_name, ("StridedSlice",), lambda x, ios, _f=getattr(ops, _name): _f(x, ios),
         lambda x, ios, _ax=_ax: _np_tensor_split(x, ios, _ax),
         _samples(lambda a, r: Sample((a((4, 4, 4)),), dict(ios=2)),
                  lambda a, r: Sample((a((3, 3, 3)),), dict(ios=[1, 2]), desc="indices"),
                  lambda a, r: Sample((a((5, 3, 5)),), dict(ios=3), desc="uneven (as tensor_split)")))


def _np_chunk(x, chunks, axis=0):
    n = x.shape[axis]
    size = max(-(-n // chunks), 1)
    return tuple(np.split(x, list(range(size, n, size)), axis))


_row("chunk", ("StridedSlice",), lambda x, chunks, axis=0: ops.chunk(x, chunks, axis), _np_chunk,
     _samples(lambda a, r: Sample((a((6, 2)),), dict(chunks=4), desc="6 in 4: 3 pieces"),
              lambda a, r: Sample((a((2, 5)),), dict(chunks=2, axis=-1)),
              lambda a, r: Sample((a((2,)),), dict(chunks=5), desc="more chunks than elements")))


# ---------------------------------------------------------------------------------------------- broadcasting, views

_row("expand", ("BroadcastTo",), lambda x, size: ops.expand(x, size), lambda x, size: np_broadcast_to(x, size),
     _samples(lambda a, r: Sample((a((2, 1)),), dict(size=(2, 3))),
              lambda a, r: Sample((a((2, 1)),), dict(size=(3, -1, 4)), desc="-1 and a new dim"),
              lambda a, r: Sample((a(()),), dict(size=(2, 2)), desc="0-d")))
_row("expand_as", ("BroadcastTo",), lambda x, other: ops.expand_as(x, other),
     lambda x, other: np.broadcast_to(x, other.shape).copy(),
     _samples(lambda a, r: Sample((a((3, 1)), a((2, 3, 4))))), grad_args=(0,))
_row("fliplr", ("StridedSlice",), ops.fliplr, np.fliplr, _samples(lambda a, r: Sample((a((2, 3, 2)),))))
_row("flipud", ("StridedSlice",), ops.flipud, np.flipud, _samples(lambda a, r: Sample((a((3,)),)),
                                                                   lambda a, r: Sample((NC(a((3, 2)), "T"),))))
_row("rot90", ("Transpose", "StridedSlice"), lambda x, k, dims: ops.rot90(x, k, dims),
     lambda x, k, dims: np.rot90(x, k, dims).copy(),
     _samples(lambda a, r: Sample((a((2, 3)),), dict(k=1, dims=(0, 1))),
              lambda a, r: Sample((a((2, 3, 4)),), dict(k=-3, dims=[2, 0]), desc="negative k, reversed dims"),
              lambda a, r: Sample((a((2, 3)),), dict(k=2, dims=(0, 1)), desc="k=2"),
              lambda a, r: Sample((a((2, 3)),), dict(k=7, dims=(1, 0)), desc="k=7"),
              lambda a, r: Sample((a((2, 3)),), dict(k=4, dims=(0, 1)), desc="k=4")))
for _name in ("moveaxis", "movedim"):
    _row(_name, ("Transpose",), lambda x, s, d, _f=getattr(ops, _name): _f(x, s, d), np.moveaxis,
         _samples(lambda a, r: Sample((a((2, 3, 4)), 0, -1)),
                  lambda a, r: Sample((a((2, 3, 4, 1)), (0, 1), (2, 0)), desc="tuples"),
                  lambda a, r: Sample((NC(a((3, 4)), "T"), (), ()), desc="nothing moved")))
for _name in ("swapaxes", "swapdims"):
    _row(_name, ("Transpose",), lambda x, a0, a1, _f=getattr(ops, _name): _f(x, a0, a1), np.swapaxes,
         _samples(lambda a, r: Sample((a((2, 3, 4)), 0, 2)),
                  lambda a, r: Sample((a((2, 3)), -1, 0), desc="negative axis"),
                  lambda a, r: Sample((a((2, 3)), 1, 1), desc="same axis")))
_row("t", ("Transpose",), ops.t, lambda x: x.T.copy() if x.ndim == 2 else x.copy(),
     _samples(lambda a, r: Sample((a((2, 3)),)),
              lambda a, r: Sample((NC(a((3, 2)), "step"),), desc="view")))
_row("narrow", ("StridedSlice",), lambda x, axis, start, length: ops.narrow(x, axis, start, length),
     lambda x, axis, start, length: np.take(x, np.arange(start, start + length), axis),
     _samples(lambda a, r: Sample((a((3, 4)), 1, 1, 2)),
              lambda a, r: Sample((a((3, 4)), -2, 0, 3), desc="negative axis, whole axis"),
              lambda a, r: Sample((a((3, 4)), 0, 3, 0), desc="empty")))
_row("ravel", ("Reshape",), ops.ravel, np.ravel,
     _samples(lambda a, r: Sample((NC(a((3, 4)), "T"),)), lambda a, r: Sample((a(()),), desc="0-d")))


def _np_repeat(x, repeats, axis=None):
    return np.repeat(x, repeats, axis)


_row("repeat_interleave", ("Gather",), lambda x, repeats, axis=None: ops.repeat_interleave(x, repeats, axis),
     _np_repeat,
     _samples(lambda a, r: Sample((a((2, 3)),), dict(repeats=2), desc="flattened"),
              lambda a, r: Sample((a((2, 3)),), dict(repeats=[1, 2], axis=0), desc="per row"),
              lambda a, r: Sample((a((2, 3)),), dict(repeats=[0, 3, 1], axis=-1), desc="with a zero count"),
              lambda a, r: Sample((a(()),), dict(repeats=3, axis=0), desc="0-d")))


def _np_reverse_sequence(x, lens, seq_dim, batch_dim=0):
    y = np.array(x, copy=True)
    for b, n in enumerate(lens):
        src = np.take(x, b, batch_dim)
        part = np.take(src, np.r_[np.arange(n)[::-1], np.arange(n, x.shape[seq_dim])].astype(int),
                       seq_dim - (seq_dim > batch_dim))
        idx = [slice(None)] * x.ndim
        idx[batch_dim] = b
        y[tuple(idx)] = part
    return y


_row("reverse_sequence", ("GatherD", "Select"),
     lambda x, lens, seq_dim, batch_dim=0: ops.reverse_sequence(x, lens, seq_dim, batch_dim), _np_reverse_sequence,
     _samples(lambda a, r: Sample((a((3, 4)), np.array([1, 4, 2], np.int32)), dict(seq_dim=1)),
              lambda a, r: Sample((a((4, 2, 3)), np.array([0, 3, 2], np.int64)), dict(seq_dim=0, batch_dim=2),
                                  desc="3-D, batch after seq, zero length"),
              lambda a, r: Sample((NC(a((3, 3)), "T"), np.array([3, 2, 1], np.int32)), dict(seq_dim=1))),
     grad_args=(0,))
_row("sequence_mask", ("Less",), lambda lens, maxlen=None: ops.sequence_mask(lens, maxlen),
     lambda lens, maxlen=None: np.arange(maxlen) < lens[..., None],
     lambda dtype, rng: iter([Sample((arr(rng, (3,), dtype, 0, 5),), dict(maxlen=4)),
                              Sample((arr(rng, (2, 2), dtype, 0, 3),), dict(maxlen=1), desc="2-D"),
                              Sample((np.array([2, 0], dtype),), dict(maxlen=3), desc="zero length")]),
     (I32, I64), differentiable=False, out_dtype=lambda s: BOOL)
_row("take", ("Gather",), lambda x, idx: ops.take(x, idx), np.take,
     _samples(lambda a, r: Sample((a((3, 4)), np.array([[0, 11], [-1, 5]], np.int64))),
              lambda a, r: Sample((NC(a((2, 3)), "T"), np.array([-6, 2, 2], np.int32)), desc="repeats, view"),
              lambda a, r: Sample((a((5,)), np.array(3, np.int64)), desc="0-d index")),
     grad_args=(0,))


def _np_tri(lower):
    def ref(row, col, offset=0):
        return np.stack((np.tril_indices if lower else np.triu_indices)(row, offset, col)).astype(np.int64)
    return ref


for _name, _lower in (("tril_indices", True), ("triu_indices", False)):
    _row(_name, ("TrilIndices" if _lower else "TriuIndices",), lambda row, col, offset=0, _f=getattr(ops, _name): _f(row, col, offset), _np_tri(_lower),
         lambda dtype, rng: iter([Sample((3, 4, 1)), Sample((4, 3, -1)), Sample((3, 3, 0)), Sample((0, 2, 0)),
                                  Sample((2, 5, 7), desc="offset past the matrix")]),
         (I64,), differentiable=False, graph=False, graph_reason="a constant: no kernel to compile")
_row("type_as", ("Cast",), ops.type_as, lambda x, other: x.astype(other.dtype),
     _samples(lambda a, r: Sample((a((2, 3)), np.zeros((1,), np.float64))),
              lambda a, r: Sample((a((2, 3)), np.zeros((1,), np.float32)), grad=False,
                                  desc="to float32 (no float64 finite differences)")),
     FL + (F16,), grad_args=(0,), out_dtype=lambda s: s.args[1].dtype)
_row("view_as", ("Reshape",), ops.view_as, lambda x, other: x.reshape(other.shape),
     _samples(lambda a, r: Sample((a((2, 3)), np.zeros((3, 1, 2), np.float32))),
              lambda a, r: Sample((NC(a((2, 3)), "T"), np.zeros((6,), np.int32)), desc="view")), grad_args=(0,))
_row("fills", ("Fill",), lambda x, value: ops.fills(x, value),
     lambda x, value: np.full_like(x, value),
     _samples(lambda a, r: Sample((a((2, 3)), 2.0)), lambda a, r: Sample((a((0, 2)), -1.0), desc="empty")),
     FL + (F16, I32), differentiable=False, graph=False, graph_reason="the result is a constant (no kernel)")


def _query(fn):
    return lambda *a: Tensor(np.asarray(fn(*a)))


for _name, _ref in (("size", lambda x: np.asarray(x.size, np.int64)),
                    ("is_floating_point", lambda x: np.asarray(x.dtype.kind == "f")),
                    ("is_complex", lambda x: np.asarray(False)),
                    ("is_tensor", lambda x: np.asarray(True))):
    _row(_name, (), _query(getattr(ops, _name)), _ref,
         _samples(lambda a, r: Sample((a((2, 3)),)), lambda a, r: Sample((a(()),), desc="0-d")),
         FLOATS + (I32, BOOL), differentiable=False, graph=False,
         graph_reason="returns a Python value", special_skip="returns a Python value of the dtype/shape only")
_row("is_nonzero", (), _query(ops.is_nonzero), lambda x: np.asarray(x.reshape(-1)[0] != 0),
     lambda dtype, rng: iter([Sample((np.array([1], dtype),)), Sample((np.array(0, dtype),), desc="0-d zero"),
                              Sample((np.array([[0]], dtype),), desc="(1, 1) zero")]),
     FLOATS + (I32, BOOL), differentiable=False, graph=False, graph_reason="returns a Python bool")


# ---------------------------------------------------------------------------------------------- products, blocks

def _np_cartesian(*xs):
    return np.array(list(itertools.product(*xs)), dtype=xs[0].dtype).reshape(-1, len(xs))


_row("cartesian_prod", ("Gather", "Concat"), lambda *xs: ops.cartesian_prod(*xs), _np_cartesian,
     _samples(lambda a, r: Sample((a((2,)), a((3,)))),
              lambda a, r: Sample((a((2,)), NC(a((2,)), "rev"), a((1,))), desc="three, a view"),
              lambda a, r: Sample((a((3,)),), desc="one input: (n, 1)")))


def _np_comb(x, r=2, with_replacement=False):
    gen = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    out = np.array(list(gen(x, r)), dtype=x.dtype)
    return out if out.size else np.zeros((0,), x.dtype)


_row("combinations", ("Gather",), lambda x, r=2, with_replacement=False: ops.combinations(x, r, with_replacement),
     _np_comb,
     _samples(lambda a, r: Sample((a((4,)),)),
              lambda a, r: Sample((a((3,)),), dict(r=2, with_replacement=True), desc="with replacement"),
              lambda a, r: Sample((a((4,)),), dict(r=3)),
              lambda a, r: Sample((a((2,)),), dict(r=3), desc="r > n: empty")))
_row("block_diag", ("Concat", "Fill"), lambda *xs: ops.block_diag(*xs),
     lambda *xs: scipy.linalg.block_diag(*[np.atleast_1d(x) for x in xs]),
     _samples(lambda a, r: Sample((a((2, 3)), a(()), a((2,)), NC(a((2, 2)), "T")))))


# ---------------------------------------------------------------------------------------------- diagonals, blocks
# (kiln/ops/diag_func.py)

def _np_diag_embed(x, offset=0, dim1=-2, dim2=-1):
    n = x.shape[-1]
    m = n + abs(offset)
    out = np.zeros(x.shape[:-1] + (m, m), x.dtype)
    i = np.arange(n)
    r, c = (i, i + offset) if offset >= 0 else (i - offset, i)
    out[..., r, c] = x
    r_ = x.ndim + 1
    return np.moveaxis(out, (-2, -1), (dim1 % r_, dim2 % r_))


_row("diagonal", ("Diagonal",), lambda x, *a: ops.diagonal(x, *a), lambda x, *a: np.diagonal(x, *a).copy(),
     _samples(lambda a, r: Sample((a((3, 4)),)),
              lambda a, r: Sample((a((3, 4)), -1), desc="below"),
              lambda a, r: Sample((a((2, 3, 4)), 1, 2, 0), desc="3-D, dims reversed"),
              lambda a, r: Sample((a((3, 4)), 5), desc="past the matrix: empty"),
              lambda a, r: Sample((NC(a((3, 3)), "T"), 0, -1, -2), desc="view, negative dims")))


def _np_diagonal_scatter(x, src, offset=0, dim1=0, dim2=1):
    out = np.array(x, copy=True)
    moved = np.moveaxis(out, (dim1, dim2), (-2, -1))
    n1, n2 = moved.shape[-2:]
    k = src.shape[-1]
    i = np.arange(k)
    r, c = (i, i + offset) if offset >= 0 else (i - offset, i)
    moved[..., r, c] = src
    return out


_row("diagonal_scatter", ("Gather", "Select"), lambda x, s, *a: ops.diagonal_scatter(x, s, *a),
     _np_diagonal_scatter,
     _samples(lambda a, r: Sample((a((3, 3)), a((2,)), 1)),
              lambda a, r: Sample((a((2, 3, 4)), a((4, 1)), -1, 0, 1), desc="3-D, below")))
_row("diag_embed", ("DiagEmbed",), lambda x, *a: ops.diag_embed(x, *a), _np_diag_embed,
     _samples(lambda a, r: Sample((a((2, 3)),)),
              lambda a, r: Sample((a((2, 3)), -1, 0, 2), desc="below, new dims 0 and 2"),
              lambda a, r: Sample((a((3,)), 2, 1, 0), desc="above, dims swapped")))
_row("diagflat", ("DiagEmbed",), lambda x, offset=0: ops.diagflat(x, offset),
     lambda x, offset=0: np.diagflat(x, offset),
     _samples(lambda a, r: Sample((a((2, 2)),)), lambda a, r: Sample((a((3,)), -2), desc="below")))
_row("diag", ("DiagEmbed",), ops.diag,
     lambda x: np.einsum("ij,ik->ijk", np.eye(x.size), x.reshape(1, -1)).sum(1).reshape(x.shape * 2)
     if False else (np.diagflat(x.reshape(-1)).reshape(x.shape * 2)),
     _samples(lambda a, r: Sample((a((3,)),)), lambda a, r: Sample((a((2, 2)),), desc="2-D: rank 4")))


def _np_band(x, lower, upper):
    m, n = x.shape[-2:]
    i, j = np.arange(m)[:, None], np.arange(n)[None, :]
    keep = np.ones((m, n), bool)
    if lower >= 0:
        keep &= i - j <= lower
    if upper >= 0:
        keep &= j - i <= upper
    return np.where(keep, x, 0).astype(x.dtype)


_row("matrix_band_part", ("Select",), ops.matrix_band_part, _np_band,
     _samples(lambda a, r: Sample((a((3, 4)), 1, 0)), lambda a, r: Sample((a((2, 3, 3)), -1, 1), desc="batched"),
              lambda a, r: Sample((a((3, 4)), -1, -1), desc="everything")))


def _np_pixel_shuffle(x, r):
    *lead, c, h, w = x.shape
    y = x.reshape(lead + [c // (r * r), r, r, h, w])
    k = len(lead)
    return y.transpose(list(range(k)) + [k, k + 3, k + 1, k + 4, k + 2]).reshape(lead + [c // (r * r), h * r,
                                                                                          w * r])


_row("pixel_shuffle", ("Transpose",), ops.pixel_shuffle, _np_pixel_shuffle,
     _samples(lambda a, r: Sample((a((1, 8, 2, 3)), 2)), lambda a, r: Sample((a((9, 1, 2)), 3), desc="3-D")))
_row("pixel_unshuffle", ("Transpose",), ops.pixel_unshuffle,
     lambda x, r: np.moveaxis(x.reshape(x.shape[:-3] + (x.shape[-3], x.shape[-2] // r, r, x.shape[-1] // r, r)),
                              (-3, -1), (-4, -3)).reshape(x.shape[:-3] + (x.shape[-3] * r * r, x.shape[-2] // r,
                                                                          x.shape[-1] // r)),
     _samples(lambda a, r: Sample((a((1, 2, 4, 6)), 2))))


def _np_s2b(x, block, pads):
    m = len(block)
    x = np.pad(x, [(0, 0)] * (x.ndim - m) + [tuple(p) for p in pads])
    out = []
    for off in np.ndindex(*block):
        sl = tuple(slice(o, None, b) for o, b in zip(off, block))
        out.append(x[(slice(None),) * (x.ndim - m) + sl])
    return np.concatenate(out, 0)


_row("space_to_batch_nd", ("Transpose",), ops.space_to_batch_nd, lambda x, b, p: _np_s2b(
    x, [b] * 2 if isinstance(b, int) else b, p),
     _samples(lambda a, r: Sample((a((2, 1, 4, 4)), 2, [[0, 0], [0, 0]])),
              lambda a, r: Sample((a((1, 2, 3)), [2], [[1, 0]]), desc="1 spatial dim, padded"),
              lambda a, r: Sample((a((1, 1, 3, 2)), [2, 1], [[0, 1], [1, 1]]), desc="uneven blocks")))


def _np_b2s(x, block, crops):
    m = len(block)
    nb = int(np.prod(block))
    n = x.shape[0] // nb
    sp = x.shape[x.ndim - m:]
    out = np.zeros((n,) + x.shape[1:x.ndim - m] + tuple(s * b for s, b in zip(sp, block)), x.dtype)
    for k, off in enumerate(np.ndindex(*block)):
        sl = tuple(slice(o, None, b) for o, b in zip(off, block))
        out[(slice(None),) * (x.ndim - m) + sl] = x[k * n:(k + 1) * n]
    return out[(slice(None),) * (x.ndim - m) + tuple(slice(c[0], out.shape[x.ndim - m + i] - c[1])
                                                    for i, c in enumerate(crops))]


_row("batch_to_space_nd", ("Transpose", "StridedSlice"), ops.batch_to_space_nd, _np_b2s,
     _samples(lambda a, r: Sample((a((8, 1, 2, 2)), (2, 2), [[0, 0], [0, 1]])),
              lambda a, r: Sample((a((2, 2, 3)), (2,), [[1, 0]]), desc="1 spatial dim")))
# MindSpore 2.10's MirrorPad gives np.pad's reflect / symmetric values, and its gradient sums every copy (checked
# with the oracle, /work/shared/tools/ms_oracle.py, on (2, 3, 5, 6) inputs in both modes).
_row("mirror_pad", ("MirrorPad", "MirrorPadGrad"), lambda x, p, mode: ops.mirror_pad(x, p, mode),
     lambda x, p, mode: np.pad(x, [tuple(q) for q in p], "reflect" if mode == "REFLECT" else "symmetric"),
     _samples(lambda a, r: Sample((a((2, 3)), [[1, 1], [2, 2]], "REFLECT")),
              lambda a, r: Sample((a((2, 3)), [[2, 0], [0, 3]], "SYMMETRIC"), desc="symmetric"),
              lambda a, r: Sample((a((2, 3, 4, 5)), [[0, 0], [1, 2], [3, 0], [4, 4]], "REFLECT"),
                                  desc="4-D, the largest reflect counts"),
              lambda a, r: Sample((NC(a((3, 4)), "T"), [[3, 3], [0, 4]], "SYMMETRIC"), desc="view, full symmetric"),
              lambda a, r: Sample((a((3,)), [[0, 0]], "REFLECT"), desc="no padding")),
     notes="one MirrorPad op; its gradient MirrorPadGrad (each padded copy adds to the cell it copies)")



def _mirror_pad_grad(x, dy, paddings, mode):
    """The gradient of mirror_pad(x, paddings, mode) with cotangent dy: MirrorPadGrad(dy) (linear in dy; its own
    gradient is MirrorPad)."""
    return kiln.grad(lambda a: ops.sum(ops.mul(ops.mirror_pad(a, paddings, mode), dy)))(x)


def _np_mirror_pad_grad(x, dy, paddings, mode):
    src = np.pad(np.arange(x.size).reshape(x.shape), [tuple(q) for q in paddings],
                 "reflect" if mode == "REFLECT" else "symmetric")
    out = np.zeros(x.size, dy.dtype)
    np.add.at(out, src.reshape(-1), dy.reshape(-1))
    return out.reshape(x.shape)


_row("mirror_pad_grad", ("MirrorPadGrad", "MirrorPad"), _mirror_pad_grad, _np_mirror_pad_grad,
     _samples(lambda a, r: Sample((a((2, 3)), a((4, 7)), [[1, 1], [2, 2]], "REFLECT")),
              lambda a, r: Sample((a((2, 3)), a((4, 6)), [[2, 0], [0, 3]], "SYMMETRIC"), desc="symmetric")),
     FL, grad_args=(1,),
     notes="the gradient of mirror_pad; differentiating it w.r.t. the cotangent checks MirrorPadGrad's own bprop "
           "(MirrorPad): a gradient of a gradient")

def _np_unfold(x, k, d=1, p=0, s=1):
    k, d, p, s = ([v, v] if isinstance(v, int) else list(v) for v in (k, d, p, s))
    x = np.pad(x, [(0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])])
    n, c, h, w = x.shape
    oh = (h - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (w - d[1] * (k[1] - 1) - 1) // s[1] + 1
    cols = np.zeros((n, c, k[0], k[1], oh, ow), x.dtype)
    for i in range(k[0]):
        for j in range(k[1]):
            cols[:, :, i, j] = x[:, :, i * d[0]:i * d[0] + s[0] * oh:s[0], j * d[1]:j * d[1] + s[1] * ow:s[1]]
    return cols.reshape(n, c * k[0] * k[1], oh * ow)


def _np_fold(cols, size, k, d=1, p=0, s=1):
    k, d, p, s = ([v, v] if isinstance(v, int) else list(v) for v in (k, d, p, s))
    h, w = size
    hp, wp = h + 2 * p[0], w + 2 * p[1]
    oh = (hp - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (wp - d[1] * (k[1] - 1) - 1) // s[1] + 1
    n = cols.shape[0]
    c = cols.shape[1] // (k[0] * k[1])
    cols = cols.reshape(n, c, k[0], k[1], oh, ow)
    img = np.zeros((n, c, hp, wp), cols.dtype)
    for i in range(k[0]):
        for j in range(k[1]):
            img[:, :, i * d[0]:i * d[0] + s[0] * oh:s[0], j * d[1]:j * d[1] + s[1] * ow:s[1]] += cols[:, :, i, j]
    return img[:, :, p[0]:p[0] + h, p[1]:p[1] + w]


# MindSpore 2.10's unfold / fold give these NumPy values and gradients (oracle: the "pairs, padding, dilation" and
# "overlapping, padded" samples at (2, 3, 5, 6) and (2, 6, 12)); each op's gradient is the other one.
_row("unfold", ("Im2Col", "Col2Im"), lambda x, *a: ops.unfold(x, *a), _np_unfold,
     _samples(lambda a, r: Sample((a((1, 2, 4, 4)), 2, 1, 0, 2)),
              lambda a, r: Sample((a((2, 1, 5, 4)), (3, 2), (1, 2), 1, (2, 1)), desc="pairs, padding, dilation"),
              lambda a, r: Sample((a((1, 2, 3, 3)), 3, 2, 2, 1), desc="padding wider than the dilated kernel's gaps"),
              lambda a, r: Sample((NC(a((1, 1, 3, 3)), "T"), 2), desc="view, defaults")), FLOATS + (I32,),
     notes="one Im2Col op; its gradient Col2Im")
_row("fold", ("Col2Im", "Im2Col"), lambda x, *a: ops.fold(x, *a), _np_fold,
     _samples(lambda a, r: Sample((a((1, 8, 4)), (4, 4), 2, 1, 0, 2)),
              lambda a, r: Sample((a((2, 6, 12)), (5, 4), (3, 2), (1, 2), 1, (2, 1)), desc="overlapping, padded"),
              lambda a, r: Sample((NC(a((1, 4, 4)), "T"), (3, 3), 2, 1, 1, 2), desc="view, padding")),
     FLOATS + (I32,), notes="one Col2Im op; its gradient Im2Col")


def _np_diags(m, n, k0, k1, align):
    """[(d, [(r, c), ...], shift)] for d = k1 … k0 (TensorFlow's MatrixDiagV3 layout), and max_len."""
    lens = {d: max(0, min(m + min(0, d), n - max(0, d))) for d in range(k0, k1 + 1)}
    max_len = max(lens.values())
    sup, sub = (a == "RIGHT" for a in align.split("_"))
    out = []
    for d in range(k1, k0 - 1, -1):
        pts = [(j, j + d) if d >= 0 else (j - d, j) for j in range(lens[d])]
        out.append((d, pts, max_len - lens[d] if (sup if d >= 0 else sub) else 0))
    return out, max_len


def _kk(k):
    return (k, k) if isinstance(k, int) else tuple(k)


def _np_matrix_diag_part(x, k, pad, align="RIGHT_LEFT"):
    k0, k1 = _kk(k)
    table, max_len = _np_diags(*x.shape[-2:], k0, k1, align)
    out = np.full(x.shape[:-2] + (len(table), max_len), pad, x.dtype)
    for row, (d, pts, shift) in enumerate(table):
        for j, (r, c) in enumerate(pts):
            out[..., row, shift + j] = x[..., r, c]
    return out[..., 0, :] if k0 == k1 else out


def _np_matrix_set_diag(x, diag, k=0, align="RIGHT_LEFT"):
    k0, k1 = _kk(k)
    table, _ = _np_diags(*x.shape[-2:], k0, k1, align)
    out = np.array(x, copy=True)
    dg = diag[..., None, :] if k0 == k1 else diag
    for row, (d, pts, shift) in enumerate(table):
        for j, (r, c) in enumerate(pts):
            out[..., r, c] = dg[..., row, shift + j]
    return out


def _np_matrix_diag(x, k=0, rows=-1, cols=-1, pad=0, align="RIGHT_LEFT"):
    k0, k1 = _kk(k)
    base = np.full(x.shape[:-1 if k0 == k1 else -2] + (rows, cols), pad, x.dtype)
    return _np_matrix_set_diag(base, x, k, align)


_row("matrix_diag_part", ("Gather", "Concat", "Diagonal", "TensorCopy"), lambda x, k, pad, *a: ops.matrix_diag_part(x, k, pad, *a),
     _np_matrix_diag_part,
     _samples(lambda a, r: Sample((a((3, 4)), 0, 0.0)),
              lambda a, r: Sample((a((2, 3, 4)), (-1, 2), 9.0), desc="range, batched"),
              lambda a, r: Sample((a((4, 3)), (-2, 1), -1.0, "LEFT_RIGHT"), desc="LEFT_RIGHT")), FLOATS + (I32,),
     grad_args=(0,))
_row("matrix_set_diag", ("Gather", "Select"), lambda x, d, k, *a: ops.matrix_set_diag(x, d, k, *a),
     _np_matrix_set_diag,
     _samples(lambda a, r: Sample((a((3, 4)), a((3,)), 1)),
              lambda a, r: Sample((a((2, 3, 4)), a((2, 2, 3)), (-1, 0)), desc="range, batched"),
              lambda a, r: Sample((a((4, 3)), a((3, 3)), (-1, 1), "LEFT_RIGHT"), desc="LEFT_RIGHT")),
     FLOATS + (I32,))
_row("matrix_diag", ("Gather", "Select", "DiagEmbed"), lambda x, *a: ops.matrix_diag(x, *a),
     lambda x, k=0, rows=-1, cols=-1, pad=0, align="RIGHT_LEFT": _np_matrix_diag(
         x, k, *((x.shape[-1] + abs(k), x.shape[-1] + abs(k)) if rows == -1 else (rows, cols)), pad, align),
     _samples(lambda a, r: Sample((a((3,)),)),
              lambda a, r: Sample((a((2, 3)), 1), desc="above, batched"),
              lambda a, r: Sample((a((2, 3)), (0, 1), 3, 4, 7.0, "LEFT_RIGHT"), desc="range, sizes, padding"),
              lambda a, r: Sample((a((2,)), -1, 3, 4, 7.0), desc="below, padded")), FLOATS + (I32,))
_row("vander", ("Mul", "Concat"), lambda x, *n: ops.vander(x, *n),
     lambda x, *n: np.vander(x, *n).astype(x.dtype if x.dtype.kind == "f" else np.int64),
     _samples(lambda a, r: Sample((a((3,)),)), lambda a, r: Sample((a((4,)), 2), desc="N"),
              lambda a, r: Sample((a((2,)), 0), desc="N = 0")), FLOATS + (I32,), ref_upcast=False,
     tol={F16: (4e-3, 4e-3)})


# ---------------------------------------------------------------------------------------------- more public functions
# cat, permute, unsqueeze, unbind, reverse, fill, scalar_to_tensor, tuple_to_array, numel, rank: functions of
# kiln.ops that only their Primitive classes or Tensor methods reached before.

_row("cat", ("Concat",), lambda *xs, axis=0: ops.cat(xs, axis), lambda *xs, axis=0: np.concatenate(xs, axis),
     _samples(lambda a, r: Sample((a((2, 3)), a((1, 3)))),
              lambda a, r: Sample((a((2, 3)), NC(a((2, 2)), "T")), dict(axis=-1), desc="last axis, a view"),
              lambda a, r: Sample((a((0, 3)), a((2, 3))), desc="an empty piece")))
_row("permute", ("Transpose",), lambda x, axis: ops.permute(x, axis), lambda x, axis: np.transpose(x, axis),
     _samples(lambda a, r: Sample((a((2, 3, 4)), (2, 0, 1))),
              lambda a, r: Sample((NC(a((3, 4)), "T"), (-1, 0)), desc="negative axis, a view")))
_row("unsqueeze", ("Reshape",), lambda x, dim: ops.unsqueeze(x, dim), np.expand_dims,
     _samples(lambda a, r: Sample((a((2, 3)), 1)), lambda a, r: Sample((a(()), 0), desc="0-d"),
              lambda a, r: Sample((a((2, 3)), -1), desc="negative dim")))
_row("unbind", ("StridedSlice", "Reshape"), lambda x, dim=0: ops.unbind(x, dim),
     lambda x, dim=0: tuple(np.moveaxis(x, dim, 0)),
     _samples(lambda a, r: Sample((a((3, 2)),)), lambda a, r: Sample((a((2, 3, 2)),), dict(dim=1), desc="dim 1"),
              lambda a, r: Sample((NC(a((2, 3)), "T"),), dict(dim=-1), desc="negative dim, a view")))
_row("reverse", ("StridedSlice",), lambda x, axis: ops.reverse(x, axis), lambda x, axis: np.flip(x, axis).copy(),
     _samples(lambda a, r: Sample((a((2, 3)), [1])), lambda a, r: Sample((a((2, 3, 2)), [0, 2]), desc="two axes"),
              lambda a, r: Sample((a((2, 3)), [-1]), desc="negative axis")))


_FILL_DTYPES = {np.dtype(np.float32): "float32", np.dtype(np.float64): "float64", np.dtype(np.int32): "int32",
                np.dtype(np.float16): "float16", np.dtype(np.bool_): "bool_"}


def _fill_gen(dtype, rng):
    yield Sample((), dict(shape=(2, 3), value=1.5, dtype=dtype), desc="(2, 3), 1.5")
    yield Sample((), dict(shape=(), value=-2 if dtype != BOOL else 1, dtype=dtype), desc="0-d")
    yield Sample((), dict(shape=(0, 2), value=3, dtype=dtype), desc="empty")


register(OpInfo("fill", ("Fill",), lambda shape, value, dtype: ops.fill(getattr(kiln, _FILL_DTYPES[dtype]), shape,
                                                                        value),
                lambda shape, value, dtype: np.full(shape, value).astype(dtype), _fill_gen,
                (F32, F64, F16, I32, BOOL), ref_upcast=False, out_dtype=lambda s: s.kwargs["dtype"],
                graph_reason="",
                notes="MindSpore's ops.fill(type, shape, value): the value converted to the dtype (1.5 → 1 for Int32)"))


def _const_row(name, op, ref, samples, **kw):
    """Functions whose result is a constant of their Python arguments (no kernel runs; under jit, a constant)."""
    register(OpInfo(name, (), op, ref, samples, (F32,), differentiable=False, graph=False,
                    graph_reason="the result is a constant of Python arguments (no kernel)",
                    special_skip="takes Python numbers, not tensors", ref_upcast=False, **kw))


_const_row("scalar_to_tensor", lambda value, dtype=None: ops.scalar_to_tensor(value) if dtype is None else
           ops.scalar_to_tensor(value, getattr(kiln, dtype)),
           lambda value, dtype=None: np.asarray(value, np.float32 if dtype is None else getattr(np, dtype)),
           lambda dtype, rng: iter([Sample((2.5,)), Sample((3,), desc="int → Float32"),
                                    Sample((True,), desc="bool → 1.0"),
                                    Sample((7,), dict(dtype="int32"), desc="Int32")]),
           out_dtype=lambda s: np.dtype(s.kwargs.get("dtype", "float32")))
_const_row("tuple_to_array", lambda t: ops.tuple_to_array(t),
           lambda t: np.array(t, np.int32 if isinstance(t[0], int) else np.float32),
           lambda dtype, rng: iter([Sample(((1, 2, 3),), desc="ints → Int32"),
                                    Sample(((1.5, 2),), desc="leading float → Float32"),
                                    Sample(((True, False),), desc="bools → Int32"),
                                    Sample((((1, 2), (3, 4)),), desc="nested → 2-D Float32")]),
           out_dtype=lambda s: np.dtype(np.int32 if isinstance(s.args[0][0], int) else np.float32),
           notes="MindSpore 2.10: the first element decides the dtype")
for _name, _ref in (("numel", lambda x: np.asarray(x.size, np.int64)), ("rank", lambda x: np.asarray(x.ndim, np.int64))):
    # the Python int as the op returns it (the registry test makes it a Tensor; the benchmark times the op alone)
    _row(_name, (), getattr(ops, _name), _ref,
         _samples(lambda a, r: Sample((a((2, 3)),)), lambda a, r: Sample((a(()),), desc="0-d"),
                  lambda a, r: Sample((a((0, 4, 1)),), desc="empty")),
         FLOATS + (I32, BOOL), differentiable=False, graph=False, graph_reason="returns a Python int",
         special_skip="returns a Python int of the shape only")
