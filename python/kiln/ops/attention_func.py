"""Multi-head attention as a function: MindSpore 2.10's `mindspore.ops.function.nn_func.multi_head_attention_forward`
(the computation behind nn.MultiheadAttention, kiln/nn/layer/transformer.py, which calls it).

Layout (MindSpore's and PyTorch's): sequence-first, query (L, N, E), key (S, N, Ek), value (S, N, Ev), or the
unbatched (L, E), (S, Ek), (S, Ev). With head_dim d = E / num_heads, MindSpore divides both q and k by d^(1/4)
before q·kᵀ (the product equals q·kᵀ/√d), adds the float mask, takes softmax over S, applies dropout to the weights
when training and multiplies by v; the heads are concatenated and projected by out_proj. The weights returned are
the (dropped-out) softmax, averaged over the heads when average_attn_weights (their sum divided by num_heads).
Formula: Vaswani et al. 2017, "Attention is all you need"; argument rules and error messages follow MindSpore 2.10.
"""
from .._loader import _core
from ..common import dtype as mstype
from ..common.tensor import Tensor

__all__ = ["multi_head_attention_forward"]


def _linear(x, w, b):
    out = _core.matmul(x, w, False, True)
    return out if b is None else _core.add(out, b)


def _rows(t, begin, end):
    """t[begin:end] along axis 0."""
    shape = list(t.shape)
    return _core.strided_slice(t, [begin] + [0] * (len(shape) - 1), [end] + shape[1:], [1] * len(shape))


def _last(t, begin, end):
    """t[..., begin:end]."""
    shape = list(t.shape)
    return _core.strided_slice(t, [0] * (len(shape) - 1) + [begin], shape[:-1] + [end], [1] * len(shape))


def _check_rank(q, k, v):
    if q.ndim == 3:
        if k.ndim != 3 or v.ndim != 3:
            raise ValueError(f"For batched `query`, the `key` and `value` must be 3D tensor, but got `key` with "
                             f"{k.ndim}D and `value` with {v.ndim}D.")
        return True
    if q.ndim == 2:
        if k.ndim != 2 or v.ndim != 2:
            raise ValueError(f"For unbatched `query`, the `key` and `value` must be 2D tensor, but got `key` with "
                             f"{k.ndim}D and `value` with {v.ndim}D.")
        return False
    raise ValueError(f"The `query` should be unbatched 2D or batched 3D tensor, but got `query` with {q.ndim}D.")


def _pad_last(mask, value=0.0):
    """mask with one more column at the end (MindSpore pads masks by one when bias_k / a zero key is appended)."""
    shape = list(mask.shape)
    extra = _core.full(shape[:-1] + [1], value, mask.dtype if mask.dtype != mstype.bool_ else mstype.int32)
    m = mask if mask.dtype != mstype.bool_ else _core.cast(mask, mstype.int32)
    out = _core.concat([m, extra], mask.ndim - 1)
    return out if mask.dtype != mstype.bool_ else _core.cast(out, mstype.bool_)


def _is_float(t):
    return mstype.is_float(t.dtype)


def _split_heads(t, static, name, bh, head_dim):
    """Keys or values (S, N, E) as (N·heads, S, head_dim); or `static` (that shape already), checked, in their place.
    ValueError (MindSpore's text) when `static` has another batch·heads or head size."""
    if static is None:
        return _core.transpose(_core.reshape(t, [t.shape[0], bh, head_dim]), [1, 0, 2])
    if static.shape[0] != bh:
        raise ValueError(f"The shape[0] of `{name}` should be {bh}, but got {static.shape[0]}")
    if static.shape[2] != head_dim:
        raise ValueError(f"The shape[2] of `{name}` should be {head_dim}, but got {static.shape[2]}")
    return static


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, attn_mask=None, use_separate_proj_weight=False,
                                 q_proj_weight=None, k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False, k_is_v=False,
                                 q_is_k=False, dtype=mstype.float32):
    """Multi-head attention (MindSpore 2.10's multi_head_attention_forward).

    Args:
        query (L, N, E) / (L, E), key (S, N, Ek) / (S, Ek), value (S, N, Ev) / (S, Ev): float Tensors.
        embed_dim_to_check (int): E, checked against query's last dim. num_heads (int): E must be divisible by it.
        in_proj_weight (3E, E) / in_proj_bias (3E,) or None: the packed q, k, v projections (rows q, k, v).
        bias_k, bias_v (1, 1, E) or both None: appended as one more key / value position (masks padded by one).
        add_zero_attn (bool): append one all-zero key / value position per head (masks padded by one).
        dropout_p (float): dropout on the attention weights when `training`.
        out_proj_weight (E, E), out_proj_bias (E,) or None: the output projection.
        key_padding_mask: (N, S) / (S,), bool (True = ignore that key) or float (added).
        attn_mask: (L, S) or (N·num_heads, L, S), bool / uint8 (True = not allowed) or float (added).
        use_separate_proj_weight (bool): use q_proj_weight (E, E), k_proj_weight (E, Ek), v_proj_weight (E, Ev).
        static_k, static_v: (N·num_heads, S', head_dim) keys / values used instead of the projected ones.
        average_attn_weights (bool): average the weights over the heads.
        is_causal (bool): MindSpore replaces attn_mask by a lower-triangular (L, S) bool mask that is *added* as 1/0
            (its own code does so; Kiln does the same).
        k_is_v, q_is_k (bool): MindSpore's hints that key is value / query is key (shared projections); the values
            do not depend on them.
        dtype: the dtype of the √√head_dim scale (the parameters' dtype).

    Returns:
        (attn_output, attn_weights): (L, N, E) / (L, E), and (N, L, S) / (L, S) averaged or (N, num_heads, L, S) /
        (num_heads, L, S) per head.

    Raises:
        ValueError: ranks, shapes or dtypes of the inputs and masks that do not fit (MindSpore's messages),
        embed_dim mismatch, embed_dim not divisible by num_heads, missing projection weights, bias_k without bias_v.
    """
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, Tensor):
            raise TypeError(f"For 'multi_head_attention_forward', `{name}` must be a Tensor, but got "
                            f"{type(t).__name__}.")
    is_batched = _check_rank(query, key, value)
    if key_padding_mask is not None:
        if query.ndim == 3 and key_padding_mask.ndim != 2:
            raise ValueError(f"For batched `query`, the `key_padding_mask` must be `None` or 2D, but got "
                             f"`key_padding_mask` with {key_padding_mask.ndim}D.")
        if query.ndim == 2 and key_padding_mask.ndim != 1:
            raise ValueError(f"For unbatched `query`, the `key_padding_mask` must be `None` or 1D, but got "
                             f"`key_padding_mask` with {key_padding_mask.ndim}D.")
    if attn_mask is not None:
        if attn_mask.ndim not in (2, 3):
            which = "batched" if query.ndim == 3 else "unbatched"
            raise ValueError(f"For {which} `query`, the `attn_mask` must be `None`, 2-D or 3-D, but got `attn_mask` "
                             f"with{attn_mask.ndim}D.")
        if query.ndim == 2 and attn_mask.ndim == 3:
            expected = (num_heads, query.shape[0], key.shape[0])
            if tuple(attn_mask.shape) != expected:
                raise ValueError(f"The shape of `attn_mask` must to be {expected}, but got {tuple(attn_mask.shape)}.")

    if not is_batched:
        query, key, value = (_core.expand_dims(t, 1) for t in (query, key, value))
        if key_padding_mask is not None:
            key_padding_mask = _core.expand_dims(key_padding_mask, 0)

    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    if key_padding_mask is not None and key_padding_mask.dtype != mstype.bool_ and not _is_float(key_padding_mask):
        raise ValueError("The `key_padding_mask` only supports bool and floating dtypes.")
    if embed_dim != embed_dim_to_check:
        raise ValueError(f"The `embed_dim` should be {embed_dim_to_check}, but got {embed_dim}.")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise ValueError(f"The `embed_dim` {embed_dim} can not be divisible by `num_heads` {num_heads}.")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise ValueError(f"The sequence length and batch dims of `key`: {tuple(key.shape[:2])} do not match "
                             f"`value`: {tuple(value.shape[:2])}.")
    elif tuple(key.shape) != tuple(value.shape):
        raise ValueError(f"The shape of `key` {tuple(key.shape)} does not match `value` {tuple(value.shape)}.")

    # in-projection
    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise ValueError("`use_separate_proj_weight` is ``False`` but `in_proj_weight` got ``None``.")
        e = embed_dim
        if q_is_k and k_is_v:
            qkv = _linear(query, in_proj_weight, in_proj_bias)
            q, k, v = _last(qkv, 0, e), _last(qkv, e, 2 * e), _last(qkv, 2 * e, 3 * e)
        else:
            ws = [_rows(in_proj_weight, i * e, (i + 1) * e) for i in range(3)]
            bs = [None] * 3 if in_proj_bias is None else [_rows(in_proj_bias, i * e, (i + 1) * e) for i in range(3)]
            q, k, v = (_linear(x, w, b) for x, w, b in zip((query, key, value), ws, bs))
    else:
        for name, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if w is None:
                raise ValueError(f"`use_separate_proj_weight` is ``True`` but `{name}_proj_weight` got ``None``.")
        eq, ek, ev = query.shape[-1], key.shape[-1], value.shape[-1]
        for what, w, want in (("query", q_proj_weight, (eq, eq)), ("key", k_proj_weight, (eq, ek)),
                              ("value", v_proj_weight, (eq, ev))):
            if tuple(w.shape) != want:
                raise ValueError(f"Expecting {what} weights shape of {want}, but got {tuple(w.shape)}")
        if in_proj_bias is None:
            bs = [None] * 3
        else:
            n = in_proj_bias.shape[0]
            cuts = [0, (n + 2) // 3, (n + 2) // 3 + (n + 1) // 3, n]  # tensor_split(3): the first ones one longer
            bs = [_rows(in_proj_bias, cuts[i], cuts[i + 1]) for i in range(3)]
            for what, b in zip(("query", "key", "value"), bs):
                if tuple(b.shape) != (eq,):
                    raise ValueError(f"Expecting {what} bias shape of {(eq,)}, but got {tuple(b.shape)}")
        q, k, v = (_linear(x, w, b) for x, w, b in zip((query, key, value), (q_proj_weight, k_proj_weight,
                                                                              v_proj_weight), bs))

    # attention mask as 3-D
    if attn_mask is not None:
        if attn_mask.dtype == mstype.uint8:
            attn_mask = _core.cast(attn_mask, mstype.bool_)
        elif not _is_float(attn_mask) and attn_mask.dtype != mstype.bool_:
            raise ValueError(f"`attn_mask` only support float, byte, and bool types, but got not {attn_mask.dtype}.")
        if attn_mask.ndim == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise ValueError(f"The shape of the `attn_mask` should be {(tgt_len, src_len)}, but got "
                                 f"{tuple(attn_mask.shape)}.")
            attn_mask = _core.expand_dims(attn_mask, 0)
        elif tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
            raise ValueError(f"The shape of the `attn_mask` should be {(bsz * num_heads, tgt_len, src_len)}, but got "
                             f"{tuple(attn_mask.shape)}.")

    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise ValueError("The bias_k cannot be added to static_k.")
        if static_v is not None:
            raise ValueError("The bias_v cannot be added to static_v.")
        k = _core.concat([k, _core.broadcast_to(bias_k, [1, bsz, bias_k.shape[2]])], 0)
        v = _core.concat([v, _core.broadcast_to(bias_v, [1, bsz, bias_v.shape[2]])], 0)
        if attn_mask is not None:
            attn_mask = _pad_last(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _pad_last(key_padding_mask)
    elif bias_k is not None or bias_v is not None:
        raise ValueError("The bias_k and bias_v should be ``None``at the same time.")

    bh = bsz * num_heads
    q = _core.transpose(_core.reshape(q, [tgt_len, bh, head_dim]), [1, 0, 2])
    k = _split_heads(k, static_k, "static_k", bh, head_dim)
    v = _split_heads(v, static_v, "static_v", bh, head_dim)

    if add_zero_attn:
        k = _core.concat([k, _core.full([bh, 1, head_dim], 0.0, k.dtype)], 1)
        v = _core.concat([v, _core.full([bh, 1, head_dim], 0.0, v.dtype)], 1)
        if attn_mask is not None:
            attn_mask = _pad_last(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _pad_last(key_padding_mask)

    src_len = k.shape[1]
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise ValueError(f"The shape of `key_padding_mask` should be {(bsz, src_len)}, but got "
                             f"{tuple(key_padding_mask.shape)}.")
        kpm = _core.reshape(_core.broadcast_to(_core.reshape(key_padding_mask, [bsz, 1, 1, src_len]), [bsz, num_heads, 1, src_len]),
                            [bh, 1, src_len])
        if attn_mask is None:
            attn_mask = kpm
        elif attn_mask.dtype == mstype.bool_:
            attn_mask = _core.logical_or(attn_mask, kpm)
        else:
            attn_mask = _core.add(attn_mask, kpm)

    if attn_mask is not None and attn_mask.dtype == mstype.bool_:
        attn_mask = _core.select(attn_mask, _core.full([], float("-inf"), q.dtype), _core.full([], 0.0, q.dtype))
    if attn_mask is not None:
        if attn_mask.shape[0] == 1:
            attn_mask = _core.expand_dims(attn_mask, 0)
        else:
            attn_mask = _core.reshape(attn_mask, [bsz, num_heads, -1, src_len])

    q = _core.reshape(q, [bsz, num_heads, tgt_len, head_dim])
    k = _core.reshape(k, [bsz, num_heads, src_len, head_dim])
    v = _core.reshape(v, [bsz, num_heads, src_len, head_dim])

    # scaled dot-product attention: q and k each divided by head_dim^(1/4), as MindSpore does
    scale = _core.sqrt(_core.sqrt(_core.full([], float(head_dim), dtype if dtype is not None else mstype.float32)))
    q = _core.div(q, scale)
    if is_causal:
        attn_mask = _core.cast(Tensor(_tril_bool(tgt_len, src_len)), mstype.bool_)
    attn = _core.matmul(q, _core.div(k, scale), False, True)
    if attn_mask is not None:
        attn = _core.add(attn, attn_mask if attn_mask.dtype != mstype.bool_ else _core.cast(attn_mask, attn.dtype))
    attn = _core.softmax(attn, -1)
    if training and 0.0 < dropout_p <= 1.0:
        from .loss_func import dropout
        attn = dropout(attn, dropout_p, True)
    out = _core.matmul(attn, v, False, False)
    out = _core.reshape(_core.transpose(out, [2, 0, 1, 3]), [bsz * tgt_len, embed_dim])
    out = _linear(out, out_proj_weight, out_proj_bias)
    out = _core.reshape(out, [tgt_len, bsz, out.shape[1]])
    weights = _core.reshape(attn, [bsz, num_heads, tgt_len, src_len])
    if average_attn_weights:
        weights = _core.div(_core.sum(weights, [1], False), _core.full([], float(num_heads), weights.dtype))
    if not is_batched:
        out = _core.squeeze(out, [1])
        weights = _core.squeeze(weights, [0])
    return out, weights


def _tril_bool(rows, cols):
    import numpy as np
    return np.tril(np.ones((rows, cols), dtype=np.bool_))
