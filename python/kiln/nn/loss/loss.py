"""Loss cells (MindSpore's `nn.MSELoss`, `nn.L1Loss`, `nn.SmoothL1Loss`, `nn.HuberLoss`,
`nn.SoftmaxCrossEntropyWithLogits`, `nn.CrossEntropyLoss`, `nn.NLLLoss`, `nn.BCELoss`, `nn.BCEWithLogitsLoss`,
`nn.KLDivLoss`; ../shared/reference/mindspore_api.md §4.3). Each is composed of Kiln ops (so its gradient comes from
the ops' bprops, and it compiles into graphs) and reduced by LossBase.get_loss. The formulas live in kiln/ops/_loss_terms.py, which kiln.ops' functional losses
(ops.mse_loss, ops.cross_entropy, ...) call too: one formula for both surfaces, and no import of nn from ops.

Class-index labels outside [0, C) (other than `ignore_index`) raise ValueError, in both modes: the check is in the
NLLLoss kernel (NLLLoss; CrossEntropyLoss with class indices and no label smoothing, which is LogSoftmax then
NLLLoss: src/ops/loss.cpp) or the CheckRange op (the others), which run eagerly in PyNative and at every run of a
compiled function (GRAPH_MODE / kiln.jit), where the error also names the user's line. BCELoss checks that its probabilities are in [0, 1] the same way.

Masked logits: a −inf logit (a masked class) has log-probability −inf. Every loss here picks the log-probabilities
it needs with `select` instead of multiplying by a one-hot or probability row (0·(−inf) = NaN), and takes 0·log 0 = 0
for a zero target probability (the xlogy convention): logits [[0, 0, −inf]] with label 0 give log 2 and the
gradient [[−0.5, 0.5, 0]] (finite; the masked entry gets 0). A label (or, with label smoothing, any target mass) on
a −inf class gives +inf, the true value.

Precision note: MindSpore's get_loss computes in float32 and casts back. Kiln computes float16/bfloat16 losses in
float32 the same way, and keeps float64 inputs in float64 (MindSpore would round them to float32)."""
from ...ops import _loss_terms as F
from ..cell import Cell

__all__ = ["LossBase", "MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "SoftmaxCrossEntropyWithLogits",
           "CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss", "KLDivLoss"]
__all__ += ["MarginRankingLoss", "HingeEmbeddingLoss"]



def _check_is_tensor(name, value, cls_name):
    F.check_is_tensor(name, value, cls_name)


class LossBase(Cell):
    """Base class of losses: `reduction` ∈ {'mean', 'sum', 'none'} (ValueError otherwise:
    "For 'MSELoss', the 'reduction' must be in ['mean', 'sum', 'none'], but got X.").

    `get_loss(x, weights=1.0)`: x·weights reduced over all axes by the reduction (a 0-d tensor for 'mean'/'sum',
    x's shape for 'none'), in x's dtype (float16/bfloat16 reduced in float32 and cast back)."""

    def __init__(self, reduction="mean"):
        super().__init__()
        F.check_reduction(reduction, type(self).__name__)
        self.reduction = reduction
        self.average = reduction == "mean"
        self.reduce = reduction != "none"

    def get_axis(self, x):
        """All axes of x, as a tuple."""
        return tuple(range(x.ndim))

    def get_loss(self, x, weights=1.0):
        return F.reduce_loss(x, "none" if not self.reduce else ("mean" if self.average else "sum"), weights)

    def construct(self, logits, labels):
        raise NotImplementedError(f"{type(self).__name__}.construct is not implemented.")


class MSELoss(LossBase):
    """ℓ = (logits − labels)² (broadcast), reduced by `reduction` (default 'mean').

    Raises TypeError if an input is not a Tensor."""

    def construct(self, logits, labels):
        return self.get_loss(F.mse_terms(logits, labels, type(self).__name__))


class L1Loss(LossBase):
    """ℓ = |logits − labels|, reduced by `reduction` (default 'mean')."""

    def construct(self, logits, labels):
        return self.get_loss(F.l1_terms(logits, labels, type(self).__name__))


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
        self.beta = F.check_beta(beta, type(self).__name__)

    def construct(self, logits, labels):
        return self.get_loss(F.smooth_l1_terms(logits, labels, self.beta, type(self).__name__))


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
        return self.get_loss(F.softmax_cross_entropy_terms(logits, labels, self.sparse, type(self).__name__,
                                                           self._classes))


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
        F.check_cross_entropy_args(weight, ignore_index, label_smoothing, type(self).__name__)
        self.weight = weight
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        self.__dict__["_classes"] = {}

    def construct(self, logits, labels):
        return F.cross_entropy(logits, labels, self.weight, self.ignore_index, self.reduction, self.label_smoothing,
                               type(self).__name__, self._classes)


class HuberLoss(LossBase):
    """Huber loss with d = |logits − labels|: 0.5·d² if d < delta, else delta·(d − 0.5·delta) (broadcasting),
    reduced by `reduction` (default 'mean').

    Args: reduction ('mean', 'sum', 'none'), delta (float/int > 0, default 1.0).
    Raises TypeError (delta not a number, inputs not Tensors) / ValueError (delta ≤ 0, bad reduction).
    SmoothL1Loss(beta) equals HuberLoss(delta=beta) / beta."""

    def __init__(self, reduction="mean", delta=1.0):
        super().__init__(reduction)
        self.delta = F.check_delta(delta, type(self).__name__)

    def construct(self, logits, labels):
        return self.get_loss(F.huber_terms(logits, labels, self.delta, type(self).__name__))


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
        self.ignore_index = F.check_ignore_index(ignore_index, name)
        self.weight = F.check_weight(weight, name)
        self.__dict__["_classes"] = {}

    def construct(self, logits, labels):
        return F.nll(logits, labels, self.weight, self.ignore_index, self.reduction, type(self).__name__,
                     self._classes)


class BCELoss(LossBase):
    """Binary cross entropy of probabilities (MindSpore's nn.BCELoss and its CPU kernel):

        ℓ = −w · (y·log(x + 1e-12) + (1 − y)·log(1 − x + 1e-12)),  reduced by `reduction` (default 'mean').

    Args: weight (None or a float Tensor broadcastable to the logits: a rescaling weight), reduction.
    Inputs: logits x (any shape, float, values in [0, 1]); labels y with the same shape and dtype.
    Raises TypeError (non-Tensor inputs or weight), ValueError (shape mismatch; in both modes a logit outside
        [0, 1], as MindSpore's kernel)."""

    _EPS = F.BCE_EPS

    def __init__(self, weight=None, reduction="mean"):
        super().__init__(reduction)
        self.weight = F.check_weight(weight, type(self).__name__)

    def construct(self, logits, labels):
        return self.get_loss(F.bce_terms(logits, labels, self.weight, type(self).__name__))


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
        self.weight = F.check_weight(weight, name)
        self.pos_weight = F.check_weight(pos_weight, name, "pos_weight")

    def construct(self, logits, labels):
        return self.get_loss(F.bce_with_logits_terms(logits, labels, self.weight, self.pos_weight,
                                                     type(self).__name__))


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
        F.check_reduction(reduction, type(self).__name__, F.KL_REDUCTIONS)
        super().__init__("mean" if reduction == "batchmean" else reduction)
        self.reduction = reduction

    def construct(self, logits, labels):
        loss = F.kl_div_terms(logits, labels, self.reduction, type(self).__name__)
        if self.reduction != "batchmean":
            return self.get_loss(loss)
        return F.batchmean(loss, logits.shape[0])
