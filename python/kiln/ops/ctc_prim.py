"""MindSpore 2.10's ops.CTCLoss primitive (TensorFlow's ctc_loss interface, unlike ops.ctc_loss): logits (not
log-probabilities), labels as a sparse (indices, values) pair, blank = num_classes − 1, and the outputs
(loss, gradient). The forward recursion is the log-space one of kiln/ops/nnloss_func.py (Graves et al. 2006) with
TensorFlow's `ctc_merge_repeated` rule (CTCLossCalculator): with it False, a non-blank state has no self-loop and the
s − 2 skip is allowed between equal labels too (a repeated label in a path is emitted twice, not merged). The gradient
output is d loss_n / d logits, by Kiln's autodiff of that recursion (softmax − the posteriors of the states).
Values pinned against MindSpore 2.10 (CPU)."""
import numpy as np

from .._loader import _core
from .._args import _got
from ..common import dtype as mstype
from .function import _tensor_arg
from .primitives import Primitive
from .nnloss_func import _lse3

__all__ = ["CTCLoss"]


def _ctc_nll(x, targets, tl, il, merge_repeated):
    """(N,) −log p(labels | x) for logits x (T, N, C), dense targets (N, S) int64, label lengths tl and sequence
    lengths il (N,) int64; blank = C − 1."""
    t_max, n, c = x.shape
    s_max = targets.shape[1]
    blank = c - 1
    lp = _core.log_softmax(x, -1)
    length = 2 * s_max + 1
    i64, dt = mstype.int64, x.dtype
    inter = _core.reshape(_core.stack([_core.full([n, s_max], float(blank), i64), targets], 2), [n, 2 * s_max])
    ext = _core.concat([inter, _core.full([n, 1], float(blank), i64)], 1)
    ninf = float("-inf")
    pos = _core.reshape(_core.arange(0, length, 1, i64), [1, length])
    in_seq = _core.less_equal(pos, _core.expand_dims(_core.mul(tl, 2), 1))
    prev2 = _core.concat([_core.full([n, 2], -1.0, i64), ext[:, :length - 2]], 1)
    skip = _core.logical_and(_core.not_equal(ext, blank), _core.greater_equal(prev2, 0))
    if merge_repeated:
        skip = _core.logical_and(skip, _core.not_equal(ext, prev2))
    stay = _core.full([n, length], True, mstype.bool_) if merge_repeated else _core.equal(ext, blank)
    from .index_func import gather_elements
    lpe = gather_elements(lp, 2, _core.broadcast_to(_core.expand_dims(ext, 0), [t_max, n, length]))
    full_ninf = _core.full([n, length], ninf, dt)
    alpha = _core.select(_core.logical_and(_core.less(pos, 2), in_seq), lpe[0], full_ninf)
    t_idx = _core.expand_dims(il, 1)
    for t in range(1, t_max):
        a0 = _core.select(stay, alpha, full_ninf)
        a1 = _core.concat([_core.full([n, 1], ninf, dt), alpha[:, :length - 1]], 1)
        a2 = _core.select(skip, _core.concat([_core.full([n, 2], ninf, dt), alpha[:, :length - 2]], 1), full_ninf)
        new = _core.select(in_seq, _core.add(_lse3(a0, a1, a2), lpe[t]), full_ninf)
        alpha = _core.select(_core.less(_core.full([], float(t), i64), t_idx), new, alpha)
    end = _core.expand_dims(_core.mul(tl, 2), 1)
    last = gather_elements(alpha, 1, end)
    before = gather_elements(alpha, 1, _core.select(_core.greater(end, 0), _core.sub(end, 1), end))
    before = _core.select(_core.greater(end, 0), before, _core.full([n, 1], ninf, dt))
    return _core.neg(_core.reshape(_lse3(last, before, _core.full([n, 1], ninf, dt)), [n]))


class CTCLoss(Primitive):
    """CTCLoss(preprocess_collapse_repeated=False, ctc_merge_repeated=True, ignore_longer_outputs_than_inputs=False)
    (x, labels_indices, labels_values, sequence_length) -> (loss, gradient).

    Inputs:
        x: (max_time, batch, num_classes) Float16/32/64 logits (softmax is applied inside); class num_classes − 1
            is the blank.
        labels_indices: (num, 2) Int64, the (batch, position) of each label; positions 0..len−1 per batch entry.
        labels_values: (num,) Int32 labels in [0, num_classes − 1).
        sequence_length: (batch,) Int32 frames per entry, each ≤ max_time.
    Attributes:
        preprocess_collapse_repeated: merge repeated labels before the loss ([a, a, b] → [a, b]).
        ctc_merge_repeated: paths' repeated labels merge (standard CTC); False: each frame's label is emitted.
        ignore_longer_outputs_than_inputs: an entry with more labels than frames gives loss 0 and gradient 0
            (else ValueError; MindSpore raises RuntimeError).
    Outputs: loss (batch,) and gradient (max_time, batch, num_classes) = d loss_n / d x, both x's dtype (float16 is
        computed in float32).
    Raises:
        TypeError: a non-bool attribute, non-Tensor inputs, wrong dtypes. ValueError: bad ranks/shapes, and (values
        known, PyNative) labels or lengths out of range or an entry too long without ignore_longer_outputs_than_inputs.
    """

    def __init__(self, preprocess_collapse_repeated=False, ctc_merge_repeated=True,
                 ignore_longer_outputs_than_inputs=False):
        super().__init__("CTCLoss")
        for name, v in (("preprocess_collapse_repeated", preprocess_collapse_repeated),
                        ("ctc_merge_repeated", ctc_merge_repeated),
                        ("ignore_longer_outputs_than_inputs", ignore_longer_outputs_than_inputs)):
            if not isinstance(v, bool):
                raise TypeError(f"For 'CTCLoss', the '{name}' must be a bool, but got {_got(v)}.")
        self.preprocess_collapse_repeated = preprocess_collapse_repeated
        self.ctc_merge_repeated = ctc_merge_repeated
        self.ignore_longer_outputs_than_inputs = ignore_longer_outputs_than_inputs

    def __call__(self, x, labels_indices, labels_values, sequence_length):
        op = "CTCLoss"
        x = _tensor_arg(x, op, "x")
        li = _tensor_arg(labels_indices, op, "labels_indices")
        lv = _tensor_arg(labels_values, op, "labels_values")
        sl = _tensor_arg(sequence_length, op, "sequence_length")
        if x.dtype not in (mstype.float16, mstype.float32, mstype.float64):
            raise TypeError(f"For 'CTCLoss', the 'x' must be a Float16, Float32 or Float64 Tensor, but got {x.dtype}.")
        for name, t, want in (("labels_indices", li, mstype.int64), ("labels_values", lv, mstype.int32),
                              ("sequence_length", sl, mstype.int32)):
            if t.dtype != want:
                raise TypeError(f"For 'CTCLoss', the '{name}' must be a {want} Tensor, but got {t.dtype}.")
        if x.ndim != 3:
            raise ValueError(f"For 'CTCLoss', the 'x' must be 3-D (max_time, batch, num_classes), but got shape "
                             f"{tuple(x.shape)}.")
        t_max, n, c = x.shape
        if li.ndim != 2 or li.shape[1] != 2 or lv.ndim != 1 or lv.shape[0] != li.shape[0]:
            raise ValueError(f"For 'CTCLoss', 'labels_indices' must be (num, 2) and 'labels_values' (num,), but got "
                             f"{tuple(li.shape)} and {tuple(lv.shape)}.")
        if tuple(sl.shape) != (n,):
            raise ValueError(f"For 'CTCLoss', the 'sequence_length' must have shape ({n},), but got {tuple(sl.shape)}.")
        if c < 2:
            raise ValueError(f"For 'CTCLoss', num_classes must be >= 2 (a label and the blank), but got {c}.")
        num = li.shape[0]
        i64 = mstype.int64
        if not _core.tracing():
            _check_values(li.asnumpy(), lv.asnumpy(), sl.asnumpy(), t_max, n, c,
                          self.ignore_longer_outputs_than_inputs, self.preprocess_collapse_repeated)
        # dense targets (N, T + 1): label k of entry b at [b, pos]; column T collects nothing but padding
        b_idx, p_idx = _core.cast(li[:, 0], i64), _core.cast(li[:, 1], i64)
        vals = _core.cast(lv, i64)
        ones = _core.full([num], 1.0, i64)
        tl = _core.unsorted_segment_sum(ones, b_idx, n) if num else _core.full([n], 0.0, i64)
        if self.preprocess_collapse_repeated and num:
            dense = _scatter(_core.full([n, t_max + 1], -1.0, i64), b_idx, p_idx, vals)
            prev = _core.concat([_core.full([n, 1], -2.0, i64), dense[:, :t_max]], 1)
            keep = _core.logical_and(_core.not_equal(dense, prev), _core.greater_equal(dense, 0))
            new_pos = _core.sub(_cumsum(_core.cast(keep, i64), 1), 1)
            tl = _core.count_nonzero(keep, [1], False)
            col = _core.select(keep, new_pos, _core.full([], float(t_max), i64))
            rows = _core.broadcast_to(_core.reshape(_core.arange(0, n, 1, i64), [n, 1]), [n, t_max + 1])
            targets = _scatter(_core.full([n, t_max + 1], 0.0, i64), _core.reshape(rows, [-1]),
                               _core.reshape(col, [-1]), _core.reshape(_core.maximum(dense, 0), [-1]))
        else:
            targets = _scatter(_core.full([n, t_max + 1], 0.0, i64), b_idx, p_idx, vals) if num else \
                _core.full([n, t_max + 1], 0.0, i64)
        targets = targets[:, :t_max]
        il = _core.cast(sl, i64)
        too_long = _core.greater(tl, il)
        tl_safe = _core.select(too_long, _core.zeros_like(tl), tl)
        work = x if x.dtype != mstype.float16 else _core.cast(x, mstype.float32)
        from ..common.api import value_and_grad
        merge = self.ctc_merge_repeated

        def per_entry(logits):
            return _ctc_nll(logits, targets, tl_safe, il, merge)

        loss = per_entry(work)
        grad = value_and_grad(lambda z: _core.sum(per_entry(z), None, False))(work)[1]
        zero_l = _core.zeros_like(loss)
        loss = _core.select(too_long, zero_l, loss)
        grad = _core.select(_core.reshape(too_long, [1, n, 1]), _core.zeros_like(grad), grad)
        if x.dtype == mstype.float16:
            loss, grad = _core.cast(loss, x.dtype), _core.cast(grad, x.dtype)
        return loss, grad


def _cumsum(x, axis):
    from .scan_func import cumsum
    return cumsum(x, axis)


def _scatter(dense, rows, cols, vals):
    from . import tensor_scatter_update
    idx = _core.stack([rows, cols], 1)
    return tensor_scatter_update(dense, idx, vals)


def _check_values(li, lv, sl, t_max, n, c, ignore_longer, collapse):
    if li.size and (li[:, 0].min() < 0 or li[:, 0].max() >= n or li[:, 1].min() < 0 or li[:, 1].max() >= t_max):
        raise ValueError(f"For 'CTCLoss', 'labels_indices' must hold (batch in [0, {n}), position in [0, {t_max})), "
                         f"but got {li.tolist()}.")
    if lv.size and (lv.min() < 0 or lv.max() >= c - 1):
        raise ValueError(f"For 'CTCLoss', 'labels_values' must be in [0, {c - 1}) (class {c - 1} is the blank), but "
                         f"got {lv.tolist()}.")
    if sl.size and (sl.min() < 0 or sl.max() > t_max):
        raise ValueError(f"For 'CTCLoss', 'sequence_length' must be in [0, {t_max}], but got {sl.tolist()}.")
    for b in range(n):
        pos = np.sort(li[li[:, 0] == b, 1]) if li.size else np.zeros(0, np.int64)
        if pos.size and not np.array_equal(pos, np.arange(pos.size)):
            raise ValueError(f"For 'CTCLoss', the label positions of batch entry {b} must be 0..len-1, but got "
                             f"{pos.tolist()}.")
        if pos.size > sl[b] and not ignore_longer:
            raise ValueError(f"For 'CTCLoss', input time (sequence length) must be greater than output size (label "
                             f"length), but got sequence length: {int(sl[b])} and label length: {pos.size} (batch "
                             f"entry {b}); set ignore_longer_outputs_than_inputs=True to give such entries loss 0.")
