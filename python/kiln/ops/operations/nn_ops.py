"""`mindspore.ops.operations.nn_ops`: the Primitive classes MindSpore keeps in this module that Kiln has, as the
same class objects as kiln.ops.operations (re-exported by kiln/ops/_ms_layout.py; never a second definition)."""
from .._ms_layout import reexport

reexport(globals(), "operations", "nn_ops")  # binds the names, __all__ and __getattr__
