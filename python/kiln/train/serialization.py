"""Checkpoints in MindSpore's .ckpt and .safetensors formats (MindSpore's `mindspore/train/serialization.py`).

A .ckpt file is one protobuf `Checkpoint` message (MindSpore's checkpoint.proto, proto2):

    message Checkpoint { message Value { required string tag = 1; required TensorProto tensor = 2; }
                         repeated Value value = 1; }
    message TensorProto { repeated int64 dims = 1; required string tensor_type = 2; required bytes tensor_content = 3; }

`tensor_content` holds the values in C order, little endian, in the dtype named by `tensor_type` ("Float32",
"BFloat16", "Int64", "Bool", ...: MindSpore's dtype names). The message classes are built at import from a
descriptor (google.protobuf descriptor_pb2 + message_factory): no generated file, no hand-written wire parser.
Loading only decodes protobuf fields into NumPy arrays: no code from the file is ever executed.

`crc_check=True` (MindSpore's CRC32 trailer of a .ckpt, metadata "crc_num" of a .safetensors) and the
`format="safetensors"` files (written and read with the `safetensors` package) are in `_ckpt_formats.py`.
"""
import numbers
import os
import threading
from collections import OrderedDict

import numpy as np
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import DecodeError

from ..ops import _kernels
from . import _ckpt_formats as _fmt
from .. import _atomic_write, _damage
from ..common import dtype as mstype
from ..common.parameter import Parameter
from ..common.tensor import Tensor

__all__ = ["save_checkpoint", "load_checkpoint", "load_param_into_net", "load_checkpoint_async"]
# merge_sliced_parameter, build_searched_strategy, load_distributed_checkpoint: module __getattr__ at the end


def _build_messages():
    """(Checkpoint, TensorProto) message classes of MindSpore's checkpoint.proto, in a private descriptor pool."""
    F = descriptor_pb2.FieldDescriptorProto
    fd = descriptor_pb2.FileDescriptorProto(name="kiln_mindspore_checkpoint.proto", syntax="proto2")
    tp = fd.message_type.add(name="TensorProto")
    tp.field.add(name="dims", number=1, type=F.TYPE_INT64, label=F.LABEL_REPEATED)
    tp.field.add(name="tensor_type", number=2, type=F.TYPE_STRING, label=F.LABEL_REQUIRED)
    tp.field.add(name="tensor_content", number=3, type=F.TYPE_BYTES, label=F.LABEL_REQUIRED)
    ck = fd.message_type.add(name="Checkpoint")
    val = ck.nested_type.add(name="Value")
    val.field.add(name="tag", number=1, type=F.TYPE_STRING, label=F.LABEL_REQUIRED)
    val.field.add(name="tensor", number=2, type=F.TYPE_MESSAGE, type_name=".TensorProto", label=F.LABEL_REQUIRED)
    ck.field.add(name="value", number=1, type=F.TYPE_MESSAGE, type_name=".Checkpoint.Value",
                 label=F.LABEL_REPEATED)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fd)
    return (message_factory.GetMessageClass(pool.FindMessageTypeByName("Checkpoint")),
            message_factory.GetMessageClass(pool.FindMessageTypeByName("TensorProto")))


Checkpoint, TensorProto = _build_messages()

# MindSpore's tensor_type string -> (Kiln dtype, NumPy dtype of the stored bytes; bfloat16 is stored as its uint16 bits)
_TYPES = OrderedDict([
    ("Bool", (mstype.bool_, np.dtype("?"))),
    ("Int8", (mstype.int8, np.dtype("<i1"))),
    ("Int16", (mstype.int16, np.dtype("<i2"))),
    ("Int32", (mstype.int32, np.dtype("<i4"))),
    ("Int64", (mstype.int64, np.dtype("<i8"))),
    ("UInt8", (mstype.uint8, np.dtype("<u1"))),
    ("UInt16", (mstype.uint16, np.dtype("<u2"))),
    ("UInt32", (mstype.uint32, np.dtype("<u4"))),
    ("UInt64", (mstype.uint64, np.dtype("<u8"))),
    ("Float16", (mstype.float16, np.dtype("<f2"))),
    ("BFloat16", (mstype.bfloat16, np.dtype("<u2"))),
    ("Float32", (mstype.float32, np.dtype("<f4"))),
    ("Float64", (mstype.float64, np.dtype("<f8"))),
])
_TYPE_NAME = {kd: name for name, (kd, _) in _TYPES.items()}

_async_threads = []
_async_lock = threading.Lock()


# ------------------------------------------------------------------------------------------------------ encoding
def _stored_array(name, data):
    """(MindSpore type name, C-contiguous little-endian NumPy array of the bytes stored for the Tensor `data`;
    bfloat16 as its uint16 bits)."""
    dt = data.dtype
    type_name = _TYPE_NAME.get(dt)
    if type_name is None:
        raise TypeError(f"For 'save_checkpoint', the dtype {dt} of '{name}' can not be saved.")
    if dt == mstype.bfloat16:  # exact: every bfloat16 is a float32 whose low 16 bits are zero
        arr = (np.ascontiguousarray(_kernels.cast(data, mstype.float32).asnumpy(), "<f4").view("<u4") >> 16)
        arr = arr.astype("<u2")
    else:
        arr = np.ascontiguousarray(data.asnumpy(), _TYPES[type_name][1])
    return type_name, arr.reshape(tuple(data.shape))  # ascontiguousarray makes a 0-d array 1-d


def _tensor_to_proto(name, data, proto):
    """Fills `proto` (a TensorProto) with the Tensor `data`'s dims, type name and little-endian bytes; a str as
    MindSpore stores one: dims [0], tensor_type "str", the text as NumPy's UTF-32-LE ('<U') bytes."""
    if isinstance(data, str):
        proto.dims.append(0)
        proto.tensor_type = "str"
        proto.tensor_content = np.array(data, dtype=np.str_).astype("<U").tobytes()
        return
    type_name, arr = _stored_array(name, data)
    proto.dims.extend(int(d) for d in data.shape)
    proto.tensor_type = type_name
    proto.tensor_content = arr.tobytes()


def _as_tensor(name, value):
    """A Tensor for a save_checkpoint entry: Tensor/Parameter as is, int -> Int64, float -> Float32, bool -> Bool,
    NumPy array -> its dtype; a str stays a str (stored as MindSpore's "str" entry)."""
    if isinstance(value, (Tensor, str)):
        return value
    if isinstance(value, bool):
        return Tensor(value, mstype.bool_)
    if isinstance(value, numbers.Integral):
        return Tensor(int(value), mstype.int64)
    if isinstance(value, numbers.Real):
        return Tensor(float(value), mstype.float32)
    if isinstance(value, (np.ndarray, np.generic)):
        return Tensor(np.asarray(value))
    raise TypeError(f"For 'save_checkpoint', the value of '{name}' must be a Tensor, Parameter, int, float, bool or "
                    f"str, but got {type(value).__name__}.")


def _entries(save_obj, integrated_save=True):
    """[(name, Tensor)] of a Cell, a list of {'name', 'data'} dicts or a dict name -> value. A Parameter sliced by
    operator parallel is gathered whole when integrated_save (a collective), else saved as this process's slice.
    Under pipeline parallel a Cell's Parameters of the other stages are left out (pipeline.params_of_other_stages)."""
    from ..nn.cell import Cell
    if isinstance(save_obj, Cell):
        from ..parallel import _strategy_file
        _strategy_file.flush()  # operator parallel's strategy file, when layouts were added since its last write
        from ..nn.wrap.pipeline import params_of_other_stages
        out, seen = [], set()
        skip = params_of_other_stages(save_obj)  # pipeline: another stage's Parameters (untrained here) are left out
        if integrated_save:  # operator parallel: the gathers below need the same sliced Parameters everywhere
            sliced, names = [], set()
            for _, p in save_obj.parameters_and_names():
                if p.name not in names and p.__dict__.get("_kiln_op_layout") is not None:
                    names.add(p.name)
                    sliced.append(p)
            if sliced:
                from ..parallel import _op_shard
                _op_shard.agree("save_checkpoint", _op_shard.describe_parameters(sliced),
                                "sliced Parameters (operator parallel; integrated_save=True gathers them: every "
                                "process saves the same network)")
        for _, p in save_obj.parameters_and_names():
            if p.name not in seen and id(p) not in skip:  # a Parameter shared between cells is saved once
                seen.add(p.name)
                if getattr(p, "_opt_shard", None) is not None:  # optimizer parallel: gather the slices (collective)
                    from ..nn.optim import _parallel
                    out.append((p.name, _parallel.whole(p)))
                elif integrated_save and p.__dict__.get("_kiln_op_layout") is not None:  # operator parallel
                    from ..parallel import _op_shard
                    out.append((p.name, _op_shard.merge_parameter(p)))
                else:
                    out.append((p.name, p))
        return out
    if isinstance(save_obj, dict):
        return [(str(k), _as_tensor(str(k), v)) for k, v in save_obj.items()]
    if isinstance(save_obj, (list, tuple)):
        out = []
        for item in save_obj:
            if not isinstance(item, dict) or "name" not in item or "data" not in item:
                raise TypeError("For 'save_checkpoint', each element of the list 'save_obj' must be a dict with keys "
                                f"'name' and 'data', but got {item!r}.")
            if not isinstance(item["name"], str):
                raise TypeError("For 'save_checkpoint', the 'name' of each element of the list 'save_obj' must be a "
                                f"str, but got {type(item['name']).__name__}.")
            if not isinstance(item["data"], Tensor):
                raise TypeError(f"For 'save_checkpoint', the 'data' of '{item['name']}' must be a Tensor or "
                                f"Parameter, but got {type(item['data']).__name__}.")
            out.append((item["name"], item["data"]))
        return out
    raise TypeError("For 'save_checkpoint', the argument 'save_obj' must be a Cell, a list of {'name', 'data'} dicts "
                    f"or a dict, but got {type(save_obj).__name__}.")


def _write_atomic(path, payload):
    """Writes `payload` as the file `path` with Kiln's atomic writer (kiln/_atomic_write.py): a crash, a kill
    or an error mid-write leaves the old file or the whole new one, and no temporary file."""
    _atomic_write.write_file(path, payload)


def _wait_async_saves():
    """Waits until every background save started with async_save=True has finished."""
    with _async_lock:
        threads = list(_async_threads)
        _async_threads.clear()
    for t in threads:
        t.join()


_FORMATS = ("ckpt", "safetensors")


def _check_options(api, ckpt_file_name, crc_check, format, unsupported, key_arg=None):
    """The file name as a str, after checking the common options.

    `unsupported` maps a description of an option to whether it was asked for (NotImplementedError: encryption of
    a .ckpt). `key_arg` is (name, value) of enc_key/dec_key: with format="safetensors" a key raises MindSpore's
    ValueError. Raises ValueError (format not "ckpt"/"safetensors"), TypeError (crc_check not a bool, a file
    name that is not a str or os.PathLike)."""
    if not isinstance(format, str) or format not in _FORMATS:
        raise ValueError(f"For '{api}', the format must be 'safetensors' or 'ckpt', but got {format!r}.")
    if not isinstance(crc_check, bool):
        raise TypeError(f"For '{api}', the parameter 'crc_check' must be isinstance of <class 'bool'>, but got "
                        f"{crc_check!r}.")
    if format == "safetensors" and key_arg is not None and key_arg[1] is not None:
        raise ValueError(f"For '{api}', when format is 'safetensors', the parameter '{key_arg[0]}' must be set to "
                         f"default value 'None', but got {key_arg[1]!r}.")
    for what, on in unsupported.items():
        if on:
            raise NotImplementedError(f"For '{api}', {what} is not supported by Kiln.")
    if not isinstance(ckpt_file_name, (str, os.PathLike)):
        raise TypeError(f"For '{api}', the argument 'ckpt_file_name' must be a str, but got "
                        f"{type(ckpt_file_name).__name__}.")
    return os.fspath(ckpt_file_name)


def save_checkpoint(save_obj, ckpt_file_name, integrated_save=True, async_save=False, append_dict=None,
                    enc_key=None, enc_mode="AES-GCM", choice_func=None, crc_check=False, format="ckpt", **kwargs):
    """Saves Parameters/Tensors to a MindSpore .ckpt file (protobuf `Checkpoint`) or, with format="safetensors",
    a .safetensors file as MindSpore 2.10 writes it; MindSpore loads both.

    Args:
        save_obj: a Cell (every Parameter of `parameters_and_names`, under its name: weights, BatchNorm moving
            statistics; an optimizer gives its `learning_rate`, `global_step`, `moments.*`, ...; with optimizer
            parallel the sliced optimizer state is all-gathered first, so every process must save; under pipeline
            parallel only this process's stage's Parameters, as MindSpore's per-rank checkpoints), a list of
            {"name": str, "data": Tensor} dicts, or a dict name -> Tensor/Parameter/int/float/bool/str (str: ckpt only).
        ckpt_file_name (str): the path; "." + format is appended when it does not end with the format's name
            (MindSpore's rule: "net" -> "net.ckpt", "net.safetensors" stays, so does "netckpt").
        integrated_save (bool): for Parameters sliced by operator parallel (Primitive.shard): True (default) saves
            the whole values, gathered from the processes (a collective: every process must save, as MindSpore's
            per-rank checkpoints do); False saves this process's slices. Other Parameters are always whole.
        async_save (bool): the values are captured before returning; the file is written by a background thread.
        append_dict (dict): extra entries name -> int (saved Int64), float (Float32), bool, Tensor or str (saved as
            MindSpore's "str" entry, ckpt format only; load_checkpoint gives it back as a str).
        enc_key, enc_mode: encryption is not supported (NotImplementedError when enc_key is set for a .ckpt;
            ValueError, as in MindSpore, for a .safetensors).
        choice_func (callable): name -> bool; only the names for which it returns True are saved.
        crc_check (bool): store a CRC32 that load_checkpoint(crc_check=True) verifies, as MindSpore does: for a
            .ckpt a trailer b"crc_num" + 10-byte big-endian CRC32 of the protobuf bytes; for a .safetensors the
            metadata "crc_num" (CRC32 chained over the sorted names and their bytes). Default False.
        format (str): "ckpt" (default) or "safetensors". A .safetensors file holds the tensors in sorted name order
            with safetensors dtypes (F32, BF16, I64, BOOL, ...), 0-d entries as shape [], and the header metadata
            {"format": "ms"} (+ "crc_num", + "remove_redundancy").
        remove_redundancy (bool, keyword): only recorded, as "True"/"False" in a .safetensors file's metadata
            (MindSpore's flag for checkpoints of parallel training with duplicated slices removed; a single
            device's checkpoint is always whole). Default None: not recorded.

    The file is written atomically (kiln/_atomic_write.py): a reader, a crash or a kill at any moment sees
    the old file or the whole new one, and no temporary file is left behind.

    Raises:
        TypeError: an unsupported save_obj, entry value or dtype, append_dict not a dict, crc_check or
            remove_redundancy not a bool.
        ValueError: format not "ckpt"/"safetensors"; enc_key with "safetensors"; crc_check=True with a negative
            0-d integer in "safetensors" (MindSpore's CRC is undefined for it); integrated_save with processes
            saving different operator-parallel-sliced Parameters (raised in every process).
        NotImplementedError: enc_key with "ckpt".
    """
    ckpt_file_name = _check_options("save_checkpoint", ckpt_file_name, crc_check, format,
                                    {"encrypted checkpoints (enc_key)": enc_key is not None},
                                    key_arg=("enc_key", enc_key))
    remove_redundancy = kwargs.get("remove_redundancy")
    if remove_redundancy is not None and not isinstance(remove_redundancy, bool):
        raise TypeError("For 'save_checkpoint', the parameter 'remove_redundancy' must be None or a bool, but got "
                        f"{remove_redundancy!r}.")
    if os.path.isdir(ckpt_file_name):
        raise IsADirectoryError(f"For 'save_checkpoint', the argument 'ckpt_file_name' {ckpt_file_name} is a "
                                "directory, it must be a file name.")
    if not ckpt_file_name.endswith(format):
        ckpt_file_name += "." + format
    if os.path.isdir(ckpt_file_name):
        raise IsADirectoryError(f"For 'save_checkpoint', {ckpt_file_name} is a directory, it must be a file name.")
    if not isinstance(async_save, bool) and async_save not in ("process", "thread"):
        raise ValueError("For 'save_checkpoint', the argument 'async_save' must be a bool, 'process' or 'thread', "
                         f"but got {async_save!r}.")
    if choice_func is not None and not callable(choice_func):
        raise TypeError("For 'save_checkpoint', the argument 'choice_func' must be callable.")
    entries = _entries(save_obj, integrated_save)
    if append_dict is not None:
        if not isinstance(append_dict, dict):
            raise TypeError("For 'save_checkpoint', the argument 'append_dict' must be a dict, but got "
                            f"{type(append_dict).__name__}.")
        entries += [(str(k), _as_tensor(str(k), v)) for k, v in append_dict.items()]
    if choice_func is not None:
        entries = [(name, data) for name, data in entries if choice_func(name)]
    # The values are captured in `payload` here, also for async_save.
    if format == "safetensors":
        for name, data in entries:
            if isinstance(data, str):
                raise TypeError(f"For 'save_checkpoint', the str value of '{name}' can only be saved in the 'ckpt' "
                                "format (safetensors holds tensors only).")
        payload = _fmt.safetensors_payload([(name, *_stored_array(name, data)) for name, data in entries],
                                           crc_check, remove_redundancy)
    else:
        msg = Checkpoint()
        for name, data in entries:
            value = msg.value.add()
            value.tag = name
            _tensor_to_proto(name, data, value.tensor)
        payload = msg.SerializeToString()
        if crc_check:
            payload = _fmt.append_crc(payload)
    if not async_save:
        _write_atomic(ckpt_file_name, payload)
        return
    _wait_async_saves()  # one background save at a time, like MindSpore
    thread = threading.Thread(target=_write_atomic, args=(ckpt_file_name, payload), name="kiln-async-save")
    with _async_lock:
        _async_threads.append(thread)
    thread.start()


# ------------------------------------------------------------------------------------------------------ decoding
_read_error = _fmt.read_error


def _proto_to_tensor(path, value):
    """The Tensor of a Checkpoint.Value; ValueError naming the file and the parameter if it is malformed."""
    tp = value.tensor
    if tp.tensor_type == "str":  # MindSpore's str entry (append_dict): NumPy '<U' bytes, 4 per character
        if len(tp.tensor_content) % 4:
            raise _read_error(path, f"The str entry '{value.tag}' has {len(tp.tensor_content)} bytes, not a multiple "
                                    "of 4 (UTF-32).")
        if not tp.tensor_content:
            return ""
        try:
            return str(np.frombuffer(tp.tensor_content, dtype=f"<U{len(tp.tensor_content) // 4}")[0])
        except ValueError as e:
            raise _read_error(path, f"The str entry '{value.tag}' is not valid UTF-32 ({e}).") from None
    entry = _TYPES.get(tp.tensor_type)
    if entry is None:
        raise _read_error(path, f"The parameter '{value.tag}' has the unsupported tensor_type {tp.tensor_type!r}.")
    kdtype, npdtype = entry
    dims = [int(d) for d in tp.dims]
    if any(d < 0 for d in dims):
        raise _read_error(path, f"The parameter '{value.tag}' has a negative dimension in {dims}.")
    count = int(np.prod(dims, dtype=np.int64)) if dims else 1
    if len(tp.tensor_content) != count * npdtype.itemsize:
        raise _read_error(path, f"The parameter '{value.tag}' of shape {dims} and type {tp.tensor_type} needs "
                                f"{count * npdtype.itemsize} bytes, but has {len(tp.tensor_content)}.")
    return _stored_to_tensor(np.frombuffer(tp.tensor_content, dtype=npdtype).reshape(dims), kdtype)


def _stored_to_tensor(arr, kdtype):
    """The Tensor of dtype `kdtype` whose stored little-endian values are the NumPy array `arr` (bfloat16: the
    uint16 bits). The values are copied: the Tensor never aliases the file's buffer."""
    if kdtype == mstype.bfloat16:
        f32 = np.left_shift(arr.astype("<u4"), np.uint32(16)).view("<f4").reshape(arr.shape)  # exact widening
        return _kernels.cast(Tensor(f32.astype(np.float32)), mstype.bfloat16)
    return Tensor(arr.astype(arr.dtype.newbyteorder("="), copy=True))


def _prefixes(arg, what):
    if arg is None:
        return None
    items = [arg] if isinstance(arg, str) else list(arg) if isinstance(arg, (list, tuple)) else None
    if items is None or not items or not all(isinstance(s, str) and s for s in items):
        raise TypeError(f"For 'load_checkpoint', the argument '{what}' must be a non-empty str or a list/tuple of "
                        f"non-empty str, but got {arg!r}.")
    return tuple(items)


def load_checkpoint(ckpt_file_name, net=None, strict_load=False, filter_prefix=None, dec_key=None, dec_mode="AES-GCM",
                    specify_prefix=None, choice_func=None, crc_check=False, remove_redundancy=False, format="ckpt"):
    """Loads a MindSpore .ckpt file (or, with format="safetensors", a .safetensors file) into a dict
    name -> Parameter; with `net`, also loads it into the net (load_param_into_net).

    The dict is in file order for a .ckpt and in sorted name order for a .safetensors (MindSpore's orders); each
    Parameter is named by its key.

    Args:
        ckpt_file_name (str): the file; it must end with the format's name ("ckpt" or "safetensors").
        net (Cell): if given, the parameters are loaded into it.
        strict_load (bool): passed to load_param_into_net.
        filter_prefix (str or list of str): names starting with one of these are not loaded.
        specify_prefix (str or list of str): only names starting with one of these are loaded.
        choice_func (callable): name -> bool; only the names for which it returns True are loaded.
        dec_key: decryption is not supported (NotImplementedError for a .ckpt; ValueError, as in MindSpore, for a
            .safetensors).
        crc_check (bool): verify the CRC32 save_checkpoint(crc_check=True) stored (MindSpore's, see
            save_checkpoint): a mismatch raises ValueError; a file without CRC loads with a warning (logger
            "kiln.train"). A .ckpt's CRC trailer is skipped when crc_check is False. Default False.
        remove_redundancy (bool): MindSpore's flag for checkpoints of parallel training with duplicated slices
            removed. A .safetensors file's metadata "remove_redundancy" overrides it (with a warning when they
            differ). Without `net` it has no effect; with `net` and True, load_param_into_net raises TypeError
            (single device). Default False.
        format (str): "ckpt" (default) or "safetensors".

    Raises:
        ValueError: the file does not exist (also a FileNotFoundError), does not end with the format's name, or
            cannot be decoded (truncated, corrupt, unknown tensor type, size mismatch), a CRC mismatch — the
            message names the file; both filter_prefix and specify_prefix set; nothing left after the filters;
            format not "ckpt"/"safetensors".
        TypeError: bad argument types; remove_redundancy in effect with `net` (see above).
    """
    path = _check_options("load_checkpoint", ckpt_file_name, crc_check, format,
                          {"encrypted checkpoints (dec_key)": dec_key is not None}, key_arg=("dec_key", dec_key))
    if not isinstance(remove_redundancy, bool):
        raise TypeError("For 'load_checkpoint', the parameter 'remove_redundancy' must be isinstance of "
                        f"<class 'bool'>, but got {remove_redundancy!r}.")
    if not path.endswith(format):
        raise ValueError(f"For 'load_checkpoint', the checkpoint file should end with '.{format}' (the format is "
                         f"{format!r}), please input the correct 'ckpt_file_name' or 'format', but got {path}.")
    filters = _prefixes(filter_prefix, "filter_prefix")
    specify = _prefixes(specify_prefix, "specify_prefix")
    if filters and specify:
        raise ValueError("For 'load_checkpoint', 'filter_prefix' and 'specify_prefix' can not be set at the same time.")
    if choice_func is not None and not callable(choice_func):
        raise TypeError("For 'load_checkpoint', the argument 'choice_func' must be callable.")
    _wait_async_saves()
    if not os.path.isfile(path):
        raise CheckpointNotFoundError(f"For 'load_checkpoint', the checkpoint file {path} does not exist, please check "
                                      "whether the 'ckpt_file_name' is correct.")
    with open(path, "rb") as f:
        data = f.read()
    if not data:
        raise _read_error(path, "The file is empty.")

    def wanted(name):
        if filters and name.startswith(filters):
            return False
        if specify and not name.startswith(specify):
            return False
        if choice_func is None:
            return True
        try:
            return bool(choice_func(name))
        except Exception as e:
            raise _CallerError() from e

    try:
        out, remove_redundancy = _decode(path, data, format, crc_check, wanted, remove_redundancy)
    except _CallerError as e:  # the caller's choice_func failed: its own error, not a damaged file
        raise e.__cause__ from None
    except _fmt.CheckpointReadError:  # the decoders' own error names the file already: unchanged, not wrapped again
        raise
    except _DAMAGE as e:  # whatever else the damage raises: the same ValueError naming the file
        raise _read_error(path, f"Decoding it failed ({type(e).__name__}: {e}).") from None
    if not out and (filters or specify or choice_func is not None):
        raise ValueError(f"For 'load_checkpoint', the loaded parameter dict of {path} is empty after filter or "
                         "specify (filter_prefix, specify_prefix, choice_func).")
    if net is not None:
        load_param_into_net(net, out, strict_load=strict_load, remove_redundancy=remove_redundancy)
    return out


# What decoding a damaged file can raise beyond the ValueErrors the decoders raise themselves (bad UTF-8 is a
# ValueError too): load_checkpoint turns each into read_error's ValueError naming the file
# (docs/decisions/damaged-files.md).
_DAMAGE = _damage.DECODE_ERRORS + (RuntimeError,)


class _CallerError(Exception):
    """Carries (as __cause__) an exception of the caller's choice_func out of _decode, so that it is not taken for
    damage."""


def _decode(path, data, format, crc_check, wanted, remove_redundancy):
    """(dict name -> Parameter (or str), remove_redundancy) of the content `data` of the checkpoint `path`."""
    out = OrderedDict()
    if format == "safetensors":
        entries, metadata = _fmt.read_safetensors(path, data, crc_check)
        if not entries:
            raise _read_error(path, "It holds no tensors.")
        for name, type_name, _, arr in entries:
            if wanted(name):
                out[name] = Parameter(_stored_to_tensor(arr, _TYPES[type_name][0]), name=name)
        remove_redundancy = _fmt.file_remove_redundancy(metadata, remove_redundancy)
    else:
        body = _fmt.split_crc(path, data, crc_check)
        try:
            msgs = _checkpoint_messages(body)
        except (DecodeError, RuntimeError, ValueError) as e:
            raise _read_error(path, f"Protobuf decoding failed ({e}).") from None
        for msg in msgs:
            bad = _damage.non_text_string(msg)
            if bad is not None:
                raise _read_error(path, f"Its field {bad} is not UTF-8 text.")
        if not any(msg.value for msg in msgs):
            raise _read_error(path, "It holds no parameters.")
        for msg in msgs:
            for value in msg.value:
                if wanted(value.tag):
                    data = _proto_to_tensor(path, value)
                    out[value.tag] = data if isinstance(data, str) else Parameter(data, name=value.tag)
    return out, remove_redundancy


# Protobuf refuses to parse a serialized message of 2 GiB or more, and MindSpore writes the checkpoint of a large
# model (mindcv's mae_h_14_224_finetune: 632M float32 parameters, 2.5 GB) as one Checkpoint message whose
# parameters are its top-level `value` records (field 1, length-delimited). A body over the limit is therefore
# decoded a group of whole records at a time (each group parsed as a Checkpoint of its own; a record alone is one
# parameter, under the limit unless one tensor is 2 GiB).
_PROTOBUF_LIMIT = (1 << 31) - 1
_RECORD_GROUP_BYTES = 1 << 30


def _varint(buf, pos):
    """(value, position after it) of the protobuf varint at buf[pos]; ValueError if it is cut off or too long."""
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise ValueError(f"the file ends inside a field header at byte {pos}")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise ValueError(f"a field header longer than 10 bytes at byte {pos}")


def _checkpoint_messages(body):
    """The Checkpoint message(s) of a checkpoint's protobuf `body`: one, or for a body over protobuf's 2 GiB limit,
    one per group of whole top-level records. Raises DecodeError or ValueError on damage (the caller names the
    file)."""
    if len(body) <= _PROTOBUF_LIMIT:
        msg = Checkpoint()
        msg.ParseFromString(body)
        return [msg]
    view = memoryview(body)
    msgs, start, pos, n = [], 0, 0, len(body)
    while pos < n:
        at = pos
        key, pos = _varint(view, pos)
        if key & 7 != 2:
            raise ValueError(f"a top-level field of wire type {key & 7} at byte {at} (a checkpoint holds only "
                             f"length-delimited records)")
        length, pos = _varint(view, pos)
        pos += length
        if pos > n:
            raise ValueError(f"the record at byte {at} runs {pos - n} bytes past the end of the file")
        if pos - start >= _RECORD_GROUP_BYTES or pos == n:
            msg = Checkpoint()
            msg.ParseFromString(bytes(view[start:pos]))
            msgs.append(msg)
            start = pos
    return msgs


class _ParamDictFuture:
    """What load_checkpoint_async returns: `result(timeout=None)` waits for the load and returns its dict, or
    raises its exception (concurrent.futures.TimeoutError when `timeout` seconds pass first)."""

    def __init__(self, future):
        self._future = future

    def result(self, timeout=None):
        return self._future.result(timeout)

    def done(self):
        """True once the load has finished (successfully or not)."""
        return self._future.done()


def load_checkpoint_async(ckpt_file_name, net=None, strict_load=False, filter_prefix=None, dec_key=None,
                          dec_mode="AES-GCM", specify_prefix=None, choice_func=None):
    """Starts load_checkpoint on a background thread and returns at once (MindSpore's load_checkpoint_async).

    The format follows the file name, as in MindSpore 2.10: "safetensors" when it ends with ".safetensors", else
    "ckpt". The other arguments are load_checkpoint's. Returns an object whose `result(timeout=None)` returns
    load_checkpoint's dict or raises its exception (bad arguments and bad files alike surface there). The thread
    ends when the load does: nothing is left running when `result` is never called.
    """
    import concurrent.futures
    path = ckpt_file_name
    fmt = "safetensors" if isinstance(path, (str, os.PathLike)) and os.fspath(path).endswith(".safetensors") \
        else "ckpt"
    future = concurrent.futures.Future()

    def run():
        if not future.set_running_or_notify_cancel():
            return
        try:
            out = load_checkpoint(path, net, strict_load, filter_prefix, dec_key, dec_mode, specify_prefix,
                                  choice_func, format=fmt)
        except BaseException as e:  # noqa: BLE001 (delivered by result())
            future.set_exception(e)
        else:
            future.set_result(out)

    threading.Thread(target=run, name="kiln-load-checkpoint-async", daemon=True).start()
    return _ParamDictFuture(future)


class CheckpointNotFoundError(ValueError, FileNotFoundError):
    """A checkpoint file that does not exist: a ValueError (as MindSpore raises) and a FileNotFoundError."""


_FLOATS = (mstype.float16, mstype.bfloat16, mstype.float32, mstype.float64)
_INTS = (mstype.int8, mstype.int16, mstype.int32, mstype.int64, mstype.uint8, mstype.uint16, mstype.uint32,
         mstype.uint64)


class _ShapeMismatch(ValueError, RuntimeError):
    """A checkpoint value whose shape differs from the Parameter's: a ValueError, and the RuntimeError MindSpore
    raises (code written for MindSpore catches RuntimeError)."""


class _TypeMismatch(TypeError, RuntimeError):
    """A checkpoint value whose dtype cannot be loaded into the Parameter: a TypeError, and MindSpore's RuntimeError."""


def load_param_into_net(net, parameter_dict, strict_load=False, remove_redundancy=False):
    """Copies the values of `parameter_dict` (name -> Parameter/Tensor, e.g. from load_checkpoint) into the
    Parameters of `net` with the same names (Parameter.name). Returns (param_not_load, ckpt_not_load): the names of
    the net's Parameters that got no value, and the dict's names that were not loaded under their own name.

    As MindSpore 2.10 (mindspore/train/serialization.py):
    - strict_load=False: Parameters left over are tried again under a prefix: the first dict name that ends with
      the name of a Parameter not loaded gives the prefix (dict name minus that name, e.g. 'network.'), and every
      Parameter not loaded whose prefix + name is in the dict is loaded from it (a warning names the prefix); this
      repeats while new prefixes are found. Names loaded this way stay in ckpt_not_load, as MindSpore returns them.
    - Any Parameter still not loaded is reported by two warnings (the count, then the list of names) through
      kiln.log, MindSpore's messages; strict_load=True does NOT raise for them (MindSpore 2.10 does not either): it
      only turns off the prefix retry and the dtype conversion. Parameters named 'accu_grads...' are not reported.

    A dtype difference is cast (float to float, int to int) unless strict_load=True; other dtype differences raise.
    remove_redundancy (bool, default False): MindSpore's loading of a checkpoint whose duplicated slices were
    removed in parallel training; Kiln runs in a single process, where MindSpore 2.10 raises TypeError for True:
    so does Kiln, before changing any Parameter.

    Raises:
        TypeError: net not a Cell, parameter_dict not a dict, a value not a Tensor, or a dtype that cannot be
            converted (naming the parameter and both dtypes); remove_redundancy=True or not a bool.
        ValueError: a shape differs (naming the parameter and both shapes).
    """
    from ..nn.cell import Cell
    if not isinstance(net, Cell):
        raise TypeError("For 'load_param_into_net', the argument 'net' should be a Cell, but got "
                        f"{type(net).__name__}.")
    if not isinstance(parameter_dict, dict):
        raise TypeError("For 'load_param_into_net', the argument 'parameter_dict' should be a dict, but got "
                        f"{type(parameter_dict).__name__}.")
    if not isinstance(strict_load, bool):
        raise TypeError("For 'load_param_into_net', the argument 'strict_load' must be a bool, but got "
                        f"{type(strict_load).__name__}.")
    if not isinstance(remove_redundancy, bool):
        raise TypeError("For 'load_param_into_net', the parameter 'remove_redundancy' must be isinstance of "
                        f"<class 'bool'>, but got {remove_redundancy!r}.")
    if remove_redundancy:  # MindSpore 2.10 raises the same in a single process (get_group_size() == 1)
        raise TypeError("For 'load_param_into_net', the deduplication feature for loading checkpoint "
                        "(remove_redundancy=True) can only be used in parallel scenarios, but got stand_alone.")
    params = list(net.get_parameters())
    pairs, param_not_load = [], []  # (Parameter, the dict name its value comes from)
    for param in params:
        if param.name in parameter_dict:
            pairs.append((param, param.name))
        elif not param.name.startswith("accu_grads"):
            param_not_load.append(param.name)
    loaded_by_name = {name for _, name in pairs}
    if param_not_load and not strict_load:
        pairs += _load_under_prefix(params, parameter_dict, param_not_load)
    updates = []
    for param, key in pairs:
        name = param.name
        new = parameter_dict[key]
        if not isinstance(new, Tensor):
            raise TypeError(f"For 'load_param_into_net', the value of '{name}' in 'parameter_dict' must be a "
                            f"Parameter or Tensor, but got {type(new).__name__}.")
        shard = getattr(param, "_opt_shard", None)
        if shard is not None and tuple(new.shape) == shard.full_shape:  # optimizer parallel: this process's slice
            new = shard.take(new)
        op_layout = param.__dict__.get("_kiln_op_layout")
        if op_layout is not None and tuple(new.shape) == op_layout.full_shape:  # operator parallel: the slice
            from ..parallel import _op_shard
            new = _op_shard.take_slice(param, new)
        if tuple(new.shape) != tuple(param.shape):
            raise _ShapeMismatch(f"For 'load_param_into_net', {name} in the argument 'net' should have the same shape as "
                             f"{name} in the argument 'parameter_dict'. But got its shape {tuple(param.shape)} in the "
                             f"argument 'net' and shape {tuple(new.shape)} in the argument 'parameter_dict'.")
        if new.dtype != param.dtype:
            same_kind = ((param.dtype in _FLOATS and new.dtype in _FLOATS)
                         or (param.dtype in _INTS and new.dtype in _INTS))
            if strict_load or not same_kind:
                raise _TypeMismatch(f"For 'load_param_into_net', {name} {param.dtype} in the argument 'net' should have "
                                f"the same type as {name} {new.dtype} in the argument 'parameter_dict'.")
            from .. import log as _log
            _log.warning("The type of %s:%s in 'parameter_dict' is different from the type of it in 'net':%s, then "
                         "the type convert from %s to %s in the network. May consume additional memory and time",
                         name, new.dtype, param.dtype, new.dtype, param.dtype)
            new = _kernels.cast(new, param.dtype)
        updates.append((param, new))
    for param, new in updates:  # all checks passed: nothing is half loaded on an error
        _kernels.assign(param, new)
    ckpt_not_load = [name for name in parameter_dict if name not in loaded_by_name]
    if param_not_load:
        from .. import log as _log
        _log.warning("For 'load_param_into_net', %d parameters in the 'net' are not loaded, because they are not in "
                     "the 'parameter_dict', please check whether the network structure is consistent when training "
                     "and loading checkpoint.", len(param_not_load))
        _log.warning("%s are not loaded.", param_not_load)
    return param_not_load, ckpt_not_load


def _load_under_prefix(params, parameter_dict, param_not_load):
    """MindSpore 2.10's retry for the Parameters a non-strict load_param_into_net did not find by name: the first
    dict name ending with a missing name gives a prefix; every missing Parameter found as prefix + name is taken
    (and removed from param_not_load, in place); repeated until no new prefix is found. Returns the (Parameter,
    dict name) pairs."""
    from .. import log as _log
    pairs = []
    while param_not_load:
        prefix = None
        for missing in param_not_load:
            prefix = next((k[:-len(missing)] for k in parameter_dict if k.endswith(missing)), None)
            if prefix is not None:
                break
        if prefix is None:
            break
        _log.warning("For 'load_param_into_net', remove parameter prefix name: %s, continue to load.", prefix)
        for param in params:
            if param.name in param_not_load and prefix + param.name in parameter_dict:
                pairs.append((param, prefix + param.name))
                param_not_load.remove(param.name)
    return pairs


from ._export_load import export, load  # noqa: E402,F401  (mindspore.train.serialization.export / load)


def __getattr__(name):
    """merge_sliced_parameter, build_searched_strategy, load_distributed_checkpoint: MindSpore keeps them in this
    module too; they live in kiln/parallel/checkpoint_transform.py (imported on first use: kiln.parallel imports
    this module's package)."""
    if name in ("merge_sliced_parameter", "build_searched_strategy", "load_distributed_checkpoint"):
        from ..parallel import checkpoint_transform
        return getattr(checkpoint_transform, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
