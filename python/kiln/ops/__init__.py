"""kiln.ops — MindSpore's `mindspore.ops`: the functional op API, autodiff functions and primitives."""
from .function import *  # noqa: F403 (re-export)
from .function import abs, max, min, pow, sum  # noqa: F401 (re-export)
from ..common.api import grad, value_and_grad, get_grad  # noqa: F401 (re-export)
from .primitives import *  # noqa: F403 (re-export)
from . import operations
from . import functional

P = operations
F = functional
from .clip import *  # noqa: F403, E402  (clip_by_value for tuples too, clip_by_global_norm)
from .math_extra import *  # noqa: F403, E402  (cos, sin, floor, ceil)
from .logical_reduce import all, any  # noqa: F401, E402  (ReduceAll / ReduceAny)
from .nn_func import *  # noqa: F403, E402  (conv2d, max_pool2d, avg_pool2d, batch_norm, layer_norm, ...)
from .activation_func import *  # noqa: F403, E402  (log1p, softplus, logsigmoid, relu6, hardsigmoid)
from .array_func import *  # noqa: F403, E402  (tile, one_hot, gather_nd, repeat_elements, reciprocal, dtype)
from .primitives_array import *  # noqa: F403, E402  (Primitive classes of array/comparison/creation ops)
from .comm_ops import ReduceOp, AllReduce, AllGather, ReduceScatter, AlltoAll, AlltoAllV, Broadcast, Barrier  # noqa: F401,E402 (re-export; kiln.ops is assembled in order)
from . import composite  # noqa: E402 (kiln.ops is assembled in order)
from .composite import GradOperation, MultitypeFuncGraph, HyperMap, Map, partial, constexpr, add_flags  # noqa: F401,E402 (re-export; kiln.ops is assembled in order)
C = composite
from ._autodiff_api import vjp, jvp, jacfwd, jacrev, vmap, HookBackward, InsertGradientOf  # noqa: F401,E402  (function transforms)
from .primitives_tutorial import ApplyMomentum, Dropout2D, Dropout3D, TransposeView  # noqa: F401,E402 (re-export; kiln.ops is assembled in order)
from .index_func import *  # noqa: F403, E402  (slice, strided_slice, flip, roll, tril, masked_fill, scatter_nd, ...)
from .math_func import *  # noqa: F403, E402  (round, logsumexp, norm, linspace, range, assign_add, bias_add, ...)
from .math_func import range, round  # noqa: F401, E402 (re-export; kiln.ops is assembled in order)
from .index_func import slice  # noqa: F401, E402 (re-export; kiln.ops is assembled in order)
from .loss_func import *  # noqa: F403, E402  (cross_entropy, binary_cross_entropy(_with_logits), dropout, ...)
from .primitives_nn import *  # noqa: F403, E402  (Conv2D, MaxPool, AvgPool)
from .scatter_func import *  # noqa: F403, E402  (tensor_scatter_*, scatter_nd_*, scatter_add/update)
from .trig_func import *  # noqa: F403, E402  (tan, sinh, cosh, asinh, acosh, atanh, expm1)
from .nnact_func import *  # noqa: F403, E402  (celu, elu, selu, silu, mish, glu, hardtanh, prelu, softmin, ...)
from .nnpool_func import *  # noqa: F403, E402  (max_pool3d, avg_pool3d, adaptive_max_pool2d, lp_pool2d, max_unpool2d, lrn, ...)
from .nnconv_func import *  # noqa: F403, E402  (conv3d, conv3d_transpose)
from .nnloss_func import *  # noqa: F403, E402  (cosine_similarity, ctc_loss, triplet_margin_loss, dense, embedding, ...)
from .nnsample_func import *  # noqa: F403, E402  (affine_grid, grid_sample, upsample)
from .nnmisc_func import *  # noqa: F403, E402  (dropout1d, channel_shuffle, bidense)
from .scan_func import *  # noqa: F403, E402  (cumsum, cumprod, CumSum, CumProd)
from .bbox_func import *  # noqa: F403, E402  (iou, bounding_box_encode/decode, check_valid, FloatStatus)
from .detect_func import *  # noqa: F403, E402  (NMSWithMask, ROIAlign)
from .primitives_extra import *  # noqa: F403, E402  (MaxPool3D)
from .ctc_prim import *  # noqa: F403, E402  (CTCLoss)
from .resize_func import *  # noqa: F403, E402  (interpolate, ResizeNearestNeighbor, ResizeBilinearV2)
from .math_elem_func import *  # noqa: F403, E402  (atan, atan2, asin, acos, log2, fmod, hypot, isnan, ...)
from .math_misc_func import *  # noqa: F403, E402  (copysign, hypot, isnan, isinf, nan_to_num, sinc, xlogy, ...)
from .complex_func import *  # noqa: F403, E402  (real, imag, conj, angle, view_as_real, Complex, ComplexAbs)
from .math_reduce_func import *  # noqa: F403, E402  (std, var, median, quantile, cummax, cummin, histc, cov, ...)
from .math_norm_func import *  # noqa: F403, E402  (cdist, dist, pdist, renorm, vector_norm, matrix_norm)
from .math_special_func import *  # noqa: F403, E402  (erfc, erfinv, lgamma, digamma, polygamma, zeta, i0, bessel_i*)
from .math_int_func import *  # noqa: F403, E402  (bitwise_and/or/xor, shifts, invert, gcd, lcm, population_count)
from .linalg_func import *  # noqa: F403, E402  (mm, bmm, addmm, einsum, kron, tensor_dot, cross, ...)
from .linalg_lu_func import *  # noqa: F403, E402  (det, slogdet, logdet, inverse by a pivoted LU)
from .search_func import *  # noqa: F403, E402  (index_select, masked_select, searchsorted, unique, ...)
from .scatter_ext_func import *  # noqa: F403, E402  (tensor_scatter_mul/div/max/min, scatter, unsorted_segment_*)
from .random_func import *  # noqa: F403, E402  (bernoulli, multinomial, randperm, windows, logspace, ...)
from .diag_func import *  # noqa: F403, E402  (diagonal, diag_embed, pixel_shuffle, space_to_batch_nd, unfold, fold, ...)
from .shape_func import *  # noqa: F403, E402  (hstack, tensor_split, rot90, moveaxis, swapaxes, take, ...)
from .shape_tensor_func import *  # noqa: F403, E402  (dyn_shape / TensorShape)
from .build_func import *  # noqa: F403, E402  (cartesian_prod, combinations, block_diag, vander)
from .primitives_zoo import *  # noqa: F403, E402  (Erf, LpNorm, Softplus, KLDivLoss, CropAndResize, matrix_solve, ...)
from .primitives_sparse_optim import *  # noqa: F403, E402  (FusedSparseAdam, FusedSparseLazyAdam, FusedSparseFtrl, ...)

from .control_flow import WhileLoop, ForiLoop, Scan, switch  # noqa: F401,E402  (compiled into While/If nodes)
from .summary_ops import ScalarSummary, ImageSummary, TensorSummary, HistogramSummary  # noqa: F401,E402  (to SummaryRecord)


from . import _opdef  # noqa: E402 (the @defop surfaces go in last, over the modules above)
from .primitives import Primitive  # noqa: E402 (the @defop surfaces go in last, over the modules above)
from ..common.tensor import Tensor as _Tensor  # noqa: E402 (the @defop surfaces go in last, over the modules above)
_opdef.install(globals(), operations, Primitive, _Tensor)  # the surfaces of the @defop ops (kiln/ops/_opdef.py)


def _fill_operations():
    """`ops.operations` (P) holds every Primitive class of kiln.ops, as mindspore.ops.operations does (P.StridedSlice,
    P.Conv2D, P.AllReduce, ...): the classes defined in the modules imported above are added to it here."""
    for _name, _value in list(globals().items()):
        if isinstance(_value, type) and issubclass(_value, Primitive) and not hasattr(operations, _name):
            setattr(operations, _name, _value)


_fill_operations()
operations.ReduceOp = ReduceOp  # mindspore.ops.operations.ReduceOp (P.ReduceOp.SUM), as MindSpore's module has it

# mindspore.ops.composite re-exports these functional ops (C.clip_by_value, C.ones_like, ...): the same functions.
_COMPOSITE_OPS = ("batch_dot", "clip_by_global_norm", "clip_by_value", "count_nonzero", "cummin", "dot", "laplace",
                  "matmul", "mm", "multinomial", "normal", "ones_like", "repeat_elements", "repeat_interleave",
                  "sequence_mask", "tensor_dot", "uniform", "vecdot", "zeros_like")


def _fill_functional_and_composite():
    """`ops.functional` (F) holds every function of kiln.ops (MindSpore's module is the whole functional API:
    F.tuple_to_array, F.assign_add, ...); `ops.composite` (C) the functional ops MindSpore re-exports there."""
    import types
    for name, value in list(globals().items()):
        if name.startswith("_") or isinstance(value, (type, types.ModuleType)) or not callable(value):
            continue
        if not hasattr(functional, name):
            setattr(functional, name, value)
    for name in _COMPOSITE_OPS:
        if not hasattr(composite, name):
            setattr(composite, name, globals()[name])


_fill_functional_and_composite()

# MindSpore's module layout: mindspore.ops.operations.<sub> (math_ops, nn_ops, _grad_ops, ...) and
# mindspore.ops.function.<sub> (math_func, nn_func, grad, ...) re-export the objects above (kiln/ops/_ms_layout.py).
from . import _ms_layout  # noqa: E402 (after kiln.ops is assembled: the submodules re-export its objects)
_ms_layout.import_all()
