"""Writing a traced Kiln graph as an ONNX model (`kiln.export(..., file_format="ONNX")`), through the `onnx` package.

The network is traced in inference mode and simplified exactly as for MindIR (kiln/train/_export_load.py `_trace`,
the op-set-preserving passes of _mindir_export._PASSES); each Kiln node is then written as ONNX operators of the
default domain at opset OPSET (docs/decisions.md says why 20), by the emitters of kiln/train/_onnx_ops.py:

* graph inputs -> ModelProto.graph.input (named after construct's parameters); Parameters -> initializers under the
  Parameter's name (weights are stored, not inputs); other tensors the network reads -> initializers "const_N".
* a node with no ONNX mapping raises ValueError naming the op and the user's source line that issued it.

Dynamic dimensions: an input given as `Tensor(shape=[None, 1, 28, 28], dtype=ms.float32)` has a dynamic dimension
at each None. The network is then traced twice, with different sizes for the None dimensions (SIZES_A, SIZES_B);
the two graphs must have the same structure, and a dimension that differs between them is dynamic. Shapes the
graph needs at run time (Reshape targets, BroadcastTo, batch-sized constants such as an RNN's zero initial state)
are computed from the inputs' run-time shapes (Shape -> Gather -> Concat); a size derived from a dynamic dimension
in another way (e.g. batch * channels) is allowed once per Reshape target (as -1). A constant whose values (not
only its shape) depend on a dynamic size (`x.sum() / x.shape[0]`) cannot be exported with that dimension dynamic:
ValueError.
"""
import numpy as np

from .._loader import _core
from ..common import dtype as mstype

OPSET = 20
IR_VERSION = 9  # the IR version of onnx 1.15, which introduced opset 20 (older runtimes read it)
INT64_MAX = 2 ** 63 - 1
INT64_MIN = -2 ** 63

def trace_size(axis, second):
    """Size a dynamic (None) input dimension at `axis` is traced with in the first / second trace: 7 and 11 for
    the batch axis, larger ones for others (so that convolutions and pooling over a dynamic spatial axis trace);
    different sizes per axis tell the dimensions apart."""
    if axis == 0:
        return 11 if second else 7
    return (48 if second else 32) + axis


def _onnx():
    try:
        import onnx
    except ImportError:  # pragma: no cover - onnx is a dependency of the ONNX export only
        raise ImportError("For 'export', file_format='ONNX' needs the 'onnx' package (pip install onnx).") from None
    return onnx


def onnx_dtype(kdtype):
    """ONNX TensorProto data type code of a Kiln dtype (TypeError when ONNX has none)."""
    from onnx import TensorProto as T
    table = {mstype.float32: T.FLOAT, mstype.float64: T.DOUBLE, mstype.float16: T.FLOAT16,
             mstype.bfloat16: T.BFLOAT16, mstype.int8: T.INT8, mstype.int16: T.INT16, mstype.int32: T.INT32,
             mstype.int64: T.INT64, mstype.uint8: T.UINT8, mstype.bool_: T.BOOL}
    for name, code in (("uint16", T.UINT16), ("uint32", T.UINT32), ("uint64", T.UINT64)):
        if hasattr(mstype, name):
            table[getattr(mstype, name)] = code
    code = table.get(kdtype)
    if code is None:
        raise TypeError(f"For 'export', the dtype {kdtype} has no ONNX tensor type.")
    return code


def _tensor_proto(arr, kdtype, name):
    """TensorProto `name` holding NumPy array `arr` of Kiln dtype `kdtype` (bfloat16 given as float32)."""
    from onnx import numpy_helper, helper
    if kdtype == mstype.bfloat16:
        bits = (np.ascontiguousarray(arr, "<f4").view("<u4") >> 16).astype("<u2")
        t = helper.make_tensor(name, onnx_dtype(kdtype), list(arr.shape), bits.tobytes(), raw=True)
        return t
    npdt = mstype.dtype_to_nptype(kdtype)
    return numpy_helper.from_array(np.ascontiguousarray(arr, npdt), name)


def _numpy(tensor):
    if tensor.dtype == mstype.bfloat16:
        return _core.cast(tensor, mstype.float32).asnumpy()
    return tensor.asnumpy()


class OnnxWriter:
    """Builds the ONNX graph of a traced Kiln graph (desc: Graph.describe(); desc_b: the second trace's, for dynamic
    dimensions, or None). Emitters (kiln/train/_onnx_ops.py) call `node`, `name_of`, `const`, `shape_of`,
    `shape_tensor`."""

    # Node attributes that may differ between the two traces of a dynamic export (the emitters read run-time
    # shapes instead); any other difference means the graph's structure depends on a dynamic size.
    SHAPE_ATTRS = {"Reshape": {"shape"}, "BroadcastTo": {"shape"}, "Fill": {"shape"},
                   "Conv2DBackpropInput": {"input_shape"}, "StridedSlice": {"begin", "end"}}

    def __init__(self, desc, desc_b, param_names, input_names, dynamic):
        from onnx import helper
        self.helper = helper
        self.desc, self.desc_b = desc, desc_b
        self.values = desc["values"]
        self.param_names = param_names
        self.input_names = input_names
        self.dynamic = dynamic  # per graph input: tuple of bools (dim is dynamic)
        self.nodes, self.inits = [], []
        self.names = {}
        self.used = set()
        self.counter = 0
        self.symbols = {}  # (size in trace A, size in trace B) -> (input name, axis, dim_param)
        self.current = None  # the node being written (for error messages)

    # ------------------------------------------------------------------------------------------- naming
    def fresh(self, stem):
        self.counter += 1
        return f"{stem}_{self.counter}"

    def node(self, op, inputs, n_out=1, **attrs):
        """Adds ONNX node `op`; returns its output name (or list of names when n_out > 1)."""
        outs = [self.fresh(op.lower()) for _ in range(n_out)]
        self.nodes.append(self.helper.make_node(op, list(inputs), outs, name=self.fresh("n_" + op), **attrs))
        return outs[0] if n_out == 1 else outs

    def const(self, value, kdtype=None):
        """Initializer name holding `value` (NumPy array or Python scalar/list; int lists as int64)."""
        arr = np.asarray(value)
        if kdtype is None:
            if arr.dtype.kind in "iu":
                arr, kdtype = arr.astype(np.int64), mstype.int64
            elif arr.dtype.kind == "b":
                kdtype = mstype.bool_
            else:
                kdtype = {np.dtype(np.float64): mstype.float64, np.dtype(np.float16): mstype.float16}.get(
                    arr.dtype, mstype.float32)
        name = self.fresh("const")
        self.inits.append(_tensor_proto(arr, kdtype, name))
        return name

    def ints(self, values):
        return self.const(np.asarray(list(values), np.int64).reshape(-1), mstype.int64)

    def name_of(self, vid, as_dtype=None):
        """ONNX name of Kiln value `vid` (an initializer on first use for Parameters/constants), cast to `as_dtype`
        when given and different (ONNX operators need operands of one dtype where Kiln promotes, e.g. a Python
        scalar's weakly typed constant: 0-d constants are stored converted, other values go through Cast)."""
        v = self.values[vid]
        if as_dtype is not None and as_dtype != v["dtype"]:
            key = ("as", vid, as_dtype)
            if key not in self.names:
                if v["kind"] == "constant" and not v["shape"]:
                    self.names[key] = self.const(_numpy(_core.cast(v["tensor"], as_dtype)), as_dtype)
                else:
                    self.names[key] = self.node("Cast", [self.name_of(vid)], to=onnx_dtype(as_dtype))
            return self.names[key]
        if vid in self.names:
            return self.names[vid]
        kind = v["kind"]
        if kind == "capture" and v["tensor"]._id in self.param_names:
            name = self.param_names[v["tensor"]._id]
            if name in self.used:  # two Parameters with one name: keep the initializers apart
                name = self.fresh(name)
            self.used.add(name)
            self.inits.append(_tensor_proto(_numpy(v["tensor"]), v["dtype"], name))
            self.names[vid] = name
        elif kind in ("capture", "constant"):
            self.names[vid] = self._constant(vid)
        else:
            raise AssertionError(f"value {vid} used before it is written")
        return self.names[vid]

    # ------------------------------------------------------------------------------------------- shapes
    def _pair(self, vid):
        a = tuple(int(d) for d in self.values[vid]["shape"])
        b = a if self.desc_b is None else tuple(int(d) for d in self.desc_b["values"][vid]["shape"])
        return a, b

    def shape_of(self, vid):
        """Shape of value `vid`: ints, None where the size is dynamic."""
        a, b = self._pair(vid)
        return tuple(x if x == y else None for x, y in zip(a, b))

    def is_dynamic(self, vid):
        return None in self.shape_of(vid)

    def _symbol_dim(self, pair):
        """Name of a 1-element int64 tensor with the run-time size of the dynamic dimension traced as `pair`."""
        key = ("dim",) + pair
        if key not in self.names:
            src = self.symbols.get(pair)
            if src is None:
                return None
            inp, axis, _ = src
            shape = self.names.get(("shape", inp))
            if shape is None:
                shape = self.names[("shape", inp)] = self.node("Shape", [inp])
            self.names[key] = self.node("Gather", [shape, self.ints([axis])], axis=0)
        return self.names[key]

    def shape_tensor(self, vid, allow_infer=False, shape_a=None, shape_b=None):
        """Name of a 1-D int64 tensor with the run-time shape of value `vid` (or of the given trace shapes): static
        sizes as constants, dynamic ones taken from the inputs' shapes; with `allow_infer`, one size derived from a
        dynamic dimension in another way is written as -1 (a Reshape target). ValueError otherwise."""
        if shape_a is None:
            shape_a, shape_b = self._pair(vid)
        if shape_a == shape_b:
            return self.ints(shape_a)
        parts, run, inferred = [], [], False
        for x, y in zip(shape_a, shape_b):
            if x == y:
                run.append(x)
                continue
            dim = self._symbol_dim((x, y))
            if dim is None and allow_infer and not inferred:
                inferred = True
                run.append(-1)
                continue
            if dim is None:
                raise ValueError(f"a size ({x} and {y} in the two traces) is derived from a dynamic input dimension "
                                 "in a way ONNX export cannot express; export with fixed input shapes")
            if run:
                parts.append(self.ints(run))
                run = []
            parts.append(dim)
        if run:
            parts.append(self.ints(run))
        return parts[0] if len(parts) == 1 else self.node("Concat", parts, axis=0)

    def _constant(self, vid):
        v = self.values[vid]
        arr = _numpy(v["tensor"])
        if self.desc_b is None:
            return self.const(arr, v["dtype"])
        arr_b = _numpy(self.desc_b["values"][vid]["tensor"])
        if arr.shape == arr_b.shape:
            if not np.array_equal(arr, arr_b, equal_nan=True):
                raise ValueError("a constant's values depend on the size of a dynamic input dimension (e.g. "
                                 "x.shape[0] used in arithmetic); export with fixed input shapes")
            return self.const(arr, v["dtype"])
        flat = arr.reshape(-1)
        if flat.size and (flat == flat[0]).all() and arr_b.size and (arr_b.reshape(-1) == flat[0]).all():
            # A batch-sized filled constant (zeros(x.shape[0], h)): Expand of its one value at run time.
            return self.node("Expand", [self.const(flat[:1].reshape(()), v["dtype"]),
                                        self.shape_tensor(vid)])
        raise ValueError("a constant's shape depends on a dynamic input dimension and its values are not all "
                         "equal; export with fixed input shapes")

    def value_info(self, name, vid, dim_names=None):
        a, b = self._pair(vid)
        dims = []
        for k, (x, y) in enumerate(zip(a, b)):
            if x == y:
                dims.append(x)
            elif dim_names is not None:
                dims.append(dim_names[k])
            else:
                sym = self.symbols.get((x, y))
                dims.append(sym[2] if sym else None)
        return self.helper.make_tensor_value_info(name, onnx_dtype(self.values[vid]["dtype"]), dims)

    # ------------------------------------------------------------------------------------------- model
    def build(self, emitters, graph_name):
        inputs = []
        for i, vid in enumerate(self.desc["inputs"]):
            name = self.input_names[i]
            self.names[vid] = name
            a, b = self._pair(vid)
            dim_names = []
            for k, (x, y) in enumerate(zip(a, b)):
                sym = "batch" if k == 0 else f"dim{k}"
                dim_names.append(sym if x != y else None)
                if x != y:
                    self.symbols.setdefault((x, y), (name, k, sym))
            inputs.append(self.value_info(name, vid, dim_names))
        nodes_b = self.desc_b["nodes"] if self.desc_b is not None else None
        for j, node in enumerate(self.desc["nodes"]):
            self.current = node
            where = f" (issued at {node['loc']})" if node["loc"] else ""
            if nodes_b is not None:
                self._check_same(node, nodes_b[j], where)
            emit = emitters.get(node["op"])
            if emit is None:
                raise ValueError(f"For 'export', the op '{node['op']}'{where} has no ONNX mapping in Kiln; ops that "
                                 f"can be exported to ONNX: {', '.join(sorted(emitters))}.")
            try:
                outs = emit(self, node)
            except ValueError as e:
                raise ValueError(f"For 'export', the op '{node['op']}'{where} cannot be written as ONNX: {e}") \
                    from None
            for vid, name in zip(node["outputs"], outs):
                if name is not None:
                    self.names[vid] = name
        outputs, seen = [], set()
        for k, vid in enumerate(self.desc["outputs"]):
            src = self.name_of(vid)
            name = "output" if len(self.desc["outputs"]) == 1 else f"output{k}"
            # Every graph output gets its own Identity: an output may be an input, an initializer or another output.
            self.nodes.append(self.helper.make_node("Identity", [src], [name], name=self.fresh("n_output")))
            seen.add(name)
            outputs.append(self.value_info(name, vid))
        graph = self.helper.make_graph(self.nodes, graph_name, inputs, outputs, self.inits)
        model = self.helper.make_model(graph, producer_name="Kiln", producer_version=_kiln_version(),
                                       opset_imports=[self.helper.make_opsetid("", OPSET)])
        model.ir_version = IR_VERSION
        return model

    def _check_same(self, node, other, where):
        ok = node["op"] == other["op"] and node["inputs"] == other["inputs"] and node["outputs"] == other["outputs"]
        if ok:
            loose = self.SHAPE_ATTRS.get(node["op"], set())
            ok = all(node["attrs"].get(k) == other["attrs"].get(k)
                     for k in set(node["attrs"]) | set(other["attrs"]) if k not in loose)
        if not ok:
            raise ValueError(f"For 'export', the graph's structure depends on the size of a dynamic (None) input "
                             f"dimension (at the op '{node['op']}'{where}: the two traces differ); export with "
                             "fixed input shapes.")


def _kiln_version():
    from .. import __version__
    return __version__


def build_model(graphs, param_names, input_names, dynamic, graph_name):
    """ModelProto of one traced Kiln graph, or of two traces of one network for dynamic dimensions (`graphs`:
    [Graph] or [Graph, Graph]); `param_names`: tensor id -> Parameter name; `dynamic`: per input, per axis, whether
    it is dynamic."""
    _onnx()
    from ._mindir_export import _PASSES
    from ._onnx_ops import EMITTERS
    descs = []
    for g in graphs:
        for p in _PASSES:
            g.run_pass(p)
        descs.append(g.describe())
    a = descs[0]
    b = descs[1] if len(descs) > 1 else None
    if b is not None and (len(a["nodes"]) != len(b["nodes"]) or len(a["values"]) != len(b["values"])
                          or a["outputs"] != b["outputs"]):
        raise ValueError("For 'export', the graph's structure depends on the size of a dynamic (None) input "
                         "dimension (the two traces have different nodes); export with fixed input shapes.")
    return OnnxWriter(a, b, param_names, input_names, dynamic).build(EMITTERS, graph_name)


# 2 GiB: the largest message protobuf serializes (larger models would need ONNX's external data files).
_PROTO_LIMIT = 2 ** 31 - 1


def write(net, inputs, file_name, kwargs):
    """kiln.export's ONNX writer (_export_load._WRITERS["ONNX"]): traces `net` on `inputs` (twice when an input
    has dynamic dimensions), checks the model with onnx.checker and writes it to `file_name` (".onnx" appended when
    missing, MindSpore's rule). Returns the path written."""
    import os
    import threading
    from ..common.tensor import Tensor
    from .._convert import dynamic_shape
    from ._export_load import _trace, _param_names
    onnx = _onnx()
    if kwargs.get("custom_func") is not None:
        raise ValueError("For 'export', 'custom_func' edits MindIR models only (MindSpore's rule); it cannot be "
                         "used with file_format='ONNX'.")
    tensors = [x for x in inputs if isinstance(x, Tensor)]
    sigs = [dynamic_shape(x) for x in tensors]
    dynamic = [tuple(d is None for d in s) if s is not None else (False,) * x.ndim for x, s in zip(tensors, sigs)]
    graphs = []
    names = None
    for second in ((False, True) if any(any(d) for d in dynamic) else (False,)):
        shapes = [tuple(trace_size(k, second) if s is not None and s[k] is None else int(d)
                        for k, d in enumerate(x.shape)) for x, s in zip(tensors, sigs)]
        g, names = _trace(net, inputs, shapes=shapes, flatten=True)
        graphs.append(g)
    gname = getattr(net, "__name__", type(net).__name__)
    gname = "".join(c if c.isalnum() or c == "_" else "_" for c in gname)
    model = build_model(graphs, _param_names(net), names, dynamic, gname)
    if model.ByteSize() > _PROTO_LIMIT:
        raise RuntimeError(f"For 'export', the model is {model.ByteSize()} bytes: more than protobuf's 2 GiB "
                           "limit of one ONNX file.")
    onnx.checker.check_model(model, full_check=True)
    if not file_name.endswith(".onnx"):
        file_name += ".onnx"
    os.makedirs(os.path.dirname(os.path.realpath(file_name)), exist_ok=True)
    tmp = f"{file_name}.tmp{os.getpid()}_{threading.get_ident()}"
    with open(tmp, "wb") as f:
        f.write(model.SerializeToString())
    os.replace(tmp, file_name)
    return file_name
