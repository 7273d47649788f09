"""Loss cells (MindSpore's `nn.MSELoss`, `nn.L1Loss`, `nn.SmoothL1Loss`, `nn.SoftmaxCrossEntropyWithLogits`,
`nn.CrossEntropyLoss`; ../shared/reference/mindspore_api.md §4.3). Each is composed of Kiln ops (so its gradient
comes from the ops' bprops) and reduced by LossBase.get_loss.

Precision note: MindSpore's get_loss computes in float32 and casts back. Kiln computes float16/bfloat16 losses in
float32 the same way, and keeps float64 inputs in float64 (MindSpore would round them to float32)."""
from ..._loader import _core
from ...common import dtype as mstype
from ..cell import Cell

__all__ = ["LossBase", "MSELoss", "L1Loss", "SmoothL1Loss", "SoftmaxCrossEntropyWithLogits", "CrossEntropyLoss"]

_Tensor = _core.Tensor
_LOW = (mstype.float16, mstype.bfloat16)


def _check_is_tensor(name, value, cls_name):
    if value is not None and not isinstance(value, _Tensor):
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


def _one_hot(labels, num_classes, axis, dtype, cache):
    """One-hot of integer `labels` along `axis` (1.0 where labels == class, else 0.0; out-of-range labels give an
    all-zero row), via equal against a cached arange."""
    key = (num_classes, axis, labels.ndim)
    classes = cache.get(key)
    if classes is None:
        classes = _core.arange(0.0, float(num_classes), 1.0, mstype.int64)
        shape = [1] * (labels.ndim + 1)
        shape[axis] = num_classes
        classes = _core.reshape(classes, shape)
        cache[key] = classes
    lab = _core.expand_dims(labels, axis)
    if lab.dtype != mstype.int64:
        lab = _core.cast(lab, mstype.int64)
    return _core.cast(_core.equal(lab, classes), dtype)


class SoftmaxCrossEntropyWithLogits(LossBase):
    """Per-row cross entropy of softmax(logits) against labels: ℓ_n = −Σ_c y_nc · log softmax(x_n)_c.

    Args:
        sparse (bool): labels are class indices of shape (N,) (int32/int64) instead of (N, C) probabilities.
        reduction: default 'none' (as MindSpore): output shape (N,); 'mean'/'sum' give a 0-d tensor.
    Inputs: logits (N, C) float.
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
            labels = _one_hot(labels, logits.shape[-1], labels.ndim, logp.dtype, self._classes)
        x = _core.neg(_core.sum(_core.mul(labels, logp), -1, False))
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
                  'mean': (1−ε)·Σ ℓ_n / Σ w_{y_n} + ε/C · mean_n s_n;  'sum': (1−ε)·Σ ℓ + ε/C·Σ s;
                  'none': (1−ε)·ℓ + ε/C·s.
        probabilities: y ← y·(1−ε) + ε/C;  ℓ_n = −Σ_c w_c·y_{n,c}·logp_{n,c};  'mean' divides Σ ℓ by N.
    Raises TypeError/ValueError for a bad label_smoothing, ignore_index or weight.
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
        class_axis = 0 if logits.ndim == 1 else 1
        n_classes = logits.shape[class_axis]
        logp = _core.log_softmax(logits, class_axis)
        w = self.weight
        if w is not None:
            if w.shape[0] != n_classes:
                raise ValueError(f"For '{name}', the length of 'weight' ({w.shape[0]}) must equal the number of "
                                 f"classes ({n_classes}).")
            if logits.ndim > 1:
                shape = [1] * logits.ndim
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
        prod = _core.mul(logp, target)
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
        onehot = _one_hot(target, n_classes, class_axis, logp.dtype, self._classes)
        keep = None
        if 0 <= self.ignore_index < n_classes:
            keep = _core.cast(_core.not_equal(target, self.ignore_index), logp.dtype)
            onehot = _core.mul(onehot, _core.expand_dims(keep, class_axis))
        wlogp = logp if w is None else _core.mul(logp, w)
        loss = _core.neg(_core.sum(_core.mul(onehot, wlogp), class_axis, False))
        red = self.reduction
        if red == "mean":
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
            smooth = _core.mean(smooth, None, False)
        elif red == "sum":
            smooth = _core.sum(smooth, None, False)
        return _core.add(_core.mul(out, 1.0 - eps), _core.mul(smooth, eps / n_classes))
