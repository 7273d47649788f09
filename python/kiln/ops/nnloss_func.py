"""Losses, similarity and lookup ops of MindSpore 2.10's `ops`: cosine_similarity, cosine_embedding_loss,
gaussian_nll_loss, multi_margin_loss, multilabel_margin_loss, multilabel_soft_margin_loss, triplet_margin_loss,
ctc_loss, dense (and the Dense primitive), embedding — compositions of Kiln's kernels (gradients from the building
blocks; Graph mode traces them). The formulas are in each docstring; semantics pinned against MindSpore 2.10 on CPU
where its CPU kernels exist, else its documentation and PyTorch's definitions (which MindSpore's follow).

ctc_loss [Graves et al. 2006] is one CTCLossV2 op (src/ops/loss.cpp): the forward (α) recursion in log space and
double over the extended label sequence (blank, l₁, blank, l₂, …, blank), one step per frame:
    α_t(s) = logsumexp(α_{t−1}(s), α_{t−1}(s − 1), α_{t−1}(s − 2) if l'_s ≠ blank and l'_s ≠ l'_{s−2}) + log y_t(l'_s);
impossible alignments give loss +inf with a zero gradient. Its gradient (CTCLossV2Grad, the β recursion) is the exact
derivative of the loss w.r.t. log_probs (−γ_t(c), the posterior occupation), which equals MindSpore's / PyTorch's
CTC gradient once taken through a log_softmax (those kernels return exp(log_probs) − γ, the gradient for normalized
log_probs; the two differ only for direct use of unnormalized log_probs). _lse3 is the log-sum-exp that the
ops.CTCLoss primitive's composition (ctc_prim.py) uses.
"""
import math
import numbers

from .._loader import _core
from .._args import _got, int_arg
from ..common import dtype as mstype
from ..common.tensor import Tensor
from ._opdef import defop

__all__ = ["cosine_similarity", "cosine_embedding_loss", "gaussian_nll_loss", "multi_margin_loss",
           "multilabel_margin_loss", "multilabel_soft_margin_loss", "triplet_margin_loss", "ctc_loss", "dense",
           "embedding"]

_FLOATS = (mstype.float16, mstype.bfloat16, mstype.float32, mstype.float64)
_INTS = (mstype.int32, mstype.int64)


def _tensor(x, op, name):
    if not isinstance(x, Tensor):
        raise TypeError(f"For '{op}', the '{name}' must be a Tensor, but got {type(x).__name__}.")
    return x


def _float(x, op, name):
    _tensor(x, op, name)
    if x.dtype not in _FLOATS:
        raise TypeError(f"For '{op}', the '{name}' must be a float Tensor, but got {x.dtype}.")
    return x


def _int_t(x, op, name):
    _tensor(x, op, name)
    if x.dtype not in _INTS:
        raise TypeError(f"For '{op}', the '{name}' must be an int32 or int64 Tensor, but got {x.dtype}.")
    return x


def _real(v, op, name):
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise TypeError(f"For '{op}', the '{name}' must be a float, but got {_got(v)}.")
    return float(v)


def _check_reduction(reduction, op):
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"For '{op}', the 'reduction' must be in ['mean', 'sum', 'none'], but got {reduction!r}.")


def _reduce(loss, reduction, op):
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"For '{op}', the 'reduction' must be in ['mean', 'sum', 'none'], but got {reduction!r}.")
    if reduction == "none":
        return loss
    return _core.mean(loss, None, False) if reduction == "mean" else _core.sum(loss, None, False)


def _same_dtype(y, x):
    return y if y.dtype == x.dtype else _core.cast(y, x.dtype)


def _safe_sqrt(s, floor):
    """sqrt(max(s, floor)) with no NaN gradient where s ≤ floor (the maximum routes it to the constant)."""
    return _core.sqrt(_core.maximum(s, floor))


# ---------------------------------------------------------------------------------------------- similarity

@defop()
def cosine_similarity(x1, x2, dim=1, eps=1e-08):
    """MindSpore's ops.cosine_similarity(x1, x2, dim=1, eps=1e-08): Σ x1·x2 / max(‖x1‖·‖x2‖, eps) along `dim`
    (x1 and x2 broadcast; the result drops `dim`). Float Tensors of one dtype; eps a positive float.

    Raises TypeError for non-float Tensors / mismatched dtypes / a non-number eps, ValueError for shapes that do not
    broadcast or a dim out of range."""
    op = "cosine_similarity"
    a, b = _float(x1, op, "x1"), _float(x2, op, "x2")
    if a.dtype != b.dtype:
        raise TypeError(f"For '{op}', 'x1' and 'x2' must have one dtype, but got {a.dtype} and {b.dtype}.")
    eps = _real(eps, op, "eps")
    prod = _core.mul(a, b)  # broadcasts (ValueError from Mul for incompatible shapes)
    dim = int_arg(op, "dim", dim)
    if not -prod.ndim <= dim < prod.ndim:
        raise ValueError(f"For '{op}', the 'dim' must be in [{-prod.ndim}, {prod.ndim}) for the broadcast shape "
                         f"{tuple(prod.shape)}, but got {dim}.")
    w12 = _core.sum(prod, [dim], False)
    w1 = _core.sum(_core.mul(_core.square(a), _core.ones_like(b)), [dim], False)
    w2 = _core.sum(_core.mul(_core.square(b), _core.ones_like(a)), [dim], False)
    return _core.div(w12, _safe_sqrt(_core.mul(w1, w2), eps * eps))


@defop(mint="nn.functional.cosine_embedding_loss")
def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction="mean"):
    """MindSpore's ops.cosine_embedding_loss(input1, input2, target, margin=0.0, reduction='mean'): with
    cos = Σ₁ x1·x2 / (‖x1‖₁·‖x2‖₁) along axis 1 (no eps: a zero vector gives NaN, as MindSpore),
    loss = 1 − cos where target == 1, max(0, cos − margin) where target == −1, 0 elsewhere; reduced.

    input1, input2: float Tensors of one shape (N, D, ...); target: (N, ...) (input1's shape without axis 1);
    margin in [−1, 1]. Raises TypeError / ValueError for bad types, shapes, margin or reduction."""
    op = "cosine_embedding_loss"
    a, b = _float(input1, op, "input1"), _float(input2, op, "input2")
    y = _tensor(target, op, "target")
    if tuple(a.shape) != tuple(b.shape) or a.ndim < 2:
        raise ValueError(f"For '{op}', 'input1' and 'input2' must have one shape of rank >= 2, but got "
                         f"{tuple(a.shape)} and {tuple(b.shape)}.")
    if tuple(y.shape) != tuple(a.shape[:1] + a.shape[2:]):
        raise ValueError(f"For '{op}', the 'target' must have shape {tuple(a.shape[:1] + a.shape[2:])} (input1's "
                         f"without axis 1), but got {tuple(y.shape)}.")
    margin = _real(margin, op, "margin")
    if not -1.0 <= margin <= 1.0:
        raise ValueError(f"For '{op}', the 'margin' must be in [-1, 1], but got {margin}.")
    cos = _core.div(_core.sum(_core.mul(a, b), [1], False),
                    _core.mul(_core.sqrt(_core.sum(_core.square(a), [1], False)),
                              _core.sqrt(_core.sum(_core.square(b), [1], False))))
    zeros = _core.zeros_like(cos)
    pos = _core.select(_core.equal(y, 1), _core.sub(1.0, cos), zeros)
    neg = _core.select(_core.equal(y, -1), _core.relu(_core.sub(cos, margin)), zeros)
    return _reduce(_core.add(pos, neg), reduction, op)


# ---------------------------------------------------------------------------------------------- losses

@defop()
def gaussian_nll_loss(x, target, var, full=False, eps=1e-06, reduction="mean"):
    """MindSpore's ops.gaussian_nll_loss(x, target, var, full=False, eps=1e-06, reduction='mean'):
        loss = ½·(log(max(var, eps)) + (x − target)²/max(var, eps)) (+ ½·log 2π with full), reduced.
    var has x's shape, or x's shape without the last dim (then unsqueezed), or a last dim of 1 (broadcast);
    values below eps (including negative ones) count as eps, as MindSpore (gradient 0 for var there).

    Raises TypeError for non-float Tensors or a non-bool full, ValueError for a non-positive eps, shapes that do
    not fit or a bad reduction."""
    op = "gaussian_nll_loss"
    x, t, v = _float(x, op, "x"), _float(target, op, "target"), _float(var, op, "var")
    if not isinstance(full, bool):
        raise TypeError(f"For '{op}', 'full' must be a bool, but got {_got(full)}.")
    if isinstance(eps, bool) or not isinstance(eps, numbers.Real) or eps <= 0:
        raise ValueError(f"For '{op}', 'eps' must be a positive float, but got {eps!r}.")
    if tuple(v.shape) != tuple(x.shape):
        if x.ndim and tuple(v.shape) == tuple(x.shape[:-1]):
            v = _core.expand_dims(v, -1)
        elif not (v.ndim == x.ndim and x.ndim and tuple(v.shape[:-1]) == tuple(x.shape[:-1]) and v.shape[-1] == 1):
            raise ValueError(f"For '{op}', the 'var' must have x's shape {tuple(x.shape)}, that shape without its "
                             f"last dim, or a last dim of 1, but got {tuple(v.shape)}.")
    m = _core.maximum(v, float(eps))
    loss = _core.mul(_core.add(_core.log(m), _core.div(_core.square(_core.sub(x, t)), m)), 0.5)
    if full:
        loss = _core.add(loss, 0.5 * math.log(2 * math.pi))
    return _reduce(loss, reduction, op)


@defop()
def multi_margin_loss(input, target, p=1, margin=1, weight=None, reduction="mean"):
    """MindSpore's ops.multi_margin_loss(input, target, p=1, margin=1, weight=None, reduction='mean'): the
    multi-class hinge loss of input (N, C) (or (C,)) against class indices target (N,):
        loss_n = Σ_{i ≠ y_n} w[y_n]·max(0, margin − x[n, y_n] + x[n, i])ᵖ / C,   p ∈ {1, 2}, w = weight or ones.
    Raises TypeError for bad types (target int32/int64), ValueError for p ∉ {1, 2}, shapes, a target outside
    [0, C) (checked in both modes) or a bad reduction."""
    op = "multi_margin_loss"
    x = _float(input, op, "input")
    if x.ndim not in (1, 2):
        raise ValueError(f"For '{op}', the 'input' must be 1-D or 2-D, but got shape {tuple(x.shape)}.")
    if isinstance(p, bool) or p not in (1, 2):
        raise ValueError(f"For '{op}', the 'p' must be 1 or 2, but got {p!r}.")
    margin = _real(margin, op, "margin")
    n, c = (x.shape[0], x.shape[1]) if x.ndim == 2 else (1, x.shape[0])
    t = _int_t(target, op, "target")
    if t.size != n or t.ndim > 1:
        raise ValueError(f"For '{op}', the 'target' must have shape ({n},), but got {tuple(t.shape)}.")
    if weight is not None:
        weight = _float(weight, op, "weight")
        if tuple(weight.shape) != (c,):
            raise ValueError(f"For '{op}', the 'weight' must have shape ({c},), but got {tuple(weight.shape)}.")
        weight = _same_dtype(weight, x)
    _check_reduction(reduction, op)
    # one MultiMarginLoss op (src/ops/loss.cpp): checks the target values when it runs (both modes)
    return _core.multi_margin_loss(x, t, weight, int(p), margin, reduction, op)


@defop(primitive="MultilabelMarginLoss", prim_attrs={"reduction": ("reduction", "mean")})
def multilabel_margin_loss(input, target, reduction="mean"):
    """MindSpore's ops.multilabel_margin_loss(input, target, reduction='mean'): the multi-label hinge loss of input
    (N, C) (or (C,)) whose target row holds class indices, ended by the first −1 (the rest ignored):
        loss_n = Σ_{j ∈ J_n} Σ_{i ∉ J_n} max(0, 1 − (x[n, j] − x[n, i])) / C,  J_n the listed classes.
    target: int32/int64 of input's shape, values in [−1, C). Raises TypeError / ValueError for bad types, shapes,
    target values (checked in both modes) or reduction."""
    op = "multilabel_margin_loss"
    x = _float(input, op, "input")
    if x.ndim not in (1, 2):
        raise ValueError(f"For '{op}', the 'input' must be 1-D or 2-D, but got shape {tuple(x.shape)}.")
    t = _int_t(target, op, "target")
    if tuple(t.shape) != tuple(x.shape):
        raise ValueError(f"For '{op}', the 'target' must have the input's shape {tuple(x.shape)}, but got "
                         f"{tuple(t.shape)}.")
    _check_reduction(reduction, op)
    # one MultilabelMarginLoss op (src/ops/loss.cpp): checks the target values when it runs (both modes)
    return _core.multilabel_margin_loss(x, t, reduction, op)[0]


@defop()
def multilabel_soft_margin_loss(input, target, weight=None, reduction="mean"):
    """MindSpore's ops.multilabel_soft_margin_loss(input, target, weight=None, reduction='mean'):
        loss_n = −Σ_c w_c·(y·log σ(x) + (1 − y)·log σ(−x)) / C = Σ_c w_c·(y·softplus(−x) + (1 − y)·softplus(x)) / C
    over the last dim of input (N, C) (softplus computed stably), target of input's shape (0/1 values or
    probabilities), weight (C,) or None. Raises TypeError / ValueError for bad types, shapes or reduction."""
    op = "multilabel_soft_margin_loss"
    x = _float(input, op, "input")
    y = _tensor(target, op, "target")
    if tuple(y.shape) != tuple(x.shape) or x.ndim < 1:
        raise ValueError(f"For '{op}', the 'target' must have the input's shape {tuple(x.shape)}, but got "
                         f"{tuple(y.shape)}.")
    y = _same_dtype(y, x)
    from .activation_func import _softplus
    loss = _core.add(_core.mul(y, _softplus(_core.neg(x))), _core.mul(_core.sub(1.0, y), _softplus(x)))
    if weight is not None:
        w = _float(weight, op, "weight")
        loss = _core.mul(loss, _same_dtype(w, x))
    loss = _core.div(_core.sum(loss, [x.ndim - 1], False), float(x.shape[-1]))
    return _reduce(loss, reduction, op)


def _pnorm_dist(a, b, p, eps):
    d = _core.add(_core.sub(a, b), eps)
    if p == 2:
        s = _core.sum(_core.square(d), [-1], False)
        return _core.sqrt(s)
    if p == 1:
        return _core.sum(_core.abs(d), [-1], False)
    return _core.pow(_core.sum(_core.pow(_core.abs(d), float(p)), [-1], False), 1.0 / p)


@defop()
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-06, swap=False, reduction="mean"):
    """MindSpore's ops.triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-06, swap=False,
    reduction='mean') [Balntas et al. 2016]: with d(a, b) = ‖a − b + eps‖_p over the last dim (PyTorch's
    pairwise_distance), loss = max(d(a, p) − d(a, n) + margin, 0); swap uses min(d(a, n), d(p, n)). Float Tensors of
    one shape (N, D) (or (D,)); margin a float or a 0-d Tensor; p an int ≥ 1.
    Raises TypeError / ValueError for bad types, shapes, p or reduction. (MindSpore's CPU backend has no kernel for
    it; the formula is its documented one.)"""
    op = "triplet_margin_loss"
    a, pp, nn_ = _float(anchor, op, "anchor"), _float(positive, op, "positive"), _float(negative, op, "negative")
    if not tuple(a.shape) == tuple(pp.shape) == tuple(nn_.shape) or a.ndim not in (1, 2):
        raise ValueError(f"For '{op}', anchor, positive and negative must have one 1-D or 2-D shape, but got "
                         f"{tuple(a.shape)}, {tuple(pp.shape)} and {tuple(nn_.shape)}.")
    if isinstance(p, bool) or not isinstance(p, numbers.Integral) or p < 1:
        raise ValueError(f"For '{op}', the 'p' must be an int >= 1, but got {p!r}.")
    eps = _real(eps, op, "eps")
    if not isinstance(swap, bool):
        raise TypeError(f"For '{op}', the 'swap' must be a bool, but got {_got(swap)}.")
    if isinstance(margin, Tensor):
        if margin.size != 1:
            raise ValueError(f"For '{op}', a Tensor 'margin' must hold one value, but got shape {tuple(margin.shape)}.")
        margin = _same_dtype(_core.reshape(margin, []), a)
    else:
        margin = _real(margin, op, "margin")
    d_ap = _pnorm_dist(a, pp, int(p), eps)
    d_an = _pnorm_dist(a, nn_, int(p), eps)
    if swap:
        d_an = _core.minimum(d_an, _pnorm_dist(pp, nn_, int(p), eps))
    return _reduce(_core.relu(_core.add(_core.sub(d_ap, d_an), margin)), reduction, op)


# ---------------------------------------------------------------------------------------------- CTC

def _lse3(a, b, c):
    """log(eᵃ + eᵇ + eᶜ) element-wise: −inf (gradient 0) where all three are −inf (module docstring)."""
    m = _core.stop_gradient(_core.maximum(a, _core.maximum(b, c)))
    none = _core.equal(m, float("-inf"))
    ms = _core.select(none, _core.zeros_like(m), m)
    s = _core.add(_core.add(_core.exp(_core.sub(a, ms)), _core.exp(_core.sub(b, ms))), _core.exp(_core.sub(c, ms)))
    s_safe = _core.select(none, _core.ones_like(s), s)
    return _core.select(none, m, _core.add(ms, _core.log(s_safe)))


@defop()
def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """MindSpore's ops.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction='mean',
    zero_infinity=False) -> (loss, log_alpha): the Connectionist Temporal Classification loss [Graves et al. 2006].

    log_probs: (T, N, C) float32/float64 log-probabilities (log_softmax over C); targets: (N, S) int32/int64 labels
    in [0, C) (the first target_lengths[n] of row n are used); input_lengths, target_lengths: (N,) int32/int64 with
    1 ≤ input_lengths ≤ T and 0 ≤ target_lengths ≤ S. loss_n = −log Σ_{alignments} Π_t y_t — computed by the
    log-space forward recursion of the module docstring; +inf where no alignment fits (0, and a zero gradient, with
    zero_infinity). reduction 'none' → (N,); 'sum'; 'mean' → mean over n of loss_n / max(target_lengths[n], 1)
    (MindSpore's and PyTorch's). log_alpha: (N, T, 2S + 1), α_t(s) of the recursion, −inf for t ≥ input_lengths[n]
    and s > 2·target_lengths[n] (as MindSpore's CTCLossV2). Gradient: see the module docstring.

    Raises TypeError for bad dtypes/types, ValueError for shapes, blank ∉ [0, C), a bad reduction or lengths/labels
    out of range (checked in both modes)."""
    op = "ctc_loss"
    lp = _float(log_probs, op, "log_probs")
    tg = _int_t(targets, op, "targets")
    il = _int_t(input_lengths, op, "input_lengths")
    tl = _int_t(target_lengths, op, "target_lengths")
    if lp.ndim != 3:
        raise ValueError(f"For '{op}', the 'log_probs' must be 3-D (T, N, C), but got shape {tuple(lp.shape)}.")
    t_max, n, c = lp.shape
    if tg.ndim != 2 or tg.shape[0] != n:
        raise ValueError(f"For '{op}', the 'targets' must be 2-D ({n}, S), but got shape {tuple(tg.shape)}.")
    if tuple(il.shape) != (n,) or tuple(tl.shape) != (n,):
        raise ValueError(f"For '{op}', 'input_lengths' and 'target_lengths' must have shape ({n},), but got "
                         f"{tuple(il.shape)} and {tuple(tl.shape)}.")
    blank = int_arg(op, "blank", blank)
    if not 0 <= blank < c:
        raise ValueError(f"For '{op}', the 'blank' must be in [0, {c}), but got {blank}.")
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"For '{op}', the 'reduction' must be in ['mean', 'sum', 'none'], but got {reduction!r}.")
    if not isinstance(zero_infinity, bool):
        raise TypeError(f"For '{op}', the 'zero_infinity' must be a bool, but got {_got(zero_infinity)}.")
    # one CTCLossV2 op (src/ops/loss.cpp): checks lengths and labels when it runs (ValueError, both modes), the
    # alpha recursion and the reduction in double; its gradient runs the beta recursion in CTCLossV2Grad
    loss, log_alpha = _core.ctc_loss(lp, tg, il, tl, blank, reduction, zero_infinity, op)
    return loss, log_alpha


# ---------------------------------------------------------------------------------------------- dense / embedding

@defop(primitive="Dense")
def dense(input, weight, bias=None):
    """MindSpore's ops.dense(input, weight, bias=None): input @ weightᵀ + bias.

    input (*, in); weight (out, in) (or (in,): the result then drops the last dim); bias (out,) (or 0-d) or None.
    Int or float Tensors of one dtype. Raises TypeError for non-Tensors or mismatched dtypes, ValueError for
    shapes that do not fit."""
    op = "dense"
    x, w = _tensor(input, op, "input"), _tensor(weight, op, "weight")
    if x.dtype != w.dtype:
        raise TypeError(f"For '{op}', 'input' and 'weight' must have one dtype, but got {x.dtype} and {w.dtype}.")
    if w.ndim not in (1, 2) or x.ndim < 1 or x.shape[-1] != w.shape[-1]:
        raise ValueError(f"For '{op}', the 'weight' must be (out, in) or (in,) with in = input.shape[-1], but got "
                         f"input shape {tuple(x.shape)} and weight shape {tuple(w.shape)}.")
    y = _core.matmul(x, _core.transpose(w, [1, 0]) if w.ndim == 2 else w)
    if bias is not None:
        b = _tensor(bias, op, "bias")
        if b.dtype != x.dtype:
            raise TypeError(f"For '{op}', the 'bias' must have the input's dtype {x.dtype}, but got {b.dtype}.")
        out = w.shape[0] if w.ndim == 2 else 1
        if b.ndim > 1 or (b.ndim == 1 and b.shape[0] != out and not (w.ndim == 1 and b.shape[0] == 1)):
            raise ValueError(f"For '{op}', the 'bias' must have shape ({out},) or (), but got {tuple(b.shape)}.")
        if w.ndim == 1:
            b = _core.reshape(b, [])
        y = _core.add(y, b)
    return y


@defop(mint="nn.functional.embedding")
def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False):
    """MindSpore's ops.embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
    scale_grad_by_freq=False): the rows weight[input] (shape input.shape + (D,)) of the table weight (V, D).

    padding_idx (int in [−V, V) or None): that row gets no gradient. max_norm: rows referenced by input whose
    norm_type-norm exceeds max_norm are rescaled to norm max_norm/(norm + 1e-7)·norm IN PLACE in weight before the
    lookup (PyTorch's/MindSpore's renorm; no gradient through the rescale). scale_grad_by_freq: each looked-up row's
    gradient is divided by how often its index occurs in input. input: int32/int64 in [0, V) (checked in both
    modes). Raises TypeError / ValueError for bad types, shapes, indices or padding_idx."""
    op = "embedding"
    idx = _int_t(input, op, "input")
    w = _float(weight, op, "weight")
    if w.ndim != 2:
        raise ValueError(f"For '{op}', the 'weight' must be 2-D (V, D), but got shape {tuple(w.shape)}.")
    v = w.shape[0]
    if padding_idx is not None:
        padding_idx = int_arg(op, "padding_idx", padding_idx)
        if not -v <= padding_idx < v:
            raise ValueError(f"For '{op}', the 'padding_idx' must be in [{-v}, {v}), but got {padding_idx}.")
        padding_idx %= v
    if not isinstance(scale_grad_by_freq, bool):
        raise TypeError(f"For '{op}', the 'scale_grad_by_freq' must be a bool, but got {_got(scale_grad_by_freq)}.")
    flat = _core.reshape(_core.cast(idx, mstype.int64), [-1])
    if flat.size:
        flat = _core.check_range(flat, op, "input", 0.0, float(v), False, None)
    table = w
    if max_norm is not None:
        max_norm = _real(max_norm, op, "max_norm")
        p = _real(norm_type, op, "norm_type")
        ws = _core.stop_gradient(w)
        norms = _core.pow(_core.sum(_core.pow(_core.abs(ws), p), [1], True), 1.0 / p)
        used = _core.greater(_core.unsorted_segment_sum(_core.ones_like(flat), flat, v), 0)
        scale = _core.select(_core.logical_and(_core.expand_dims(used, 1), _core.greater(norms, max_norm)),
                             _core.div(max_norm, _core.add(norms, 1e-7)), _core.ones_like(norms))
        renormed = _core.mul(ws, scale)
        _core.assign(w, renormed)
        table = _core.add(renormed, _core.sub(w, ws))  # the renormed values, a plain lookup's gradient
    rows = _core.gather(table, flat, 0)  # (M, D)
    if padding_idx is not None or scale_grad_by_freq:
        g = _core.ones_like(_core.cast(flat, w.dtype))
        if scale_grad_by_freq:
            counts = _core.unsorted_segment_sum(_core.ones_like(flat), flat, v)
            g = _core.div(g, _core.cast(_core.gather(counts, flat, 0), w.dtype))
        if padding_idx is not None:
            g = _core.select(_core.equal(flat, padding_idx), _core.zeros_like(g), g)
        # forward: the rows themselves; gradient: scaled by g (0 for the padding row)
        rs = _core.stop_gradient(rows)
        rows = _core.add(rs, _core.mul(_core.sub(rows, rs), _core.expand_dims(g, 1)))
    return _core.reshape(rows, list(idx.shape) + [w.shape[1]])
