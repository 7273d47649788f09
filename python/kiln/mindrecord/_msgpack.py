"""The part of MessagePack (https://github.com/msgpack/msgpack/blob/master/spec.md) that MindRecord's raw pages
use: one map per row from field name to int, float or str (MindSpore writes it with nlohmann::json::to_msgpack).

Encoding follows nlohmann's choices byte for byte, so that a row Kiln writes is the row MindSpore would write:
non-negative ints take the smallest unsigned form (positive fixint, uint8..uint64), negative ints the smallest
signed form; a float is float32 when it is finite and converts to float32 and back unchanged, else float64;
str takes fixstr, str8, str16 or str32; maps fixmap, map16 or map32 with keys in sorted order (nlohmann's
std::map).
Decoding accepts every MessagePack type except ext/timestamps (a MindRecord row never holds them).

The msgpack package is not installed in Kiln's environment; this subset is about a hundred lines and is tested
against bytes MindSpore 2.10 wrote (tests/python/test_mindrecord.py)."""
import math
import struct

_F32 = struct.Struct(">f")


def _int(v, out):
    if v >= 0:
        if v < 0x80:
            out.append(v)
        elif v <= 0xFF:
            out += b"\xcc" + v.to_bytes(1, "big")
        elif v <= 0xFFFF:
            out += b"\xcd" + v.to_bytes(2, "big")
        elif v <= 0xFFFFFFFF:
            out += b"\xce" + v.to_bytes(4, "big")
        elif v <= 0xFFFFFFFFFFFFFFFF:
            out += b"\xcf" + v.to_bytes(8, "big")
        else:
            raise OverflowError(f"msgpack: the int {v} does not fit in 64 bits.")
    elif v >= -32:
        out += v.to_bytes(1, "big", signed=True)
    elif v >= -0x80:
        out += b"\xd0" + v.to_bytes(1, "big", signed=True)
    elif v >= -0x8000:
        out += b"\xd1" + v.to_bytes(2, "big", signed=True)
    elif v >= -0x80000000:
        out += b"\xd2" + v.to_bytes(4, "big", signed=True)
    elif v >= -0x8000000000000000:
        out += b"\xd3" + v.to_bytes(8, "big", signed=True)
    else:
        raise OverflowError(f"msgpack: the int {v} does not fit in 64 bits.")


def _sized(n, small_tag, small_max, tags, out):
    """A length header: fix form (small_tag | n) when n <= small_max, else 8/16/32-bit forms from `tags`."""
    if n <= small_max:
        out.append(small_tag | n)
    elif tags[0] is not None and n <= 0xFF:
        out += bytes([tags[0], n])
    elif n <= 0xFFFF:
        out += bytes([tags[1]]) + n.to_bytes(2, "big")
    else:
        out += bytes([tags[2]]) + n.to_bytes(4, "big")


def _pack(v, out):
    if v is None:
        out.append(0xC0)
    elif v is True or v is False:
        out.append(0xC3 if v else 0xC2)
    elif isinstance(v, int):
        _int(int(v), out)
    elif isinstance(v, float):
        try:
            as32 = _F32.unpack(_F32.pack(v))[0]
        except OverflowError:  # beyond float32's range
            as32 = None
        if as32 is not None and math.isfinite(v) and as32 == v:  # nlohmann: finite, in float32 range, exact
            out += b"\xca" + _F32.pack(v)
        else:
            out += b"\xcb" + struct.pack(">d", v)
    elif isinstance(v, str):
        b = v.encode("utf-8")
        _sized(len(b), 0xA0, 31, (0xD9, 0xDA, 0xDB), out)
        out += b
    elif isinstance(v, (bytes, bytearray)):
        n = len(v)
        if n <= 0xFF:
            out += bytes([0xC4, n])
        elif n <= 0xFFFF:
            out += b"\xc5" + n.to_bytes(2, "big")
        else:
            out += b"\xc6" + n.to_bytes(4, "big")
        out += v
    elif isinstance(v, dict):
        _sized(len(v), 0x80, 15, (None, 0xDE, 0xDF), out)
        for k in sorted(v):
            _pack(k, out)
            _pack(v[k], out)
    elif isinstance(v, (list, tuple)):
        _sized(len(v), 0x90, 15, (None, 0xDC, 0xDD), out)
        for x in v:
            _pack(x, out)
    else:
        raise TypeError(f"msgpack: cannot encode a value of type {type(v).__name__}.")


def packb(value):
    """`value` (dict/list/str/int/float/bytes/bool/None, nested) as MessagePack bytes (nlohmann's encoding).

    Raises:
        TypeError: a value of another type. OverflowError: an int beyond 64 bits."""
    out = bytearray()
    _pack(value, out)
    return bytes(out)


_FIXED = {0xCC: struct.Struct(">B"), 0xCD: struct.Struct(">H"), 0xCE: struct.Struct(">I"), 0xCF: struct.Struct(">Q"),
          0xD0: struct.Struct(">b"), 0xD1: struct.Struct(">h"), 0xD2: struct.Struct(">i"), 0xD3: struct.Struct(">q"),
          0xCA: struct.Struct(">f"), 0xCB: struct.Struct(">d")}
_LEN = {0xD9: _FIXED[0xCC], 0xDA: _FIXED[0xCD], 0xDB: _FIXED[0xCE], 0xC4: _FIXED[0xCC], 0xC5: _FIXED[0xCD],
        0xC6: _FIXED[0xCE], 0xDC: _FIXED[0xCD], 0xDD: _FIXED[0xCE], 0xDE: _FIXED[0xCD], 0xDF: _FIXED[0xCE]}
_SIMPLE = {0xC0: None, 0xC2: False, 0xC3: True}


def _need(data, pos, n):
    if pos + n > len(data):
        raise ValueError(f"msgpack: the data ends at byte {len(data)}, inside a value that needs {pos + n}.")


def _value(data, pos):
    """(value, next position) of the value at data[pos] (data: bytes)."""
    _need(data, pos, 1)
    t = data[pos]
    pos += 1
    if t <= 0x7F:
        return t, pos
    if t >= 0xE0:
        return t - 0x100, pos
    if 0xA0 <= t <= 0xBF or t in (0xD9, 0xDA, 0xDB, 0xC4, 0xC5, 0xC6):
        if t <= 0xBF:
            n = t & 0x1F
        else:
            fmt = _LEN[t]
            _need(data, pos, fmt.size)
            n = fmt.unpack_from(data, pos)[0]
            pos += fmt.size
        _need(data, pos, n)
        raw = data[pos:pos + n]
        return (raw if t in (0xC4, 0xC5, 0xC6) else raw.decode("utf-8")), pos + n
    if t in _FIXED:
        fmt = _FIXED[t]
        _need(data, pos, fmt.size)
        return fmt.unpack_from(data, pos)[0], pos + fmt.size
    if 0x80 <= t <= 0x8F or t in (0xDE, 0xDF):
        if t <= 0x8F:
            n = t & 0x0F
        else:
            _need(data, pos, _LEN[t].size)
            n, pos = _LEN[t].unpack_from(data, pos)[0], pos + _LEN[t].size
        out = {}
        for _ in range(n):
            k, pos = _value(data, pos)
            out[k], pos = _value(data, pos)
        return out, pos
    if 0x90 <= t <= 0x9F or t in (0xDC, 0xDD):
        if t <= 0x9F:
            n = t & 0x0F
        else:
            _need(data, pos, _LEN[t].size)
            n, pos = _LEN[t].unpack_from(data, pos)[0], pos + _LEN[t].size
        out = []
        for _ in range(n):
            v, pos = _value(data, pos)
            out.append(v)
        return out, pos
    if t in _SIMPLE:
        return _SIMPLE[t], pos
    raise ValueError(f"msgpack: unsupported type byte 0x{t:02x} at offset {pos - 1}.")


def unpackb(data):
    """The value encoded in `data` (bytes).

    Raises:
        ValueError: truncated data, trailing bytes, an ext type, invalid UTF-8."""
    data = bytes(data)
    try:
        v, pos = _value(data, 0)
    except UnicodeDecodeError as e:
        raise ValueError(f"msgpack: a string is not valid UTF-8: {e}") from None
    except RecursionError:
        raise ValueError("msgpack: values nested too deeply.") from None
    if pos != len(data):
        raise ValueError(f"msgpack: {len(data) - pos} bytes left after the value.")
    return v
