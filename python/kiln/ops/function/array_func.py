"""`mindspore.ops.function.array_func`: the functions MindSpore keeps in this module that Kiln has, as the same
function objects as kiln.ops (re-exported by kiln/ops/_ms_layout.py; never a second definition)."""
from .._ms_layout import reexport

reexport(globals(), "function", "array_func")  # binds the names, __all__ and __getattr__
