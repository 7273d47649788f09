"""Integer bit operations: MindSpore 2.10's ops.bitwise_and, bitwise_or, bitwise_xor, bitwise_left_shift,
bitwise_right_shift, invert, gcd, lcm, population_count and the BitwiseAnd/Or/Xor, Invert, Gcd, Lcm,
PopulationCount primitives.

and/or/xor, the shifts, invert, gcd and lcm are one C++ op each (src/ops/schema/ops.yaml: BitwiseAnd, BitwiseOr,
BitwiseXor, LeftShift, RightShift, Invert, Gcd, Lcm; kernels in src/ops/elementwise_binary.cpp and
elementwise_unary.cpp), on every integer dtype including uint16/32/64. These functions check MindSpore's argument
rules (which dtypes each takes, same-dtype operands for the shifts, Tensor-only operands for gcd) and call them.
Shifts take any count: outside [0, bits) a left shift gives 0 and a right shift the sign fill (NumPy's and PyTorch's
results; MindSpore's CPU kernel masks the count to the width instead). population_count is composed from byte tables
(each byte's set bits summed through a 256-entry Gather). Not differentiable."""

import numpy as np

from .._loader import _core
from .._args import _got, _is_int
from ..common import dtype as mstype
from ..common.tensor import Tensor
from .function import _tensor_arg
from ._opdef import defop

__all__ = ["bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift", "invert", "gcd",
           "lcm", "population_count"]

_BITS = {mstype.int8: 8, mstype.int16: 16, mstype.int32: 32, mstype.int64: 64, mstype.uint8: 8, mstype.uint16: 16,
         mstype.uint32: 32, mstype.uint64: 64}
_INT_NAMES = "int8/16/32/64, uint8/16/32/64"

_POP = np.array([bin(i).count("1") for i in range(256)], np.int64)
_POP_TENSOR = []  # the 256-entry table, made once (a bounded module-level constant)


def _int_tensor(op, x, name, allow_bool=False, dtypes=None):
    """`x` as a Tensor of an integer dtype (`dtypes`, default any; Bool too when `allow_bool`), else TypeError."""
    x = _tensor_arg(x, op, name)
    ok = (x.dtype in dtypes) if dtypes else (x.dtype in _BITS or (allow_bool and x.dtype == mstype.bool_))
    if not ok:
        kinds = "/".join(str(d) for d in dtypes) if dtypes else _INT_NAMES + (", bool" if allow_bool else "")
        raise TypeError(f"For '{op}', '{name}' must be an integer Tensor ({kinds}), but got {_got(x)}.")
    return x


def _other(op, a, b, allow_bool=False, scalars=True, same_dtype=False, dtypes=None):
    """The second operand: an integer Tensor (of a's dtype when `same_dtype`), or a Python int (bool) when
    `scalars`, which keeps a's dtype (kiln._core takes Python numbers as weak scalars)."""
    if isinstance(b, Tensor):
        b = _int_tensor(op, b, "other", allow_bool, dtypes)
        if same_dtype and b.dtype != a.dtype:
            raise TypeError(f"For '{op}', 'input' and 'other' must have the same dtype, but got {a.dtype} and "
                            f"{b.dtype}.")
        return b
    if scalars and (_is_int(b) or (allow_bool and isinstance(b, bool))):
        if not same_dtype:
            return b
        # A shift count takes input's dtype (MindSpore: uint32_tensor << 2 is UInt32, not a promotion error).
        try:
            return Tensor(np.array(b, dtype=mstype.dtype_to_nptype(a.dtype)))
        except OverflowError:
            raise ValueError(f"For '{op}', 'other' = {b} is out of the range of input's dtype {a.dtype}.") from None
    raise TypeError(f"For '{op}', 'other' must be an integer Tensor{' or an int' if scalars else ''}, but got "
                    f"{_got(b)}.")


def _binary(op, fn, input, other, **rules):
    dtypes = rules.get("dtypes")
    a = _int_tensor(op, input, "input", rules.get("allow_bool", False), dtypes)
    b = _other(op, a, other, **rules)
    return fn(a, b)


@defop(primitive="BitwiseAnd", tensor="bitwise_and", mint="bitwise_and")
def bitwise_and(input, other):
    """MindSpore's ops.bitwise_and(input, other): the bitwise AND of integer Tensors (or an int for other),
    broadcasting, dtypes promoted (int32 with int64 gives Int64; an int keeps input's dtype); Bool Tensors give the
    logical AND. One C++ op (BitwiseAnd). Raises TypeError (a float or non-Tensor operand; uint16/32/64 with another
    dtype), ValueError (shapes that do not broadcast)."""
    return _binary("bitwise_and", _core.bitwise_and, input, other, allow_bool=True)


@defop(primitive="BitwiseOr", tensor="bitwise_or", mint="bitwise_or")
def bitwise_or(input, other):
    """MindSpore's ops.bitwise_or(input, other): the bitwise OR (Bool: logical OR), as bitwise_and (BitwiseOr).
    Raises TypeError, ValueError as bitwise_and."""
    return _binary("bitwise_or", _core.bitwise_or, input, other, allow_bool=True)


@defop(primitive="BitwiseXor", tensor="bitwise_xor", mint="bitwise_xor")
def bitwise_xor(input, other):
    """MindSpore's ops.bitwise_xor(input, other): the bitwise XOR (Bool: logical XOR), as bitwise_and (BitwiseXor).
    Raises TypeError, ValueError as bitwise_and."""
    return _binary("bitwise_xor", _core.bitwise_xor, input, other, allow_bool=True)


@defop(tensor="bitwise_left_shift")
def bitwise_left_shift(input, other):
    """MindSpore's ops.bitwise_left_shift(input, other): input·2^other, wrapping to input's integer dtype (as C on
    the unsigned bits); counts outside [0, bits) give 0. other: an integer Tensor of input's dtype, or an int. One
    C++ op (LeftShift). Raises TypeError (non-integer or Bool input/other, different dtypes), ValueError (shapes)."""
    return _binary("bitwise_left_shift", _core.left_shift, input, other, same_dtype=True)


@defop(tensor="bitwise_right_shift")
def bitwise_right_shift(input, other):
    """MindSpore's ops.bitwise_right_shift(input, other): the arithmetic shift ⌊input / 2^other⌋ (sign-filling for
    signed dtypes); counts outside [0, bits) give the sign fill (0 or −1). other: an integer Tensor of input's dtype
    or an int. One C++ op (RightShift). Raises TypeError (non-integer or Bool input/other, different dtypes),
    ValueError (shapes)."""
    return _binary("bitwise_right_shift", _core.right_shift, input, other, same_dtype=True)


@defop(primitive="Invert", tensor="invert")
def invert(x):
    """MindSpore's ops.invert(x): the bitwise NOT ~x of an integer Tensor (−x − 1 for signed dtypes, max − x for
    unsigned), same shape and dtype. One C++ op (Invert). Raises TypeError for a non-Tensor, Bool or float input
    (MindSpore's rule)."""
    return _core.invert(_int_tensor("invert", x, "x"))


_GCD_DTYPES = (mstype.int16, mstype.int32, mstype.int64)
_LCM_DTYPES = (mstype.int32, mstype.int64)


@defop(primitive="Gcd", tensor="gcd", mint="gcd")
def gcd(input, other):
    """MindSpore's ops.gcd(input, other): the greatest common divisor of |input| and |other| (gcd(x, 0) = |x|; the
    most negative value wraps as NumPy's), int16/int32/int64 Tensors, broadcasting, dtypes promoted. One C++ op
    (Gcd, Euclid's algorithm). Raises TypeError (non-Tensor operands, other dtypes), ValueError (shapes)."""
    return _binary("gcd", _core.gcd, input, other, scalars=False, dtypes=_GCD_DTYPES)


@defop(primitive="Lcm", tensor="lcm")
def lcm(input, other):
    """MindSpore's ops.lcm(input, other): the least common multiple |input / gcd · other| (0 when either is 0; wraps
    on overflow as NumPy's), int32/int64 Tensors (or an int for other), broadcasting, dtypes promoted. One C++ op
    (Lcm). Raises TypeError (non-integer operands, other dtypes), ValueError (shapes)."""
    return _binary("lcm", _core.lcm, input, other, dtypes=_LCM_DTYPES)


def _bytes(x, n):
    """The n low bytes (int64, 0..255) of x (int64), least significant first."""
    return [_core.bitwise_and(_core.right_shift(x, 8 * k), 255) for k in range(n)]


@defop(primitive="PopulationCount")
def population_count(input_x):
    """MindSpore's ops.population_count(input_x): the number of set bits of each element (two's complement for
    negative values), UInt8. Raises TypeError for a non-Tensor or a non-integer input."""
    t = _int_tensor("population_count", input_x, "input_x")
    x = _core.cast(t, mstype.int64)
    if not _POP_TENSOR:
        _POP_TENSOR.append(Tensor(_POP))
    pop = _POP_TENSOR[0]
    acc = None
    for b in _bytes(x, _BITS[t.dtype] // 8):
        c = _core.gather(pop, b, 0)
        acc = c if acc is None else _core.add(acc, c)
    return _core.cast(acc, mstype.uint8)

