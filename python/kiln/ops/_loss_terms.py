"""The formulas of Kiln's losses, in one place for both surfaces: the functions of kiln.ops (ops.mse_loss,
ops.cross_entropy, ...) and the loss Cells of kiln.nn (nn.MSELoss, nn.CrossEntropyLoss, ...) call these, so `ops`
never imports `nn` (issue 23: no ops <-> nn cycle) and a functional loss costs its kernels, not a Cell.

Each `*_terms` function checks its inputs and returns the unreduced loss (the Cells pass it to their `get_loss`,
which subclasses may override, as in MindSpore); `reduce_loss` is LossBase.get_loss's reduction. `name` is the
surface that raises (MindSpore's Cell name: 'MSELoss', 'CrossEntropyLoss', ...). Formulas and conventions:
kiln/nn/loss/loss.py's module docstring (masked logits, xlogy, class-label checks in both modes).

Class-index labels outside [0, C) (other than `ignore_index`) raise ValueError through the NLLLoss kernel (nll and
cross_entropy's class-index path without label smoothing: src/ops/loss.cpp) or the CheckRange op (the other
class-index paths), eagerly in PyNative and at every run of a compiled function."""
from .._loader import _core
from ..common import dtype as mstype
from . import activation_func as _act

__all__ = []

_Tensor = _core.Tensor
_LOW = (mstype.float16, mstype.bfloat16)
REDUCTIONS = ("mean", "sum", "none")
_INDEX_DTYPES = (mstype.int32, mstype.int64)


# ---------------------------------------------------------------------------------------------- checks, reduction

def check_reduction(reduction, name, allowed=REDUCTIONS):
    """ValueError unless `reduction` is one of `allowed` (MindSpore's message)."""
    if reduction not in allowed:
        raise ValueError(f"For '{name}', the 'reduction' must be in {list(allowed)}, but got {reduction}.")
    return reduction


def check_is_tensor(arg, value, name):
    """TypeError unless `value` is a Tensor (None too: it would fail later on a missing attribute)."""
    if not isinstance(value, _Tensor):
        raise TypeError(f"For '{name}', the '{arg}' must be 'Tensor', but got {type(value).__name__}.")


def check_weight(weight, name, arg="weight"):
    """None, or `weight` after checking it is a float Tensor (TypeError otherwise)."""
    if weight is None:
        return None
    if not isinstance(weight, _Tensor):
        raise TypeError(f"For '{name}', the '{arg}' must be a Tensor or None, but got {type(weight).__name__}.")
    if not mstype.is_float(weight.dtype):
        raise TypeError(f"For '{name}', the '{arg}' must be a float Tensor, but got {weight.dtype}.")
    return weight


def check_ignore_index(ignore_index, name):
    """TypeError unless ignore_index is an int (bool refused)."""
    if isinstance(ignore_index, bool) or not isinstance(ignore_index, int):
        raise TypeError(f"For '{name}', the 'ignore_index' must be int, but got {type(ignore_index).__name__}.")
    return ignore_index


def check_cross_entropy_args(weight, ignore_index, label_smoothing, name):
    """MindSpore's checks of CrossEntropyLoss's arguments: TypeError for a non-int ignore_index, a non-float
    label_smoothing or a non-Tensor weight; ValueError for label_smoothing outside [0, 1] or a weight that is not a
    1-D float Tensor."""
    check_ignore_index(ignore_index, name)
    if isinstance(label_smoothing, bool) or not isinstance(label_smoothing, float):
        raise TypeError(f"For '{name}', the 'label_smoothing' must be float, but got "
                        f"{type(label_smoothing).__name__}.")
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"For '{name}', the 'label_smoothing' must be in range [0, 1], but got {label_smoothing}.")
    if weight is not None:
        if not isinstance(weight, _Tensor):
            raise TypeError(f"For '{name}', the 'weight' must be a Tensor or None, but got {type(weight).__name__}.")
        if weight.ndim != 1 or not mstype.is_float(weight.dtype):
            raise ValueError(f"For '{name}', the 'weight' must be a 1-D float Tensor, but got shape "
                             f"{tuple(weight.shape)} and dtype {weight.dtype}.")


def check_beta(beta, name):
    """SmoothL1Loss's beta: TypeError unless a float, ValueError unless > 0."""
    if isinstance(beta, bool) or not isinstance(beta, float):
        raise TypeError(f"For '{name}', the type of 'beta' should be 'float', but got {type(beta).__name__}.")
    if beta <= 0:
        raise ValueError(f"For '{name}', the 'beta' must be greater than 0, but got {beta}.")
    return beta


def check_delta(delta, name):
    """HuberLoss's delta: TypeError unless a float or int, ValueError unless > 0. Returns it as a float."""
    if isinstance(delta, bool) or not isinstance(delta, (int, float)):
        raise TypeError(f"For '{name}', the 'delta' must be float or int, but got {type(delta).__name__}.")
    if delta <= 0:
        raise ValueError(f"For '{name}', the 'delta' must be greater than 0, but got {delta}.")
    return float(delta)


def reduce_loss(x, reduction, weights=1.0):
    """x·weights reduced over all axes by `reduction` ('mean', 'sum': a 0-d tensor; 'none': x's shape), in x's
    dtype; float16/bfloat16 are reduced in float32 and cast back (MindSpore's LossBase.get_loss)."""
    dtype = x.dtype
    low = dtype in _LOW
    if low:
        x = _core.cast(x, mstype.float32)
    if not (isinstance(weights, (int, float)) and weights == 1.0):
        x = _core.mul(x, weights)
    if reduction != "none":
        x = _core.mean(x, None, False) if reduction == "mean" else _core.sum(x, None, False)
    if low:
        x = _core.cast(x, dtype)
    return x


def _two_tensors(logits, labels, name, same_shape=False):
    check_is_tensor("logits", logits, name)
    check_is_tensor("labels", labels, name)
    if same_shape and tuple(logits.shape) != tuple(labels.shape):
        raise ValueError(f"For '{name}', the 'logits' and 'labels' must have the same shape, but got "
                         f"{tuple(logits.shape)} and {tuple(labels.shape)}.")


# ---------------------------------------------------------------------------------------------- class labels

def check_class_labels(labels, n_classes, name, ignore_index=None):
    """`labels` after checking them: TypeError unless they have an integer dtype; ValueError for a label outside
    [0, n_classes) that is not `ignore_index`, raised by the CheckRange op — eagerly in PyNative, and at every run of
    a compiled function (naming the user's line), so both modes check the same values."""
    if mstype.is_float(labels.dtype) or labels.dtype == mstype.bool_:
        raise TypeError(f"For '{name}', class-index labels must be int32 or int64, but got {labels.dtype}.")
    if labels.size == 0:
        return labels
    return _core.check_range(labels, name, "label", 0.0, float(n_classes), False, ignore_index)


def one_hot_mask(labels, num_classes, axis, cache=None):
    """Bool one-hot of integer `labels` along `axis` (out-of-range labels give an all-False row), via equal against
    an arange of the classes. With a `cache` dict (a Cell's), the arange is kept — only when made eagerly: one made
    while compiling is a node of that trace and must not outlive it (it stays a foldable constant there)."""
    key = (num_classes, axis, labels.ndim)
    classes = None if cache is None else cache.get(key)
    if classes is None:
        classes = _core.arange(0.0, float(num_classes), 1.0, mstype.int64)
        shape = [1] * (labels.ndim + 1)
        shape[axis] = num_classes
        classes = _core.reshape(classes, shape)
        if cache is not None and not _core.tracing():
            cache[key] = classes
    lab = _core.expand_dims(labels, axis)
    if lab.dtype != mstype.int64:
        lab = _core.cast(lab, mstype.int64)
    return _core.equal(lab, classes)


def pick(mask, x):
    """x where `mask` (Bool), else 0: picks log-probabilities without 0·(−inf) = NaN; the gradient of x is 0 outside
    the mask."""
    return _core.select(mask, x, _core.zeros_like(x))


def xlogy_terms(p, logq):
    """p·logq with 0·logq = 0 where p == 0 (so a −inf logq under a zero target gives 0, not NaN)."""
    return _core.mul(p, pick(_core.not_equal(p, 0.0), logq))


# ---------------------------------------------------------------------------------------------- elementwise losses

def mse_terms(logits, labels, name="MSELoss"):
    """(logits − labels)², broadcasting."""
    if not (isinstance(logits, _Tensor) and isinstance(labels, _Tensor)):
        _two_tensors(logits, labels, name)
    return _core.square(_core.sub(logits, labels))


def l1_terms(logits, labels, name="L1Loss"):
    """|logits − labels|, broadcasting."""
    if not (isinstance(logits, _Tensor) and isinstance(labels, _Tensor)):
        _two_tensors(logits, labels, name)
    return _core.abs(_core.sub(logits, labels))


def smooth_l1_terms(logits, labels, beta, name="SmoothL1Loss"):
    """With d = |logits − labels|: 0.5·d²/beta where d < beta, else d − 0.5·beta."""
    _two_tensors(logits, labels, name)
    d = _core.abs(_core.sub(logits, labels))
    quad = _core.mul(_core.square(d), 0.5 / beta)
    lin = _core.sub(d, 0.5 * beta)
    return _core.select(_core.less(d, beta), quad, lin)


def huber_terms(logits, labels, delta, name="HuberLoss"):
    """With d = |logits − labels|: 0.5·d² where d < delta, else delta·(d − 0.5·delta)."""
    _two_tensors(logits, labels, name)
    d = _core.abs(_core.sub(logits, labels))
    quad = _core.mul(_core.square(d), 0.5)
    lin = _core.mul(_core.sub(d, 0.5 * delta), delta)
    return _core.select(_core.less(d, delta), quad, lin)


BCE_EPS = 1e-12


def bce_terms(logits, labels, weight, name="BCELoss"):
    """−w·(y·log(x + 1e-12) + (1 − y)·log(1 − x + 1e-12)) for probabilities x in [0, 1] (ValueError otherwise, in
    both modes, as MindSpore's kernel); logits and labels of one shape."""
    _two_tensors(logits, labels, name, same_shape=True)
    if logits.size:  # checked by the CheckRange op in PyNative and at every run of a compiled function
        logits = _core.check_range(logits, name, "value of 'logits' (a probability)", 0.0, 1.0, True)
    pos = _core.mul(labels, _core.log(_core.add(logits, BCE_EPS)))
    neg = _core.mul(_core.sub(1.0, labels), _core.log(_core.add(_core.sub(1.0, logits), BCE_EPS)))
    loss = _core.neg(_core.add(pos, neg))
    if weight is not None:
        loss = _core.mul(loss, weight if weight.dtype == loss.dtype else _core.cast(weight, loss.dtype))
    return loss


def bce_with_logits_terms(logits, labels, weight, pos_weight, name="BCEWithLogitsLoss"):
    """w·((1 − y)·x + (1 + (p − 1)·y)·softplus(−x)) = −w·(p·y·log σ(x) + (1 − y)·log(1 − σ(x))), computed stably
    (softplus(z) = relu(z) + log1p(exp(−|z|))); logits and labels of one shape."""
    _two_tensors(logits, labels, name, same_shape=True)
    dt = logits.dtype
    sp = _act._softplus(_core.neg(logits))
    if pos_weight is not None:
        p = pos_weight if pos_weight.dtype == dt else _core.cast(pos_weight, dt)
        coef = _core.add(_core.mul(_core.sub(p, 1.0), labels), 1.0)
    else:
        coef = 1.0
    loss = _core.add(_core.mul(_core.sub(1.0, labels), logits), _core.mul(sp, coef))
    if weight is not None:
        loss = _core.mul(loss, weight if weight.dtype == dt else _core.cast(weight, dt))
    return loss


KL_REDUCTIONS = ("mean", "batchmean", "sum", "none")


def kl_div_terms(logits, labels, reduction, name="KLDivLoss"):
    """y·(log y − x) where that is a number, else 0 (y = 0, y < 0, a NaN y or x: MindSpore 2.10's CPU kernel, which
    zeroes every NaN term). The log runs on 1 outside y > 0, so neither the value nor the gradients (−y for x,
    log y + 1 − x for y) carry a NaN from the masked places. RuntimeError for 'batchmean' with 0-d inputs."""
    _two_tensors(logits, labels, name, same_shape=True)
    if reduction == "batchmean" and logits.ndim == 0:
        raise RuntimeError(f"For '{name}', 'batchmean' needs inputs with a batch dimension, but got 0-d inputs.")
    positive = _core.greater(labels, 0.0)
    safe = _core.select(positive, labels, _core.ones_like(labels))
    loss = pick(positive, _core.mul(safe, _core.sub(_core.log(safe), logits)))
    return pick(_core.equal(loss, loss), loss)


def batchmean(loss, batch):
    """Σ loss / batch, in float32 for float16/bfloat16 (cast back)."""
    dtype = loss.dtype
    low = dtype in _LOW
    if low:
        loss = _core.cast(loss, mstype.float32)
    out = _core.div(_core.sum(loss, None, False), float(batch))
    return _core.cast(out, dtype) if low else out


# ---------------------------------------------------------------------------------------------- class losses

def softmax_cross_entropy_terms(logits, labels, sparse, name="SoftmaxCrossEntropyWithLogits", cache=None):
    """ℓ_n = −Σ_c y_nc·log softmax(x_n)_c (classes on the last axis); sparse: labels are class indices of the
    logits' shape without the class axis."""
    check_is_tensor("logits", logits, name)
    check_is_tensor("labels", labels, name)
    logp = _core.log_softmax(logits, -1)
    if sparse:
        if tuple(labels.shape) != tuple(logits.shape[:-1]):
            raise ValueError(f"For '{name}', sparse labels must have shape {tuple(logits.shape[:-1])} (the logits' "
                             f"shape without the class axis), but got {tuple(labels.shape)}.")
        labels = check_class_labels(labels, logits.shape[-1], name)
        mask = one_hot_mask(labels, logits.shape[-1], labels.ndim, cache)
        return _core.neg(_core.sum(pick(mask, logp), -1, False))
    if tuple(labels.shape) != tuple(logits.shape):
        raise ValueError(f"For '{name}', dense labels must have the logits' shape {tuple(logits.shape)}, but got "
                         f"{tuple(labels.shape)}.")
    return _core.neg(_core.sum(xlogy_terms(labels, logp), -1, False))


def cross_entropy(logits, labels, weight, ignore_index, reduction, label_smoothing, name="CrossEntropyLoss",
                  cache=None):
    """Cross entropy of logits (classes on axis 1, or 0 for 1-D) against class indices or probabilities: see
    nn.CrossEntropyLoss for the formulas. Arguments already checked (check_cross_entropy_args)."""
    if not (isinstance(logits, _Tensor) and isinstance(labels, _Tensor)):
        check_is_tensor("logits", logits, name)
        check_is_tensor("labels", labels, name)
    if label_smoothing == 0.0 and labels.dtype in _INDEX_DTYPES:
        # the common case: LogSoftmax then NLLLoss, two ops from one binding call (the kernel checks the labels)
        if weight is not None:
            n_classes = logits.shape[0 if logits.ndim == 1 else 1]
            if weight.shape[0] != n_classes:
                raise ValueError(f"For '{name}', the length of 'weight' ({weight.shape[0]}) must equal the number of "
                                 f"classes ({n_classes}).")
            if weight.dtype != logits.dtype:
                weight = _core.cast(weight, logits.dtype)
        return _core.cross_entropy_indices(logits, labels, weight, ignore_index, reduction, name)
    logp = _core.log_softmax(logits, 0 if logits.ndim == 1 else 1)
    return cross_entropy_from_log_probs(logp, labels, weight, ignore_index, reduction, label_smoothing, name, cache)


def cross_entropy_from_log_probs(logp, labels, weight, ignore_index, reduction, eps, name="CrossEntropyLoss",
                                 cache=None):
    """The cross-entropy loss of log-probabilities `logp` (classes on axis 1, or 0 for 1-D): cross_entropy after
    its log_softmax, and ops.nll_loss with label smoothing."""
    class_axis = 0 if logp.ndim == 1 else 1
    n_classes = logp.shape[class_axis]
    w = weight
    if w is not None:
        if w.shape[0] != n_classes:
            raise ValueError(f"For '{name}', the length of 'weight' ({w.shape[0]}) must equal the number of classes "
                             f"({n_classes}).")
        if logp.ndim > 1:
            shape = [1] * logp.ndim
            shape[1] = n_classes
            w = _core.reshape(w, shape)
        if w.dtype != logp.dtype:
            w = _core.cast(w, logp.dtype)
    if mstype.is_float(labels.dtype):
        return _ce_probabilities(logp, labels, w, class_axis, n_classes, eps, reduction, name)
    return _ce_indices(logp, labels, w, class_axis, n_classes, eps, ignore_index, reduction, name, cache)


def _ce_probabilities(logp, target, w, class_axis, n_classes, eps, reduction, name):
    if tuple(target.shape) != tuple(logp.shape):
        raise ValueError(f"For '{name}', probability targets must have the logits' shape {tuple(logp.shape)}, but "
                         f"got {tuple(target.shape)}.")
    if eps > 0.0:
        target = _core.add(_core.mul(target, 1.0 - eps), eps / n_classes)
    prod = xlogy_terms(target, logp)
    if w is not None:
        prod = _core.mul(prod, w)
    if reduction == "mean":
        return _core.div(_core.neg(_core.sum(prod, None, False)), float(logp.size // n_classes))
    if reduction == "sum":
        return _core.neg(_core.sum(prod, None, False))
    return _core.neg(_core.sum(prod, class_axis, False))


def _ce_indices(logp, target, w, class_axis, n_classes, eps, ignore_index, reduction, name, cache):
    expect = tuple(s for i, s in enumerate(logp.shape) if i != class_axis)
    if tuple(target.shape) != expect:
        raise ValueError(f"For '{name}', class-index targets must have shape {expect}, but got "
                         f"{tuple(target.shape)}.")
    target = check_class_labels(target, n_classes, name, ignore_index)
    mask = one_hot_mask(target, n_classes, class_axis, cache)
    keep = None
    if 0 <= ignore_index < n_classes:
        keep_mask = _core.not_equal(target, ignore_index)
        keep = _core.cast(keep_mask, logp.dtype)
        mask = _core.logical_and(mask, _core.expand_dims(keep_mask, class_axis))
    onehot = _core.cast(mask, logp.dtype)
    wlogp = logp if w is None else _core.mul(logp, w)
    picked = pick(mask, logp)
    if w is not None:
        picked = _core.mul(picked, w)
    loss = _core.neg(_core.sum(picked, class_axis, False))
    wsum = None
    if reduction == "mean":
        # Σ_n w_{y_n} over the non-ignored n: the normaliser of both the NLL and the smoothing term.
        wsum = _core.sum(onehot if w is None else _core.mul(onehot, w), None, False)
        out = _core.div(_core.sum(loss, None, False), wsum)
    elif reduction == "sum":
        out = _core.sum(loss, None, False)
    else:
        out = loss
    if eps == 0.0:
        return out
    smooth = _core.neg(_core.sum(wlogp, class_axis, False))
    if keep is not None:
        smooth = _core.mul(smooth, keep)
    else:
        # Out-of-range targets (the default ignore_index -100) are ignored too: their one-hot row is all zero.
        smooth = _core.mul(smooth, _core.sum(onehot, class_axis, False))
    if reduction == "mean":
        smooth = _core.div(_core.sum(smooth, None, False), wsum)
    elif reduction == "sum":
        smooth = _core.sum(smooth, None, False)
    return _core.add(_core.mul(out, 1.0 - eps), _core.mul(smooth, eps / n_classes))


def nll(logits, labels, weight, ignore_index, reduction, name="NLLLoss", cache=None):
    """ℓ_n = −w_{y_n}·x_{n,y_n} (0 where y_n == ignore_index); 'mean': Σ ℓ / Σ_n w_{y_n} over non-ignored n,
    'sum': Σ ℓ, 'none': ℓ (the labels' shape). logits: log-probabilities with classes on axis 1 (or 0 for 1-D).
    One NLLLoss op (src/ops/loss.cpp), which checks the labels' dtype, shape and range (ValueError naming `name`,
    in both modes); `cache` is unused (kept for the Cells' signature)."""
    if not isinstance(logits, _Tensor):
        check_is_tensor("logits", logits, name)
    if not isinstance(labels, _Tensor):
        check_is_tensor("labels", labels, name)
    if weight is not None:
        weight = _class_weight_1d(weight, logits, name)
    if labels.dtype not in _INDEX_DTYPES and labels.dtype != mstype.bool_ and not mstype.is_float(labels.dtype):
        labels = _core.cast(labels, mstype.int64)  # other integer labels, as the former composition took them
    return _core.nll_loss(logits, labels, weight, ignore_index, reduction, name)[0]


def _class_weight_1d(weight, logits, name):
    n_classes = logits.shape[0 if logits.ndim == 1 else 1] if logits.ndim else 0
    if tuple(weight.shape) != (n_classes,):
        raise ValueError(f"For '{name}', the 'weight' must have shape ({n_classes},) (one value per class), but got "
                         f"{tuple(weight.shape)}.")
    return weight if weight.dtype == logits.dtype else _core.cast(weight, logits.dtype)
