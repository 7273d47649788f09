"""Loss cells (MindSpore's `nn.MSELoss`, `nn.L1Loss`, `nn.SmoothL1Loss`, `nn.HuberLoss`,
`nn.SoftmaxCrossEntropyWithLogits`, `nn.CrossEntropyLoss`, `nn.NLLLoss`, `nn.BCELoss`, `nn.BCEWithLogitsLoss`,
`nn.KLDivLoss`; ../shared/reference/mindspore_api.md §4.3). Each is composed of Kiln ops (so its gradient comes from
the ops' bprops, and it compiles into graphs) and reduced by LossBase.get_loss.

Class-index labels outside [0, C) (other than `ignore_index`) raise ValueError, in both modes: the check is the
CheckRange op, which runs eagerly in PyNative and at every run of a compiled function (GRAPH_MODE / kiln.jit), where
the error also names the user's line. BCELoss checks that its probabilities are in [0, 1] the same way.

Masked logits: a −inf logit (a masked class) has log-probability −inf. Every loss here picks the log-probabilities
it needs with `select` instead of multiplying by a one-hot or probability row (0·(−inf) = NaN), and takes 0·log 0 = 0
for a zero target probability (the xlogy convention): logits [[0, 0, −inf]] with label 0 give log 2 and the
gradient [[−0.5, 0.5, 0]] (finite; the masked entry gets 0). A label (or, with label smoothing, any target mass) on
a −inf class gives +inf, the true value.

Precision note: MindSpore's get_loss computes in float32 and casts back. Kiln computes float16/bfloat16 losses in
float32 the same way, and keeps float64 inputs in float64 (MindSpore would round them to float32)."""
from ..._loader import _core
from ...common import dtype as mstype
from ...ops import activation_func as _act
from ..cell import Cell

__all__ = ["LossBase", "MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "SoftmaxCrossEntropyWithLogits",
           "CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss", "KLDivLoss"]
__all__ += ["MarginRankingLoss", "HingeEmbeddingLoss"]

_Tensor = _core.Tensor
_LOW = (mstype.float16, mstype.bfloat16)


def _check_is_tensor(name, value, cls_name):
    if not isinstance(value, _Tensor):  # None too: it would fail later on a missing attribute
        raise TypeError(f"For '{cls_name}', the '{name}' must be 'Tensor', but got {type(value).__name__}.")


class LossBase(Cell):
    """Base class of losses: `reduction` ∈ {'mean', 'sum', 'none'} (ValueError otherwise:
    "For 'MSELoss', the 'reduction' must be in ['mean', 'sum', 'none'], but got X.").

    `get_loss(x, weights=1.0)`: x·weights reduced over all axes by the reduction (a 0-d tensor for 'mean'/'sum',
    x's shape for 'none'), in x's dtype."""

    def __init__(self, reduction="mean"):
        super().__init__()
        if reduction not in ("mean", "sum", "none"):
            raise ValueError(f"For '{type(self).__name__}', the 'reduction' must be in ['mean', 'sum', 'none'], but "
                             f"got {reduction}.")
        self.reduction = reduction
        self.average = reduction == "mean"
        self.reduce = reduction != "none"

    def get_axis(self, x):
        """All axes of x, as a tuple."""
        return tuple(range(x.ndim))

    def get_loss(self, x, weights=1.0):
        dtype = x.dtype
        low = dtype in _LOW
        if low:
            x = _core.cast(x, mstype.float32)
        if not (isinstance(weights, (int, float)) and weights == 1.0):
            x = _core.mul(x, weights)
        if self.reduce:
            x = _core.mean(x, None, False) if self.average else _core.sum(x, None, False)
        if low:
            x = _core.cast(x, dtype)
        return x

    def construct(self, logits, labels):
        raise NotImplementedError(f"{type(self).__name__}.construct is not implemented.")


class MSELoss(LossBase):
    """ℓ = (logits − labels)² (broadcast), reduced by `reduction` (default 'mean').

    Raises TypeError if an input is not a Tensor."""

    def construct(self, logits, labels):
        if not (isinstance(logits, _Tensor) and isinstance(labels, _Tensor)):
            _check_is_tensor("logits", logits, type(self).__name__)
            _check_is_tensor("labels", labels, type(self).__name__)
        return self.get_loss(_core.square(_core.sub(logits, labels)))


class L1Loss(LossBase):
    """ℓ = |logits − labels|, reduced by `reduction` (default 'mean')."""

    def construct(self, logits, labels):
        if not (isinstance(logits, _Tensor) and isinstance(labels, _Tensor)):
            _check_is_tensor("logits", logits, type(self).__name__)
            _check_is_tensor("labels", labels, type(self).__name__)
        return self.get_loss(_core.abs(_core.sub(logits, labels)))


class MarginRankingLoss(LossBase):
    """MarginRankingLoss(margin=0.0, reduction='mean'): max(0, −target·(input1 − input2) + margin) for targets 1 /
    −1, reduced by `reduction` (ops.margin_ranking_loss, which holds the formula and the input checks).

    construct(input1, input2, target): float Tensors of one dtype whose shapes broadcast. Raises ValueError for a
    bad reduction (at construction); at the call, TypeError for a non-float margin (an int too, as MindSpore) or
    mismatched dtypes, ValueError for shapes that do not broadcast."""

    def __init__(self, margin=0.0, reduction="mean"):
        super().__init__(reduction)
        self.reduction = reduction
        self.margin = margin

    def construct(self, input1, input2, target):
        from ...ops.loss_func import margin_ranking_loss
        return margin_ranking_loss(input1, input2, target, self.margin, self.reduction)


class HingeEmbeddingLoss(LossBase):
    """HingeEmbeddingLoss(margin=1.0, reduction='mean'): x where labels > 0, max(0, margin − x) where labels < 0
    (labels are meant to be 1 / −1), reduced by `reduction` (ops.hinge_embedding_loss holds the formula).

    construct(logits, labels): float Tensors whose shapes broadcast. Raises TypeError for a margin that is not a
    float or int (bool refused) and ValueError for a bad reduction, at construction (MindSpore's messages); at the
    call, TypeError for non-float inputs."""

    def __init__(self, margin=1.0, reduction="mean"):
        super().__init__()
        name = self.cls_name
        if isinstance(margin, bool) or not isinstance(margin, (float, int)):
            raise TypeError(f"For '{name}', the type of 'margin' should be one of '['float', 'int']', but got type "
                            f"'{type(margin).__name__}'.")
        if reduction not in ("none", "sum", "mean"):
            raise ValueError(f"For '{name}', the 'reduction' must be str and must be in '['none', 'sum', 'mean']', "
                             f"but got {reduction!r}.")
        self.margin = margin
        self.reduction = reduction

    def construct(self, logits, labels):
        from ...ops.loss_func import hinge_embedding_loss
        return hinge_embedding_loss(logits, labels, self.margin, self.reduction)


class SmoothL1Loss(LossBase):
    """Huber-style loss with d = |logits − labels|: 0.5·d²/beta if d < beta, else d − 0.5·beta.

    Args: beta (float > 0, default 1.0), reduction (default 'none', as MindSpore).
    Raises TypeError (beta not float) / ValueError (beta ≤ 0)."""

    def __init__(self, beta=1.0, reduction="none"):
        super().__init__(reduction)
        if isinstance(beta, bool) or not isinstance(beta, float):
            raise TypeError(f"For '{type(self).__name__}', the type of 'beta' should be 'float', but got "
                            f"{type(beta).__name__}.")
        if beta <= 0:
            raise ValueError(f"For '{type(self).__name__}', the 'beta' must be greater than 0, but got {beta}.")
        self.beta = beta

    def construct(self, logits, labels):
        _check_is_tensor("logits", logits, type(self).__name__)
        _check_is_tensor("labels", labels, type(self).__name__)
        d = _core.abs(_core.sub(logits, labels))
        quad = _core.mul(_core.square(d), 0.5 / self.beta)
        lin = _core.sub(d, 0.5 * self.beta)
        return self.get_loss(_core.select(_core.less(d, self.beta), quad, lin))


def _check_class_labels(labels, n_classes, cls_name, ignore_index=None):
    """`labels` after checking them: TypeError unless they have an integer dtype; ValueError for a label outside
    [0, n_classes) that is not `ignore_index`, raised by the CheckRange op — eagerly in PyNative, and at every run of
    a compiled function (naming the user's line), so both modes check the same values."""
    if mstype.is_float(labels.dtype) or labels.dtype == mstype.bool_:
        raise TypeError(f"For '{cls_name}', class-index labels must be int32 or int64, but got {labels.dtype}.")
    if labels.size == 0:
        return labels
    return _core.check_range(labels, cls_name, "label", 0.0, float(n_classes), False, ignore_index)


def _one_hot(labels, num_classes, axis, dtype, cache):
    """One-hot of integer `labels` along `axis` (1.0 where labels == class, else 0.0; out-of-range labels give an
    all-zero row), via equal against an arange of the classes; dtype=None gives the Bool mask itself. The arange is
    kept in `cache` only when made eagerly: one made while compiling is a node of that trace and must not outlive it
    (it stays a foldable constant there)."""
    key = (num_classes, axis, labels.ndim)
    classes = cache.get(key)
    if classes is None:
        classes = _core.arange(0.0, float(num_classes), 1.0, mstype.int64)
        shape = [1] * (labels.ndim + 1)
        shape[axis] = num_classes
        classes = _core.reshape(classes, shape)
        if not _core.tracing():  # a tensor made while tracing is symbolic: it must not outlive the trace
            cache[key] = classes
    lab = _core.expand_dims(labels, axis)
    if lab.dtype != mstype.int64:
        lab = _core.cast(lab, mstype.int64)
    mask = _core.equal(lab, classes)
    return mask if dtype is None else _core.cast(mask, dtype)


def _pick(mask, x):
    """x where `mask` (Bool), else 0: picks log-probabilities without 0·(−inf) = NaN (see the module docstring); the
    gradient of x is 0 outside the mask."""
    return _core.select(mask, x, _core.zeros_like(x))


def _xlogy_terms(p, logq):
    """p·logq with 0·logq = 0 where p == 0 (so a −inf logq under a zero target gives 0, not NaN)."""
    return _core.mul(p, _pick(_core.not_equal(p, 0.0), logq))


class SoftmaxCrossEntropyWithLogits(LossBase):
    """Per-row cross entropy of softmax(logits) against labels: ℓ_n = −Σ_c y_nc · log softmax(x_n)_c.

    Args:
        sparse (bool): labels are class indices of shape (N,) (int32/int64) instead of (N, C) probabilities.
        reduction: default 'none' (as MindSpore): output shape (N,); 'mean'/'sum' give a 0-d tensor.
    Inputs: logits (N, C) float (or (N, ..., C): classes on the last axis); labels (N,) int (sparse) or (N, C).
    Raises: TypeError (non-Tensor inputs, float sparse labels), ValueError (label shape; a sparse label
        outside [0, C), in both modes — see the module docstring).
    """

    def __init__(self, sparse=False, reduction="none"):
        super().__init__(reduction)
        if not isinstance(sparse, bool):
            raise TypeError(f"For '{type(self).__name__}', the 'sparse' must be bool, but got "
                            f"{type(sparse).__name__}.")
        self.sparse = sparse
        self.__dict__["_classes"] = {}

    def construct(self, logits, labels):
        _check_is_tensor("logits", logits, type(self).__name__)
        _check_is_tensor("labels", labels, type(self).__name__)
        logp = _core.log_softmax(logits, -1)
        if self.sparse:
            if tuple(labels.shape) != tuple(logits.shape[:-1]):
                raise ValueError(f"For '{type(self).__name__}', sparse labels must have shape "
                                 f"{tuple(logits.shape[:-1])} (the logits' shape without the class axis), but got "
                                 f"{tuple(labels.shape)}.")
            labels = _check_class_labels(labels, logits.shape[-1], type(self).__name__)
            mask = _one_hot(labels, logits.shape[-1], labels.ndim, None, self._classes)
            return self.get_loss(_core.neg(_core.sum(_pick(mask, logp), -1, False)))
        if tuple(labels.shape) != tuple(logits.shape):
            raise ValueError(f"For '{type(self).__name__}', dense labels must have the logits' shape "
                             f"{tuple(logits.shape)}, but got {tuple(labels.shape)}.")
        x = _core.neg(_core.sum(_xlogy_terms(labels, logp), -1, False))
        return self.get_loss(x)


class CrossEntropyLoss(LossBase):
    """Cross entropy between logits and targets (MindSpore's nn.CrossEntropyLoss / ops.cross_entropy).

    Args:
        weight: None or a (C,) float Tensor of per-class weights.
        ignore_index (int): class-index targets equal to it contribute nothing (default −100).
        reduction: 'mean' (default), 'sum' or 'none'.
        label_smoothing (float in [0, 1]).
    Inputs: logits (C,), (N, C) or (N, C, d1, ...) (classes on axis 1, or 0 for 1-D); target either class
        indices (int, logits' shape without the class axis) or class probabilities (float, logits' shape).
    Formulas (logp = log_softmax(logits) over the class axis, w = weight or 1, ε = label_smoothing):
        indices:  ℓ_n = −w_{y_n}·logp_{n,y_n},  s_n = −Σ_c w_c·logp_{n,c} (0 for ignored n);
                  'mean': ((1−ε)·Σ ℓ_n + ε/C·Σ s_n) / Σ w_{y_n} (sums over non-ignored n, as PyTorch and
                  MindSpore);  'sum': (1−ε)·Σ ℓ + ε/C·Σ s;
                  'none': (1−ε)·ℓ + ε/C·s.
        probabilities: y ← y·(1−ε) + ε/C;  ℓ_n = −Σ_c w_c·y_{n,c}·logp_{n,c};  'mean' divides Σ ℓ by N.
    Raises TypeError/ValueError for a bad label_smoothing, ignore_index or weight; ValueError for a target shape
    mismatch and, in both modes, for a class index outside [0, C) that is not ignore_index (see the module docstring).
    """

    def __init__(self, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
        super().__init__(reduction)
        name = type(self).__name__
        if isinstance(ignore_index, bool) or not isinstance(ignore_index, int):
            raise TypeError(f"For '{name}', the 'ignore_index' must be int, but got {type(ignore_index).__name__}.")
        if isinstance(label_smoothing, bool) or not isinstance(label_smoothing, float):
            raise TypeError(f"For '{name}', the 'label_smoothing' must be float, but got "
                            f"{type(label_smoothing).__name__}.")
        if not 0.0 <= label_smoothing <= 1.0:
            raise ValueError(f"For '{name}', the 'label_smoothing' must be in range [0, 1], but got "
                             f"{label_smoothing}.")
        if weight is not None:
            if not isinstance(weight, _Tensor):
                raise TypeError(f"For '{name}', the 'weight' must be a Tensor or None, but got "
                                f"{type(weight).__name__}.")
            if weight.ndim != 1 or not mstype.is_float(weight.dtype):
                raise ValueError(f"For '{name}', the 'weight' must be a 1-D float Tensor, but got shape "
                                 f"{tuple(weight.shape)} and dtype {weight.dtype}.")
        self.weight = weight
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        self.__dict__["_classes"] = {}

    def construct(self, logits, labels):
        name = type(self).__name__
        _check_is_tensor("logits", logits, name)
        _check_is_tensor("labels", labels, name)
        return self._from_log_probs(_core.log_softmax(logits, 0 if logits.ndim == 1 else 1), labels)

    def _from_log_probs(self, logp, labels):
        """The loss of log-probabilities `logp` (classes on axis 1, or 0 for 1-D): cross entropy after its
        log_softmax, and ops.nll_loss with label smoothing."""
        name = type(self).__name__
        class_axis = 0 if logp.ndim == 1 else 1
        n_classes = logp.shape[class_axis]
        w = self.weight
        if w is not None:
            if w.shape[0] != n_classes:
                raise ValueError(f"For '{name}', the length of 'weight' ({w.shape[0]}) must equal the number of "
                                 f"classes ({n_classes}).")
            if logp.ndim > 1:
                shape = [1] * logp.ndim
                shape[1] = n_classes
                w = _core.reshape(w, shape)
            if w.dtype != logp.dtype:
                w = _core.cast(w, logp.dtype)
        eps = self.label_smoothing
        if mstype.is_float(labels.dtype):
            return self._probabilities(logp, labels, w, class_axis, n_classes, eps)
        return self._indices(logp, labels, w, class_axis, n_classes, eps)

    def _probabilities(self, logp, target, w, class_axis, n_classes, eps):
        if tuple(target.shape) != tuple(logp.shape):
            raise ValueError(f"For '{type(self).__name__}', probability targets must have the logits' shape "
                             f"{tuple(logp.shape)}, but got {tuple(target.shape)}.")
        if eps > 0.0:
            target = _core.add(_core.mul(target, 1.0 - eps), eps / n_classes)
        prod = _xlogy_terms(target, logp)
        if w is not None:
            prod = _core.mul(prod, w)
        if self.reduction == "mean":
            return _core.div(_core.neg(_core.sum(prod, None, False)), float(logp.size // n_classes))
        if self.reduction == "sum":
            return _core.neg(_core.sum(prod, None, False))
        return _core.neg(_core.sum(prod, class_axis, False))

    def _indices(self, logp, target, w, class_axis, n_classes, eps):
        expect = tuple(s for i, s in enumerate(logp.shape) if i != class_axis)
        if tuple(target.shape) != expect:
            raise ValueError(f"For '{type(self).__name__}', class-index targets must have shape {expect}, but got "
                             f"{tuple(target.shape)}.")
        target = _check_class_labels(target, n_classes, type(self).__name__, self.ignore_index)
        mask = _one_hot(target, n_classes, class_axis, None, self._classes)
        keep = None
        if 0 <= self.ignore_index < n_classes:
            keep_mask = _core.not_equal(target, self.ignore_index)
            keep = _core.cast(keep_mask, logp.dtype)
            mask = _core.logical_and(mask, _core.expand_dims(keep_mask, class_axis))
        onehot = _core.cast(mask, logp.dtype)
        wlogp = logp if w is None else _core.mul(logp, w)
        picked = _pick(mask, logp)
        if w is not None:
            picked = _core.mul(picked, w)
        loss = _core.neg(_core.sum(picked, class_axis, False))
        red = self.reduction
        wsum = None
        if red == "mean":
            # Σ_n w_{y_n} over the non-ignored n: the normaliser of both the NLL and the smoothing term.
            wsum = _core.sum(onehot if w is None else _core.mul(onehot, w), None, False)
            out = _core.div(_core.sum(loss, None, False), wsum)
        elif red == "sum":
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
        if red == "mean":
            smooth = _core.div(_core.sum(smooth, None, False), wsum)
        elif red == "sum":
            smooth = _core.sum(smooth, None, False)
        return _core.add(_core.mul(out, 1.0 - eps), _core.mul(smooth, eps / n_classes))


class HuberLoss(LossBase):
    """Huber loss with d = |logits − labels|: 0.5·d² if d < delta, else delta·(d − 0.5·delta) (broadcasting),
    reduced by `reduction` (default 'mean').

    Args: reduction ('mean', 'sum', 'none'), delta (float/int > 0, default 1.0).
    Raises TypeError (delta not a number, inputs not Tensors) / ValueError (delta ≤ 0, bad reduction).
    SmoothL1Loss(beta) equals HuberLoss(delta=beta) / beta."""

    def __init__(self, reduction="mean", delta=1.0):
        super().__init__(reduction)
        name = type(self).__name__
        if isinstance(delta, bool) or not isinstance(delta, (int, float)):
            raise TypeError(f"For '{name}', the 'delta' must be float or int, but got {type(delta).__name__}.")
        if delta <= 0:
            raise ValueError(f"For '{name}', the 'delta' must be greater than 0, but got {delta}.")
        self.delta = float(delta)

    def construct(self, logits, labels):
        _check_is_tensor("logits", logits, type(self).__name__)
        _check_is_tensor("labels", labels, type(self).__name__)
        d = _core.abs(_core.sub(logits, labels))
        quad = _core.mul(_core.square(d), 0.5)
        lin = _core.mul(_core.sub(d, 0.5 * self.delta), self.delta)
        return self.get_loss(_core.select(_core.less(d, self.delta), quad, lin))


def _check_weight(weight, name, arg="weight"):
    if weight is None:
        return None
    if not isinstance(weight, _Tensor):
        raise TypeError(f"For '{name}', the '{arg}' must be a Tensor or None, but got {type(weight).__name__}.")
    if not mstype.is_float(weight.dtype):
        raise TypeError(f"For '{name}', the '{arg}' must be a float Tensor, but got {weight.dtype}.")
    return weight


def _class_weight(weight, n_classes, ndim, dtype, name):
    """A (C,) weight reshaped to broadcast along the class axis (1, or 0 for 1-D inputs), in `dtype`."""
    if tuple(weight.shape) != (n_classes,):
        raise ValueError(f"For '{name}', the 'weight' must have shape ({n_classes},) (one value per class), but got "
                         f"{tuple(weight.shape)}.")
    if ndim > 1:
        shape = [1] * ndim
        shape[1] = n_classes
        weight = _core.reshape(weight, shape)
    return weight if weight.dtype == dtype else _core.cast(weight, dtype)


class NLLLoss(LossBase):
    """Negative log-likelihood of class-index labels given log-probabilities (MindSpore's nn.NLLLoss):

        ℓ_n = −w_{y_n} · x_{n, y_n}   (0 where y_n == ignore_index)
        'mean': Σ ℓ_n / Σ_n w_{y_n} over non-ignored n;  'sum': Σ ℓ_n;  'none': ℓ (labels' shape).

    Args: weight (None or a (C,) float Tensor), ignore_index (int, default −100), reduction (default 'mean').
    Inputs: logits (N, C) or (N, C, d1, ...) float log-probabilities (or (C,)); labels int32/int64 with the
        logits' shape without the class axis.
    Raises TypeError (non-Tensor inputs, float labels, bad weight/ignore_index), ValueError (shape mismatch; in
        both modes a label outside [0, C) that is not ignore_index)."""

    def __init__(self, weight=None, ignore_index=-100, reduction="mean"):
        super().__init__(reduction)
        name = type(self).__name__
        if isinstance(ignore_index, bool) or not isinstance(ignore_index, int):
            raise TypeError(f"For '{name}', the 'ignore_index' must be int, but got {type(ignore_index).__name__}.")
        self.weight = _check_weight(weight, name)
        self.ignore_index = ignore_index
        self.__dict__["_classes"] = {}

    def construct(self, logits, labels):
        name = type(self).__name__
        _check_is_tensor("logits", logits, name)
        _check_is_tensor("labels", labels, name)
        class_axis = 0 if logits.ndim == 1 else 1
        n_classes = logits.shape[class_axis]
        expect = tuple(s for i, s in enumerate(logits.shape) if i != class_axis)
        if tuple(labels.shape) != expect:
            raise ValueError(f"For '{name}', the labels must have shape {expect} (the logits' shape without the class "
                             f"axis), but got {tuple(labels.shape)}.")
        labels = _check_class_labels(labels, n_classes, name, self.ignore_index)
        dtype = logits.dtype
        mask = _one_hot(labels, n_classes, class_axis, None, self._classes)
        if 0 <= self.ignore_index < n_classes:
            mask = _core.logical_and(mask, _core.expand_dims(_core.not_equal(labels, self.ignore_index), class_axis))
        onehot = _core.cast(mask, dtype)
        picked = _pick(mask, logits)
        if self.weight is not None:
            w = _class_weight(self.weight, n_classes, logits.ndim, dtype, name)
            onehot = _core.mul(onehot, w)
            picked = _core.mul(picked, w)
        loss = _core.neg(_core.sum(picked, class_axis, False))
        if self.reduction == "none":
            return loss
        total = _core.sum(loss, None, False)
        if self.reduction == "sum":
            return total
        return _core.div(total, _core.sum(onehot, None, False))


class BCELoss(LossBase):
    """Binary cross entropy of probabilities (MindSpore's nn.BCELoss and its CPU kernel):

        ℓ = −w · (y·log(x + 1e-12) + (1 − y)·log(1 − x + 1e-12)),  reduced by `reduction` (default 'mean').

    Args: weight (None or a float Tensor broadcastable to the logits: a rescaling weight), reduction.
    Inputs: logits x (any shape, float, values in [0, 1]); labels y with the same shape and dtype.
    Raises TypeError (non-Tensor inputs or weight), ValueError (shape mismatch; in both modes a logit outside
        [0, 1], as MindSpore's kernel)."""

    _EPS = 1e-12

    def __init__(self, weight=None, reduction="mean"):
        super().__init__(reduction)
        self.weight = _check_weight(weight, type(self).__name__)

    def construct(self, logits, labels):
        name = type(self).__name__
        _check_is_tensor("logits", logits, name)
        _check_is_tensor("labels", labels, name)
        if tuple(logits.shape) != tuple(labels.shape):
            raise ValueError(f"For '{name}', the 'logits' and 'labels' must have the same shape, but got "
                             f"{tuple(logits.shape)} and {tuple(labels.shape)}.")
        if logits.size:  # checked by the CheckRange op in PyNative and at every run of a compiled function
            logits = _core.check_range(logits, name, "value of 'logits' (a probability)", 0.0, 1.0, True)
        eps = self._EPS
        pos = _core.mul(labels, _core.log(_core.add(logits, eps)))
        neg = _core.mul(_core.sub(1.0, labels), _core.log(_core.add(_core.sub(1.0, logits), eps)))
        loss = _core.neg(_core.add(pos, neg))
        if self.weight is not None:
            w = self.weight
            loss = _core.mul(loss, w if w.dtype == loss.dtype else _core.cast(w, loss.dtype))
        return self.get_loss(loss)


_softplus = _act._softplus  # relu(z) + log1p(exp(−|z|)), gradient σ(z) (kiln/ops/activation_func.py)


class BCEWithLogitsLoss(LossBase):
    """Binary cross entropy on logits (MindSpore's nn.BCEWithLogitsLoss), computed stably:

        ℓ = −w·(p·y·log σ(x) + (1 − y)·log(1 − σ(x)))
          = w·((1 − y)·x + (1 + (p − 1)·y)·softplus(−x)),   reduced by `reduction` (default 'mean').

    Args: reduction, weight (None or a float Tensor broadcastable to the logits), pos_weight (None or a float
        Tensor broadcastable to the logits, usually (C,): the weight p of positive examples per class).
    Inputs: logits x and labels y of the same shape, float.
    Raises TypeError (non-Tensor inputs/weights), ValueError (shape mismatch, bad reduction)."""

    def __init__(self, reduction="mean", weight=None, pos_weight=None):
        super().__init__(reduction)
        name = type(self).__name__
        self.weight = _check_weight(weight, name)
        self.pos_weight = _check_weight(pos_weight, name, "pos_weight")

    def construct(self, logits, labels):
        name = type(self).__name__
        _check_is_tensor("logits", logits, name)
        _check_is_tensor("labels", labels, name)
        if tuple(logits.shape) != tuple(labels.shape):
            raise ValueError(f"For '{name}', the 'logits' and 'labels' must have the same shape, but got "
                             f"{tuple(logits.shape)} and {tuple(labels.shape)}.")
        dt = logits.dtype
        sp = _softplus(_core.neg(logits))
        if self.pos_weight is not None:
            p = self.pos_weight if self.pos_weight.dtype == dt else _core.cast(self.pos_weight, dt)
            coef = _core.add(_core.mul(_core.sub(p, 1.0), labels), 1.0)
        else:
            coef = 1.0
        loss = _core.add(_core.mul(_core.sub(1.0, labels), logits), _core.mul(sp, coef))
        if self.weight is not None:
            w = self.weight
            loss = _core.mul(loss, w if w.dtype == dt else _core.cast(w, dt))
        return self.get_loss(loss)


class KLDivLoss(LossBase):
    """Kullback-Leibler divergence with log-probability inputs (MindSpore's nn.KLDivLoss, CPU semantics):

        L = y·(log y − x) where that is a number, else 0: 0 where y = 0 (the limit of y·log y), and also where
            y < 0, y is NaN or x is NaN (as MindSpore 2.10's CPU kernel, which zeroes every NaN term)
        'none': L;  'mean': mean(L) over all elements (default);  'sum': Σ L;  'batchmean': Σ L / x.shape[0]
        (only 'batchmean' is the mathematical KL divergence per sample).

    Args: reduction ('mean', 'batchmean', 'sum', 'none').
    Inputs: logits x (log-probabilities) and labels y (probabilities), same shape, float.
    Raises ValueError (bad reduction, shape mismatch), TypeError (non-Tensor inputs), RuntimeError ('batchmean'
        with 0-d inputs)."""

    def __init__(self, reduction="mean"):
        if reduction not in ("mean", "batchmean", "sum", "none"):
            raise ValueError(f"For '{type(self).__name__}', the 'reduction' must be in ['mean', 'batchmean', 'sum', "
                             f"'none'], but got {reduction}.")
        super().__init__("mean" if reduction == "batchmean" else reduction)
        self.reduction = reduction

    def construct(self, logits, labels):
        name = type(self).__name__
        _check_is_tensor("logits", logits, name)
        _check_is_tensor("labels", labels, name)
        if tuple(logits.shape) != tuple(labels.shape):
            raise ValueError(f"For '{name}', the 'logits' and 'labels' must have the same shape, but got "
                             f"{tuple(logits.shape)} and {tuple(labels.shape)}.")
        if self.reduction == "batchmean" and logits.ndim == 0:
            raise RuntimeError(f"For '{name}', 'batchmean' needs inputs with a batch dimension, but got 0-d inputs.")
        # MindSpore 2.10's CPU kernel: y·(log y − x) where that is a number, 0 where it is NaN: y = 0 (0·(−inf − x)),
        # y < 0 (log of a negative), a NaN y, or a NaN x. The log runs on 1 outside y > 0, so that neither the value
        # nor the gradients (−y for x, log y + 1 − x for y) carry a NaN from the masked places.
        positive = _core.greater(labels, 0.0)
        safe = _core.select(positive, labels, _core.ones_like(labels))
        loss = _pick(positive, _core.mul(safe, _core.sub(_core.log(safe), logits)))
        loss = _pick(_core.equal(loss, loss), loss)
        if self.reduction != "batchmean":
            return self.get_loss(loss)
        dtype = loss.dtype
        low = dtype in _LOW
        if low:
            loss = _core.cast(loss, mstype.float32)
        out = _core.div(_core.sum(loss, None, False), float(logits.shape[0]))
        return _core.cast(out, dtype) if low else out
