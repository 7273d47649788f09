"""Recurrent cells (MindSpore 2.10's `mindspore.nn.RNNCell`, `LSTMCell`, `GRUCell`) and the per-step functions that
the stacked layers in rnns.py share.

Every step is written with Kiln's ops (matmul, add, split, sigmoid, tanh, relu, mul), so autodiff, PyNative and
Graph mode (@jit / GRAPH_MODE) all work through the ordinary tracer and tape; no RNN-specific kernel exists.

Gate orders and formulas follow MindSpore (and PyTorch, which uses the same layouts):
- RNN:  h' = act(x Wihᵀ + b_ih + h Whhᵀ + b_hh), act = tanh or relu.
- LSTM: the 4·hidden rows of W are the gates (i, f, g, o): c' = σ(f)·c + σ(i)·tanh(g), h' = σ(o)·tanh(c').
- GRU:  the 3·hidden rows are (r, z, n): r = σ(xr + hr), z = σ(xz + hz), n = tanh(xn + r·hn),
        h' = n + z·(h − n)  (= (1 − z)·n + z·h).
"""
import math
import numbers

from ... import ops as _ops
from ...common.tensor import Tensor as _Tensor
from ...ops import _kernels
from ...common import dtype as mstype
from ...common.initializer import Uniform, initializer
from ...common.parameter import Parameter
from ..cell import Cell

__all__ = ["RNNCell", "LSTMCell", "GRUCell"]

# Float dtypes a recurrent layer computes in (MindSpore's CPU cells take float16/float32; Kiln also takes float64).
_FLOAT_INPUTS = (mstype.float16, mstype.bfloat16, mstype.float32, mstype.float64)  # bfloat16: under amp


# ------------------------------------------------------------------------------------------ argument checks
def _check_positive_int(value, name, cls_name):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"For '{cls_name}', the '{name}' must be int, but got {type(value).__name__}.")
    if value <= 0:
        raise ValueError(f"For '{cls_name}', the '{name}' must be int and must > 0, but got '{value}'.")
    return int(value)


def _check_bool(value, name, cls_name):
    if not isinstance(value, bool):
        raise TypeError(f"For '{cls_name}', the type of '{name}' should be 'bool', but got type "
                        f"'{type(value).__name__}'.")
    return value


def _check_param_dtype(dtype, cls_name):
    if dtype not in (mstype.float16, mstype.float32, mstype.float64):
        raise TypeError(f"For '{cls_name}', the 'dtype' must be float16, float32 or float64, but got {dtype}.")
    return dtype


def _check_tensor(x, name, cls_name, ndim=None, dtype=None):
    """x must be a float Tensor (of rank `ndim` and dtype `dtype` when given)."""
    if not isinstance(x, _Tensor):
        raise TypeError(f"For '{cls_name}', the '{name}' must be a Tensor, but got {type(x).__name__}.")
    if x.dtype not in _FLOAT_INPUTS:
        raise TypeError(f"For '{cls_name}', the '{name}' must be a float16, bfloat16, float32 or float64 Tensor, but got "
                        f"{x.dtype}.")
    if dtype is not None and x.dtype != dtype:
        raise TypeError(f"For '{cls_name}', the type of '{name}' should be same as 'x', but got 'x' with type "
                        f"{dtype} and '{name}' with type {x.dtype}.")
    if ndim is not None and x.ndim != ndim:
        raise ValueError(f"For '{cls_name}', the '{name}' must be a {ndim}-D Tensor, but got a {x.ndim}-D Tensor of "
                         f"shape {tuple(x.shape)}.")
    return x


def _check_shape(x, name, expected, cls_name, meaning):
    if tuple(x.shape) != tuple(expected):
        raise ValueError(f"For '{cls_name}', the shape of '{name}' must be {tuple(expected)} {meaning}, but got "
                         f"{tuple(x.shape)}.")


def _check_lstm_state(hx, cls_name):
    if not isinstance(hx, tuple):
        raise TypeError(f"For '{cls_name}', the 'hx' must be a tuple (h, c) of two Tensors, but got "
                        f"{type(hx).__name__}.")
    if len(hx) != 2:
        raise TypeError(f"For '{cls_name}', the length of 'hx' must be '2', but got '{len(hx)}'.")
    return hx


# ------------------------------------------------------------------------------------------- step functions
def _linear(x, w, b):
    """x Wᵀ (+ b): (N, in) × (out, in) → (N, out)."""
    y = _kernels.matmul(x, w, False, True)
    return y if b is None else _ops.add(y, b)


def rnn_tanh_step(gi, h, w_hh, b_hh):
    """One Elman step with tanh, given the input projection gi = x Wihᵀ + b_ih of shape (batch, hidden)."""
    return _ops.tanh(_ops.add(gi, _linear(h, w_hh, b_hh)))


def rnn_relu_step(gi, h, w_hh, b_hh):
    """One Elman step with ReLU (see rnn_tanh_step)."""
    return _ops.relu(_ops.add(gi, _linear(h, w_hh, b_hh)))


def lstm_step(gi, state, w_hh, b_hh):
    """One LSTM step: gi (batch, 4·hidden) = x Wihᵀ + b_ih; state = (h, c). Returns (h', c')."""
    h, c = state
    gates = _ops.add(gi, _linear(h, w_hh, b_hh))
    n = h.shape[-1]
    i, f, g, o = _kernels.split(gates, [n, n, n, n], 1)
    c2 = _ops.add(_ops.mul(_ops.sigmoid(f), c), _ops.mul(_ops.sigmoid(i), _ops.tanh(g)))
    h2 = _ops.mul(_ops.sigmoid(o), _ops.tanh(c2))
    return h2, c2


def gru_step(gi, h, w_hh, b_hh):
    """One GRU step: gi (batch, 3·hidden) = x Wihᵀ + b_ih. Returns h'."""
    gh = _linear(h, w_hh, b_hh)
    n = h.shape[-1]
    i_r, i_z, i_n = _kernels.split(gi, [n, n, n], 1)
    h_r, h_z, h_n = _kernels.split(gh, [n, n, n], 1)
    r = _ops.sigmoid(_ops.add(i_r, h_r))
    z = _ops.sigmoid(_ops.add(i_z, h_z))
    new = _ops.tanh(_ops.add(i_n, _ops.mul(r, h_n)))
    return _ops.add(new, _ops.mul(z, _ops.sub(h, new)))


STEPS = {"RNN_TANH": rnn_tanh_step, "RNN_RELU": rnn_relu_step, "LSTM": lstm_step, "GRU": gru_step}
GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


# ------------------------------------------------------------------------------------------------- cells
class _RNNCellBase(Cell):
    """Holds weight_ih (gates·hidden, input), weight_hh (gates·hidden, hidden), bias_ih, bias_hh (gates·hidden,),
    each drawn from U(−1/√hidden_size, 1/√hidden_size) (MindSpore's RNNCellBase.reset_parameters)."""

    def __init__(self, input_size, hidden_size, has_bias, num_chunks, dtype):
        super().__init__()
        name = self.cls_name
        _check_bool(has_bias, "has_bias", name)
        self.hidden_size = _check_positive_int(hidden_size, "hidden_size", name)
        self.input_size = _check_positive_int(input_size, "input_size", name)
        _check_param_dtype(dtype, name)
        self.has_bias = has_bias
        g = num_chunks * self.hidden_size
        self.weight_ih = Parameter(initializer("zeros", [g, self.input_size], dtype), name="weight_ih")
        self.weight_hh = Parameter(initializer("zeros", [g, self.hidden_size], dtype), name="weight_hh")
        if has_bias:
            self.bias_ih = Parameter(initializer("zeros", [g], dtype), name="bias_ih")
            self.bias_hh = Parameter(initializer("zeros", [g], dtype), name="bias_hh")
        else:
            self.bias_ih = None
            self.bias_hh = None
        self.reset_parameters(dtype)

    def reset_parameters(self, dtype=mstype.float32):
        """Redraws every Parameter from U(−1/√hidden_size, 1/√hidden_size) in `dtype` (default float32)."""
        stdv = 1 / math.sqrt(self.hidden_size)
        for p in self.get_parameters():
            p.set_data(initializer(Uniform(stdv), p.shape, dtype))

    def _weights(self, dtype):
        ws = [self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh]
        return [w if w is None or w.dtype == dtype else _kernels.cast(w, dtype) for w in ws]

    def _check_x(self, x):
        _check_tensor(x, "x", self.cls_name, ndim=2)
        if x.shape[1] != self.input_size:
            raise ValueError(f"For '{self.cls_name}', the last dimension of 'x' must be input_size="
                             f"{self.input_size}, but got shape {tuple(x.shape)}.")
        return x

    def _check_h(self, h, name, x):
        _check_tensor(h, name, self.cls_name, ndim=2, dtype=x.dtype)
        _check_shape(h, name, (x.shape[0], self.hidden_size), self.cls_name, "(batch_size, hidden_size)")
        return h

    def extend_repr(self):
        return f"input_size={self.input_size}, hidden_size={self.hidden_size}, has_bias={self.has_bias}"


class RNNCell(_RNNCellBase):
    r"""An Elman RNN cell: h' = act(x W_ihᵀ + b_ih + h W_hhᵀ + b_hh), act = tanh or ReLU.

    Args:
        input_size (int), hidden_size (int): positive.
        has_bias (bool): whether the cell has b_ih and b_hh. Default True.
        nonlinearity (str): 'tanh' (default) or 'relu'.
        dtype: Parameter dtype (float16/float32/float64, default float32).

    Inputs:
        x: (batch_size, input_size), float16/float32/float64. hx: (batch_size, hidden_size), x's dtype.
    Outputs: h' of shape (batch_size, hidden_size), x's dtype (weights are cast to x's dtype).

    Parameters: weight_ih (hidden, input), weight_hh (hidden, hidden), bias_ih (hidden,), bias_hh (hidden,), drawn
    from U(−1/√hidden_size, 1/√hidden_size).

    Raises:
        TypeError: input_size/hidden_size not int, has_bias not bool, nonlinearity not str; x or hx not a float
            Tensor, hx of another dtype than x.
        ValueError: sizes ≤ 0; nonlinearity not 'tanh'/'relu'; x not 2-D or its last dim ≠ input_size; hx shape not
            (batch_size, hidden_size).
    """

    _non_linearity = ["tanh", "relu"]

    def __init__(self, input_size, hidden_size, has_bias=True, nonlinearity="tanh", dtype=mstype.float32):
        super().__init__(input_size, hidden_size, has_bias, 1, dtype)
        if not isinstance(nonlinearity, str):
            raise TypeError(f"For '{self.cls_name}', the type of 'nonlinearity' should be 'str', but got type "
                            f"'{type(nonlinearity).__name__}'.")
        if nonlinearity not in self._non_linearity:
            raise ValueError(f"For '{self.cls_name}', the 'nonlinearity' must be str and must be in "
                             f"'{self._non_linearity}', but got '{nonlinearity}'.")
        self.nonlinearity = nonlinearity

    def construct(self, x, hx):
        x = self._check_x(x)
        hx = self._check_h(hx, "hx", x)
        w_ih, w_hh, b_ih, b_hh = self._weights(x.dtype)
        step = rnn_tanh_step if self.nonlinearity == "tanh" else rnn_relu_step
        return step(_linear(x, w_ih, b_ih), hx, w_hh, b_hh)

    def extend_repr(self):
        return super().extend_repr() + f", nonlinearity={self.nonlinearity}"


class LSTMCell(_RNNCellBase):
    r"""A Long Short-Term Memory cell (gate order i, f, g, o in the rows of the weights):

        i = σ(W_ii x + b_ii + W_hi h + b_hi), f = σ(W_if x + b_if + W_hf h + b_hf),
        g = tanh(W_ig x + b_ig + W_hg h + b_hg), o = σ(W_io x + b_io + W_ho h + b_ho),
        c' = f·c + i·g, h' = o·tanh(c')   (Hochreiter & Schmidhuber 1997; MindSpore's LSTMCell).

    Args:
        input_size (int), hidden_size (int): positive.
        has_bias (bool): default True.
        dtype: Parameter dtype (default float32).

    Inputs: x (batch_size, input_size); hx, a tuple (h, c) of two (batch_size, hidden_size) Tensors of x's dtype.
    Outputs: the tuple (h', c'), both (batch_size, hidden_size).

    Parameters: weight_ih (4·hidden, input), weight_hh (4·hidden, hidden), bias_ih / bias_hh (4·hidden,).

    Raises:
        TypeError: bad constructor argument types; x not a float Tensor; hx not a tuple, or not of length 2, or
            holding non-Tensors or another dtype than x.
        ValueError: x not 2-D or its last dim ≠ input_size; h or c not (batch_size, hidden_size).
    """

    def __init__(self, input_size, hidden_size, has_bias=True, dtype=mstype.float32):
        super().__init__(input_size, hidden_size, has_bias, 4, dtype)

    def construct(self, x, hx):
        x = self._check_x(x)
        h, c = _check_lstm_state(hx, self.cls_name)
        self._check_h(h, "hx[0]", x)
        self._check_h(c, "hx[1]", x)
        w_ih, w_hh, b_ih, b_hh = self._weights(x.dtype)
        return lstm_step(_linear(x, w_ih, b_ih), (h, c), w_hh, b_hh)


class GRUCell(_RNNCellBase):
    r"""A Gated Recurrent Unit cell (gate order r, z, n in the rows of the weights):

        r = σ(W_ir x + b_ir + W_hr h + b_hr), z = σ(W_iz x + b_iz + W_hz h + b_hz),
        n = tanh(W_in x + b_in + r·(W_hn h + b_hn)), h' = (1 − z)·n + z·h   (Cho et al. 2014; MindSpore's GRUCell).

    Args:
        input_size (int), hidden_size (int): positive.
        has_bias (bool): default True.
        dtype: Parameter dtype (default float32).

    Inputs: x (batch_size, input_size); hx (batch_size, hidden_size) of x's dtype.
    Outputs: h' (batch_size, hidden_size).

    Parameters: weight_ih (3·hidden, input), weight_hh (3·hidden, hidden), bias_ih / bias_hh (3·hidden,).

    Raises: as RNNCell (without the nonlinearity argument).
    """

    def __init__(self, input_size, hidden_size, has_bias=True, dtype=mstype.float32):
        super().__init__(input_size, hidden_size, has_bias, 3, dtype)

    def construct(self, x, hx):
        x = self._check_x(x)
        hx = self._check_h(hx, "hx", x)
        w_ih, w_hh, b_ih, b_hh = self._weights(x.dtype)
        return gru_step(_linear(x, w_ih, b_ih), hx, w_hh, b_hh)
