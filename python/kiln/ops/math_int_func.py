"""Integer bit operations built from Kiln's FloorDiv, FloorMod, Mul, Gather and Select kernels (MindSpore 2.10's
ops.bitwise_and, bitwise_or, bitwise_xor, bitwise_left_shift, bitwise_right_shift, invert, gcd, lcm,
population_count and the BitwiseAnd/Or/Xor, Invert, Gcd, Lcm, PopulationCount primitives). Kiln has no bit kernels,
so the bits are reached arithmetically:

  bytes: x (widened to int64) splits into its itemsize bytes bₖ = ⌊x / 256ᵏ⌋ mod 256 (floor division gives the
      two's-complement bytes of negative numbers, the top byte included); a binary bit operation combines byte
      pairs through a 256×256 lookup table (one Gather per byte), population_count sums a 256-entry table, and the
      result is Σₖ bₖ·256ᵏ with the top byte read as signed for signed dtypes.
  shifts: x·2ⁿ (wrapping to the dtype, as C) and ⌊x / 2ⁿ⌋ (arithmetic shift); a count outside [0, bits) gives 0
      for a left shift and the sign fill (0 or −1) for a right shift (NumPy's/PyTorch's results).
  gcd: Euclid's algorithm on |a|, |b| with a fixed number of steps (enough for the dtype: the worst case is two
      consecutive Fibonacci numbers), so it also compiles under kiln.jit; lcm = |a / gcd(a, b) · b| (0 with a 0).
Integer dtypes int8/16/32/64 and uint8/16/32 (bool for and/or/xor: the logical ops). Not differentiable."""

import numpy as np

from .._loader import _core
from .._args import _got, _is_int
from ..common import dtype as mstype
from ..common.tensor import Tensor
from .function import _tensor_arg
from ._opdef import defop

__all__ = ["bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift", "invert", "gcd",
           "lcm", "population_count"]

_SIGNED = (mstype.int8, mstype.int16, mstype.int32, mstype.int64)
_UNSIGNED = (mstype.uint8, mstype.uint16, mstype.uint32)
_BITS = {mstype.int8: 8, mstype.int16: 16, mstype.int32: 32, mstype.int64: 64, mstype.uint8: 8, mstype.uint16: 16,
         mstype.uint32: 32}

_A, _B = np.meshgrid(np.arange(256), np.arange(256), indexing="ij")
_TABLES = {"and": (_A & _B).reshape(-1), "or": (_A | _B).reshape(-1), "xor": (_A ^ _B).reshape(-1)}
_POP = np.array([bin(i).count("1") for i in range(256)], np.int64)
_TABLE_TENSORS = {}


def _table(name):
    t = _TABLE_TENSORS.get(name)  # module-level constants: a bounded cache (4 entries), filled once
    if t is None:
        t = Tensor((_POP if name == "pop" else _TABLES[name]).astype(np.int64))
        _TABLE_TENSORS[name] = t
    return t


def _int_tensor(op, x, name, allow_bool=False):
    x = _tensor_arg(x, op, name)
    if x.dtype not in _BITS and not (allow_bool and x.dtype == mstype.bool_):
        raise TypeError(f"For '{op}', '{name}' must be an integer Tensor (int8/16/32/64, uint8/16/32"
                        f"{', bool' if allow_bool else ''}), but got {_got(x)}.")
    return x


def _int_pair(op, a, b, allow_bool=False, scalars=True):
    """Two integer operands of one dtype (a Python int may stand for the second when `scalars`)."""
    a = _int_tensor(op, a, "input", allow_bool)
    if isinstance(b, Tensor):
        b = _int_tensor(op, b, "other", allow_bool)
        if b.dtype != a.dtype:
            raise TypeError(f"For '{op}', 'input' and 'other' must have the same dtype, but got {a.dtype} and "
                            f"{b.dtype}.")
        try:
            np.broadcast_shapes(tuple(a.shape), tuple(b.shape))
        except ValueError:
            raise ValueError(f"For '{op}', the shapes {tuple(a.shape)} and {tuple(b.shape)} do not broadcast.") \
                from None
    elif scalars and (_is_int(b) or (allow_bool and isinstance(b, bool) and a.dtype == mstype.bool_)):
        b = _core.full([], float(b) if not isinstance(b, bool) else float(b), a.dtype) if abs(int(b)) < 2 ** 53 \
            else Tensor(np.array(b, dtype=mstype.dtype_to_nptype(a.dtype)))
    else:
        raise TypeError(f"For '{op}', 'other' must be an integer Tensor{' or an int' if scalars else ''}, but got "
                        f"{_got(b)}.")
    shape = list(np.broadcast_shapes(tuple(a.shape), tuple(b.shape)))
    return _core.broadcast_to(a, shape), _core.broadcast_to(b, shape)


def _i64(v):
    return _core.full([], float(v), mstype.int64) if abs(v) < 2 ** 53 else Tensor(np.array(v, np.int64))


def _bytes(x, n):
    """The n low bytes (int64, 0..255) of x (int64), least significant first."""
    out = []
    for k in range(n):
        out.append(_core.mod(_core.floor_div(x, _i64(256 ** k)), _i64(256)))
    return out


def _from_bytes(bs, signed):
    n = len(bs)
    acc = None
    for k, b in enumerate(bs):
        if k == n - 1 and signed:
            b = _core.select(_core.greater_equal(b, _i64(128)), _core.sub(b, _i64(256)), b)
        term = _core.mul(b, _i64(256 ** k)) if k else b
        acc = term if acc is None else _core.add(acc, term)
    return acc


def _bitwise(op, table, a, b):
    a, b = _int_pair(op, a, b, allow_bool=True)
    if a.dtype == mstype.bool_:
        return {"and": _core.logical_and, "or": _core.logical_or, "xor": _core.logical_xor}[table](a, b)
    n = _BITS[a.dtype] // 8
    xa, xb = _core.cast(a, mstype.int64), _core.cast(b, mstype.int64)
    t = _table(table)
    rb = [_core.gather(t, _core.add(_core.mul(ba, _i64(256)), bb), 0) for ba, bb in zip(_bytes(xa, n), _bytes(xb, n))]
    return _core.cast(_from_bytes(rb, a.dtype in _SIGNED), a.dtype)


@defop(primitive="BitwiseAnd", tensor="bitwise_and", mint="bitwise_and")
def bitwise_and(input, other):
    """MindSpore's ops.bitwise_and(input, other): the bitwise AND of two integer Tensors of one dtype (or an int for
    other), broadcasting; bool inputs give the logical AND. Method: module docstring. Raises TypeError (non-integer
    or mixed dtypes), ValueError (shapes that do not broadcast)."""
    return _bitwise("bitwise_and", "and", input, other)


@defop(primitive="BitwiseOr", tensor="bitwise_or", mint="bitwise_or")
def bitwise_or(input, other):
    """MindSpore's ops.bitwise_or(input, other): the bitwise OR (bool: logical OR), as bitwise_and. Raises TypeError,
    ValueError as bitwise_and."""
    return _bitwise("bitwise_or", "or", input, other)


@defop(primitive="BitwiseXor", tensor="bitwise_xor", mint="bitwise_xor")
def bitwise_xor(input, other):
    """MindSpore's ops.bitwise_xor(input, other): the bitwise XOR (bool: logical XOR), as bitwise_and. Raises
    TypeError, ValueError as bitwise_and."""
    return _bitwise("bitwise_xor", "xor", input, other)


def _shift_counts(n, bits):
    inside = _core.logical_and(_core.greater_equal(n, _i64(0)), _core.less(n, _i64(bits)))
    idx = _core.select(inside, n, _core.zeros_like(n))
    return inside, idx


@defop(tensor="bitwise_left_shift")
def bitwise_left_shift(input, other):
    """MindSpore's ops.bitwise_left_shift(input, other): input·2^other, wrapping to input's integer dtype (as C);
    counts outside [0, bits) give 0. other: an integer Tensor of input's dtype or an int. Raises TypeError
    (non-integer input/other, mixed dtypes), ValueError (shapes)."""
    a, n = _int_pair("bitwise_left_shift", input, other)
    bits = _BITS[a.dtype]
    inside, idx = _shift_counts(_core.cast(n, mstype.int64), bits)
    pw = Tensor(np.array([(1 << k) if k < 63 else -(1 << 63) for k in range(bits)], np.int64))
    if a.dtype == mstype.int64:
        out = _core.mul(a, _core.gather(pw, idx, 0))
    else:
        out = _core.cast(_core.mul(_core.cast(a, mstype.int64), _core.gather(pw, idx, 0)), a.dtype)
    return _core.select(inside, out, _core.zeros_like(out))


@defop(tensor="bitwise_right_shift")
def bitwise_right_shift(input, other):
    """MindSpore's ops.bitwise_right_shift(input, other): the arithmetic shift ⌊input / 2^other⌋ (sign-filling for
    signed dtypes); counts of bits − 1 or more give the sign fill (0 or −1), negative counts too. other: an integer
    Tensor of input's dtype or an int. Raises TypeError (non-integer input/other, mixed dtypes), ValueError."""
    a, n = _int_pair("bitwise_right_shift", input, other)
    bits = _BITS[a.dtype]
    n64 = _core.cast(n, mstype.int64)
    ok = _core.logical_and(_core.greater_equal(n64, _i64(0)), _core.less(n64, _i64(bits - 1)))
    idx = _core.select(ok, n64, _core.zeros_like(n64))
    pw = Tensor(np.array([1 << k for k in range(bits - 1)], np.int64))
    out = _core.cast(_core.floor_div(_core.cast(a, mstype.int64), _core.gather(pw, idx, 0)), a.dtype)
    fill = _core.select(_core.less(a, _core.zeros_like(a)), _core.sub(_core.zeros_like(a), _core.ones_like(a)),
                        _core.zeros_like(a))
    last = _core.equal(n64, _i64(bits - 1))  # a count of exactly bits − 1 still shifts unsigned values
    if a.dtype in _UNSIGNED:
        top = _core.cast(_core.floor_div(_core.cast(a, mstype.int64), _i64(1 << (bits - 1))), a.dtype)
        return _core.select(ok, out, _core.select(last, top, _core.zeros_like(a)))
    return _core.select(ok, out, fill)


@defop(primitive="Invert", tensor="invert")
def invert(x):
    """MindSpore's ops.invert(x): the bitwise NOT ~x of an integer Tensor (−x − 1 for signed dtypes, max − x for
    unsigned). Raises TypeError for a non-Tensor, bool or float input (MindSpore's rule)."""
    t = _int_tensor("invert", x, "x")
    if t.dtype in _UNSIGNED:
        return _core.sub(_core.full([], float((1 << _BITS[t.dtype]) - 1), t.dtype), t)
    return _core.sub(_core.sub(_core.zeros_like(t), _core.ones_like(t)), t)


@defop(primitive="PopulationCount")
def population_count(input_x):
    """MindSpore's ops.population_count(input_x): the number of set bits of each element (two's complement for
    negative values), UInt8. Raises TypeError for a non-Tensor or a non-integer input."""
    t = _int_tensor("population_count", input_x, "input_x")
    x = _core.cast(t, mstype.int64)
    pop = _table("pop")
    acc = None
    for b in _bytes(x, _BITS[t.dtype] // 8):
        c = _core.gather(pop, b, 0)
        acc = c if acc is None else _core.add(acc, c)
    return _core.cast(acc, mstype.uint8)


_GCD_STEPS = {mstype.int16: 25, mstype.int32: 47, mstype.int64: 94}  # Euclid's worst case: consecutive Fibonacci


def _gcd64(a, b, steps):
    """gcd(|a|, |b|) in int64 by a fixed number of Euclid steps."""
    a, b = _core.abs(a), _core.abs(b)
    for _ in range(steps):
        zero = _core.equal(b, _i64(0))
        bs = _core.select(zero, _core.ones_like(b), b)
        r = _core.mod(a, bs)
        a, b = _core.select(zero, a, b), _core.select(zero, b, r)
    return a


def _gcd_pair(op, a, b, scalars):
    a, b = _int_pair(op, a, b, scalars=scalars)
    if a.dtype not in (mstype.int16, mstype.int32, mstype.int64):
        raise TypeError(f"For '{op}', the inputs must be int16, int32 or int64 Tensors, but got {a.dtype}.")
    return a, b


@defop(primitive="Gcd", tensor="gcd", mint="gcd")
def gcd(input, other):
    """MindSpore's ops.gcd(input, other): the greatest common divisor of |input| and |other| (gcd(x, 0) = |x|),
    int16/int32/int64 Tensors of one dtype, broadcasting. Method: module docstring. Raises TypeError (non-Tensor,
    other dtypes, mixed dtypes), ValueError (shapes)."""
    a, b = _gcd_pair("gcd", input, other, scalars=False)
    return _core.cast(_gcd64(_core.cast(a, mstype.int64), _core.cast(b, mstype.int64), _GCD_STEPS[a.dtype]), a.dtype)


@defop(primitive="Lcm", tensor="lcm")
def lcm(input, other):
    """MindSpore's ops.lcm(input, other): the least common multiple |input / gcd · other| (0 when either is 0),
    int16/int32/int64 Tensors of one dtype (or an int for other), broadcasting. Raises TypeError (non-integer or
    mixed dtypes), ValueError (shapes)."""
    a, b = _gcd_pair("lcm", input, other, scalars=True)
    x, y = _core.cast(a, mstype.int64), _core.cast(b, mstype.int64)
    g = _gcd64(x, y, _GCD_STEPS[a.dtype])
    zero = _core.equal(g, _i64(0))
    out = _core.abs(_core.mul(_core.floor_div(x, _core.select(zero, _core.ones_like(g), g)), y))
    return _core.cast(_core.select(zero, _core.zeros_like(out), out), a.dtype)
