"""Reading a MindIR file (MindSpore's exported graph) into a MindIRGraph that Kiln runs node by node.

A MindIR graph (mind_ir.proto: ModelProto.graph) lists its inputs, its parameters (TensorProto with `ref_key`, the
values in `raw_data`), and nodes in topological order: "Constant" nodes (a value in attribute "value") and CNodes
whose `op_type` is "REF::<primitive entry>" (an entry of ModelProto.primitives: op_type + attributes), or a bare
primitive name with its attributes on the node (older files). A node's output is named by `output[0]`; inputs name
graph inputs, parameters, constants or earlier nodes. MindSpore 2.x passes most operator arguments as inputs
(PRIMITIVE_FUNCTION: e.g. MatMul(x, w, transpose_a, transpose_b)); older primitives (PRIMITIVE: Conv2D, MaxPool)
keep them as primitive attributes.

Running interprets the node list with Kiln ops (the table in _mindir_ops.py), so a loaded graph runs in PyNative,
is traced like any other code under jit / GRAPH_MODE, and is differentiable. Parsing decodes protobuf fields into
NumPy arrays and Python values only: nothing from the file is executed.
"""
import numpy as np
from google.protobuf.message import DecodeError

from .. import _damage
from ..common.tensor import Tensor
from ..common.parameter import Parameter
from . import _mindir_proto as P
from ._mindir_ops import PRIMITIVES, MONAD


class MindIRError(RuntimeError):
    """A MindIR file that cannot be read or run (names the file and the problem)."""


def _tensor_value(t, where, fname):
    """NumPy array of a TensorProto's data (raw_data, else the typed repeated fields)."""
    code = t.data_type
    if code not in P.DATA_TYPES:
        raise MindIRError(f"For 'load', the MindIR file '{fname}' has {where} of data type "
                          f"{P.data_type_name(code)}, which Kiln cannot read.")
    kdtype, npdt = P.DATA_TYPES[code]
    shape = tuple(int(d) for d in t.dims)
    n = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if t.HasField("raw_data"):
        raw = t.raw_data
        if len(raw) != n * npdt.itemsize:
            raise MindIRError(f"For 'load', the MindIR file '{fname}' has {where} of shape {list(shape)} and type "
                              f"{P.data_type_name(code)} ({n * npdt.itemsize} bytes expected) but holds {len(raw)} "
                              "bytes: the file is damaged.")
        arr = np.frombuffer(raw, dtype=npdt).reshape(shape)
    else:
        for field in ("float_data", "int32_data", "int64_data", "double_data", "uint64_data"):
            vals = getattr(t, field)
            if len(vals):
                break
        else:
            vals = []
        if len(vals) != n:
            raise MindIRError(f"For 'load', the MindIR file '{fname}' has {where} of shape {list(shape)} with "
                              f"{len(vals)} values (no raw_data).")
        arr = np.asarray(list(vals)).astype(npdt).reshape(shape)
    if kdtype == P.mstype.bfloat16:
        return Tensor(np.ascontiguousarray(arr.astype("<u4") << 16).view("<f4")).astype(P.mstype.bfloat16)
    return Tensor(np.ascontiguousarray(arr))


def attr_value(a, where, fname):
    """Python value of an AttributeProto: int, float, bool, str, tuple, Tensor, None or MONAD."""
    t = a.type
    if t in (P.AT.FLOAT,):
        return float(a.floats[0]) if len(a.floats) else float(a.f)
    if t == P.AT.DOUBLE:
        return float(a.doubles[0]) if len(a.doubles) else float(a.d)
    if t in (P.AT.INT8, P.AT.INT16, P.AT.INT32, P.AT.INT64, P.AT.UINT8, P.AT.UINT16, P.AT.UINT32, P.AT.UINT64):
        return int(a.ints[0]) if len(a.ints) else int(a.i)
    if t == P.AT.BOOL:
        return bool(a.ints[0]) if len(a.ints) else bool(a.i)
    if t == P.AT.STRING:
        s = a.strings[0] if len(a.strings) else a.s
        return s.decode("utf-8", "replace")
    if t in (P.AT.TUPLE, P.AT.LIST):
        return tuple(attr_value(v, where, fname) for v in a.values)
    if t == P.AT.TENSORS:
        if len(a.tensors) != 1:
            raise MindIRError(f"For 'load', the MindIR file '{fname}' has {where} holding {len(a.tensors)} tensors "
                              "(1 expected).")
        return _tensor_value(a.tensors[0], where, fname)
    if t == P.AT.TENSOR:
        return _tensor_value(a.t, where, fname)
    if t == P.AT.NONE:
        return None
    if t in (P.AT.UMONAD, P.AT.IOMONAD):
        return MONAD
    name = P.ATTRIBUTE_TYPE_NAMES[t] if 0 <= t < len(P.ATTRIBUTE_TYPE_NAMES) else f"code {t}"
    raise MindIRError(f"For 'load', the MindIR file '{fname}' has {where} of attribute type {name}, which Kiln "
                      "cannot read.")


class _Step:
    """One CNode: the primitive's handler, its attributes and the names of its inputs / output."""
    __slots__ = ("prim", "fn", "attrs", "inputs", "output")

    def __init__(self, prim, fn, attrs, inputs, output):
        self.prim, self.fn, self.attrs, self.inputs, self.output = prim, fn, attrs, inputs, output


class MindIRGraph:
    """A graph loaded from a MindIR file by `kiln.load`; run it with `kiln.nn.GraphCell`.

    Attributes: `file_name`; `producer` (e.g. "MindSpore 2.10.0" or "Kiln 0.1.0"); `inputs`: list of
    (name, shape tuple, Kiln dtype) of the graph's arguments, in order; `parameters`: dict parameter name
    (MindSpore's `ref_key`, e.g. "conv.weight") -> Tensor with the stored values; `primitives`: the primitive name
    of every operator node, in program order."""

    def __init__(self, model, fname):
        self.file_name = fname
        self.producer = f"{model.producer_name} {model.model_version}".strip()
        if len(model.functions):
            names = ", ".join(f.name for f in model.functions)
            raise MindIRError(f"For 'load', the MindIR file '{fname}' has sub-graphs ({names}: control flow or "
                              "called functions); Kiln loads single-graph MindIR files only.")
        if not model.HasField("graph") or not len(model.graph.output):
            raise MindIRError(f"For 'load', the MindIR file '{fname}' has no graph (not a MindIR model, or empty).")
        g = model.graph
        prims = {p.name: p for p in model.primitives}
        self._sources = {}  # value name -> ("input", index) | ("param", name) | ("const", value) | ("node", None)
        self.inputs = []
        for i, vi in enumerate(g.input):
            if len(vi.tensor) != 1:
                raise MindIRError(f"For 'load', the MindIR file '{fname}' has input '{vi.name}' that is not one "
                                  "tensor; Kiln runs graphs whose inputs are tensors.")
            t = vi.tensor[0]
            if t.data_type not in P.DATA_TYPES:
                raise MindIRError(f"For 'load', the MindIR file '{fname}' has input '{vi.name}' of data type "
                                  f"{P.data_type_name(t.data_type)}, which Kiln cannot read.")
            self.inputs.append((vi.name, tuple(int(d) for d in t.dims), P.DATA_TYPES[t.data_type][0]))
            self._sources[vi.name] = ("input", i)
        self.parameters = {}
        for t in g.parameter:
            key = t.ref_key or t.name.split(":", 1)[-1]
            if t.HasField("external_data") or t.compression_type not in (0,):
                raise MindIRError(f"For 'load', the MindIR file '{fname}' stores parameter '{key}' externally or "
                                  "compressed; Kiln reads parameters stored in the file (raw_data) only.")
            self.parameters[key] = _tensor_value(t, f"parameter '{key}'", fname)
            self._sources[t.name] = ("param", key)
        self._steps = []
        self.primitives = []
        for n in g.node:
            out = n.output[0] if len(n.output) else n.name
            if n.op_type == "Constant":
                if not len(n.attribute):
                    raise MindIRError(f"For 'load', the MindIR file '{fname}' has constant '{n.name}' with no value.")
                self._sources[out] = ("const", attr_value(n.attribute[0], f"constant '{n.name}'", fname))
                continue
            op_type, attrs = self._primitive(n, prims, fname)
            fn = PRIMITIVES.get(op_type)
            if fn is None:
                raise MindIRError(f"For 'load', the MindIR file '{fname}' uses the primitive '{op_type}' (node "
                                  f"'{n.name}'), which Kiln cannot run. Supported primitives: "
                                  f"{', '.join(sorted(PRIMITIVES))}.")
            for name in n.input:
                if name not in self._sources:
                    raise MindIRError(f"For 'load', the MindIR file '{fname}': node '{n.name}' ({op_type}) reads "
                                      f"'{name}', which is not defined before it (a damaged or unsupported file).")
            self._steps.append(_Step(op_type, fn, attrs, list(n.input), out))
            self.primitives.append(op_type)
            self._sources[out] = ("node", None)
        self.outputs = []
        for vi in g.output:
            if vi.name not in self._sources:
                raise MindIRError(f"For 'load', the MindIR file '{fname}' returns '{vi.name}', which no node "
                                  "defines (a damaged file).")
            self.outputs.append(vi.name)

    @staticmethod
    def _primitive(n, prims, fname):
        """(op_type, attributes dict) of a CNode."""
        if n.op_type.startswith("REF::"):
            ref = n.op_type[5:]
            p = prims.get(ref)
            if p is None:
                raise MindIRError(f"For 'load', the MindIR file '{fname}': node '{n.name}' refers to the primitive "
                                  f"entry '{ref}', which the file does not have (a damaged file).")
            return p.op_type, {a.name: attr_value(a, f"attribute '{a.name}' of primitive '{p.op_type}'", fname)
                               for a in p.attribute if a.name not in ("input_names", "output_names")}
        if not n.op_type:
            raise MindIRError(f"For 'load', the MindIR file '{fname}' has node '{n.name}' with no operator.")
        return n.op_type, {a.name: attr_value(a, f"attribute '{a.name}' of node '{n.name}'", fname)
                           for a in n.attribute if a.name not in ("shape", "input_names", "output_names")}

    def __repr__(self):
        return (f"MindIRGraph('{self.file_name}', {self.producer}, inputs={[list(s) for _, s, _ in self.inputs]}, "
                f"{len(self._steps)} nodes, {len(self.parameters)} parameters)")

    def run(self, args, params):
        """Runs the graph on `args` (Tensors, in input order) with `params` (parameter name -> Tensor/Parameter):
        a Tensor, or a tuple for a tuple output. Uses Kiln ops only, so it runs eagerly or is traced."""
        env = {}
        for name, (kind, v) in self._sources.items():
            if kind == "input":
                env[name] = args[v]
            elif kind == "param":
                env[name] = params[v]
            elif kind == "const":
                env[name] = v
        for s in self._steps:
            ins = [env[i] for i in s.inputs]
            try:
                env[s.output] = s.fn(s.attrs, *ins)
            except (TypeError, ValueError, RuntimeError, IndexError) as e:
                raise type(e)(f"For 'GraphCell', primitive '{s.prim}' (output '{s.output}') of the MindIR file "
                              f"'{self.file_name}' failed: {e}") from e
        outs = [env[o] for o in self.outputs]
        return outs[0] if len(outs) == 1 else tuple(outs)


def read(file_name):
    """The MindIRGraph of a MindIR file (MindIRError naming the file on any problem)."""
    with open(file_name, "rb") as f:
        data = f.read()
    if not data:
        raise MindIRError(f"For 'load', the MindIR file '{file_name}' is empty.")
    model = P.ModelProto()
    try:
        model.ParseFromString(data)
    except (DecodeError, RuntimeError, ValueError) as e:
        raise MindIRError(f"For 'load', failed to parse the MindIR file '{file_name}' ({len(data)} bytes): it is "
                          f"truncated, damaged or not a MindIR file ({e}).") from None
    if not model.HasField("graph") or not len(model.graph.node):
        raise MindIRError(f"For 'load', the file '{file_name}' is not a MindIR model (no graph in it).")
    bad = _damage.non_text_string(model)  # protobuf hands a proto2 string that is not UTF-8 back as bytes
    if bad is not None:
        raise MindIRError(f"For 'load', the MindIR file '{file_name}' is damaged: its field {bad} is not UTF-8 "
                          "text.")
    try:
        return MindIRGraph(model, file_name)
    except MindIRError:
        raise
    except _damage.DECODE_ERRORS as e:  # a damaged file that still parses as protobuf: e.g. impossible dims
        raise MindIRError(f"For 'load', the MindIR file '{file_name}' is damaged: {type(e).__name__}: {e}") \
            from None


def as_parameters(graph):
    """Fresh Parameters (named by their MindSpore names) of a loaded graph's stored values."""
    return {k: Parameter(v.copy(), name=k) for k, v in graph.parameters.items()}
