"""Registry entries of the shape/layout ops of kiln/ops/shape_func.py (stacking, splitting, rotating, moving axes,
repeating, taking, index helpers and queries). References are NumPy's (SciPy's block_diag); MindSpore-specific
shapes (cartesian_prod of one input, combinations without any) are pinned in tests/python/test_ops_array_ext.py."""
import itertools

import numpy as np
import scipy.linalg

from kiln import Tensor, ops

from .base import BOOL, F16, F32, F64, FLOATS, I32, I64, NC, OpInfo, Sample, arr, np_broadcast_to, register

FL = (F32, F64)
MOVE = FLOATS + (I32, BOOL)  # data movement: every dtype moves unchanged


def _row(name, kernels, op, ref, samples, dtypes=MOVE, differentiable=True, **kw):
    register(OpInfo(name, kernels, op, ref, samples, dtypes, differentiable=differentiable, **kw))


def _samples(*make):
    """A sample generator from functions (a, rng) -> Sample, where a(shape) draws an array of the entry's dtype."""
    def gen(dtype, rng):
        a = lambda s: arr(rng, s, dtype)  # noqa: E731
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


_row("reverse_sequence", ("Gather", "Select"),
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
    _row(_name, (), lambda row, col, offset=0, _f=getattr(ops, _name): _f(row, col, offset), _np_tri(_lower),
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
