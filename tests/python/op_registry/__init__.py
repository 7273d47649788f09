"""Kiln's op test registry: one OpInfo per op (PyTorch's OpInfo idea), from which tests/python/test_op_registry.py
generates the forward-vs-NumPy, gradient-vs-finite-difference, PyNative-vs-Graph and dtype-promotion tests.

Every C++ op in `kiln._core.op_names()` must be named in some entry's `ops` (as the op the entry calls, or as a
building block of it: BroadcastTo via broadcast_to, StridedSliceGrad via the gradient of slicing, Fill via zeros/
ones/full, ...), or in PASS_ONLY_OPS (or CONTROL_FLOW_OPS) with a reason. test_op_registry.py checks that, and that
every op named in an entry really appears in the graph that entry traces (so the registry cannot claim coverage it
does not have).

Adding an op = adding one OpInfo to its family's module (elementwise, array, nn, state; the machinery is in base):
a callable, a sample generator, a NumPy reference, dtypes, tolerances.

Kinds of entries:
  "op"     (default) a function of tensors: forward vs `ref`, gradient (if differentiable), Graph parity.
  "random" random ops: shape/dtype/range/moments and seed determinism instead of values (PyNative and Graph).
  "state"  in-place ops on Parameters (Assign, optimizer kernels): `run(sample, use_jit)` returns the resulting
           state as NumPy arrays; compared with `ref(sample)` and between PyNative and Graph.

Note [dtype rules]: expected result dtypes are NumPy's (NumPy 2, NEP 50: Python scalars are "weak"), except where
Kiln follows MindSpore, applied in this order by `kiln_result_dtype`:
  R-cat  a float tensor combined with an int/bool tensor keeps the float tensor's dtype (MindSpore/PyTorch's category
         rule; NumPy widens: float16 + int32 -> float64, float32 + int64 -> float64).
  R-f32  Kiln's default float is float32: where NumPy makes float64 although no float64 tensor is an input (true
         division of ints, exp/log/sqrt/mean of ints, int tensor with a Python float), Kiln makes float32.
  R-bool bool (op) bool for Sub/FloorDiv/FloorMod/Pow stays Bool in Kiln (NumPy: int8, or TypeError for
         subtraction); listed per entry in `dtype_exceptions` and not used as forward samples.

Note [special values]: test_op_registry.py runs every "op" entry (float16, float32 and float64 samples) with special values
put into each float input: NaN (element 0), ±inf (first and last element), and 1000 / −1000 / 0 (first, last and
middle element). The result must equal the reference's (NumPy: NaN in gives NaN out unless the op defines otherwise —
comparisons, argmax's first NaN, max/min picking NaN as np.maximum does; overflow to ±inf as the reference's result
rounded to the output dtype), in PyNative and under kiln.jit. For gradients (float64) it puts 0, 1000 and −1000 into
element 0 of each differentiated input: where the function is smooth there (equal one-sided finite differences),
the gradient must equal the central difference (so it is finite where the function is); where it is not (a kink,
a jump or a one-sided domain), the entry must list the point in `kinks` with the derivative Kiln defines there
(None: a singularity, only required not to crash) — an undocumented kink fails. Points where the function value is
not finite (log 0, exp 1000, 1/0) have no gradient to check. Exceptions are per entry (special_skip, special_ok,
special_ref) with their reason.
"""
from .base import *  # noqa: F403  (the entry type, samples, dtypes, lookups)
from .base import (CONTROL_FLOW_OPS, DEFAULT_TOL, MULTI_PROCESS_OPS, PASS_ONLY_OPS, REGISTRY,  # noqa: F401 (re-export)
                   covered_ops, entries, kiln_result_dtype,
                   np_value, samples_of, to_kiln)
# The families register their entries when imported (nn uses state's helpers, so state comes first).
from . import elementwise, array, state, nn, composite  # noqa: F401 (re-export)
from . import nnfunc, nnfunc_loss  # noqa: F401  (NN-functional ops: activations, pooling, losses)
from . import opsmath, opsmath_reduce, opsmath_special  # noqa: F401 (re-export)
from . import shapes, indexing, sampling  # noqa: F401  (kiln/ops: shape_, search_, scatter_ext_, random_func)
from . import shape_tensor  # noqa: F401  (ops.dyn_shape)
from . import tensor_methods  # noqa: F401  (the hand-written Tensor methods)
from . import complex_ops  # noqa: F401  (kiln/ops/complex_func.py: real, imag, conj, angle, view_as_real)
from .state import LAST_JIT  # noqa: F401 (re-export)
