"""Primitive classes against the registry: each hand-written Primitive class of kiln.ops (those not derived from a
@defop function) runs the registry samples of the kiln.ops function it corresponds to, and must give the function
entry's NumPy reference (PyNative, and one sample under kiln.jit).

How: while an entry's samples run, `kiln.ops.<function>` is replaced by an adapter that builds the Primitive (its
__init__ attributes from the function's keyword arguments) and calls it; a counter proves the Primitive really ran
(an entry that bound the function early would otherwise check nothing). test_every_primitive_is_covered checks that
every Primitive class is derived from a covered @defop function, mapped here, called by a registry entry by name,
or listed in NOT_IN_REGISTRY with the test file that checks it."""
import contextlib
import inspect
import re

import numpy as np
import pytest

import kiln
from kiln import ops

import op_registry as R
from op_registry import np_value, to_kiln
from test_op_registry import _assert_values, _expected_dtype, _np_dtype, _outs, _reference
from test_registry_coverage import _names_reached, reached_by_registry

P = ops  # the Primitive classes live in kiln.ops (and kiln.ops.operations)


def _plain(cls):
    return lambda *a, **k: cls()(*a, **k)


# Primitive class name -> (kiln.ops function it stands for, adapter(cls) -> a callable with that function's
# signature that builds and calls the Primitive). None: called with the function's arguments as they are.
PRIMITIVE_OF = {name: (fn, None) for name, fn in {
    "Abs": "abs", "Add": "add", "AddN": "addn", "Cast": "cast", "Ceil": "ceil", "CheckValid": "check_valid",
    "Cos": "cos", "Div": "div", "Equal": "equal", "Exp": "exp", "Fill": "fill", "Flatten": "flatten",
    "Floor": "floor", "FloorDiv": "floor_div", "Gather": "gather", "GatherNd": "gather_nd", "GeLU": "gelu",
    "Greater": "greater", "GreaterEqual": "greater_equal", "Identity": "identity", "Less": "less",
    "LessEqual": "less_equal", "LinSpace": "linspace", "Log": "log", "LogicalAnd": "logical_and",
    "LogicalNot": "logical_not", "LogicalOr": "logical_or", "MaskedFill": "masked_fill", "Maximum": "maximum",
    "Minimum": "minimum", "Mul": "mul", "Neg": "neg", "NotEqual": "not_equal", "Pow": "pow", "ReLU": "relu",
    "ReLU6": "relu6", "HSigmoid": "hardsigmoid", "Reciprocal": "reciprocal", "Reshape": "reshape", "Rsqrt": "rsqrt",
    "ScalarToTensor": "scalar_to_tensor", "ScatterNd": "scatter_nd", "Sigmoid": "sigmoid", "Sign": "sign",
    "Sin": "sin", "Slice": "slice", "Softplus": "softplus", "Sqrt": "sqrt", "Square": "square", "Erf": "erf",
    "StopGradient": "stop_gradient", "Sub": "sub", "Tanh": "tanh", "TensorScatterAdd": "tensor_scatter_add",
    "TensorScatterSub": "tensor_scatter_sub", "TensorScatterUpdate": "tensor_scatter_update", "Tile": "tile",
    "Transpose": "transpose", "TupleToArray": "tuple_to_array", "Depend": "depend", "Select": "select",
    "ExpandDims": "expand_dims", "Assign": "assign", "AssignAdd": "assign_add", "AssignSub": "assign_sub",
    "ScatterAdd": "scatter_add", "ScatterUpdate": "scatter_update", "ScatterNdAdd": "scatter_nd_add",
    "ScatterNdSub": "scatter_nd_sub", "ScatterNdUpdate": "scatter_nd_update", "OnesLike": "ones_like",
    "ZerosLike": "zeros_like",
}.items()}
PRIMITIVE_OF.update({
    "RealDiv": ("div", lambda cls: lambda x, y, rounding_mode=None: cls()(x, y) if rounding_mode is None
                else _unadapted("div")(x, y, rounding_mode=rounding_mode)),
    "Concat": ("concat", lambda cls: lambda tensors, axis=0: cls(axis)(tensors)),
    "GridSampler2D": ("grid_sample", lambda cls: lambda input, grid, mode="bilinear", padding_mode="zeros",
                      align_corners=None: cls(mode, padding_mode, bool(align_corners))(input, grid) if input.ndim == 4
                      else _unadapted("grid_sample")(input, grid, mode, padding_mode, align_corners)),
    "Stack": ("stack", lambda cls: lambda tensors, axis=0: cls(axis)(tensors)),
    "Unstack": ("unstack", lambda cls: lambda x, axis=0: cls(axis)(x)),
    "Softmax": ("softmax", lambda cls: lambda x, axis=-1, dtype=None: cls(axis)(x if dtype is None
                                                                             else ops.cast(x, dtype))),
    "LogSoftmax": ("log_softmax", lambda cls: lambda x, axis=-1: cls(axis)(x)),
    "ReduceSum": ("reduce_sum", lambda cls: lambda x, axis=(): cls(False)(x, axis)),
    "ReduceMean": ("mean", lambda cls: lambda x, axis=None, keep_dims=False: cls(keep_dims)(
        x, () if axis is None else axis)),
    "ReduceMax": ("amax", lambda cls: lambda x, axis=None, keepdims=False: cls(keepdims)(
        x, () if axis is None else axis)),
    "ReduceMin": ("amin", lambda cls: lambda x, axis=None, keepdims=False: cls(keepdims)(
        x, () if axis is None else axis)),
    "MatMul": ("matmul", lambda cls: lambda a, b: cls()(a, b) if a.ndim == 2 and b.ndim == 2
               else _unadapted("matmul")(a, b)),
    "BroadcastTo": ("broadcast_to", lambda cls: lambda x, shape: cls(shape)(x)),
    "Sort": ("sort", lambda cls: lambda x, axis=-1, descending=False: cls(axis, descending)(x)),
    "TopK": ("top_k", lambda cls: lambda x, k, sorted=True: cls(sorted)(x, k)),
    "Squeeze": ("squeeze", lambda cls: lambda x, axis=None: cls(() if axis is None else axis)(x)),
    "IOU": ("iou", lambda cls: lambda a, g, mode="iou": cls(mode)(a, g)),
    "BoundingBoxEncode": ("bounding_box_encode", lambda cls: lambda a, g, means=(0.0,) * 4, stds=(1.0,) * 4:
                          cls(means, stds)(a, g)),
    "BoundingBoxDecode": ("bounding_box_decode", lambda cls: lambda a, d, max_shape, means=(0.0,) * 4,
                          stds=(1.0,) * 4, wh_ratio_clip=0.016: cls(max_shape, means, stds, wh_ratio_clip)(a, d)),
    "BinaryCrossEntropy": ("binary_cross_entropy", lambda cls: lambda x, y, weight=None, reduction="mean":
                           cls(reduction)(x, y, weight)),
    "BCEWithLogitsLoss": ("binary_cross_entropy_with_logits", lambda cls: lambda x, y, weight=None,
                          pos_weight=None, reduction="mean": cls(reduction)(x, y, weight, pos_weight)),
    "SmoothL1Loss": ("smooth_l1_loss", lambda cls: lambda x, t, beta=1.0, reduction="none":
                     cls(beta, reduction)(x, t)),
    "KLDivLoss": ("kl_div", lambda cls: lambda x, t, reduction="mean": cls(reduction)(x, t)),
    "OneHot": ("one_hot", lambda cls: lambda i, depth, on_value=1, off_value=0, axis=-1:
               cls(axis)(i, depth, _scalar_tensor(on_value), _scalar_tensor(off_value))),
    "MatrixSolve": ("matrix_solve", lambda cls: lambda a, b, adjoint=False: cls(adjoint)(a, b)),
    "Transpose": ("transpose", lambda cls: lambda x, input_perm: cls()(x, input_perm)),
    # MindSpore's GeLU primitive is the tanh form (ops.gelu(x, approximate='tanh'))
    "GeLU": ("gelu", lambda cls: lambda x, approximate="none": cls()(x) if approximate == "tanh"
             else _unadapted("gelu")(x, approximate=approximate)),
    "AdaptiveAvgPool2D": ("adaptive_avg_pool2d", lambda cls: lambda x, output_size: cls(output_size)(x)),
})

# Primitive classes no registry function entry can drive: each with the test file that checks its values.
NOT_IN_REGISTRY = {
    "Primitive": "the base class",
    "AllGather": "collective: tests/python/test_distributed.py", "AllReduce": "collective: test_distributed.py",
    "Broadcast": "collective: test_distributed.py", "ReduceScatter": "collective: test_distributed.py",
    "Barrier": "collective: test_distributed.py",
    "AlltoAll": "collective: tests/python/test_alltoall.py", "AlltoAllV": "collective: test_alltoall.py",
    "ForiLoop": "control flow: tests/python/test_control_flow*.py", "WhileLoop": "control flow: test_control_flow*.py",
    "Scan": "control flow: test_control_flow*.py",
    "ScalarSummary": "summary op: tests/python/test_summary.py", "TensorSummary": "summary op: test_summary.py",
    "ImageSummary": "summary op: test_summary.py", "HistogramSummary": "summary op: test_summary.py",
    "Print": "prints: the print_ entry (state.py) and tests/python/test_ms_module_layout.py",
    "DType": "returns a tensor's dtype: tests/python/test_primitives_array.py",
    "Shape": "returns a shape tuple: tests/python/test_primitives_array.py",
    "ScalarCast": "casts a Python number: tests/python/test_bbox_ops.py",
    "FloatStatus": "overflow status of a tensor: tests/python/test_bbox_ops.py",
    "Ones": "creation from (shape, type): tests/python/test_primitives_array.py",
    "Zeros": "creation from (shape, type): tests/python/test_primitives_array.py",
    "Eye": "creation from (n, m, type): tests/python/test_primitives_array.py",
    "Argmax": "MindSpore's attributes (axis, output_type Int32): tests/python/test_primitives_array.py",
    "Argmin": "MindSpore's attributes (axis, output_type Int32): tests/python/test_primitives_array.py",
    "ArgMaxWithValue": "(index, value) pair: tests/python/test_primitives_array.py",
    "ArgMinWithValue": "(index, value) pair: tests/python/test_primitives_array.py",
    "AvgPool": "MindSpore's pad_mode attributes: tests/python/test_ops_composite_api.py",
    "MaxPool": "MindSpore's pad_mode attributes: tests/python/test_ops_composite_api.py",
    "MaxPool3D": "MindSpore's pad_list attributes: tests/python/test_names_ops.py",
    "Conv2D": "MindSpore's attributes (out_channel, mode, pad_list): tests/python/test_conv*.py",
    "LayerNorm": "begin_norm_axis/begin_params_axis, three outputs: tests/python/test_primitives_issue24.py",
    "Split": "output_num attribute: tests/python/test_primitives_array.py",
    "StridedSlice": "mask attributes: tests/python/test_strided_slice*.py and the strided_slice entries",
    "Meshgrid": "tuple input: tests/python/test_primitives_array.py",
    "Pad": "paddings attribute: tests/python/test_primitives_array.py",
    "Padding": "tests/python/test_primitives_issue24.py", "LpNorm": "tests/python/test_primitives_issue24.py",
    "L2Loss": "tests/python/test_compat_paths.py", "CTCLoss": "tests/python/test_names_ops.py",
    "SigmoidCrossEntropyWithLogits": "tests/python/test_ops_composite_api.py",
    "SoftmaxCrossEntropyWithLogits": "tests/python/test_ops_composite_api.py",
    "ResizeNearestNeighbor": "tests/python/test_resize.py", "ResizeLinear1D": "tests/python/test_primitives_issue24.py",
    "CropAndResize": "tests/python/test_primitives_issue24.py", "ROIAlign": "tests/python/test_names_ops.py",
    "NMSWithMask": "tests/python/test_names_ops.py", "UniformCandidateSampler": "tests/python/test_primitives_issue24.py",
    "Dropout": "random, keep_prob attribute, (output, mask): tests/python/test_dropout*.py",
    "Dropout2D": "random, (output, mask): tests/python/test_dropout*.py",
    "Dropout3D": "random, (output, mask): tests/python/test_dropout*.py",
    "RandomGamma": "random: tests/python/test_issue23_kernels.py (moments, seeds in both modes)",
    "Gamma": "random: tests/python/test_issue23_kernels.py (moments, seeds in both modes)",
    "GridSampler3D": "5-D input only: tests/python/test_issue23_kernels.py",
    "ApplyMomentum": "optimizer kernel: the apply_momentum_step entry (state.py) and test_primitives_tutorial.py",
    "FusedSparseAdam": "tests/python/test_primitives_issue24.py", "FusedSparseLazyAdam": "test_primitives_issue24.py",
    "FusedSparseFtrl": "tests/python/test_primitives_issue24.py",
    "FusedSparseProximalAdagrad": "tests/python/test_primitives_issue24.py",
    "TransposeView": "a view: tests/python/test_graph_state_writes.py",
    "Complex": "builds complex tensors (real, imag): tests/python/test_complex.py",
    "ComplexAbs": "|z| of complex tensors: tests/python/test_complex.py",
}

# Where discovery would pick entries that do not exercise the Primitive: the registry entries to drive it with.
ENTRIES_OF = {"GeLU": ("gelu_tanh",), "Identity": ("ops.identity",), "Select": ("ops.select", "where"),
              "OnesLike": ("zeros_like_ones_like",), "ZerosLike": ("zeros_like_ones_like",),
              "Squeeze": ("expand_dims_squeeze",)}

_ORIGINAL = {}


def _unadapted(fn_name):
    return _ORIGINAL.get(fn_name) or getattr(ops, fn_name)


def _scalar_tensor(v):
    return v if isinstance(v, kiln.Tensor) else kiln.Tensor(np.asarray(v, np.float32))


@contextlib.contextmanager
def _as_primitive(prim_name):
    """Within the block, kiln.ops.<function> builds and calls the Primitive; yields the list its calls append to."""
    fn_name, adapter = PRIMITIVE_OF[prim_name]
    cls = getattr(P, prim_name)
    inner = _plain(cls) if adapter is None else adapter(cls)
    calls = []

    def counted(*a, **k):
        calls.append(1)
        return inner(*a, **k)

    _ORIGINAL[fn_name] = getattr(ops, fn_name)
    setattr(ops, fn_name, counted)
    try:
        yield calls
    finally:
        setattr(ops, fn_name, _ORIGINAL.pop(fn_name))


def _drives_directly(entry, fn_name):
    """True when the entry's callable IS kiln.ops.<fn_name> (or the _core builtin of that name): its samples are
    then the function's own arguments."""
    fn = getattr(ops, fn_name, None)
    op = entry.op if entry.kind == "op" else None
    return op is not None and (op is fn or (inspect.isbuiltin(op) and op.__name__ == fn_name))


def _entries_for(prim, fn_name, limit=3):
    """(direct, state, patched): entries whose callable IS the function (their samples are its arguments); state
    entries whose run captured it (driven with a Parameter); else entries whose callable names it (driven by
    replacing kiln.ops.<fn_name> while they run)."""
    if prim in ENTRIES_OF:
        byname = {e.name: e for e in R.REGISTRY}
        return [], [], [byname[n] for n in ENTRIES_OF[prim] if n in byname]
    direct = [e for e in R.REGISTRY if _drives_directly(e, fn_name)]
    if direct:
        return direct[:limit], [], []
    fn = getattr(ops, fn_name, None)
    state, found = [], []
    for e in R.REGISTRY:
        if e.kind not in ("op", "state"):
            continue
        names, ids = set(), set()
        _names_reached(e.op if e.kind == "op" else e.run, names, ids)
        if e.kind == "state" and id(fn) in ids:
            state.append(e)
        elif fn_name in names:
            found.append(e)
    if state:
        return [], state[:limit], []
    found.sort(key=lambda e: (fn_name not in e.name, e.name))
    return [], [], found[:limit]


def _cases():
    out = []
    for prim, (fn_name, _) in sorted(PRIMITIVE_OF.items()):
        direct, state, patched = _entries_for(prim, fn_name)
        out.append(pytest.param(prim, fn_name, direct, state, patched, id=prim))
    return out


def _check_op(prim, e, sample, call, dtype, first):
    got = _outs(call(*[to_kiln(a) for a in sample.args], **sample.kwargs))
    want, nd = _reference(e, sample)
    what = f"{prim} via {e.name}{sample!r}: "
    assert len(got) == len(want), f"{what}{len(got)} outputs, expected {len(want)}"
    for g, w, d in zip(got, want, nd):
        exp = _expected_dtype(e, sample, d)
        assert _np_dtype(g.dtype) == exp, f"{what}dtype {g.dtype}, expected {exp}"
        rtol, atol = e.tolerance(exp)
        _assert_values(g.asnumpy(), w, exp, rtol, atol, what)
    if first and e.graph and sample.graph:  # one compiled run: the Primitive traces too
        jf = kiln.jit(lambda *a: call(*a, **sample.kwargs))
        rtol, atol = e.tolerance(np.dtype(dtype))
        for g, w in zip(_outs(jf(*[to_kiln(a) for a in sample.args])), want):
            np.testing.assert_allclose(g.asnumpy().astype(np.float64), np.asarray(w, np.float64),
                                       rtol=max(rtol, 1e-5), atol=max(atol, 1e-6), err_msg=f"{what}under jit")


@pytest.mark.parametrize("prim,fn_name,direct,state,patched", _cases())
def test_primitive_matches_its_function_entry(prim, fn_name, direct, state, patched):
    assert direct or state or patched, f"ops.{prim}: no registry entry calls ops.{fn_name}"
    fn_name, adapter = PRIMITIVE_OF[prim]
    cls = getattr(P, prim)
    for e in direct:
        call = _plain(cls) if adapter is None else adapter(cls)
        dtype = e.dtypes[0]
        for k, sample in enumerate(R.samples_of(e, dtype)):
            _check_op(prim, e, sample, call, dtype, k == 0)
    for e in state:  # in place on a Parameter: the Primitive's result and the Parameter afterwards
        call = _plain(cls) if adapter is None else adapter(cls)
        for sample in R.samples_of(e, e.dtypes[0]):
            first, *rest = (np_value(a) for a in sample.args)
            p = kiln.Parameter(kiln.Tensor(np.array(first, copy=True)), name="parity_var")
            out = call(p, *[kiln.Tensor(a) if isinstance(a, np.ndarray) else a for a in rest])
            want = e.ref(sample)
            for g, w in zip([out, p], want):
                np.testing.assert_allclose(g.asnumpy().astype(np.float64), np.asarray(w, np.float64), rtol=1e-5,
                                           atol=1e-6, err_msg=f"{prim} via {e.name}{sample!r}")
    ran = 0
    for e in patched:
        dtype = e.dtypes[0]
        for k, sample in enumerate(R.samples_of(e, dtype)):
            with _as_primitive(prim) as calls:
                if e.kind == "state":
                    for g, w in zip(e.run(sample, False), e.ref(sample)):
                        np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(w, np.float64),
                                                   rtol=1e-5, atol=1e-6, err_msg=f"{prim} via {e.name}")
                else:
                    _check_op(prim, e, sample, e.op, dtype, k == 0)
            ran += len(calls)
    assert direct or state or ran, f"ops.{prim} never ran: the entries {[e.name for e in patched]} bind ops.{fn_name} early"


def test_every_primitive_is_covered():
    from kiln.ops.primitive import Primitive
    names, ids = reached_by_registry()
    missing = []
    for n in dir(P):
        c = getattr(P, n)
        if n.startswith("_") or not inspect.isclass(c) or not issubclass(c, Primitive):
            continue
        if n in names or n in PRIMITIVE_OF or n in NOT_IN_REGISTRY:
            continue
        spec = getattr(c, "_opdef", None)
        if spec is not None and (spec.fn.__name__ in names or id(spec.fn) in ids):
            continue  # derived from a @defop function that an entry checks
        missing.append(n)
    assert not missing, f"Primitive classes neither derived from a covered function, mapped in PRIMITIVE_OF, " \
                        f"called by an entry, nor listed in NOT_IN_REGISTRY: {sorted(missing)}"
    both = sorted(set(PRIMITIVE_OF) & set(NOT_IN_REGISTRY))
    assert not both, both
    gone = sorted(n for n in list(PRIMITIVE_OF) + list(NOT_IN_REGISTRY) if not hasattr(P, n))
    assert not gone, f"listed Primitive classes that kiln.ops does not have: {gone}"


def test_not_in_registry_names_a_test():
    bad = {n: why for n, why in NOT_IN_REGISTRY.items() if n != "Primitive" and not re.search(r"test_|entry", why)}
    assert not bad, bad
