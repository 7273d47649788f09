"""Functional losses and dropout (MindSpore 2.10's ops.smooth_l1_loss, binary_cross_entropy,
binary_cross_entropy_with_logits, cross_entropy, dropout and the Primitive classes SmoothL1Loss, BinaryCrossEntropy,
SigmoidCrossEntropyWithLogits, SoftmaxCrossEntropyWithLogits, Dropout).

The formulas are in kiln/ops/_loss_terms.py, shared with the nn loss Cells (kiln/nn/loss/loss.py, whose docstrings
give them): one formula for both surfaces, and kiln.ops never imports kiln.nn. Error messages name the Cell, as
MindSpore's functional losses (which build the Cell) do. Values checked against MindSpore 2.10 on CPU."""
import numbers


from .._loader import _core
from .._args import broadcast_shapes as _broadcast_shapes
from .._args import _got
from ..common import dtype as mstype
from . import _loss_terms as F
from .function import _tensor_arg, rand
from .primitives import Primitive

__all__ = ["smooth_l1_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits", "cross_entropy", "dropout",
           "dropout2d", "dropout3d", "mse_loss", "l1_loss", "huber_loss", "kl_div", "nll_loss", "margin_ranking_loss",
           "soft_margin_loss", "hinge_embedding_loss",
           "SmoothL1Loss", "BinaryCrossEntropy", "SigmoidCrossEntropyWithLogits", "SoftmaxCrossEntropyWithLogits",
           "Dropout"]


def smooth_l1_loss(input, target, beta=1.0, reduction="none"):
    """MindSpore's ops.smooth_l1_loss(input, target, beta=1.0, reduction='none'): with d = |input − target|,
    0.5·d²/beta where d < beta, else d − 0.5·beta; reduced by `reduction`. Raises TypeError / ValueError as
    nn.SmoothL1Loss (beta must be a positive float)."""
    if isinstance(beta, int) and not isinstance(beta, bool):
        beta = float(beta)
    F.check_reduction(reduction, "SmoothL1Loss")
    F.check_beta(beta, "SmoothL1Loss")
    return F.reduce_loss(F.smooth_l1_terms(input, target, beta, "SmoothL1Loss"), reduction)


def binary_cross_entropy(logits, labels, weight=None, reduction="mean"):
    """MindSpore's ops.binary_cross_entropy(logits, labels, weight=None, reduction='mean'): −w·(y·log(x + 1e-12) +
    (1 − y)·log(1 − x + 1e-12)) for probabilities x in [0, 1] (ValueError otherwise, in both modes); see
    nn.BCELoss."""
    F.check_reduction(reduction, "BCELoss")
    weight = F.check_weight(weight, "BCELoss")
    return F.reduce_loss(F.bce_terms(logits, labels, weight, "BCELoss"), reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction="mean"):
    """MindSpore's ops.binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None,
    reduction='mean'): w·((1 − y)·x + (1 + (p − 1)·y)·softplus(−x)), computed stably; see nn.BCEWithLogitsLoss."""
    F.check_reduction(reduction, "BCEWithLogitsLoss")
    weight = F.check_weight(weight, "BCEWithLogitsLoss")
    pos_weight = F.check_weight(pos_weight, "BCEWithLogitsLoss", "pos_weight")
    return F.reduce_loss(F.bce_with_logits_terms(input, target, weight, pos_weight, "BCEWithLogitsLoss"), reduction)


def cross_entropy(input, target, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
    """MindSpore's ops.cross_entropy(input, target, weight=None, ignore_index=-100, reduction='mean',
    label_smoothing=0.0): cross entropy of logits (classes on axis 1, or 0 for 1-D input) against class indices or
    class probabilities; see nn.CrossEntropyLoss for the formulas."""
    if isinstance(label_smoothing, int) and not isinstance(label_smoothing, bool):
        label_smoothing = float(label_smoothing)
    F.check_reduction(reduction, "CrossEntropyLoss")
    F.check_cross_entropy_args(weight, ignore_index, label_smoothing, "CrossEntropyLoss")
    return F.cross_entropy(input, target, weight, ignore_index, reduction, label_smoothing, "CrossEntropyLoss")


def mse_loss(input, target, reduction="mean"):
    """MindSpore's ops.mse_loss(input, target, reduction='mean'): (input − target)² (broadcasting), reduced."""
    F.check_reduction(reduction, "MSELoss")
    return F.reduce_loss(F.mse_terms(input, target, "MSELoss"), reduction)


def l1_loss(input, target, reduction="mean"):
    """MindSpore's ops.l1_loss(input, target, reduction='mean'): |input − target|, reduced."""
    F.check_reduction(reduction, "L1Loss")
    return F.reduce_loss(F.l1_terms(input, target, "L1Loss"), reduction)


def huber_loss(input, target, reduction="mean", delta=1.0):
    """MindSpore's ops.huber_loss(input, target, reduction='mean', delta=1.0): see nn.HuberLoss."""
    F.check_reduction(reduction, "HuberLoss")
    delta = F.check_delta(delta, "HuberLoss")
    return F.reduce_loss(F.huber_terms(input, target, delta, "HuberLoss"), reduction)


def kl_div(logits, labels, reduction="mean"):
    """MindSpore's ops.kl_div(logits, labels, reduction='mean'): labels·(log labels − logits) for log-probability
    logits, 0 where that is NaN (labels ≤ 0, NaN labels or logits: MindSpore 2.10's kernel); reductions 'mean',
    'sum', 'none', 'batchmean' (see nn.KLDivLoss)."""
    F.check_reduction(reduction, "KLDivLoss", F.KL_REDUCTIONS)
    loss = F.kl_div_terms(logits, labels, reduction, "KLDivLoss")
    if reduction == "batchmean":
        return F.batchmean(loss, logits.shape[0])
    return F.reduce_loss(loss, reduction)


def nll_loss(inputs, target, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
    """MindSpore's ops.nll_loss(inputs, target, weight=None, ignore_index=-100, reduction='mean',
    label_smoothing=0.0): the negative log-likelihood of class indices given log-probabilities `inputs` (classes on
    axis 1); with label smoothing, cross_entropy's formula on the log-probabilities (see nn.NLLLoss and
    nn.CrossEntropyLoss)."""
    if isinstance(label_smoothing, int) and not isinstance(label_smoothing, bool):
        label_smoothing = float(label_smoothing)
    if label_smoothing == 0.0:
        F.check_reduction(reduction, "NLLLoss")
        F.check_ignore_index(ignore_index, "NLLLoss")
        weight = F.check_weight(weight, "NLLLoss")
        return F.nll(inputs, target, weight, ignore_index, reduction, "NLLLoss")
    F.check_reduction(reduction, "CrossEntropyLoss")
    F.check_cross_entropy_args(weight, ignore_index, label_smoothing, "CrossEntropyLoss")
    _tensor_arg(inputs, "nll_loss", "inputs")
    _tensor_arg(target, "nll_loss", "target")
    if mstype.is_float(target.dtype):
        raise TypeError(f"For 'nll_loss', 'target' must hold class indices (int32/int64), but got {target.dtype}.")
    return F.cross_entropy_from_log_probs(inputs, target, weight, ignore_index, reduction, label_smoothing,
                                          "CrossEntropyLoss")


def _reduce(loss, reduction, op):
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"For '{op}', the 'reduction' must be in ['mean', 'sum', 'none'], but got {reduction!r}.")
    if reduction == "none":
        return loss
    return _core.mean(loss, None, False) if reduction == "mean" else _core.sum(loss, None, False)


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction="mean"):
    """MindSpore's ops.margin_ranking_loss(input1, input2, target, margin=0.0, reduction='mean') (the formula of
    nn.MarginRankingLoss): max(0, −target·(input1 − input2) + margin), the three inputs broadcasting together,
    reduced by 'mean' (default), 'sum' or 'none'; target holds 1 or −1 (other values enter the formula as they are).

    Raises (MindSpore 2.10's checks and messages): TypeError for a margin that is not a float (an int is refused
    too), a non-Tensor input, input2's or target's dtype differing from input1's; ValueError for shapes that do
    not broadcast or an unknown reduction. Integer inputs give a float32 loss (the float margin promotes them). Gradient: −target where the hinge is active (to input1), its negative to input2,
    −(input1 − input2) to target."""
    if type(margin) is not float:
        raise TypeError(f"For 'margin_ranking_loss', the type of 'margin' should be 'float', but got type "
                        f"'{type(margin).__name__}'.")
    for name, t in (("input1", input1), ("input2", input2), ("target", target)):
        if not isinstance(t, _core.Tensor):
            raise TypeError(f"For 'margin_ranking_loss', the '{name}' must be a Tensor, but got {_got(t)}.")
    if input2.dtype != input1.dtype:
        raise TypeError(f"For margin_ranking_loss, the input1 dtype should be equal to input2 dtype, but got input1 "
                        f"dtype:{input1.dtype}, input2 dtype:{input2.dtype}.")
    if target.dtype != input1.dtype:
        raise TypeError(f"For margin_ranking_loss, the target dtype should be equal to input1 dtype, but got target "
                        f"dtype:{target.dtype}, input1 dtype:{input1.dtype}.")
    _broadcast_shape("margin_ranking_loss", input1, input2, target)
    # integer inputs: the float margin makes the sum float32, as in MindSpore
    loss = _core.relu(_core.add(_core.neg(_core.mul(target, _core.sub(input1, input2))), margin))
    return _reduce(loss, reduction, "margin_ranking_loss")


def soft_margin_loss(input, target, reduction="mean"):
    """MindSpore's ops.soft_margin_loss(input, target, reduction='mean'): log(1 + exp(−target·input)) (computed
    stably), target ∈ {1, −1}, same shape."""
    x = _float_tensor(input, "soft_margin_loss")
    y = _tensor_arg(target, "soft_margin_loss", "target")
    if tuple(x.shape) != tuple(y.shape):
        raise ValueError(f"For 'soft_margin_loss', 'input' and 'target' must have one shape, but got "
                         f"{tuple(x.shape)} and {tuple(y.shape)}.")
    from .activation_func import _softplus
    y = y if y.dtype == x.dtype else _core.cast(y, x.dtype)
    return _reduce(_softplus(_core.neg(_core.mul(y, x))), reduction, "soft_margin_loss")


def hinge_embedding_loss(inputs, targets, margin=1.0, reduction="mean"):
    """MindSpore's ops.hinge_embedding_loss(inputs, targets, margin=1.0, reduction='mean') (the formula of
    nn.HingeEmbeddingLoss): inputs where targets > 0, max(0, margin − inputs) where targets < 0, 0 where
    targets == 0 (MindSpore selects by sign: targets are meant to be 1 or −1), inputs and targets broadcasting;
    reduced by 'mean' (default), 'sum' or 'none'. Output: inputs' dtype.

    Raises (MindSpore 2.10's messages): TypeError for a margin that is not a float or int, a non-Tensor argument,
    or inputs / targets of a non-float dtype; ValueError for an unknown reduction or shapes that do not broadcast.
    Gradient to inputs: 1 where targets > 0, −1 where targets < 0 and the hinge is active, else 0; none to targets
    (they only select)."""
    if isinstance(margin, bool) or not isinstance(margin, (float, int)):
        raise TypeError(f"For 'HingeEmbeddingLoss', 'margin' must be a float or int, but got {type(margin)}.")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"For 'HingeEmbeddingLoss', 'reduction' must be one of 'none', 'mean', 'sum',but got "
                         f"{reduction}.")
    if not isinstance(inputs, _core.Tensor):
        raise TypeError(f"For 'HingeEmbeddingLoss', the first input must be a Tensor, but got {type(inputs)}.")
    if not isinstance(targets, _core.Tensor):
        raise TypeError(f"For 'HingeEmbeddingLoss', the second input must be a Tensor, but got {type(targets)}.")
    if not mstype.is_float(inputs.dtype):
        raise TypeError(f"For 'HingeEmbeddingLoss', the dtype of the first input must be float, but got "
                        f"{inputs.dtype}.")
    if not mstype.is_float(targets.dtype):
        raise TypeError(f"For 'HingeEmbeddingLoss', the dtype of the second input must be float, but got "
                        f"{targets.dtype}.")
    x = inputs
    shape = _broadcast_shape("hinge_embedding_loss", x, targets)
    xb = x if list(x.shape) == shape else _core.broadcast_to(x, shape)
    yb = targets if list(targets.shape) == shape else _core.broadcast_to(targets, shape)
    y_zero = _core.full([], 0.0, yb.dtype)
    zeros = _core.zeros_like(xb)
    pos = _core.select(_core.greater(yb, y_zero), xb, zeros)
    hinge = _core.relu(_core.sub(_core.full([], float(margin), x.dtype), xb))
    neg = _core.select(_core.less(yb, y_zero), hinge, zeros)
    return _reduce(_core.add(pos, neg), reduction, "hinge_embedding_loss")


def _broadcast_shape(op, *tensors):
    """The shape the tensors broadcast to (as a list); ValueError naming `op` when they do not."""
    shapes = [tuple(t.shape) for t in tensors]
    try:
        return [int(d) for d in _broadcast_shapes(*shapes)]
    except ValueError:
        raise ValueError(f"For '{op}', the input shapes {', '.join(map(str, shapes))} must broadcast to each "
                         "other.") from None


def _float_tensor(x, op, name="input"):
    x = _tensor_arg(x, op, name)
    if not mstype.is_float(x.dtype):
        raise TypeError(f"For '{op}', the '{name}' must be a float Tensor, but got {x.dtype}.")
    return x


def _check_p(p, op):
    if isinstance(p, bool) or not isinstance(p, numbers.Real):
        raise TypeError(f"For '{op}', the 'p' must be a float, but got {_got(p)}.")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"For '{op}', the 'p' must be in range [0, 1], but got {p}.")
    return float(p)


def _dropout_mask(x, keep, seed, op):
    u = rand(*x.shape, dtype=mstype.float32, seed=seed)
    return _core.cast(_core.less(u, keep), x.dtype)


def dropout(input, p=0.5, training=True, seed=None):
    """MindSpore's ops.dropout(input, p=0.5, training=True, seed=None): in training, each element zeroed with
    probability p and the others scaled by 1/(1 − p) (p = 1 gives all zeros); training=False returns input. The
    mask follows kiln.set_seed / `seed`. Raises TypeError (non-Tensor input, non-float p), ValueError (p outside
    [0, 1])."""
    x = _float_tensor(input, "dropout")
    p = _check_p(p, "dropout")
    if not training or p == 0.0:
        return x
    if p == 1.0:
        return _core.zeros_like(x)
    keep = 1.0 - p
    return _core.mul(x, _core.mul(_dropout_mask(x, keep, seed, "dropout"), 1.0 / keep))


def _channel_dropout(input, p, training, rank, op):
    x = _float_tensor(input, op)
    if x.ndim != rank:
        raise ValueError(f"For '{op}', the input must be {rank}-D (N, C, {'H, W' if rank == 4 else 'D, H, W'}), "
                         f"but got shape {tuple(x.shape)}.")
    p = _check_p(p, op)
    if not training or p == 0.0:
        return x
    if p == 1.0:
        return _core.zeros_like(x)
    keep = 1.0 - p
    u = rand(*(list(x.shape[:2]) + [1] * (rank - 2)), dtype=mstype.float32)
    mask = _core.cast(_core.less(u, keep), x.dtype)
    return _core.mul(x, _core.mul(mask, 1.0 / keep))


def dropout2d(input, p=0.5, training=True):
    """MindSpore's ops.dropout2d(input, p=0.5, training=True): whole channels of the (N, C, H, W) input zeroed with
    probability p (one draw per (sample, channel)), the others scaled by 1/(1 − p) (Tompson et al. 2015).
    Raises ValueError (not 4-D, p outside [0, 1]), TypeError (non-Tensor, non-float p)."""
    return _channel_dropout(input, p, training, 4, "dropout2d")


def dropout3d(input, p=0.5, training=True):
    """MindSpore's ops.dropout3d(input, p=0.5, training=True): dropout2d for (N, C, D, H, W) inputs."""
    return _channel_dropout(input, p, training, 5, "dropout3d")


# ---------------------------------------------------------------------------------------------- Primitive classes

class SmoothL1Loss(Primitive):
    """SmoothL1Loss(beta=1.0, reduction='none')(logits, labels): see ops.smooth_l1_loss."""

    def __init__(self, beta=1.0, reduction="none"):
        super().__init__("SmoothL1Loss")
        beta = float(beta) if isinstance(beta, int) and not isinstance(beta, bool) else beta
        F.check_reduction(reduction, "SmoothL1Loss")
        self.beta, self.reduction = F.check_beta(beta, "SmoothL1Loss"), reduction

    def __call__(self, logits, labels):
        return F.reduce_loss(F.smooth_l1_terms(logits, labels, self.beta, "SmoothL1Loss"), self.reduction)


class BinaryCrossEntropy(Primitive):
    """BinaryCrossEntropy(reduction='mean')(logits, labels, weight=None): see ops.binary_cross_entropy."""

    def __init__(self, reduction="mean"):
        super().__init__("BinaryCrossEntropy")
        F.check_reduction(reduction, "BCELoss")
        self.reduction = reduction

    def __call__(self, logits, labels, weight=None):
        return binary_cross_entropy(logits, labels, weight, self.reduction)


class SigmoidCrossEntropyWithLogits(Primitive):
    """SigmoidCrossEntropyWithLogits()(logits, label): the elementwise (unreduced) binary cross entropy of
    sigmoid(logits) against label, computed stably: (1 − y)·x + softplus(−x)."""

    def __call__(self, logits, label):
        return binary_cross_entropy_with_logits(logits, label, reduction="none")


class SoftmaxCrossEntropyWithLogits(Primitive):
    """SoftmaxCrossEntropyWithLogits()(logits, labels): for (N, C) logits and (N, C) label probabilities, the tuple
    (loss (N,) = −Σ_c y·log softmax(x), backprop (N, C) = softmax(x) − y), as MindSpore's primitive.
    Raises TypeError (non-Tensors), ValueError (not 2-D, shapes differ)."""

    def __call__(self, logits, labels):
        x = _tensor_arg(logits, "SoftmaxCrossEntropyWithLogits", "logits")
        y = _tensor_arg(labels, "SoftmaxCrossEntropyWithLogits", "labels")
        if x.ndim != 2 or tuple(x.shape) != tuple(y.shape):
            raise ValueError(f"For 'SoftmaxCrossEntropyWithLogits', 'logits' and 'labels' must be 2-D of one shape, "
                             f"but got {tuple(x.shape)} and {tuple(y.shape)}.")
        loss = F.softmax_cross_entropy_terms(x, y, False, "SoftmaxCrossEntropyWithLogits")
        return loss, _core.sub(_core.softmax(x, -1), y)


class Dropout(Primitive):
    """Dropout(keep_prob=0.5, Seed0=0, Seed1=0)(x): the tuple (output, mask): mask (x's dtype) is 1 where an element
    is kept (probability keep_prob) and 0 elsewhere; output = x·mask/keep_prob. Seeds both 0 follow the global seed
    (kiln.set_seed). Raises TypeError / ValueError (keep_prob outside (0, 1])."""

    def __init__(self, keep_prob=0.5, Seed0=0, Seed1=0):
        super().__init__("Dropout")
        if isinstance(keep_prob, bool) or not isinstance(keep_prob, numbers.Real):
            raise TypeError(f"For 'Dropout', the 'keep_prob' must be a float, but got {_got(keep_prob)}.")
        if not 0.0 < keep_prob <= 1.0:
            raise ValueError(f"For 'Dropout', the 'keep_prob' must be in range (0, 1], but got {keep_prob}.")
        from .math_func import _op_seed
        self.keep_prob = float(keep_prob)
        self.Seed0, self.Seed1 = int(Seed0), int(Seed1)
        self._seed = _op_seed(self.Seed0, self.Seed1)

    def __call__(self, x):
        x = _float_tensor(x, "Dropout", "x")
        mask = _dropout_mask(x, self.keep_prob, self._seed, "Dropout")
        return _core.mul(x, _core.mul(mask, 1.0 / self.keep_prob)), mask

