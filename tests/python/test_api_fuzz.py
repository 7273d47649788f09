"""Fuzz test of the public API's argument checking: every function of kiln.ops, every Primitive, every nn layer and
loss (constructed with small valid arguments) is called with bad arguments — None, strings, dicts, ragged nested
lists, object arrays, big-endian arrays, tensors of the wrong rank — one argument at a time.

A call passes when it succeeds (with a big-endian array: with the values of the native array) or raises
TypeError / ValueError / RuntimeError / IndexError / OverflowError whose message shows no binding internals
(nanobind's list of signatures, C++ names, Python attribute errors on None)."""
import inspect
import warnings

import numpy as np
import pytest

import kiln as ms
from kiln import Tensor, nn, ops
from kiln.ops.primitives import Primitive

FORBIDDEN = ("incompatible function arguments", "nanobind", "kiln._core", "Invoked with", "std::",
             "'NoneType' object has no attribute", "has no attribute")
ALLOWED = (TypeError, ValueError, RuntimeError, IndexError, OverflowError)

BAD = {
    "None": None,
    "str": "a",
    "dict": {"a": 1},
    "ragged": [[1.0, 2.0], [3.0]],
    "object_array": np.array([1, "a", None], dtype=object),
    "tensor_0d": Tensor(np.float32(1.5)),
    "tensor_5d": Tensor(np.ones((1, 2, 1, 2, 1), np.float32)),
}
# Functions that take callables / control the process rather than tensors; they are checked elsewhere.
SKIP_OPS = {"print_", "grad", "value_and_grad", "get_grad", "depend", "P", "F", "operations", "functional"}


def _valid():
    return Tensor(np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], np.float32))


def _big_endian():
    return np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], ">f4")


def _check_message(where, exc):
    msg = str(exc)
    for bad in FORBIDDEN:
        assert bad not in msg, f"{where}: {type(exc).__name__} shows binding internals: {msg!r}"


def _call(where, fn, args, kwargs=None):
    """Calls fn; returns (ok, result). Fails the test on a disallowed exception type or message."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return True, fn(*args, **(kwargs or {}))
    except ALLOWED as e:
        _check_message(where, e)
        return False, None
    except Exception as e:  # noqa: BLE001 — any other type is a failure of argument checking
        pytest.fail(f"{where}: raised {type(e).__name__}: {e}")


def _as_list(r):
    if isinstance(r, Tensor):
        return [r]
    if isinstance(r, (tuple, list)):
        return [x for x in r if isinstance(x, Tensor)]
    return []


def _same_result(where, a, b):
    la, lb = _as_list(a), _as_list(b)
    assert len(la) == len(lb), where
    for x, y in zip(la, lb):
        if x.dtype == ms.bfloat16:
            x, y = x.astype(ms.float32), y.astype(ms.float32)
        np.testing.assert_array_equal(x.asnumpy(), y.asnumpy(), err_msg=where)


def _n_positional(fn):
    """How many arguments to pass: the required positional parameters (at least 1, at most 4)."""
    try:
        sig = inspect.signature(fn)
        req = [p for p in sig.parameters.values()
               if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty]
        n = len(req)
    except (TypeError, ValueError):  # a C++ function: count from nanobind's signature
        sigs = getattr(fn, "__nb_signature__", None)
        if not sigs:
            return 1
        s = sigs[0][0]
        inner = s[s.index("(") + 1:s.rindex(")")]
        n = len([p for p in inner.split(",") if p.strip() and "=" not in p and p.strip() not in ("/", "*")])
    return max(1, min(n, 4))


def _optional_names(fn):
    """Names of the parameters with defaults (keyword-passable)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return []
    return [p.name for p in sig.parameters.values()
            if p.default is not p.empty and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]


def _fuzz_optional(where, fn, n):
    """Each optional parameter in turn gets each bad value (the required ones a valid float tensor)."""
    for pname in _optional_names(fn):
        for name, bad in BAD.items():
            _call(f"{where} {pname}={name}", fn, [_valid() for _ in range(n)], {pname: bad})


def _fuzz(where, fn, n):
    """Each position in turn gets each bad value (the others a valid float tensor); then the big-endian array."""
    for i in range(n):
        for name, bad in BAD.items():
            args = [_valid() for _ in range(n)]
            args[i] = bad
            _call(f"{where} arg {i} = {name}", fn, args)
        args_native = [_valid() for _ in range(n)]
        args_big = list(args_native)
        args_big[i] = _big_endian()
        args_np = list(args_native)
        args_np[i] = _big_endian().astype("<f4")
        ok_big, r_big = _call(f"{where} arg {i} = big-endian", fn, args_big)
        ok_np, r_np = _call(f"{where} arg {i} = native array", fn, args_np)
        assert ok_big == ok_np, f"{where} arg {i}: a big-endian array behaves differently from the native array"
        if ok_big:
            _same_result(f"{where} arg {i}", r_big, r_np)


def _public_ops():
    out = []
    for name in sorted(dir(ops)):
        if name.startswith("_") or name in SKIP_OPS:
            continue
        obj = getattr(ops, name)
        if inspect.isclass(obj) or inspect.ismodule(obj) or not callable(obj):
            continue
        out.append(name)
    return out


def test_the_fuzzed_api_is_not_empty():
    assert len(_public_ops()) > 80
    assert not [n for n in _public_ops() if n.endswith("_arg")], "argument validators leaked into kiln.ops"
    assert len(_primitives()) > 30


@pytest.mark.parametrize("name", _public_ops())
def test_ops_function_bad_arguments(name):
    fn = getattr(ops, name)
    ms.set_seed(0)
    _fuzz(f"ops.{name}", fn, _n_positional(fn))
    _fuzz_optional(f"ops.{name}", fn, _n_positional(fn))


def _primitives():
    return sorted(n for n in dir(ops) if inspect.isclass(getattr(ops, n)) and issubclass(getattr(ops, n), Primitive)
                  and getattr(ops, n) is not Primitive and n != "Print")


# Collective primitives need communication.init(): they are fuzzed in a world of one process (tests/python/
# test_distributed.py tests them on several).
_COLLECTIVES = ("AllReduce", "AllGather", "ReduceScatter", "AlltoAll", "AlltoAllV", "Broadcast", "Barrier")


@pytest.mark.parametrize("name", _primitives())
def test_primitive_bad_arguments(name, monkeypatch):
    from kiln import communication
    cls = getattr(ops, name)
    if name in _COLLECTIVES:
        for var, value in (("MS_WORKER_NUM", "1"), ("MS_SCHED_HOST", "127.0.0.1"), ("MS_SCHED_PORT", "1"),
                           ("MS_NODE_ID", "0")):
            monkeypatch.setenv(var, value)
        communication.init()
    try:
        try:
            prim = cls()
        except TypeError:
            pytest.skip(f"{name} needs constructor arguments")
        call = prim.__call__
        _fuzz(f"ops.{name}()", call, _n_positional(call))
    finally:
        communication.release()


# nn layers and losses with small valid constructor arguments, and the rank of a valid input.
LAYERS = {
    "Dense": ((3, 2), 2), "Flatten": ((), 2), "Identity": ((), 2), "Dropout": ((), 2),
    "ReLU": ((), 2), "ReLU6": ((), 2), "Sigmoid": ((), 2), "Tanh": ((), 2), "GELU": ((), 2), "FastGelu": ((), 2),
    "Softmax": ((), 2), "LogSoftmax": ((), 2), "LeakyReLU": ((), 2), "SiLU": ((), 2), "ELU": ((), 2),
    "HSigmoid": ((), 2), "HSwish": ((), 2), "Softsign": ((), 2), "Softplus": ((), 2), "LogSigmoid": ((), 2),
    "Mish": ((), 2),
    "Conv2d": ((1, 2, 3), 4), "Conv1d": ((1, 2, 3), 3), "Conv2dTranspose": ((1, 2, 3), 4),
    "Conv1dTranspose": ((1, 2, 3), 3),
    "BatchNorm1d": ((3,), 2), "BatchNorm2d": ((1,), 4),
    "SyncBatchNorm": ((1, 1e-5, 0.9, True, "ones", "zeros", "zeros", "ones", None, 0), 4),  # process_groups=0
    "LayerNorm": (((3,),), 2), "GroupNorm": ((1, 1), 4),
    "MaxPool2d": ((), 4), "AvgPool2d": ((), 4), "MaxPool1d": ((), 3), "AvgPool1d": ((), 3),
    "AdaptiveAvgPool2d": ((1,), 4), "AdaptiveAvgPool1d": ((1,), 3), "Embedding": ((4, 2), 1),
    "Pad": ((((1, 1), (0, 2)),), 2),
    "RNN": ((8, 4), 3), "LSTM": ((8, 4), 3), "GRU": ((8, 4), 3),
    "PReLU": ((1, 0.25), 2), "BatchNorm3d": ((1,), 4), "InstanceNorm1d": ((1,), 3), "InstanceNorm2d": ((1,), 4),
    "InstanceNorm3d": ((1,), 4), "Conv2dBnAct": ((1, 2, 3), 4), "DenseBnAct": ((3, 2), 2),
    "Upsample": ((None, 2.0), 4), "Dropout2d": ((), 4), "Dropout3d": ((), 4),
    "CELU": ((), 2), "SeLU": ((), 2), "Hardtanh": ((), 2), "HShrink": ((), 2), "SoftShrink": ((), 2),
    "Softmin": ((), 2), "GLU": ((0,), 2), "Threshold": ((0.1, 2.0), 2), "Tanhshrink": ((), 2), "RReLU": ((), 2),
    "Conv3d": ((1, 2, 1), 4), "Conv3dTranspose": ((1, 2, 1), 4), "MaxPool3d": ((), 4), "AvgPool3d": ((), 4),
    "AdaptiveMaxPool1d": ((2,), 3),
    "AdaptiveMaxPool2d": ((2,), 4), "AdaptiveMaxPool3d": ((1,), 4), "AdaptiveAvgPool3d": ((1,), 4),
    "LPPool1d": ((2, 2), 3), "LPPool2d": ((2, 2), 4), "LRN": ((), 4), "ChannelShuffle": ((1,), 4),
    "Dropout1d": ((), 3), "FractionalMaxPool2d": ((2, (3, 3)), 4),
    "FractionalMaxPool3d": (((1, 2, 2), (1, 4, 4)), 4),  # rank 4 is (C, D, H, W)
}
# issue 24's layers
LAYERS.update({
    "ConstantPad1d": ((1, 0.5), 2), "ConstantPad2d": ((1, 0.5), 2), "ConstantPad3d": ((1, 0.5), 3),
    "ZeroPad2d": ((1,), 2), "ReflectionPad1d": ((1,), 2), "ReflectionPad2d": ((1,), 4),
    "ReflectionPad3d": (((1, 1, 1, 1, 0, 0),), 4), "ReplicationPad1d": ((1,), 3), "ReplicationPad2d": ((1,), 4),
    "ReplicationPad3d": ((1,), 4), "PixelShuffle": ((1,), 3), "PixelUnshuffle": ((2,), 4),
    "Unfold": (([1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1]), 4), "TimeDistributed": ((nn.ReLU(), 1), 3),
    "EmbeddingLookup": ((4, 2), 1), "TransformerEncoderLayer": ((8, 2, 16), 3),
    "TransformerEncoder": ((nn.TransformerEncoderLayer(8, 2, 16), 1), 3),
})
# Recurrent cells take (x, hx) with hx required (MindSpore): fuzzed one argument at a time by test_rnn_cell_bad_inputs.
RNN_CELLS = {"RNNCell": 1, "GRUCell": 1, "LSTMCell": 2}
LOSSES = ["MSELoss", "L1Loss", "MAELoss", "SmoothL1Loss", "HuberLoss", "SoftmaxCrossEntropyWithLogits",
          "CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss", "KLDivLoss", "CosineEmbeddingLoss",
          "GaussianNLLLoss", "MultiMarginLoss", "MultilabelMarginLoss", "MultiLabelSoftMarginLoss", "TripletMarginLoss",
          "CTCLoss", "SoftMarginLoss", "MarginRankingLoss", "HingeEmbeddingLoss"]


def test_every_layer_and_loss_is_fuzzed():
    from kiln.nn import layer, loss
    missing = [n for n in layer.__all__ if n not in LAYERS and n not in RNN_CELLS
               and n not in ("SequentialCell", "CellList", "CellDict", "get_activation",
                             "ClipByNorm", "MatMul", "PSNR", "SSIM",  # two inputs: test_nn_pad_clip, test_nn_layers_more
                             "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "BiDense",  # two inputs: test_nn_functional_ext
                             # several inputs: test_nn_multihead_attention
                             "MultiheadAttention", "TransformerDecoderLayer", "TransformerDecoder", "Transformer")]
    missing += [n for n in loss.__all__ if n not in LOSSES and n != "LossBase"]
    assert not missing, f"add these to the fuzz test: {missing}"


def _input_of_rank(r):
    shapes = {1: (4,), 2: (2, 3), 3: (2, 1, 8), 4: (2, 1, 8, 8)}
    return Tensor(np.random.default_rng(0).standard_normal(shapes[r]).astype(np.float32))


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layer_bad_inputs(name):
    args, rank = LAYERS[name]
    cls = getattr(nn, name)
    cell = cls(*args)
    cell.set_train(True)
    valid = _input_of_rank(rank) if name not in ("Embedding", "EmbeddingLookup") else Tensor(np.array([0, 3], np.int32))
    # 5-D layers: rank 4 is their wrong rank
    if name not in ("BatchNorm3d", "InstanceNorm3d", "Dropout3d", "Conv3d", "Conv3dTranspose"):
        assert isinstance(cell(valid), (Tensor, tuple))  # the valid input works
    for bad_name, bad in BAD.items():
        if name in ("Identity", "Dropout") and not isinstance(bad, Tensor):
            continue  # MindSpore returns the input unchanged (Dropout: in eval), whatever it is
        _call(f"nn.{name}(...)({bad_name})", cell, [bad])
    wrong_rank = _input_of_rank(1 if rank > 1 else 2)
    _call(f"nn.{name}(...)(rank {wrong_rank.ndim})", cell, [wrong_rank])
    # constructor arguments: each replaced by a bad value
    for i in range(len(args)):
        for bad_name, bad in BAD.items():
            a = list(args)
            a[i] = bad
            _call(f"nn.{name} constructor arg {i} = {bad_name}", cls, a)


@pytest.mark.parametrize("name", sorted(RNN_CELLS))
def test_rnn_cell_bad_inputs(name):
    cls = getattr(nn, name)
    cell = cls(3, 4)
    x = _valid()

    def h():
        t = Tensor(np.zeros((2, 4), np.float32))
        return (t, t) if RNN_CELLS[name] == 2 else t
    assert isinstance(cell(x, h()), (Tensor, tuple))  # the valid input works
    for bad_name, bad in BAD.items():
        _call(f"nn.{name}(...)({bad_name}, hx)", cell, [bad, h()])
        _call(f"nn.{name}(...)(x, {bad_name})", cell, [x, bad])
        if RNN_CELLS[name] == 2:
            _call(f"nn.{name}(...)(x, (h, {bad_name}))", cell, [x, (h()[0], bad)])
    _call(f"nn.{name}(...)(rank 3)", cell, [_input_of_rank(3), h()])
    for i in range(2):
        for bad_name, bad in BAD.items():
            a = [3, 4]
            a[i] = bad
            _call(f"nn.{name} constructor arg {i} = {bad_name}", cls, a)


def _tensor_methods():
    return sorted(n for n in dir(Tensor) if not n.startswith("_") and callable(getattr(_valid(), n, None))
                  and n != "from_numpy")


@pytest.mark.parametrize("name", _tensor_methods())
def test_tensor_method_bad_arguments(name):
    for bad_name, bad in BAD.items():
        x = _valid()
        _call(f"Tensor.{name}({bad_name})", getattr(x, name), [bad])


def test_dense_none_input_message():
    with pytest.raises(TypeError, match="For 'Dense', the input 'x' must be a Tensor, but got NoneType"):
        nn.Dense(3, 2)(None)


@pytest.mark.parametrize("name", LOSSES)
def test_loss_bad_inputs(name):
    loss = getattr(nn, name)()
    logits = Tensor(np.array([[0.2, 0.5, 0.3], [0.6, 0.1, 0.3]], np.float32))
    for bad_name, bad in BAD.items():
        _call(f"nn.{name}()(logits={bad_name})", loss, [bad, logits])
        _call(f"nn.{name}()(labels={bad_name})", loss, [logits, bad])


@pytest.mark.parametrize("name", ["Adam", "AdamWeightDecay", "SGD", "Momentum", "RMSProp", "Adagrad", "Lamb"])
def test_optimizer_rejects_a_duplicated_parameter_by_name(name):
    p = ms.Parameter(Tensor(np.ones(2, np.float32)), name="w_dup")
    q = ms.Parameter(Tensor(np.ones(2, np.float32)), name="w_other")
    kwargs = {"momentum": 0.9} if name == "Momentum" else {}
    with pytest.raises(RuntimeError, match="w_dup parameter already exists"):
        getattr(nn, name)([p, q, p], learning_rate=0.1, **kwargs)
    getattr(nn, name)([p, q], learning_rate=0.1, **kwargs)  # distinct parameters work
    for bad_name, bad in BAD.items():
        _call(f"nn.{name}(params={bad_name})", getattr(nn, name), [bad], {"learning_rate": 0.1, **kwargs})


def test_binding_errors_name_the_op_and_the_argument():
    x = Tensor(np.ones(2, np.float32))
    with pytest.raises(TypeError, match=r"For 'Add', the argument 'y' must be a Tensor, a number or an array-like"
                                        r" of numbers, but got str"):
        ops.add(x, "a")
    with pytest.raises(TypeError, match="For 'Add', the argument 'x' .* but got NoneType"):
        ops.add(None, x)
    with pytest.raises(TypeError, match="For 'Add', .* object"):
        ops.add(x, np.array([1, "a"], dtype=object))
    with pytest.raises(TypeError, match="For 'Cast', the argument 'dtype' must be a dtype"):
        ms._core.cast(x, "float32")
    with pytest.raises(TypeError, match="For 'Add', expected at most 2 arguments"):
        ms._core.add(x, x, x)
    # implicit conversions the bindings accept still work (int for a float parameter, NumPy ints for ints)
    np.testing.assert_array_equal(ms._core.full([2], 3, ms.float32).asnumpy(), [3.0, 3.0])
    np.testing.assert_array_equal(ops.expand_dims(x, np.int64(0)).shape, (1, 2))


# ---- argument kinds: a float, None, a str or a Tensor where a shape, axis, int or dtype is expected ----
SHAPE_LIKE = {"shape": (2, 3), "size": (2, 3), "input_perm": (1, 0), "perm": (1, 0), "axis": 0, "dim": 0,
              "split_size_or_sections": 1, "normalized_shape": (3,), "num_groups": 1, "n": 2, "m": 2}
DTYPE_LIKE = {"dtype": None, "type": ms.float32}
KIND_BAD = {"float": 2.5, "None": None, "str": "abc", "tensor": "TENSOR"}
BARE_ERRORS = ("object is not iterable", "cannot be interpreted as an integer", "negative dimensions",
               "float() argument", "invalid literal", "Could not convert", "truth value of an array",
               "inhomogeneous", "only one element", "do not match its parameters")


def _kind_calls(fn):
    """(parameter, bad-kind name, args, kwargs) for each shape/axis/int/dtype parameter of fn and each bad kind;
    the other required parameters get a valid float tensor or a valid shape/axis/dtype."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return []
    params = [p for p in sig.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD,
                                                              p.KEYWORD_ONLY)]
    out = []
    for target in params:
        if target.name not in SHAPE_LIKE and target.name not in DTYPE_LIKE:
            continue
        for kind, bad in KIND_BAD.items():
            if bad is None and (target.default is None or target.name in DTYPE_LIKE):
                continue  # None is the documented default (a dtype: the op's default dtype)
            if target.name in ("axis", "dim") and kind == "None" and target.default is not target.empty:
                continue
            args, kwargs = [], {}
            for p in params:
                if p is target:
                    v = _valid() if bad == "TENSOR" else bad
                elif p.default is not p.empty:
                    continue
                elif p.name in SHAPE_LIKE:
                    v = SHAPE_LIKE[p.name]
                elif p.name in DTYPE_LIKE:
                    v = ms.float32
                else:
                    v = _valid()
                if p.kind == p.POSITIONAL_ONLY:
                    args.append(v)
                else:
                    kwargs[p.name] = v
            out.append((target.name, kind, args, kwargs))
    return out


def _kind_fuzzed_ops():
    return [n for n in _public_ops() if _kind_calls(getattr(ops, n))]


def test_argument_kinds_cover_the_shape_and_dtype_ops():
    names = set(_kind_fuzzed_ops())
    assert {"zeros", "ones", "reshape", "transpose", "broadcast_to", "cat", "stack", "eye", "arange", "split",
            "squeeze", "layer_norm", "group_norm", "cast", "sum", "softmax", "full"} - {"cat", "stack", "arange"} <= names


@pytest.mark.parametrize("name", _kind_fuzzed_ops())
def test_ops_shape_axis_dtype_arguments_give_op_errors(name):
    """A wrong kind of value for a shape/axis/int/dtype parameter raises TypeError/ValueError whose message names
    the op ("For '...'") and is none of the bare Python errors of list()/int()/np.dtype()."""
    fn = getattr(ops, name)
    for pname, kind, args, kwargs in _kind_calls(fn):
        where = f"ops.{name}({pname}={kind})"
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fn(*args, **kwargs)
        except (TypeError, ValueError) as e:
            msg = str(e)
            assert "For '" in msg, f"{where}: message does not name the op: {msg!r}"
            for bare in BARE_ERRORS:
                assert bare not in msg, f"{where}: bare Python error: {msg!r}"
            assert "value=" not in msg, f"{where}: the message prints a tensor's values: {msg!r}"
            continue
        pytest.fail(f"{where}: accepted")


@pytest.mark.parametrize("call", [
    lambda t: ops.cat(None), lambda t: ops.stack(1.0), lambda t: ops.cat([t, None]), lambda t: ops.stack([t, "a"]),
    lambda t: ops.arange(None), lambda t: ops.arange(t), lambda t: ops.arange(0, "a"), lambda t: ops.eye(-2),
    lambda t: ops.eye("a"), lambda t: ops.zeros(-1), lambda t: ops.randn(2.5), lambda t: ops.rand(None),
    lambda t: ops.transpose(t, 1.0), lambda t: ops.reshape(t, [2, 3.0]), lambda t: ops.squeeze(t, "a"),
    lambda t: ops.split(t, [1, 1.5]), lambda t: ops.group_norm(t, "abc"), lambda t: ops.layer_norm(t, t),
    lambda t: ops.expand_dims(t, 1.0), lambda t: ops.unsqueeze(t, None), lambda t: ops.gather(t, t, "a"),
    lambda t: ops.max(t, 1.5), lambda t: ops.argmax(t, "a"), lambda t: ops.sum(t, 1.0), lambda t: ops.softmax(t, None),
    lambda t: ops.cast(t, t), lambda t: ops.ones((2, 3), t), lambda t: ops.full((2,), 1.0, dtype="abc"),
    lambda t: ops.Reshape()(t, 6.0), lambda t: ops.Transpose()(t, None), lambda t: ops.Cast()(t, t),
    lambda t: ops.Concat()(None), lambda t: ops.ExpandDims()(t, 0.5), lambda t: ops.Squeeze(1.5),
    lambda t: ops.where(None, t, t), lambda t: ops.select("a", t, t),
])
def test_named_bad_arguments_give_op_errors(call):
    """The cases of the tester's list (and the same kinds in their neighbours): MindSpore-style messages."""
    t = _valid()
    with pytest.raises((TypeError, ValueError)) as info:
        call(t)
    msg = str(info.value)
    assert "For '" in msg, msg
    for bare in BARE_ERRORS:
        assert bare not in msg, msg
    assert "value=" not in msg, msg


TENSOR_SHAPE_METHODS = ["reshape", "view", "transpose", "permute", "squeeze", "expand_dims", "unsqueeze",
                        "broadcast_to", "flatten", "sum", "astype", "to", "set_dtype"]


@pytest.mark.parametrize("name", TENSOR_SHAPE_METHODS)
def test_tensor_shape_axis_dtype_methods_give_op_errors(name):
    """Tensor methods taking a shape, axis or dtype: a float, a str or a Tensor raises naming 'Tensor.<method>'
    (None is the default of some; where it is not, it raises the same way)."""
    x = _valid()
    for kind, bad in {"float": 2.5, "str": "abc", "tensor": _valid(), "None": None}.items():
        try:
            getattr(x, name)(bad)
        except (TypeError, ValueError) as e:
            msg = str(e)
            assert f"For 'Tensor.{name}'" in msg or "For '" in msg, f"Tensor.{name}({kind}): {msg!r}"
            for bare in BARE_ERRORS:
                assert bare not in msg, f"Tensor.{name}({kind}): bare Python error: {msg!r}"
            assert "value=" not in msg, msg
            continue
        assert kind == "None", f"Tensor.{name}({kind}) accepted"


def _numpy_functions():
    import kiln.numpy as mnp
    return sorted(n for n in mnp.__all__ if callable(getattr(mnp, n)) and not isinstance(getattr(mnp, n), ms.dtype.Type)
                  and inspect.isfunction(getattr(mnp, n)))


@pytest.mark.parametrize("name", _numpy_functions())
def test_numpy_function_bad_arguments(name):
    import kiln.numpy as mnp
    fn = getattr(mnp, name)
    ms.set_seed(0)
    _fuzz(f"numpy.{name}", fn, _n_positional(fn))
