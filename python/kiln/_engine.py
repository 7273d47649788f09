"""Kiln's engine services: the names of the C++ core (kiln._core) that are not ops and that Kiln's Python code outside
kiln/ops, the Tensor class and the bootstrap modules uses (issue 23, "one narrow boundary";
docs/decisions/core-boundary.md). Ops go through kiln.ops (raw kernels: kiln.ops._kernels); everything else that
crosses the boundary is listed here, one name a line with what it is, so the boundary is this enumerable list
(tests/python/test_import_boundaries.py checks that only the allowed modules import kiln._core)."""
from ._loader import _core

GradScope = _core.GradScope  # one active grad transform: ops on watched tensors are taped inside its `with` block
IsolatedTape = _core.IsolatedTape  # a fresh autodiff context for a closed differentiation inside a bprop (recompute)
comm_group_rank = _core.comm_group_rank  # comm_group_rank(group) -> int: this process's rank in a communication group
# comm_group_size(group) -> int: the number of processes in a communication group
comm_group_size = _core.comm_group_size
# grad_level() -> int: how many grad transforms (GradScope) are active on this thread (0: none)
grad_level = _core.grad_level
gradient = _core.gradient  # gradient(outputs, sens, leaves) -> list: runs the tape backward (the autodiff engine)
# record_custom(inputs, values, bprop) -> list: records a Python-defined bprop on the tape
record_custom = _core.record_custom
tracing = _core.tracing  # tracing() -> bool: whether a graph trace (kiln.jit, Graph mode) is recording on this thread
