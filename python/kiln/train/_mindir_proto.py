"""MindSpore's MindIR protobuf schema (package `mind_ir`, proto2; MindSpore's mindspore/core/proto/mind_ir.proto).

The message classes are built at import from a descriptor (google.protobuf descriptor_pb2 + message_factory) in a
private descriptor pool, as kiln/train/serialization.py builds the checkpoint's: no generated file, no hand-written
wire parser. Field numbers and types follow mind_ir.proto of MindSpore 2.10 (mind_ir_version 3); every message and
field of the schema is declared, so files written by MindSpore parse completely.

Also here: MindIR's dtype codes (TensorProto.DataType) <-> Kiln dtypes and the NumPy dtypes of their raw bytes.
"""
import numpy as np
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from ..common import dtype as mstype

_F = descriptor_pb2.FieldDescriptorProto
_T = {"string": _F.TYPE_STRING, "bytes": _F.TYPE_BYTES, "int64": _F.TYPE_INT64, "int32": _F.TYPE_INT32,
      "uint64": _F.TYPE_UINT64, "float": _F.TYPE_FLOAT, "double": _F.TYPE_DOUBLE, "bool": _F.TYPE_BOOL}
_L = {"opt": _F.LABEL_OPTIONAL, "rep": _F.LABEL_REPEATED, "req": _F.LABEL_REQUIRED}

_ATTRIBUTE_TYPES = [
    "UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32", "INT64", "STRING", "BOOL", "FLOAT16", "DOUBLE",
    "UINT32", "UINT64", "COMPLEX64", "COMPLEX128", "BFLOAT16", "TENSOR", "GRAPH", "TENSORS", "TUPLE", "LIST", "DICT",
    "UMONAD", "IOMONAD", "NONE", "PRIMITIVECLOSURE", "FUNCGRAPHCLOSURE", "PARTIALCLOSURE", "UNIONFUNCCLOSURE",
    "CSR_TENSOR", "COO_TENSOR", "ROW_TENSOR", "CLASS_TYPE", "NAME_SPACE", "SYMBOL", "TYPE_NULL", "MAP_TENSOR",
    "FUNCTOR", "SCALAR", "SCALAR_GRAPH_HOLDER"]
_DATA_TYPES = ["UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32", "INT64", "STRING", "BOOL", "FLOAT16",
               "DOUBLE", "UINT32", "UINT64", "COMPLEX64", "COMPLEX128", "BFLOAT16", "FLOAT64", "QINT4X2"]

# (message name, [(label, type or .Message or enum, field name, number)], {nested enum name: [(value, number)]},
#  [nested messages in the same form])
_MESSAGES = [
    ("AttributeProto", [
        ("opt", "string", "name", 1), ("opt", "float", "f", 2), ("opt", "int64", "i", 3), ("opt", "double", "d", 4),
        ("opt", "bytes", "s", 5), ("opt", ".mind_ir.TensorProto", "t", 6), ("opt", ".mind_ir.GraphProto", "g", 7),
        ("rep", "float", "floats", 8), ("rep", "double", "doubles", 9), ("rep", "int64", "ints", 10),
        ("rep", "bytes", "strings", 11), ("rep", ".mind_ir.TensorProto", "tensors", 12),
        ("rep", ".mind_ir.GraphProto", "graphs", 13), ("opt", "string", "doc_string", 14),
        ("opt", "string", "ref_attr_name", 15), ("opt", "enum:.mind_ir.AttributeProto.AttributeType", "type", 16),
        ("rep", ".mind_ir.AttributeProto", "values", 17),
        ("opt", ".mind_ir.AttributeProto.SeqInfoProto", "seq_info", 18),
        ("opt", ".mind_ir.FunctorProto", "functor", 19),
        ("opt", ".mind_ir.ScalarGraphHolderProto", "graph_holder", 20)],
     {"AttributeType": list(zip(_ATTRIBUTE_TYPES, range(len(_ATTRIBUTE_TYPES))))},
     [("SeqInfoProto", [("opt", "bool", "is_dyn_len", 1),
                        ("opt", ".mind_ir.AttributeProto", "tuple_elem_item", 2)], {}, [])]),
    ("FunctorProto", [("opt", "enum:.mind_ir.FunctorProto.FunctorType", "type", 1), ("opt", "string", "name", 2),
                      ("rep", ".mind_ir.AttributeProto", "values", 3)],
     {"FunctorType": [("SHAPE_CALC_FUNCTOR", 1), ("ANY_FUNCTOR", 2)]}, []),
    ("ValueInfoProto", [("opt", "string", "name", 1), ("rep", ".mind_ir.TensorProto", "tensor", 2),
                        ("opt", "string", "doc_string", 3), ("opt", "string", "denotation", 4),
                        ("opt", ".mind_ir.AttributeProto", "attr_info", 5)], {}, []),
    ("NodeProto", [("rep", "string", "input", 1), ("rep", "string", "output", 2), ("opt", "string", "name", 3),
                   ("opt", "string", "op_type", 4), ("rep", ".mind_ir.AttributeProto", "attribute", 5),
                   ("opt", "string", "doc_string", 6), ("opt", "string", "domain", 7),
                   ("rep", ".mind_ir.AttributeProto", "node_attr", 8),
                   ("rep", ".mind_ir.AttributeProto", "primal_attr", 9)], {}, []),
    ("ModelProto", [("opt", "string", "ir_version", 1), ("opt", "string", "producer_name", 2),
                    ("opt", "string", "producer_version", 3), ("opt", "string", "domain", 4),
                    ("opt", "string", "model_version", 5), ("opt", "string", "doc_string", 6),
                    ("opt", ".mind_ir.GraphProto", "graph", 7), ("rep", ".mind_ir.GraphProto", "functions", 8),
                    ("opt", ".mind_ir.PreprocessorProto", "preprocessor", 9), ("opt", "bool", "little_endian", 10),
                    ("opt", ".mind_ir.ParallelProto", "parallel", 11),
                    ("rep", ".mind_ir.PrimitiveProto", "primitives", 12), ("opt", "int64", "mind_ir_version", 13),
                    ("rep", ".mind_ir.ModelProto.UserInfoEntry", "user_info", 14)], {},
     [("UserInfoEntry", [("opt", "string", "key", 1), ("opt", "string", "value", 2)], {}, [], True)]),
    ("PreprocessorProto", [("rep", ".mind_ir.PreprocessOpProto", "op", 1)], {}, []),
    ("PreprocessOpProto", [("opt", "string", "input_columns", 1), ("opt", "string", "output_columns", 2),
                           ("opt", "string", "project_columns", 3), ("opt", "string", "op_type", 4),
                           ("opt", "string", "operations", 5), ("opt", "bool", "offload", 6)], {}, []),
    ("GraphProto", [("rep", ".mind_ir.NodeProto", "node", 1), ("opt", "string", "name", 2),
                    ("rep", ".mind_ir.TensorProto", "parameter", 3), ("opt", "string", "doc_string", 4),
                    ("rep", ".mind_ir.ValueInfoProto", "input", 5), ("rep", ".mind_ir.ValueInfoProto", "output", 6),
                    ("opt", "string", "bprop_hash", 7), ("rep", ".mind_ir.AttributeProto", "attribute", 8),
                    ("opt", "string", "bprop_filepath", 9),
                    ("rep", ".mind_ir.MapTensorProto", "map_parameter", 10)], {}, []),
    ("TensorProto", [("rep", "int64", "dims", 1), ("opt", "int32", "data_type", 2), ("rep", "float", "float_data", 3),
                     ("rep", "int32", "int32_data", 4), ("rep", "bytes", "string_data", 5),
                     ("rep", "int64", "int64_data", 6), ("opt", "string", "name", 7),
                     ("opt", "string", "doc_string", 8),
                     ("opt", "bytes", "raw_data", 9), ("rep", "double", "double_data", 10),
                     ("rep", "uint64", "uint64_data", 11),
                     ("opt", ".mind_ir.TensorProto.ExternalDataProto", "external_data", 12),
                     ("opt", "string", "ref_key", 13), ("rep", "int64", "min_dims", 14),
                     ("rep", "int64", "max_dims", 15),
                     ("opt", "enum:.mind_ir.TensorProto.CompressionType", "compression_type", 16),
                     ("rep", ".mind_ir.TensorProto.QuantParamProto", "quant_params", 17)],
     {"DataType": list(zip(_DATA_TYPES, range(len(_DATA_TYPES)))),
      "CompressionType": [("NO_COMPRESSION", 0), ("INDEXING", 1), ("SPARSE", 2), ("FSE", 3), ("BIT_PACKING", 4),
                          ("FSE_INT", 5), ("FSE_INFER", 6)]},
     [("ExternalDataProto", [("opt", "string", "location", 1), ("opt", "int64", "offset", 2),
                             ("opt", "int64", "length", 3)], {}, []),
      ("QuantParamProto", [("req", "string", "quant_algo_name", 1),
                           ("rep", ".mind_ir.AttributeProto", "attribute", 2)], {}, [])]),
    ("MapTensorProto", [("req", "string", "name", 1), ("req", ".mind_ir.AttributeProto", "default_value", 2),
                        ("req", ".mind_ir.TensorProto", "key_tensor", 3),
                        ("req", ".mind_ir.TensorProto", "value_tensor", 4),
                        ("req", ".mind_ir.TensorProto", "status_tensor", 5)], {}, []),
    ("ParallelProto", [("rep", ".mind_ir.LayoutProto", "layout", 1)], {}, []),
    ("LayoutProto", [("opt", "string", "name", 1), ("rep", "int64", "device_arrangement_int", 2),
                     ("rep", "int64", "tensor_map_int", 3), ("rep", "int64", "slice_shape_int", 4),
                     ("opt", "int64", "field_size", 5), ("opt", "bool", "uniform_split", 6),
                     ("opt", "string", "opt_shard_group", 7), ("opt", "bool", "pipeline_shared", 8),
                     ("opt", "bool", "is_send", 9), ("opt", "int64", "peer_rank", 10), ("opt", "int64", "sr_tag", 11),
                     ("rep", "int64", "opt_shard_slice_shape_int", 12)], {}, []),
    ("PrimitiveProto", [("opt", "string", "name", 1), ("opt", "string", "op_type", 2),
                        ("rep", ".mind_ir.AttributeProto", "attribute", 3), ("opt", "string", "instance_name", 4),
                        ("opt", "enum:.mind_ir.PrimitiveProto.PrimType", "prim_type", 5)],
     {"PrimType": [("PRIMITIVE", 1), ("PRIMITIVE_FUNCTION", 2)]}, []),
    ("ScalarNodeProto", [("opt", "int64", "scalar_op_type", 1), ("rep", "int64", "in_index", 2),
                         ("rep", "int64", "value", 3)], {}, []),
    ("ScalarGraphHolderProto", [("rep", ".mind_ir.ScalarNodeProto", "scalar_node", 1),
                                ("rep", "uint64", "input_shape_index", 2)], {}, []),
]


def _fill(msg, fields, enums, nested):
    for name, values in enums.items():
        e = msg.enum_type.add(name=name)
        for vname, num in values:
            e.value.add(name=vname, number=num)
    for spec in nested:
        sub = msg.nested_type.add(name=spec[0])
        _fill(sub, spec[1], spec[2], spec[3])
        if len(spec) > 4 and spec[4]:
            sub.options.map_entry = True
    for label, typ, name, number in fields:
        f = msg.field.add(name=name, number=number, label=_L[label])
        if typ.startswith("enum:"):
            f.type, f.type_name = _F.TYPE_ENUM, typ[5:]
        elif typ.startswith("."):
            f.type, f.type_name = _F.TYPE_MESSAGE, typ
        else:
            f.type = _T[typ]


def _build():
    fd = descriptor_pb2.FileDescriptorProto(name="kiln_mind_ir.proto", package="mind_ir", syntax="proto2")
    e = fd.enum_type.add(name="Version")
    for n, v in [("IR_VERSION_START", 0), ("IR_VERSION", 1), ("IR_VERSION_WITH_PRIM_FUNCTION", 2),
                 ("IR_VERSION_WITH_SCALAR_GRAPH_HOLDER", 3)]:
        e.value.add(name=n, number=v)
    for name, fields, enums, nested in _MESSAGES:
        _fill(fd.message_type.add(name=name), fields, enums, nested)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fd)
    return {name: message_factory.GetMessageClass(pool.FindMessageTypeByName("mind_ir." + name))
            for name, _, _, _ in _MESSAGES}


_classes = _build()
ModelProto = _classes["ModelProto"]
GraphProto = _classes["GraphProto"]
NodeProto = _classes["NodeProto"]
AttributeProto = _classes["AttributeProto"]
TensorProto = _classes["TensorProto"]
PrimitiveProto = _classes["PrimitiveProto"]

# AttributeProto.AttributeType values by name (AT.FLOAT, AT.TUPLE, ...).
AT = type("AttributeType", (), {n: i for i, n in enumerate(_ATTRIBUTE_TYPES)})
ATTRIBUTE_TYPE_NAMES = list(_ATTRIBUTE_TYPES)

# TensorProto.DataType code -> (Kiln dtype, NumPy dtype of the raw little-endian bytes). BFLOAT16 is stored as its
# uint16 bits. (DOUBLE and FLOAT64 are both float64: MindSpore writes 11.)
DATA_TYPES = {
    1: (mstype.float32, np.dtype("<f4")), 2: (mstype.uint8, np.dtype("<u1")), 3: (mstype.int8, np.dtype("<i1")),
    4: (mstype.uint16, np.dtype("<u2")), 5: (mstype.int16, np.dtype("<i2")), 6: (mstype.int32, np.dtype("<i4")),
    7: (mstype.int64, np.dtype("<i8")), 9: (mstype.bool_, np.dtype("?")), 10: (mstype.float16, np.dtype("<f2")),
    11: (mstype.float64, np.dtype("<f8")), 12: (mstype.uint32, np.dtype("<u4")), 13: (mstype.uint64, np.dtype("<u8")),
    16: (mstype.bfloat16, np.dtype("<u2")), 17: (mstype.float64, np.dtype("<f8")),
}
DATA_TYPE_CODE = {}
for _code, (_kd, _) in DATA_TYPES.items():
    DATA_TYPE_CODE.setdefault(_kd, _code)


def data_type_name(code):
    """MindIR's name of a TensorProto.DataType code ('FLOAT', ...; 'code N' when unknown)."""
    return _DATA_TYPES[code] if 0 <= code < len(_DATA_TYPES) else f"code {code}"


# MindSpore's TypeId numbers of tensor dtypes (the `dst_type` input of Cast, an Int64 constant in MindIR; read from
# files MindSpore 2.10 exports).
TYPE_IDS = {
    mstype.bool_: 30, mstype.int8: 32, mstype.int16: 33, mstype.int32: 34, mstype.int64: 35, mstype.uint8: 37,
    mstype.uint16: 38, mstype.uint32: 39, mstype.uint64: 40, mstype.float16: 42, mstype.float32: 43,
    mstype.float64: 44, mstype.bfloat16: 45,
}
TYPE_ID_DTYPES = {v: k for k, v in TYPE_IDS.items()}
