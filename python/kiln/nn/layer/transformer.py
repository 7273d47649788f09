"""Transformer layers (MindSpore 2.10's mindspore/nn/layer/transformer.py): nn.MultiheadAttention,
TransformerEncoderLayer, TransformerDecoderLayer, TransformerEncoder, TransformerDecoder and Transformer.

The attention is ops' multi_head_attention_forward (kiln/ops/attention_func.py); the Cells hold the parameters
under MindSpore's names, so checkpoints written by MindSpore load.
"""
import copy
import math
import numbers

from ...common import dtype as mstype
from ...common.initializer import HeUniform, Uniform, XavierNormal, XavierUniform, initializer
from ...common.parameter import Parameter
from ...common.tensor import Tensor
from ...ops.attention_func import multi_head_attention_forward
from ..cell import Cell
from .activation import GELU, ReLU
from .basic import Dense, Dropout
from .container import CellList
from .normalization import LayerNorm

__all__ = ["MultiheadAttention", "TransformerEncoderLayer", "TransformerDecoderLayer", "TransformerEncoder",
           "TransformerDecoder", "Transformer"]


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
        for name, t in (("query", query), ("key", key), ("value", value), ("key_padding_mask", key_padding_mask),
                        ("attn_mask", attn_mask)):
            if not isinstance(t, Tensor) and (t is not None or name in ("query", "key", "value")):
                raise TypeError(f"For 'MultiheadAttention', the '{name}' must be a Tensor, but got "
                                f"{type(t).__name__}.")
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


def _activation_fn(activation):
    """MindSpore's checks of a Transformer layer's `activation` (in its order, so a Cell, being callable, must be
    ops.relu / ops.gelu: nn.ReLU() is refused as in MindSpore 2.10) and the function it stands for."""
    from ... import ops
    if not isinstance(activation, str) and not isinstance(activation, Cell) and not callable(activation):
        raise ValueError(f"The argument 'activation' must be str, callable or Cell instance, but get {activation}.")
    if isinstance(activation, Cell) and not isinstance(activation, (ReLU, GELU)):
        raise ValueError(f"The argument 'activation' must be nn.ReLU or nn.GELU instance, but get {activation}.")
    if callable(activation) and activation is not ops.relu and activation is not ops.gelu:
        raise ValueError(f"The argument 'activation' must be ops.relu or ops.gelu instance, but get {activation}.")
    if isinstance(activation, str):
        if activation == "relu":
            return ops.relu
        if activation == "gelu":
            return ops.gelu
        raise ValueError(f"The activation must be relu/gelu, but get {activation}")
    return activation


def _check_kpm(mask):
    if mask is not None and mask.dtype != mstype.bool_ and not mstype.is_float(mask.dtype):
        raise AssertionError("only bool and floating types of key_padding_mask are supported")


class _FeedForwardLayer(Cell):
    """The parts TransformerEncoderLayer and TransformerDecoderLayer share: the feed-forward block (dense1 ->
    activation -> dropout -> dense2, MindSpore's initializers) and the stored configuration."""

    def _build(self, d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first, norm_first,
               dtype, n_norms):
        self.dense1 = Dense(d_model, dim_feedforward, weight_init=HeUniform(math.sqrt(5)),
                            bias_init=Uniform(1 / math.sqrt(d_model)), dtype=dtype)
        self.dropout = Dropout(p=dropout)
        self.dense2 = Dense(dim_feedforward, d_model, weight_init=HeUniform(math.sqrt(5)),
                            bias_init=Uniform(1 / math.sqrt(dim_feedforward)), dtype=dtype)
        self.norm_first = norm_first
        for i in range(1, n_norms + 1):
            setattr(self, f"norm{i}", LayerNorm((d_model,), epsilon=layer_norm_eps, dtype=dtype))
        for i in range(1, n_norms + 1):
            setattr(self, f"dropout{i}", Dropout(p=dropout))
        self.activation1 = activation
        self.activation = _activation_fn(activation)
        self.d_model, self.nhead, self.dim_feedforward = d_model, nhead, dim_feedforward
        self.dropout_num, self.layernorm_eps = dropout, layer_norm_eps
        self.batch_first, self.norm_first, self.dtype = batch_first, norm_first, dtype

    def _sa_block(self, x, attn_mask, key_padding_mask):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False)[0]
        return self.dropout1(x)

    def _ff(self, x):
        return self.dense2(self.dropout(self.activation(self.dense1(x))))


class TransformerEncoderLayer(_FeedForwardLayer):
    r"""One Transformer encoder layer (MindSpore 2.10): self-attention and a feed-forward block, each with a residual
    connection and a LayerNorm (after the block, or before it when norm_first).

    Args:
        d_model (int), nhead (int): the feature size and the number of attention heads.
        dim_feedforward (int): the feed-forward width. Default 2048. dropout (float): Default 0.1.
        activation: 'relu' / 'gelu' or ops.relu / ops.gelu (MindSpore 2.10 refuses nn.ReLU() / nn.GELU()
            instances although its docs list them: ValueError, as there). Default 'relu'.
        layer_norm_eps (float): Default 1e-5. batch_first, norm_first (bool): Default False. dtype: Default float32.

    Submodules (MindSpore's names): self_attn (MultiheadAttention), dense1, dense2 (Dense; HeUniform(√5) weights,
    Uniform(1/√fan_in) biases), norm1, norm2 (LayerNorm), dropout, dropout1, dropout2.

    Inputs: src (S, N, E) / (N, S, E) / (S, E); src_mask (S, S) or (N·nhead, S, S); src_key_padding_mask (N, S) /
    (S,), bool or float (else AssertionError, as MindSpore). Outputs: src's shape and dtype.
    """

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu", layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, dtype=mstype.float32):
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first, dtype=dtype)
        self._build(d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first, norm_first,
                    dtype, 2)

    def construct(self, src, src_mask=None, src_key_padding_mask=None):
        _check_kpm(src_key_padding_mask)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask)
            x = x + self.dropout2(self._ff(self.norm2(x)))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask))
            x = self.norm2(x + self.dropout2(self._ff(x)))
        return x


class TransformerDecoderLayer(_FeedForwardLayer):
    r"""One Transformer decoder layer (MindSpore 2.10): self-attention, attention over the encoder's memory and a
    feed-forward block, each with a residual connection and a LayerNorm (after, or before when norm_first).

    Args: as TransformerEncoderLayer. Submodules: self_attn, multihead_attn (MultiheadAttention), dense1, dense2,
    norm1, norm2, norm3, dropout, dropout1, dropout2, dropout3.

    Inputs: tgt (T, N, E) / (N, T, E) / (T, E), memory (S, N, E) / ..., tgt_mask, memory_mask,
    tgt_key_padding_mask, memory_key_padding_mask (as MultiheadAttention's masks). Outputs: tgt's shape and dtype.
    """

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu", layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, dtype=mstype.float32):
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first, dtype=dtype)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first,
                                                 dtype=dtype)
        self._build(d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first, norm_first,
                    dtype, 3)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                need_weights=False)[0]
        return self.dropout2(x)

    def construct(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                  memory_key_padding_mask=None):
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask)
            x = x + self.dropout3(self._ff(self.norm3(x)))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask))
            x = self.norm3(x + self.dropout3(self._ff(x)))
        return x


def _clones(layer_cls, layer, num_layers):
    """MindSpore's stacking: a fresh layer with `layer`'s configuration (not its parameters), deep-copied
    num_layers times (so every copy starts from the same values)."""
    owner = "TransformerEncoder" if layer_cls is TransformerEncoderLayer else "TransformerDecoder"
    arg = "encoder_layer" if layer_cls is TransformerEncoderLayer else "decoder_layer"
    if not all(hasattr(layer, a) for a in ("d_model", "nhead", "dim_feedforward", "dropout_num", "activation1",
                                           "layernorm_eps", "batch_first", "norm_first", "dtype")):
        raise TypeError(f"For '{owner}', the '{arg}' must be a {layer_cls.__name__}, but got "
                        f"{type(layer).__name__}.")
    fresh = layer_cls(layer.d_model, layer.nhead, layer.dim_feedforward, layer.dropout_num, layer.activation1,
                      layer.layernorm_eps, layer.batch_first, layer.norm_first, dtype=layer.dtype)
    # the activation may be a C++ function (ops.relu), which deepcopy cannot copy: the copies share it
    keep = {id(v): v for v in (fresh.activation, fresh.activation1)}
    return CellList([copy.deepcopy(fresh, dict(keep)) for _ in range(num_layers)])


class TransformerEncoder(Cell):
    r"""num_layers TransformerEncoderLayers in sequence, then `norm` (a Cell, optional).

    As MindSpore 2.10: the layers are copies of a new layer built with `encoder_layer`'s configuration (its
    parameters are not used), all starting from the same values. Parameters: layers.{i}.*, norm.*.
    Inputs: src, src_mask=None, src_key_padding_mask=None (bool or float, else AssertionError). Outputs: src's
    shape."""

    def __init__(self, encoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _clones(TransformerEncoderLayer, encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def construct(self, src, src_mask=None, src_key_padding_mask=None):
        _check_kpm(src_key_padding_mask)
        output = src
        for mod in self.layers:
            output = mod(output, src_mask=src_mask, src_key_padding_mask=src_key_padding_mask)
        if self.norm is not None:
            output = self.norm(output)
        return output


class TransformerDecoder(Cell):
    r"""num_layers TransformerDecoderLayers in sequence (copies of a new layer with `decoder_layer`'s
    configuration, as TransformerEncoder), then `norm` (optional).

    Inputs: tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask. Outputs: tgt's
    shape."""

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _clones(TransformerDecoderLayer, decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def construct(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                  memory_key_padding_mask=None):
        output = tgt
        for mod in self.layers:
            output = mod(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                         tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask)
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(Cell):
    r"""The Transformer of Vaswani et al. 2017 (MindSpore 2.10): a TransformerEncoder of num_encoder_layers layers
    with a final LayerNorm and a TransformerDecoder of num_decoder_layers layers with a final LayerNorm (or
    custom_encoder / custom_decoder). Every parameter of rank > 1 is then re-drawn from XavierUniform, as MindSpore
    does.

    Args: d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=2048, dropout=0.1,
    activation='relu', custom_encoder=None, custom_decoder=None, layer_norm_eps=1e-5, batch_first=False,
    norm_first=False, dtype=float32. Parameters: encoder.layers.{i}.*, encoder.norm.*, decoder.layers.{i}.*,
    decoder.norm.*.

    Inputs: src, tgt, src_mask, tgt_mask, memory_mask, src_key_padding_mask, tgt_key_padding_mask,
    memory_key_padding_mask. Outputs: tgt's shape. Raises ValueError when src's or tgt's last dimension is not
    d_model (MindSpore's message)."""

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=2048,
                 dropout=0.1, activation="relu", custom_encoder=None, custom_decoder=None, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, dtype=mstype.float32):
        super().__init__()
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            encoder_layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                                    layer_norm_eps, batch_first, norm_first, dtype=dtype)
            self.encoder = TransformerEncoder(encoder_layer, num_encoder_layers,
                                              LayerNorm((d_model,), epsilon=layer_norm_eps, dtype=dtype))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            decoder_layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                                    layer_norm_eps, batch_first, norm_first, dtype=dtype)
            self.decoder = TransformerDecoder(decoder_layer, num_decoder_layers,
                                              LayerNorm((d_model,), epsilon=layer_norm_eps, dtype=dtype))
        for _, p in self.parameters_and_names():
            if p.ndim > 1:
                p.set_data(initializer("xavier_uniform", p.shape, p.dtype))
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def construct(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None,
                  tgt_key_padding_mask=None, memory_key_padding_mask=None):
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise ValueError("The number of features for 'src' and 'tgt' must be equal to `d_model`.")
        memory = self.encoder(src, src_mask=src_mask, src_key_padding_mask=src_key_padding_mask)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask)
