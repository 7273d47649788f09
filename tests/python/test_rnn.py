"""nn.RNN / LSTM / GRU and RNNCell / LSTMCell / GRUCell: outputs against a NumPy reference for every option
(bidirectional, stacked, batch_first, seq_length, initial states, no bias), gradients against float64 finite
differences, PyNative vs GRAPH_MODE / jit, MindSpore 2.10's Parameter names, shapes and order, and bad inputs.

Values were also checked against real MindSpore 2.10 (same weights set in both; outputs and gradients agree to 1e-5):
the names/order list below is MindSpore's own output for nn.LSTM(3, 4, 2, bidirectional=True)."""
import numpy as np
import pytest

import kiln as ms
from kiln import Tensor, nn, ops

from helpers import N


def rng(seed):
    return np.random.default_rng(seed)


# ----------------------------------------------------------------------------------------- NumPy reference
def _sig(v):
    return 1 / (1 + np.exp(-v))


def np_step(mode, x, state, w_ih, w_hh, b_ih, b_hh):
    """One step of the cell `mode` in NumPy (PyTorch/MindSpore gate layouts)."""
    gi = x @ w_ih.T + (0 if b_ih is None else b_ih)
    h = state[0] if mode == "LSTM" else state
    gh = h @ w_hh.T + (0 if b_hh is None else b_hh)
    if mode == "RNN_TANH":
        return np.tanh(gi + gh)
    if mode == "RNN_RELU":
        return np.maximum(gi + gh, 0)
    if mode == "GRU":
        ir, iz, in_ = np.split(gi, 3, axis=1)
        hr, hz, hn = np.split(gh, 3, axis=1)
        r, z = _sig(ir + hr), _sig(iz + hz)
        n = np.tanh(in_ + r * hn)
        return (1 - z) * n + z * h
    i, f, g, o = np.split(gi + gh, 4, axis=1)
    c = _sig(f) * state[1] + _sig(i) * np.tanh(g)
    return _sig(o) * np.tanh(c), c


def np_layer(mode, net, x, hx=None, seq_length=None):
    """NumPy re-implementation of a stacked layer, read from the Kiln net's Parameters."""
    P = {p.name.split(".")[-1]: N(p).astype(np.float64) for p in net.get_parameters()}
    x = np.asarray(x, np.float64)
    if net.batch_first:
        x = x.transpose(1, 0, 2)
    T, B, _ = x.shape
    H, D, L = net.hidden_size, 2 if net.bidirectional else 1, net.num_layers
    lstm = mode == "LSTM"
    if hx is None:
        hx = (np.zeros((L * D, B, H)),) * 2 if lstm else np.zeros((L * D, B, H))
    lens = np.full(B, T) if seq_length is None else np.clip(np.asarray(seq_length), 0, T)
    finals_h, finals_c = [], []
    inp = x
    for layer in range(L):
        outs = []
        for d in range(D):
            k = layer * D + d
            sfx = f"l{layer}" + ("_reverse" if d else "")
            w = [P.get(n + sfx) for n in ("weight_ih_", "weight_hh_", "bias_ih_", "bias_hh_")]
            out = np.zeros((T, B, H))
            hN, cN = np.zeros((B, H)), np.zeros((B, H))
            for b in range(B):
                st = (hx[0][k, b:b + 1], hx[1][k, b:b + 1]) if lstm else hx[k, b:b + 1]
                ts = range(lens[b] - 1, -1, -1) if d else range(lens[b])
                for t in ts:
                    st = np_step(mode, inp[t, b:b + 1], st, *w)
                    out[t, b] = st[0][0] if lstm else st[0]
                hN[b] = st[0][0] if lstm else st[0]
                if lstm:
                    cN[b] = st[1][0]
            outs.append(out)
            finals_h.append(hN)
            finals_c.append(cN)
        inp = np.concatenate(outs, axis=2)
    out = inp.transpose(1, 0, 2) if net.batch_first else inp
    if lstm:
        return out, (np.stack(finals_h), np.stack(finals_c))
    return out, np.stack(finals_h)


def _mode_of(net):
    if isinstance(net, nn.LSTM):
        return "LSTM"
    if isinstance(net, nn.GRU):
        return "GRU"
    return "RNN_RELU" if net.nonlinearity == "relu" else "RNN_TANH"


def _make(cls, *args, **kw):
    if cls == "RNN_RELU":
        return nn.RNN(*args, nonlinearity="relu", **kw)
    return {"RNN_TANH": nn.RNN, "LSTM": nn.LSTM, "GRU": nn.GRU}[cls](*args, **kw)


def _inputs(net, r, T=5, B=3, hx=False, dtype=np.float32):
    shape = (B, T, net.input_size) if net.batch_first else (T, B, net.input_size)
    x = r.standard_normal(shape).astype(dtype)
    h = None
    if hx:
        hs = ((2 if net.bidirectional else 1) * net.num_layers, B, net.hidden_size)
        h = r.standard_normal(hs).astype(dtype)
        if isinstance(net, nn.LSTM):
            h = (h, r.standard_normal(hs).astype(dtype))
    return x, h


def _t(a):
    if a is None:
        return None
    if isinstance(a, tuple):
        return tuple(Tensor(v) for v in a)
    return Tensor(a)


def _cmp(got, want, rtol=1e-5, atol=1e-5):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _cmp(g, w, rtol, atol)
    else:
        assert got.shape == want.shape
        np.testing.assert_allclose(N(got), want, rtol=rtol, atol=atol)


# -------------------------------------------------------------------------------------------- structure
def test_parameter_names_shapes_and_order_are_mindspores():
    net = nn.LSTM(3, 4, 2, bidirectional=True)
    got = [(n, p.name, tuple(p.shape)) for n, p in net.parameters_and_names()]
    want = []
    for kind, cols in (("weight_ih", None), ("weight_hh", 4), ("bias_ih", 0), ("bias_hh", 0)):
        for layer in range(2):
            for sfx in ("", "_reverse"):
                n = f"{kind}_l{layer}{sfx}"
                c = cols if cols is not None else (3 if layer == 0 else 8)
                want.append((n, n, (16, c) if c else (16,)))
    assert got == want

    class Wrap(nn.Cell):
        def __init__(self):
            super().__init__()
            self.rnn = nn.GRU(3, 4, has_bias=False)
            self.cell = nn.GRUCell(3, 4)

    assert [(p.name, tuple(p.shape)) for p in Wrap().trainable_params()] == [
        ("rnn.weight_ih_l0", (12, 3)), ("rnn.weight_hh_l0", (12, 4)), ("cell.weight_ih", (12, 3)),
        ("cell.weight_hh", (12, 4)), ("cell.bias_ih", (12,)), ("cell.bias_hh", (12,))]
    assert [(p.name, tuple(p.shape)) for p in nn.RNNCell(5, 2, has_bias=False).get_parameters()] == [
        ("weight_ih", (2, 5)), ("weight_hh", (2, 2))]
    assert [tuple(p.shape) for p in nn.LSTMCell(5, 2).get_parameters()] == [(8, 5), (8, 2), (8,), (8,)]
    assert [tuple(p.shape) for p in nn.RNN(5, 2, 3).get_parameters()][:3] == [(2, 5), (2, 2), (2, 2)]


@pytest.mark.parametrize("make", [lambda: nn.GRU(6, 9, 2, bidirectional=True), lambda: nn.LSTMCell(6, 9),
                                  lambda: nn.RNNCell(6, 9)])
def test_initialisation_uniform_one_over_sqrt_hidden_and_seeded(make):
    ms.set_seed(11)
    a = [N(p) for p in make().get_parameters()]
    ms.set_seed(11)
    b = [N(p) for p in make().get_parameters()]
    bound = 1 / np.sqrt(9)
    allv = np.concatenate([v.ravel() for v in a])
    assert np.abs(allv).max() <= bound and np.abs(allv).max() > 0.9 * bound
    assert abs(allv.mean()) < 0.05 and np.std(allv) == pytest.approx(bound / np.sqrt(3), rel=0.15)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
    assert all(v.dtype == np.float32 for v in a)


def test_param_dtype_and_reset_parameters():
    net = nn.GRU(3, 4, dtype=ms.float16)
    assert all(p.dtype == ms.float16 for p in net.get_parameters())
    out, h = net(Tensor(np.ones((2, 1, 3), np.float32)))  # weights cast to x's dtype
    assert out.dtype == ms.float32 and h.dtype == ms.float32
    cell = nn.GRUCell(3, 4)
    before = N(cell.weight_ih)
    cell.reset_parameters()
    after = N(cell.weight_ih)
    assert not np.array_equal(before, after) and np.abs(after).max() <= 0.5


# -------------------------------------------------------------------------------------- forward values
LAYER_CASES = [
    ("RNN_TANH", {}, False, None),
    ("RNN_RELU", dict(num_layers=2), True, None),
    ("RNN_TANH", dict(bidirectional=True, has_bias=False, batch_first=True), False, [5, 2, 0]),
    ("GRU", {}, True, None),
    ("GRU", dict(num_layers=2, bidirectional=True), False, [3, 5, 1]),
    ("GRU", dict(batch_first=True, has_bias=False), True, [4, 5, 2]),
    ("LSTM", {}, False, None),
    ("LSTM", dict(num_layers=2, bidirectional=True, batch_first=True), True, None),
    ("LSTM", dict(bidirectional=True), True, [2, 5, 4]),
    ("LSTM", dict(num_layers=3), False, [1, 9, 5]),  # 9 > seq_len: clamped
]


@pytest.mark.parametrize("mode,kw,use_hx,seq", LAYER_CASES)
def test_layers_match_numpy(mode, kw, use_hx, seq):
    r = rng(1)
    net = _make(mode, 4, 3, **kw)
    x, hx = _inputs(net, r, hx=use_hx)
    seq_t = None if seq is None else Tensor(np.array(seq, np.int64 if mode == "LSTM" else np.int32))
    got = net(Tensor(x), _t(hx), seq_t)
    want = np_layer(mode, net, x, hx, seq)
    assert isinstance(got, tuple) and len(got) == 2
    if mode == "LSTM":
        assert isinstance(got[1], tuple) and len(got[1]) == 2
    _cmp(got, want)
    out = got[0]
    T, B = 5, 3
    assert out.shape == ((B, T) if net.batch_first else (T, B)) + ((2 if net.bidirectional else 1) * 3,)
    if seq is not None:  # padded steps are exactly zero
        o = N(out) if not net.batch_first else N(out).transpose(1, 0, 2)
        for b, n in enumerate(seq):
            assert not o[min(n, T):, b].any()


def test_float16_and_float64_inputs():
    r = rng(2)
    net = nn.GRU(4, 3, bidirectional=True)
    x, hx = _inputs(net, r, hx=True)
    want = np_layer("GRU", net, x, hx)
    out64, h64 = net(Tensor(x.astype(np.float64)), Tensor(hx.astype(np.float64)))
    assert out64.dtype == ms.float64
    np.testing.assert_allclose(N(out64), want[0], rtol=1e-6, atol=1e-6)
    out16, h16 = net(Tensor(x.astype(np.float16)), Tensor(hx.astype(np.float16)))
    assert out16.dtype == ms.float16 and h16.dtype == ms.float16
    np.testing.assert_allclose(N(out16).astype(np.float64), want[0], atol=1e-2)


@pytest.mark.parametrize("kind", ["RNN_TANH", "RNN_RELU", "GRU", "LSTM"])
def test_cells_match_numpy_and_equal_a_one_step_layer(kind):
    r = rng(3)
    cell = {"RNN_TANH": lambda: nn.RNNCell(4, 3), "RNN_RELU": lambda: nn.RNNCell(4, 3, nonlinearity="relu"),
            "GRU": lambda: nn.GRUCell(4, 3), "LSTM": lambda: nn.LSTMCell(4, 3, has_bias=False)}[kind]()
    x = r.standard_normal((2, 4)).astype(np.float32)
    h = r.standard_normal((2, 3)).astype(np.float32)
    st = (h, r.standard_normal((2, 3)).astype(np.float32)) if kind == "LSTM" else h
    w = [None if p is None else N(p) for p in (cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh)]
    got = cell(Tensor(x), _t(st))
    _cmp(got, np_step(kind, x, st, *w))
    # a one-layer, one-step stacked layer with the same weights gives the same numbers
    layer = _make(kind, 4, 3, has_bias=kind != "LSTM")
    for p, q in zip(layer.get_parameters(), cell.get_parameters()):
        p.set_data(Tensor(N(q)))
    hs = tuple(Tensor(s[None]) for s in st) if kind == "LSTM" else Tensor(st[None])
    out, hn = layer(Tensor(x[None]), hs)
    np.testing.assert_allclose(N(out)[0], N(got[0] if kind == "LSTM" else got), rtol=1e-6, atol=1e-6)


# ------------------------------------------------------------------------------------------- gradients
def _directional_check(loss, tensors, r, eps=1e-6, n_dirs=2):
    """Checks ⟨∇loss, v⟩ against (loss(p + εv) − loss(p − εv)) / 2ε for random directions v, in float64."""
    grads = loss.grad(*tensors)
    base = [N(t).copy() for t in tensors]
    for _ in range(n_dirs):
        vs = [r.standard_normal(b.shape) for b in base]
        plus = loss.value(*[b + eps * v for b, v in zip(base, vs)])
        minus = loss.value(*[b - eps * v for b, v in zip(base, vs)])
        want = (plus - minus) / (2 * eps)
        got = sum(float((N(g) * v).sum()) for g, v in zip(grads, vs))
        assert got == pytest.approx(want, rel=1e-6, abs=1e-9)
    for g, b in zip(grads, base):  # element-wise on the smallest tensor (the input) too
        assert g.shape == b.shape


class _Loss:
    """Weighted sum of a layer's outputs: differentiable w.r.t. x and every Parameter."""

    def __init__(self, net, hx, seq):
        self.net, self.hx, self.seq = net, hx, seq
        self.params = net.trainable_params()
        r = rng(9)
        self.wo = None
        self.r = r

    def _f(self, x):
        out, h = self.net(x, self.hx, self.seq)
        hs = h if isinstance(h, tuple) else (h,)
        if self.wo is None:
            self.wo = Tensor(self.r.standard_normal(out.shape))
        total = ops.sum(out * self.wo)
        for k, s in enumerate(hs):
            total = total + ops.sum(s * s) * (0.5 + k)
        return total

    def grad(self, x, *params):
        g = ms.grad(self._f, grad_position=0, weights=self.params)(x)
        return [g[0]] + list(g[1])

    def value(self, x, *params):
        old = [N(p) for p in self.params]
        for p, v in zip(self.params, params):
            p.set_data(Tensor(v))
        try:
            return float(N(self._f(Tensor(x))))
        finally:
            for p, v in zip(self.params, old):
                p.set_data(Tensor(v))


@pytest.mark.parametrize("mode,kw,seq", [
    ("GRU", dict(bidirectional=True), [3, 1]),
    ("LSTM", dict(num_layers=2), None),
    ("RNN_TANH", dict(bidirectional=True, num_layers=2, batch_first=True), [2, 3]),
])
def test_gradients_match_float64_finite_differences(mode, kw, seq):
    r = rng(4)
    net = _make(mode, 2, 3, dtype=ms.float64, **kw)
    x, hx = _inputs(net, r, T=3, B=2, hx=True, dtype=np.float64)
    loss = _Loss(net, _t(hx), None if seq is None else Tensor(np.array(seq, np.int32)))
    _directional_check(loss, [Tensor(x)] + loss.params, r)


@pytest.mark.parametrize("mode", ["GRU", "LSTM"])
def test_initial_state_gradient_matches_numpy_finite_differences(mode):
    """d loss / d hx through Kiln's autodiff against central differences of the independent NumPy reference."""
    r = rng(12)
    net = _make(mode, 2, 3, bidirectional=True, dtype=ms.float64)
    x, hx = _inputs(net, r, T=3, B=2, hx=True, dtype=np.float64)
    seq = [3, 2]
    wo = r.standard_normal((3, 2, 6))

    def np_loss(h):
        st = (h, hx[1]) if mode == "LSTM" else h
        out, hn = np_layer(mode, net, x, st, seq)
        return float((out * wo).sum() + ((hn[0] if mode == "LSTM" else hn) ** 2).sum())

    def loss(h0):
        st = (h0, Tensor(hx[1])) if mode == "LSTM" else h0
        out, hn = net(Tensor(x), st, Tensor(np.array(seq, np.int32)))
        return ops.sum(out * Tensor(wo)) + ops.sum((hn[0] if mode == "LSTM" else hn) ** 2)

    h0 = hx[0] if mode == "LSTM" else hx
    got = N(ms.grad(loss)(Tensor(h0)))
    want = np.zeros_like(h0)
    for i in np.ndindex(*h0.shape):
        d = np.zeros_like(h0)
        d[i] = 1e-6
        want[i] = (np_loss(h0 + d) - np_loss(h0 - d)) / 2e-6
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


def test_cell_gradient_matches_finite_differences():
    r = rng(5)
    cell = nn.GRUCell(3, 2, dtype=ms.float64)
    x = r.standard_normal((2, 3))
    h = Tensor(r.standard_normal((2, 2)))
    f = lambda v: ops.sum(cell(v, h) ** 3)
    g = N(ms.grad(f)(Tensor(x)))
    eps = 1e-6
    num = np.zeros_like(x)
    for i in np.ndindex(*x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        num[i] = (float(N(f(Tensor(x + d)))) - float(N(f(Tensor(x - d))))) / (2 * eps)
    np.testing.assert_allclose(g, num, rtol=1e-6, atol=1e-9)


# ---------------------------------------------------------------------------------- PyNative vs graph
def _grads_and_outputs(net, x, hx, seq):
    def f(x):
        out, h = net(x, hx, seq)
        hs = h if isinstance(h, tuple) else (h,)
        return ops.sum(out * out) + sum(ops.sum(s) for s in hs)
    return net(x, hx, seq), ms.grad(f, grad_position=0, weights=net.trainable_params())(x)


def _flat(v):
    if isinstance(v, (tuple, list)):
        return [a for e in v for a in _flat(e)]
    return [N(v)]


@pytest.mark.parametrize("mode,kw,seq", [("LSTM", dict(bidirectional=True, num_layers=2), [4, 2, 5]),
                                         ("GRU", dict(batch_first=True), None)])
def test_pynative_jit_and_graph_mode_agree(mode, kw, seq):
    r = rng(6)
    net = _make(mode, 4, 3, **kw)
    x, hx = _inputs(net, r, hx=True)
    args = (Tensor(x), _t(hx), None if seq is None else Tensor(np.array(seq, np.int32)))
    eager = _flat(_grads_and_outputs(net, *args))
    jitted = _flat(ms.jit(lambda *a: _grads_and_outputs(net, *a))(*args))
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        graph_out = _flat(net(*args))
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    assert len(eager) == len(jitted)
    for a, b in zip(eager, jitted):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)
    for a, b in zip(eager, graph_out):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


def test_gru_training_step_with_adam_pynative_equals_graph():
    """The benchmark's configuration, shrunk: GRU + Dense head trained with Adam in both modes."""
    def train(mode):
        ms.set_context(mode=mode)
        try:
            ms.set_seed(3)
            gru, head = nn.GRU(8, 16, batch_first=True), nn.Dense(16, 1)
            params = gru.trainable_params() + head.trainable_params()
            opt = nn.Adam(params, learning_rate=0.01)

            def fwd(x, y):
                out, h = gru(x)
                return ops.mean((head(h[0]) - y) ** 2)
            gfn = ms.value_and_grad(fwd, None, opt.parameters)

            def step(x, y):
                loss, g = gfn(x, y)
                return ops.depend(loss, opt(g))
            if mode == ms.GRAPH_MODE:
                step = ms.jit(step)
            r = rng(7)
            x = Tensor(r.standard_normal((4, 6, 8)).astype(np.float32))
            y = Tensor(r.standard_normal((4, 1)).astype(np.float32))
            return np.array([float(N(step(x, y))) for _ in range(4)]), N(gru.weight_hh_l0)
        finally:
            ms.set_context(mode=ms.PYNATIVE_MODE)

    (l_e, w_e), (l_g, w_g) = train(ms.PYNATIVE_MODE), train(ms.GRAPH_MODE)
    np.testing.assert_allclose(l_g, l_e, rtol=1e-5)
    np.testing.assert_allclose(w_g, w_e, rtol=1e-5, atol=1e-6)
    assert l_e[-1] < l_e[0]


# ------------------------------------------------------------------------------------- dropout, ckpt
def test_dropout_between_layers_only_in_training():
    r = rng(8)
    net = nn.GRU(4, 3, num_layers=2, dropout=0.5)
    x, _ = _inputs(net, r)
    want = np_layer("GRU", net, x)
    _cmp(net(Tensor(x)), want)  # eval: no dropout
    net.set_train(True)
    ms.set_seed(1)
    a = N(net(Tensor(x))[0])
    ms.set_seed(1)
    b = N(net(Tensor(x))[0])
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, want[0], atol=1e-3)
    single = nn.GRU(4, 3, dropout=0.5)  # one layer: nothing between layers to drop
    single.set_train(True)
    _cmp(single(Tensor(x)), np_layer("GRU", single, x))


def test_checkpoint_round_trip(tmp_path):
    r = rng(10)
    a, b = nn.LSTM(3, 2, bidirectional=True), nn.LSTM(3, 2, bidirectional=True)
    path = str(tmp_path / "lstm.ckpt")
    ms.save_checkpoint(a, path)
    assert sorted(ms.load_checkpoint(path)) == sorted(p.name for p in a.get_parameters())
    ms.load_param_into_net(b, ms.load_checkpoint(path))
    x = Tensor(r.standard_normal((4, 2, 3)).astype(np.float32))
    for u, v in zip(_flat(a(x)), _flat(b(x))):
        np.testing.assert_array_equal(u, v)


# ---------------------------------------------------------------------------------------------- errors
@pytest.mark.parametrize("kw,err,msg", [
    (dict(hidden_size=0), ValueError, "'hidden_size' must be int and must > 0"),
    (dict(input_size=2.0), TypeError, "'input_size' must be int"),
    (dict(num_layers=0), ValueError, "'num_layers'"),
    (dict(dropout=0), TypeError, "type of 'dropout' must be 'float'"),
    (dict(dropout=1.0), ValueError, "range [0, 1)"),
    (dict(has_bias=1), TypeError, "'has_bias' should be 'bool'"),
    (dict(batch_first=None), TypeError, "'batch_first' should be 'bool'"),
    (dict(bidirectional="x"), TypeError, "'bidirectional' should be 'bool'"),
    (dict(dtype=ms.int32), TypeError, "'dtype' must be float16, float32 or float64"),
])
def test_constructor_errors(kw, err, msg):
    args = dict(input_size=3, hidden_size=4)
    args.update(kw)
    with pytest.raises(err, match="For 'GRU'.*" + msg.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")):
        nn.GRU(**args)


def test_nonlinearity_errors():
    with pytest.raises(ValueError, match=r"For 'RNN', the 'nonlinearity' must be in \['tanh', 'relu'\], but got "
                                         "sigmoid"):
        nn.RNN(3, 4, nonlinearity="sigmoid")
    with pytest.raises(ValueError, match="For 'RNNCell'.*'nonlinearity'.*but got 'gelu'"):
        nn.RNNCell(3, 4, nonlinearity="gelu")
    with pytest.raises(TypeError, match="For 'RNNCell', the type of 'nonlinearity' should be 'str'"):
        nn.RNNCell(3, 4, nonlinearity=1)
    with pytest.raises(TypeError, match="For 'LSTMCell', the type of 'has_bias'"):
        nn.LSTMCell(3, 4, has_bias="yes")


def _f(*s, dt=np.float32):
    return Tensor(np.zeros(s, dt))


@pytest.mark.parametrize("graph", [False, True])
def test_call_errors(graph):
    gru, lstm, cell, lcell = nn.GRU(3, 4), nn.LSTM(3, 4, 2), nn.GRUCell(3, 4), nn.LSTMCell(3, 4)
    cases = [
        (lambda: gru(_f(5, 3)), ValueError, r"For 'GRU', the 'x' must be a 3-D Tensor \(seq_len, batch_size, "
                                            r"input_size\), but got a 2-D Tensor of shape \(5, 3\)"),
        (lambda: gru(_f(5, 2, 7)), ValueError,
         r"last dimension of 'x' must be input_size=3, but got shape \(5, 2, 7\)"),
        (lambda: gru(_f(0, 2, 3)), ValueError, "sequence length of 'x' must be positive"),
        (lambda: gru([[1.0]]), TypeError, "For 'GRU', the 'x' must be a Tensor, but got list"),
        (lambda: gru(_f(5, 2, 3, dt=np.int32)), TypeError, "float16, bfloat16, float32 or float64 Tensor, but got Int32"),
        (lambda: gru(_f(5, 2, 3), _f(1, 2, 5)), ValueError,
         r"shape of 'hx' must be \(1, 2, 4\) \(num_directions \* num_layers, batch_size, hidden_size\), but got "
         r"\(1, 2, 5\)"),
        (lambda: gru(_f(5, 2, 3), _f(2, 4)), ValueError, r"but got \(2, 4\)"),
        (lambda: gru(_f(5, 2, 3), _f(1, 2, 4, dt=np.float16)), TypeError,
         "type of 'hx' should be same as 'x', but got 'x' with type Float32 and 'hx' with type Float16"),
        (lambda: gru(_f(5, 2, 3), (_f(1, 2, 4),)), TypeError, "For 'GRU', the 'hx' must be a Tensor, but got tuple"),
        (lambda: lstm(_f(5, 2, 3), _f(2, 2, 4)), TypeError, "'hx' must be a tuple \\(h, c\\) of two Tensors"),
        (lambda: lstm(_f(5, 2, 3), (_f(2, 2, 4),) * 3), TypeError, "length of 'hx' must be '2', but got '3'"),
        (lambda: lstm(_f(5, 2, 3), (_f(2, 2, 4), _f(1, 2, 4))), ValueError, r"shape of 'hx\[1\]' must be \(2, 2, 4\)"),
        (lambda: gru(_f(5, 2, 3), None, _f(2)), TypeError, "'seq_length' should be one of"),
        (lambda: gru(_f(5, 2, 3), None, _f(3, dt=np.int32)), ValueError,
         r"batch size of x and seq_length must be equal, but got 2 of x and seq_length of shape \(3,\)"),
        (lambda: gru(_f(5, 2, 3), None, [3, 5]), TypeError, "'seq_length' must be a Tensor, but got list"),
        (lambda: cell(_f(3), _f(4)), ValueError, r"For 'GRUCell', the 'x' must be a 2-D Tensor, but got a 1-D"),
        (lambda: cell(_f(2, 3), _f(2, 5)), ValueError, r"shape of 'hx' must be \(2, 4\) \(batch_size, hidden_size\)"),
        (lambda: cell(_f(2, 5), _f(2, 4)), ValueError, "last dimension of 'x' must be input_size=3"),
        (lambda: lcell(_f(2, 3), [_f(2, 4), _f(2, 4)]), TypeError, "For 'LSTMCell', the 'hx' must be a tuple"),
    ]
    if graph:
        ms.set_context(mode=ms.GRAPH_MODE)
    try:
        for call, err, msg in cases:
            with pytest.raises(err, match=msg):
                call()
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
