"""Argument checks shared by the callbacks (MindSpore's messages, the callback's name added)."""
import numbers


def non_negative_int(value, name, api):
    """value when it is an int ≥ 0 (bool refused). TypeError for another type, ValueError for a negative int."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"For '{api}', the '{name}' must be int and must >= 0, but got {value!r} with type "
                        f"'{type(value).__name__}'.")
    if value < 0:
        raise ValueError(f"For '{api}', the '{name}' must be int and must >= 0, but got {value!r}.")
    return value


def positive_int(value, name, api):
    """value when it is an int > 0 (bool refused). TypeError for another type, ValueError otherwise."""
    non_negative_int(value, name, api)
    if value == 0:
        raise ValueError(f"For '{api}', the '{name}' must be a positive int, but got 0.")
    return value


def check_bool(value, name, api):
    if not isinstance(value, bool):
        raise TypeError(f"For '{api}', the '{name}' must be bool, but got {type(value).__name__}.")
    return value


def check_number(value, name, api):
    """An int or float (bool refused)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"For '{api}', the '{name}' must be int or float, but got {type(value).__name__}.")
    return value


def check_str(value, name, api):
    if not isinstance(value, str):
        raise TypeError(f"For '{api}', the '{name}' must be str, but got {type(value).__name__}.")
    return value
