"""nn.TimeDistributed (MindSpore 2.10's mindspore/nn/layer/timedistributed.py, deprecated there since 2.8.0 but
kept): applies a layer to every time step of an input."""
import numbers

from ...common.tensor import Tensor as _Tensor
from ...ops import _kernels
from ...ops.primitives import Primitive
from ..cell import Cell

__all__ = ["TimeDistributed"]


def _check_int(value, name, cls_name):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"For '{cls_name}', the type of '{name}' must be 'int', but got '{type(value).__name__}'.")
    return int(value)


class TimeDistributed(Cell):
    r"""Applies `layer` to every time step of x (rank ≥ 3), the time steps along `time_axis`.

    Args:
        layer (Cell or Primitive): the wrapped layer; it must return one Tensor.
        time_axis (int): the time axis of x (taken modulo x's rank).
        reshape_with_axis (int or None): when given, the time axis is moved next to this axis and merged with it
            (one call of `layer` on the merged batch, then the output is split back), which is faster; when None,
            x is unstacked along time_axis, `layer` applied to each slice and the results stacked along time_axis
            (more general: e.g. for BatchNorm, whose statistics must stay per step). MindSpore's index rules:
            with r = reshape_with_axis mod rank and t = time_axis mod rank, the time axis goes to
            rank − 2 when r is the last axis, else to r + 1 when t > r, else to r − 1; the merged pair starts at
            the smaller of that position and r; the output's leading dimension is inferred (−1).

    Inputs: x (Tensor) of rank ≥ 3. Outputs: the stacked / reshaped results.

    Raises:
        TypeError: layer neither a Cell nor a Primitive; time_axis / reshape_with_axis not int (bool refused);
            x or the layer's output not a Tensor ("For 'TimeDistributed', the inputs and outputs must be a Tensor.").
        ValueError: x of rank < 3; without reshape_with_axis, time_axis beyond the layer output's rank; with it, an
            output whose dimension at the merged position differs from the input's (MindSpore's messages).
    """

    def __init__(self, layer, time_axis, reshape_with_axis=None):
        if not isinstance(layer, (Cell, Primitive)):
            raise TypeError(f"For 'TimeDistributed', the 'layer' must be Cell or Primitive instance, but got type: "
                            f"{type(layer).__name__}.")
        super().__init__()
        _check_int(time_axis, "time_axis", "TimeDistributed")
        if reshape_with_axis is not None:
            _check_int(reshape_with_axis, "reshape_with_axis", "TimeDistributed")
        self.layer = layer
        self.time_axis = time_axis
        self.reshape_with_axis = reshape_with_axis

    @staticmethod
    def _check_tensor(value):
        if not isinstance(value, _Tensor):
            raise TypeError("For 'TimeDistributed', the inputs and outputs must be a Tensor.")

    def construct(self, inputs):
        self._check_tensor(inputs)
        shape = tuple(inputs.shape)
        rank = len(shape)
        if rank < 3:
            raise ValueError(f"For 'TimeDistributed', the inputs shape must be at least 3D, but got {rank}.")
        t = self.time_axis % rank
        if self.reshape_with_axis is None:
            steps = []
            for i in range(shape[t]):
                item = _kernels.squeeze(_kernels.strided_slice(inputs, [0] * t + [i] + [0] * (rank - t - 1),
                                                         list(shape[:t]) + [i + 1] + list(shape[t + 1:]),
                                                         [1] * rank), [t])
                out = self.layer(item)
                self._check_tensor(out)
                if t > out.ndim:
                    raise ValueError(f"For 'TimeDistributed', the value of 'time_axis' must be in range of "
                                     f"[{-out.ndim - 1}, {out.ndim}], but got {t}.")
                steps.append(out)
            return _kernels.stack(steps, t)
        r = self.reshape_with_axis % rank
        if r == rank - 1:
            t_new = rank - 2
        else:
            t_new = r + 1 if t > r else r - 1
        pos = t_new if t_new < r else r
        lo, hi = (t_new, t) if t_new < t else (t, t_new)
        perm = tuple(range(rank))
        perm = perm[:lo] + (perm[hi],) + perm[lo:hi] + perm[hi + 1:]
        moved = _kernels.transpose(inputs, list(perm))
        moved_shape = tuple(moved.shape)
        merged = _kernels.reshape(moved, list(moved_shape[:pos]) + [-1] + list(moved_shape[pos + 2:]))
        out = self.layer(merged)
        self._check_tensor(out)
        out_shape = tuple(out.shape)
        in_shape = tuple(merged.shape)
        if pos >= len(out_shape) or in_shape[pos] != out_shape[pos]:
            raise ValueError(f"For 'TimeDistributed', the 'reshape_with_axis' is invalid in the input and output. The "
                             f"'reshape_pos' must be less than the length of 'outputs_shape', and the "
                             f"'inputs_shape[reshape_pos]' must be equal to 'outputs_shape[reshape_pos]', but got "
                             f"'reshape_pos': {pos}, 'inputs_shape': {in_shape}, 'outputs_shape': {out_shape}. You "
                             f"may try pass parameters without 'reshape_with_axis'.")
        new_shape = out_shape[:pos] + moved_shape[pos:pos + 2]
        if pos + 1 < len(out_shape):
            new_shape += out_shape[pos + 1:]
        return _kernels.reshape(out, [-1] + list(new_shape[1:]))
