"""Transformer layers (MindSpore 2.10's mindspore/nn/layer/transformer.py): nn.MultiheadAttention.

The computation is ops' multi_head_attention_forward (kiln/ops/attention_func.py); the Cell holds the parameters
under MindSpore's names, so checkpoints written by MindSpore load.
"""
import math
import numbers

from ...common import dtype as mstype
from ...common.initializer import HeUniform, Uniform, XavierNormal, XavierUniform, initializer
from ...common.parameter import Parameter
from ...ops.attention_func import multi_head_attention_forward
from ..cell import Cell
from .basic import Dense

__all__ = ["MultiheadAttention"]


def _int_arg(value, name):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"For 'MultiheadAttention', the '{name}' must be int, but got {type(value).__name__}.")
    return int(value)


class MultiheadAttention(Cell):
    r"""Multi-head attention (Vaswani et al. 2017): Concat(head_1, ..., head_h)·W_O with head_i =
    softmax(Q·W_i^Q (K·W_i^K)ᵀ / √d + mask)·V·W_i^V, d = embed_dim / num_heads.

    Args:
        embed_dim (int): E, the query's feature size and the output's. num_heads (int): E must be divisible by it.
        dropout (float): dropout probability of the attention weights in training. Default 0.0.
        has_bias (bool): biases in the input and output projections. Default True.
        add_bias_kv (bool): learnable `bias_k`, `bias_v` (1, 1, E) appended to the keys / values. Default False.
        add_zero_attn (bool): append an all-zero key / value position. Default False.
        kdim, vdim (int or None): the key's / value's feature sizes (default E). When either differs from E the
            projections are the separate `q_proj_weight` (E, E), `k_proj_weight` (E, kdim), `v_proj_weight`
            (E, vdim) instead of the packed `in_proj_weight` (3E, E).
        batch_first (bool): inputs and output (N, L, E) instead of (L, N, E). Default False.
        dtype: the parameters' dtype (default float32; None means float32).

    Parameters (MindSpore's names and initializers): `in_proj_weight` (3E, E) XavierUniform, or `q_proj_weight`,
    `k_proj_weight`, `v_proj_weight` XavierUniform; `in_proj_bias` (3E,) zeros; `out_proj.weight` (E, E)
    HeUniform(√5) and `out_proj.bias` (E,) Uniform(1/√E) (an nn.Dense); `bias_k`, `bias_v` (1, 1, E) XavierNormal.

    Inputs: query (L, N, E) / (N, L, E) / (L, E), key (S, N, kdim) ..., value (S, N, vdim) ...;
    key_padding_mask (N, S) / (S,) bool or float, need_weights (bool, default True), attn_mask (L, S) or
    (N·num_heads, L, S) bool / uint8 / float, average_attn_weights (bool, default True).

    Outputs: (attn_output, attn_weights) when need_weights, else the 1-tuple (attn_output,) (as MindSpore).
    attn_output: (L, N, E) (batch_first: (N, L, E); unbatched (L, E)); attn_weights: (N, L, S) averaged over the heads
    or (N, num_heads, L, S) (unbatched: without N).

    Raises:
        ValueError: embed_dim not divisible by num_heads ("The init argument 'embed_dim' must be divisible by
            'num_heads'."); a key_padding_mask neither bool nor float; shapes that do not fit (see
            ops' multi_head_attention_forward).
        TypeError: embed_dim / num_heads not int.
    """

    def __init__(self, embed_dim, num_heads, dropout=0.0, has_bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, dtype=mstype.float32):
        super().__init__()
        embed_dim = _int_arg(embed_dim, "embed_dim")
        num_heads = _int_arg(num_heads, "num_heads")
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads if num_heads else 0
        if num_heads <= 0 or self.head_dim * num_heads != embed_dim:
            raise ValueError("The init argument 'embed_dim' must be divisible by 'num_heads'.")
        if dtype is None:
            dtype = mstype.float32
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(initializer(XavierUniform(), (3 * embed_dim, embed_dim), dtype),
                                            "in_proj_weight")
            self.q_proj_weight = self.k_proj_weight = self.v_proj_weight = None
        else:
            self.q_proj_weight = Parameter(initializer(XavierUniform(), (embed_dim, embed_dim), dtype),
                                           "q_proj_weight")
            self.k_proj_weight = Parameter(initializer(XavierUniform(), (embed_dim, self.kdim), dtype),
                                           "k_proj_weight")
            self.v_proj_weight = Parameter(initializer(XavierUniform(), (embed_dim, self.vdim), dtype),
                                           "v_proj_weight")
            self.in_proj_weight = None
        self.in_proj_bias = Parameter(initializer("zeros", (3 * embed_dim,), dtype), "in_proj_bias") if has_bias \
            else None
        self.out_proj = Dense(embed_dim, embed_dim, has_bias=has_bias, weight_init=HeUniform(math.sqrt(5)),
                              bias_init=Uniform(1 / math.sqrt(embed_dim)), dtype=dtype)
        if add_bias_kv:
            self.bias_k = Parameter(initializer(XavierNormal(), (1, 1, embed_dim), dtype), "bias_k")
            self.bias_v = Parameter(initializer(XavierNormal(), (1, 1, embed_dim), dtype), "bias_v")
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self.k_is_v = False
        self.q_is_k = False
        self.dtype = dtype

    def construct(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                  average_attn_weights=True):
        is_batched = query.ndim == 3
        if key_padding_mask is not None and key_padding_mask.dtype != mstype.bool_ and \
                not mstype.is_float(key_padding_mask.dtype):
            raise ValueError("only bool and floating types of key_padding_mask are supported")
        k_is_v, q_is_k = key is value, query is key
        if self.batch_first and is_batched:
            query, key, value = (x.swapaxes(1, 0) for x in (query, key, value))
        attn_output, attn_weights = multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias, self.bias_k,
            self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight, self.out_proj.bias,
            training=self.training, key_padding_mask=key_padding_mask, attn_mask=attn_mask,
            use_separate_proj_weight=not self._qkv_same_embed_dim, q_proj_weight=self.q_proj_weight,
            k_proj_weight=self.k_proj_weight, v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights, k_is_v=k_is_v, q_is_k=q_is_k, dtype=self.dtype)
        if self.batch_first and is_batched:
            attn_output = attn_output.swapaxes(1, 0)
        if need_weights:
            return attn_output, attn_weights
        return (attn_output,)
