"""The parts of MindSpore 2.10's checkpoint files beyond the plain .ckpt protobuf: the CRC32 trailer of a .ckpt
file and the .safetensors format (read and written with the `safetensors` package, never a hand-written parser).

CRC (MindSpore's `crc_check=True`, checked against MindSpore 2.10's `mindspore/train/serialization.py` and files
it wrote):
  - .ckpt: the checkpoint is written as it is without CRC, then `b"crc_num"` + the CRC-32 (zlib/binascii
    polynomial) of all the bytes before it, as a 10-byte big-endian unsigned integer. Loading strips such a 17-byte
    trailer whenever `data[-17:-10] == b"crc_num"` (also with crc_check=False, so a file with CRC always loads);
    with crc_check=True a file without the trailer only logs a warning, a mismatch raises ValueError.
  - .safetensors: the CRC-32 is chained over the tensors in sorted name order, each contributing its UTF-8 name
    then `bytes(array)`; it is stored as the decimal string `metadata["crc_num"]`. `bytes(array)` is the raw
    C-order buffer except for a 0-d integer array, for which Python's `bytes(n)` rule gives n zero bytes (NumPy's
    0-d integer arrays are indices): MindSpore's CRC of `{"epoch": 3}` covers b"\\0\\0\\0". Kiln computes the same
    value explicitly (without allocating the zeros) so its files pass MindSpore's check and vice versa; a negative
    0-d integer has no such value (MindSpore's own save raises ValueError "negative count") and is refused.

.safetensors as MindSpore 2.10 writes it: the tensors in sorted name order, safetensors dtype codes
(F16/BF16/F32/F64/I8.../U64/BOOL), header metadata `{"format": "ms"}` plus `"crc_num"` (crc_check=True) and
`"remove_redundancy": "True"/"False"` (when save_checkpoint gets a bool remove_redundancy); a file with no tensor
gets no metadata at all.
"""
import binascii
import logging
from collections import OrderedDict

import numpy as np

_logger = logging.getLogger("kiln.train")

CRC_TAG = b"crc_num"
_CRC_TRAILER = len(CRC_TAG) + 10
_ZEROS = bytes(1 << 16)

# safetensors dtype code -> (MindSpore tensor_type name used by serialization._TYPES, NumPy dtype of the stored bytes)
SAFETENSORS_TYPES = OrderedDict([
    ("BOOL", ("Bool", np.dtype("?"))),
    ("I8", ("Int8", np.dtype("<i1"))),
    ("I16", ("Int16", np.dtype("<i2"))),
    ("I32", ("Int32", np.dtype("<i4"))),
    ("I64", ("Int64", np.dtype("<i8"))),
    ("U8", ("UInt8", np.dtype("<u1"))),
    ("U16", ("UInt16", np.dtype("<u2"))),
    ("U32", ("UInt32", np.dtype("<u4"))),
    ("U64", ("UInt64", np.dtype("<u8"))),
    ("F16", ("Float16", np.dtype("<f2"))),
    ("BF16", ("BFloat16", np.dtype("<u2"))),
    ("F32", ("Float32", np.dtype("<f4"))),
    ("F64", ("Float64", np.dtype("<f8"))),
])
_SPEC_NAME = {"Bool": "bool", "Int8": "int8", "Int16": "int16", "Int32": "int32", "Int64": "int64",
              "UInt8": "uint8", "UInt16": "uint16", "UInt32": "uint32", "UInt64": "uint64", "Float16": "float16",
              "BFloat16": "bfloat16", "Float32": "float32", "Float64": "float64"}
_META_KEYS = ("format", "crc_num", "remove_redundancy")


def _safetensors(api):
    """The safetensors package (>= 0.8: TensorSpec), imported on first use: only format="safetensors" needs it."""
    try:
        import safetensors
        safetensors.TensorSpec  # noqa: B018 (AttributeError below 0.8)
    except (ImportError, AttributeError):
        raise ImportError(f"For '{api}', format='safetensors' needs the safetensors package, version 0.8 or later "
                          "(pip install 'safetensors>=0.8').") from None
    return safetensors


# ------------------------------------------------------------------------------------------------------ CRC
def append_crc(payload):
    """`payload` followed by MindSpore's .ckpt CRC trailer: b"crc_num" + crc32(payload) as 10 big-endian bytes."""
    return payload + CRC_TAG + binascii.crc32(payload).to_bytes(10, byteorder="big")


def split_crc(path, data, crc_check):
    """The protobuf bytes of a .ckpt file's content `data`, without its CRC trailer if it has one.

    With crc_check=True: a file without trailer logs a warning (MindSpore does the same) and a stored CRC that
    differs from the CRC-32 of the bytes before it raises ValueError naming the file."""
    has_crc = len(data) >= _CRC_TRAILER and data[-_CRC_TRAILER:-10] == CRC_TAG
    if not has_crc:
        if crc_check:
            _logger.warning("For 'load_checkpoint', the ckpt file %s does not contain the crc code, please check "
                            "the file.", path)
        return data
    body = data[:-_CRC_TRAILER]
    if crc_check:
        stored = int.from_bytes(data[-10:], byteorder="big")
        computed = binascii.crc32(body)
        if stored != computed:
            raise CheckpointReadError(f"For 'load_checkpoint', the crc check is failed for the checkpoint file {path}: the "
                             f"file stores CRC32 {stored} but its content gives {computed}. Please check whether "
                             "the ckpt file is damaged.")
    return body


def _crc_update(crc, name, arr, is_bf16):
    """MindSpore's safetensors CRC step: crc32(name) then crc32(bytes(arr)), chained from `crc`."""
    crc = binascii.crc32(name.encode("utf-8"), crc)
    if arr.ndim == 0 and arr.dtype.kind in "iu" and not is_bf16:  # bytes(0-d int array) == bytes(int(value))
        n = int(arr)
        if n < 0:
            raise ValueError(f"For 'save_checkpoint' with crc_check=True, the 0-d integer '{name}' is {n}: "
                             "MindSpore's safetensors CRC covers bytes(value), which is undefined for a negative "
                             "value (MindSpore itself raises 'negative count'). Save it as a 1-d tensor or without "
                             "crc_check.")
        while n > 0:
            step = min(n, len(_ZEROS))
            crc = binascii.crc32(_ZEROS[:step], crc)
            n -= step
        return crc
    return binascii.crc32(np.ascontiguousarray(arr).tobytes(), crc)


# ------------------------------------------------------------------------------------------------------ write
def safetensors_payload(arrays, crc_check, remove_redundancy):
    """The bytes of a .safetensors file as MindSpore writes it.

    Args:
        arrays: list of (name, MindSpore type name, C-contiguous little-endian NumPy array of the stored bytes;
            bfloat16 as its uint16 bits). A repeated name keeps its last value (MindSpore keys them in a dict).
        crc_check (bool): store metadata["crc_num"].
        remove_redundancy (bool or None): store metadata["remove_redundancy"] = "True"/"False" when a bool.
    """
    safetensors = _safetensors("save_checkpoint")
    latest = OrderedDict()
    for name, type_name, arr in arrays:
        latest[name] = (type_name, arr)
    meta = {"format": "ms"}
    if isinstance(remove_redundancy, bool):
        meta["remove_redundancy"] = str(remove_redundancy)
    specs, crc = {}, 0
    for name in sorted(latest):
        type_name, arr = latest[name]
        specs[name] = safetensors.TensorSpec(dtype=_SPEC_NAME[type_name], shape=list(arr.shape),
                                             data_ptr=arr.ctypes.data, data_len=arr.nbytes)
        if crc_check:
            crc = _crc_update(crc, name, arr, type_name == "BFloat16")
    if crc_check:
        meta["crc_num"] = str(crc)
    # `latest` keeps every array alive while serialize reads the pointers.
    payload = safetensors.serialize(specs, metadata=meta if specs else None)
    del latest
    return bytes(payload)


# ------------------------------------------------------------------------------------------------------ read
class CheckpointReadError(ValueError):
    """The documented ValueError of load_checkpoint for a damaged checkpoint file, naming the file. Its boundary lets
    it pass unchanged (it already says everything) and wraps only what decoding raised otherwise."""


def read_error(path, why):
    """The ValueError for a checkpoint file that cannot be read (names the file)."""
    return CheckpointReadError(f"Failed to read the checkpoint file {path}. {why} It may be truncated, corrupt or not a "
                      "MindSpore checkpoint.")


def read_safetensors(path, data, crc_check):
    """Decodes the content `data` of the .safetensors file `path` with the safetensors package.

    Returns (entries, metadata): entries is a list of (name, MindSpore type name, shape list, NumPy array of the
    stored bytes; bfloat16 as uint16 bits) in sorted name order; metadata is the header's dict (or {}).
    With crc_check=True the CRC over all tensors is compared with metadata["crc_num"] (ValueError on a mismatch,
    a warning when the file has none).

    Raises:
        ValueError: not a valid safetensors file (the safetensors package's message is included), a dtype Kiln
            cannot hold, a CRC mismatch; each message names the file (and the tensor where one is at fault).
    """
    safetensors = _safetensors("load_checkpoint")
    try:
        tensors = safetensors.deserialize(data)
        with safetensors.safe_open(path, framework="numpy") as f:
            metadata = dict(f.metadata() or {})
    except (safetensors.SafetensorError, OSError, ValueError) as e:
        raise read_error(path, f"The safetensors package could not parse it ({e}).") from None
    entries, crc = [], 0
    for name, info in sorted(tensors, key=lambda item: item[0]):
        code = info["dtype"]
        entry = SAFETENSORS_TYPES.get(code)
        if entry is None or (name not in _META_KEYS and name in metadata):
            what = code if entry is None else f"{code} marked {metadata[name]!r} in the metadata"
            raise read_error(path, f"The tensor '{name}' has the dtype {what}, which Kiln cannot load.")
        type_name, npdtype = entry
        shape = [int(d) for d in info["shape"]]
        arr = np.frombuffer(info["data"], dtype=npdtype).reshape(shape)
        if crc_check:
            crc = _crc_update(crc, name, arr, type_name == "BFloat16")
        entries.append((name, type_name, shape, arr))
    if crc_check:
        if "crc_num" not in metadata:
            _logger.warning("For 'load_checkpoint', the safetensors file %s does not contain the crc code, please "
                            "check the file.", path)
        elif _stored_crc(path, metadata["crc_num"]) != crc:
            raise CheckpointReadError(f"For 'load_checkpoint', the crc check has failed for the checkpoint file {path}: the "
                             f"file stores CRC32 {metadata['crc_num']} but its content gives {crc}. Please check "
                             "whether the ckpt file is damaged.")
    return entries, metadata


def _stored_crc(path, text):
    try:
        return int(text)
    except ValueError:
        raise read_error(path, f"Its metadata 'crc_num' {text!r} is not an integer.") from None


def file_remove_redundancy(metadata, remove_redundancy):
    """MindSpore's rule: a safetensors file's metadata "remove_redundancy" overrides the argument (with a
    warning when they differ)."""
    flag = metadata.get("remove_redundancy")
    if flag == "True" and not remove_redundancy:
        _logger.warning("For 'load_checkpoint', the safetensors file is deduplicated, but remove_redundancy is set "
                        "to False.")
        return True
    if flag == "False" and remove_redundancy:
        _logger.warning("For 'load_checkpoint', the safetensors file is non-deduplicated, but remove_redundancy is "
                        "set to True.")
        return False
    return remove_redundancy
