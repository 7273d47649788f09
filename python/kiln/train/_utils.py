"""`mindspore.train._utils`: the two helpers of MindSpore's private module that programs import from it (mindcv's
callbacks: `from mindspore.train._utils import _make_directory`) and that Kiln's summary code uses."""
import os

__all__ = ["_make_directory", "check_value_type"]


def _make_directory(path, arg_name="path"):
    """The real path of directory `path`, created (mode 0o700, with parents) when missing (MindSpore 2.10's).

    Raises:
        TypeError: `path` is not a str ("The <arg_name> is invalid, the type should be string.").
        ValueError: `path` is blank.
        NotADirectoryError: `path` is an existing file."""
    if not isinstance(path, str):
        raise TypeError(f"The {arg_name} is invalid, the type should be string.")
    if path.strip() == "":
        raise ValueError(f"The {arg_name} is invalid, it should be non-blank.")
    path = os.path.realpath(path)
    if os.path.exists(path):
        if not os.path.isdir(path):
            raise NotADirectoryError(f"The path({path}) is a file path, it should be a directory path.")
    else:
        os.makedirs(path, mode=0o700, exist_ok=True)
    return path


def check_value_type(arg_name, arg_value, valid_types):
    """TypeError unless `arg_value` is an instance of `valid_types` (a type or a list/tuple of types); a bool is not
    an int unless bool is listed (MindSpore 2.10's message: "For `<arg_name>` the type should be a valid type of
    [...], but got <type>.")."""
    valid_types = tuple(valid_types) if isinstance(valid_types, (list, tuple)) else (valid_types,)
    if not isinstance(arg_value, valid_types) or (isinstance(arg_value, bool) and bool not in valid_types):
        raise TypeError(f"For `{arg_name}` the type should be a valid type of {[t.__name__ for t in valid_types]}, "
                        f"but got {type(arg_value).__name__}.")
