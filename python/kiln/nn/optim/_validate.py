"""Argument checks with MindSpore's Validator messages (shared by the optimizers)."""


def check_type(value, types, name, cls_name):
    """TypeError unless isinstance(value, types) (bools are not numbers here)."""
    if isinstance(value, bool) and bool not in types:
        ok = False
    else:
        ok = isinstance(value, types)
    if not ok:
        names = [t.__name__ for t in types]
        want = f"'{names[0]}'" if len(names) == 1 else f"one of {names}"
        raise TypeError(f"For '{cls_name}', the type of '{name}' should be {want}, but got '{value}' with type "
                        f"'{type(value).__name__}'.")
    return value


def check_open_unit(value, name, cls_name):
    """ValueError unless 0 < value < 1."""
    if not 0.0 < value < 1.0:
        raise ValueError(f"For '{cls_name}', the '{name}' should be in range of (0.0, 1.0), but got {value} with "
                         f"type '{type(value).__name__}'.")
    return value


def check_positive(value, name, cls_name):
    if not value > 0:
        raise ValueError(f"For '{cls_name}', the '{name}' must be a positive float, but got {value}.")
    return value


def check_non_negative(value, name, cls_name):
    if not value >= 0:
        raise ValueError(f"For '{cls_name}', the argument '{name}' must be at least 0.0, but got {value}.")
    return value
