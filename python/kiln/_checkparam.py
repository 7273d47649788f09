"""`mindspore._checkparam`: the argument validators MindSpore's own layers, optimizers and model-zoo code call
(`from mindspore import _checkparam as Validator; Validator.check_positive_int(n, "n", self.cls_name)`).

Each function checks one argument and returns it (or None, as MindSpore's), raising TypeError for a wrong type and
ValueError for a wrong value, with MindSpore 2.10's messages (checked against MindSpore 2.10's
mindspore/_checkparam.py; tests/python/test_ms_module_layout.py holds its texts). Relations are the module's
constants EQ, NE, LT, LE, GT, GE, IN, NOT_IN (one value) and INC_NEITHER, INC_LEFT, INC_RIGHT, INC_BOTH (a range).

MindSpore 1.x code imports `Validator` and `Rel` from here (`from mindspore._checkparam import Validator as
validator, Rel`; `validator.check_int(k, 0, Rel.GE, "k", name)`). MindSpore 2.10 dropped both names (its own code
uses the module as `Validator`), so that import fails there; Kiln keeps them because model-zoo code still uses them:
`Validator` is this module itself and `Rel.GE` is the constant GE, so both spellings run the same functions.

Kiln has no TensorType (MindSpore's `Tensor[Float32]`, the type that PrimitiveWithInfer.infer_dtype receives): the
dtype checks (check_tensor_dtype_valid, check_tensors_dtypes_same_and_valid, check_subclass, check_type_name) take
Kiln dtypes, as `x.dtype` gives them, and compare them with the valid dtypes; messages name the tensor types as
MindSpore's do ("must be one of Tensor[Float32], Tensor[Float16], but got Tensor[Int32]").
"""
import math
import re
import sys
from collections.abc import Iterable
from itertools import repeat

import numpy as np

EQ = 1  # ==
NE = 2  # !=
LT = 3  # <
LE = 4  # <=
GT = 5  # >
GE = 6  # >=
INC_NEITHER = 7  # (lower, upper)
INC_LEFT = 8  # [lower, upper)
INC_RIGHT = 9  # (lower, upper]
INC_BOTH = 10  # [lower, upper]
IN = 11
NOT_IN = 12


class Rel:
    """MindSpore 1.x's relation names (Rel.GE, Rel.INC_BOTH, ...): the module's constants, for code that imports
    `Rel` from here (MindSpore 2.10 has only the module constants)."""
    EQ, NE, LT, LE, GT, GE = EQ, NE, LT, LE, GT, GE
    INC_NEITHER, INC_LEFT, INC_RIGHT, INC_BOTH = INC_NEITHER, INC_LEFT, INC_RIGHT, INC_BOTH
    IN, NOT_IN = IN, NOT_IN


_BINARY = {EQ: (lambda a, b: a == b, "= {}"), NE: (lambda a, b: a != b, "!= {}"), LT: (lambda a, b: a < b, "< {}"),
           LE: (lambda a, b: a <= b, "<= {}"), GT: (lambda a, b: a > b, "> {}"), GE: (lambda a, b: a >= b, ">= {}"),
           IN: (lambda a, b: a in b, "in {}"), NOT_IN: (lambda a, b: a not in b, "not in {}")}
_RANGE = {INC_NEITHER: (lambda v, lo, hi: lo < v < hi, "({}, {})"),
          INC_LEFT: (lambda v, lo, hi: lo <= v < hi, "[{}, {})"),
          INC_RIGHT: (lambda v, lo, hi: lo < v <= hi, "({}, {}]"),
          INC_BOTH: (lambda v, lo, hi: lo <= v <= hi, "[{}, {}]")}


def _rel_holds(a, b, rel):
    entry = _BINARY.get(rel)
    return bool(entry[0](a, b)) if entry else False


def _rel_text(value, rel):
    entry = _BINARY.get(rel)
    return entry[1].format(value) if entry else ""


def _subject(arg_name, prim_name, space=True):
    """MindSpore's message prefix: "For 'Prim', the 'arg'" / "The 'arg'" / "... input value"."""
    prefix = f"For '{prim_name}', the" if prim_name else "The"
    name = f"'{arg_name}'" if arg_name else "input value"
    return f"{prefix}{' ' if space else ''}{name}"


def _check_number(arg_value, value, rel, arg_type, arg_name=None, prim_name=None):
    info = f"For '{prim_name}', the " if prim_name else "The "
    info += f"'{arg_name}'" if arg_name else "input value"
    if not isinstance(arg_value, arg_type):
        raise TypeError(f"{info} must be {arg_type.__name__}, but got '{type(arg_value).__name__}'")
    if math.isinf(arg_value) or math.isnan(arg_value):
        raise ValueError(f"{info} must be a legal value, but got '{arg_value}'.")
    type_mismatch = isinstance(arg_value, bool)
    if type_mismatch or not _rel_holds(arg_value, value, rel):
        msg = (f"{info} must be {arg_type.__name__} and must {_rel_text(value, rel)}, "
               f"but got '{arg_value}' with type '{type(arg_value).__name__}'.")
        raise (TypeError if type_mismatch else ValueError)(msg)
    return arg_value


def check_int(arg_value, value, rel, arg_name=None, prim_name=None):
    """arg_value, an int (not a bool) with `arg_value <rel> value` (check_int(k, 0, GE, "k", "TopK")).
    TypeError for another type (a bool included), ValueError when the relation fails."""
    return _check_number(arg_value, value, rel, int, arg_name, prim_name)


def check_equal_int(arg_value, value, arg_name=None, prim_name=None):
    """arg_value, an int equal to value (else ValueError; TypeError for a non-int)."""
    return _check_number(arg_value, value, EQ, int, arg_name, prim_name)


def check_positive_int(arg_value, arg_name=None, prim_name=None):
    """arg_value, an int > 0 (else ValueError; TypeError for a non-int or a bool)."""
    return _check_number(arg_value, 0, GT, int, arg_name, prim_name)


def check_negative_int(arg_value, arg_name=None, prim_name=None):
    """arg_value, an int < 0 (else ValueError; TypeError for a non-int or a bool)."""
    return _check_number(arg_value, 0, LT, int, arg_name, prim_name)


def check_non_positive_int(arg_value, arg_name=None, prim_name=None):
    """arg_value, an int <= 0 (else ValueError; TypeError for a non-int or a bool)."""
    return _check_number(arg_value, 0, LE, int, arg_name, prim_name)


def check_non_negative_int(arg_value, arg_name=None, prim_name=None):
    """arg_value, an int >= 0 (else ValueError; TypeError for a non-int or a bool)."""
    return _check_number(arg_value, 0, GE, int, arg_name, prim_name)


def check_float(arg_value, value, rel, arg_name=None, prim_name=None):
    """arg_value, a float with `arg_value <rel> value`; an int is refused (TypeError), as in MindSpore; NaN and
    infinities raise ValueError."""
    return _check_number(arg_value, value, rel, float, arg_name, prim_name)


def check_positive_float(arg_value, arg_name=None, prim_name=None):
    """arg_value, a float > 0 (an int raises TypeError, as in MindSpore)."""
    return _check_number(arg_value, 0, GT, float, arg_name, prim_name)


def check_negative_float(arg_value, arg_name=None, prim_name=None):
    """arg_value, a float < 0."""
    return _check_number(arg_value, 0, LT, float, arg_name, prim_name)


def check_non_positive_float(arg_value, arg_name=None, prim_name=None):
    """arg_value, a float <= 0."""
    return _check_number(arg_value, 0, LE, float, arg_name, prim_name)


def check_non_negative_float(arg_value, arg_name=None, prim_name=None):
    """arg_value, a float >= 0."""
    return _check_number(arg_value, 0, GE, float, arg_name, prim_name)


def _check_sequence(sequence, arg_name, prim_name, value, rel, arg_type):
    for idx, element in enumerate(sequence):
        _check_number(element, value, rel, arg_type, f"{arg_name if arg_name else 'arg_name'}[{idx}]", prim_name)
    return sequence


def check_positive_int_sequence(sequence, arg_name=None, prim_name=None):
    """sequence, whose every element is an int > 0 (the message names the element: 'dims[1]')."""
    return _check_sequence(sequence, arg_name, prim_name, 0, GT, int)


def check_non_negative_int_sequence(sequence, arg_name=None, prim_name=None):
    """sequence, whose every element is an int >= 0."""
    return _check_sequence(sequence, arg_name, prim_name, 0, GE, int)


def check_positive_float_sequence(sequence, arg_name=None, prim_name=None):
    """sequence, whose every element is a float > 0."""
    return _check_sequence(sequence, arg_name, prim_name, 0, GT, float)


def check_is_number(arg_value, arg_type, arg_name=None, prim_name=None):
    """arg_value, an instance of arg_type (int or float; a bool is refused) that is finite (ValueError for NaN/inf)."""
    if isinstance(arg_value, arg_type) and not isinstance(arg_value, bool):
        if math.isinf(arg_value) or math.isnan(arg_value):
            raise ValueError(f"{_subject(arg_name, prim_name)} must be a legal float, but got '{arg_value}'.")
        return arg_value
    prefix = f"For '{prim_name}', the" if prim_name else "The"
    name = f"'{arg_name}'" if arg_name else "input value"
    raise TypeError(f"{prefix} type of {name} must be '{arg_type.__name__}', but got '{type(arg_value).__name__}'.")


def check_is_int(arg_value, arg_name=None, prim_name=None):
    """arg_value, an int (not a bool); TypeError otherwise."""
    return check_is_number(arg_value, int, arg_name, prim_name)


def check_is_float(arg_value, arg_name=None, prim_name=None):
    """arg_value, a finite float; TypeError for another type, ValueError for NaN/inf."""
    return check_is_number(arg_value, float, arg_name, prim_name)


def check_number_range(arg_value, lower_limit, upper_limit, rel, value_type, arg_name=None, prim_name=None):
    """arg_value (value_type or a NumPy number; not a bool) inside the range given by rel (INC_BOTH: [lo, hi], ...)."""
    subject = _subject(arg_name, prim_name)
    if not isinstance(arg_value, (np.ndarray, np.generic, value_type)) or isinstance(arg_value, bool):
        raise TypeError(f"{subject} must be '{value_type.__name__}',  but got '{type(arg_value).__name__}'.")
    check_fn, text = _RANGE.get(rel, (lambda v, lo, hi: False, ""))
    if not check_fn(arg_value, lower_limit, upper_limit):
        raise ValueError(f"{subject} must be in range of {text.format(lower_limit, upper_limit)}, "
                         f"but got {arg_value} with type '{type(arg_value).__name__}'.")
    return arg_value


def check_int_range(arg_value, lower_limit, upper_limit, rel, arg_name=None, prim_name=None):
    """arg_value, an int (or NumPy number) in the range: check_int_range(axis, 0, 4, INC_LEFT) is 0 <= axis < 4."""
    return check_number_range(arg_value, lower_limit, upper_limit, rel, int, arg_name, prim_name)


def check_float_range(arg_value, lower_limit, upper_limit, rel, arg_name=None, prim_name=None):
    """arg_value, a float (or NumPy number) in the range; an int raises TypeError, as in MindSpore."""
    return check_number_range(arg_value, lower_limit, upper_limit, rel, float, arg_name, prim_name)


def check(arg_name, arg_value, value_name, value, rel=EQ, prim_name=None, excp_cls=ValueError):
    """arg_value, when `arg_value <rel> value` holds (ints, or tuples/lists of ints: shapes); else excp_cls
    ("For 'Add', the 'x_shape' should be = y_shape: (2, 4), but got (2, 3).")."""
    if not _rel_holds(arg_value, value, rel):
        prefix = f"For '{prim_name}', the" if prim_name else "The"
        subject = f"{prefix} '{arg_name}'" if " " not in arg_name else f"{prefix} {arg_name}"
        raise excp_cls(f"{subject} should be {_rel_text(f'{value_name}: {value}', rel)}, but got {arg_value}.")
    return arg_value


def check_number(arg_name, arg_value, value, rel, prim_name):
    """arg_value, when `arg_value <rel> value` holds; ValueError otherwise (any comparable values)."""
    if not _rel_holds(arg_value, value, rel):
        raise ValueError(f"For '{prim_name}', the argument '{arg_name}' must {_rel_text(value, rel)}, "
                         f"but got {arg_value}.")
    return arg_value


def check_isinstance(arg_name, arg_value, classes):
    """arg_value, an instance of classes; ValueError (MindSpore's choice) otherwise."""
    if not isinstance(arg_value, classes):
        raise ValueError(f"The parameter '{arg_name}' must be isinstance of {classes}, but got {arg_value}.")
    return arg_value


def check_bool(arg_value, arg_name=None, prim_name=None):
    """arg_value, a bool (an int is refused: TypeError)."""
    if not isinstance(arg_value, bool):
        raise TypeError(f"{_subject(arg_name, prim_name)} must be a bool, but got {type(arg_value).__name__}.")
    return arg_value


def check_string(arg_value, valid_values, arg_name=None, prim_name=None):
    """arg_value, a str among valid_values; ValueError otherwise (also for a non-str)."""
    arg_name = arg_name if arg_name else "parameter"
    prefix = f"For '{prim_name}', the" if prim_name else "The"
    if not (isinstance(arg_value, str) and arg_value in valid_values):
        raise ValueError(f"{prefix} '{arg_name}' must be str and must be in '{valid_values}', "
                         f"but got '{arg_value}'.")
    return arg_value


def check_str_by_regular(target, reg=None, flag=re.ASCII, prim_name=None):
    """True when target matches reg (default: a name of word characters and dots); ValueError otherwise."""
    if reg is None:
        reg = r"^\w+[0-9a-zA-Z\_\.]*$"
    if re.match(reg, target, flag) is None:
        prefix = f"For '{prim_name}', the" if prim_name else "The"
        raise ValueError(f"{prefix} '{target}' is illegal, it must be match regular'{reg}' by flags'{flag}.'")
    return True


def check_file_name_by_regular(target, reg=None, prim_name=None):
    """True for a legal file name (a str, not ending in a separator, of [0-9a-zA-Z@_-.:/\\]); TypeError for a
    non-str, ValueError otherwise."""
    prefix = f"For '{prim_name}', the" if prim_name else "The"
    if not isinstance(target, str):
        raise TypeError(f"{prefix} '{target}' must be string, but got {type(target)}.")
    if target.endswith("\\") or target.endswith("/"):
        raise ValueError(f"{prefix} '{target}' cannot be a directory path.")
    if reg is None:
        reg = r"^[0-9a-zA-Z@\_\-\.\:\/\\]+$"
    if re.match(reg, target) is None:
        raise ValueError(f"{prefix} '{target}' is illegal, it must be match regular '{reg}'.")
    return True


def check_pad_value_by_mode(pad_mode, padding, prim_name):
    """padding, which must be 0 unless pad_mode is 'pad' (ValueError)."""
    if pad_mode != "pad" and padding != 0:
        raise ValueError(f"For '{prim_name}', padding must be zero when pad_mode is '{pad_mode}', but got {padding}.")
    return padding


def check_valid_input(arg_name, arg_value, prim_name):
    """arg_value, which must not be None (ValueError)."""
    if arg_value is None:
        raise ValueError(f"For '{prim_name}', the argument '{arg_name}'can not be None, but got {arg_value}.")
    return arg_value


def check_value_type(arg_name, arg_value, valid_types, prim_name=None):
    """arg_value, an instance of one of valid_types (a type or a list/tuple of types). A bool passes only when bool
    is listed (bool is an int subclass; check_value_type('x', True, [int]) fails, as in MindSpore). A float is
    rounded to 6 digits when float is not listed (MindSpore's behaviour). TypeError otherwise."""
    valid_types = valid_types if isinstance(valid_types, Iterable) else (valid_types,)
    valid_types = tuple(valid_types)

    def fail():
        names = [t.__name__ if hasattr(t, "__name__") else str(t) for t in valid_types]
        prefix = f"For '{prim_name}', the" if prim_name else "The"
        expected = f"one of '{names}'" if len(valid_types) > 1 else f"'{names[0]}'"
        raise TypeError(f"{prefix} type of '{arg_name}' should be {expected}, "
                        f"but got type '{type(arg_value).__name__}'.")

    if isinstance(arg_value, bool) and bool not in valid_types:
        fail()
    if isinstance(arg_value, float) and float not in valid_types:
        arg_value = round(arg_value, 6)
    if not isinstance(arg_value, valid_types):
        fail()
    return arg_value


def check_element_type_of_iterable(arg_name, arg_value, valid_types, prim_name=None):
    """None when arg_value is a list/tuple whose every element is an instance of valid_types; TypeError otherwise."""
    check_value_type(arg_name, arg_value, [list, tuple], prim_name)
    _check_elements(arg_name, arg_value, valid_types, prim_name)


def _check_elements(arg_name, elements, valid_types, prim_name):
    names = [t.__name__ if hasattr(t, "__name__") else str(t) for t in valid_types]
    prefix = f"For '{prim_name}', the" if prim_name else "The"
    for element in elements:
        if not isinstance(element, tuple(valid_types)):
            expected = f"one of {names}" if len(valid_types) > 1 else names[0]
            raise TypeError(f"{prefix} type of '{arg_name}' should be {expected}, "
                            f"but got '{element}' with type '{type(element).__name__}'.")


def check_element_type_of_dict(arg_name, arg_value, key_types, value_types, prim_name=None):
    """None when arg_value is a dict whose keys are key_types and values value_types; TypeError otherwise."""
    check_value_type(arg_name, arg_value, [dict], prim_name)
    _check_elements(arg_name, arg_value.keys(), key_types, prim_name)
    _check_elements(arg_name, arg_value.values(), value_types, prim_name)


def check_size_and_element_type_of_tuple(arg_name, arg_value, expect_size, expect_element_type, prim_name=None):
    """None when arg_value is a tuple of expect_size elements of expect_element_type; TypeError/ValueError
    otherwise (the size message names "'<arg_name> size'")."""
    check_value_type(arg_name, arg_value, [tuple], prim_name)
    check_equal_int(len(arg_value), expect_size, arg_name + " size", prim_name)
    check_element_type_of_iterable("arg_name", arg_value, [expect_element_type], prim_name)


def check_axis_in_range(axis, ndim):
    """The axis (an int in [-ndim, ndim)) made non-negative; TypeError for a non-int, ValueError out of range."""
    if not isinstance(axis, int):
        raise TypeError(f"The axes must be integers, but got {type(axis)}")
    if axis >= ndim or axis < -ndim:
        raise ValueError(f"The 'axis' must be in the range of [-{ndim}, {ndim}), but got {axis}.")
    return (axis + ndim) % ndim


# ---- dtypes (Kiln dtypes; see the module docstring) ----
def _tensor_type_text(dtype):
    return f"Tensor[{dtype}]"


def _as_list(types):
    return list(types) if isinstance(types, Iterable) else [types]


def _dtype_fail(arg_name, type_, expected, prim_name, addition_error_info=None):
    extra = "" if addition_error_info is None else " " + addition_error_info
    type_str = f"type '{type(type_).__name__}'" if isinstance(type_, (tuple, list)) else str(type_)
    raise TypeError(f"For '{prim_name}', the element of '{arg_name}' must be "
                    f"{'one of ' if len(expected) > 1 else ''}{', '.join(expected)}, but got {type_str}{extra}."
                    "The supported data types depend on the hardware that executes the operator, for more details, "
                    "please refer to the MindSpore official website to get more information about the data type.")


def check_subclass(arg_name, type_, template_types, prim_name, addition_error_info=None):
    """None when the dtype type_ is one of template_types (a dtype or an iterable of dtypes, e.g. mstype.number_type);
    TypeError in MindSpore's words otherwise."""
    templates = _as_list(template_types)
    if not any(type_ == t for t in templates):
        _dtype_fail(arg_name, type_, [str(t) for t in templates], prim_name, addition_error_info)


def check_tensor_dtype_valid(arg_name, arg_type, valid_dtypes, prim_name):
    """None when the tensor dtype arg_type (`x.dtype`) is one of valid_dtypes (a dtype or a list of dtypes);
    TypeError otherwise: "For 'P', the element of 'x' must be one of Tensor[Float32], Tensor[Float16], but got
    Tensor[Int32]..."."""
    valid = _as_list(valid_dtypes)
    if not any(arg_type == t for t in valid):
        _dtype_fail(arg_name, _tensor_type_text(arg_type), [_tensor_type_text(t) for t in valid], prim_name)


def check_types_same_and_valid(args, valid_values, prim_name):
    """None when the dtypes in the dict args ({name: dtype}) are all valid (check_subclass) and all equal;
    TypeError naming the first two that differ otherwise."""
    items = list(args.items())
    for name, dtype in items:
        check_subclass(name, dtype, valid_values, prim_name)
    _check_same(items, prim_name, str)


def _check_same(items, prim_name, text):
    first_name, first_type = items[0]
    for name, dtype in items[1:]:
        if dtype != first_type:
            raise TypeError(f"For '{prim_name}', the type of '{name}' should be same as '{first_name}', but got "
                            f"'{first_name}' with type {text(first_type)} and '{name}' with type {text(dtype)}.")


def check_tensors_dtypes_same_and_valid(args, valid_dtypes, prim_name):
    """None when the tensor dtypes in the dict args ({name: x.dtype}) are valid and all equal; TypeError otherwise."""
    items = list(args.items())
    for name, dtype in items:
        check_tensor_dtype_valid(name, dtype, valid_dtypes, prim_name)
    _check_same(items, prim_name, _tensor_type_text)


def check_type_name(arg_name, arg_type, valid_types, prim_name):
    """arg_type when it is one of valid_types (dtypes); TypeError otherwise."""
    valid = list(valid_types) if isinstance(valid_types, Iterable) else [valid_types]
    if arg_type not in valid:
        prefix = f"For '{prim_name}', the" if prim_name else "The"
        names = valid if len(valid) > 1 else str(valid[0])
        raise TypeError(f"{prefix} '{arg_name}' should be {'one of ' if len(valid) > 1 else ''}{names}, "
                        f"but got '{arg_type}'.")
    return arg_type


# ---- int -> tuple expansion (kernel sizes, strides) ----
def _expand_tuple(n_dimensions):
    def convert(m):
        if not isinstance(m, tuple):
            if isinstance(m, int) and not isinstance(m, bool):
                return tuple(repeat(m, n_dimensions))
            raise TypeError(f"When expanding an int number to tuple, input type must be integer or tuple[int], "
                            f"but got {type(m)}")
        if len(m) != n_dimensions:
            raise TypeError(f"When expanding an int number to tuple, input tuple dimension must be {n_dimensions}, "
                            f"but got {m}")
        for i in m:
            if not isinstance(i, int) or isinstance(i, bool):
                raise TypeError(f"When expanding an int number to tuple, "
                                f"the type of element in input tuple must be an integer, but got {type(i)}.")
        return m
    convert.__doc__ = (f"An int repeated {n_dimensions} times, or a tuple of {n_dimensions} ints as it is; "
                       "TypeError otherwise.")
    return convert


once = _expand_tuple(1)
twice = _expand_tuple(2)
triple = _expand_tuple(3)

Validator = sys.modules[__name__]  # MindSpore 1.x's `Validator` class: this module (see the module docstring)
