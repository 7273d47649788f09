"""Stacked recurrent layers (MindSpore 2.10's `mindspore.nn.RNN`, `LSTM`, `GRU`).

The time loop is a Python loop, unrolled when a graph is traced (the sequence length is part of the compiled
signature, like every shape). The input projection x·W_ihᵀ + b_ih of all time steps is one matmul per layer and
direction; each step then adds h·W_hhᵀ + b_hh and applies the cell of rnn_cells.py. Variable lengths (`seq_length`)
are handled as MindSpore's CPU/GPU implementation does: past its length a sequence keeps its last state and emits
zeros, and the reverse direction reads each sequence's first `seq_length[b]` steps backwards (ReverseSequence).
"""
import logging
import math

from ... import ops as _ops
from ...common.tensor import Tensor as _Tensor
from ...ops import _kernels
from ...common import dtype as mstype
from ...common.initializer import Uniform, initializer
from ...common.parameter import Parameter, ParameterTuple
from ..cell import Cell
from .basic import Dropout
from .rnn_cells import (GATES, STEPS, _check_bool, _check_lstm_state, _check_param_dtype, _check_positive_int,
                        _check_shape, _check_tensor, _linear)

__all__ = ["RNN", "LSTM", "GRU"]

_logger = logging.getLogger("kiln.nn")


def _reverse_index(seq_length, steps, batch):
    """Row indices into x.reshape(steps·batch, F) that reverse each sequence's first seq_length[b] steps and keep the
    rest in place (MindSpore's ReverseSequence(seq_dim=0, batch_dim=1)). Lengths are clamped to [0, steps]."""
    dt = seq_length.dtype
    lengths = _kernels.reshape(seq_length, [1, batch])
    lengths = _ops.minimum(_ops.maximum(lengths, _kernels.full([], 0, dt)), _kernels.full([], steps, dt))
    t = _kernels.reshape(_kernels.arange(0, steps, 1, dt), [steps, 1])
    t_full = _kernels.broadcast_to(t, [steps, batch])
    rev = _ops.sub(_ops.sub(lengths, _kernels.full([], 1, dt)), t)
    src_t = _kernels.select(_ops.less(t, lengths), rev, t_full)
    cols = _kernels.reshape(_kernels.arange(0, batch, 1, dt), [1, batch])
    return _kernels.reshape(_ops.add(_ops.mul(src_t, _kernels.full([], batch, dt)), cols), [steps * batch])


def _reverse_sequence(x, index):
    """x (steps, batch, F) with rows taken by `index` (from _reverse_index)."""
    steps, batch, feat = x.shape
    return _kernels.reshape(_kernels.gather(_kernels.reshape(x, [steps * batch, feat]), index, 0), [steps, batch, feat])


def _split_steps(x, steps):
    """x (steps·n, F) → steps Tensors (n, F), split by halves recursively.

    One flat split would cost O(steps²) in the backward pass: each slice's gradient is scattered into a zero tensor of
    the whole input's size and the steps of them are summed. Halving scatters each piece only into its parent, so the
    backward pass costs O(steps·log steps) copies of x instead."""
    if steps == 1:
        return [x]
    half = steps // 2
    n = x.shape[0] // steps
    a, b = _kernels.split(x, [half * n, (steps - half) * n], 0)
    return _split_steps(a, half) + _split_steps(b, steps - half)


def _step_masks(seq_length, steps, batch):
    """steps Tensors (batch, 1) of bool: True where t < seq_length[b]."""
    dt = seq_length.dtype
    t = _kernels.reshape(_kernels.arange(0, steps, 1, dt), [steps, 1, 1])
    valid = _ops.less(t, _kernels.reshape(seq_length, [1, batch, 1]))
    return [_kernels.reshape(m, [batch, 1]) for m in _kernels.split(valid, [1] * steps, 0)]


class _RNNBase(Cell):
    """Shared by RNN, LSTM and GRU: Parameters, argument checks and the stacked (bi)directional loop."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, has_bias=True, batch_first=False, dropout=0.,
                 bidirectional=False, dtype=mstype.float32):
        super().__init__()
        name = self.cls_name
        self.hidden_size = _check_positive_int(hidden_size, "hidden_size", name)
        self.input_size = _check_positive_int(input_size, "input_size", name)
        self.num_layers = _check_positive_int(num_layers, "num_layers", name)
        if isinstance(dropout, bool) or not isinstance(dropout, float):
            raise TypeError(f"For '{name}', the type of 'dropout' must be 'float', but got "
                            f"'{type(dropout).__name__}'.")
        _check_bool(has_bias, "has_bias", name)
        _check_bool(batch_first, "batch_first", name)
        _check_bool(bidirectional, "bidirectional", name)
        _check_param_dtype(dtype, name)
        if not 0 <= dropout < 1:
            raise ValueError(f"For '{name}', the 'dropout' must be a number in range [0, 1) representing the "
                             f"probability of an element being zeroed, but got {dropout}.")
        if dropout > 0 and num_layers == 1:
            _logger.warning("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                            "expects num_layers greater than 1, but got dropout=%s and num_layers=%s", dropout,
                            num_layers)
        self.mode = mode
        self.is_lstm = mode == "LSTM"
        self.batch_first = batch_first
        self.dropout = dropout
        self.dropout_op = Dropout(p=float(dropout))
        self.bidirectional = bidirectional
        self.has_bias = has_bias
        self.num_directions = 2 if bidirectional else 1
        gate_size = GATES[mode] * self.hidden_size
        stdv = 1 / math.sqrt(self.hidden_size)
        w_ih, w_hh, b_ih, b_hh = [], [], [], []
        for layer in range(self.num_layers):
            for direction in range(self.num_directions):
                in_size = self.input_size if layer == 0 else self.hidden_size * self.num_directions
                sfx = f"l{layer}" + ("_reverse" if direction == 1 else "")

                def make(shape, pname):
                    return Parameter(initializer(Uniform(stdv), shape, dtype), name=pname)
                w_ih.append(make([gate_size, in_size], "weight_ih_" + sfx))
                w_hh.append(make([gate_size, self.hidden_size], "weight_hh_" + sfx))
                if has_bias:
                    b_ih.append(make([gate_size], "bias_ih_" + sfx))
                    b_hh.append(make([gate_size], "bias_hh_" + sfx))
        # MindSpore's attribute names and order (all weight_ih, then weight_hh, bias_ih, bias_hh): checkpoints
        # written by either framework load into the other.
        self.w_ih_list = ParameterTuple(w_ih)
        self.w_hh_list = ParameterTuple(w_hh)
        self.b_ih_list = ParameterTuple(b_ih)
        self.b_hh_list = ParameterTuple(b_hh)

    # ----------------------------------------------------------------------------------------- input checks
    def _check_inputs(self, x, hx, seq_length):
        name = self.cls_name
        _check_tensor(x, "x", name)
        if x.ndim != 3:
            layout = "(batch_size, seq_len, input_size)" if self.batch_first else "(seq_len, batch_size, input_size)"
            raise ValueError(f"For '{name}', the 'x' must be a 3-D Tensor {layout}, but got a {x.ndim}-D Tensor of "
                             f"shape {tuple(x.shape)}.")
        if x.shape[2] != self.input_size:
            raise ValueError(f"For '{name}', the last dimension of 'x' must be input_size={self.input_size}, but got "
                             f"shape {tuple(x.shape)}.")
        batch, steps = (x.shape[0], x.shape[1]) if self.batch_first else (x.shape[1], x.shape[0])
        if steps == 0:
            raise ValueError(f"For '{name}', the sequence length of 'x' must be positive, but got x of shape "
                             f"{tuple(x.shape)}.")
        expected = (self.num_layers * self.num_directions, batch, self.hidden_size)
        meaning = "(num_directions * num_layers, batch_size, hidden_size)"
        if hx is not None:
            if self.is_lstm:
                hs = _check_lstm_state(hx, name)
                for i, h in enumerate(hs):
                    _check_tensor(h, f"hx[{i}]", name, dtype=x.dtype)
                    _check_shape(h, f"hx[{i}]", expected, name, meaning)
            else:
                if isinstance(hx, (tuple, list)):
                    raise TypeError(f"For '{name}', the 'hx' must be a Tensor, but got {type(hx).__name__}.")
                _check_tensor(hx, "hx", name, dtype=x.dtype)
                _check_shape(hx, "hx", expected, name, meaning)
        if seq_length is not None:
            if not isinstance(seq_length, _Tensor):
                raise TypeError(f"For '{name}', the 'seq_length' must be a Tensor, but got "
                                f"{type(seq_length).__name__}.")
            if seq_length.dtype not in (mstype.int32, mstype.int64):
                raise TypeError(f"For '{name}', the 'seq_length' should be one of [mindspore.int32, mindspore.int64],"
                                f" but got '{seq_length.dtype}'.")
            if seq_length.ndim != 1 or seq_length.shape[0] != batch:
                raise ValueError(f"For '{name}' batch size of x and seq_length must be equal, but got {batch} of x "
                                 f"and seq_length of shape {tuple(seq_length.shape)}.")
        return steps, batch

    # ------------------------------------------------------------------------------------------ the loop
    def _run(self, x, state, masks, w_ih, w_hh, b_ih, b_hh, backward):
        """One direction of one layer over x (steps, batch, F). state: h or (h, c) of (batch, hidden).
        Returns (outputs (steps, batch, hidden) in time order, final state)."""
        steps, batch, feat = x.shape
        gi = _linear(_kernels.reshape(x, [steps * batch, feat]), w_ih, b_ih)
        gis = _split_steps(gi, steps)  # steps Tensors (batch, gates·hidden)
        step = STEPS[self.mode]
        order = range(steps - 1, -1, -1) if backward else range(steps)
        outs = [None] * steps
        for t in order:
            new = step(gis[t], state, w_hh, b_hh)
            if masks is None:
                state = new
                outs[t] = new[0] if self.is_lstm else new
            else:
                m = masks[t]
                if self.is_lstm:
                    state = (_kernels.select(m, new[0], state[0]), _kernels.select(m, new[1], state[1]))
                    out = new[0]
                else:
                    state = _kernels.select(m, new, state)
                    out = new
                outs[t] = _kernels.select(m, out, _kernels.zeros_like(out))
        return _kernels.stack(outs, 0), state

    def construct(self, x, hx=None, seq_length=None):
        steps, batch = self._check_inputs(x, hx, seq_length)
        dt = x.dtype
        n_states = self.num_layers * self.num_directions
        if hx is None:
            zeros = _kernels.full([n_states, batch, self.hidden_size], 0.0, dt)
            hx = (zeros, zeros) if self.is_lstm else zeros

        def per_layer(h):
            return [_kernels.reshape(p, [batch, self.hidden_size]) for p in _kernels.split(h, [1] * n_states, 0)]
        if self.is_lstm:
            init = list(zip(per_layer(hx[0]), per_layer(hx[1])))
        else:
            init = per_layer(hx)
        if self.batch_first:
            x = _kernels.transpose(x, [1, 0, 2])
        masks = rev_index = None
        if seq_length is not None:
            masks = _step_masks(seq_length, steps, batch)
            if self.bidirectional:
                rev_index = _reverse_index(seq_length, steps, batch)

        def cast(w):
            return w if w.dtype == dt else _kernels.cast(w, dt)
        finals = []
        layer_in = x
        for layer in range(self.num_layers):
            outs = []
            for d in range(self.num_directions):
                k = layer * self.num_directions + d
                w_ih, w_hh = cast(self.w_ih_list[k]), cast(self.w_hh_list[k])
                b_ih = cast(self.b_ih_list[k]) if self.has_bias else None
                b_hh = cast(self.b_hh_list[k]) if self.has_bias else None
                if d == 1 and rev_index is not None:
                    out, fin = self._run(_reverse_sequence(layer_in, rev_index), init[k], masks, w_ih, w_hh, b_ih,
                                         b_hh, backward=False)
                    out = _reverse_sequence(out, rev_index)
                else:
                    out, fin = self._run(layer_in, init[k], masks, w_ih, w_hh, b_ih, b_hh, backward=d == 1)
                outs.append(out)
                finals.append(fin)
            layer_in = outs[0] if len(outs) == 1 else _kernels.concat(outs, 2)
            if self.dropout != 0 and layer < self.num_layers - 1:
                layer_in = self.dropout_op(layer_in)
        output = _kernels.transpose(layer_in, [1, 0, 2]) if self.batch_first else layer_in
        if self.is_lstm:
            return output, (_kernels.stack([f[0] for f in finals], 0), _kernels.stack([f[1] for f in finals], 0))
        return output, _kernels.stack(finals, 0)

    def extend_repr(self):
        return (f"input_size={self.input_size}, hidden_size={self.hidden_size}, num_layers={self.num_layers}, "
                f"has_bias={self.has_bias}, batch_first={self.batch_first}, dropout={self.dropout}, "
                f"bidirectional={self.bidirectional}")


_LAYER_DOC = r"""

    Args:
        input_size (int): features of x. hidden_size (int): features of the hidden state.
        num_layers (int): stacked layers, default 1; layer l > 0 reads the previous layer's output
            (num_directions·hidden_size features).
        has_bias (bool): whether each layer has b_ih and b_hh. Default True.
        batch_first (bool): x and output are (batch, seq, feature) instead of (seq, batch, feature). Default False.
        dropout (float in [0, 1)): dropout on the outputs of every layer but the last, in training only. Default 0.0
            (an int is a TypeError, as in MindSpore).
        bidirectional (bool): also run each layer backwards in time; outputs concatenate (forward, backward) on the
            last axis. Default False.
        dtype: Parameter dtype (float16/float32/float64), default float32. Weights are cast to x's dtype.

    Inputs:
        x: (seq_len, batch_size, input_size), or (batch_size, seq_len, input_size) with batch_first; float16,
            float32 or float64 (MindSpore takes float16/float32).
        hx: {hx}, default zeros.
        seq_length: optional int32/int64 Tensor (batch_size,): each sequence's real length. Past it a sequence keeps
            its last state (so h_n is the state at its last real step) and emits zeros; the backward direction
            reverses only the first seq_length[b] steps. Lengths are clamped to [0, seq_len].

    Outputs: {outputs}
        Layer-major, direction-minor order along the first axis of the states: (l0 forward, l0 backward, l1 ...).

    Parameters: weight_ih_l{{k}}[_reverse] (gates·hidden, in), weight_hh_l{{k}}[_reverse] (gates·hidden, hidden),
        bias_ih_l{{k}}[_reverse], bias_hh_l{{k}}[_reverse] (gates·hidden,) with gates = {gates}; all drawn from
        U(−1/√hidden_size, 1/√hidden_size). Names and order are MindSpore's (all weight_ih, then weight_hh, bias_ih,
        bias_hh), so checkpoints interchange.

    Raises:
        TypeError: input_size/hidden_size/num_layers not int; has_bias/batch_first/bidirectional not bool; dropout not
            a float; x not a float Tensor; {hx_type}; hx of another dtype than x; seq_length not an int32/int64 Tensor.
        ValueError: sizes ≤ 0; dropout outside [0, 1); x not 3-D, its last dim ≠ input_size or seq_len 0; hx not
            (num_directions·num_layers, batch_size, hidden_size); seq_length not of shape (batch_size,).{extra}
"""
_STATE_OUT = ("output (seq_len, batch_size, num_directions·hidden_size) (batch first with batch_first), and h_n "
              "(num_directions·num_layers, batch_size, hidden_size): the tuple (output, h_n).")


class RNN(_RNNBase):
    __doc__ = (r"""Stacked Elman RNN: h_t = act(W_ih x_t + b_ih + W_hh h_(t−1) + b_hh), act = tanh or ReLU.

    nonlinearity (str, keyword): 'tanh' (default) or 'relu'.""" + _LAYER_DOC.format(
        hx="(num_directions·num_layers, batch_size, hidden_size)", outputs=_STATE_OUT, gates="1",
        hx_type="hx not a Tensor", extra="\n        ValueError: nonlinearity not 'tanh' or 'relu'."))

    def __init__(self, *args, nonlinearity="tanh", **kwargs):
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"For '{type(self).__name__}', the 'nonlinearity' must be in ['tanh', 'relu'], but got "
                             f"{nonlinearity}.")
        super().__init__(mode, *args, **kwargs)
        self.nonlinearity = nonlinearity


class GRU(_RNNBase):
    __doc__ = (r"""Stacked GRU: r = σ(W_ir x + b_ir + W_hr h + b_hr), z = σ(W_iz x + b_iz + W_hz h + b_hz),
    n = tanh(W_in x + b_in + r·(W_hn h + b_hn)), h' = (1 − z)·n + z·h (Cho et al. 2014; gate rows r, z, n).""" +
               _LAYER_DOC.format(hx="(num_directions·num_layers, batch_size, hidden_size)", outputs=_STATE_OUT,
                                 gates="3 (r, z, n)", hx_type="hx not a Tensor", extra=""))

    def __init__(self, *args, **kwargs):
        super().__init__("GRU", *args, **kwargs)


class LSTM(_RNNBase):
    __doc__ = (r"""Stacked LSTM: i, f, o = σ(W_i· x + b_i· + W_h· h + b_h·), g = tanh(...),
    c' = f·c + i·g, h' = o·tanh(c') (Hochreiter & Schmidhuber 1997; gate rows i, f, g, o).""" + _LAYER_DOC.format(
        hx="a tuple (h_0, c_0) of two (num_directions·num_layers, batch_size, hidden_size) Tensors",
        outputs="the tuple (output, (h_n, c_n)); output as for GRU, h_n and c_n (num_directions·num_layers, "
                "batch_size, hidden_size).",
        gates="4 (i, f, g, o)", hx_type="hx not a tuple of 2 Tensors", extra=""))

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)
