"""MindSpore primitives -> Kiln ops, for running loaded MindIR graphs (kiln/train/_mindir_load.py).

Each entry of PRIMITIVES is `fn(attrs, *inputs)`: `attrs` the primitive's attributes (dict of Python values), the
inputs the node's input values (Tensors, Python scalars/tuples from Constant nodes, tuples from MakeTuple, MONAD).
MindSpore 2.x primitive functions take their arguments as inputs (MatMul(x, w, transpose_a, transpose_b)); older
primitives (Conv2D, MaxPool) keep them in `attrs`. Semantics follow MindSpore's operator docs (mindspore.ops.<Name>).
"""
from .. import ops as _ops
from ..ops import _kernels
from ..common.tensor import Tensor


class _Monad:
    """MindSpore's UMonad/IOMonad (side-effect ordering tokens): carries no data."""
    def __repr__(self):
        return "MONAD"


MONAD = _Monad()


def _ints(v, what):
    if isinstance(v, Tensor):
        v = v.asnumpy().reshape(-1).tolist()
    if isinstance(v, int):
        return [v]
    try:
        return [int(i) for i in v]
    except TypeError:
        raise TypeError(f"{what} must be an int or a tuple of ints, but got {v!r}.") from None


def _hw(v, what):
    """(h, w) of a MindSpore 2- or 4-element window attribute (NCHW: the last two)."""
    v = _ints(v, what)
    if len(v) == 1:
        return [v[0], v[0]]
    if len(v) in (2, 4):
        return v[-2:]
    raise ValueError(f"{what} must have 1, 2 or 4 elements, but got {v}.")


def _same_pads(size, kernel, stride, dilation=(1, 1)):
    """[top, bottom, left, right] of MindSpore's "same" padding: output ceil(in / stride), the extra row/column at
    the bottom/right (MindSpore's Conv2D/MaxPool pad_mode 'same')."""
    pads = []
    for i in range(2):
        out = -(-size[i] // stride[i])
        eff = (kernel[i] - 1) * dilation[i] + 1
        total = max((out - 1) * stride[i] + eff - size[i], 0)
        pads += [total // 2, total - total // 2]
    return pads


def _conv2d(a, x, w, *_):
    if a.get("format", "NCHW") != "NCHW":
        raise ValueError(f"Conv2D format {a.get('format')!r} is not supported (NCHW only).")
    stride = _hw(a.get("stride", 1), "Conv2D stride")
    dilation = _hw(a.get("dilation", 1), "Conv2D dilation")
    mode = str(a.get("pad_mode", "valid")).lower()
    if "pad_list" in a and any(_ints(a["pad_list"], "pad_list")):
        pad = _ints(a["pad_list"], "Conv2D pad_list")
    elif mode == "same":
        pad = _same_pads(x.shape[2:], w.shape[2:], stride, dilation)
    elif mode == "pad":
        pad = _ints(a.get("pad", 0), "Conv2D pad")
        pad = pad * 4 if len(pad) == 1 else pad
    else:
        pad = [0, 0, 0, 0]
    return _kernels.conv2d(x, w, stride, pad, dilation, int(a.get("group", a.get("groups", 1))))


def _bias_add(a, x, b, data_format=0, *_):
    fmt = a.get("data_format", data_format)
    if fmt in (0, "NCHW", "NCDHW") and x.ndim > 2:
        return _ops.add(x, _kernels.reshape(b, [1, -1] + [1] * (x.ndim - 2)))
    return _ops.add(x, b)


def _batch_norm(a, x, scale, bias, mean, var, is_training=False, epsilon=1e-5, momentum=0.1, data_format=0, *_):
    training = bool(a.get("is_training", is_training))
    eps = float(a.get("epsilon", epsilon))
    if data_format not in (0, "NCHW") or a.get("format", a.get("data_format", "NCHW")) not in ("NCHW", 0):
        raise ValueError("BatchNorm data_format NHWC is not supported (NCHW only).")
    y, m, v = _kernels.batch_norm(x, scale, bias, mean, var, training, eps)
    return (y, m, v, m, v)


def _pool_window(a, x, kind):
    kernel = _hw(a["kernel_size"], f"{kind} kernel_size")
    stride = _hw(a["strides"], f"{kind} strides")
    if str(a.get("format", a.get("data_format", "NCHW"))) not in ("NCHW", "0"):
        raise ValueError(f"{kind} format {a.get('format')!r} is not supported (NCHW only).")
    mode = a.get("pad_mode", "VALID")
    mode = {0: "PAD", 1: "SAME", 2: "VALID"}.get(mode, mode) if isinstance(mode, int) else str(mode).upper()
    if mode == "SAME":
        pad = _same_pads(x.shape[2:], kernel, stride)
    elif mode == "VALID":
        pad = [0, 0, 0, 0]
    else:
        pad = _ints(a.get("pad_list", a.get("pad", 0)), f"{kind} pad")
        pad = pad * 4 if len(pad) == 1 else pad
    return kernel, stride, pad


def _max_pool(a, x, *_):
    kernel, stride, pad = _pool_window(a, x, "MaxPool")
    return _kernels.max_pool2d(x, kernel, stride, pad, [1, 1], False, False)


def _avg_pool(a, x, kernel_size=None, strides=None, pad_mode=None, data_format=None, *_):
    b = dict(a)
    for k, v in (("kernel_size", kernel_size), ("strides", strides), ("pad_mode", pad_mode),
                 ("data_format", data_format)):
        if v is not None:
            b[k] = v
    kernel, stride, pad = _pool_window(b, x, "AvgPool")
    # MindSpore's AvgPool divides by the number of real (unpadded) elements in "same" mode.
    return _kernels.avg_pool2d(x, kernel, stride, pad, False, not any(pad), 0)


def _matmul(a, x, y, transpose_a=False, transpose_b=False, *_):
    return _kernels.matmul(x, y, bool(a.get("transpose_a", transpose_a)), bool(a.get("transpose_b", transpose_b)))


def _reduce(fn, name):
    def run(a, x, axis=(), keep_dims=False, *_):
        axis = _ints(axis, f"{name} axis") if axis is not None else []
        return fn(x, axis if axis else None, bool(a.get("keep_dims", keep_dims)))
    return run


def _reduce_ext(fn, name):
    """MindSpore 2.x's SumExt / MeanExt(x, dim, keepdim, dtype): dim None reduces every axis."""
    def run(a, x, dim=None, keepdim=False, dtype=None, *_):
        if dtype is not None:
            from ._mindir_proto import TYPE_ID_DTYPES
            x = _kernels.cast(x, TYPE_ID_DTYPES[dtype]) if dtype in TYPE_ID_DTYPES else x
        axis = None if dim is None else (_ints(dim, f"{name} dim") or None)
        return fn(x, axis, bool(keepdim))
    return run


def _layer_norm(a, x, gamma, beta, begin_norm_axis=1, begin_params_axis=1, epsilon=1e-7, *_):
    bna = int(a.get("begin_norm_axis", begin_norm_axis))
    bpa = int(a.get("begin_params_axis", begin_params_axis))
    eps = float(a.get("epsilon", epsilon))
    y = _kernels.layer_norm(x, gamma, beta, bna, bpa, eps)
    axes = list(range(bna % x.ndim, x.ndim))
    mean = _kernels.mean(x, axes, True)
    var = _kernels.mean(_ops.square(_ops.sub(x, mean)), axes, True)
    return (y, mean, _ops.rsqrt(_ops.add(var, eps)))


def _softmax(a, x, axis=-1, *_):
    ax = _ints(a.get("axis", axis), "Softmax axis")
    if len(ax) != 1:
        raise ValueError(f"Softmax over several axes {ax} is not supported.")
    return _kernels.softmax(x, ax[0])


def _log_softmax(a, x, axis=-1, *_):
    return _kernels.log_softmax(x, _ints(a.get("axis", axis), "LogSoftmax axis")[0])


def _flatten(a, x, *_):
    return _kernels.reshape(x, [x.shape[0] if x.ndim else 1, -1])


def _tuple_get_item(a, t, i, *_):
    return t[int(i)]


def _unary(fn):
    return lambda a, x, *_: fn(x)


def _binary(fn):
    return lambda a, x, y, *_: fn(x, y)


def _cast(a, x, dst_type, *_):
    from ._mindir_proto import TYPE_ID_DTYPES
    dt = TYPE_ID_DTYPES.get(dst_type) if isinstance(dst_type, int) else None
    if dt is None:
        raise ValueError(f"Cast to MindSpore type id {dst_type!r} is not supported.")
    return _kernels.cast(x, dt)


def _strided_slice(a, x, begin, end, strides, begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0,
                   shrink_axis_mask=0, *_):
    """MindSpore's StridedSlice: begin/end/strides per leading axis (Python slice rules), bit i of begin_mask /
    end_mask ignores begin[i] / end[i], bit i of shrink_axis_mask takes index begin[i] and drops the axis."""
    masks = {k: int(a.get(k, v)) for k, v in (("begin_mask", begin_mask), ("end_mask", end_mask),
                                               ("ellipsis_mask", ellipsis_mask), ("new_axis_mask", new_axis_mask),
                                               ("shrink_axis_mask", shrink_axis_mask))}
    if masks["ellipsis_mask"] or masks["new_axis_mask"]:
        raise ValueError("StridedSlice with ellipsis_mask or new_axis_mask is not supported.")
    begin, end, strides = (_ints(v, "StridedSlice " + n) for v, n in ((begin, "begin"), (end, "end"),
                                                                       (strides, "strides")))
    b, e, st, keep = [], [], [], []
    for i, dim in enumerate(x.shape):
        if i >= len(begin):
            b.append(0), e.append(dim), st.append(1), keep.append(dim)
            continue
        if masks["shrink_axis_mask"] >> i & 1:
            j = begin[i] + dim if begin[i] < 0 else begin[i]
            if not 0 <= j < dim:
                raise IndexError(f"StridedSlice index {begin[i]} is out of range for axis {i} of size {dim}.")
            b.append(j), e.append(j + 1), st.append(1)
            continue
        lo = None if masks["begin_mask"] >> i & 1 else begin[i]
        hi = None if masks["end_mask"] >> i & 1 else end[i]
        start, stop, step = slice(lo, hi, strides[i]).indices(dim)
        b.append(start), e.append(stop), st.append(step)
        keep.append(len(range(start, stop, step)))
    y = _kernels.strided_slice(x, b, e, st)
    return _kernels.reshape(y, keep) if masks["shrink_axis_mask"] else y


def _concat(a, tensors, axis=0, *_):
    return _kernels.concat(list(tensors), int(a.get("axis", axis)))


PRIMITIVES = {
    # structure and side-effect bookkeeping
    "Load": lambda a, x, *_: x,
    "UpdateState": lambda a, *_: MONAD,
    "Depend": lambda a, x, *_: x,
    "MakeTuple": lambda a, *xs: tuple(xs),
    "TupleGetItem": _tuple_get_item,
    "Identity": _unary(_kernels.identity),
    "StopGradient": _unary(_kernels.stop_gradient),
    # neural-network layers
    "Conv2D": _conv2d,
    "BiasAdd": _bias_add,
    "BatchNorm": _batch_norm,
    "MaxPool": _max_pool,
    "AvgPool": _avg_pool,
    "AdaptiveAvgPool2D": lambda a, x, size=None, *_: _kernels.adaptive_avg_pool2d(
        x, _hw(a.get("output_size", size), "AdaptiveAvgPool2D output_size")),
    "MatMul": _matmul,
    "BatchMatMul": _matmul,
    "Flatten": _flatten,
    "Softmax": _softmax,
    "LogSoftmax": _log_softmax,
    "ReLU": _unary(_ops.relu),
    "Sigmoid": _unary(_ops.sigmoid),
    "Tanh": _unary(_ops.tanh),
    "GeLU": _unary(lambda x: _kernels.gelu(x, True)),
    # arithmetic
    "Add": _binary(_ops.add), "Sub": _binary(_ops.sub), "Mul": _binary(_ops.mul), "Div": _binary(_kernels.div),
    "RealDiv": _binary(_kernels.div), "Muls": _binary(_ops.mul), "Adds": _binary(_ops.add),
    "Maximum": _binary(_ops.maximum), "Minimum": _binary(_ops.minimum), "Pow": _binary(_kernels.pow),
    "Atan2": _binary(_kernels.atan2), "Erfinv": _unary(_kernels.erfinv),
    "Neg": _unary(_ops.neg), "Exp": _unary(_ops.exp), "Log": _unary(_ops.log), "Sqrt": _unary(_ops.sqrt),
    "Rsqrt": _unary(_ops.rsqrt), "Abs": _unary(_ops.abs), "Square": _unary(_ops.square),
    "Erf": _unary(_ops.erf), "Sin": _unary(_kernels.sin), "Cos": _unary(_kernels.cos), "Floor": _unary(_kernels.floor),
    "Ceil": _unary(_kernels.ceil), "Sign": _unary(_ops.sign), "Log1p": _unary(_kernels.log1p),
    "ACos": _unary(_ops.acos), "Asin": _unary(_ops.asin), "Atan": _unary(_ops.atan), "Sinh": _unary(_ops.sinh),
    "Cosh": _unary(_ops.cosh), "Tan": _unary(_ops.tan), "Asinh": _unary(_ops.asinh), "Acosh": _unary(_ops.acosh),
    "Atanh": _unary(_ops.atanh), "Expm1": _unary(_ops.expm1), "Erfc": _unary(_ops.erfc),
    "Trunc": _unary(_ops.trunc), "Sinc": _unary(_ops.sinc), "Xlogy": _binary(_ops.xlogy),
    "TruncateDiv": _binary(_ops.truncate_div), "Fmax": _binary(_ops.fmax), "Fmin": _binary(_ops.fmin),
    "Heaviside": _binary(_ops.heaviside), "Reciprocal": _unary(_ops.reciprocal),
    "Round": lambda a, x, decimals=0, *_: _ops.round(x, decimals=int(decimals)),
    "HSwish": _unary(_ops.hardswish), "HSigmoid": _unary(_ops.hardsigmoid), "SeLU": _unary(_ops.selu),
    "Mish": _unary(_ops.mish), "Softplus": _unary(_ops.softplus),
    # reductions and shapes
    "ReduceSum": _reduce(_kernels.sum, "ReduceSum"), "ReduceMean": _reduce(_kernels.mean, "ReduceMean"),
    "ReduceMax": _reduce(_kernels.amax, "ReduceMax"), "ReduceMin": _reduce(_kernels.amin, "ReduceMin"),
    "SumExt": _reduce_ext(_kernels.sum, "SumExt"), "MeanExt": _reduce_ext(_kernels.mean, "MeanExt"),
    "Squeeze": lambda a, x, axis=(), *_: _kernels.squeeze(x, _ints(a.get("axis", axis), "Squeeze axis") or None),
    "ExpandDims": lambda a, x, axis, *_: _kernels.expand_dims(x, int(axis)),
    "LayerNorm": _layer_norm,
    "Gather": lambda a, x, indices, axis=0, *_: _kernels.gather(x, indices, int(axis)),
    "GatherD": lambda a, x, dim, index, *_: _kernels.gather_d(x, int(dim), index),
    "Reshape": lambda a, x, shape, *_: _kernels.reshape(x, _ints(shape, "Reshape shape")),
    "Transpose": lambda a, x, perm, *_: _kernels.transpose(x, _ints(perm, "Transpose perm")),
    "BroadcastTo": lambda a, x, shape=None, *_: _kernels.broadcast_to(
        x, _ints(a.get("shape", shape), "BroadcastTo shape")),
    "Concat": _concat,
    "Cast": _cast,
    "StridedSlice": _strided_slice,
    # comparisons and selection
    "Equal": _binary(_ops.equal), "NotEqual": _binary(_ops.not_equal), "Greater": _binary(_ops.greater),
    "GreaterEqual": _binary(_ops.greater_equal), "Less": _binary(_ops.less), "LessEqual": _binary(_ops.less_equal),
    "LogicalAnd": _binary(_ops.logical_and), "LogicalOr": _binary(_ops.logical_or),
    "LogicalNot": _unary(_ops.logical_not),
    "Select": lambda a, c, x, y, *_: _kernels.select(c, x, y),
}
