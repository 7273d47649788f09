"""What a damaged file can make a decoder raise, for the loaders' boundaries (docs/decisions/damaged-files.md).

Every loader of a file Kiln reads (checkpoints, MINDIR, MindRecord, the compile cache, dataset files) raises one
documented error for a damaged file, naming the file and what is wrong. Its own checks raise that error directly;
at its boundary it also catches DECODE_ERRORS — what decoding arbitrary bytes raises from Python, NumPy, json,
struct, protobuf or Kiln's C++ reader: invalid UTF-8 (UnicodeDecodeError is a ValueError), bad JSON, bad lengths
(struct.error), a value of the wrong type, an index out of range, a count too large to allocate — and turns it into
that error, so that no raw UnicodeDecodeError, struct.error, IndexError or MemoryError reaches the user. The
loader's own error must pass the boundary unchanged (re-raise it before catching DECODE_ERRORS: it is often a
ValueError itself), or its message is wrapped in itself.
"""
import struct

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import DecodeError

DECODE_ERRORS = (ValueError, KeyError, TypeError, IndexError, AttributeError, OverflowError, MemoryError,
                 RecursionError, struct.error, DecodeError)


def _repeated(field):
    if hasattr(field, "is_repeated"):
        return field.is_repeated
    return field.label == FieldDescriptor.LABEL_REPEATED  # (protobuf < 5)


def non_text_string(msg, path=""):
    """The path (e.g. "graph.node[3].name") of the first `string` field of the parsed protobuf message `msg` that
    does not hold UTF-8 text, or None. (protobuf hands such a proto2 field back as bytes instead of failing the
    parse; used as a name it would raise a TypeError or ValueError far from the file.) Bytes fields (tensor data)
    are not read."""
    for field in msg.DESCRIPTOR.fields:
        if field.type not in (FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_MESSAGE):
            continue
        repeated = _repeated(field)
        if not repeated:
            try:
                if not msg.HasField(field.name):
                    continue
            except ValueError:  # a proto3 scalar without presence: read it
                pass
        value = getattr(msg, field.name)
        name = f"{path}.{field.name}" if path else field.name
        if field.type == FieldDescriptor.TYPE_STRING:
            for k, v in enumerate(value if repeated else [value]):
                if not isinstance(v, str):
                    return f"{name}[{k}]" if repeated else name
        elif field.message_type.GetOptions().map_entry:  # map<key, value>: keys and message values
            key_is_text = field.message_type.fields_by_name["key"].type == FieldDescriptor.TYPE_STRING
            value_is_text = field.message_type.fields_by_name["value"].type == FieldDescriptor.TYPE_STRING
            for key in value:
                if key_is_text and not isinstance(key, str):
                    return f"{name} key {key!r}"
                v = value[key]
                if value_is_text and not isinstance(v, str):
                    return f"{name}[{key!r}]"
                bad = non_text_string(v, f"{name}[{key!r}]") if hasattr(v, "DESCRIPTOR") else None
                if bad:
                    return bad
        else:
            for k, v in enumerate(value if repeated else [value]):
                bad = non_text_string(v, f"{name}[{k}]" if repeated else name)
                if bad:
                    return bad
    return None
