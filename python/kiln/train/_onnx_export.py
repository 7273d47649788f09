"""Writing a traced Kiln graph as an ONNX model (`kiln.export(..., file_format="ONNX")`), through the `onnx` package.

The network is traced in inference mode and simplified exactly as for MindIR (kiln/train/_export_load.py `_trace`,
the op-set-preserving passes of _mindir_export._PASSES); each Kiln node is then written as ONNX operators of the
default domain at opset OPSET (docs/decisions/onnx-export.md says why 20), by the emitters of kiln/train/_onnx_ops.py:

* graph inputs -> ModelProto.graph.input (named after construct's parameters); Parameters -> initializers under the
  Parameter's name (weights are stored, not inputs); other tensors the network reads -> initializers "const_N".
* a node with no ONNX mapping raises ValueError naming the op and the user's source line that issued it.

Dynamic dimensions: an input given as `Tensor(shape=[None, 1, 28, 28], dtype=ms.float32)` has a dynamic dimension
at each None. The network is then traced three times, with different sizes for the None dimensions (trace_size);
the traces must have the same structure. A size or slice bound that differs between them is written as a run-time
value: the input's dimension itself (Shape -> Gather), or `c0 + c1 * dim` when the three traces fit that line
(a time-major RNN's `t * batch` slices, `batch - 1` of `x[:-1]`), else, once per Reshape target, -1. Constants
shaped by a dynamic dimension whose values are all equal (an RNN's zero initial state) become Expand at run time.
Anything else that depends on a dynamic size (`x.sum() / x.shape[0]`, a structure that changes with it) raises
ValueError: export it with fixed shapes.
"""
import numpy as np

from ..ops import _kernels
from ..common import dtype as mstype
from ..ops import _schema

OPSET = 20
IR_VERSION = 9  # the IR version of onnx 1.15, which introduced opset 20 (older runtimes read it)
INT64_MAX = 2 ** 63 - 1
INT64_MIN = -2 ** 63

N_TRACES = 3  # traces of a network with dynamic dimensions: two fit a line, the third checks it


def trace_size(axis, trace):
    """Size a dynamic (None) input dimension at `axis` is traced with in trace number `trace` (0..N_TRACES-1):
    7, 11, 13 on the batch axis; elsewhere 36, 49, 62 (+ 60 per further axis, so the triples tell the axes apart):
    large enough for convolutions and pooling, and with different remainders modulo 2 to 5, so that a padding
    computed from the size (pad_mode "same") differs between the traces and is refused rather than frozen."""
    if axis == 0:
        return (7, 11, 13)[trace]
    return (36, 49, 62)[trace] + 60 * (axis - 1)


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
        return _kernels.cast(tensor, mstype.float32).asnumpy()
    return tensor.asnumpy()


class OnnxWriter:
    """Builds the ONNX graph of a traced Kiln graph. `descs`: Graph.describe() of each trace (one, or N_TRACES for
    dynamic dimensions: the first is written, the others give the dynamic sizes). Emitters (kiln/train/
    _onnx_ops.py) call `node`, `name_of`, `const`, `ints`, `shape_of`, `shape_tensor`, `dim_expr`, `index_vector`,
    `traces`."""

    # Node attributes that may differ between the traces of a dynamic export (the emitters read run-time shapes
    # instead); any other difference means the graph's structure depends on a dynamic size.
    SHAPE_ATTRS = {"Reshape": {"shape"}, "BroadcastTo": {"shape"},
                   "Conv2DBackpropInput": {"input_shape"}, "StridedSlice": {"begin", "end"}}

    def __init__(self, descs, param_names, input_names):
        from onnx import helper
        self.helper = helper
        self.descs = descs
        self.desc = descs[0]
        self.values = self.desc["values"]
        self.param_names = param_names
        self.input_names = input_names
        self.nodes, self.inits = [], []
        self.names = {}
        self.used = set()
        self.counter = 0
        self.index = None  # position of the node being written
        self.symbols = {}  # sizes of a dynamic input dimension in the traces -> (input name, axis, dim_param)

    # ------------------------------------------------------------------------------------------- naming
    def fresh(self, stem):
        """A name used nowhere else in the model (inputs, outputs, Parameters, other values)."""
        while True:
            self.counter += 1
            name = f"{stem}_{self.counter}"
            if name not in self.used:
                self.used.add(name)
                return name

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
                if v["kind"] == "constant" and not v["shape"] and len(self.descs) == 1:
                    self.names[key] = self.const(_numpy(_kernels.cast(v["tensor"], as_dtype)), as_dtype)
                else:
                    self.names[key] = self.node("Cast", [self.name_of(vid)], to=onnx_dtype(as_dtype))
            return self.names[key]
        if vid in self.names:
            return self.names[vid]
        kind = v["kind"]
        if kind == "capture" and v["tensor"]._id in self.param_names:
            name = self.param_names[v["tensor"]._id]
            if name in self.used:  # a Parameter named like an input, an output or another Parameter
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
    def traces(self, vid):
        """Shape of value `vid` in each trace (a list of tuples)."""
        return [tuple(int(x) for x in d["values"][vid]["shape"]) for d in self.descs]

    def shape_of(self, vid):
        """Shape of value `vid`: ints, None where the size is dynamic."""
        shapes = self.traces(vid)
        return tuple(dims[0] if len(set(dims)) == 1 else None for dims in zip(*shapes))

    def _input_dim(self, sizes):
        key = ("dim",) + sizes
        if key not in self.names:
            inp, axis, _ = self.symbols[sizes]
            shape = self.names.get(("shape", inp))
            if shape is None:
                shape = self.names[("shape", inp)] = self.node("Shape", [inp])
            self.names[key] = self.node("Gather", [shape, self.ints([axis])], axis=0)
        return self.names[key]

    def dim_expr(self, vals):
        """Name of a 1-element int64 tensor with the run-time value of a size/index that is `vals` in the traces:
        a dynamic input dimension, or c0 + c1 * that dimension when exactly one dimension fits all traces; None
        when none does."""
        vals = tuple(int(v) for v in vals)
        if vals in self.symbols:
            return self._input_dim(vals)
        fits = []
        for sizes in self.symbols:
            if (vals[0] - vals[1]) % (sizes[0] - sizes[1]):
                continue
            c1 = (vals[0] - vals[1]) // (sizes[0] - sizes[1])
            c0 = vals[0] - c1 * sizes[0]
            if c1 and all(v == c0 + c1 * sz for v, sz in zip(vals, sizes)):
                fits.append((sizes, c0, c1))
        if len(fits) != 1:
            return None
        sizes, c0, c1 = fits[0]
        key = ("lin", sizes, c0, c1)
        if key not in self.names:
            t = self._input_dim(sizes)
            if c1 != 1:
                t = self.node("Mul", [t, self.ints([c1])])
            if c0:
                t = self.node("Add", [t, self.ints([c0])])
            self.names[key] = t
        return self.names[key]

    def index_vector(self, items):
        """1-D int64 tensor of `items` (ints, or names of 1-element int64 tensors)."""
        parts, run = [], []
        for it in items:
            if isinstance(it, str):
                if run:
                    parts.append(self.ints(run))
                    run = []
                parts.append(it)
            else:
                run.append(int(it))
        if run or not parts:  # no items at all: an empty int64 vector (a 0-d Reshape target)
            parts.append(self.ints(run))
        return parts[0] if len(parts) == 1 else self.node("Concat", parts, axis=0)

    def shape_tensor(self, vid, allow_infer=False):
        """Name of a 1-D int64 tensor with the run-time shape of value `vid`: static sizes as constants, dynamic
        ones computed from the inputs' shapes (dim_expr); with `allow_infer`, one size that no input dimension
        gives is written as -1 (a Reshape target). ValueError otherwise."""
        items, inferred = [], False
        for dims in zip(*self.traces(vid)):
            if len(set(dims)) == 1:
                items.append(dims[0])
                continue
            e = self.dim_expr(dims)
            if e is None and allow_infer and not inferred:
                inferred = True
                items.append(-1)
            elif e is None:
                raise ValueError(f"a size ({' / '.join(map(str, dims))} in the traces) depends on a dynamic input "
                                 "dimension in a way ONNX export cannot express; export with fixed input shapes")
            else:
                items.append(e)
        return self.index_vector(items)

    def _constant(self, vid):
        v = self.values[vid]
        arrs = [_numpy(d["values"][vid]["tensor"]) for d in self.descs]
        arr = arrs[0]
        if all(a.shape == arr.shape for a in arrs):
            if not all(np.array_equal(a, arr, equal_nan=True) for a in arrs[1:]):
                raise ValueError("a constant's values depend on the size of a dynamic input dimension (e.g. "
                                 "x.shape[0] used in arithmetic); export with fixed input shapes")
            return self.const(arr, v["dtype"])
        first = arr.reshape(-1)[:1]
        if first.size and all(a.size and (a == first[0]).all() for a in arrs):
            # A batch-sized filled constant (zeros(x.shape[0], h)): Expand of its one value at run time.
            return self.node("Expand", [self.const(first.reshape(()), v["dtype"]), self.shape_tensor(vid)])
        raise ValueError("a constant's shape depends on a dynamic input dimension and its values are not all "
                         "equal; export with fixed input shapes")

    def value_info(self, name, vid, dim_names=None):
        dims = []
        for k, sizes in enumerate(zip(*self.traces(vid))):
            if len(set(sizes)) == 1:
                dims.append(sizes[0])
            elif dim_names is not None:
                dims.append(dim_names[k])
            else:
                sym = self.symbols.get(sizes)
                dims.append(sym[2] if sym else None)
        return self.helper.make_tensor_value_info(name, onnx_dtype(self.values[vid]["dtype"]), dims)

    # ------------------------------------------------------------------------------------------- model
    def build(self, emitters, graph_name):
        n_out = len(self.desc["outputs"])
        self.used.update(self.input_names[:len(self.desc["inputs"])])
        out_names = ["output"] if n_out == 1 else [f"output{k}" for k in range(n_out)]
        out_names = [self.fresh(n) if n in self.used else n for n in out_names]  # an input named "output"
        self.used.update(out_names)
        inputs = []
        for i, vid in enumerate(self.desc["inputs"]):
            name = self.input_names[i]
            self.names[vid] = name
            dim_names = []
            for k, sizes in enumerate(zip(*self.traces(vid))):
                dynamic = len(set(sizes)) > 1
                sym = "batch" if k == 0 else f"dim{k}"
                dim_names.append(sym if dynamic else None)
                if dynamic:
                    self.symbols.setdefault(sizes, (name, k, sym))
            inputs.append(self.value_info(name, vid, dim_names))
        for j, node in enumerate(self.desc["nodes"]):
            where = f" (issued at {node['loc']})" if node["loc"] else ""
            for other in self.descs[1:]:
                self._check_same(node, other["nodes"][j], where)
            emit = emitters.get(node["op"])
            if emit is None:
                why = _schema.refusal("onnx", node["op"])
                raise ValueError(f"For 'export', the op '{node['op']}'{where} has no ONNX mapping in Kiln"
                                 f"{f' ({why})' if why else ''}; ops that can be exported to ONNX: "
                                 f"{', '.join(sorted(emitters))}.")
            try:
                self.index = j
                outs = emit(self, node)
            except ValueError as e:
                raise ValueError(f"For 'export', the op '{node['op']}'{where} cannot be written as ONNX: {e}") \
                    from None
            for vid, name in zip(node["outputs"], outs):
                if name is not None:
                    self.names[vid] = name
        outputs = []
        for k, vid in enumerate(self.desc["outputs"]):
            src = self.name_of(vid)
            name = out_names[k]
            # Every graph output gets its own Identity: an output may be an input, an initializer or another output.
            self.nodes.append(self.helper.make_node("Identity", [src], [name], name=self.fresh("n_output")))
            outputs.append(self.value_info(name, vid))
        # Initializers no node reads (a dropped Print's 0-d output, constants of folded-away values) are left out:
        # onnxruntime warns about each one.
        used = {i for n in self.nodes for i in n.input}
        inits = [t for t in self.inits if t.name in used]
        graph = self.helper.make_graph(self.nodes, graph_name, inputs, outputs, inits)
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
                             f"dimension (at the op '{node['op']}'{where}: the traces differ); export with fixed "
                             "input shapes.")


def _kiln_version():
    from .. import __version__
    return __version__


def build_model(graphs, param_names, input_names, graph_name):
    """ModelProto of one traced Kiln graph, or of N_TRACES traces of one network for dynamic dimensions (`graphs`:
    a list of Graphs); `param_names`: tensor id -> Parameter name."""
    _onnx()
    from ._mindir_export import _PASSES
    from ._onnx_ops import EMITTERS
    descs = []
    for g in graphs:
        for p in _PASSES:
            g.run_pass(p)
        descs.append(g.describe())
    a = descs[0]
    for b in descs[1:]:
        if len(a["nodes"]) != len(b["nodes"]) or len(a["values"]) != len(b["values"]) or a["outputs"] != b["outputs"]:
            raise ValueError("For 'export', the graph's structure depends on the size of a dynamic (None) input "
                             "dimension (the traces have different nodes); export with fixed input shapes.")
    return OnnxWriter(descs, param_names, input_names).build(EMITTERS, graph_name)


# 2 GiB: the largest message protobuf serializes (larger models would need ONNX's external data files).
_PROTO_LIMIT = 2 ** 31 - 1


def write(net, inputs, file_name, kwargs):
    """kiln.export's ONNX writer (_export_load._WRITERS["ONNX"]): traces `net` on `inputs` (twice when an input
    has dynamic dimensions), checks the model with onnx.checker and writes it to `file_name` (".onnx" appended when
    missing, MindSpore's rule). Returns the path written."""
    import os
    from .. import _atomic_write
    from ..common.tensor import Tensor
    from .._convert import dynamic_shape
    from ._export_load import _trace, _param_names, _arg_names
    onnx = _onnx()
    if kwargs.get("custom_func") is not None:
        raise ValueError("For 'export', 'custom_func' edits MindIR models only (MindSpore's rule); it cannot be "
                         "used with file_format='ONNX'.")
    tensors = [x for x in inputs if isinstance(x, Tensor)]
    sigs = [dynamic_shape(x) for x in tensors]
    graphs = []
    names = None
    for trace in range(N_TRACES if any(s is not None and None in s for s in sigs) else 1):
        shapes = [tuple(trace_size(k, trace) if s is not None and s[k] is None else int(d)
                        for k, d in enumerate(x.shape)) for x, s in zip(tensors, sigs)]
        g, names = _trace(net, inputs, shapes=shapes, flatten=True)
        graphs.append(g)
    # Input names: construct's parameters at the positions of the tensor inputs (a leading flag argument is not one)
    names = [n for n, x in zip(_arg_names(net, len(inputs)), inputs) if isinstance(x, Tensor)]
    gname = getattr(net, "__name__", type(net).__name__)
    gname = "".join(c if c.isalnum() or c == "_" else "_" for c in gname)
    model = build_model(graphs, _param_names(net), names, gname)
    if model.ByteSize() > _PROTO_LIMIT:
        raise RuntimeError(f"For 'export', the model is {model.ByteSize()} bytes: more than protobuf's 2 GiB "
                           "limit of one ONNX file.")
    try:
        onnx.checker.check_model(model, full_check=True)
    except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as e:
        raise RuntimeError(f"For 'export', the ONNX model of '{gname}' fails onnx.checker (a Kiln bug: please "
                           f"report it with the network): {e}") from None
    if not file_name.endswith(".onnx"):
        file_name += ".onnx"
    os.makedirs(os.path.dirname(os.path.realpath(file_name)), exist_ok=True)
    _atomic_write.write_file(file_name, model.SerializeToString())
    return file_name
