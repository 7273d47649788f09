"""Per-op PyNative call cost against PyTorch eager, for every entry of the op test registry (issue 23).

For each entry of tests/python/op_registry (so a new registry row is measured without touching this script):
  - Kiln: the entry's own callable, `entry.op(*args, **kwargs)`, on its first small sample (float32 where the entry
    has float32 samples, else its first dtype; the first sample whose arrays are non-empty, contiguous and hold at
    most 64 elements, else the first non-empty contiguous one, else the first). "random" entries call
    `entry.draw((8, 8), dtype)`. "state" entries (Parameters built inside `entry.run`) are listed, not timed.
    What is timed is the registry callable as the tests call it: where a row wraps the op (a lambda that turns a
    NumPy kwarg into a Tensor, a Cell, a composite written in the row), that is part of the figure.
  - PyTorch eager: the equivalent call from TORCH below (data: a callable's name or a lambda, as text, evaluated in
    the torch process), on the same arrays (sent as a pickle of NumPy arrays); a name that is not in TORCH is tried
    as torch.NAME, torch.special.NAME, torch.linalg.NAME and torch.nn.functional.NAME. Every peer call is checked
    once against Kiln's result (same shapes, values within 1e-3 relative / 1e-4 absolute; for random entries the
    shapes only): one that differs is shown as "no peer" with the reason, never with a ratio. Integer arrays that a
    torch call refuses (index ops want int64) are retried as int64. An in-place method's row (Tensor.add_, ...)
    writes a copy of its input, so its peer is x.clone().add_(...), the same work.
  - Graph nodes: the entry traced under kiln.jit (its first graph), counted as ops (`= Op(` lines of to_text(),
    constants not counted): "traced" (graph_before) and "compiled" (after the passes). The issue's target is one
    node for each.

Timing: each framework runs in a worker process of its own (Kiln: this python; torch: --torch-python), with
OMP/MKL/OpenBLAS_NUM_THREADS = --threads (and torch.set_num_threads). The parent drives both over a JSON-lines
protocol on stdin/stdout: for each round, for each op, one timed run in Kiln and one in torch (the order alternates
by round), so that load drifts hit both alike. A run is n calls, n calibrated per op and framework so that a run
takes about --min-time seconds (benchmarks/_timing.py: calls_for, time_calls); the last output of each run is read
back. Reported: the median over --rounds rounds of the per-call time, and the min. ratio = Kiln median / torch
median.

    .venv/bin/python benchmarks/bench_op_calls.py --torch-python benchmarks/.venv-peers/bin/python
    .venv/bin/python benchmarks/bench_op_calls.py --only 'atan2,erfinv,getitem*,reshape,gather' --quick
(benchmarks/setup_peers.sh --only torch makes benchmarks/.venv-peers with torch alone). A missing peer python is
reported and the Kiln figures are printed all the same. --json FILE writes every figure.
"""
import argparse
import fnmatch
import json
import math
import os
import pickle
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
REGISTRY_DIR = os.path.join(ROOT, "tests", "python")
PROTO = "@@opbench "  # prefix of the workers' protocol lines on stdout (anything else they print is ignored)
RANDOM_SHAPE = (8, 8)
SMALL = 64  # elements: the largest array of a "small" sample

# ---------------------------------------------------------------------------------------------- the torch table
# Registry entry name -> the PyTorch eager call, as text evaluated in the torch process with torch, F
# (torch.nn.functional), math and the helpers of _torch_namespace() in scope:
#   "torch.xxx" (any dotted name): called as f(*args, **kwargs) with kwargs renamed (KWARG_RENAMES), or, if that
#                raises, as f(*args, *kwargs.values());
#   "lambda ...": called with the sample's own args and kwargs (random entries: lambda shape, dtype);
#   ("lambda ...", "lambda ..."): the first, untimed, turns the sample's args and kwargs into the second's args
#                (what a PyTorch user would have written as constants: x[1:, 0:2] rather than a key built per call).
# Names not listed are looked up as torch.NAME / torch.special.NAME / torch.linalg.NAME / F.NAME (same calls).
# NO_PEER: entries with no PyTorch eager equivalent, and why. Where PyTorch has no single op, the lambda is what a
# PyTorch user writes (a composite of a few calls): it is marked "composite" in NOTES.
KWARG_RENAMES = {"axis": "dim", "keepdims": "keepdim", "input_perm": "dims"}

TORCH = {
    # elementwise and comparisons
    "floor_div": "torch.floor_divide", "floor_mod": "torch.remainder", "equal": "torch.eq",
    "operator.add": "lambda x, y: x + y", "operator.sub": "lambda x, y: x - y", "operator.mul": "lambda x, y: x * y",
    "operator.truediv": "lambda x, y: x / y", "operator.pow": "lambda x, y: x ** y",
    "operator.floordiv_mod": "lambda x, y: (x // y, x % y)",
    "operator.compare": "lambda x, y: (x < y, x >= y, x == y, x != y)",
    "operator.logic": "lambda x, y: (x & y, x | y, x ^ y)", "operator.neg": "lambda x: -x",
    "gelu_tanh": "lambda x: F.gelu(x, approximate='tanh')", "cast": "lambda x, dtype: x.to(dtype)",
    "identity": "torch.clone", "tensor_copy_ctor": "torch.clone", "tensor_copy": "torch.clone",
    "stop_gradient": "lambda x: x.detach()", "depend": "lambda x, y: (y * 2.0, x)[1]",
    "softplus_beta": "lambda x: F.softplus(x, beta=2, threshold=5)",
    "nn.LogSigmoid": "F.logsigmoid", "nn.Softplus": "F.softplus", "nn.Mish": "F.mish", "nn.ReLU6": "F.relu6",
    "nn.HSigmoid": "F.hardsigmoid", "nn.HSwish": "F.hardswish", "nn.SiLU": "F.silu",
    "nn.FastGelu": "lambda x: x * torch.sigmoid(1.702 * x)", "nn.ELU": "F.elu",
    "nn.LeakyReLU": "lambda x: F.leaky_relu(x, 0.2)", "nn.Softsign": "F.softsign",
    "celu": "lambda x: F.celu(x, 2.0)", "softshrink": "lambda x: F.softshrink(x, 0.75)",
    "hardtanh": "lambda x: F.hardtanh(x, -0.5, 2.0)", "leaky_relu": "lambda x: F.leaky_relu(x, 0.2)",
    "threshold": "lambda x: F.threshold(x, 0.25, 9.0)", "fast_gelu": "lambda x: x * torch.sigmoid(1.702 * x)",
    "swiglu": "lambda x, axis=-1: (lambda a, b: F.silu(a) * b)(*x.chunk(2, axis))",
    "softmin": "lambda x: F.softmin(x, -1)",
    "truncate_div": "lambda x, y: torch.div(x, y, rounding_mode='trunc')", "truncate_mod": "torch.fmod",
    "xdivy": "lambda x, y: torch.where(x == 0, 0.0, x / y)", "inv": "torch.reciprocal",
    "bessel_i0": "torch.i0", "bessel_i0e": "torch.special.i0e", "bessel_i1": "torch.special.i1",
    "bessel_i1e": "torch.special.i1e", "invert": "torch.bitwise_not", "round_int": "torch.round",
    # reductions
    "sum": "red(torch.sum)", "tensor.sum": "red(torch.sum)", "mean": "red(torch.mean)", "prod": "red(torch.prod)",
    "amax": "red(torch.amax)", "amin": "red(torch.amin)", "argmax": "red(torch.argmax)",
    "argmin": "red(torch.argmin)",
    "max_with_indices": "lambda x, axis: torch.max(x, axis)",
    "min_with_indices": "lambda x, axis: torch.min(x, axis)",
    "var": "lambda x: torch.var(x, correction=0)", "std": "lambda x: torch.std(x, correction=0)",
    "var_mean": "lambda x: torch.var_mean(x, correction=0)", "std_mean": "lambda x: torch.std_mean(x, correction=0)",
    "cummax": "lambda x, axis: torch.cummax(x, axis)",
    "cummin": "lambda x, axis: torch.cummin(x, axis)", "logcumsumexp": "torch.logcumsumexp",
    "median": "lambda x: torch.median(x, -1)", "nanmedian": "lambda x: torch.nanmedian(x, -1)",
    "CumSum": "lambda x, axis: torch.cumsum(x, axis)", "CumProd": "lambda x, axis: torch.cumprod(x, axis)",
    "trapz": "torch.trapezoid", "addn": "lambda *xs: sum(xs[1:], xs[0])",
    "renorm": "lambda x, p, axis, maxnorm: torch.renorm(x, p, axis, maxnorm)",
    # shapes, views, indexing
    "transpose": "lambda x, input_perm: x.permute(input_perm)", "tensor.T": "lambda x: x.permute(2, 1, 0)",
    "broadcast_to": "lambda x, shape: torch.broadcast_to(x, shape)",
    "concat": "lambda *xs, axis: torch.cat(xs, axis)", "stack": "lambda *xs, axis: torch.stack(xs, axis)",
    "split": "lambda x, sizes, axis: torch.split(x, sizes, axis)",
    "expand_dims_squeeze": "lambda x, axis: (x.unsqueeze(axis), x.unsqueeze(axis).squeeze(axis))",
    "flatten": "lambda x: torch.flatten(x, 1)", "getitem_basic": "lambda x, key: x[key]",
    "getitem_advanced": "lambda x, key: x[key]", "gather": "lambda x, idx, axis: torch.index_select(x, axis, idx)",
    "repeat_elements": "lambda x, rep, axis: torch.repeat_interleave(x, rep, axis)",
    "one_hot": "lambda i, depth, on_value, off_value, axis: torch.where(F.one_hot(i, depth).bool(), "
               "torch.from_numpy(on_value), torch.from_numpy(off_value))",
    "gather_nd": "lambda x, idx: x[idx.unbind(-1)]",
    "pad": "lambda x, padding, mode, value=None: F.pad(x, padding, mode, value)",
    "sort": "lambda x, axis, descending: torch.sort(x, axis, descending)",
    "argsort": "lambda x, axis, descending: torch.argsort(x, dim=axis, descending=descending)",
    "topk": "lambda x, k, dim, largest: torch.topk(x, k, -1 if dim is None else dim, largest)",
    "top_k": "lambda x, k: torch.topk(x, k)",
    "unsorted_segment_sum": "lambda x, ids, n: torch.zeros((n,) + x.shape[ids.dim():], dtype=x.dtype)"
                            ".index_add_(0, ids, x)",
    "unsorted_segment_max": "lambda x, ids, n: seg(x, ids, n, 'amax')",
    "unsorted_segment_min": "lambda x, ids, n: seg(x, ids, n, 'amin')",
    "unsorted_segment_prod": "lambda x, ids, n: seg(x, ids, n, 'prod')",
    "tensor_scatter_update": "lambda x, i, u: x.index_put(i.unbind(-1), u)",
    "tensor_scatter_add": "lambda x, u, indices: x.index_put(torch.from_numpy(indices).unbind(-1), u, True)",
    "tensor_scatter_sub": "lambda x, u, indices: x.index_put(torch.from_numpy(indices).unbind(-1), -u, True)",
    "tensor_scatter_mul": "lambda x, i, u: x.index_reduce(0, i[:, 0], u, 'prod')",
    "tensor_scatter_max": "lambda x, i, u: x.index_reduce(0, i[:, 0], u, 'amax')",
    "tensor_scatter_min": "lambda x, i, u: x.index_reduce(0, i[:, 0], u, 'amin')",
    "scatter_nd": "lambda u, indices, shape: torch.zeros(shape, dtype=u.dtype).index_put_("
                  "torch.from_numpy(indices).unbind(-1), u, True)",
    "tensor_scatter_elements": "lambda x, i, u, axis, reduction: torch.scatter_add(x, axis, i, u)",
    "setitem_functional": "lambda x, value, key: setitem(x, key, value)",
    "zeros_ones_full": "lambda shape, dtype, value: torch.zeros(shape, dtype=dtype) if value == 0 else "
                       "torch.ones(shape, dtype=dtype) if value == 1 else torch.full(shape, value, dtype=dtype)",
    "zeros_like_ones_like": "lambda x: (torch.zeros_like(x), torch.ones_like(x), torch.full_like(x, 2))",
    "arange": "lambda start, end, step, dtype: torch.arange(start, end, step, dtype=dtype)",
    "arange_default_dtype": "lambda start, end, step: torch.arange(start, end, step)",
    "slice": ("lambda x, begin, size: (x, tuple(slice(b, None if s == -1 else b + s) for b, s in zip(begin, size)))",
              "lambda x, key: x[key]"),
    "strided_slice": "lambda x, begin, end, strides, masks, key: x[key]",
    "ReverseV2": "lambda x, dims: torch.flip(x, dims)",
    "gather_elements": "lambda x, dim, index: torch.gather(x, dim, torch.from_numpy(index))",
    "GatherD": "lambda x, dim, index: torch.gather(x, dim, torch.from_numpy(index))",
    "gather_d": "torch.gather",
    "unstack": "lambda x, axis: torch.unbind(x, axis)",
    "meshgrid": "lambda *xs, indexing: torch.meshgrid(*xs, indexing=indexing)",
    "DepthToSpace": "lambda x, b: depth_to_space(x, b)",
    "bias_add": "lambda x, b: x + b.view([-1] + [1] * (x.dim() - 2))",
    "bincount": "lambda x: torch.bincount(x[x >= 0])", "aminmax": "lambda x: torch.aminmax(x, dim=0)",
    "scatter_mul": "lambda x, i, u: x.index_reduce_(0, i, u, 'prod')",
    "scatter_max": "lambda x, i, u: x.index_reduce_(0, i, u, 'amax')",
    "scatter_min": "lambda x, i, u: x.index_reduce_(0, i, u, 'amin')",
    "scatter_nd_mul": "lambda x, i, u: x.index_reduce_(0, i[:, 0], u, 'prod')",
    "scatter_nd_max": "lambda x, i, u: x.index_reduce_(0, i[:, 0], u, 'amax')",
    "scatter_nd_min": "lambda x, i, u: x.index_reduce_(0, i[:, 0], u, 'amin')",
    "hstack": "lambda *xs: torch.hstack(xs)", "vstack": "lambda *xs: torch.vstack(xs)",
    "row_stack": "lambda *xs: torch.vstack(xs)", "dstack": "lambda *xs: torch.dstack(xs)",
    "column_stack": "lambda *xs: torch.column_stack(xs)",
    "tensor_split": "lambda x, ios, axis: torch.tensor_split(x, ios, axis)",
    "hsplit": "lambda x, ios: torch.hsplit(x, ios)", "vsplit": "lambda x, ios: torch.vsplit(x, ios)",
    "dsplit": "lambda x, ios: torch.dsplit(x, ios)", "chunk": "lambda x, chunks: torch.chunk(x, chunks)",
    "expand": "lambda x, size: x.expand(size)", "expand_as": "lambda x, y: x.expand_as(y)",
    "sequence_mask": "lambda lengths, maxlen: torch.arange(maxlen) < lengths.unsqueeze(-1)",
    "type_as": "lambda x, y: x.type_as(y)", "view_as": "lambda x, y: x.view_as(y)",
    "fills": "lambda x, value: torch.full_like(x, value)",
    "size": "lambda x: torch.tensor(x.numel())",
    "Tensor.to": "lambda x: x.to(torch.float64)",  # the registry row casts to float64 (torch.Tensor.to(x) is a no-op)
    "is_floating_point": "lambda x: torch.tensor(torch.is_floating_point(x))",
    "is_complex": "lambda x: torch.tensor(torch.is_complex(x))",
    "is_tensor": "lambda x: torch.tensor(torch.is_tensor(x))",
    "is_nonzero": "lambda x: torch.tensor(torch.is_nonzero(x))",
    "block_diag": "lambda *xs: torch.block_diag(*xs)",
    "matrix_band_part": "lambda x, lower, upper: torch.triu(torch.tril(x, upper), -lower)",
    "mirror_pad": "lambda x, p, mode: F.pad(x[None], (p[1][0], p[1][1], p[0][0], p[0][1]), "
                  "'reflect' if mode == 'REFLECT' else 'replicate')[0]",
    "matrix_diag_part": "lambda x, k, pad: torch.diagonal(x, k, -2, -1)",
    "matrix_set_diag": "lambda x, d, k: torch.diagonal_scatter(x, d, k, -2, -1)",
    "matrix_diag": "torch.diag_embed",
    "index_add": "lambda x, idx, y, axis: torch.index_add(x, axis, idx, y)",
    "bucketize": "lambda x, boundaries, right=False: torch.bucketize(x, torch.tensor(boundaries), right=right)",
    "unique_consecutive": "lambda x, ri, rc: torch.unique_consecutive(x, return_inverse=ri, return_counts=rc)",
    "slice_scatter": "lambda x, s, axis, start, end, step: torch.slice_scatter(x, s, axis, start, end, step)",
    "inplace_update": "lambda x, v, i: x.index_copy(0, i, v)", "inplace_add": "lambda x, v, i: x.index_add(0, i, v)",
    "inplace_sub": "lambda x, v, i: x.index_add(0, i, v, alpha=-1)",
    "dyn_shape": "lambda x: torch.tensor(x.shape)",
    # linear algebra
    "operator.matmul": "lambda x, y: x @ y",
    "MatMul_primitive": "lambda x, y, transpose_a, transpose_b: torch.matmul(x.mT if transpose_a else x, "
                        "y.mT if transpose_b else y)",
    "pattern.dense_relu": "lambda x, w, b: torch.relu(x @ w + b)",
    "pattern.dense_gelu": "lambda x, w, b: F.gelu(x @ w + b)",
    "pattern.elementwise_chain": "lambda x, y: torch.tanh(x * y + 1.0) * torch.sigmoid(x) - torch.exp(-(x * x))",
    "dot": "torch.matmul", "ger": "torch.outer", "batch_dot": "torch.bmm",
    "tensor_dot": "lambda a, b, axes: torch.tensordot(a, b, axes)",
    "vecdot": "lambda a, b, axis=-1: torch.linalg.vecdot(a, b, dim=axis)",
    "einsum": "lambda *xs, eq: torch.einsum(eq, *xs)",
    "cross": "lambda a, b, dim=None: torch.linalg.cross(a, b, dim=-1 if dim is None else dim)",
    "matrix_power_negative": "lambda a, n: torch.linalg.matrix_power(a, n)",
    "dense": "F.linear", "bidense": "F.bilinear",
    # nn
    "conv2d": "lambda x, w, stride, padding, dilation, groups: F.conv2d(x, w, None, stride, padding, dilation, "
              "groups)",
    "conv2d_same_bias": "lambda x, w, b: conv_same(x, w, b, 2)",
    "conv_transpose2d": "lambda y, w, stride, padding, output_padding: F.conv_transpose2d(y, w, None, stride, "
                        "padding, output_padding)",
    "conv3d": "lambda x, w, b, padding, pad_mode: F.conv3d(F.pad(x, (padding[4], padding[5], padding[2], "
              "padding[3], padding[0], padding[1])), w, b)",
    "conv3d_transpose": "lambda x, w: F.conv_transpose3d(x, w)",
    "max_pool2d_indices": "lambda x, **kw: F.max_pool2d(x, return_indices=True, **kw)",
    "max_pool3d_indices": "lambda x, **kw: F.max_pool3d(x, return_indices=True, **kw)",
    "avg_pool2d": "lambda x, divisor_override=0, **kw: F.avg_pool2d(x, divisor_override=divisor_override or None, "
                  "**kw)",
    "avg_pool3d": "lambda x, divisor_override=0, **kw: F.avg_pool3d(x, divisor_override=divisor_override or None, "
                  "**kw)",
    "adaptive_max_pool2d_indices": "lambda x, output_size: F.adaptive_max_pool2d(x, output_size, True)",
    "adaptive_max_pool3d_indices": "lambda x, output_size: F.adaptive_max_pool3d(x, output_size, True)",
    "batch_norm": "lambda x, scale, bias, mean, var, training, eps: F.batch_norm(x, mean, var, scale, bias, "
                  "training, 0.1, eps)",
    "layer_norm": "lambda x, w, b, normalized_shape: F.layer_norm(x, normalized_shape, w, b)",
    "group_norm": "lambda x, w, b, num_groups: F.group_norm(x, num_groups, w, b)",
    "lrn": "lambda x, depth_radius, bias, alpha, beta: F.local_response_norm(x, 2 * depth_radius + 1, "
           "alpha * (2 * depth_radius + 1), beta, bias)",
    "L2Normalize": "lambda x, axis, eps: F.normalize(x, 2.0, axis, eps)",
    "interpolate": "lambda x, size, mode, align_corners=None: F.interpolate(x, size, mode=mode, "
                   "align_corners=align_corners)",
    "upsample": "lambda x, size, mode, align_corners=None: F.interpolate(x, size, mode=mode, "
                "align_corners=align_corners)",
    "affine_grid": "lambda theta, size: F.affine_grid(theta, size, align_corners=False)",
    "grid_sample_3d": "F.grid_sample",
    "rms_norm": "lambda x, g: F.rms_norm(x, g.shape, g, 1e-6)",
    "add_rms_norm": "lambda a, b, g: F.rms_norm(a + b, g.shape, g, 1e-6)",
    # random entries: lambda shape, dtype
    "randn": "lambda shape, dtype: torch.randn(shape, dtype=dtype)",
    "standard_normal": "lambda shape, dtype: torch.randn(shape)",
    "StandardNormal": "lambda shape, dtype: torch.randn(shape)",
    "rand": "lambda shape, dtype: torch.rand(shape, dtype=dtype)",
    "UniformReal": "lambda shape, dtype: torch.rand(shape)",
    "uniform": "lambda shape, dtype: torch.empty(shape).uniform_(-1.0, 3.0)",
    "Tensor.uniform_": "lambda shape, dtype: torch.zeros(shape, dtype=dtype).uniform_(-1.0, 3.0)",
    "Tensor.normal_": "lambda shape, dtype: torch.zeros(shape, dtype=dtype).normal_(1.0, 2.0)",
    "randint": "lambda shape, dtype: torch.randint(-3, 5, shape, dtype=dtype)",
    "normal": "lambda shape, dtype: torch.normal(2.0, 3.0, shape)",
    "bernoulli": "lambda shape, dtype: torch.bernoulli(torch.zeros(shape, dtype=dtype), 0.3)",
    "multinomial": "lambda shape, dtype: torch.multinomial(torch.tensor([0.1, 0.2, 0.3, 0.4]), math.prod(shape), "
                   "True).reshape(shape)",
    "multinomial_without_replacement": "lambda shape, dtype: torch.multinomial(torch.tensor([[0.1, 0.2, 0.3, 0.4]])"
                                       ".repeat(math.prod(shape), 1), 1, False).reshape(shape)",
    "rand_like": "lambda shape, dtype: torch.rand_like(torch.zeros(shape, dtype=dtype))",
    "randn_like": "lambda shape, dtype: torch.randn_like(torch.zeros(shape, dtype=dtype))",
    "randint_like": "lambda shape, dtype: torch.randint_like(torch.zeros(shape, dtype=dtype), -3, 5)",
    "randperm": "lambda shape, dtype: torch.randperm(math.prod(shape), dtype=dtype).reshape(shape)",
    "shuffle": "lambda shape, dtype: (lambda t: t[torch.randperm(t.numel())])(torch.arange(math.prod(shape), "
               "dtype=dtype)).reshape(shape)",
    "random_gamma": "lambda shape, dtype: torch._standard_gamma(torch.full(shape, 2.5, dtype=dtype))",
    "random_gamma_small_alpha": "lambda shape, dtype: torch._standard_gamma(torch.full(shape, 0.4, dtype=dtype))",
    "gamma": "lambda shape, dtype: torch._standard_gamma(torch.full(shape, 3.0, dtype=dtype)) * 0.5",
    "rrelu": "lambda shape, dtype: F.rrelu(-torch.ones(shape, dtype=dtype), 0.125, 0.375, training=True)",
    "gumbel_softmax": "lambda shape, dtype: F.gumbel_softmax(torch.zeros(tuple(shape) + (2,), dtype=dtype))[..., 0]",
    "dropout1d": "lambda shape, dtype: F.dropout1d(torch.ones((math.prod(shape), 1), dtype=dtype), 0.5)"
                 ".reshape(shape)",
}
COMPOSITE = {"nn.FastGelu", "fast_gelu", "swiglu", "xdivy", "depend", "addn", "one_hot", "gather_nd",
             "unsorted_segment_sum", "unsorted_segment_max", "unsorted_segment_min", "unsorted_segment_prod",
             "scatter_nd", "setitem_functional", "sequence_mask", "matrix_band_part", "mirror_pad", "conv3d",
             "conv2d_same_bias", "pattern.dense_relu", "pattern.dense_gelu", "pattern.elementwise_chain",
             "add_rms_norm", "shuffle", "size", "is_floating_point", "is_complex", "is_tensor", "is_nonzero",
             "dyn_shape", "DepthToSpace", "bias_add", "bincount"}
NO_PEER = {
    "strided_slice_grad": "a gradient kernel (PyTorch runs it only inside autograd)",
    "max_pool2d_grad": "a gradient kernel", "max_pool2d_grad_argmax": "a gradient kernel",
    "max_pool2d_grad_grad": "a gradient kernel", "avg_pool2d_grad": "a gradient kernel",
    "adaptive_avg_pool2d_grad": "a gradient kernel", "conv2d_backprop_filter": "a gradient kernel",
    "check_range": "Kiln's argument check op", "population_count": "no popcount in PyTorch",
    "reverse_sequence": "no ReverseSequence in PyTorch", "space_to_batch_nd": "no SpaceToBatchND in PyTorch",
    "batch_to_space_nd": "no BatchToSpaceND in PyTorch", "unique_with_pad": "no UniqueWithPad in PyTorch",
    "ResizeBilinearV2": "TensorFlow's legacy resize (no half-pixel centers): F.interpolate differs",
    "tensor_scatter_div": "index_reduce has no division", "scatter_nd_div": "index_reduce has no division",
    "scatter_div": "index_reduce has no division",
    "standard_laplace": "no Laplace sampler op (only torch.distributions objects)",
    "laplace": "no Laplace sampler op (only torch.distributions objects)",
    "choice_with_mask": "no ChoiceWithMask in PyTorch",
    "unique": "torch.unique sorts; Kiln (as MindSpore) keeps the order of first appearance",
    "random_categorical": "no RandomCategorical in PyTorch",
}


# ---------------------------------------------------------------------------------------------- helpers

def _fmt_us(s):
    if s is None:
        return "-"
    us = s * 1e6
    return f"{us:.2f}" if us < 10 else f"{us:.1f}" if us < 1000 else f"{us:,.0f}"


def _short(a):
    """repr, with slices written as a:b:c."""
    if isinstance(a, slice):
        return ":".join("" if v is None else str(v) for v in (a.start, a.stop) + ((a.step,) if a.step else ()))
    if isinstance(a, tuple):
        return "(" + ", ".join(map(_short, a)) + ("," if len(a) == 1 else "") + ")"
    if isinstance(a, list):
        return "[" + ", ".join(map(_short, a)) + "]"
    return repr(a)


def _describe(args, kwargs):
    """A short text of a sample's inputs: f32[2,3] i64[4] 2 axis=0."""
    import numpy as np

    def one(a):
        if isinstance(a, np.ndarray):
            kind = {"f": "f", "i": "i", "u": "u", "b": "b"}.get(a.dtype.kind, a.dtype.kind)
            return f"{kind}{a.dtype.itemsize * 8 if a.dtype.kind != 'b' else ''}[{','.join(map(str, a.shape))}]"
        text = _short(a)
        return text if len(text) <= 28 else text[:25] + "..."
    parts = [one(a) for a in args] + [f"{k}={one(v)}" for k, v in kwargs.items()]
    return " ".join(parts)


def _send(proc, msg):
    proc.stdin.write(json.dumps(msg) + "\n")
    proc.stdin.flush()


def _recv(proc):
    """The next protocol line of a worker (other output skipped); None when the worker has exited."""
    while True:
        line = proc.stdout.readline()
        if not line:
            return None
        if line.startswith(PROTO):
            return json.loads(line[len(PROTO):])


def _reply(msg):
    sys.stdout.write(PROTO + json.dumps(msg) + "\n")
    sys.stdout.flush()


def _flat(out, to_np):
    """The arrays of an output (a tensor, a number, or nested tuples/lists of them), in order."""
    if isinstance(out, (tuple, list)):
        res = []
        for o in out:
            res.extend(_flat(o, to_np))
        return res
    return [to_np(out)]


def _compare(got, want, shapes_only):
    """None when `got` (the peer's arrays) matches `want` (Kiln's), else why not. A peer that returns fewer
    outputs than Kiln (e.g. no saved statistics) is compared on those it returns."""
    import numpy as np
    if len(got) > len(want) or not got:
        return f"{len(got)} outputs, Kiln gives {len(want)}"
    for k, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g), np.asarray(w)
        if g.shape != w.shape:
            return f"output {k}: shape {list(g.shape)}, Kiln {list(w.shape)}"
        if shapes_only:
            continue
        try:
            ok = np.allclose(g.astype(np.float64), w.astype(np.float64), rtol=1e-3, atol=1e-4, equal_nan=True)
        except (TypeError, ValueError) as e:
            return f"output {k}: not comparable ({e})"
        if not ok:
            return f"output {k}: values differ (max |diff| {np.nanmax(np.abs(g.astype(float) - w.astype(float))):.3g})"
    return None


# ---------------------------------------------------------------------------------------------- the Kiln worker

def _count_ops(graph):
    import re
    return len(re.findall(r"= \w+\(", graph.to_text()))


def _pick_sample(R, entry):
    import numpy as np
    from op_registry.base import NC
    dts = [np.dtype(d) for d in entry.dtypes]
    dtype = np.dtype(np.float32) if np.dtype(np.float32) in dts else dts[0]
    samples = R.samples_of(entry, dtype)
    if not samples:
        return None, dtype

    def arrays(s):
        return [a.value if isinstance(a, NC) else a for a in s.args if isinstance(a, (np.ndarray, NC))]

    def fits(s, limit):
        return ((s.graph or not entry.graph) and not any(isinstance(a, NC) for a in s.args)
                and all(a.size > 0 for a in arrays(s)) and all(a.size <= limit for a in arrays(s)))
    for limit in (SMALL, float("inf")):
        for s in samples:
            if fits(s, limit):
                return s, dtype
    return samples[0], dtype


def _plain(x):
    """A sample argument as data the torch process can unpickle without Kiln (NC views become their values);
    raises TypeError for anything else."""
    import numpy as np
    from op_registry.base import NC
    if isinstance(x, NC):
        return np.ascontiguousarray(x.value)
    if isinstance(x, (np.ndarray, np.generic, np.dtype, int, float, bool, str, slice, type(None), type(Ellipsis))):
        return x
    if isinstance(x, (tuple, list)):
        return type(x)(_plain(v) for v in x)
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    raise TypeError(f"a {type(x).__name__} argument")


def kiln_worker(args):
    sys.path.insert(0, REGISTRY_DIR)
    from _env import require_kiln
    kiln = require_kiln()
    import numpy as np
    import op_registry as R
    from _timing import calls_for, time_calls

    patterns = [p for p in (args.only or "").split(",") if p]
    cases, meta, seen = [], [], {}
    for e in R.entries():
        if patterns and not any(fnmatch.fnmatchcase(e.name, p) for p in patterns):
            continue
        seen[e.name] = seen.get(e.name, 0) + 1
        label = e.name if seen[e.name] == 1 else f"{e.name}#{seen[e.name]}"
        m = {"label": label, "name": e.name, "kind": e.kind, "ops": list(e.ops)}
        call = None
        torch_case = None
        try:
            if e.kind == "state":
                m["status"] = "not timed: a state entry (its run() builds Parameters each call)"
            elif e.kind == "random":
                dtype = np.dtype(np.float32) if np.dtype(np.float32) in [np.dtype(d) for d in e.dtypes] \
                    else np.dtype(e.dtypes[0])
                m["input"] = f"draw({RANDOM_SHAPE}, {dtype.name})"
                call = (lambda e=e, dtype=dtype: e.draw(RANDOM_SHAPE, dtype))
                torch_case = {"args": (RANDOM_SHAPE, dtype), "kwargs": {}}
                jit_fn, jit_args = kiln.jit(call), ()
            else:
                s, dtype = _pick_sample(R, e)
                if s is None:
                    m["status"] = "not timed: no samples"
                else:
                    kargs = [R.to_kiln(a) for a in s.args]
                    kw = s.kwargs
                    m["input"] = _describe([_plain(a) for a in s.args], kw)
                    call = (lambda e=e, kargs=kargs, kw=kw: e.op(*kargs, **kw))
                    try:
                        torch_case = {"args": _plain(tuple(s.args)), "kwargs": _plain(dict(kw))}
                    except TypeError as te:
                        m["peer_status"] = f"no peer: inputs not transferable ({te})"
                    if e.graph and s.graph:
                        jit_fn, jit_args = kiln.jit(lambda *a, e=e, kw=kw: e.op(*a, **kw)), kargs
                    else:
                        jit_fn = None
            if call is not None:
                out = call()
                want = _flat(out, lambda o: o.asnumpy() if isinstance(o, kiln.Tensor) else np.asarray(o))
                m["status"] = "ok"
                if torch_case is not None and "peer_status" not in m:
                    torch_case.update(label=label, name=e.name, kind=e.kind, want=want)
                    cases.append(torch_case)
                if e.kind == "random" or (e.graph and jit_fn is not None):
                    try:
                        jit_fn(*jit_args)
                        g = jit_fn.graphs[0]
                        m["traced"], m["compiled"] = _count_ops(g.graph_before), _count_ops(g.graph)
                    except Exception as ge:  # noqa: BLE001 - reported in the table
                        m["nodes_note"] = f"jit failed: {type(ge).__name__}: {str(ge).splitlines()[0][:80]}"
                elif not e.graph:
                    m["nodes_note"] = "PyNative only" + (f" ({e.graph_reason})" if e.graph_reason else "")
                else:
                    m["nodes_note"] = "the sample is marked graph=False"
        except Exception as ex:  # noqa: BLE001 - reported in the table
            m["status"] = f"failed: {type(ex).__name__}: {(str(ex).splitlines() or [''])[0][:100]}"
            call = None
        meta.append(m)
        m["_call"] = call

    with open(os.path.join(args.case_dir, "cases.pkl"), "wb") as f:
        pickle.dump(cases, f)
    calls = {m["label"]: m.pop("_call") for m in meta}
    _reply({"ready": True, "version": getattr(kiln, "__version__", "?"), "cases": meta})

    def sync(out):
        while isinstance(out, (tuple, list)) and out:
            out = out[0]
        if isinstance(out, kiln.Tensor):
            out.asnumpy()

    _serve(calls, sync, calls_for, time_calls)


def _serve(calls, sync, calls_for, time_calls):
    """Answers {"label", "min_time"} with {"t": seconds per call} of one timed run (the run length calibrated at the
    first request for a label), until stdin closes."""
    n_for = {}
    for line in sys.stdin:
        req = json.loads(line)
        label = req["label"]
        call = calls.get(label)
        if call is None:
            _reply({"error": "unknown case"})
            continue
        try:
            if label not in n_for:
                n_for[label] = calls_for(call, sync, req["min_time"])
            _reply({"t": time_calls(call, sync, n_for[label]), "n": n_for[label]})
        except Exception as e:  # noqa: BLE001 - reported in the table
            calls[label] = None
            _reply({"error": f"{type(e).__name__}: {(str(e).splitlines() or [''])[0][:100]}"})


# ---------------------------------------------------------------------------------------------- the torch worker

def _torch_namespace(torch):
    import numpy as np
    F = torch.nn.functional

    def red(f):
        return lambda x, axis=None, keepdims=False: f(x) if axis is None else f(x, dim=axis, keepdim=keepdims)

    def seg(x, ids, n, how):
        fill = {"amax": torch.finfo(x.dtype).min, "amin": torch.finfo(x.dtype).max, "prod": 1.0}[how]
        return torch.full((n,) + tuple(x.shape[ids.dim():]), fill, dtype=x.dtype).index_reduce_(
            0, ids, x, how, include_self=False)

    def setitem(x, key, value):
        y = x.clone()
        y[key] = value
        return y

    def depth_to_space(x, b):  # TensorFlow's / MindSpore's DCR order (F.pixel_shuffle is CRD)
        n, c, h, w = x.shape
        return x.reshape(n, b, b, c // (b * b), h, w).permute(0, 3, 4, 1, 5, 2).reshape(n, c // (b * b), h * b, w * b)

    def conv_same(x, w, b, stride):
        pads = []
        for d in (3, 2):  # F.pad order: last dim first
            size, k = x.shape[d], w.shape[d]
            total = max((math.ceil(size / stride) - 1) * stride + k - size, 0)
            pads += [total // 2, total - total // 2]
        return F.conv2d(F.pad(x, pads), w, b, stride)
    return {"torch": torch, "F": F, "math": math, "np": np, "red": red, "seg": seg, "setitem": setitem,
            "conv_same": conv_same, "depth_to_space": depth_to_space}


def _torch_candidates(name, ns):
    """(text, callable, is_lambda, (prepare, call) or None) for the entry: TORCH's, else torch.NAME, torch.special.NAME,
    torch.linalg.NAME, F.NAME that exist."""
    if name in TORCH:
        spec = TORCH[name]
        if isinstance(spec, tuple):  # (prepare, call): the call gets prepare's result as its args
            prepare, call = (eval(t, ns) for t in spec)  # the table is ours (eval of trusted text)
            return [(spec[1], lambda *a, **k: call(*prepare(*a, **k)), True, (prepare, call))]
        return [(spec, eval(spec, ns), spec.lstrip().startswith("lambda"), None)]
    if name.startswith("Tensor.") and name.endswith("_") and name[7:].isidentifier():
        # An in-place method's registry row (op_registry/tensor_methods.py _inplace) writes a copy of its input (the
        # sample is not mutated): the peer clones too, so that both sides time the same work.
        text = f"lambda x, *a, **k: x.clone().{name[7:]}(*a, **k)"
        return [(text, eval(text, ns), True, None)]
    out = []
    for prefix in ("torch", "torch.special", "torch.linalg", "F"):
        text = f"{prefix}.{name}"
        try:
            out.append((text, eval(text, ns), False, None))
        except (AttributeError, SyntaxError, NameError):
            pass
    return out


def torch_worker(args):
    import numpy as np
    try:
        import torch
    except ImportError as e:
        _reply({"ready": False, "error": f"not installed ({e})"})
        return
    torch.set_num_threads(args.threads)
    torch.set_grad_enabled(False)  # once, not a no_grad() block per call (that costs ~1 us a call)
    ns = _torch_namespace(torch)
    to_torch_dtype = {np.dtype(k): v for k, v in (("float16", torch.float16), ("float32", torch.float32),
                                                    ("float64", torch.float64), ("int8", torch.int8),
                                                    ("int16", torch.int16), ("int32", torch.int32),
                                                    ("int64", torch.int64), ("uint8", torch.uint8),
                                                    ("bool", torch.bool))}

    def conv(a, int64=False, top=True):
        if isinstance(a, np.ndarray):
            if not top:
                return a  # arrays inside kwargs stay NumPy, as the Kiln rows get them (they convert in the call)
            t = torch.from_numpy(np.array(a, copy=True))
            return t.long() if int64 and a.dtype.kind in "iu" else t
        if isinstance(a, np.dtype):
            return to_torch_dtype.get(a, a)
        return a

    def to_np(o):
        if isinstance(o, torch.Tensor):
            return o.detach().numpy()
        if isinstance(o, torch.Size):
            return np.asarray(list(o))
        return np.asarray(o)

    with open(os.path.join(args.case_dir, "cases.pkl"), "rb") as f:
        cases = pickle.load(f)
    meta, calls = [], {}
    for c in cases:
        m = {"label": c["label"]}
        name = c["name"]
        if name in NO_PEER:
            m["peer_status"] = f"no peer: {NO_PEER[name]}"
            meta.append(m)
            continue
        random = c["kind"] == "random"
        found, why = None, []
        for text, fn, is_lambda, split in _torch_candidates(name, ns):
            for int64 in (False, True):
                targs = [conv(a, int64) for a in c["args"]]
                if random:
                    targs = [tuple(c["args"][0]), conv(c["args"][1])]
                tkw = {k: conv(v, int64, top=False) for k, v in c["kwargs"].items()}
                tkw = {k: (to_torch_dtype.get(v, v) if isinstance(v, np.dtype) else v) for k, v in tkw.items()}
                forms = [(targs, tkw)] if is_lambda else \
                    [(targs, {KWARG_RENAMES.get(k, k): v for k, v in tkw.items()}), (targs + list(tkw.values()), {})]
                for fa, fk in forms:
                    try:
                        got = _flat(fn(*fa, **fk), to_np)
                    except Exception as e:  # noqa: BLE001 - tried the next form
                        why.append(f"{text}: {type(e).__name__}: {(str(e).splitlines() or [''])[0][:70]}")
                        continue
                    bad = _compare(got, c["want"], random)
                    if bad:
                        why.append(f"{text}: {bad}")
                        continue
                    if split:  # time the call alone, on the prepared args
                        fn, fa, fk = split[1], list(split[0](*fa, **fk)), {}
                    found = (text, fn, fa, fk, len(got) < len(c["want"]))
                    break
                if found:
                    break
            if found:
                break
        if found is None:
            m["peer_status"] = "no peer: " + (why[-1] if why else f"no torch.{name} or F.{name}")
        else:
            text, fn, fa, fk, partial = found
            m["peer_status"] = "ok"
            m["peer"] = text + (" (composite)" if name in COMPOSITE else "") + \
                (" (fewer outputs)" if partial else "")

            calls[c["label"]] = (lambda fn=fn, fa=fa, fk=fk: fn(*fa, **fk))
        meta.append(m)
    cap = ""
    try:
        cap = torch.backends.cpu.get_cpu_capability()
    except Exception:  # noqa: BLE001 - older torch
        pass
    _reply({"ready": True, "version": torch.__version__, "cpu_capability": cap, "threads": torch.get_num_threads(),
            "cases": meta})
    from _timing import calls_for, time_calls
    _serve(calls, lambda out: None, calls_for, time_calls)


# ---------------------------------------------------------------------------------------------- the parent

def cpu_line(python):
    """tools/cpu_report.py's line (run with the Kiln python), else lscpu's model name and AVX flags."""
    try:
        p = subprocess.run([python, os.path.join(ROOT, "tools", "cpu_report.py")], capture_output=True, text=True,
                           timeout=60, cwd="/")
        if p.returncode == 0 and p.stdout.strip():
            return p.stdout.strip().splitlines()[-1]
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        text = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return "CPU: unknown"
    model = next((ln.split(":", 1)[1].strip() for ln in text.splitlines() if ln.startswith("Model name")), "?")
    flags = next((ln.split(":", 1)[1].split() for ln in text.splitlines() if ln.startswith("Flags")), [])
    return f"CPU: {model}; flags: {' '.join(f for f in ('avx2', 'avx512f') if f in flags)}"


def _start(python, role, case_dir, args, err_path):
    from _env import CHILD_CWD, child_env
    cmd = [python, os.path.abspath(__file__), "--worker", role, "--case-dir", case_dir,
           "--threads", str(args.threads)] + (["--only", args.only] if args.only else [])
    return subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open(err_path, "w"),
                            text=True, bufsize=1, env=child_env(args.threads), cwd=CHILD_CWD)


def _tail(path):
    try:
        with open(path) as f:
            lines = [ln for ln in f.read().strip().splitlines() if ln.strip()]
        return lines[-1][:160] if lines else "no output"
    except OSError:
        return "no output"


def _gmean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def run(args):
    from _env import missing_python, require_kiln
    require_kiln()
    tmp = tempfile.mkdtemp(prefix="opbench-")
    try:
        return _run(args, tmp, missing_python)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _run(args, tmp, missing_python):
    t_start = time.perf_counter()
    print(cpu_line(sys.executable))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"python {platform.python_version()}, {os.cpu_count()} cores, load average {load:.2f}; threads: "
          f"{args.threads} (OMP/MKL/OPENBLAS_NUM_THREADS, torch.set_num_threads); {args.rounds} interleaved rounds "
          f"of ~{args.min_time * 1e3:g} ms runs per op and framework: median (and min) per call")
    if load > (os.cpu_count() or 1) / 2:
        print(f"warning: load average {load:.2f} is above half the cores: figures are not representative")
    sys.stdout.flush()

    kproc = _start(sys.executable, "kiln", tmp, args, os.path.join(tmp, "kiln.err"))
    kready = _recv(kproc)
    if not kready or not kready.get("ready"):
        print(f"the Kiln worker failed: {_tail(os.path.join(tmp, 'kiln.err'))}")
        return 1
    rows = {m["label"]: dict(m) for m in kready["cases"]}
    if not rows:
        print(f"no registry entry matches --only {args.only!r}")
        return 1
    torch_info = {"python": args.torch_python}
    tproc = None
    why = missing_python(args.torch_python)
    if why:
        torch_info["status"] = why
    else:
        tproc = _start(args.torch_python, "torch", tmp, args, os.path.join(tmp, "torch.err"))
        tready = _recv(tproc)
        if not tready or not tready.get("ready"):
            torch_info["status"] = (tready or {}).get("error") or f"failed: {_tail(os.path.join(tmp, 'torch.err'))}"
            tproc.kill()
            tproc = None
        else:
            torch_info.update(status="ok", version=tready["version"], cpu_capability=tready.get("cpu_capability"),
                              threads=tready.get("threads"))
            for m in tready["cases"]:
                rows[m["label"]].update(m)
    for r in rows.values():
        r.setdefault("peer_status", f"torch {torch_info['status']}" if tproc is None else "no peer: not sent")
    print(f"Kiln {kready['version']} ({sys.executable}); PyTorch "
          + (f"{torch_info['version']} eager, CPU capability {torch_info.get('cpu_capability') or '?'}, "
             f"{torch_info.get('threads')} thread(s) ({args.torch_python})" if tproc
             else f"{torch_info['status']} ({args.torch_python}): Kiln's figures only"))
    sys.stdout.flush()

    timed = [lb for lb, r in rows.items() if r.get("status") == "ok"]
    for lb in timed:
        rows[lb]["kiln_runs"], rows[lb]["torch_runs"] = [], []
    workers = [("kiln", kproc)] + ([("torch", tproc)] if tproc else [])
    alive = {name: True for name, _ in workers}
    for rnd in range(args.rounds):
        order = workers if rnd % 2 == 0 else workers[::-1]
        for lb in timed:
            r = rows[lb]
            for name, proc in order:
                if not alive[name] or (name == "torch" and r.get("peer_status") != "ok"):
                    continue
                if r.get(f"{name}_error"):
                    continue
                _send(proc, {"label": lb, "min_time": args.min_time})
                resp = _recv(proc)
                if resp is None:
                    alive[name] = False
                    r[f"{name}_error"] = f"the {name} worker exited: {_tail(os.path.join(tmp, name + '.err'))}"
                elif "error" in resp:
                    r[f"{name}_error"] = resp["error"]
                else:
                    r[f"{name}_runs"].append(resp["t"])
                    r[f"{name}_calls"] = resp["n"]
        print(f"round {rnd + 1}/{args.rounds} done ({time.perf_counter() - t_start:.0f} s)", file=sys.stderr)
    for _, proc in workers:
        proc.stdin.close()
        proc.wait(timeout=60)

    for r in rows.values():
        for fw in ("kiln", "torch"):
            runs = r.get(f"{fw}_runs") or []
            r[fw] = statistics.median(runs) if runs else None
            r[f"{fw}_min"] = min(runs) if runs else None
        if r.get("torch_error"):
            r["peer_status"] = f"torch failed: {r['torch_error']}"
        r["ratio"] = r["kiln"] / r["torch"] if r.get("kiln") and r.get("torch") else None
    return report(args, rows, torch_info, kready["version"], t_start)


def report(args, rows, torch_info, kiln_version, t_start):
    compared = sorted((r for r in rows.values() if r["ratio"]), key=lambda r: -r["ratio"])
    kiln_only = sorted((r for r in rows.values() if r["kiln"] and not r["ratio"]), key=lambda r: -r["kiln"])
    untimed = [r for r in rows.values() if not r["kiln"]]
    w = max([len(r["label"]) for r in rows.values()] + [10])
    head = (f"{'op':<{w}}  {'Kiln us':>9} {'(min)':>9}  {'torch us':>9} {'(min)':>9}  {'ratio':>7}  "
            f"{'traced':>6} {'compiled':>8}  input / peer")
    print()
    print(head)
    print("-" * len(head))

    def nodes(r):
        return (f"{r['traced']:>6} {r['compiled']:>8}" if "traced" in r else f"{'-':>6} {'-':>8}")
    for r in compared:
        print(f"{r['label']:<{w}}  {_fmt_us(r['kiln']):>9} {_fmt_us(r['kiln_min']):>9}  {_fmt_us(r['torch']):>9} "
              f"{_fmt_us(r['torch_min']):>9}  {r['ratio']:>6.2f}x  {nodes(r)}  {r.get('input', '')} | "
              f"{r.get('peer', '')}")
    for r in kiln_only:
        peer = r.get("peer_status", "")
        print(f"{r['label']:<{w}}  {_fmt_us(r['kiln']):>9} {_fmt_us(r['kiln_min']):>9}  {'-':>9} {'-':>9}  "
              f"{'-':>7}  {nodes(r)}  {r.get('input', '')} | {peer}")
    for r in untimed:
        why = r.get("kiln_error") or r.get("status", "")
        print(f"{r['label']:<{w}}  {'-':>9} {'-':>9}  {'-':>9} {'-':>9}  {'-':>7}  {nodes(r)}  {why}")
    ratios = [r["ratio"] for r in compared]
    print()
    multi = [r for r in rows.values() if r.get("traced", 0) > 1]
    summary = {
        "entries": len(rows), "timed": len(rows) - len(untimed), "with_peer": len(compared),
        "above_2x": sum(x > 2 for x in ratios), "above_10x": sum(x > 10 for x in ratios),
        "geomean_ratio": _gmean(ratios), "median_ratio": statistics.median(ratios) if ratios else None,
        "more_than_one_traced_node": len(multi),
    }
    if ratios:
        print(f"summary: {summary['with_peer']} of {summary['entries']} registry entries compared with PyTorch "
              f"eager: {summary['above_2x']} above 2x PyTorch's time, {summary['above_10x']} above 10x; geometric "
              f"mean ratio {summary['geomean_ratio']:.2f}x (median {summary['median_ratio']:.2f}x); "
              f"{len(kiln_only)} Kiln-only, {len(untimed)} not timed")
    else:
        print(f"summary: {summary['timed']} of {summary['entries']} registry entries timed (Kiln only: "
              f"PyTorch {torch_info['status']})")
    print(f"graph: {len(multi)} of {sum('traced' in r for r in rows.values())} traced entries are more than one "
          f"node (traced); {sum(r.get('compiled', 0) > 1 for r in rows.values())} after the passes")
    print(f"threads: {args.threads}; wall {time.perf_counter() - t_start:.0f} s")
    if args.json:
        for r in rows.values():
            r.pop("_call", None)
        with open(args.json, "w") as f:
            json.dump({"summary": summary, "threads": args.threads, "rounds": args.rounds,
                       "min_time": args.min_time, "kiln_version": kiln_version, "torch": torch_info,
                       "cpu": cpu_line(sys.executable), "rows": list(rows.values())}, f, indent=1)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="See the module docstring (benchmarks/bench_op_calls.py) for the method.")
    peers_py = os.path.join(HERE, ".venv-peers", "bin", "python")
    ap.add_argument("--torch-python", default=peers_py,
                    help="python that imports torch (default: benchmarks/.venv-peers/bin/python); missing: Kiln only")
    ap.add_argument("--only", help="comma-separated registry entry names or fnmatch patterns (e.g. 'atan2,getitem*')")
    ap.add_argument("--threads", type=int, default=1, help="intra-op threads for both frameworks (default 1)")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds; median and min reported (default 5)")
    ap.add_argument("--min-time", type=float, default=0.03, help="seconds per timed run (default 0.03)")
    ap.add_argument("--quick", action="store_true", help="--rounds 3 --min-time 0.005")
    ap.add_argument("--json", metavar="FILE", help="also write every figure as JSON to FILE")
    ap.add_argument("--worker", choices=("kiln", "torch"), help=argparse.SUPPRESS)
    ap.add_argument("--case-dir", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.quick:
        args.rounds, args.min_time = 3, 0.005
    if args.threads < 1 or args.rounds < 1 or args.min_time <= 0:
        ap.error("--threads and --rounds must be >= 1, --min-time > 0")
    if args.worker == "kiln":
        return kiln_worker(args)
    if args.worker == "torch":
        return torch_worker(args)
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
