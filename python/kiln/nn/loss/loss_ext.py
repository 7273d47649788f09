"""More loss cells of MindSpore 2.10's nn: CosineEmbeddingLoss, GaussianNLLLoss, MultiMarginLoss, MultilabelMarginLoss,
MultiLabelSoftMarginLoss, TripletMarginLoss, CTCLoss, SoftMarginLoss. Each holds its arguments and calls the one
functional op of kiln.ops (kiln/ops/nnloss_func.py, loss_func.py), which documents the formula and the errors."""
from ...ops import loss_func as _L
from ...ops import nnloss_func as _F
from .loss import LossBase

__all__ = ["CosineEmbeddingLoss", "GaussianNLLLoss", "MultiMarginLoss", "MultilabelMarginLoss",
           "MultiLabelSoftMarginLoss", "TripletMarginLoss", "CTCLoss", "SoftMarginLoss"]


class CosineEmbeddingLoss(LossBase):
    """MindSpore's nn.CosineEmbeddingLoss(margin=0.0, reduction='mean')(logits_x1, logits_x2, labels):
    kiln.ops.cosine_embedding_loss. Raises ValueError for a margin outside [−1, 1] (at construction)."""

    def __init__(self, margin=0.0, reduction="mean"):
        super().__init__(reduction)
        self.margin = _F._real(margin, "CosineEmbeddingLoss", "margin")
        if not -1.0 <= self.margin <= 1.0:
            raise ValueError(f"For 'CosineEmbeddingLoss', the 'margin' must be in [-1, 1], but got {margin}.")

    def construct(self, logits_x1, logits_x2, labels):
        return _F.cosine_embedding_loss(logits_x1, logits_x2, labels, self.margin, self.reduction)


class GaussianNLLLoss(LossBase):
    """MindSpore's nn.GaussianNLLLoss(*, full=False, eps=1e-6, reduction='mean')(logits, labels, var):
    kiln.ops.gaussian_nll_loss."""

    def __init__(self, *, full=False, eps=1e-6, reduction="mean"):
        super().__init__(reduction)
        if not isinstance(full, bool):
            raise TypeError(f"For 'GaussianNLLLoss', 'full' must be a bool, but got {type(full).__name__}.")
        if isinstance(eps, bool) or not isinstance(eps, (int, float)) or eps <= 0:
            raise ValueError(f"For 'GaussianNLLLoss', 'eps' must be a positive float, but got {eps!r}.")
        self.full, self.eps = full, float(eps)

    def construct(self, logits, labels, var):
        return _F.gaussian_nll_loss(logits, labels, var, self.full, self.eps, self.reduction)


class MultiMarginLoss(LossBase):
    """MindSpore's nn.MultiMarginLoss(p=1, margin=1.0, reduction='mean', weight=None)(x, target, weight=None):
    kiln.ops.multi_margin_loss; the constructor's weight, when given, takes precedence (as MindSpore)."""

    def __init__(self, p=1, margin=1.0, reduction="mean", weight=None):
        super().__init__(reduction)
        if isinstance(p, bool) or p not in (1, 2):
            raise ValueError(f"For 'MultiMarginLoss', the 'p' must be 1 or 2, but got {p!r}.")
        self.p, self.margin, self.weight = p, _F._real(margin, "MultiMarginLoss", "margin"), weight

    def construct(self, x, target, weight=None):
        w = self.weight if self.weight is not None else weight
        return _F.multi_margin_loss(x, target, self.p, self.margin, w, self.reduction)


class MultilabelMarginLoss(LossBase):
    """MindSpore's nn.MultilabelMarginLoss(reduction='mean')(x, target): kiln.ops.multilabel_margin_loss."""

    def construct(self, x, target):
        return _F.multilabel_margin_loss(x, target, self.reduction)


class MultiLabelSoftMarginLoss(LossBase):
    """MindSpore's nn.MultiLabelSoftMarginLoss(weight=None, reduction='mean')(x, target):
    kiln.ops.multilabel_soft_margin_loss."""

    def __init__(self, weight=None, reduction="mean"):
        super().__init__(reduction)
        self.weight = weight

    def construct(self, x, target):
        return _F.multilabel_soft_margin_loss(x, target, self.weight, self.reduction)


class TripletMarginLoss(LossBase):
    """MindSpore's nn.TripletMarginLoss(p=2, swap=False, eps=1e-06, reduction='mean', margin=1.0)(x, positive,
    negative, margin=1.0): kiln.ops.triplet_margin_loss; a constructor margin other than 1.0 takes precedence over
    the call's (MindSpore's rule)."""

    def __init__(self, p=2, swap=False, eps=1e-06, reduction="mean", margin=1.0):
        super().__init__(reduction)
        self.p, self.swap, self.eps, self.margin = p, swap, eps, margin

    def construct(self, x, positive, negative, margin=1.0):
        if self.margin != 1.0:
            margin = self.margin
        return _F.triplet_margin_loss(x, positive, negative, margin, self.p, self.eps, self.swap, self.reduction)


class CTCLoss(LossBase):
    """MindSpore's nn.CTCLoss(blank=0, reduction='mean', zero_infinity=False)(log_probs, targets, input_lengths,
    target_lengths): the loss of kiln.ops.ctc_loss (without log_alpha). An unbatched (T, C) log_probs with (S,)
    targets is treated as a batch of one and returned unbatched."""

    def __init__(self, blank=0, reduction="mean", zero_infinity=False):
        super().__init__(reduction)
        self.blank, self.zero_infinity = blank, zero_infinity

    def construct(self, log_probs, targets, input_lengths, target_lengths):
        from ...common.tensor import Tensor as _Tensor
        from ...ops import _kernels
        if isinstance(log_probs, _Tensor) and log_probs.ndim == 2:
            if isinstance(targets, _Tensor) and targets.ndim == 1:
                targets = _kernels.expand_dims(targets, 0)
            loss, _ = _F.ctc_loss(_kernels.expand_dims(log_probs, 1), targets, input_lengths, target_lengths,
                                  self.blank, self.reduction, self.zero_infinity)
            return _kernels.squeeze(loss, [0]) if loss.ndim == 1 else loss
        loss, _ = _F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
                              self.zero_infinity)
        return loss


class SoftMarginLoss(LossBase):
    """MindSpore's nn.SoftMarginLoss(reduction='mean')(logits, labels): kiln.ops.soft_margin_loss —
    log(1 + exp(−labels·logits)), reduced."""

    def construct(self, logits, labels):
        return _L.soft_margin_loss(logits, labels, self.reduction)
