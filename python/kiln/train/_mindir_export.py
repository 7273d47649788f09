"""Writing a traced Kiln graph as a MindIR file that MindSpore (`ms.load` + `nn.GraphCell`) and Kiln load.

The network is traced in inference mode (set_train(False)), as Graph mode traces it; the graph is simplified by the
passes that keep Kiln's op set (dead code, common subexpressions, constant folding, algebraic simplification; not the
fusion passes, whose fused ops have no MindSpore primitive). Each Kiln node is then written as the MindSpore
primitive(s) MindSpore 2.10 itself writes for that computation (see docs/export.md for the table):

* graph inputs -> GraphProto.input; Parameters -> GraphProto.parameter (name "<graph>:<param>", ref_key = the
  Parameter's name, values in raw_data); constants (and tensors the network reads that are not Parameters of `net`)
  -> "Constant" nodes.
* MindSpore 2.x primitive functions (Add, MatMul, Reshape, BatchNorm, AvgPool, ...) take their arguments as inputs
  (Constant nodes); Conv2D and MaxPool are old-style primitives whose arguments are primitive attributes, written
  with MindSpore's attribute names and layouts (4-element stride/dilation/kernel_size, pad_list, pad_mode, ...).
* several graph outputs -> one MakeTuple output (what a Python tuple return becomes in MindSpore).

MindSpore's bookkeeping nodes (Load of each Parameter, UpdateState, Depend on a monad) are not written: they order
side effects, and an exported inference graph has none; MindSpore 2.10 loads and runs the file without them.
A Kiln op with no mapping raises ValueError naming the op and the user's line that issued it.
"""
import numpy as np

from .. import _engine
from ..ops import _kernels
from ..common import dtype as mstype
from ..ops import _schema
from . import _mindir_proto as P

_PRIM_FN, _PRIM = 2, 1  # PrimitiveProto.PrimType: PRIMITIVE_FUNCTION (args as inputs), PRIMITIVE (args as attrs)
_NCHW = 0  # MindSpore's Format enum value of "NCHW" (a data_format input)
_PAD_MODE = {"SAME": 1, "VALID": 2}  # MindSpore's PadMode enum (an AvgPool pad_mode input)


def _attr(name, value):
    """An AttributeProto holding a Python value (None, bool, int, float, str, tuple/list of those, or a NumPy
    array)."""
    a = P.AttributeProto(name=name)
    if value is None:
        a.type = P.AT.NONE
    elif isinstance(value, bool):
        a.i, a.type = int(value), P.AT.BOOL
    elif isinstance(value, (int, np.integer)):
        a.i, a.type = int(value), P.AT.INT64
    elif isinstance(value, (float, np.floating)):
        a.f, a.type = float(value), P.AT.FLOAT
    elif isinstance(value, str):
        a.s, a.type = value.encode(), P.AT.STRING
    elif isinstance(value, (tuple, list)):
        a.type = P.AT.TUPLE if isinstance(value, tuple) else P.AT.LIST
        for v in value:
            e = a.values.add()
            if isinstance(v, bool):
                e.ints.append(int(v)); e.type = P.AT.BOOL
            elif isinstance(v, (int, np.integer)):
                e.ints.append(int(v)); e.type = P.AT.INT64
            elif isinstance(v, float):
                e.floats.append(v); e.type = P.AT.FLOAT
            elif isinstance(v, str):
                e.strings.append(v.encode()); e.type = P.AT.STRING
            else:
                raise TypeError(f"MindIR attribute '{name}': cannot store {v!r}.")
    elif isinstance(value, np.ndarray):
        a.type = P.AT.TENSORS
        _fill_tensor(a.tensors.add(), value, "value0")
    else:
        raise TypeError(f"MindIR attribute '{name}': cannot store {value!r}.")
    return a


def _stored(arr, kdtype):
    """(data_type code, little-endian bytes) of a NumPy array holding values of Kiln dtype `kdtype`."""
    code = P.DATA_TYPE_CODE.get(kdtype)
    if code is None:
        raise TypeError(f"For 'export', a tensor of dtype {kdtype} cannot be stored in a MindIR file.")
    npdt = P.DATA_TYPES[code][1]
    if kdtype == mstype.bfloat16:  # the bits of bfloat16 are the high half of float32's
        arr = (np.ascontiguousarray(arr, "<f4").view("<u4") >> 16).astype("<u2")
    return code, np.ascontiguousarray(arr, npdt).tobytes()


def _fill_tensor(t, arr, name=None, kdtype=None):
    kdtype = kdtype if kdtype is not None else _dtype_of(arr)
    t.dims.extend(int(d) for d in arr.shape)
    t.data_type, t.raw_data = _stored(arr, kdtype)
    if name:
        t.name = name


def _dtype_of(arr):
    from ..common.tensor import Tensor
    return Tensor(np.ascontiguousarray(arr)).dtype


def _numpy(tensor):
    """NumPy array of a Kiln Tensor (bfloat16 as float32)."""
    if tensor.dtype == mstype.bfloat16:
        return _kernels.cast(tensor, mstype.float32).asnumpy()
    return tensor.asnumpy()


class _Writer:
    """Builds the ModelProto of one traced graph (see the module docstring)."""

    def __init__(self, desc, param_names, graph_name):
        self.desc = desc
        self.values = desc["values"]
        self.param_names = param_names  # tensor id -> Parameter name
        self.gname = graph_name
        self.model = P.ModelProto(ir_version="1.1", producer_name="Kiln", model_version=_kiln_version(),
                                  little_endian=True, mind_ir_version=3)
        self.g = self.model.graph
        self.g.name = graph_name
        self.names = {}      # Kiln value id -> MindIR value name
        self.prims = {}      # (op_type, attribute key) -> primitive entry name
        self.counter = 0
        self.used_params = {}

    # ---------------------------------------------------------------------------------------------- helpers
    def fresh(self, stem):
        self.counter += 1
        return f"{self.gname}:{stem}:{self.counter}"

    def const(self, value):
        """Name of a new Constant node holding `value` (python scalar/tuple or NumPy array)."""
        self.counter += 1
        name = f"ValueNode_{self.counter}"
        n = self.g.node.add(output=[name], name=name, op_type="Constant")
        n.attribute.append(_attr("value", value))
        return name

    def cnode(self, op_type, inputs, attrs=None, prim_type=_PRIM_FN, instance_name=""):
        """Writes a CNode applying MindSpore primitive `op_type` to the named inputs; returns its output name."""
        attrs = attrs or {}
        key = (op_type, prim_type, repr(sorted(attrs.items(), key=lambda kv: kv[0])))
        pname = self.prims.get(key)
        if pname is None:
            pname = f"{op_type}:{len(self.prims) + 1}"
            self.prims[key] = pname
            p = self.model.primitives.add(name=pname, op_type=op_type, instance_name=instance_name,
                                          prim_type=prim_type)
            for k, v in attrs.items():
                p.attribute.append(_attr(k, v))
        out = self.fresh(op_type)
        self.g.node.add(input=inputs, output=[out], name=out, op_type="REF::" + pname)
        return out

    def name_of(self, vid, as_dtype=None):
        """MindIR name of Kiln value `vid` (writing its Parameter / Constant on first use), converted to `as_dtype`
        when given and different: MindSpore's arithmetic and comparison primitives in a loaded graph need operands
        of one dtype, where Kiln promotes (a Python scalar in `x * 2` is a weakly typed Int64 constant; `x + mask`
        adds a Bool tensor). A 0-d constant is stored converted; any other value goes through a Cast node."""
        v = self.values[vid]
        kind = v["kind"]
        if as_dtype is not None and as_dtype != v["dtype"]:
            key = ("as", vid, as_dtype)
            if key not in self.names:
                if kind == "constant" and len(v["shape"]) == 0:
                    self.names[key] = self._constant(_numpy(_kernels.cast(v["tensor"], as_dtype)), as_dtype)
                else:
                    if as_dtype not in P.TYPE_IDS:
                        raise ValueError(f"no MindSpore type id for {as_dtype}")
                    self.names[key] = self.cnode("Cast", [self.name_of(vid), self.const(P.TYPE_IDS[as_dtype])])
            return self.names[key]
        if vid in self.names:
            return self.names[vid]
        if kind == "constant" or (kind == "capture" and v["tensor"]._id not in self.param_names):
            self.names[vid] = self._constant(_numpy(v["tensor"]), v["dtype"])
        elif kind == "capture":
            pname = self.param_names[v["tensor"]._id]
            full = f"{self.gname}:{pname}"
            t = self.g.parameter.add(name=full, ref_key=pname)
            _fill_tensor(t, _numpy(v["tensor"]), None, v["dtype"])
            self.names[vid] = full
        return self.names[vid]

    def _constant(self, arr, kdtype):
        self.counter += 1
        name = f"ValueNode_{self.counter}"
        n = self.g.node.add(output=[name], name=name, op_type="Constant")
        a = n.attribute.add(name="value", type=P.AT.TENSORS)
        _fill_tensor(a.tensors.add(), arr, "value0", kdtype)
        return name

    # ------------------------------------------------------------------------------------------------- model
    def build(self, emitters, input_names):
        for i, vid in enumerate(self.desc["inputs"]):
            v = self.values[vid]
            name = f"{self.gname}:{input_names[i]}"
            vi = self.g.input.add(name=name)
            t = vi.tensor.add()
            t.dims.extend(v["shape"])
            t.data_type = P.DATA_TYPE_CODE[v["dtype"]]
            self.names[vid] = name
        for node in self.desc["nodes"]:
            emit = emitters.get(node["op"])
            if emit is None:
                where = f" (issued at {node['loc']})" if node["loc"] else ""
                why = _schema.refusal("mindir", node["op"])
                raise ValueError(f"For 'export', the op '{node['op']}'{where} has no MindIR mapping in Kiln"
                                 f"{f' ({why})' if why else ''}; ops that can be exported: "
                                 f"{', '.join(sorted(emitters))}.")
            try:
                outs = emit(self, node)
            except ValueError as e:
                where = f" (issued at {node['loc']})" if node["loc"] else ""
                raise ValueError(f"For 'export', the op '{node['op']}'{where} cannot be written as MindIR: {e}") \
                    from None
            for vid, name in zip(node["outputs"], outs):
                if name is not None:
                    self.names[vid] = name
        outs = self.desc["outputs"]
        for vid in outs:
            if self.values[vid]["kind"] != "node":
                raise ValueError("For 'export', the network returns one of its inputs, a Parameter or a constant "
                                 "unchanged; MindIR outputs must be computed by an operator.")
        if len(outs) == 1:
            out = self.names[outs[0]]
        else:
            out = self.cnode("MakeTuple", [self.names[v] for v in outs], prim_type=_PRIM)
        vi = self.g.output.add(name=out)
        if len(outs) == 1:
            v = self.values[outs[0]]
            t = vi.tensor.add()
            t.dims.extend(v["shape"])
            t.data_type = P.DATA_TYPE_CODE[v["dtype"]]
        return self.model


def _kiln_version():
    from .. import __version__
    return __version__


# ------------------------------------------------------------------------------------------------ emitters
def _same(op):
    """A Kiln op whose MindSpore primitive has the same name and takes the same tensor inputs (broadcasting
    arithmetic, activations): scalar constants are stored in the output's dtype."""
    def emit(w, node):
        out_dtype = w.values[node["outputs"][0]]["dtype"]
        return [w.cnode(op, [w.name_of(i, as_dtype=out_dtype) for i in node["inputs"]])]
    return emit


def _emit_logsigmoid(w, node):
    """log sigmoid(x) = -softplus(-x): MindSpore 2.10 has no LogSigmoid primitive (its ops.logsigmoid composes
    Sigmoid and Log, which gives -inf at x = -1000); Neg(Softplus(Neg x)) keeps Kiln's stable value."""
    out_dtype = w.values[node["outputs"][0]]["dtype"]
    x = w.name_of(node["inputs"][0], as_dtype=out_dtype)
    return [w.cnode("Neg", [w.cnode("Softplus", [w.cnode("Neg", [x])])])]


def _emit_round(w, node):
    """Round (halves to even): MindSpore 2.10's Round primitive takes `decimals` as a second input (an Int64 scalar
    constant, 0 here: Kiln's ops.round with decimals != 0 traces Mul/Round/Div)."""
    return [w.cnode("Round", [w.name_of(node["inputs"][0]), w.const(0)])]


def _emit_copysign(w, node):
    """|a| with b's sign bit, as Kiln's Copysign: MindSpore 2.10 has no Copysign primitive (its ops.copysign writes
    Select(LessScalar(b, 0), ...), which drops the sign of −0.0), so Select(LogicalOr(Less(b, 0),
    Less(Reciprocal(b), 0)), Neg(Abs a), Abs a): 1/−0.0 = −inf finds −0.0 (Reciprocal, not Div: MindSpore's CPU Div
    gives 1/−0.0 = +inf). A NaN b counts as positive whatever its sign bit (no bit cast in MindSpore's primitives)."""
    dt = w.values[node["outputs"][0]]["dtype"]
    a, b = (w.name_of(i, as_dtype=dt) for i in node["inputs"])
    zero = w._constant(np.array(0.0), dt)
    neg = w.cnode("LogicalOr", [w.cnode("Less", [b, zero]), w.cnode("Less", [w.cnode("Reciprocal", [b]), zero])])
    mag = w.cnode("Abs", [a])
    return [w.cnode("Select", [neg, w.cnode("Neg", [mag]), mag])]


def _compare(op):
    """A comparison: a scalar constant is stored in the dtype of the other (tensor) operand."""
    def emit(w, node):
        a, b = node["inputs"]
        va, vb = w.values[a], w.values[b]
        if va["kind"] == "constant" and not va["shape"]:
            dt = vb["dtype"]
        elif vb["kind"] == "constant" and not vb["shape"]:
            dt = va["dtype"]
        else:
            dt = _engine.promote_types(va["dtype"], vb["dtype"])
        return [w.cnode(op, [w.name_of(a, as_dtype=dt), w.name_of(b, as_dtype=dt)])]
    return emit


def _emit_select(w, node):
    c, x, y = node["inputs"]
    dt = w.values[node["outputs"][0]]["dtype"]
    return [w.cnode("Select", [w.name_of(c), w.name_of(x, as_dtype=dt), w.name_of(y, as_dtype=dt)])]


def _alias(w, node):
    return [w.name_of(node["inputs"][0])]


def _dropped_print(w, node):
    """Print (and the summary ops, which issue it) is dropped: an inference graph prints nothing (MindSpore's export
    keeps no Print either). Its output, a 0-d Int32 0, becomes a constant."""
    return [w.const(np.zeros((), np.int32))]


def _emit_reshape(w, node):
    shape = tuple(int(d) for d in w.values[node["outputs"][0]]["shape"])
    return [w.cnode("Reshape", [w.name_of(node["inputs"][0]), w.const(shape)])]


def _emit_transpose(w, node):
    return [w.cnode("Transpose", [w.name_of(node["inputs"][0]), w.const(tuple(node["attrs"]["perm"]))])]


def _emit_broadcast_to(w, node):
    shape = tuple(int(d) for d in w.values[node["outputs"][0]]["shape"])
    return [w.cnode("BroadcastTo", [w.name_of(node["inputs"][0]), w.const(shape)])]


def _emit_softmax(w, node):
    return [w.cnode("Softmax", [w.name_of(node["inputs"][0]), w.const((int(node["attrs"]["axis"]),))])]


def _emit_log_softmax(w, node):
    return [w.cnode("LogSoftmax", [w.name_of(node["inputs"][0]), w.const(int(node["attrs"]["axis"]))])]


def _reduce(op):
    def emit(w, node):
        x = node["inputs"][0]
        axis = tuple(int(a) for a in node["attrs"]["axis"])
        if not axis:
            axis = tuple(range(len(w.values[x]["shape"])))
        ins = [w.name_of(x), w.const(axis), w.const(bool(node["attrs"]["keep_dims"]))]
        if op == "ReduceSum":  # ReduceSum(x, axis, keep_dims, skip_mode): skip_mode False reduces every axis on ()
            ins.append(w.const(False))
        return [w.cnode(op, ins)]
    return emit


def _emit_matmul(w, node):
    a, b = node["inputs"]
    ta, tb = bool(node["attrs"]["transpose_a"]), bool(node["attrs"]["transpose_b"])
    two_d = len(w.values[a]["shape"]) == 2 and len(w.values[b]["shape"]) == 2
    return [w.cnode("MatMul" if two_d else "BatchMatMul", [w.name_of(a), w.name_of(b), w.const(ta), w.const(tb)])]


def _emit_concat(w, node):
    t = w.cnode("MakeTuple", [w.name_of(i) for i in node["inputs"]], prim_type=_PRIM)
    return [w.cnode("Concat", [t, w.const(int(node["attrs"]["axis"]))])]


def _emit_gelu(w, node):
    if not node["attrs"].get("approximate", True):
        raise ValueError("MindSpore's GeLU primitive is the tanh approximation; the exact (erf) GELU has no "
                         "primitive function in MindIR")
    return [w.cnode("GeLU", [w.name_of(node["inputs"][0])])]


def _emit_cast(w, node):
    dt = node["attrs"]["dtype"]
    if dt not in P.TYPE_IDS:
        raise ValueError(f"no MindSpore type id for {dt}")
    return [w.cnode("Cast", [w.name_of(node["inputs"][0]), w.const(P.TYPE_IDS[dt])])]


def _emit_strided_slice(w, node):
    a = node["attrs"]
    begin, end, step = list(a["begin"]), list(a["end"]), list(a["step"])
    end_mask = 0
    for i, (e, st) in enumerate(zip(end, step)):
        if st < 0 and e < 0:  # Kiln's "stop before index 0" (Python's slice.indices): MindSpore's end_mask bit
            end_mask |= 1 << i
            end[i] = 0
    return [w.cnode("StridedSlice", [w.name_of(node["inputs"][0]), w.const(tuple(begin)), w.const(tuple(end)),
                                     w.const(tuple(step)), w.const(0), w.const(end_mask), w.const(0), w.const(0),
                                     w.const(0)])]


def _emit_gather(w, node):
    x, idx = node["inputs"]
    return [w.cnode("Gather", [w.name_of(x), w.name_of(idx), w.const(int(node["attrs"]["axis"])), w.const(0)])]


def _emit_gather_d(w, node):
    """MindSpore's GatherD(x, dim, index): dim a constant input."""
    x, idx = node["inputs"]
    return [w.cnode("GatherD", [w.name_of(x), w.const(int(node["attrs"]["dim"])), w.name_of(idx)])]


def _emit_conv2d(w, node):
    x, wt = node["inputs"]
    a = node["attrs"]
    wshape = w.values[wt]["shape"]
    pad = tuple(int(p) for p in a["pad"])
    stride, dilation = tuple(a["stride"]), tuple(a["dilation"])
    attrs = {
        "kernel_size": (int(wshape[2]), int(wshape[3])), "mode": 1, "out_channel": int(wshape[0]),
        "input_names": ["x", "w"], "pad": pad, "pad_mode": "pad" if any(pad) else "valid", "format": "NCHW",
        "pad_list": pad, "groups": int(a["groups"]), "stride": (1, 1) + stride, "group": int(a["groups"]),
        "dilation": (1, 1) + dilation, "output_names": ["output"],
    }
    return [w.cnode("Conv2D", [w.name_of(x), w.name_of(wt)], attrs, prim_type=_PRIM, instance_name="conv2d")]


def _same_pads(size, kernel, stride):
    pads = []
    for i in range(2):
        out = -(-size[i] // stride[i])
        total = max((out - 1) * stride[i] + kernel[i] - size[i], 0)
        pads += [total // 2, total - total // 2]
    return pads


def _pool_mode(w, node, kind):
    a = node["attrs"]
    x = node["inputs"][0]
    kernel, stride, pad = list(a["kernel"]), list(a["stride"]), list(a["pad"])
    if a.get("ceil_mode"):
        raise ValueError(f"MindSpore's {kind} has no ceil_mode")
    if any(d != 1 for d in a.get("dilation", [1, 1])):
        raise ValueError(f"MindSpore's {kind} has no dilation")
    if not any(pad):
        return kernel, stride, "VALID"
    if pad == _same_pads(w.values[x]["shape"][2:], kernel, stride):
        return kernel, stride, "SAME"
    raise ValueError(f"MindSpore's {kind} pads only as 'same' or 'valid', but the padding is {pad}")


def _emit_max_pool(w, node):
    if node["attrs"].get("return_indices"):
        raise ValueError("MindSpore's MaxPool does not return indices")
    kernel, stride, mode = _pool_mode(w, node, "MaxPool")
    attrs = {"pad_mode": mode, "output_names": ["output"], "kernel_size": (1, 1) + tuple(kernel), "format": "NCHW",
             "strides": (1, 1) + tuple(stride), "input_names": ["x"]}
    return [w.cnode("MaxPool", [w.name_of(node["inputs"][0])], attrs, prim_type=_PRIM, instance_name="max_pool")]


def _emit_avg_pool(w, node):
    a = node["attrs"]
    kernel, stride, mode = _pool_mode(w, node, "AvgPool")
    if a.get("divisor_override"):
        raise ValueError("MindSpore's AvgPool has no divisor_override")
    if mode == "SAME" and a.get("count_include_pad", True):
        raise ValueError("MindSpore's AvgPool 'same' mode divides by the unpadded count (count_include_pad=False)")
    return [w.cnode("AvgPool", [w.name_of(node["inputs"][0]), w.const(tuple(kernel)), w.const(tuple(stride)),
                                w.const(_PAD_MODE[mode]), w.const(_NCHW)], instance_name="avg_pool")]


def _emit_adaptive_avg_pool(w, node):
    size = tuple(int(d) for d in w.values[node["outputs"][0]]["shape"][2:])
    attrs = {"output_names": ["y"], "output_size": size, "input_names": ["x"]}
    return [w.cnode("AdaptiveAvgPool2D", [w.name_of(node["inputs"][0])], attrs, prim_type=_PRIM,
                    instance_name="adaptive_avgpool2d")]


def _emit_batch_norm(w, node):
    a = node["attrs"]
    if a["training"]:
        raise ValueError("BatchNorm in training mode (export traces with set_train(False); a BatchNorm called with "
                         "training=True in construct cannot be exported)")
    ins = [w.name_of(i) for i in node["inputs"]]
    bn = w.cnode("BatchNorm", ins + [w.const(False), w.const(float(a["epsilon"])), w.const(0.1), w.const(_NCHW)],
                 instance_name="bn_infer")
    return [w.cnode("TupleGetItem", [bn, w.const(i)], prim_type=_PRIM) for i in range(len(node["outputs"]))]


def _emit_layer_norm(w, node):
    # MindSpore's LayerNorm(x, gamma, beta, begin_norm_axis, begin_params_axis, epsilon) -> (y, mean, variance);
    # Kiln's third output is rstd = 1/sqrt(variance + epsilon).
    a = node["attrs"]
    bn, eps = int(a["begin_norm_axis"]), float(a["epsilon"])
    ins = [w.name_of(i) for i in node["inputs"]]
    ln = w.cnode("LayerNorm", ins + [w.const(bn), w.const(bn), w.const(eps)])
    y, mean, var = (w.cnode("TupleGetItem", [ln, w.const(i)], prim_type=_PRIM) for i in range(3))
    dt = np.float64 if str(w.values[node["outputs"][2]]["dtype"]) == "Float64" else np.float32
    rstd = w.cnode("Rsqrt", [w.cnode("Add", [var, w.const(np.asarray(eps, dt))])])
    return [y, mean, rstd][:len(node["outputs"])]


def _emit_im2col(w, node):
    """Im2Col: x (N, C, H, W) reshaped to (N, C, H·W) (+ a Concat of one zero column for the padding's cells),
    Gather at the constant block table, Reshape to (N, C·kh·kw, L) (the ONNX writer's form)."""
    from ._onnx_ops import im2col_table
    x = node["inputs"][0]
    n, c, h, wd = (int(d) for d in w.values[x]["shape"])
    table, padded = im2col_table(h, wd, node["attrs"])
    y = w.cnode("Reshape", [w.name_of(x), w.const((n, c, h * wd))])
    if padded:
        zero = w._constant(np.zeros((n, c, 1)), w.values[x]["dtype"])
        y = w.cnode("Concat", [w.cnode("MakeTuple", [y, zero], prim_type=_PRIM), w.const(2)])
    y = w.cnode("Gather", [y, w._constant(table, mstype.int64), w.const(2), w.const(0)])
    return [w.cnode("Reshape", [y, w.const(tuple(int(d) for d in w.values[node["outputs"][0]]["shape"]))])]


def _emit_diagonal(w, node):
    """Diagonal: the two dims moved last (Transpose, unless they are), flattened together (Reshape), the diagonal's
    constant flat positions gathered on the last axis (the ONNX writer's form)."""
    from ._onnx_ops import diagonal_cells
    x = node["inputs"][0]
    a = node["attrs"]
    shape = [int(d) for d in w.values[x]["shape"]]
    nd = len(shape)
    d1, d2 = int(a["dim1"]) % nd, int(a["dim2"]) % nd
    perm = [d for d in range(nd) if d not in (d1, d2)] + [d1, d2]
    y = w.name_of(x)
    if perm != list(range(nd)):
        y = w.cnode("Transpose", [y, w.const(tuple(perm))])
    y = w.cnode("Reshape", [y, w.const(tuple(shape[d] for d in perm[:-2]) + (shape[d1] * shape[d2],))])
    cells = diagonal_cells(shape[d1], shape[d2], a["offset"])
    return [w.cnode("Gather", [y, w._constant(cells, mstype.int64), w.const(nd - 2), w.const(0)])]


def _emit_diag_embed(w, node):
    """DiagEmbed: the input's last axis gathered at each matrix cell's diagonal slot (a constant table), Select of a
    constant mask of the diagonal's cells (zeros elsewhere), Reshape to matrices, Transpose to dim1, dim2 (a zero
    constant when the diagonal is empty; the ONNX writer's form)."""
    from ._onnx_ops import diagonal_cells
    x = node["inputs"][0]
    a = node["attrs"]
    out = node["outputs"][0]
    dt = w.values[out]["dtype"]
    shape = [int(d) for d in a["shape"]]
    r = len(shape)
    d1, d2 = int(a["dim1"]) % r, int(a["dim2"]) % r
    n1, n2 = shape[d1], shape[d2]
    rest = [d for d in range(r) if d not in (d1, d2)]
    lead = tuple(shape[d] for d in rest)
    cells = diagonal_cells(n1, n2, a["offset"])
    if len(cells) == 0:
        return [w._constant(np.zeros(shape), dt)]
    src_of = np.zeros(n1 * n2, np.int64)
    src_of[cells] = np.arange(len(cells))
    where = np.zeros(lead + (n1 * n2,), bool)
    where[..., cells] = True
    y = w.cnode("Gather", [w.name_of(x), w._constant(src_of, mstype.int64), w.const(r - 2), w.const(0)])
    y = w.cnode("Select", [w._constant(where, mstype.bool_), y, w._constant(np.zeros(where.shape), dt)])
    y = w.cnode("Reshape", [y, w.const(lead + (n1, n2))])
    src = {d: i for i, d in enumerate(rest)}
    src[d1], src[d2] = r - 2, r - 1
    perm = [src[d] for d in range(r)]
    return [y if perm == list(range(r)) else w.cnode("Transpose", [y, w.const(tuple(perm))])]


def _emit_mirror_pad(w, node):
    """MirrorPad: one Gather of constant source indices per padded axis."""
    from ._onnx_ops import mirror_pad_indices
    x = node["inputs"][0]
    a = node["attrs"]
    p = list(a["paddings"])
    y = w.name_of(x)
    for ax, n in enumerate(w.values[x]["shape"]):
        b, e = p[2 * ax], p[2 * ax + 1]
        if b or e:
            idx = mirror_pad_indices(int(n), b, e, a["mode"])
            y = w.cnode("Gather", [y, w._constant(idx, mstype.int64), w.const(ax), w.const(0)])
    return [y]


def _emit_pdist(w, node):
    """Pdist: the differences of the rows gathered at the constant pairs, then the p-norm along axis 1 (the ONNX
    writer's form in MindSpore primitives)."""
    from ._onnx_ops import pdist_pairs
    x = node["inputs"][0]
    dt = w.values[x]["dtype"]
    i, j = pdist_pairs(w.values[x]["shape"][0])
    xn = w.name_of(x)
    d = w.cnode("Sub", [w.cnode("Gather", [xn, w._constant(i, mstype.int64), w.const(0), w.const(0)]),
                        w.cnode("Gather", [xn, w._constant(j, mstype.int64), w.const(0), w.const(0)])])

    def rsum(v):
        return w.cnode("ReduceSum", [v, w.const((1,)), w.const(False), w.const(False)])

    p = float(node["attrs"]["p"])
    if p == 2:
        return [w.cnode("Sqrt", [rsum(w.cnode("Square", [d]))])]
    if p == 1:
        return [rsum(w.cnode("Abs", [d]))]
    if np.isinf(p):
        return [w.cnode("ReduceMax", [w.cnode("Abs", [d]), w.const((1,)), w.const(False)])]
    if p == 0:
        nz = w.cnode("NotEqual", [d, w._constant(np.array(0.0), dt)])
        return [rsum(w.cnode("Cast", [nz, w.const(P.TYPE_IDS[dt])]))]
    s = rsum(w.cnode("Pow", [w.cnode("Abs", [d]), w._constant(np.array(p), dt)]))
    return [w.cnode("Pow", [s, w._constant(np.array(1.0 / p), dt)])]


def _emit_resize(w, node):
    """ResizeNearest / ResizeLinear: per resized axis a Gather of the constant source indices (nearest), or two
    Gathers of the neighbour tables blended as Add(a, Mul(Sub(b, a), w)) (linear) — Kiln's former composition; the
    taps are src/ops/resize.cpp's (kiln/train/_onnx_ops.py: resize_taps)."""
    from ._onnx_ops import resize_taps
    x = node["inputs"][0]
    shape = [int(v) for v in w.values[x]["shape"]]
    dt = w.values[x]["dtype"]
    nearest = node["op"] == "ResizeNearest"
    nsp = len(node["attrs"]["size"])
    y = w.name_of(x)
    for k, (i0, i1, wt) in enumerate(resize_taps(node["attrs"], shape[-nsp:], nearest)):
        axis = len(shape) - nsp + k
        a = w.cnode("Gather", [y, w._constant(i0, mstype.int64), w.const(axis), w.const(0)])
        if nearest:
            y = a
            continue
        b = w.cnode("Gather", [y, w._constant(i1, mstype.int64), w.const(axis), w.const(0)])
        ws = [1] * len(shape)
        ws[axis] = len(wt)
        wv = w._constant(wt.reshape(ws).astype(mstype.dtype_to_nptype(dt)), dt)
        y = w.cnode("Add", [a, w.cnode("Mul", [w.cnode("Sub", [b, a]), wv])])
    return [y]


EMITTERS = {
    "Identity": _alias, "StopGradient": _alias, "Depend": _alias, "Print": _dropped_print,
    "Reshape": _emit_reshape, "Transpose": _emit_transpose, "BroadcastTo": _emit_broadcast_to,
    "Concat": _emit_concat,
    "Softmax": _emit_softmax, "LogSoftmax": _emit_log_softmax,
    "ReduceSum": _reduce("ReduceSum"), "ReduceMean": _reduce("ReduceMean"), "ReduceMax": _reduce("ReduceMax"),
    "ReduceMin": _reduce("ReduceMin"),
    "BatchMatMul": _emit_matmul, "Conv2D": _emit_conv2d, "MaxPool": _emit_max_pool, "AvgPool": _emit_avg_pool,
    "AdaptiveAvgPool2D": _emit_adaptive_avg_pool, "BatchNorm": _emit_batch_norm, "LayerNorm": _emit_layer_norm, "GeLU": _emit_gelu,
    "Cast": _emit_cast, "StridedSlice": _emit_strided_slice, "Gather": _emit_gather,
    "GatherD": _emit_gather_d,
    "Im2Col": _emit_im2col, "MirrorPad": _emit_mirror_pad, "Pdist": _emit_pdist,
    "ResizeNearest": _emit_resize, "ResizeLinear": _emit_resize,
    "Diagonal": _emit_diagonal, "DiagEmbed": _emit_diag_embed,
}
for _op in ("Add", "Sub", "Mul", "Div", "Maximum", "Minimum", "Pow", "Neg", "Exp", "Log", "Sqrt", "Rsqrt", "Abs",
            "Square", "Erf", "Sin", "Cos", "Floor", "Ceil", "Sign", "Log1p", "ReLU", "Sigmoid", "Tanh", "Atan2", "Erfinv",
            "ACos", "Asin", "Atan", "Sinh", "Cosh", "Tan", "Asinh", "Acosh", "Atanh", "Expm1", "Erfc", "Trunc", "Sinc",
            "Xlogy", "TruncateDiv", "Fmax", "Fmin", "Heaviside", "HSwish", "HSigmoid", "SeLU", "Mish", "Softplus"):
    EMITTERS[_op] = _same(_op)
EMITTERS["LogSigmoid"] = _emit_logsigmoid
EMITTERS["Round"] = _emit_round
EMITTERS["Copysign"] = _emit_copysign
for _op in ("Equal", "NotEqual", "Greater", "GreaterEqual", "Less", "LessEqual", "LogicalAnd", "LogicalOr"):
    EMITTERS[_op] = _compare(_op)
EMITTERS["LogicalNot"] = _same("LogicalNot")
EMITTERS["Select"] = _emit_select

# Kiln op -> the MindIR primitives it is written as: the schema's `mindir` fields (src/ops/schema/ops.yaml) of the ops
# export writes; tests/python/test_op_schema.py checks that they are EMITTERS' keys.
MINDIR_OPS = _schema.export_table("mindir")

# Passes that keep Kiln's op set (the fusion passes make FusedElementwise / MatMulBiasAct, which MindIR lacks).
_PASSES = ("dce", "cse", "constant_folding", "algebraic_simplification", "dce")


def build_model(graph, param_names, graph_name, input_names):
    """ModelProto of a traced Kiln graph (kiln._core.Graph); `param_names`: tensor id -> Parameter name."""
    for p in _PASSES:
        graph.run_pass(p)
    return _Writer(graph.describe(), param_names, graph_name).build(EMITTERS, input_names)
