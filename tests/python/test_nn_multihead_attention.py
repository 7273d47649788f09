"""nn.MultiheadAttention (MindSpore 2.10's nn/layer/transformer.py) and the ops function behind it
(kiln/ops/attention_func.py): parameter names, shapes and initial distributions, outputs against a float64 NumPy
reference of MindSpore's computation (q and k each scaled by head_dim^(-1/4), masks added, softmax, heads averaged),
anchor values printed by MindSpore 2.10 (CPU), Graph mode equal to PyNative, gradients against float64 finite
differences and MindSpore's error messages.

Kiln's outputs were compared with MindSpore 2.10's (same inputs and parameters) for every kind of configuration used
here (bool / float / uint8 / 3-D masks with and without key_padding_mask, unbatched, batch_first with add_bias_kv and
add_zero_attn, kdim / vdim with and without bias, need_weights=False, the error cases): equal within 1e-5 in PyNative
and Graph mode; the NumPy reference below equals Kiln on them. Not followed: a query row whose keys are all masked
(MindSpore's CPU softmax returns -inf / garbage there, differently in its two modes; Kiln gives NaN, as the formula)."""
import math

import numpy as np
import pytest

import kiln as ms
from kiln import Tensor, nn
from kiln.ops.attention_func import multi_head_attention_forward

from helpers import central_difference

E, H, L, S, NB = 8, 2, 3, 4, 2


def _softmax(x):
    m = np.max(x, axis=-1, keepdims=True)
    e = np.exp(x - m)
    return e / e.sum(axis=-1, keepdims=True)


def ref_mha(q, k, v, p, num_heads, kpm=None, attn_mask=None, average=True, bias_kv=False, zero_attn=False,
            batch_first=False):
    """MindSpore 2.10's multi_head_attention_forward in float64 NumPy. p: dict of parameter arrays by name."""
    q, k, v = (np.asarray(x, np.float64) for x in (q, k, v))
    unbatched = q.ndim == 2
    if unbatched:
        q, k, v = q[:, None], k[:, None], v[:, None]
        kpm = None if kpm is None else kpm[None]
    elif batch_first:
        q, k, v = (x.swapaxes(0, 1) for x in (q, k, v))
    tl, n, e = q.shape
    hd = e // num_heads
    if "in_proj_weight" in p:
        wq, wk, wv = np.split(p["in_proj_weight"], 3)
    else:
        wq, wk, wv = p["q_proj_weight"], p["k_proj_weight"], p["v_proj_weight"]
    bq, bk, bv = np.split(p["in_proj_bias"], 3) if "in_proj_bias" in p else (0.0, 0.0, 0.0)
    qp, kp, vp = q @ wq.T + bq, k @ wk.T + bk, v @ wv.T + bv
    mask = None
    if attn_mask is not None:
        mask = np.asarray(attn_mask)
        if mask.dtype == np.uint8:
            mask = mask.astype(bool)
        mask = mask[None] if mask.ndim == 2 else mask  # (1 or N·H, L, S)
    if bias_kv:
        kp = np.concatenate([kp, np.broadcast_to(p["bias_k"], (1, n, e))])
        vp = np.concatenate([vp, np.broadcast_to(p["bias_v"], (1, n, e))])
        mask = None if mask is None else np.concatenate([mask, np.zeros(mask.shape[:-1] + (1,), mask.dtype)], -1)
        kpm = None if kpm is None else np.concatenate([kpm, np.zeros((n, 1), kpm.dtype)], -1)
    qh = qp.reshape(tl, n * num_heads, hd).swapaxes(0, 1)
    kh = kp.reshape(kp.shape[0], n * num_heads, hd).swapaxes(0, 1)
    vh = vp.reshape(vp.shape[0], n * num_heads, hd).swapaxes(0, 1)
    if zero_attn:
        kh = np.concatenate([kh, np.zeros((n * num_heads, 1, hd))], 1)
        vh = np.concatenate([vh, np.zeros((n * num_heads, 1, hd))], 1)
        mask = None if mask is None else np.concatenate([mask, np.zeros(mask.shape[:-1] + (1,), mask.dtype)], -1)
        kpm = None if kpm is None else np.concatenate([kpm, np.zeros((n, 1), kpm.dtype)], -1)
    s = kh.shape[1]
    if kpm is not None:
        kq = np.repeat(np.asarray(kpm)[:, None, None, :], num_heads, 1).reshape(n * num_heads, 1, s)
        mask = kq if mask is None else (mask | kq if mask.dtype == bool else mask + kq)
    if mask is not None and mask.dtype == bool:
        mask = np.where(mask, -np.inf, 0.0)
    scores = (qh @ kh.swapaxes(1, 2)) / math.sqrt(hd)
    if mask is not None:
        scores = scores + mask  # (1, L, S), (N·H, 1, S) or (N·H, L, S)
    w = _softmax(scores)
    out = (w @ vh).reshape(n, num_heads, tl, hd).transpose(2, 0, 1, 3).reshape(tl * n, e)
    out = out @ p["out_proj.weight"].T + p.get("out_proj.bias", 0.0)
    out = out.reshape(tl, n, e)
    w = w.reshape(n, num_heads, tl, s)
    if average:
        w = w.sum(1) / num_heads
    if unbatched:
        return out[:, 0], w[0]
    if batch_first:
        out = out.swapaxes(0, 1)
    return out, w


def _set_params(m, rng, dtype=np.float32):
    p = {}
    for par in m.get_parameters():
        a = (rng.randn(*par.shape) * 0.5).astype(dtype)
        par.set_data(Tensor(a))
        p[par.name] = a.astype(np.float64)
    return p


def _data(rng, *shape):
    return rng.randn(*shape).astype(np.float32)


def _setup():
    """The inputs and parameters of the MindSpore run whose values are quoted below."""
    rng = np.random.RandomState(0)
    q, k, v = _data(rng, L, NB, E), _data(rng, S, NB, E), _data(rng, S, NB, E)
    m = nn.MultiheadAttention(E, H)
    p = _set_params(m, rng)
    return rng, m, p, q, k, v


def test_parameter_names_shapes_and_dtypes():
    # MindSpore 2.10's names and order
    assert [x.name for x in nn.MultiheadAttention(E, H).get_parameters()] == [
        "in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"]
    assert [x.name for x in nn.MultiheadAttention(E, H, add_bias_kv=True, add_zero_attn=True).get_parameters()] == [
        "in_proj_weight", "in_proj_bias", "bias_k", "bias_v", "out_proj.weight", "out_proj.bias"]
    assert [x.name for x in nn.MultiheadAttention(E, 4, kdim=5, vdim=6, has_bias=False).get_parameters()] == [
        "q_proj_weight", "k_proj_weight", "v_proj_weight", "out_proj.weight"]
    m = nn.MultiheadAttention(E, H, kdim=5, vdim=6)
    assert [(x.name, tuple(x.shape)) for x in m.get_parameters()] == [
        ("q_proj_weight", (8, 8)), ("k_proj_weight", (8, 5)), ("v_proj_weight", (8, 6)), ("in_proj_bias", (24,)),
        ("out_proj.weight", (8, 8)), ("out_proj.bias", (8,))]
    assert m.in_proj_weight is None and m.head_dim == 4 and m.training is False
    m64 = nn.MultiheadAttention(6, 3, dtype=ms.float64)
    assert [(x.name, tuple(x.shape), x.dtype) for x in m64.get_parameters()] == [
        ("in_proj_weight", (18, 6), ms.float64), ("in_proj_bias", (18,), ms.float64),
        ("out_proj.weight", (6, 6), ms.float64), ("out_proj.bias", (6,), ms.float64)]
    assert nn.MultiheadAttention(6, 3, dtype=None).in_proj_weight.dtype == ms.float32


def test_initial_distributions():
    # XavierUniform in_proj (bound √(6 / (E + 3E))), zero in_proj_bias, out_proj HeUniform(√5) and Uniform(1/√E)
    # bias (MindSpore's bias is not zero), XavierNormal bias_k / bias_v. MindSpore 2.10 drew, for E = 64:
    # in_proj_weight std 0.0880, |max| 0.1531; out_proj.weight std 0.0723, |max| 0.1250; out_proj.bias |max| 0.1208.
    ms.set_seed(1)
    m = nn.MultiheadAttention(64, 4, add_bias_kv=True)
    w = m.in_proj_weight.asnumpy()
    bound = math.sqrt(6 / (64 + 192))
    assert np.abs(w).max() <= bound and abs(w.std() - bound / math.sqrt(3)) < 0.005
    assert not m.in_proj_bias.asnumpy().any()
    ow, ob = m.out_proj.weight.asnumpy(), m.out_proj.bias.asnumpy()
    assert np.abs(ow).max() <= 0.125 and abs(ow.std() - 0.125 / math.sqrt(3)) < 0.005
    assert np.abs(ob).max() <= 0.125 and np.abs(ob).max() > 0.05
    for b in (m.bias_k.asnumpy(), m.bias_v.asnumpy()):
        assert b.shape == (1, 1, 64) and 0.08 < b.std() < 0.2


def test_mindspore_anchor_values():
    _, m, p, q, k, v = _setup()
    out, w = m(Tensor(q), Tensor(k), Tensor(v))
    # MindSpore 2.10 (CPU, PyNative and Graph): attn_output[0] and attn_weights[0]
    np.testing.assert_allclose(out.asnumpy()[0], [
        [2.2030292, -0.4968369, 1.9786289, -2.4835937, -0.14002076, 0.29197788, 1.2320069, 0.23252726],
        [0.8305267, 0.16487205, 0.52988774, -1.1281447, 0.53713596, -0.63662827, 0.28939086, -0.72513586]],
        rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(w.asnumpy()[0], [
        [0.14757353, 0.70875686, 0.09237996, 0.05128966], [0.35460964, 0.16429193, 0.04301585, 0.43808264],
        [0.3917468, 0.23823151, 0.1549901, 0.2150316]], rtol=1e-5, atol=1e-6)
    ro, rw = ref_mha(q, k, v, p, H)
    np.testing.assert_allclose(out.asnumpy(), ro, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(w.asnumpy(), rw, rtol=1e-5, atol=1e-6)
    assert out.dtype == ms.float32 and w.dtype == ms.float32


def _masks(rng):
    kpm = np.array([[False, False, True, False], [True, False, False, False]])
    return {
        "kpm": dict(key_padding_mask=kpm),
        "kpm_float": dict(key_padding_mask=_data(rng, NB, S)),
        "mask_bool": dict(attn_mask=np.triu(np.ones((L, S), bool), 1)),
        "mask_uint8": dict(attn_mask=np.triu(np.ones((L, S), np.uint8), 1)),
        "mask_float": dict(attn_mask=_data(rng, L, S)),
        "mask_3d": dict(attn_mask=_data(rng, NB * H, L, S)),
        "mask_3d_kpm_float": dict(attn_mask=_data(rng, NB * H, L, S), key_padding_mask=_data(rng, NB, S)),
        "mask_float_kpm_bool": dict(attn_mask=_data(rng, L, S), key_padding_mask=kpm),
    }


@pytest.mark.parametrize("case", ["none", "kpm", "kpm_float", "mask_bool", "mask_uint8", "mask_float", "mask_3d",
                                  "mask_3d_kpm_float", "mask_float_kpm_bool"])
@pytest.mark.parametrize("average", [True, False])
def test_forward_against_reference(case, average):
    rng, m, p, q, k, v = _setup()
    kw = {} if case == "none" else _masks(rng)[case]
    out, w = m(Tensor(q), Tensor(k), Tensor(v), average_attn_weights=average,
               **{n: Tensor(a) for n, a in kw.items()})
    ro, rw = ref_mha(q, k, v, p, H, kpm=kw.get("key_padding_mask"), attn_mask=kw.get("attn_mask"), average=average)
    assert out.shape == (L, NB, E) and w.shape == ((NB, L, S) if average else (NB, H, L, S))
    np.testing.assert_allclose(out.asnumpy(), ro, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(w.asnumpy(), rw, rtol=1e-5, atol=1e-6)


def test_self_attention_and_need_weights_false():
    _, m, p, q, _, _ = _setup()
    t = Tensor(q)
    out, w = m(t, t, t)  # key is value is query: one packed projection
    ro, rw = ref_mha(q, q, q, p, H)
    np.testing.assert_allclose(out.asnumpy(), ro, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(w.asnumpy(), rw, rtol=1e-5, atol=1e-6)
    res = m(t, t, t, need_weights=False)  # MindSpore returns the 1-tuple (attn_output,)
    assert isinstance(res, tuple) and len(res) == 1
    np.testing.assert_allclose(res[0].asnumpy(), ro, rtol=1e-5, atol=1e-5)


def test_unbatched():
    rng, m, p, q, k, v = _setup()
    kpm = np.array([False, True, False, False])
    mask3 = _data(rng, H, L, S)
    out, w = m(Tensor(q[:, 0]), Tensor(k[:, 0]), Tensor(v[:, 0]), key_padding_mask=Tensor(kpm))
    ro, rw = ref_mha(q[:, 0], k[:, 0], v[:, 0], p, H, kpm=kpm)
    assert out.shape == (L, E) and w.shape == (L, S)
    np.testing.assert_allclose(out.asnumpy(), ro, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(w.asnumpy(), rw, rtol=1e-5, atol=1e-6)
    out, w = m(Tensor(q[:, 0]), Tensor(k[:, 0]), Tensor(v[:, 0]), attn_mask=Tensor(mask3), average_attn_weights=False)
    ro, rw = ref_mha(q[:, 0], k[:, 0], v[:, 0], p, H, attn_mask=mask3, average=False)
    assert w.shape == (H, L, S)
    np.testing.assert_allclose(out.asnumpy(), ro, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(w.asnumpy(), rw, rtol=1e-5, atol=1e-6)


def test_batch_first_bias_kv_zero_attn():
    rng = np.random.RandomState(3)
    q, k, v = _data(rng, NB, L, E), _data(rng, NB, S, E), _data(rng, NB, S, E)
    m = nn.MultiheadAttention(E, H, batch_first=True, add_bias_kv=True, add_zero_attn=True)
    p = _set_params(m, rng)
    kpm = np.array([[False, False, True, False], [True, False, False, False]])
    mask = np.triu(np.ones((L, S), bool), 1)
    out, w = m(Tensor(q), Tensor(k), Tensor(v), key_padding_mask=Tensor(kpm), attn_mask=Tensor(mask))
    ro, rw = ref_mha(q, k, v, p, H, kpm=kpm, attn_mask=mask, bias_kv=True, zero_attn=True, batch_first=True)
    assert out.shape == (NB, L, E) and w.shape == (NB, L, S + 2)
    np.testing.assert_allclose(out.asnumpy(), ro, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(w.asnumpy(), rw, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("has_bias", [True, False])
def test_kdim_vdim(has_bias):
    rng = np.random.RandomState(4)
    q, k, v = _data(rng, L, NB, E), _data(rng, S, NB, 5), _data(rng, S, NB, 6)
    m = nn.MultiheadAttention(E, 4, kdim=5, vdim=6, has_bias=has_bias)
    p = _set_params(m, rng)
    out, w = m(Tensor(q), Tensor(k), Tensor(v), average_attn_weights=False)
    ro, rw = ref_mha(q, k, v, p, 4, average=False)
    np.testing.assert_allclose(out.asnumpy(), ro, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(w.asnumpy(), rw, rtol=1e-5, atol=1e-6)


def test_graph_mode_equals_pynative():
    rng, m, p, q, k, v = _setup()
    kpm = Tensor(np.array([[False, False, True, False], [True, False, False, False]]))
    mask = Tensor(_data(rng, L, S))
    args = (Tensor(q), Tensor(k), Tensor(v), kpm, True, mask)
    eager = m(*args)
    graph = ms.jit(lambda *a: m(*a))(*args)
    for a, b in zip(eager, graph):
        np.testing.assert_allclose(b.asnumpy(), a.asnumpy(), rtol=1e-6, atol=1e-6)
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        graph2 = m(*args)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    for a, b in zip(eager, graph2):
        np.testing.assert_allclose(b.asnumpy(), a.asnumpy(), rtol=1e-6, atol=1e-6)


def test_gradients_against_finite_differences():
    rng = np.random.RandomState(5)
    e, h, tl, s, n = 4, 2, 2, 3, 2
    q, k, v = rng.randn(tl, n, e), rng.randn(s, n, e), rng.randn(s, n, e)
    w_in, b_in, w_out, b_out = rng.randn(3 * e, e) * 0.5, rng.randn(3 * e) * 0.5, rng.randn(e, e) * 0.5, rng.randn(e)
    bias_k, bias_v = rng.randn(1, 1, e), rng.randn(1, 1, e)
    mask = rng.randn(tl, s)
    kpm = np.array([[False, True, False], [False, False, False]])
    weights = rng.randn(tl, n, e)  # a non-uniform cotangent
    wts = rng.randn(n, tl, s + 2)
    args = [q, k, v, w_in, b_in, w_out, b_out, bias_k, bias_v]

    def f(*a):
        out, att = multi_head_attention_forward(*a[:3], e, h, a[3], a[4], a[7], a[8], True, 0.0, a[5], a[6],
                                                key_padding_mask=Tensor(kpm), attn_mask=Tensor(mask))
        return (out * Tensor(weights)).sum() + (att * Tensor(wts)).sum()

    tensors = [Tensor(np.asarray(a, np.float64)) for a in args]
    grads = ms.grad(f, grad_position=tuple(range(len(args))))(*tensors)
    for i, g in enumerate(grads):
        def scalar(x, i=i):
            b = list(tensors)
            b[i] = Tensor(x)
            return float(f(*b).asnumpy())
        np.testing.assert_allclose(g.asnumpy(), central_difference(scalar, args[i]), rtol=1e-5, atol=1e-7,
                                   err_msg=f"gradient of argument {i}")


def test_cell_parameter_gradients_graph_and_pynative():
    rng = np.random.RandomState(6)
    m = nn.MultiheadAttention(4, 2, dtype=ms.float64)
    _set_params(m, rng, np.float64)
    q = Tensor(rng.randn(2, 2, 4))
    params = m.trainable_params()

    def loss(x):
        out, w = m(x, x, x)
        return (out * out).sum() + (w * w).sum()

    eager = ms.value_and_grad(loss, None, params)(q)[1]
    graph = ms.jit(ms.value_and_grad(loss, None, params))(q)[1]
    for par, g, gg in zip(params, eager, graph):
        base = par.asnumpy().copy()

        def scalar(x, par=par):
            par.set_data(Tensor(x))
            return float(loss(q).asnumpy())
        want = central_difference(scalar, base)
        par.set_data(Tensor(base))
        np.testing.assert_allclose(g.asnumpy(), want, rtol=1e-5, atol=1e-7, err_msg=par.name)
        np.testing.assert_allclose(gg.asnumpy(), g.asnumpy(), rtol=1e-9, atol=1e-12, err_msg=par.name)


def test_dropout_in_training():
    rng, m, p, q, k, v = _setup()
    m2 = nn.MultiheadAttention(E, H, dropout=0.5)
    for a, b in zip(m2.get_parameters(), m.get_parameters()):
        a.set_data(b.data)
    _, w_eval = m2(Tensor(q), Tensor(k), Tensor(v), average_attn_weights=False)
    np.testing.assert_allclose(w_eval.asnumpy(), ref_mha(q, k, v, p, H, average=False)[1], rtol=1e-5, atol=1e-6)
    m2.set_train(True)
    ms.set_seed(3)
    _, w = m2(Tensor(q), Tensor(k), Tensor(v), average_attn_weights=False)
    w, we = w.asnumpy(), w_eval.asnumpy()
    kept = w != 0
    assert kept.any() and (~kept).any()
    np.testing.assert_allclose(w[kept], 2 * we[kept], rtol=1e-5)  # kept weights scaled by 1/(1 − p)


@pytest.mark.parametrize("call, message", [
    (lambda m, q, k, v: m(q, k[:, 0], v), "For batched `query`, the `key` and `value` must be 3D tensor, but got "
                                          "`key` with 2D and `value` with 3D."),
    (lambda m, q, k, v: m(q, k, v, key_padding_mask=Tensor(np.zeros((S,), bool))),
     "For batched `query`, the `key_padding_mask` must be `None` or 2D, but got `key_padding_mask` with 1D."),
    (lambda m, q, k, v: m(q, k, v, key_padding_mask=Tensor(np.zeros((NB, S), np.int32))),
     "only bool and floating types of key_padding_mask are supported"),
    (lambda m, q, k, v: m(q, k, v, attn_mask=Tensor(np.zeros((2, 2), np.float32))),
     "The shape of the `attn_mask` should be (3, 4), but got (2, 2)."),
    (lambda m, q, k, v: m(q, k, v, attn_mask=Tensor(np.zeros((3, L, S), np.float32))),
     "The shape of the `attn_mask` should be (4, 3, 4), but got (3, 3, 4)."),
    (lambda m, q, k, v: m(Tensor(np.zeros((L, NB, 4), np.float32)), k, v),
     "The `embed_dim` should be 8, but got 4."),
    (lambda m, q, k, v: m(q, k, v[:3]), "The shape of `key` (4, 2, 8) does not match `value` (3, 2, 8)."),
])
def test_errors(call, message):
    _, m, _, q, k, v = _setup()
    with pytest.raises(ValueError) as info:  # MindSpore 2.10's messages
        call(m, Tensor(q), Tensor(k), Tensor(v))
    assert message in str(info.value)


def test_constructor_errors():
    with pytest.raises(ValueError, match="The init argument 'embed_dim' must be divisible by 'num_heads'."):
        nn.MultiheadAttention(8, 3)
    with pytest.raises(TypeError, match="embed_dim"):
        nn.MultiheadAttention(8.0, 2)


# ------------------------------------------------------------------------------ Transformer layers (same module)

TE, TH, TF = 8, 2, 16


def _set_all(m, seed):
    """The parameters of the MindSpore 2.10 runs quoted below: RandomState(seed) normals · 0.3 in
    get_parameters order. Returns them by name (float64)."""
    rng = np.random.RandomState(seed)
    out = {}
    for par in m.get_parameters():
        a = (rng.randn(*par.shape) * 0.3).astype(np.float32)
        par.set_data(Tensor(a))
        out[par.name] = a.astype(np.float64)
    return out


def _sub(p, prefix):
    return {k[len(prefix):]: v for k, v in p.items() if k.startswith(prefix)}


def _np_ln(x, p, prefix, eps=1e-5):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * p[prefix + "gamma"] + p[prefix + "beta"]


def _np_ff(x, p, act):
    h = x @ p["dense1.weight"].T + p["dense1.bias"]
    h = np.maximum(h, 0) if act == "relu" else 0.5 * h * (1 + np.vectorize(math.erf)(h / math.sqrt(2)))
    return h @ p["dense2.weight"].T + p["dense2.bias"]


def ref_encoder_layer(x, p, mask=None, kpm=None, norm_first=False, act="relu"):
    def sa(v):
        return ref_mha(v, v, v, _sub(p, "self_attn."), TH, kpm=kpm, attn_mask=mask)[0]
    if norm_first:
        x = x + sa(_np_ln(x, p, "norm1."))
        return x + _np_ff(_np_ln(x, p, "norm2."), p, act)
    x = _np_ln(x + sa(x), p, "norm1.")
    return _np_ln(x + _np_ff(x, p, act), p, "norm2.")


def ref_decoder_layer(x, mem, p, tgt_mask=None, mem_mask=None, mem_kpm=None, norm_first=False):
    def sa(v):
        return ref_mha(v, v, v, _sub(p, "self_attn."), TH, attn_mask=tgt_mask)[0]

    def ca(v):
        return ref_mha(v, mem, mem, _sub(p, "multihead_attn."), TH, attn_mask=mem_mask, kpm=mem_kpm)[0]
    if norm_first:
        x = x + sa(_np_ln(x, p, "norm1."))
        x = x + ca(_np_ln(x, p, "norm2."))
        return x + _np_ff(_np_ln(x, p, "norm3."), p, "relu")
    x = _np_ln(x + sa(x), p, "norm1.")
    x = _np_ln(x + ca(x), p, "norm2.")
    return _np_ln(x + _np_ff(x, p, "relu"), p, "norm3.")


def _tr_data():
    rng = np.random.RandomState(0)
    src, tgt = rng.randn(5, 2, TE).astype(np.float32), rng.randn(4, 2, TE).astype(np.float32)
    smask = rng.randn(5, 5).astype(np.float32)
    tmask = np.triu(np.ones((4, 4), bool), 1)
    kpm = np.array([[False] * 4 + [True], [False] * 5])
    return src, tgt, smask, tmask, kpm


def test_transformer_encoder_layer():
    src, _, smask, _, kpm = _tr_data()
    enc = nn.TransformerEncoderLayer(TE, TH, TF, dropout=0.0)
    p = _set_all(enc, 1)
    assert list(p) == ["self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight",
                       "self_attn.out_proj.bias", "dense1.weight", "dense1.bias", "dense2.weight", "dense2.bias",
                       "norm1.gamma", "norm1.beta", "norm2.gamma", "norm2.beta"]  # MindSpore 2.10's names
    out = enc(Tensor(src)).asnumpy()
    # MindSpore 2.10: output[0, 0]
    np.testing.assert_allclose(out[0, 0], [0.5739851, 0.5072683, -0.17359027, 0.42199427, 0.13563785, 0.00573546,
                                           -0.32516277, 0.56174767], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(out, ref_encoder_layer(src, p), rtol=1e-4, atol=1e-5)
    out = enc(Tensor(src), src_mask=Tensor(smask), src_key_padding_mask=Tensor(kpm)).asnumpy()
    np.testing.assert_allclose(out, ref_encoder_layer(src, p, smask, kpm), rtol=1e-4, atol=1e-5)
    enc2 = nn.TransformerEncoderLayer(TE, TH, TF, dropout=0.0, activation="gelu", norm_first=True, batch_first=True)
    p2 = _set_all(enc2, 2)
    out = enc2(Tensor(src.swapaxes(0, 1)), src_key_padding_mask=Tensor(kpm)).asnumpy()
    want = ref_encoder_layer(src, p2, kpm=kpm, norm_first=True, act="gelu").swapaxes(0, 1)
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-5)
    enc3 = nn.TransformerEncoderLayer(TE, TH, TF, dropout=0.0, activation=ms.ops.gelu)
    p3 = _set_all(enc3, 3)
    np.testing.assert_allclose(enc3(Tensor(src[:, 0])).asnumpy(),
                               ref_encoder_layer(src[:, :1], p3, act="gelu")[:, 0], rtol=1e-4, atol=1e-5)
    assert (enc.d_model, enc.nhead, enc.dim_feedforward, enc.dropout_num, enc.layernorm_eps, enc.batch_first,
            enc.norm_first, enc.activation1) == (8, 2, 16, 0.0, 1e-5, False, False, "relu")


def test_transformer_decoder_layer():
    src, tgt, _, tmask, kpm = _tr_data()
    dec = nn.TransformerDecoderLayer(TE, TH, TF, dropout=0.0)
    p = _set_all(dec, 4)
    assert [k for k in p if not k.startswith(("self_attn.", "multihead_attn."))] == [
        "dense1.weight", "dense1.bias", "dense2.weight", "dense2.bias", "norm1.gamma", "norm1.beta", "norm2.gamma",
        "norm2.beta", "norm3.gamma", "norm3.beta"]
    out = dec(Tensor(tgt), Tensor(src), tgt_mask=Tensor(tmask), memory_key_padding_mask=Tensor(kpm)).asnumpy()
    # MindSpore 2.10: output[1, 1]
    np.testing.assert_allclose(out[1, 1], [0.31984368, 0.9567142, -0.3147424, 0.02795906, 0.03031099, -0.11408011,
                                           0.6215302, 0.4159487], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(out, ref_decoder_layer(tgt, src, p, tmask, mem_kpm=kpm), rtol=1e-4, atol=1e-5)
    dec2 = nn.TransformerDecoderLayer(TE, TH, TF, dropout=0.0, norm_first=True)
    p2 = _set_all(dec2, 5)
    mm = np.random.RandomState(9).randn(4, 5).astype(np.float32)
    out = dec2(Tensor(tgt), Tensor(src), tgt_mask=Tensor(tmask), memory_mask=Tensor(mm)).asnumpy()
    np.testing.assert_allclose(out, ref_decoder_layer(tgt, src, p2, tmask, mm, norm_first=True), rtol=1e-4,
                               atol=1e-5)


def test_transformer_stacks_and_transformer():
    src, tgt, _, tmask, kpm = _tr_data()
    enc = nn.TransformerEncoderLayer(TE, TH, TF, dropout=0.0)
    stack = nn.TransformerEncoder(enc, 2, nn.LayerNorm((TE,), epsilon=1e-5))
    names = [q.name for q in stack.get_parameters()]
    assert names[0] == "layers.0.self_attn.in_proj_weight" and names[-1] == "norm.beta" and len(names) == 26
    # MindSpore: copies of a new layer with the given one's configuration, all starting equal
    a, b = stack.layers[0].dense1.weight.asnumpy(), stack.layers[1].dense1.weight.asnumpy()
    assert (a == b).all() and not (a == enc.dense1.weight.asnumpy()).all()
    p = _set_all(stack, 6)
    out = stack(Tensor(src), src_key_padding_mask=Tensor(kpm)).asnumpy()
    want = src.astype(np.float64)
    for i in range(2):
        want = ref_encoder_layer(want, _sub(p, f"layers.{i}."), kpm=kpm)
    np.testing.assert_allclose(out, _np_ln(want, p, "norm."), rtol=1e-4, atol=1e-5)
    dec = nn.TransformerDecoderLayer(TE, TH, TF, dropout=0.0)
    dstack = nn.TransformerDecoder(dec, 2, None)
    pd = _set_all(dstack, 7)
    out = dstack(Tensor(tgt), Tensor(src), tgt_mask=Tensor(tmask)).asnumpy()
    want = tgt.astype(np.float64)
    for i in range(2):
        want = ref_decoder_layer(want, src, _sub(pd, f"layers.{i}."), tmask)
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-5)
    tr = nn.Transformer(TE, TH, 2, 1, TF, dropout=0.0)
    assert len(list(tr.get_parameters())) == 46
    # every parameter of rank > 1 re-drawn from XavierUniform: in_proj (24, 8) within √(6/32), dense1 (16, 8)
    # within √(6/24); the biases keep their initializers (MindSpore 2.10 drew maxima 0.433, 0.499)
    assert np.abs(tr.encoder.layers[0].self_attn.in_proj_weight.asnumpy()).max() <= math.sqrt(6 / 32)
    assert np.abs(tr.encoder.layers[0].dense1.weight.asnumpy()).max() <= 0.5
    _set_all(tr, 8)
    out = tr(Tensor(src), Tensor(tgt), tgt_mask=Tensor(tmask), src_key_padding_mask=Tensor(kpm),
             memory_key_padding_mask=Tensor(kpm)).asnumpy()
    # MindSpore 2.10: output[0, 0]
    np.testing.assert_allclose(out[0, 0], [0.00924027, -1.3094294, -0.13833149, 0.18016022, -0.25993717,
                                           -0.14956371, -0.2540275, -0.4779351], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("make, exc, message", [
    (lambda: nn.TransformerEncoderLayer(TE, TH, TF, activation=nn.ReLU()), ValueError,
     "The argument 'activation' must be ops.relu or ops.gelu instance, but get ReLU()."),
    (lambda: nn.TransformerEncoderLayer(TE, TH, TF, activation="tanh"), ValueError,
     "The activation must be relu/gelu, but get tanh"),
    (lambda: nn.TransformerDecoderLayer(TE, TH, TF, activation=nn.Tanh()), ValueError,
     "The argument 'activation' must be nn.ReLU or nn.GELU instance, but get Tanh()."),
    (lambda: nn.TransformerEncoderLayer(TE, TH, TF, activation=5), ValueError,
     "The argument 'activation' must be str, callable or Cell instance, but get 5."),
    (lambda: nn.TransformerEncoderLayer(TE, TH, TF)(Tensor(np.ones((5, 2, TE), np.float32)),
                                                    src_key_padding_mask=Tensor(np.zeros((2, 5), np.int32))),
     AssertionError, "only bool and floating types of key_padding_mask are supported"),
    (lambda: nn.Transformer(TE, TH, 1, 1, TF)(Tensor(np.ones((5, 2, TE), np.float32)),
                                               Tensor(np.ones((4, 2, 6), np.float32))),
     ValueError, "The number of features for 'src' and 'tgt' must be equal to `d_model`."),
])
def test_transformer_errors(make, exc, message):
    with pytest.raises(exc) as info:  # MindSpore 2.10's messages
        make()
    assert message in str(info.value)


def test_non_tensor_arguments():
    m = nn.MultiheadAttention(E, H)
    x = Tensor(np.ones((L, NB, E), np.float32))
    with pytest.raises(TypeError, match="For 'MultiheadAttention', the 'query' must be a Tensor, but got NoneType"):
        m(None, x, x)
    with pytest.raises(TypeError, match="the 'attn_mask' must be a Tensor, but got list"):
        m(x, x, x, attn_mask=[[0.0]])
    with pytest.raises(TypeError, match="For 'TransformerEncoder', the 'encoder_layer' must be a "
                                        "TransformerEncoderLayer, but got NoneType"):
        nn.TransformerEncoder(None, 2)
    with pytest.raises(TypeError, match="For 'TransformerDecoder', the 'decoder_layer' must be a "
                                        "TransformerDecoderLayer"):
        nn.TransformerDecoder(nn.Dense(2, 2), 2)


def test_transformer_gradients_and_graph_mode():
    src, _, _, _, kpm = _tr_data()
    enc = nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0, dtype=ms.float64)
    stack = nn.TransformerEncoder(enc, 2, nn.LayerNorm((4,), epsilon=1e-5, dtype=ms.float64))
    rng = np.random.RandomState(11)
    for par in stack.get_parameters():
        par.set_data(Tensor(rng.randn(*par.shape) * 0.3))
    x = Tensor(rng.randn(3, 2, 4))
    mask = Tensor(kpm[:, :3])

    def f(v):
        return (stack(v, src_key_padding_mask=mask) * Tensor(np.arange(24.0).reshape(3, 2, 4) / 10)).sum()

    g = ms.grad(f)(x).asnumpy()
    np.testing.assert_allclose(g, central_difference(lambda a: float(f(Tensor(a)).asnumpy()), x.asnumpy()),
                               rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(ms.jit(ms.grad(f))(x).asnumpy(), g, rtol=1e-9, atol=1e-12)
    eager = stack(x, src_key_padding_mask=mask).asnumpy()
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        graph = stack(x, src_key_padding_mask=mask).asnumpy()
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_allclose(graph, eager, rtol=1e-12, atol=1e-12)
