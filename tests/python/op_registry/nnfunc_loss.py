"""Registry entries of the NN-functional ops of kiln/ops/nnloss_func.py (losses, similarity, ctc_loss, dense,
embedding), nnsample_func.py (affine_grid, grid_sample, upsample) and nnmisc_func.py (dropout1d, channel_shuffle,
bidense, rms_norm): one row per @defop op. References are direct NumPy/SciPy formulas or loops."""
import math

import numpy as np
import scipy.special

import kiln
from kiln import Tensor, ops

from .base import F16, F32, F64, FLOATS, I32, NC, OpInfo, Sample, arr, register
from .elementwise import _same_dtype


# ---------------------------------------------------------------------------------------------- losses / similarity

def _np_red(loss, reduction):
    return loss if reduction == "none" else (loss.mean() if reduction == "mean" else loss.sum())


def _np_cos_sim(x1, x2, dim=1, eps=1e-8):
    x1, x2 = np.broadcast_arrays(x1, x2)
    w12 = (x1 * x2).sum(dim)
    return w12 / np.maximum(np.sqrt((x1 ** 2).sum(dim) * (x2 ** 2).sum(dim)), eps)


def _cos_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype, -2, 2, away=0.1)
    yield Sample((a((3, 4)), a((3, 4))))
    yield Sample((a((1, 4)), a((3, 4))), dict(dim=1), desc="broadcast")
    yield Sample((a((4, 2, 3)), a((4, 2, 3))), dict(dim=0), desc="dim 0")
    yield Sample((NC(a((3, 4)), "T"), a((3, 4))), dict(dim=-1), desc="view")


register(OpInfo("cosine_similarity", ("Mul", "ReduceSum", "Sqrt", "Maximum", "Div"), ops.cosine_similarity,
                _np_cos_sim, _cos_samples, FLOATS, differentiable=True, out_dtype=_same_dtype,
                tol={F16: (4e-3, 4e-3)},
                special_skip="a ratio of sums: ±inf gives inf/inf = NaN in one association, not the other"))


def _np_cel(x1, x2, y, margin=0.0, reduction="mean"):
    cos = (x1 * x2).sum(1) / (np.sqrt((x1 ** 2).sum(1)) * np.sqrt((x2 ** 2).sum(1)))
    loss = np.where(y == 1, 1 - cos, 0.0) + np.where(y == -1, np.maximum(cos - margin, 0.0), 0.0)
    return _np_red(loss, reduction)


def _cel_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype, -2, 2, away=0.1)
    y = np.array([1, -1, 1, -1], np.int32)
    yield Sample((a((4, 5)), a((4, 5)), y), dict(margin=0.2, reduction="none"))
    yield Sample((a((4, 5)), a((4, 5)), y), dict(margin=-0.3), desc="mean")
    yield Sample((a((2, 3, 4)), a((2, 3, 4)), rng.choice([-1, 1], (2, 4)).astype(np.float32)),
                 dict(reduction="sum"), desc="3-D, float target")


register(OpInfo("cosine_embedding_loss", ("Mul", "ReduceSum", "Sqrt", "Div", "Select", "ReLU"),
                ops.cosine_embedding_loss, _np_cel, _cel_samples, (F32, F64), differentiable=True, grad_args=(0, 1),
                out_dtype=_same_dtype, special_skip="a ratio of sums: ±inf gives inf/inf = NaN"))


def _np_gnll(x, t, v, full=False, eps=1e-6, reduction="mean"):
    if v.shape != x.shape and v.shape == x.shape[:-1]:
        v = v[..., None]
    m = np.maximum(v, eps)
    loss = 0.5 * (np.log(m) + (x - t) ** 2 / m) + (0.5 * np.log(2 * np.pi) if full else 0.0)
    return _np_red(loss, reduction)


def _gnll_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype, -2, 2)
    v = lambda s: arr(rng, s, dtype, 0.2, 2)
    yield Sample((a((3, 4)), a((3, 4)), v((3, 4))), dict(reduction="none"))
    yield Sample((a((3, 4)), a((3, 4)), v((3, 1))), dict(full=True), desc="var (N, 1), full")
    yield Sample((a((3, 4)), a((3, 4)), v((3,))), dict(reduction="sum"), desc="var without the last dim")


register(OpInfo("gaussian_nll_loss", ("Maximum", "Log", "Square", "Sub", "Div", "Mul"), ops.gaussian_nll_loss,
                _np_gnll, _gnll_samples, FLOATS, differentiable=True, out_dtype=_same_dtype,
                tol={F16: (4e-3, 4e-3)}, special_skip="log/ratio of a clamped variance: Log's and Div's values"))


def _np_mml(x, t, p=1, margin=1, weight=None, reduction="mean"):
    x2 = x.reshape(-1, x.shape[-1]).astype(np.float64)
    n, c = x2.shape
    t = t.reshape(n)
    loss = np.zeros(n)
    for i in range(n):
        h = np.maximum(margin - x2[i, t[i]] + x2[i], 0.0) ** p
        h[t[i]] = 0.0
        loss[i] = h.sum() * (weight[t[i]] if weight is not None else 1.0) / c
    return _np_red(loss.reshape(x.shape[:-1]), reduction)


def _mml_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype, -1, 1)
    yield Sample((a((4, 5)), rng.integers(0, 5, 4).astype(np.int64)), dict(reduction="none"))
    yield Sample((a((4, 5)), rng.integers(0, 5, 4).astype(np.int32), 2, 0.5, arr(rng, (5,), dtype, 0.5, 2)),
                 desc="p = 2, weight, mean")
    yield Sample((a((5,)), np.array([2], np.int64)), dict(reduction="sum"), desc="1-D")
    yield Sample((a((3, 4)), np.array([0, 3, 3], np.int64), 2, 1.5), dict(reduction="sum"), desc="p = 2, sum")


register(OpInfo("multi_margin_loss", ("MultiMarginLoss", "MultiMarginLossGrad"), ops.multi_margin_loss, _np_mml,
                _mml_samples, FLOATS, differentiable=True, grad_args=(0,), out_dtype=_same_dtype,
                tol={F16: (4e-3, 4e-3)}, special_skip="hinge sums in double: a NaN stays NaN, ±inf saturate",
                notes="one MultiMarginLoss op (reduction in the kernel), its backward MultiMarginLossGrad"))


def _np_mlml(x, t, reduction="mean"):
    x2 = x.reshape(-1, x.shape[-1]).astype(np.float64)
    t2 = t.reshape(x2.shape)
    n, c = x2.shape
    loss = np.zeros(n)
    for i in range(n):
        listed = []
        for v in t2[i]:
            if v == -1:
                break
            listed.append(int(v))
        others = [k for k in range(c) if k not in listed]
        loss[i] = sum(max(0.0, 1 - (x2[i, j] - x2[i, k])) for j in listed for k in others) / c
    return _np_red(loss.reshape(x.shape[:-1]), reduction)


def _mlml_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype, -1, 1)
    t = np.array([[3, 0, -1, 1], [1, 2, 3, -1], [-1, 1, 2, 3]], np.int64)
    yield Sample((a((3, 4)), t), dict(reduction="none"), desc="−1 ends each row's list")
    yield Sample((a((3, 4)), t.astype(np.int32)), desc="int32, mean")
    yield Sample((a((4,)), np.array([2, 2, -1, 0], np.int64)), dict(reduction="sum"), desc="1-D, repeated label")
    yield Sample((a((2, 3)), np.array([[0, 1, 2], [-1, -1, -1]], np.int32)), dict(reduction="none"),
                 desc="every class listed; none listed")


register(OpInfo("multilabel_margin_loss", ("MultilabelMarginLoss", "MultilabelMarginLossGrad"),
                ops.multilabel_margin_loss, _np_mlml, _mlml_samples, FLOATS, differentiable=True, grad_args=(0,),
                out_dtype=_same_dtype, tol={F16: (4e-3, 4e-3)},
                special_skip="hinge sums in double: a NaN stays NaN, ±inf saturate",
                notes="one MultilabelMarginLoss op (reduction in the kernel), its backward MultilabelMarginLossGrad"))


def _np_mlsml(x, y, weight=None, reduction="mean"):
    loss = y * np.logaddexp(0, -x) + (1 - y) * np.logaddexp(0, x)
    if weight is not None:
        loss = loss * weight
    return _np_red(loss.sum(-1) / x.shape[-1], reduction)


def _mlsml_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype, -3, 3)
    yield Sample((a((3, 4)), (rng.random((3, 4)) > 0.5).astype(dtype)), dict(reduction="none"))
    yield Sample((a((3, 4)), rng.random((3, 4)).astype(dtype), arr(rng, (4,), dtype, 0.5, 2)), desc="weight, mean")


register(OpInfo("multilabel_soft_margin_loss", ("ReLU", "Log1p", "Exp", "Mul", "ReduceSum"),
                ops.multilabel_soft_margin_loss, _np_mlsml, _mlsml_samples, FLOATS, differentiable=True,
                out_dtype=_same_dtype, tol={F16: (4e-3, 4e-3)},
                special_skip="softplus sums: softplus's special values (elementwise registry)"))


def _np_tml(a, p, n, margin=1.0, p_norm=2, eps=1e-6, swap=False, reduction="mean"):
    def d(u, v):
        return (np.abs(u - v + eps) ** p_norm).sum(-1) ** (1.0 / p_norm)
    dan = d(a, n)
    if swap:
        dan = np.minimum(dan, d(p, n))
    return _np_red(np.maximum(d(a, p) - dan + margin, 0.0), reduction)


def _tml_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype, -1, 1)
    yield Sample((a((4, 3)), a((4, 3)), a((4, 3))), dict(reduction="none"))
    yield Sample((a((4, 3)), a((4, 3)), a((4, 3))), dict(margin=0.5, p=1, swap=True), desc="p = 1, swap")
    yield Sample((a((5,)), a((5,)), a((5,))), dict(margin=2.0, p=3, reduction="sum"), desc="1-D, p = 3")


register(OpInfo("triplet_margin_loss", ("Sub", "Add", "Sqrt", "ReLU", "Abs", "Pow"),
                lambda an, po, ne, **kw: ops.triplet_margin_loss(an, po, ne, **kw),
                lambda an, po, ne, **kw: _np_tml(an, po, ne, kw.get("margin", 1.0), kw.get("p", 2),
                                                 kw.get("eps", 1e-6), kw.get("swap", False),
                                                 kw.get("reduction", "mean")),
                _tml_samples, (F32, F64), differentiable=True, out_dtype=_same_dtype,
                special_skip="norms of differences: ±inf − ±inf forms; Sqrt/Pow/ReLU cover it"))


def np_ctc(lp, targets, il, tl, blank=0):
    """Per-sample CTC negative log-likelihood by the plain (probability-space, float64) forward recursion."""
    t_max, n, c = lp.shape
    out = np.zeros(n)
    p = np.exp(lp.astype(np.float64))
    for b in range(n):
        lab = [int(v) for v in targets[b, :tl[b]]]
        ext = [blank]
        for v in lab:
            ext += [v, blank]
        L = len(ext)
        alpha = np.zeros(L)
        alpha[0] = p[0, b, ext[0]]
        if L > 1:
            alpha[1] = p[0, b, ext[1]]
        for t in range(1, il[b]):
            new = np.zeros(L)
            for s in range(L):
                acc = alpha[s] + (alpha[s - 1] if s >= 1 else 0.0)
                if s >= 2 and ext[s] != blank and ext[s] != ext[s - 2]:
                    acc += alpha[s - 2]
                new[s] = acc * p[t, b, ext[s]]
            alpha = new
        total = alpha[L - 1] + (alpha[L - 2] if L > 1 else 0.0)
        with np.errstate(divide="ignore"):
            out[b] = -np.log(total)
    return out


def _np_ctc_call(lp, targets, il, tl, blank=0, reduction="mean", zero_infinity=False):
    loss = np_ctc(lp, targets, il, tl, blank)
    if zero_infinity:
        loss = np.where(np.isinf(loss), 0.0, loss)
    if reduction == "sum":
        loss = loss.sum()
    elif reduction == "mean":
        loss = (loss / np.maximum(tl, 1)).mean()
    return loss


def _ctc_samples(dtype, rng):
    def lp(t, n, c):
        z = rng.normal(size=(t, n, c))
        return (z - scipy.special.logsumexp(z, axis=-1, keepdims=True)).astype(dtype)
    tg = np.array([[1, 2, 2], [3, 1, 0]], np.int32)
    yield Sample((lp(6, 2, 4), tg, np.array([6, 4], np.int32), np.array([3, 2], np.int32)), dict(reduction="none"),
                 desc="repeated label needs a blank")
    yield Sample((lp(5, 3, 5), np.array([[1, 4], [2, 2], [3, 0]], np.int64), np.array([5, 3, 4], np.int64),
                  np.array([2, 2, 0], np.int64)), dict(blank=0), desc="mean; an empty target")
    yield Sample((lp(4, 2, 3), np.array([[2, 2, 2], [1, 0, 0]], np.int32), np.array([3, 4], np.int32),
                  np.array([3, 1], np.int32)), dict(reduction="sum", zero_infinity=True, blank=0),
                 desc="an impossible alignment zeroed")
    yield Sample((lp(5, 2, 4), np.array([[0, 1], [2, 0]], np.int32), np.array([5, 5], np.int32),
                  np.array([2, 2], np.int32)), dict(blank=3, reduction="none"), desc="blank = C − 1")


register(OpInfo("ctc_loss", ("CTCLossV2", "CTCLossV2Grad"),
                lambda lp, tg, il, tl, **kw: ops.ctc_loss(lp, tg, il, tl, **kw)[0], _np_ctc_call, _ctc_samples,
                (F32, F64), differentiable=True, grad_args=(0,), out_dtype=_same_dtype,
                special_skip="log-probabilities: ±inf/NaN inputs are outside the op's domain (log_softmax outputs); "
                             "impossible alignments (+inf) are in the samples",
                notes="one CTCLossV2 op (the reduction and zero_infinity are attributes); gradient: CTCLossV2Grad's "
                      "beta recursion in double (the exact derivative w.r.t. log_probs)"))


def _np_dense(x, w, b=None):
    y = x @ (w.T if w.ndim == 2 else w)
    return y if b is None else y + b


def _dense_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype, -2, 2)
    yield Sample((a((3, 4)), a((5, 4)), a((5,))))
    yield Sample((a((2, 3, 4)), a((5, 4))), desc="batched, no bias")
    yield Sample((a((3, 4)), a((4,))), desc="1-D weight")


register(OpInfo("dense", ("BatchMatMul", "Transpose", "Add"), ops.dense, _np_dense, _dense_samples, (F32, F64, F16),
                differentiable=True, tol={F16: (3e-3, 3e-3), F32: (1e-5, 1e-5)},
                special_skip="a matmul: BatchMatMul's special values"))


def _np_embedding(idx, w, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False):
    return w[idx]


def _emb_samples(dtype, rng):
    w = arr(rng, (6, 3), dtype)
    yield Sample((np.array([[0, 4], [2, 2]], np.int32), w))
    yield Sample((np.array([1, 5, 1, 0], np.int64), w), dict(padding_idx=1, scale_grad_by_freq=True),
                 desc="padding_idx, scale_grad_by_freq (their gradient rules are not the forward's derivative)",
                 grad=False)


register(OpInfo("embedding", ("Gather", "CheckRange"), ops.embedding, _np_embedding, _emb_samples, FLOATS,
                differentiable=True, grad_args=(1,), ref_upcast=False,
                special_skip="a row lookup: Gather's special values",
                notes="the gradient rules (padding row 0, 1/count scaling) are checked in "
                      "tests/python/test_nn_functional_ext.py against closed forms"))


# ---------------------------------------------------------------------------------------------- sampling

def _np_base(n, align):
    if n == 1:
        return np.zeros(1)
    i = np.arange(n, dtype=np.float64)
    return i * 2 / (n - 1) - 1 if align else (2 * i + 1) / n - 1


def _np_affine_grid(theta, size, align_corners=False):
    nd = len(size) - 2
    sp = size[2:]
    coords = np.meshgrid(*[_np_base(s, align_corners) for s in sp], indexing="ij")  # z?, y, x
    base = np.stack([coords[nd - 1 - k] for k in range(nd)] + [np.ones(sp)], -1).reshape(-1, nd + 1)
    return np.einsum("pk,njk->npj", base, theta.astype(np.float64)).reshape((size[0],) + tuple(sp) + (nd,))


def _ag_samples(dtype, rng):
    yield Sample((arr(rng, (2, 2, 3), dtype), (2, 3, 4, 5)))
    yield Sample((arr(rng, (1, 2, 3), dtype), (1, 1, 3, 1)), dict(align_corners=True), desc="align, W = 1")
    yield Sample((arr(rng, (2, 3, 4), dtype), (2, 1, 2, 3, 4)), desc="5-D size")


register(OpInfo("affine_grid", ("BatchMatMul", "Transpose"), ops.affine_grid, _np_affine_grid, _ag_samples, FLOATS,
                differentiable=True, out_dtype=_same_dtype, tol={F16: (4e-3, 4e-3)},
                special_skip="a matmul with constant coordinates: BatchMatMul's special values"))


def _np_grid_sample(x, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """grid_sample of 4-D or 5-D x at grid's normalized coordinates (x first), point by point in float64."""
    align = bool(align_corners)
    nd = x.ndim - 2
    spatial = x.shape[2:]  # (H, W) or (D, H, W)
    out = np.zeros(x.shape[:2] + grid.shape[1:-1])

    def coord(g, size):
        v = (g + 1) / 2 * (size - 1) if align else ((g + 1) * size - 1) / 2
        if padding_mode == "border":
            v = min(max(v, 0.0), size - 1.0)
        elif padding_mode == "reflection":
            lo, hi = (0.0, size - 1.0) if align else (-0.5, size - 0.5)
            span = hi - lo
            if span <= 0:
                v = 0.0
            else:
                d = abs(v - lo)
                flips = math.floor(d / span)
                extra = d - flips * span
                v = lo + extra if flips % 2 == 0 else hi - extra
            v = min(max(v, 0.0), size - 1.0)
        return v

    def at(b, idx):  # idx: integer coordinates, outermost spatial dim first
        if all(0 <= i < n for i, n in zip(idx, spatial)):
            return x[(b, slice(None)) + tuple(idx)]
        return np.zeros(x.shape[1])

    for b in range(x.shape[0]):
        for p in np.ndindex(*grid.shape[1:-1]):
            c = [coord(float(grid[(b,) + p + (nd - 1 - k,)]), spatial[k]) for k in range(nd)]  # outermost first
            if mode == "nearest":
                out[(b, slice(None)) + p] = at(b, [int(math.copysign(math.floor(abs(v) + 0.5), v)) for v in c])
                continue
            base = [math.floor(v) for v in c]
            acc = np.zeros(x.shape[1])
            for corner in np.ndindex(*([2] * nd)):
                w = 1.0
                for k in range(nd):
                    f = c[k] - base[k]
                    w *= f if corner[k] else 1 - f
                acc = acc + at(b, [base[k] + corner[k] for k in range(nd)]) * w
            out[(b, slice(None)) + p] = acc
    return out


def _gs_samples(dtype, rng, nd=2):
    x = arr(rng, (2, 2, 3, 4) if nd == 2 else (2, 2, 2, 3, 4), dtype)
    g = arr(rng, (2, 2, 3, 2) if nd == 2 else (2, 2, 1, 3, 3), dtype, -1.3, 1.3)
    for mode in ("bilinear", "nearest"):
        for pm in ("zeros", "border", "reflection"):
            for ac in (False, True):
                yield Sample((x, g), dict(mode=mode, padding_mode=pm, align_corners=ac), desc=f"{mode} {pm} {ac}",
                             grad=(mode == "bilinear"))


register(OpInfo("grid_sample", ("GridSampler2D", "GridSampler2DGrad"), ops.grid_sample, _np_grid_sample,
                _gs_samples, (F32, F64, F16), differentiable=True, out_dtype=_same_dtype,
                tol={F32: (1e-5, 1e-5), F16: (2e-2, 2e-2)},
                special_skip="NaN/inf coordinates read as outside (zeros): checked in test_nn_functional_ext.py",
                notes="one GridSampler2D op, its backward GridSampler2DGrad; nearest: no gradient w.r.t. the grid "
                      "(piecewise constant); samples avoid exact pixel boundaries (random grids)"))
register(OpInfo("grid_sample_3d", ("GridSampler3D", "GridSampler3DGrad"), ops.grid_sample, _np_grid_sample,
                lambda dtype, rng: _gs_samples(dtype, rng, 3), (F32, F64), differentiable=True,
                out_dtype=_same_dtype, tol={F32: (1e-5, 1e-5)},
                special_skip="NaN/inf coordinates read as outside (zeros): checked in test_issue23_kernels.py",
                notes="5-D input: one GridSampler3D op (trilinear or nearest), its backward GridSampler3DGrad"))


from .composite import _interp_samples, _np_interpolate  # noqa: E402 (this section's own imports)

register(OpInfo("upsample", ("ResizeLinear", "ResizeLinearGrad", "ResizeNearest", "ResizeNearestGrad"),
                lambda x, size, mode, align_corners=None: ops.upsample(x, size, mode=mode, align_corners=align_corners),
                _np_interpolate, _interp_samples, (F32, F64), differentiable=True,
                special_skip="ops.interpolate itself (its row)"))


# ---------------------------------------------------------------------------------------------- misc

def _draw_dropout1d(shape, dtype, seed=None):
    m = int(np.prod(shape))
    y = ops.dropout1d(Tensor(np.ones((m, 1), dtype)), 0.5)  # (C, L) = (m, 1): one draw per element
    return ops.reshape(y, tuple(shape))


def _check_dropout1d(x, dtype):
    assert set(np.unique(x)) <= {0.0, 2.0}, np.unique(x)
    frac = (x == 2.0).mean()
    assert abs(frac - 0.5) < 5 * math.sqrt(0.25 / x.size), frac


register(OpInfo("dropout1d", ("UniformReal", "Less", "Mul"), kind="random", dtypes=(F32, F64),
                draw=_draw_dropout1d, check=_check_dropout1d,
                notes="channels kept with probability 1 − p and scaled by 1/(1 − p)"))


def _np_channel_shuffle(x, groups):
    n, c = x.shape[:2]
    return x.reshape((n, groups, c // groups) + x.shape[2:]).swapaxes(1, 2).reshape(x.shape)


register(OpInfo("channel_shuffle", ("Reshape", "Transpose"), ops.channel_shuffle, _np_channel_shuffle,
                lambda dtype, rng: iter([Sample((arr(rng, (2, 6, 2, 3), dtype), 3)),
                                         Sample((arr(rng, (1, 4, 5), dtype), 2), desc="3-D"),
                                         Sample((NC(arr(rng, (2, 4, 3, 2), dtype), "T"), 2), desc="view")]),
                FLOATS + (I32,), differentiable=True, ref_upcast=False))


def _np_bidense(x1, x2, w, b=None):
    y = np.einsum("...i,oij,...j->...o", x1, w, x2)
    return y if b is None else y + b


register(OpInfo("bidense", ("BatchMatMul", "Mul", "ReduceSum", "Transpose"), ops.bidense, _np_bidense,
                lambda dtype, rng: iter([
                    Sample((arr(rng, (4, 3), dtype), arr(rng, (4, 2), dtype), arr(rng, (5, 3, 2), dtype),
                            arr(rng, (5,), dtype))),
                    Sample((arr(rng, (2, 3, 3), dtype), arr(rng, (2, 3, 4), dtype), arr(rng, (2, 3, 4), dtype)),
                           desc="batched, no bias"),
                    Sample((arr(rng, (3,), dtype), arr(rng, (4,), dtype), arr(rng, (2, 3, 4), dtype)), desc="1-D")]),
                (F32, F64), differentiable=True, out_dtype=_same_dtype, tol={F32: (1e-5, 1e-5)},
                special_skip="a bilinear form: BatchMatMul's / ReduceSum's special values"))


def _np_rms(x, gamma, epsilon=1e-6):
    axes = tuple(range(x.ndim - gamma.ndim, x.ndim))
    rstd = 1 / np.sqrt((x.astype(np.float64) ** 2).mean(axes, keepdims=True) + epsilon)
    return x * rstd * gamma, rstd


def _rms_samples(dtype, rng):
    yield Sample((arr(rng, (2, 3), dtype), arr(rng, (3,), dtype)))
    yield Sample((arr(rng, (2, 2, 3), dtype), arr(rng, (2, 3), dtype)), dict(epsilon=0.1), desc="2 normalized dims")


register(OpInfo("rms_norm", ("Square", "ReduceMean", "Rsqrt", "Mul"), ops.rms_norm, _np_rms, _rms_samples, (F32, F64),
                differentiable=True, out_dtype=_same_dtype, tol={F32: (1e-5, 1e-6)},
                special_skip="x·rsqrt(mean x²): inf/inf forms; Rsqrt's and ReduceMean's special values"))
register(OpInfo("add_rms_norm", ("Add", "Square", "ReduceMean", "Rsqrt", "Mul"), ops.add_rms_norm,
                lambda x1, x2, g, epsilon=1e-6: _np_rms(x1 + x2, g, epsilon) + (x1 + x2,),
                lambda dtype, rng: iter([Sample((arr(rng, (2, 3), dtype), arr(rng, (2, 3), dtype),
                                                 arr(rng, (3,), dtype)))]),
                (F32, F64), differentiable=True, out_dtype=_same_dtype, tol={F32: (1e-5, 1e-6)},
                special_skip="as rms_norm"))


# ---------------------------------------------------------------------------------------------- the functional losses
# ops.mse_loss ... ops.binary_cross_entropy_with_logits: the functions the loss Cells call (formulas from MindSpore
# 2.10's documentation of each function; MindSpore's defaults: smooth_l1_loss reduces with 'none', the others 'mean').

def _pair_samples(low=-2.0, high=2.0, reductions=("none", "mean", "sum")):
    def gen(dtype, rng):
        a = lambda s: arr(rng, s, dtype, low, high)
        for i, red in enumerate(reductions):
            yield Sample((a((3, 4)), a((3, 4))), dict(reduction=red), desc=red)
        yield Sample((NC(a((3, 4)), "T"), a((3, 4))), desc="view, default reduction")
        yield Sample((a((2, 3, 2)), a((2, 3, 2))), dict(reduction="sum"), desc="3-D")
    return gen


def _loss_row(name, kernels, op, ref, samples, dtypes=FLOATS, grad_args=(0, 1), **kw):
    kw.setdefault("tol", {F16: (4e-3, 4e-3)})
    register(OpInfo(name, kernels, op, ref, samples, dtypes, differentiable=True, grad_args=grad_args,
                    out_dtype=_same_dtype, **kw))


_loss_row("mse_loss", ("Sub", "Square", "ReduceMean"), lambda x, t, reduction="mean": ops.mse_loss(x, t, reduction),
          lambda x, t, reduction="mean": _np_red((x - t) ** 2, reduction), _pair_samples())
_loss_row("l1_loss", ("Sub", "Abs", "ReduceMean"), lambda x, t, reduction="mean": ops.l1_loss(x, t, reduction),
          lambda x, t, reduction="mean": _np_red(np.abs(x - t), reduction), _pair_samples())


def _np_smooth_l1(x, t, beta=1.0, reduction="none"):
    d = np.abs(x - t)
    return _np_red(np.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta), reduction)


def _smooth_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype, -2, 2)
    yield Sample((a((3, 4)), a((3, 4))), desc="default: beta 1, no reduction")
    yield Sample((a((3, 4)), a((3, 4))), dict(beta=0.5, reduction="mean"), desc="beta 0.5, mean")
    yield Sample((NC(a((3, 4)), "T"), a((3, 4))), dict(beta=2.0, reduction="sum"), desc="view, sum")


_loss_row("smooth_l1_loss", ("Sub", "Abs", "Less", "Square", "Mul", "Select"),
          lambda x, t, beta=1.0, reduction="none": ops.smooth_l1_loss(x, t, beta, reduction), _np_smooth_l1,
          _smooth_samples)


def _np_huber(x, t, reduction="mean", delta=1.0):
    d = np.abs(x - t)
    return _np_red(np.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta)), reduction)


def _huber_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype, -2, 2)
    yield Sample((a((3, 4)), a((3, 4))), desc="default: mean, delta 1")
    yield Sample((a((3, 4)), a((3, 4))), dict(reduction="none", delta=0.5), desc="delta 0.5")
    yield Sample((NC(a((3, 4)), "T"), a((3, 4))), dict(reduction="sum", delta=2.0), desc="view, sum")


_loss_row("huber_loss", ("Sub", "Abs", "Less", "Square", "Mul", "Select", "ReduceMean"),
          lambda x, t, reduction="mean", delta=1.0: ops.huber_loss(x, t, reduction, delta), _np_huber, _huber_samples)


def _sign_samples(target_dtype=None):
    """(x, y): x random, y in {-1, 1} (of x's dtype, or target_dtype)."""
    def gen(dtype, rng):
        a = lambda s: arr(rng, s, dtype, -2, 2)
        y = lambda s: rng.choice([-1, 1], s).astype(target_dtype or dtype)
        yield Sample((a((3, 4)), y((3, 4))), dict(reduction="none"), desc="none")
        yield Sample((a((3, 4)), y((3, 4))), desc="default mean")
        yield Sample((NC(a((3, 4)), "T"), y((3, 4))), dict(reduction="sum"), desc="view, sum")
    return gen


_loss_row("soft_margin_loss", ("Mul", "Neg", "Exp", "Log1p", "ReduceMean"),
          lambda x, y, reduction="mean": ops.soft_margin_loss(x, y, reduction),
          lambda x, y, reduction="mean": _np_red(np.logaddexp(0.0, -y * x), reduction), _sign_samples(),
          grad_args=(0,))


def _np_hinge_embedding(x, y, margin=1.0, reduction="mean"):
    """MindSpore 2.10 selects by the target's sign (x where y > 0, the hinge where y < 0, 0 where y == 0)."""
    return _np_red(np.where(y > 0, x, np.where(y < 0, np.maximum(margin - x, 0.0), 0.0)), reduction)


_loss_row("hinge_embedding_loss", ("Sub", "ReLU", "Select", "ReduceMean"),
          lambda x, y, margin=1.0, reduction="mean": ops.hinge_embedding_loss(x, y, margin, reduction),
          _np_hinge_embedding, _sign_samples(), grad_args=(0,), special_args=(0,))


def _np_margin_ranking(x1, x2, y, margin=0.0, reduction="mean"):
    return _np_red(np.maximum(-y * (x1 - x2) + margin, 0.0), reduction)


def _margin_ranking_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype, -2, 2)
    y = lambda s: rng.choice([-1, 1], s).astype(dtype)
    yield Sample((a((3, 4)), a((3, 4)), y((3, 4))), dict(margin=0.0, reduction="none"), desc="none")
    yield Sample((a((6,)), a((6,)), y((6,))), dict(margin=0.5), desc="margin 0.5, mean")
    yield Sample((NC(a((3, 4)), "T"), a((3, 4)), y((3, 4))), dict(margin=-0.2, reduction="sum"), desc="view, sum")


_loss_row("margin_ranking_loss", ("Sub", "Mul", "Add", "ReLU", "ReduceMean"),
          lambda x1, x2, y, margin=0.0, reduction="mean": ops.margin_ranking_loss(x1, x2, y, margin, reduction),
          _np_margin_ranking, _margin_ranking_samples)


def _np_kl_div(logits, labels, reduction="mean"):
    """MindSpore 2.10's kernel: a term is 0 where labels <= 0 or where it is NaN (a NaN label or logit)."""
    with np.errstate(invalid="ignore"):
        loss = np.where(labels > 0, labels * (np.log(np.where(labels > 0, labels, 1.0)) - logits), 0.0)
    loss = np.where(np.isnan(loss), 0.0, loss)
    if reduction == "batchmean":
        return loss.sum() / logits.shape[0]
    return _np_red(loss, reduction)


def _kl_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype, -2, 0)
    p = lambda s: arr(rng, s, dtype, 0.05, 1)
    yield Sample((a((3, 4)), p((3, 4))), desc="default mean")
    yield Sample((a((3, 4)), p((3, 4))), dict(reduction="batchmean"), desc="batchmean")
    yield Sample((a((3, 4)), np.where(np.arange(12).reshape(3, 4) % 3 == 0, 0, p((3, 4))).astype(dtype)),
                 dict(reduction="sum"), desc="zero targets (their terms are 0)")
    yield Sample((a((2, 5)), arr(rng, (2, 5), dtype, -1, 1)), dict(reduction="none"),
                 desc="negative targets (their terms are 0)")


_loss_row("kl_div", ("Log", "Sub", "Mul", "Select", "ReduceMean"),
          lambda x, t, reduction="mean": ops.kl_div(x, t, reduction), _np_kl_div,
          _kl_samples, grad_args=(0,), special_args=(0,),
          notes="MindSpore 2.10: target·(log target − logits), a 0 term where target is 0; 'batchmean' divides the "
                "sum by the batch size")


def _np_nll(x, t, weight=None, ignore_index=-100, reduction="mean"):
    n, c = x.shape[0], x.shape[1]
    w = np.ones(c, x.dtype) if weight is None else weight
    keep = t != ignore_index
    safe = np.where(keep, t, 0)
    picked = np.take_along_axis(x, safe.reshape((n, 1) + safe.shape[1:]), 1)[:, 0]
    wt = np.where(keep, w[safe], 0.0)
    loss = -wt * picked
    if reduction == "mean":
        return loss.sum() / wt.sum()
    return _np_red(loss, reduction)


def _nll_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype, -3, 0)
    t = lambda n, c: rng.integers(0, c, n).astype(np.int32)
    w = arr(rng, (4,), dtype, 0.5, 2)
    yield Sample((a((5, 4)), t(5, 4)), desc="default mean")
    yield Sample((a((5, 4)), t(5, 4)), dict(weight=w, reduction="sum"), desc="class weights, sum")
    tt = t(6, 4)
    tt[[1, 4]] = 2
    yield Sample((a((6, 4)), tt), dict(weight=w, ignore_index=2), desc="ignore_index, weighted mean")
    yield Sample((a((3, 4, 2)), rng.integers(0, 4, (3, 2)).astype(np.int32)), dict(reduction="none"),
                 desc="(N, C, d) input")
    t6 = t(6, 4).astype(np.int64)
    t6[[0, 3]] = -100
    yield Sample((a((6, 4)), t6), dict(weight=w, reduction="none"), desc="int64, default ignore_index -100 present")
    yield Sample((a((6, 4)), t6), dict(reduction="sum"), desc="-100 present, sum")
    yield Sample((a((2, 4, 3, 2)), rng.integers(0, 4, (2, 3, 2)).astype(np.int64)), dict(weight=w),
                 desc="(N, C, d1, d2) input, weighted mean")


_loss_row("nll_loss", ("NLLLoss", "NLLLossGrad"),
          lambda x, t, weight=None, ignore_index=-100, reduction="mean":
              ops.nll_loss(x, Tensor(t), None if weight is None else Tensor(weight), ignore_index, reduction),
          _np_nll, _nll_samples, dtypes=(F32, F64), grad_args=(0,), special_args=(0,),
          special_skip="one NaN/inf picked or not depending on the drawn targets: covered by the forward samples")


def _nll_loss_grad(x, dy, target, weight=None, ignore_index=-100, reduction="mean"):
    """The gradient of nll_loss w.r.t. x with cotangent dy: NLLLossGrad(dy) (linear in dy; its own gradient w.r.t. dy
    is NLLLoss of the incoming gradient)."""
    w = None if weight is None else Tensor(weight)
    return kiln.grad(lambda a: ops.sum(ops.mul(ops.nll_loss(a, Tensor(target), w, ignore_index, reduction), dy)))(x)


def _np_nll_loss_grad(x, dy, target, weight=None, ignore_index=-100, reduction="mean"):
    n, c = x.shape[0], x.shape[1]
    w = np.ones(c, x.dtype) if weight is None else weight
    keep = target != ignore_index
    safe = np.where(keep, target, 0)
    wt = np.where(keep, w[safe], 0.0)
    g = -wt * (dy if reduction == "none" else dy / (wt.sum() if reduction == "mean" else 1.0))
    out = np.zeros(x.shape, np.float64)
    onehot = np.arange(c).reshape((1, c) + (1,) * (x.ndim - 2)) == safe.reshape((n, 1) + safe.shape[1:])
    out += np.where(onehot, np.expand_dims(g, 1), 0.0)
    return out.astype(x.dtype)


def _nll_loss_grad_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype, -3, 0)
    w = arr(rng, (4,), dtype, 0.5, 2)
    t = np.array([0, 3, 2, 2, 1], np.int32)
    yield Sample((a((5, 4)), arr(rng, (5,), dtype)), dict(target=t, weight=w, ignore_index=2, reduction="none"),
                 desc="none, weights, ignore_index")
    yield Sample((a((5, 4)), arr(rng, (), dtype)), dict(target=t, weight=w), desc="weighted mean")
    yield Sample((a((3, 4, 2)), arr(rng, (), dtype)), dict(target=rng.integers(0, 4, (3, 2)), reduction="sum"),
                 desc="(N, C, d), sum")


register(OpInfo("nll_loss_grad", ("NLLLossGrad", "NLLLoss"), _nll_loss_grad, _np_nll_loss_grad,
                _nll_loss_grad_samples, (F32, F64), differentiable=True, grad_args=(1,),
                notes="the gradient of nll_loss; differentiating it w.r.t. the cotangent checks NLLLossGrad's own "
                      "bprop (NLLLoss) — a gradient of a gradient"))


def _np_cross_entropy(x, t, weight=None, ignore_index=-100, reduction="mean"):
    logp = scipy.special.log_softmax(x, axis=1)
    if t.dtype.kind == "f":  # class probabilities
        w = np.ones(x.shape[1], x.dtype) if weight is None else weight
        loss = -(logp * t * w.reshape((1, -1) + (1,) * (x.ndim - 2))).sum(1)
        return _np_red(loss, reduction)
    return _np_nll(logp, t, weight, ignore_index, reduction)


def _ce_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype, -2, 2)
    yield Sample((a((5, 4)), rng.integers(0, 4, 5).astype(np.int32)), desc="class indices, mean")
    w = arr(rng, (4,), dtype, 0.5, 2)
    tt = rng.integers(0, 4, 6).astype(np.int32)
    tt[0] = 1
    yield Sample((a((6, 4)), tt), dict(weight=w, ignore_index=1), desc="weights, ignore_index")
    prob = scipy.special.softmax(rng.standard_normal((3, 4)), axis=1).astype(dtype)
    yield Sample((a((3, 4)), prob), dict(reduction="sum"), desc="class probabilities, sum")
    yield Sample((a((3, 4)), prob), desc="class probabilities, mean")


_loss_row("cross_entropy", ("LogSoftmax", "NLLLoss", "NLLLossGrad"),
          lambda x, t, weight=None, ignore_index=-100, reduction="mean":
              ops.cross_entropy(x, Tensor(t), None if weight is None else Tensor(weight), ignore_index, reduction),
          _np_cross_entropy, _ce_samples, dtypes=(F32, F64), grad_args=(0,), special_args=(0,),
          special_skip="a softmax over the row: ±inf logits give NaN in one association, not the other")


def _np_bce(x, y, weight=None, reduction="mean"):
    loss = -(y * np.log(x) + (1 - y) * np.log(1 - x))
    return _np_red(loss if weight is None else weight * loss, reduction)


def _bce_samples(dtype, rng):
    p = lambda s: arr(rng, s, dtype, 0.05, 0.95)
    yield Sample((p((3, 4)), p((3, 4))), desc="default mean")
    yield Sample((p((3, 4)), p((3, 4)), arr(rng, (3, 4), dtype, 0.5, 2)), dict(reduction="none"),
                 desc="weight, none")
    yield Sample((NC(p((3, 4)), "T"), (rng.random((3, 4)) < 0.5).astype(dtype)), dict(reduction="sum"),
                 desc="view, hard labels, sum")


_loss_row("binary_cross_entropy", ("Log", "Mul", "Sub", "Add", "Neg", "ReduceMean"),
          lambda x, y, weight=None, reduction="mean": ops.binary_cross_entropy(x, y, weight, reduction), _np_bce,
          _bce_samples, grad_args=(0, 1), special_args=(0, 1), special_skip="log of a probability: inputs outside (0, 1) are outside the domain")


def _np_bce_logits(x, y, weight=None, pos_weight=None, reduction="mean"):
    """−(pw·y·log σ(x) + (1 − y)·log(1 − σ(x))) written as MindSpore 2.10's kernel evaluates it,
    (1 − y)·x + (1 + (pw − 1)·y)·(log1p(exp(−|x|)) + max(−x, 0)): x = −inf gives −inf + inf = NaN there."""
    pw = 1.0 if pos_weight is None else pos_weight
    with np.errstate(invalid="ignore", over="ignore"):
        loss = (1 - y) * x + (1 + (pw - 1) * y) * (np.log1p(np.exp(-np.abs(x))) + np.maximum(-x, 0.0))
    return _np_red(loss if weight is None else weight * loss, reduction)


def _bcel_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype, -3, 3)
    p = lambda s: arr(rng, s, dtype, 0.0, 1.0)
    yield Sample((a((3, 4)), p((3, 4))), desc="default mean")
    yield Sample((a((3, 4)), p((3, 4)), arr(rng, (3, 4), dtype, 0.5, 2), arr(rng, (4,), dtype, 0.5, 3)),
                 dict(reduction="none"), desc="weight and pos_weight (broadcast), none")
    yield Sample((NC(a((3, 4)), "T"), p((3, 4))), dict(reduction="sum"), desc="view, sum")


_loss_row("binary_cross_entropy_with_logits", ("Mul", "Sub", "Add", "Neg", "Log1p", "Exp", "ReLU", "ReduceMean"),
          lambda x, y, weight=None, pos_weight=None, reduction="mean":
              ops.binary_cross_entropy_with_logits(x, y, weight, pos_weight, reduction),
          _np_bce_logits, _bcel_samples, special_args=(0,))
