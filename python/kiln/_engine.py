"""Kiln's engine services: the names of the C++ core (kiln._core) that are not ops and that Kiln's Python code outside
kiln/ops, the Tensor class and the bootstrap modules uses (issue 23, "one narrow boundary";
docs/decisions/core-boundary.md). Ops go through kiln.ops (raw kernels: kiln.ops._kernels); everything else that
crosses the boundary is listed here, one name a line with what it is, so the boundary is this enumerable list
(tests/python/test_import_boundaries.py checks that only the allowed modules import kiln._core)."""
from ._loader import _core


# ---- Classes the core defines
Tensor = _core.Tensor  # kiln.Tensor itself, for modules that load before kiln.common.tensor or that it imports
DType = _core.DType  # the dtype enum, kiln.common.dtype.DType (kiln/common/dtype.py names its members)

# ---- Autodiff
# grad_level() -> int: how many grad transforms (GradScope) are active on this thread (0: none)
grad_level = _core.grad_level
gradient = _core.gradient  # gradient(outputs, sens, leaves) -> list: runs the tape backward (the autodiff engine)
# record_custom(inputs, values, bprop) -> list: records a Python-defined bprop on the tape
record_custom = _core.record_custom
GradScope = _core.GradScope  # one active grad transform: ops on watched tensors are taped inside its `with` block
IsolatedTape = _core.IsolatedTape  # a fresh autodiff context for a closed differentiation inside a bprop (recompute)

# ---- Graph capture, compiled graphs and deployment
tracing = _core.tracing  # tracing() -> bool: whether a graph trace (kiln.jit, Graph mode) is recording on this thread
Trace = _core.Trace  # records ops into a new graph inside its `with` block (the graph compiler's capture)
SubGraph = _core.SubGraph  # a graph held by a control-flow node (optimized and compiled)
Executable = _core.Executable  # a compiled graph, run by the C++ executor
# _tensor_signature(*args): the shape/dtype key of call arguments (jit's cache key)
_tensor_signature = _core._tensor_signature
# deploy_to_bytes(graph, weight_names, input_names, output_names) -> bytes: serializes a Graph
deploy_to_bytes = _core.deploy_to_bytes
deserialize_graph = _core.deserialize_graph  # deserialize_graph(data) -> (Graph, names): the inverse of deploy_to_bytes
# _set_symbolic_shape_hook(fn): the hook for Tensor.shape of symbolic tensors
_set_symbolic_shape_hook = _core._set_symbolic_shape_hook

# ---- Data sinking
BatchQueue = _core.BatchQueue  # bounded thread-safe FIFO of batches, fed to run_sink (data sinking)
# run_sink(executables, queue, steps, check_signals) -> tuple: runs compiled steps off a BatchQueue
run_sink = _core.run_sink
# _tensors_from_arrays(row): NumPy arrays to Tensors in one call (datasets, sinking)
_tensors_from_arrays = _core._tensors_from_arrays

# ---- Dtypes
promote_types = _core.promote_types  # promote_types(DType, DType) -> DType: the core's dtype promotion table
dtype_numpy_name = _core.dtype_numpy_name  # dtype_numpy_name(DType) -> str: the NumPy name of a dtype

# ---- Random streams
reset_random_streams = _core.reset_random_streams  # reset_random_streams(): restarts the random-op streams (set_seed)

# ---- Communication groups
comm_group_rank = _core.comm_group_rank  # comm_group_rank(group) -> int: this process's rank in a communication group
# comm_group_size(group) -> int: the number of processes in a communication group
comm_group_size = _core.comm_group_size
comm_has_group = _core.comm_has_group  # comm_has_group(name) -> bool: whether a communication group exists
# comm_create_group(name, ranks): creates a communication group of these world ranks (collective: every member calls it)
comm_create_group = _core.comm_create_group
comm_destroy_group = _core.comm_destroy_group  # comm_destroy_group(name): forgets a group made by comm_create_group
comm_group_ranks = _core.comm_group_ranks  # comm_group_ranks(name) -> list[int]: a group's world ranks, in group order
# comm_init(rank, size, host, port, iface, timeout_ms, backend, token): joins the world group (blocks for every rank)
comm_init = _core.comm_init
comm_release = _core.comm_release  # comm_release(): leaves the world group and drops every group

# ---- kiln.runtime: allocator, CPU, low precision, profiler
_allocator_stats = _core._allocator_stats  # _allocator_stats() -> dict: the host allocator's counters (runtime.memory)
_empty_cache = _core._empty_cache  # _empty_cache(): returns the allocator's cached blocks to the OS
_reset_peak_in_use = _core._reset_peak_in_use  # _reset_peak_in_use(): resets the allocator's peak-in-use counter
# _reset_peak_reserved(): resets the allocator's peak-reserved counter
_reset_peak_reserved = _core._reset_peak_reserved
_set_cache_limit = _core._set_cache_limit  # _set_cache_limit(nbytes) -> int: caps the allocator's cache
_onednn_isa = _core._onednn_isa  # _onednn_isa() -> str: the ISA oneDNN's kernels use (runtime.cpu)
# _low_precision_mode() -> str: how float16/bfloat16 ops run (native or via float32)
_low_precision_mode = _core._low_precision_mode
# _set_low_precision_mode(mode): sets how float16/bfloat16 ops run
_set_low_precision_mode = _core._set_low_precision_mode
# _low_precision_path(dtype) -> str: the path a low-precision dtype takes
_low_precision_path = _core._low_precision_path
# _native_low_precision_supported(dtype) -> bool: the CPU has the instructions
_native_low_precision_supported = _core._native_low_precision_supported
# _native_low_precision_fast(dtype) -> bool: native low precision is the fast path
_native_low_precision_fast = _core._native_low_precision_fast
_profiler_enable = _core._profiler_enable  # _profiler_enable(): starts the core's per-op profiler
_profiler_disable = _core._profiler_disable  # _profiler_disable(): stops the core's per-op profiler
_profiler_enabled = _core._profiler_enabled  # _profiler_enabled() -> bool: whether the per-op profiler runs
_profiler_snapshot = _core._profiler_snapshot  # _profiler_snapshot() -> list: the op records collected so far

# ---- Files and errors
# write_file_atomic(path, data, ...): crash-safe file write (temp file + fsync + rename)
write_file_atomic = _core.write_file_atomic
# atomic_write_host_tag() -> str: the host tag in write_file_atomic's temp names
atomic_write_host_tag = _core.atomic_write_host_tag
core_file = _core.__file__  # path of the loaded kiln._core extension (the compile cache's fingerprint)
# _user_location() -> str: file:line of the user frame calling into Kiln (error messages)
_user_location = _core._user_location
