"""Registry entries of the NN-functional ops of kiln/ops/nnact_func.py (activations), nnpool_func.py (pooling,
unpooling, lrn) and nnconv_func.py (conv3d, conv3d_transpose): one row per @defop op (the losses, sampling and misc
ops are in nnfunc_loss.py). References are direct NumPy/SciPy formulas or loops, never the code under test."""
import numpy as np

from kiln import Tensor, ops

from .base import F16, F32, F64, FLOATS, I32, NC, OpInfo, Sample, arr, np_sigmoid, np_softmax, register, \
    unary_samples
from .state import _check_uniform01
from .elementwise import _same_dtype


# ---------------------------------------------------------------------------------------------- activations

def _act_samples(dtype, rng):
    yield from unary_samples(-4.0, 4.0)(dtype, rng)


def _act(name, op, ref, cname=("Select",), dtypes=FLOATS, **kw):
    register(OpInfo(name, cname, op, ref, _act_samples, dtypes, differentiable=True, **kw))


_SELU_A, _SELU_S = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
_F16_LOOSE = {F16: (4e-3, 4e-3)}

_act("celu", lambda x: ops.celu(x, 2.0), lambda x: np.where(x > 0, x, 2.0 * np.expm1(np.minimum(x, 0) / 2.0)),
     ("Select", "Expm1", "Div"), tol=_F16_LOOSE, notes="alpha = 2; gradient exp(x/α) below 0, 1 at 0 from both sides")
_act("elu", ops.elu, lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0))), ("Select", "Expm1"), tol=_F16_LOOSE)
_act("selu", ops.selu, lambda x: _SELU_S * np.where(x > 0, x, _SELU_A * np.expm1(np.minimum(x, 0))),
     ("SeLU",), tol=_F16_LOOSE, kinks={0.0: _SELU_S},
     notes="one SeLU kernel; gradient scale at 0 (the x ≥ 0 branch, as MindSpore 2.10)")
_act("silu", ops.silu, lambda x: x * np_sigmoid(x), ("Mul", "Sigmoid"), tol=_F16_LOOSE)
_act("mish", ops.mish, lambda x: x * np.tanh(np.logaddexp(0, x)), ("Mish",), tol=_F16_LOOSE,
     notes="one Mish kernel; mish(1000) = 1000 (MindSpore 2.10's CPU kernel: NaN), NaN at −inf (−inf·0, as MindSpore)")
_act("hardshrink", ops.hardshrink, lambda x: np.where(np.abs(x) <= 0.5, 0.0, x), ("Select", "Abs", "LessEqual"))
_act("softshrink", lambda x: ops.softshrink(x, 0.75), lambda x: np.where(np.abs(x) <= 0.75, 0.0, x - np.sign(x) * 0.75),
     ("Select", "Abs", "Sign", "Sub"))
_act("hardswish", ops.hardswish, lambda x: x * np.clip(x + 3, 0, 6) / 6, ("HSwish",),
     special_ref=lambda x: np.where(x <= -3, 0.0, x * np.clip(x + 3, 0, 6) / 6),
     notes="one HSwish kernel; 0 at −inf (MindSpore 2.10's value, not −inf·0)")
register(OpInfo("hardtanh", ("Maximum", "Minimum", "Select"), lambda x: ops.hardtanh(x, -0.5, 2.0),
                lambda x: np.minimum(np.maximum(x, -0.5 if x.dtype.kind == "f" else 0), 2.0).astype(x.dtype),
                _act_samples, FLOATS + (I32,), differentiable=True, ref_upcast=False,
                notes="int input keeps its dtype (bounds truncated: −0.5 → 0); gradient 1/2 at a bound (MindSpore 2.10)"))
_act("leaky_relu", ops.leaky_relu, lambda x: np.where(x > 0, x, 0.2 * x), ("Maximum", "Mul"),
     kinks={0.0: 0.6}, notes="gradient (1 + alpha)/2 at 0 (max(x, αx)'s tie, as MindSpore 2.10)")
_act("softsign", ops.softsign, lambda x: x / (1 + np.abs(x)), ("Div", "Abs", "Add"))
_act("tanhshrink", ops.tanhshrink, lambda x: x - np.tanh(x), ("Sub", "Tanh"), dtypes=FLOATS + (I32,),
     notes="int input → Float32 (R-f32)")
_act("threshold", lambda x: ops.threshold(x, 0.25, 9.0), lambda x: np.where(x <= 0.25, 9.0, x),
     ("Select", "LessEqual"))
_act("fast_gelu", ops.fast_gelu, lambda x: x * np_sigmoid(1.702 * x), ("Mul", "Sigmoid"), tol=_F16_LOOSE)


def _axis_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype, -3, 3)
    yield Sample((a((2, 6)),))
    yield Sample((a((4, 3, 2)),), dict(axis=0), desc="axis 0")
    yield Sample((NC(a((4, 2)), "T"),), dict(axis=1), desc="transposed view")
    yield Sample((a((0, 4)),), desc="empty")


def _np_halves(x, axis):
    return np.split(x, 2, axis=axis)


def _np_glu(x, axis=-1):
    a, b = _np_halves(x, axis)
    return a * np_sigmoid(b)


def _np_swiglu(x, dim=-1):
    a, b = _np_halves(x, dim)
    return a * np_sigmoid(a) * b


register(OpInfo("glu", ("Mul", "Sigmoid", "StridedSlice"), ops.glu, _np_glu, _axis_samples, FLOATS, differentiable=True,
                tol=_F16_LOOSE))
register(OpInfo("swiglu", ("Mul", "Sigmoid", "StridedSlice"),
                lambda x, axis=-1: ops.swiglu(x, axis), lambda x, axis=-1: _np_swiglu(x, axis),
                _axis_samples, FLOATS, differentiable=True, tol=_F16_LOOSE))
register(OpInfo("softmin", ("Softmax", "Neg"), ops.softmin, lambda x, axis=-1: np_softmax(-x, axis), _axis_samples,
                FLOATS, differentiable=True, special_ref=lambda x, axis=-1: np_softmax(-x, axis)))


def _prelu_samples(dtype, rng):
    a = lambda s, lo=-2, hi=2: arr(rng, s, dtype, lo, hi)
    yield Sample((a((2, 3, 4)), a((3,), 0.05, 0.5)), desc="per channel")
    yield Sample((a((2, 3)), a((1,), 0.05, 0.5)), desc="shared slope")
    yield Sample((a((5,)), a((5,), 0.05, 0.5)), desc="1-D: one slope per element")
    yield Sample((NC(a((2, 3)), "T"), a((3,), 0.05, 0.5)), desc="transposed view")


def _np_prelu(x, w):
    if x.ndim >= 2:
        w = w.reshape((1, -1) + (1,) * (x.ndim - 2))
    return np.where(x >= 0, x, w * x)


register(OpInfo("prelu", ("Select", "LessEqual", "Mul"), ops.prelu, _np_prelu, _prelu_samples, FLOATS,
                differentiable=True, kinks={0.0: None},
                notes="gradient: the channel's slope at x = 0 (MindSpore 2.10; tested in test_values_issue24.py)"))


# Random activations: distribution checks (the gradient is checked in tests/python/test_nn_functional_ext.py).
register(OpInfo("rrelu", ("UniformReal", "Select", "Mul", "Less"), kind="random", dtypes=(F32, F64),
                draw=lambda shape, dtype, seed=None: ops.rrelu(Tensor(-np.ones(shape, dtype)), 0.125, 0.375),
                check=lambda x, d: _check_uniform01((-x.astype(np.float64) - 0.125) / 0.25, d),
                notes="rrelu(−1) = −a with a ~ Uniform[lower, upper)"))
register(OpInfo("gumbel_softmax", ("UniformReal", "Log", "Softmax"), kind="random", dtypes=(F32,),
                draw=lambda shape, dtype, seed=None: ops.gumbel_softmax(Tensor(np.zeros(tuple(shape) + (2,), dtype)))
                [..., 0],
                check=_check_uniform01,
                notes="two equal logits: y₀ = σ(g₀ − g₁) with g₀ − g₁ ~ Logistic(0, 1), so y₀ ~ Uniform(0, 1)"))


# ---------------------------------------------------------------------------------------------- conv3d / pooling
# Direct NumPy loops over N-d windows (PyTorch's / MindSpore's rules: ceil_mode drops a last window that starts in
# the padding; count_include_pad counts the window within the padded input).
import itertools  # noqa: E402 (this section's own imports)

from .nn import _out_len  # noqa: E402 (this section's own imports)


def _np_windows(spatial, k, s, pads, d, ceil_mode):
    """{output position: (in-bounds input positions of its window, window size within the padded input)}."""
    outs = [_out_len(n, k[i], s[i], pads[i][0], pads[i][1], d[i], ceil_mode) for i, n in enumerate(spatial)]
    wins = {}
    for o in itertools.product(*[range(v) for v in outs]):
        axes = [[o[i] * s[i] - pads[i][0] + j * d[i] for j in range(k[i])] for i in range(len(spatial))]
        inside = [p for p in itertools.product(*axes) if all(0 <= p[i] < spatial[i] for i in range(len(spatial)))]
        area = int(np.prod([sum(1 for r in axes[i] if -pads[i][0] <= r < spatial[i] + pads[i][1])
                            for i in range(len(spatial))]))
        wins[o] = (inside, area)
    return outs, wins


def np_max_pool_nd(x, k, s, pads, d, ceil_mode=False):
    nd = len(k)
    spatial = x.shape[-nd:]
    outs, wins = _np_windows(spatial, k, s, pads, d, ceil_mode)
    val = np.zeros(x.shape[:-nd] + tuple(outs), x.dtype)
    idx = np.zeros(val.shape, np.int64)
    for o, (inside, _) in wins.items():
        vals = np.stack([x[(...,) + p] for p in inside], -1)
        arg = np.argmax(vals, axis=-1)  # the first maximum; NaN wins (np.argmax returns the first NaN)
        val[(...,) + o] = np.take_along_axis(vals, arg[..., None], -1)[..., 0]
        flat = np.array([np.ravel_multi_index(p, spatial) for p in inside])
        idx[(...,) + o] = flat[arg]
    return val, idx


def np_avg_pool_nd(x, k, s, pads, ceil_mode=False, count_include_pad=True, divisor=0):
    nd = len(k)
    outs, wins = _np_windows(x.shape[-nd:], k, s, pads, (1,) * nd, ceil_mode)
    out = np.zeros(x.shape[:-nd] + tuple(outs))
    for o, (inside, area) in wins.items():
        total = sum(x[(...,) + p].astype(np.float64) for p in inside) if inside else 0.0
        out[(...,) + o] = total / (divisor or (area if count_include_pad else len(inside)))
    return out


def np_conv3d(x, w, b=None, stride=(1, 1, 1), pads=((0, 0),) * 3, dilation=(1, 1, 1), groups=1):
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0)) + tuple(pads))
    n, c = x.shape[:2]
    o, cg, kd, kh, kw = w.shape
    outs = [_out_len(x.shape[2 + i], w.shape[2 + i], stride[i], pads[i][0], pads[i][1], dilation[i], False)
            for i in range(3)]
    out = np.zeros((n, o) + tuple(outs))
    og = o // groups
    for g in range(groups):
        xs = xp[:, g * cg:(g + 1) * cg]
        for i, j, m in itertools.product(range(kd), range(kh), range(kw)):
            patch = xs[:, :, i * dilation[0]:i * dilation[0] + stride[0] * (outs[0] - 1) + 1:stride[0],
                       j * dilation[1]:j * dilation[1] + stride[1] * (outs[1] - 1) + 1:stride[1],
                       m * dilation[2]:m * dilation[2] + stride[2] * (outs[2] - 1) + 1:stride[2]]
            out[:, g * og:(g + 1) * og] += np.einsum("ncdhw,oc->nodhw", patch, w[g * og:(g + 1) * og, :, i, j, m])
    if b is not None:
        out += b.reshape(1, -1, 1, 1, 1)
    return out


def _conv3d_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype, -1, 1)
    yield Sample((a((1, 2, 3, 4, 3)), a((2, 2, 2, 2, 2)), a((2,))), desc="valid")
    yield Sample((a((2, 4, 4, 3, 5)), a((4, 2, 2, 1, 3)), None), dict(stride=(2, 1, 2), padding=(1, 0, 1),
                                                                         pad_mode="pad", groups=2), desc="groups, pad")
    yield Sample((a((1, 1, 5, 4, 4)), a((2, 1, 2, 2, 2)), None), dict(dilation=(2, 1, 1), pad_mode="same"),
                 desc="same, dilation")
    yield Sample((a((1, 1, 3, 3, 3)), a((1, 1, 2, 2, 2)), None), dict(padding=(1, 0, 0, 1, 1, 0), pad_mode="pad"),
                 desc="6 pads")


def _np_conv3d_call(x, w, b, stride=1, pad_mode="valid", padding=0, dilation=1, groups=1):
    t = lambda v: (v,) * 3 if isinstance(v, int) else tuple(v)
    s, d = t(stride), t(dilation)
    if pad_mode == "same":
        pads = []
        for i in range(3):
            n, k = x.shape[2 + i], w.shape[2 + i]
            need = max(0, (-(-n // s[i]) - 1) * s[i] + d[i] * (k - 1) + 1 - n)
            pads.append((need // 2, need - need // 2))
    else:
        p = (padding,) * 3 if isinstance(padding, int) else tuple(padding)
        pads = [(p[i], p[i]) for i in range(3)] if len(p) == 3 else [(p[0], p[1]), (p[2], p[3]), (p[4], p[5])]
    return np_conv3d(x, w, b, s, tuple(pads), d, groups)


register(OpInfo("conv3d", ("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter", "StridedSlice", "Transpose"),
                ops.conv3d, _np_conv3d_call, _conv3d_samples, (F32, F64), out_dtype=_same_dtype, differentiable=True,
                tol={F32: (1e-5, 1e-5)}, special_skip="sums of products: Conv2D's and Add's special values",
                notes="one Conv2D per kernel depth (kiln/ops/nnpool_func.py)"))


def _pool3d_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype, -2, 2)
    yield Sample((a((1, 2, 4, 5, 4)),), dict(kernel_size=2, stride=1, padding=1), desc="pad 1")
    yield Sample((a((2, 1, 5, 4, 6)),), dict(kernel_size=(2, 3, 2), stride=(2, 2, 3), padding=(1, 1, 0),
                                             ceil_mode=True), desc="ceil")
    yield Sample((a((2, 3, 3, 4)),), dict(kernel_size=(3, 2, 2), stride=1), desc="4-D input")


def _np_max_pool3d(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    t = lambda v: (v,) * 3 if isinstance(v, int) else tuple(v)
    k = t(kernel_size)
    s = k if stride is None else t(stride)
    p = t(padding)
    v, i = np_max_pool_nd(x, k, s, [(q, q) for q in p], t(dilation), ceil_mode)
    return (v, i) if return_indices else v


register(OpInfo("max_pool3d", ("MaxPool", "MaxPoolGradWithArgmax"), ops.max_pool3d, _np_max_pool3d,
                lambda dtype, rng: iter(list(_pool3d_samples(dtype, rng)) + [
                    Sample((arr(rng, (1, 1, 5, 5, 5), dtype),), dict(kernel_size=3, stride=2, dilation=(2, 1, 2)),
                           desc="dilation")]),
                FLOATS, differentiable=True))
register(OpInfo("max_pool3d_indices", ("MaxPool", "GatherD", "FloorDiv"),
                lambda x, **kw: ops.max_pool3d(x, return_indices=True, **kw),
                lambda x, **kw: _np_max_pool3d(x, return_indices=True, **kw), _pool3d_samples, FLOATS,
                notes="Int64 indices d·H·W + h·W + w"))


def _np_avg_pool3d(x, kernel_size=1, stride=1, padding=0, ceil_mode=False, count_include_pad=True,
                   divisor_override=0):
    t = lambda v: (v,) * 3 if isinstance(v, int) else tuple(v)
    k = t(kernel_size)
    s = k if stride is None else t(stride)
    p = t(padding)
    pads = [(q, q) for q in p] if len(p) == 3 else [(p[0], p[1]), (p[2], p[3]), (p[4], p[5])]
    return np_avg_pool_nd(x, k, s, pads, ceil_mode, count_include_pad, divisor_override)


def _avg3d_samples(dtype, rng):
    yield from _pool3d_samples(dtype, rng)
    a = lambda s: arr(rng, s, dtype, -2, 2)
    yield Sample((a((1, 2, 4, 4, 5)),), dict(kernel_size=2, stride=2, padding=(1, 0, 0, 1, 1, 1), ceil_mode=True,
                                             count_include_pad=False), desc="6 pads, exclude pad")
    yield Sample((a((1, 1, 3, 4, 4)),), dict(kernel_size=2, stride=1, padding=1, divisor_override=3),
                 desc="divisor_override")


register(OpInfo("avg_pool3d", ("AvgPool", "AvgPoolGrad"), ops.avg_pool3d, _np_avg_pool3d, _avg3d_samples, FLOATS,
                out_dtype=_same_dtype, differentiable=True, tol={F16: (3e-3, 3e-3)}))


def _avg1d_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype, -2, 2)
    yield Sample((a((2, 3, 7)),), dict(kernel_size=3, stride=2, padding=1), desc="pad")
    yield Sample((a((3, 8)),), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
                 desc="2-D input, ceil, exclude pad")
    yield Sample((a((1, 2, 6)),), dict(kernel_size=2, stride=2), desc="no pad")


def _np_avg_pool1d(x, kernel_size=1, stride=1, padding=0, ceil_mode=False, count_include_pad=True):
    return np_avg_pool_nd(x, (kernel_size,), (stride,), [(padding, padding)], ceil_mode, count_include_pad)


register(OpInfo("avg_pool1d", ("AvgPool", "AvgPoolGrad"), ops.avg_pool1d, _np_avg_pool1d, _avg1d_samples, FLOATS,
                out_dtype=_same_dtype, differentiable=True, tol={F16: (3e-3, 3e-3)}))


def _bin_argmax(v, skip_nan):
    """MindSpore 2.10's CPU kernels: start from the bin's first element, take a strictly greater one (a NaN counts
    only as the first element); skip_nan (the 1-D op): a NaN first element gives way to any number."""
    best = 0
    for k in range(1, len(v)):
        if v[k] > v[best] or (skip_nan and np.isnan(v[best]) and not np.isnan(v[k])):
            best = k
    return best


def _np_adaptive(x, out, kind):
    nd = len(out)
    spatial = x.shape[-nd:]
    res = np.zeros(x.shape[:-nd] + tuple(out), x.dtype if kind == "max" else np.float64)
    idx = np.zeros(res.shape, np.int64)
    for o in itertools.product(*[range(v) for v in out]):
        ranges = [range((o[i] * spatial[i]) // out[i], -(-((o[i] + 1) * spatial[i]) // out[i])) for i in range(nd)]
        pos = list(itertools.product(*ranges))
        vals = np.stack([x[(...,) + p] for p in pos], -1)
        if kind == "max":
            arg = np.apply_along_axis(_bin_argmax, -1, vals, nd == 1)
            res[(...,) + o] = np.take_along_axis(vals, arg[..., None], -1)[..., 0]
            idx[(...,) + o] = np.array([np.ravel_multi_index(p, spatial) for p in pos])[arg]
        else:
            res[(...,) + o] = vals.astype(np.float64).mean(-1)
    return res, idx


def _adaptive_samples(nd):
    def gen(dtype, rng):
        a = lambda s: arr(rng, s, dtype, -2, 2)
        base = {1: (2, 3, 7), 2: (2, 2, 7, 5), 3: (1, 2, 5, 4, 6)}[nd]
        out = {1: 3, 2: (3, 2), 3: (2, 3, 4)}[nd]
        yield Sample((a(base),), dict(output_size=out), desc="overlapping bins")
        yield Sample((a(base[1:]),), dict(output_size=2), desc="unbatched")
        if nd > 1:
            yield Sample((a(base),), dict(output_size=(None,) + (1,) * (nd - 1)), desc="None keeps the size")
        yield Sample((NC(a(base), "T"),), dict(output_size=1), desc="view, global")
    return gen


def _np_adaptive_max(nd, index_dtype=np.int64):
    def ref(x, output_size, return_indices=False):
        sizes = list(output_size) if isinstance(output_size, (tuple, list)) else [output_size] * nd
        sizes = [x.shape[x.ndim - nd + i] if v is None else v for i, v in enumerate(sizes)]
        v, i = _np_adaptive(x, sizes, "max")
        return (v, i.astype(index_dtype)) if return_indices else v
    return ref


for _nd, _name in ((1, "adaptive_max_pool1d"), (2, "adaptive_max_pool2d"), (3, "adaptive_max_pool3d")):
    register(OpInfo(_name, ("AdaptiveMaxPool",), getattr(ops, _name), _np_adaptive_max(_nd),
                    _adaptive_samples(_nd), FLOATS, differentiable=True,
                    notes="one AdaptiveMaxPool op (gradient to the chosen element: GatherDGrad)"))
register(OpInfo("adaptive_max_pool2d_indices", ("AdaptiveMaxPool",),
                lambda x, output_size: ops.adaptive_max_pool2d(x, output_size, True),
                lambda x, output_size: _np_adaptive_max(2)(x, output_size, True), _adaptive_samples(2), FLOATS,
                differentiable=True))
register(OpInfo("adaptive_max_pool3d_indices", ("AdaptiveMaxPool", "Cast"),
                lambda x, output_size: ops.adaptive_max_pool3d(x, output_size, True),
                lambda x, output_size: _np_adaptive_max(3, np.int32)(x, output_size, True), _adaptive_samples(3),
                FLOATS, differentiable=True, notes="Int32 indices (MindSpore's dtype for the 3-D op)"))


def _np_fractional_starts(u, length, k, out):
    """Graham's pseudo-random overlapping window starts (arXiv:1412.6071), written out per element."""
    if out == 1:
        return [length - k]
    alpha = (length - k) / (out - 1)
    return [int(np.floor((i + float(u)) * alpha) - np.floor(float(u) * alpha)) for i in range(out - 1)] + [length - k]


def _np_fractional(nd):
    def ref(x, kernel_size, output_size, output_ratio, return_indices, samples):
        ks = (kernel_size,) * nd if np.isscalar(kernel_size) else tuple(kernel_size)
        spatial = x.shape[x.ndim - nd:]
        if output_size is not None:
            outs = (output_size,) * nd if np.isscalar(output_size) else tuple(output_size)
        else:
            ratios = (output_ratio,) * nd if np.isscalar(output_ratio) else tuple(output_ratio)
            outs = tuple(int(n * r) for n, r in zip(spatial, ratios))
        lead = x.shape[:x.ndim - nd]
        planes = x.reshape((-1,) + spatial)
        u = np.asarray(samples, np.float64).reshape(-1, nd)
        vals = np.zeros((planes.shape[0],) + outs, x.dtype)
        idx = np.zeros((planes.shape[0],) + outs, np.int64)
        for p in range(planes.shape[0]):
            starts = [_np_fractional_starts(u[p, nd - 1 - j if nd == 2 else j], spatial[j], ks[j], outs[j])
                      for j in range(nd)]
            for pos in itertools.product(*(range(o) for o in outs)):
                lo = [starts[j][pos[j]] for j in range(nd)]
                win = planes[p][tuple(slice(lo[j], lo[j] + ks[j]) for j in range(nd))]
                w = np.unravel_index(int(np.argmax(win)), win.shape)  # the first maximum, row-major
                vals[(p,) + pos] = win[w]
                idx[(p,) + pos] = np.ravel_multi_index(tuple(lo[j] + w[j] for j in range(nd)), spatial)
        vals, idx = vals.reshape(lead + outs), idx.reshape(lead + outs)
        return (vals, idx) if return_indices else vals
    return ref


def _fractional_samples(nd):
    def gen(dtype, rng):
        base = {2: (2, 3, 9, 8), 3: (1, 2, 7, 6, 8)}[nd]
        u = lambda n, c: rng.uniform(0.0, 1.0, (n, c, nd)).astype(np.float32)
        a = lambda s: arr(rng, s, dtype, -3, 3)
        yield Sample((a(base), 3 if nd == 2 else 2, (4, 5) if nd == 2 else (3, 4, 5), None, False, u(*base[:2])),
                     desc="overlapping windows")
        yield Sample((a(base), 2, None, 0.5, True, u(*base[:2])), desc="output_ratio, indices", grad=False)
        yield Sample((a(base[1:]), (2, 3) + (2,) * (nd - 2), 2, None, False, u(1, base[1])), desc="unbatched")
        yield Sample((NC(a(base), "T"), 2, 1, None, False, u(*base[:2])), desc="view, one window")
    return gen


for _nd in (2, 3):
    register(OpInfo(f"fractional_max_pool{_nd}d", ("Argmax", "GatherD", "Floor"),
                    getattr(ops, f"fractional_max_pool{_nd}d"),
                    _np_fractional(_nd), _fractional_samples(_nd), FLOATS + (I32,), differentiable=True,
                    grad_args=(0,), special_args=(0,), nan_wins=float("inf"), ties="first",
                    notes="window starts from _random_samples (MindSpore 2.10's values: test_fractional_max_pool.py); "
                          "the first maximum of each window; gradient to the chosen element"))


def _np_adaptive_avg3d(x, output_size):
    sizes = list(output_size) if isinstance(output_size, (tuple, list)) else [output_size] * 3
    sizes = [x.shape[x.ndim - 3 + i] if v is None else v for i, v in enumerate(sizes)]
    return _np_adaptive(x, sizes, "avg")[0]


register(OpInfo("adaptive_avg_pool3d", ("AdaptiveAvgPool2D", "AdaptiveAvgPool2DGrad"), ops.adaptive_avg_pool3d,
                _np_adaptive_avg3d, _adaptive_samples(3), FLOATS, out_dtype=_same_dtype, differentiable=True,
                tol={F16: (3e-3, 3e-3)}))


def _lp_samples(nd):
    def gen(dtype, rng):
        a = lambda s, lo=0.2: arr(rng, s, dtype, lo, 2)
        if nd == 1:
            yield Sample((a((2, 3, 7)), 2), dict(kernel_size=3, stride=2), desc="p = 2")
            yield Sample((a((3, 8)), 3.0), dict(kernel_size=3, stride=2, ceil_mode=True), desc="2-D, p = 3, ceil")
            yield Sample((arr(rng, (1, 2, 6), dtype, -2, 2), 1), dict(kernel_size=2), desc="p = 1: signed sum")
        else:
            yield Sample((a((2, 2, 5, 6)), 2), dict(kernel_size=(2, 3), stride=2), desc="p = 2")
            yield Sample((a((2, 5, 5)), 1.5), dict(kernel_size=2, stride=2, ceil_mode=True), desc="3-D, ceil")
    return gen


def _np_lp(nd):
    def ref(x, norm_type, kernel_size, stride=None, ceil_mode=False):
        k = (kernel_size,) * nd if isinstance(kernel_size, int) else tuple(kernel_size)
        s = k if stride is None else ((stride,) * nd if isinstance(stride, int) else tuple(stride))
        # avg over the (clipped) window times the full window size: MindSpore's/PyTorch's formula
        avg = np_avg_pool_nd(x.astype(np.float64) ** norm_type, k, s, [(0, 0)] * nd, ceil_mode, True)
        with np.errstate(invalid="ignore"):
            return (avg * np.prod(k)) ** (1.0 / norm_type)
    return ref


register(OpInfo("lp_pool1d", ("Pow", "AvgPool", "Mul"), ops.lp_pool1d, _np_lp(1), _lp_samples(1), (F32, F64),
                out_dtype=_same_dtype, differentiable=True,
                special_skip="powers of a window sum: Pow's and AvgPool's special values"))
register(OpInfo("lp_pool2d", ("Square", "AvgPool", "Mul", "Pow"), ops.lp_pool2d, _np_lp(2), _lp_samples(2),
                (F32, F64), out_dtype=_same_dtype, differentiable=True,
                special_skip="powers of a window sum: Pow's and AvgPool's special values"))


def _unpool_samples(nd):
    def gen(dtype, rng):
        lead = (2, 3)
        insz = {1: (4,), 2: (3, 2), 3: (2, 2, 2)}[nd]
        k = 2
        outsz = tuple(2 * v for v in insz)
        per_out = int(np.prod(outsz))
        # distinct indices per plane (one inside each window, as max_pool's)
        idx = np.zeros(lead + insz, np.int64)
        for p in itertools.product(*[range(v) for v in lead]):
            for q in itertools.product(*[range(v) for v in insz]):
                pos = tuple(2 * q[i] + rng.integers(0, 2) for i in range(nd))
                idx[p + q] = np.ravel_multi_index(pos, outsz)
        x = arr(rng, lead + insz, dtype)
        yield Sample((x, idx), dict(kernel_size=k), desc="default output size")
        big = tuple(v + 1 for v in outsz)
        idx2 = np.array([np.ravel_multi_index(np.unravel_index(i, outsz), big) for i in idx.reshape(-1)]
                        ).reshape(idx.shape).astype(np.int32)
        yield Sample((x[0], idx2[0]), dict(kernel_size=k, output_size=big), desc="unbatched, output_size, int32")
        assert per_out
    return gen


def _np_unpool(nd):
    def ref(x, indices, kernel_size, stride=None, padding=0, output_size=None):
        insz = x.shape[-nd:]
        s = kernel_size if stride is None else stride
        out = tuple(output_size[-nd:]) if output_size is not None else tuple(
            (v - 1) * s - 2 * padding + kernel_size for v in insz)
        lead = x.shape[:-nd]
        y = np.zeros(lead + (int(np.prod(out)),), x.dtype)
        xf = x.reshape(lead + (-1,))
        idf = indices.reshape(lead + (-1,))
        for p in itertools.product(*[range(v) for v in lead]):
            y[p][idf[p]] = xf[p]
        return y.reshape(lead + out)
    return ref


for _nd, _name in ((1, "max_unpool1d"), (2, "max_unpool2d"), (3, "max_unpool3d")):
    register(OpInfo(_name, ("TensorScatterUpdate", "CheckRange"), getattr(ops, _name), _np_unpool(_nd),
                    _unpool_samples(_nd), FLOATS, differentiable=True, ref_upcast=False, grad_args=(0,),
                    notes="x's values written at the indices into zeros"))


def _np_lrn(x, depth_radius=5, bias=1.0, alpha=1.0, beta=0.5):
    c = x.shape[1]
    sq = np.zeros_like(x, dtype=np.float64)
    for ch in range(c):
        lo, hi = max(0, ch - depth_radius), min(c, ch + depth_radius + 1)
        sq[:, ch] = (x[:, lo:hi].astype(np.float64) ** 2).sum(1)
    return x * (bias + alpha * sq) ** -beta


register(OpInfo("lrn", ("Square", "AvgPool", "Pow", "Mul"), ops.lrn, _np_lrn,
                lambda dtype, rng: iter([
                    Sample((arr(rng, (2, 5, 3, 2), dtype),), dict(depth_radius=2, bias=1.0, alpha=0.5, beta=0.75)),
                    Sample((arr(rng, (1, 3, 2, 2), dtype),), desc="defaults (radius 5 > C)"),
                    Sample((arr(rng, (1, 4, 2, 3), dtype),), dict(depth_radius=0, bias=2.0), desc="radius 0")]),
                FLOATS, out_dtype=_same_dtype, differentiable=True, tol={F16: (3e-3, 3e-3)},
                special_skip="x·(bias + α·Σx²)^−β: inf·0 forms differ by association; Square/Pow/AvgPool cover it"))


def np_conv3d_transpose(x, w, pad_mode="valid", padding=0, stride=1, dilation=1, group=1, output_padding=0):
    t = lambda v: (v,) * 3 if isinstance(v, int) else tuple(v)
    s, d, op = t(stride), t(dilation), t(output_padding)
    n, cin = x.shape[:2]
    cg, k = w.shape[1], w.shape[2:]
    ins = x.shape[2:]
    full = [(ins[i] - 1) * s[i] + d[i] * (k[i] - 1) + 1 for i in range(3)]
    out = np.zeros((n, cg * group) + tuple(full))
    ing = cin // group
    for c in range(cin):
        g = c // ing
        for i, j, m in itertools.product(*[range(v) for v in k]):
            for a, b, e in itertools.product(*[range(v) for v in ins]):
                out[:, g * cg:(g + 1) * cg, a * s[0] + i * d[0], b * s[1] + j * d[1], e * s[2] + m * d[2]] += \
                    x[:, c, a, b, e, None].astype(np.float64) * w[c, :, i, j, m]
    p = (padding,) * 6 if isinstance(padding, int) else (tuple(padding) if len(padding) == 6 else
                                                          tuple(v for q in padding for v in (q, q)))
    for i in range(3):
        if pad_mode == "same":
            cut = max(full[i] - ins[i] * s[i], 0)
            front, length = cut // 2, full[i] - cut
        elif pad_mode == "pad":
            front, length = p[2 * i], full[i] - p[2 * i] - p[2 * i + 1]
        else:
            front, length = 0, full[i]
        length += op[i]
        sl = np.take(out, range(front, min(front + length, out.shape[2 + i])), axis=2 + i)
        if sl.shape[2 + i] < length:
            padw = [(0, 0)] * 5
            padw[2 + i] = (0, length - sl.shape[2 + i])
            sl = np.pad(sl, padw)
        out = sl
    return out


def _c3t_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype, -1, 1)
    yield Sample((a((1, 2, 2, 3, 2)), a((2, 2, 2, 2, 1))), desc="valid")
    yield Sample((a((2, 2, 2, 2, 3)), a((2, 1, 2, 1, 2))), dict(pad_mode="pad", padding=(1, 0, 0, 0, 1, 1),
                                                              stride=(2, 1, 2), output_padding=(1, 0, 1)),
                 desc="6 pads, stride, output_padding")
    yield Sample((a((1, 4, 2, 2, 2)), a((4, 1, 2, 2, 2))), dict(pad_mode="same", stride=2, dilation=(1, 2, 1),
                                                              group=2), desc="same, dilation, groups")


register(OpInfo("conv3d_transpose", ("Conv2DBackpropInput", "Conv2D", "Conv2DBackpropFilter", "Concat"),
                ops.conv3d_transpose, np_conv3d_transpose, _c3t_samples, (F32, F64), differentiable=True,
                out_dtype=_same_dtype, tol={F32: (1e-5, 1e-5)},
                special_skip="sums of products: Conv2DBackpropInput's and Add's special values"))


# ---------------------------------------------------------------------------------------------- more public functions
# relu6, hardsigmoid, soft_shrink, bias_add, conv1d, adaptive_avg_pool1d: the functions of kiln.ops that only their
# Cells or Primitive classes reached before.

_act("relu6", ops.relu6, lambda x: np.clip(x, 0, 6), ("ReLU", "Greater", "Select"), kinks={0.0: 0.0},
     notes="gradient 0 at 0 (ReLU's) and 1 up to 6 (MindSpore 2.10's ReLU6Grad)")
_act("hardsigmoid", ops.hardsigmoid, lambda x: np.clip(x + 3, 0, 6) / 6, ("HSigmoid",),
     notes="one HSigmoid kernel: relu6(x + 3) / 6; kinks at ±3, away from the special points")
_act("soft_shrink", lambda x: ops.soft_shrink(x, 0.3), lambda x: np.where(np.abs(x) <= 0.3, 0.0,
                                                                          x - np.sign(x) * 0.3),
     ("Abs", "LessEqual", "Sign", "Sub", "Select"), notes="MindSpore's older name of softshrink (lambd 0.3 here)")


def _np_bias_add(x, b):
    return x + b.reshape((1, -1) + (1,) * (x.ndim - 2))


register(OpInfo("bias_add", ("Add", "Reshape"), lambda x, b: ops.bias_add(x, b), _np_bias_add,
                lambda dtype, rng: iter([Sample((arr(rng, (2, 3), dtype), arr(rng, (3,), dtype)), desc="2-D"),
                                         Sample((arr(rng, (2, 3, 4, 2), dtype), arr(rng, (3,), dtype)),
                                                desc="NCHW"),
                                         Sample((NC(arr(rng, (3, 4), dtype), "T"), arr(rng, (4,), dtype)),
                                                desc="view")]),
                FLOATS, differentiable=True, out_dtype=_same_dtype))


def _np_conv1d(x, w, bias=None, stride=1, padding=0, dilation=1):
    x = np.pad(x, ((0, 0), (0, 0), (padding, padding)))
    n, c, length = x.shape
    o, _, k = w.shape
    span = dilation * (k - 1) + 1
    out_len = (length - span) // stride + 1
    out = np.zeros((n, o, out_len), np.result_type(x, w))
    for t in range(out_len):
        window = x[:, :, t * stride:t * stride + span:dilation]  # (n, c, k)
        out[:, :, t] = np.einsum("nck,ock->no", window, w)
    return out if bias is None else out + bias[None, :, None]


def _conv1d_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype, -1, 1)
    yield Sample((a((2, 3, 8)), a((4, 3, 3))), desc="valid")
    yield Sample((a((1, 2, 9)), a((3, 2, 2)), a((3,))), dict(stride=2, padding=1, dilation=2),
                 desc="bias, stride 2, pad 1, dilation 2")


register(OpInfo("conv1d", ("Conv2D", "Reshape"),
                lambda x, w, bias=None, stride=1, padding=0, dilation=1:
                    ops.conv1d(x, w, bias, stride, "pad" if padding else "valid", padding, dilation),
                _np_conv1d, _conv1d_samples, (F32, F64), differentiable=True, out_dtype=_same_dtype,
                tol={F32: (1e-5, 1e-5)}, special_skip="a sum of products over windows: NaN/inf spread as in conv2d"))


def _np_adaptive_avg_pool1d(x, size):
    n = x.shape[-1]
    cols = [x[..., (i * n) // size:-((-(i + 1) * n) // size)].mean(-1) for i in range(size)]
    return np.stack(cols, -1)


register(OpInfo("adaptive_avg_pool1d", ("AdaptiveAvgPool2D", "Reshape"), lambda x, size: ops.adaptive_avg_pool1d(x, size),
                _np_adaptive_avg_pool1d,
                lambda dtype, rng: iter([Sample((arr(rng, (2, 3, 8), dtype), 3), desc="8 → 3 (overlapping bins)"),
                                         Sample((arr(rng, (1, 2, 6), dtype), 6), desc="identity"),
                                         Sample((arr(rng, (1, 1, 5), dtype), 1), desc="global")]),
                FLOATS, differentiable=True, out_dtype=_same_dtype, tol=_F16_LOOSE))


# ---------------------------------------------------------------------------------------------- detection boxes
# MindSpore 2.10's box ops use the +1 pixel convention (a box (x0, y0, x1, y1) is x1 − x0 + 1 wide); the references
# below were checked against MindSpore 2.10 CPU on random boxes (IOU/IOF, encode/decode with means, stds and
# clipping, check_valid with a fractional ratio).

def _np_iou(anchor, gt, mode="iou"):
    a, g = anchor[None, :, :], gt[:, None, :]
    w = np.maximum(np.minimum(a[..., 2], g[..., 2]) - np.maximum(a[..., 0], g[..., 0]) + 1, 0)
    h = np.maximum(np.minimum(a[..., 3], g[..., 3]) - np.maximum(a[..., 1], g[..., 1]) + 1, 0)
    inter = w * h
    area = lambda b: (b[..., 2] - b[..., 0] + 1) * (b[..., 3] - b[..., 1] + 1)
    return inter / area(g) if mode == "iof" else inter / (area(a) + area(g) - inter)


def _cwh(b):
    w, h = b[:, 2] - b[:, 0] + 1, b[:, 3] - b[:, 1] + 1
    return b[:, 0] + 0.5 * (w - 1), b[:, 1] + 0.5 * (h - 1), w, h


def _np_bbox_encode(anchor, gt, means=(0.0,) * 4, stds=(1.0,) * 4):
    px, py, pw, ph = _cwh(anchor)
    gx, gy, gw, gh = _cwh(gt)
    d = np.stack([(gx - px) / pw, (gy - py) / ph, np.log(gw / pw), np.log(gh / ph)], 1)
    return (d - np.asarray(means)) / np.asarray(stds)


def _np_bbox_decode(anchor, deltas, max_shape, means=(0.0,) * 4, stds=(1.0,) * 4, wh_ratio_clip=0.016):
    d = deltas * np.asarray(stds) + np.asarray(means)
    lim = abs(np.log(wh_ratio_clip))
    px, py, pw, ph = _cwh(anchor)
    gx, gy = px + pw * d[:, 0], py + ph * d[:, 1]
    gw, gh = pw * np.exp(np.clip(d[:, 2], -lim, lim)), ph * np.exp(np.clip(d[:, 3], -lim, lim))
    height, width = max_shape
    return np.stack([np.clip(gx - 0.5 * gw + 0.5, 0, width), np.clip(gy - 0.5 * gh + 0.5, 0, height),
                     np.clip(gx + 0.5 * gw - 0.5, 0, width), np.clip(gy + 0.5 * gh - 0.5, 0, height)], 1)


def _np_check_valid(b, metas):
    h, w, r = metas
    return (b[:, 0] >= 0) & (b[:, 1] >= 0) & (b[:, 2] <= w * r - 1) & (b[:, 3] <= h * r - 1)


def _boxes(rng, n, dtype):
    xy = rng.uniform(0, 10, (n, 2))
    return np.concatenate([xy, xy + rng.uniform(0.5, 8, (n, 2))], 1).astype(dtype)


_BOX = dict(dtypes=(F32, F16), out_dtype=_same_dtype, tol={F16: (5e-3, 5e-3)},
            special_skip="box coordinates: NaN/inf boxes have no defined overlap or deltas")
register(OpInfo("iou", ("Sub", "Add", "Maximum", "Minimum", "Mul", "Div"),
                lambda a, g, mode="iou": ops.iou(a, g, mode), _np_iou,
                lambda dtype, rng: iter([Sample((_boxes(rng, 5, dtype), _boxes(rng, 3, dtype))),
                                         Sample((_boxes(rng, 4, dtype), _boxes(rng, 2, dtype)), dict(mode="iof"),
                                                desc="iof")]), **_BOX))
register(OpInfo("bounding_box_encode", ("Sub", "Add", "Div", "Log", "Concat"),
                lambda a, g, means=(0.0,) * 4, stds=(1.0,) * 4: ops.bounding_box_encode(a, g, means, stds),
                _np_bbox_encode,
                lambda dtype, rng: iter([Sample((_boxes(rng, 4, dtype), _boxes(rng, 4, dtype))),
                                         Sample((_boxes(rng, 3, dtype), _boxes(rng, 3, dtype)),
                                                dict(means=(0.1, 0.0, 0.2, 0.0), stds=(1.0, 2.0, 1.0, 0.5)),
                                                desc="means, stds")]), **_BOX))
register(OpInfo("bounding_box_decode", ("Sub", "Add", "Mul", "Exp", "Maximum", "Minimum", "Concat"),
                lambda a, d, max_shape, means=(0.0,) * 4, stds=(1.0,) * 4, wh_ratio_clip=0.016:
                    ops.bounding_box_decode(a, d, max_shape, means, stds, wh_ratio_clip),
                _np_bbox_decode,
                lambda dtype, rng: iter([Sample((_boxes(rng, 4, dtype), arr(rng, (4, 4), dtype, -1, 1)),
                                                dict(max_shape=(100, 100))),
                                         Sample((_boxes(rng, 5, dtype), arr(rng, (5, 4), dtype, -3, 3)),
                                                dict(max_shape=(12, 9), means=(0.1, 0.0, 0.2, 0.0),
                                                     stds=(1.0, 2.0, 1.0, 0.5)),
                                                desc="clipped to the image, width/height ratio clipped")]),
                **_BOX))
register(OpInfo("check_valid", ("Sub", "Mul", "GreaterEqual", "LessEqual", "LogicalAnd"),
                lambda b, metas: ops.check_valid(b, metas), _np_check_valid,
                lambda dtype, rng: iter([Sample(((np.round(rng.uniform(-2, 22, (8, 4)) * 2) / 2).astype(dtype),
                                                 np.array(m, dtype)), desc=f"metas {m}")
                                         for m in ([10, 20, 1], [8, 6, 1.5])]),
                (F32, F16), special_skip="box coordinates: comparisons only"))
