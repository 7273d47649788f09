"""Registry entries: matmul, fusion patterns, convolution, pooling and normalization."""

import numpy as np

import kiln
from kiln import Tensor, _core, ops


from .base import (
    F16, F32, F64, FLOATS, I32, NC, OpInfo, Sample, arr, np_gelu, np_sigmoid, np_value, register)
from .elementwise import (
    _same_dtype)
from .state import (
    _param, _run_stateful)


# ---------------------------------------------------------------------------------------------- matmul

def _matmul_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype, -2, 2)
    yield Sample((a((2, 3)), a((3, 4))))
    yield Sample((a((3,)), a((3, 4))), desc="1-D lhs")
    yield Sample((a((2, 3)), a((3,))), desc="1-D rhs")
    yield Sample((a((3,)), a((3,))), desc="dot → 0-d")
    yield Sample((a((2, 2, 3)), a((3, 4))), desc="batched lhs")
    yield Sample((a((2, 1, 2, 3)), a((3, 3, 2))), desc="broadcast batch")
    yield Sample((NC(a((3, 2)), "T"), NC(a((2, 4)), "step")), desc="views")
    yield Sample((a((0, 3)), a((3, 2))), desc="empty rows")
    yield Sample((a((2, 0)), a((0, 3))), desc="empty contraction → zeros")


register(OpInfo("matmul", ("BatchMatMul",), ops.matmul, np.matmul, _matmul_samples, (F32, F64, F16, I32),
                differentiable=True, tol={F16: (3e-3, 3e-3), F32: (1e-5, 1e-5)}))
register(OpInfo("operator.matmul", ("BatchMatMul",), lambda x, y: x @ y, np.matmul,
                lambda dtype, rng: iter([Sample((arr(rng, (2, 3), dtype), arr(rng, (3, 2), dtype)))]), (F32, F64),
                differentiable=True))


def _matmul_t_samples(dtype, rng):
    a = lambda s: arr(rng, s, dtype)
    yield Sample((a((3, 2)), a((3, 4))), dict(transpose_a=True, transpose_b=False), desc="transpose_a")
    yield Sample((a((2, 3)), a((4, 3))), dict(transpose_a=False, transpose_b=True), desc="transpose_b")
    yield Sample((a((2, 3, 2)), a((2, 4, 3))), dict(transpose_a=True, transpose_b=True), desc="batched, both")


def _np_matmul_t(x, y, transpose_a, transpose_b):
    if transpose_a:
        x = np.swapaxes(x, -1, -2)
    if transpose_b:
        y = np.swapaxes(y, -1, -2)
    return x @ y


register(OpInfo("MatMul_primitive", ("BatchMatMul",),
                lambda x, y, transpose_a, transpose_b: ops.BatchMatMul(transpose_a, transpose_b)(x, y),
                _np_matmul_t, _matmul_t_samples, (F32, F64), differentiable=True))


# ---------------------------------------------------------------------------------------------- fusion patterns
# Composite functions shaped like what the graph passes fuse (matmul+bias+activation; elementwise chains): their
# Graph-parity tests run the optimized graph (fused kernels when the passes fire) against PyNative.

def _dense_samples(dtype, rng):
    yield Sample((arr(rng, (4, 3), dtype), arr(rng, (3, 5), dtype), arr(rng, (5,), dtype)))
    yield Sample((arr(rng, (2, 2, 3), dtype), arr(rng, (3, 2), dtype), arr(rng, (2,), dtype)), desc="batched")


register(OpInfo("pattern.dense_relu", ("BatchMatMul", "Add", "ReLU"),
                lambda x, w, b: ops.relu(ops.add(ops.matmul(x, w), b)),
                lambda x, w, b: np.maximum(x @ w + b, 0), _dense_samples, (F32, F64), differentiable=True))
register(OpInfo("pattern.dense_gelu", ("BatchMatMul", "Add", "GeLU"),
                lambda x, w, b: ops.gelu(ops.matmul(x, w) + b), lambda x, w, b: np_gelu(x @ w + b),
                _dense_samples, (F32, F64), differentiable=True))
register(OpInfo("pattern.elementwise_chain", ("Mul", "Add", "Tanh", "Sigmoid", "Sub", "Exp", "Neg"),
                lambda x, y: ops.sub(ops.mul(ops.tanh(ops.add(ops.mul(x, y), 1.0)), ops.sigmoid(x)),
                                     ops.exp(ops.neg(ops.mul(x, x)))),
                lambda x, y: np.tanh(x * y + 1.0) * np_sigmoid(x) - np.exp(-(x * x)),
                lambda dtype, rng: iter([Sample((arr(rng, (3, 4), dtype), arr(rng, (4,), dtype))),
                                         Sample((NC(arr(rng, (3, 4), dtype), "T"), arr(rng, (3, 4), dtype)),
                                                desc="view")]),
                (F32, F64, F16), differentiable=True, tol={F16: (5e-3, 5e-3)}))


# ---------------------------------------------------------------------------------------------- conv / pool / norm
# NCHW. References are direct NumPy loops; the *Grad ops are checked against the adjoint (transpose) of the NumPy
# forward, computed column by column (np_adjoint), so no reference reuses the formulas of the code under test.

def _out_len(n, k, s, p0, p1, d, ceil_mode):
    """Output length of a window sweep (PyTorch's / MindSpore's rule, incl. ceil_mode's last-window clipping)."""
    span = n + p0 + p1 - d * (k - 1) - 1
    o = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (o - 1) * s >= n + p0:
        o -= 1
    return o


def np_adjoint(f, in_shape, y):
    """Jᵀ·y for the linear map f (NumPy): column i of J is f(e_i)."""
    n = int(np.prod(in_shape))
    cols = []
    for i in range(n):
        e = np.zeros(n)
        e[i] = 1.0
        cols.append(np.asarray(f(e.reshape(in_shape)), np.float64).reshape(-1))
    jac = np.stack(cols, axis=1) if cols else np.zeros((y.size, 0))
    yv = y.reshape(-1).astype(np.float64)
    if np.isfinite(yv).all():
        return (jac.T @ yv).reshape(in_shape)
    # NaN/±inf in y reach only the entries J connects them to (a structural zero of J times NaN is not NaN)
    with np.errstate(invalid="ignore"):
        prod = np.where(jac.T != 0, jac.T * yv[None, :], 0.0)
    return prod.sum(axis=1).reshape(in_shape)


def np_conv2d(x, w, stride=(1, 1), pad=(0, 0, 0, 0), dilation=(1, 1), groups=1):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    sh, sw = stride
    dh, dw = dilation
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad[0], pad[1]), (pad[2], pad[3])))
    oh = _out_len(h, kh, sh, pad[0], pad[1], dh, False)
    ow = _out_len(wd, kw, sw, pad[2], pad[3], dw, False)
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for g in range(groups):
        xs = xp[:, g * cg:(g + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh, j * dw:j * dw + sw * (ow - 1) + 1:sw]
                out[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", patch, w[g * og:(g + 1) * og, :, i, j])
    return out


def _np_pool_windows(h, w, k, s, pad, d, ceil_mode):
    """For each output (oh, ow): the list of in-bounds (row, col) positions of its window, and the window's clipped
    area on the padded input."""
    oh = _out_len(h, k[0], s[0], pad[0], pad[1], d[0], ceil_mode)
    ow = _out_len(w, k[1], s[1], pad[2], pad[3], d[1], ceil_mode)
    wins = {}
    for a in range(oh):
        for b in range(ow):
            rows = [a * s[0] - pad[0] + i * d[0] for i in range(k[0])]
            cols = [b * s[1] - pad[2] + j * d[1] for j in range(k[1])]
            inside = [(r, c) for r in rows for c in cols if 0 <= r < h and 0 <= c < w]
            area = (sum(1 for r in rows if -pad[0] <= r < h + pad[1]) *
                    sum(1 for c in cols if -pad[2] <= c < w + pad[3]))
            wins[(a, b)] = (inside, area)
    return oh, ow, wins


def np_max_pool2d(x, kernel, stride, pad=(0, 0, 0, 0), dilation=(1, 1), ceil_mode=False):
    """(values, Int64 indices h·W + w of the first maximum in row-major window order)."""
    n, c, h, w = x.shape
    oh, ow, wins = _np_pool_windows(h, w, kernel, stride, pad, dilation, ceil_mode)
    val = np.zeros((n, c, oh, ow), x.dtype)
    idx = np.zeros((n, c, oh, ow), np.int64)
    for (a, b), (inside, _) in wins.items():
        rows = np.array([r for r, _ in inside])
        cols = np.array([cc for _, cc in inside])
        vals = x[:, :, rows, cols]  # (n, c, window)
        arg = np.argmax(vals, axis=-1)
        val[:, :, a, b] = np.take_along_axis(vals, arg[..., None], -1)[..., 0]
        idx[:, :, a, b] = rows[arg] * w + cols[arg]
    return val, idx


def np_avg_pool2d(x, kernel, stride, pad=(0, 0, 0, 0), ceil_mode=False, count_include_pad=True,
                  divisor_override=0):
    n, c, h, w = x.shape
    oh, ow, wins = _np_pool_windows(h, w, kernel, stride, pad, (1, 1), ceil_mode)
    out = np.zeros((n, c, oh, ow))
    for (a, b), (inside, area) in wins.items():
        total = sum(x[:, :, r, cc].astype(np.float64) for r, cc in inside) if inside else 0.0
        div = divisor_override if divisor_override else (area if count_include_pad else len(inside))
        out[:, :, a, b] = total / div
    return out


def np_adaptive_avg_pool2d(x, out_size):
    n, c, h, w = x.shape
    oh, ow = out_size
    out = np.zeros((n, c, oh, ow))
    for a in range(oh):
        r0, r1 = (a * h) // oh, -(-((a + 1) * h) // oh)
        for b in range(ow):
            c0, c1 = (b * w) // ow, -(-((b + 1) * w) // ow)
            out[:, :, a, b] = x[:, :, r0:r1, c0:c1].astype(np.float64).mean(axis=(2, 3))
    return out


def np_batch_norm(x, scale, bias, mean, var, training, eps):
    axes = tuple(i for i in range(x.ndim) if i != 1)
    shape = [1, -1] + [1] * (x.ndim - 2)
    if training:
        mean, var = x.mean(axis=axes), x.var(axis=axes)
    y = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps) * scale.reshape(shape) + bias.reshape(shape)
    return y, mean, var


def _pads(padding):
    """ops' padding argument → (top, bottom, left, right)."""
    if isinstance(padding, int):
        return (padding,) * 4
    if len(padding) == 2:
        return (padding[0], padding[0], padding[1], padding[1])
    return tuple(padding)


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


if hasattr(ops, "conv2d"):
    def _conv_samples(dtype, rng):
        a = lambda s: arr(rng, s, dtype, -1.0, 1.0)
        yield Sample((a((2, 2, 5, 5)), a((3, 2, 3, 3))), dict(stride=1, padding=0, dilation=1, groups=1))
        yield Sample((a((1, 2, 5, 4)), a((2, 2, 3, 3))), dict(stride=2, padding=1, dilation=1, groups=1),
                     desc="stride 2, pad 1")
        yield Sample((a((1, 1, 6, 6)), a((2, 1, 2, 2))), dict(stride=1, padding=(1, 0, 2, 1), dilation=2, groups=1),
                     desc="dilation 2, asymmetric pads")
        yield Sample((a((1, 4, 4, 4)), a((4, 2, 2, 2))), dict(stride=(1, 2), padding=0, dilation=1, groups=2),
                     desc="groups 2")
        yield Sample((a((1, 3, 3, 3)), a((2, 3, 1, 1))), dict(stride=1, padding=0, dilation=1, groups=1),
                     desc="1x1 kernel")
        yield Sample((NC(a((1, 2, 4, 4)), "step"), NC(a((2, 2, 2, 2)), "T")),
                     dict(stride=1, padding=1, dilation=1, groups=1), desc="views")

    register(OpInfo("conv2d", ("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter"),
                    lambda x, w, stride, padding, dilation, groups: ops.conv2d(x, w, None, stride, "pad", padding,
                                                                               dilation, groups),
                    lambda x, w, stride, padding, dilation, groups: np_conv2d(x, w, _pair(stride), _pads(padding),
                                                                              _pair(dilation), groups),
                    _conv_samples, FLOATS, differentiable=True, out_dtype=_same_dtype,
                    tol={F16: (5e-3, 5e-3), F32: (1e-5, 1e-5)},
                    notes="its gradient covers Conv2DBackpropInput (dx) and Conv2DBackpropFilter (dw)"))
    register(OpInfo("conv2d_same_bias", ("Conv2D", "Add"),
                    lambda x, w, b: ops.conv2d(x, w, b, 2, "same"),
                    lambda x, w, b: np_conv2d(x, w, (2, 2), (1, 1, 0, 1), (1, 1)) + b.reshape(1, -1, 1, 1),
                    lambda dtype, rng: iter([Sample((arr(rng, (1, 2, 5, 4), dtype), arr(rng, (3, 2, 3, 2), dtype),
                                                     arr(rng, (3,), dtype)), desc="'same', stride 2, bias")]),
                    (F32, F64), differentiable=True,
                    notes="'same': total pad max(0, (⌈n/s⌉−1)·s + k − n), the odd one at the bottom/right"))

    def _convt_samples(dtype, rng):
        a = lambda s: arr(rng, s, dtype, -1.0, 1.0)
        yield Sample((a((1, 3, 3, 3)), a((3, 2, 3, 3))), dict(stride=1, padding=0, output_padding=0))
        yield Sample((a((2, 2, 2, 3)), a((2, 1, 3, 2))), dict(stride=2, padding=1, output_padding=1),
                     desc="stride 2, pad 1, output_padding 1")

    def _np_conv_transpose2d(y, w, stride, padding, output_padding):
        n, cin, h, wd = y.shape
        kh, kw = w.shape[2:]
        s, p, op_ = _pair(stride), _pair(padding), _pair(output_padding)
        out_shape = (n, w.shape[1], (h - 1) * s[0] - 2 * p[0] + kh + op_[0], (wd - 1) * s[1] - 2 * p[1] + kw + op_[1])
        # conv_transpose2d(y, w) is the adjoint of conv2d(·, w) (weight (C_in, C_out, ...) seen as conv's (O, C)).
        return np_adjoint(lambda x: np_conv2d(x, w, s, (p[0], p[0], p[1], p[1])), out_shape, y)

    register(OpInfo("conv_transpose2d", ("Conv2DBackpropInput", "Conv2D", "Conv2DBackpropFilter"),
                    lambda y, w, stride, padding, output_padding: ops.conv_transpose2d(
                        y, w, None, stride, padding, output_padding),
                    _np_conv_transpose2d, _convt_samples, (F32, F64), differentiable=True, special_args=(0,),
                    notes="special values in y only: the reference is the adjoint of a NumPy conv built with w "
                          "fixed, where 0·NaN spreads a NaN/inf of w to every entry; "
                          "Conv2DBackpropInput as a forward op; its gradient uses Conv2D (dy) and "
                          "Conv2DBackpropFilter (dw)"))

    def _cbf_samples(dtype, rng):
        a = lambda s: arr(rng, s, dtype, -1.0, 1.0)
        yield Sample((a((2, 3, 3, 3)), a((2, 2, 5, 5))), dict(filter_shape=(3, 2, 3, 3), stride=(1, 1),
                                                             pad=(0, 0, 0, 0), dilation=(1, 1), groups=1))
        yield Sample((a((1, 4, 2, 2)), a((1, 2, 4, 4))), dict(filter_shape=(4, 1, 2, 2), stride=(2, 2),
                                                             pad=(1, 0, 1, 0), dilation=(1, 1), groups=2),
                     desc="groups 2, stride 2, pads")

    def _np_cbf(dy, x, filter_shape, stride, pad, dilation, groups):
        return np_adjoint(lambda w: np_conv2d(x, w, stride, pad, dilation, groups), filter_shape, dy)

    register(OpInfo("conv2d_backprop_filter", ("Conv2DBackpropFilter", "Conv2D"),
                    lambda dy, x, filter_shape, stride, pad, dilation, groups: _core.conv2d_backprop_filter(
                        dy, x, list(filter_shape), list(stride), list(pad), list(dilation), groups),
                    _np_cbf, _cbf_samples, (F32, F64), differentiable=True, special_args=(0,),
                    special_ok=lambda s: not any(s.kwargs["pad"]),
                    notes="special values in dy only (a NaN/inf of x spreads through the reference's 0·NaN), "
                          "unpadded samples only (Kiln's im2col multiplies dy by padded zeros, 0·NaN = NaN, as "
                          "GEMM-based kernels do; the reference skips padding); "
                          "called via kiln._core (no public API); checks Conv2DBackpropFilter's own bprop"))

if hasattr(ops, "max_pool2d"):
    def _maxpool_samples(dtype, rng):
        a = lambda s: arr(rng, s, dtype)  # random floats: no ties
        yield Sample((a((2, 2, 4, 4)),), dict(kernel_size=2, stride=None, padding=0, dilation=1, ceil_mode=False))
        yield Sample((a((1, 2, 5, 5)),), dict(kernel_size=3, stride=2, padding=1, dilation=1, ceil_mode=False),
                     desc="pad 1 (padding never wins)")
        yield Sample((a((1, 1, 5, 6)),), dict(kernel_size=(2, 3), stride=(1, 2), padding=0, dilation=1,
                                              ceil_mode=False), desc="rectangular")
        yield Sample((a((1, 1, 6, 6)),), dict(kernel_size=2, stride=1, padding=0, dilation=2, ceil_mode=False),
                     desc="dilation 2")
        yield Sample((a((1, 2, 5, 5)),), dict(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=True),
                     desc="ceil_mode")
        yield Sample((NC(a((1, 2, 4, 4)), "step"),), dict(kernel_size=2, stride=None, padding=0, dilation=1,
                                                          ceil_mode=False), desc="view")

    def _np_maxpool(x, kernel_size, stride, padding, dilation, ceil_mode, return_indices=False):
        k = _pair(kernel_size)
        s = k if stride is None else _pair(stride)
        p = _pair(padding)
        x4 = x[None] if x.ndim == 3 else x
        v, i = np_max_pool2d(x4, k, s, (p[0], p[0], p[1], p[1]), _pair(dilation), ceil_mode)
        if x.ndim == 3:
            v, i = v[0], i[0]
        return (v, i) if return_indices else v

    register(OpInfo("max_pool2d", ("MaxPool", "MaxPoolGradWithArgmax"),
                    lambda x, **kw: ops.max_pool2d(x, **kw), _np_maxpool, _maxpool_samples, FLOATS,
                    differentiable=True, ref_upcast=False, nan_wins=np.inf, ties="first",
                    notes="gradient → the first maximum of each window: while a gradient is recorded MaxPool also "
                          "computes its argmax, and the backward scatters dy there (MaxPoolGradWithArgmax)"))
    register(OpInfo("max_pool2d_indices", ("MaxPool",),
                    lambda x, **kw: ops.max_pool2d(x, return_indices=True, **kw),
                    lambda x, **kw: _np_maxpool(x, return_indices=True, **kw),
                    lambda dtype, rng: iter(list(_maxpool_samples(dtype, rng))[:5] +
                                            [Sample((arr(rng, (2, 4, 4), dtype),),
                                                    dict(kernel_size=2, stride=None, padding=0, dilation=1,
                                                         ceil_mode=False), desc="3-D input")]),
                    (F32, F64), differentiable=True, ref_upcast=False,
                    notes="indices are h·W + w in the input plane (Int64)"))

    def _mpg_samples(dtype, rng):
        for kw in [dict(kernel=[2, 2], stride=[2, 2], pad=[0, 0, 0, 0], dilation=[1, 1], ceil_mode=False),
                   dict(kernel=[3, 3], stride=[1, 1], pad=[1, 1, 1, 1], dilation=[1, 1], ceil_mode=False),
                   dict(kernel=[2, 2], stride=[2, 2], pad=[0, 0, 0, 0], dilation=[1, 1], ceil_mode=True)]:
            x = arr(rng, (1, 2, 5, 5), dtype)
            oh, ow, _ = _np_pool_windows(5, 5, kw["kernel"], kw["stride"], kw["pad"], kw["dilation"], kw["ceil_mode"])
            yield Sample((x, arr(rng, (1, 2, oh, ow), dtype)), kw, desc=f"k={kw['kernel']} s={kw['stride']} "
                                                                         f"ceil={kw['ceil_mode']}")

    def _np_mpg(x, dy, kernel, stride, pad, dilation, ceil_mode):
        _, idx = np_max_pool2d(x, kernel, stride, pad, dilation, ceil_mode)
        out = np.zeros(x.shape)
        n, c = x.shape[:2]
        flat = out.reshape(n, c, -1)
        for i in range(n):
            for j in range(c):
                np.add.at(flat[i, j], idx[i, j].reshape(-1), dy[i, j].reshape(-1))
        return out

    register(OpInfo("max_pool2d_grad", ("MaxPoolGrad", "MaxPoolGradGrad"),
                    lambda x, dy, **kw: _core.max_pool2d_grad(x, dy, **kw), _np_mpg, _mpg_samples, (F32, F64),
                    differentiable=True, grad_args=(1,),
                    notes="MaxPoolGrad as a forward op (dy scattered to each window's argmax, overlapping windows "
                          "accumulate); its gradient w.r.t. dy is MaxPoolGradGrad"))

    def _mpga(x, dy, kernel, stride, pad, dilation, ceil_mode):
        """MaxPool's backward as recorded in training: d/dx ⟨max_pool2d(x), dy⟩ — MaxPool keeps its argmax and the
        gradient is MaxPoolGradWithArgmax(x, dy, argmax); a function of dy (its gradient: MaxPoolGradGrad)."""
        p = (pad[0], pad[2]) if pad[0] == pad[1] and pad[2] == pad[3] else None
        if p is None:
            raise ValueError("symmetric pads only")
        return kiln.grad(lambda a: ops.sum(ops.mul(ops.max_pool2d(a, tuple(kernel), tuple(stride), p, tuple(dilation),
                                                                  ceil_mode=ceil_mode), dy)))(x)

    register(OpInfo("max_pool2d_grad_argmax", ("MaxPoolGradWithArgmax", "MaxPool", "MaxPoolGradGrad"),
                    _mpga, _np_mpg, _mpg_samples, (F32, F64), differentiable=True, grad_args=(1,),
                    notes="the gradient of ops.max_pool2d as a forward function of dy: dy scattered at the argmax "
                          "that MaxPool saved (MaxPoolGradWithArgmax; equal to MaxPoolGrad's result); its gradient "
                          "w.r.t. dy is MaxPoolGradGrad"))

    def _mpgg(x, h, dy0, **kw):
        """MaxPoolGradGrad(x, h) = ∂/∂dy ⟨MaxPoolGrad(x, dy), h⟩ — a function of h."""
        return kiln.grad(lambda d: ops.sum(ops.mul(_core.max_pool2d_grad(x, d, **kw), h)))(dy0)

    def _np_mpgg(x, h, dy0, kernel, stride, pad, dilation, ceil_mode):
        _, idx = np_max_pool2d(x, kernel, stride, pad, dilation, ceil_mode)
        n, c = x.shape[:2]
        return np.take_along_axis(h.reshape(n, c, -1), idx.reshape(n, c, -1), -1).reshape(idx.shape)

    register(OpInfo("max_pool2d_grad_grad", ("MaxPoolGradGrad", "MaxPoolGrad"), _mpgg, _np_mpgg,
                    lambda dtype, rng: iter([Sample((s.args[0], arr(rng, s.args[0].shape, dtype), s.args[1]),
                                                    s.kwargs, desc=s.desc) for s in _mpg_samples(dtype, rng)]),
                    (F32, F64), differentiable=True, grad_args=(1,),
                    notes="h read at each window's argmax; its gradient w.r.t. h (MaxPoolGrad) checks "
                          "MaxPoolGradGrad's own bprop — third order through the max pool"))

if hasattr(ops, "avg_pool2d"):
    def _avgpool_samples(dtype, rng):
        a = lambda s: arr(rng, s, dtype)
        yield Sample((a((2, 2, 4, 4)),), dict(kernel_size=2, stride=2, padding=0, ceil_mode=False,
                                              count_include_pad=True, divisor_override=0))
        yield Sample((a((1, 2, 5, 5)),), dict(kernel_size=3, stride=1, padding=1, ceil_mode=False,
                                              count_include_pad=True, divisor_override=0), desc="pad, include pad")
        yield Sample((a((1, 2, 5, 5)),), dict(kernel_size=3, stride=2, padding=1, ceil_mode=False,
                                              count_include_pad=False, divisor_override=0), desc="pad, exclude pad")
        yield Sample((a((1, 1, 5, 5)),), dict(kernel_size=2, stride=2, padding=1, ceil_mode=True,
                                              count_include_pad=True, divisor_override=0), desc="ceil_mode")
        yield Sample((a((1, 1, 4, 5)),), dict(kernel_size=(2, 3), stride=(1, 2), padding=(1, 0, 0, 1),
                                              ceil_mode=False, count_include_pad=True, divisor_override=3),
                     desc="asymmetric pads, divisor_override")
        yield Sample((NC(a((1, 2, 4, 4)), "T"),), dict(kernel_size=2, stride=1, padding=0, ceil_mode=False,
                                                       count_include_pad=True, divisor_override=0), desc="view")

    def _np_avgpool(x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
        k = _pair(kernel_size)
        return np_avg_pool2d(x, k, _pair(stride), _pads(padding), ceil_mode, count_include_pad, divisor_override)

    register(OpInfo("avg_pool2d", ("AvgPool", "AvgPoolGrad"), lambda x, **kw: ops.avg_pool2d(x, **kw), _np_avgpool,
                    _avgpool_samples, FLOATS, differentiable=True, out_dtype=_same_dtype))

    def _apg_samples(dtype, rng):
        for s in list(_avgpool_samples(dtype, rng))[:5]:
            x = np_value(s.args[0])
            kw = s.kwargs
            k = _pair(kw["kernel_size"])
            oh, ow, _ = _np_pool_windows(x.shape[2], x.shape[3], k, _pair(kw["stride"]), _pads(kw["padding"]),
                                         (1, 1), kw["ceil_mode"])
            yield Sample((arr(rng, x.shape[:2] + (oh, ow), dtype),),
                         dict(input_shape=x.shape, kernel=list(k), stride=list(_pair(kw["stride"])),
                              pad=list(_pads(kw["padding"])), ceil_mode=kw["ceil_mode"],
                              count_include_pad=kw["count_include_pad"], divisor_override=kw["divisor_override"]),
                         desc=s.desc)

    def _np_apg(dy, input_shape, kernel, stride, pad, ceil_mode, count_include_pad, divisor_override):
        return np_adjoint(lambda x: np_avg_pool2d(x, kernel, stride, pad, ceil_mode, count_include_pad,
                                                  divisor_override), input_shape, dy)

    register(OpInfo("avg_pool2d_grad", ("AvgPoolGrad", "AvgPool"),
                    lambda dy, input_shape, **kw: _core.avg_pool2d_grad(dy, list(input_shape), **kw), _np_apg,
                    _apg_samples, (F32, F64), differentiable=True,
                    notes="AvgPoolGrad as a forward op (the adjoint of AvgPool); its bprop is AvgPool"))

if hasattr(ops, "adaptive_avg_pool2d"):
    def _aap_samples(dtype, rng):
        a = lambda s: arr(rng, s, dtype)
        yield Sample((a((1, 2, 5, 7)),), dict(output_size=(2, 3)), desc="uneven bins")
        yield Sample((a((2, 1, 4, 4)),), dict(output_size=1), desc="global")
        yield Sample((a((1, 1, 3, 4)),), dict(output_size=(3, 4)), desc="identity")
        yield Sample((a((1, 2, 3, 5)),), dict(output_size=(None, 2)), desc="None keeps H")
        yield Sample((a((2, 5, 4)),), dict(output_size=3), desc="3-D input, upsampling-free bins")
        yield Sample((NC(a((1, 2, 4, 6)), "step"),), dict(output_size=(3, 4)), desc="view, overlapping bins")

    def _np_aap(x, output_size):
        squeeze = x.ndim == 3
        x4 = x[None] if squeeze else x
        o = _pair(output_size) if output_size is not None else (None, None)
        o = tuple(x4.shape[2 + i] if o[i] is None else o[i] for i in range(2))
        y = np_adaptive_avg_pool2d(x4, o)
        return y[0] if squeeze else y

    register(OpInfo("adaptive_avg_pool2d", ("AdaptiveAvgPool2D", "AdaptiveAvgPool2DGrad"),
                    lambda x, output_size: ops.adaptive_avg_pool2d(x, output_size), _np_aap, _aap_samples, FLOATS,
                    differentiable=True, out_dtype=_same_dtype))

    def _aapg_samples(dtype, rng):
        for in_shape, out in [((1, 2, 5, 7), (2, 3)), ((1, 1, 4, 6), (3, 4)), ((2, 1, 3, 3), (1, 1))]:
            yield Sample((arr(rng, in_shape[:2] + out, dtype),), dict(input_shape=in_shape), desc=f"{in_shape}→{out}")

    register(OpInfo("adaptive_avg_pool2d_grad", ("AdaptiveAvgPool2DGrad", "AdaptiveAvgPool2D"),
                    lambda dy, input_shape: _core.adaptive_avg_pool2d_grad(dy, list(input_shape)),
                    lambda dy, input_shape: np_adjoint(lambda x: np_adaptive_avg_pool2d(x, dy.shape[2:]),
                                                       input_shape, dy),
                    _aapg_samples, (F32, F64), differentiable=True))

if hasattr(ops, "batch_norm"):
    def _bn_samples(dtype, rng):
        for shape, training in [((4, 3), True), ((2, 3, 2, 2), True), ((3, 2, 2), False), ((2, 3, 2, 2), False)]:
            c = shape[1]
            x = arr(rng, shape, dtype)
            yield Sample((NC(x, "T") if len(shape) == 4 and not training else x, arr(rng, (c,), dtype, 0.5, 1.5),
                          arr(rng, (c,), dtype), arr(rng, (c,), dtype, -0.5, 0.5), arr(rng, (c,), dtype, 0.5, 1.5)),
                         dict(training=training, eps=1e-5), desc=f"training={training}")

    register(OpInfo("batch_norm", ("BatchNorm", "BatchNormGrad"),
                    lambda x, scale, bias, mean, var, training, eps: tuple(
                        _core.batch_norm(x, scale, bias, mean, var, training, eps)),
                    np_batch_norm, _bn_samples, (F32, F64, F16), differentiable=True, out_dtype=_same_dtype,
                    tol={F16: (5e-3, 5e-3), F32: (2e-5, 2e-5)}, grad_tol=(1e-5, 1e-5), grad_args=(0, 1, 2),
                    special_args=(0,),  # ±inf in scale/mean/var: Kiln folds y = x·a + b (a = scale/√(var + eps),
                    # b = bias − mean·a, as PyTorch's CPU kernel), so inf − inf = NaN where the unfolded reference
                    # gives ±inf; special values go into x only
                    notes="BatchNorm (y, batch mean, biased batch variance); training: the gradient of y alone is one "
                          "fused kernel (BatchNormGrad) when the backward is not itself differentiated; gradients flow through the "
                          "batch statistics (also from the mean/variance outputs). The mean/variance INPUTS get zero "
                          "gradient, in inference too (MindSpore's bprop: running statistics are state), so they are "
                          "not finite-differenced"))

    def _bn_state_samples(dtype, rng):
        for shape in [(4, 3), (2, 3, 2, 2)]:
            c = shape[1]
            yield Sample((arr(rng, shape, dtype), arr(rng, (c,), dtype, 0.5, 1.5), arr(rng, (c,), dtype),
                          arr(rng, (c,), dtype, -0.5, 0.5), arr(rng, (c,), dtype, 0.5, 1.5)),
                         dict(momentum=0.1, eps=1e-5), desc=f"{shape}")

    def _bn_state_run(sample, use_jit):
        x, w, b, m0, v0 = sample.args
        m, v = _param(m0, "bn_mean"), _param(v0, "bn_var")
        wt, bt = Tensor(w), Tensor(b)
        k = sample.kwargs
        return _run_stateful(lambda t: ops.batch_norm(t, m, v, wt, bt, True, k["momentum"], k["eps"]), [m, v], [x],
                             use_jit)

    def _np_unbiased_var(x):
        """The unbiased (ddof=1) per-channel variance over every axis but 1: what running/moving variances get."""
        return x.var(axis=tuple(i for i in range(x.ndim) if i != 1), ddof=1)

    def _bn_state_ref(sample):
        x, w, b, m0, v0 = [a.astype(np.float64) for a in sample.args]
        y, bm, _ = np_batch_norm(x, w, b, m0, v0, True, sample.kwargs["eps"])
        mom = sample.kwargs["momentum"]
        return [y, (1 - mom) * m0 + mom * bm, (1 - mom) * v0 + mom * _np_unbiased_var(x)]

    register(OpInfo("batch_norm_training_update", ("BatchNorm", "Assign"), kind="state", samples=_bn_state_samples,
                    dtypes=(F32, F64), run=_bn_state_run, ref=_bn_state_ref,
                    notes="ops.batch_norm(training=True) updates the running statistics in place: "
                          "running = (1 − momentum)·running + momentum·batch, with the UNBIASED batch variance "
                          "(ddof=1, as MindSpore/PyTorch); the output is normalized with the biased one"))

    def _bn_cell_samples(dtype, rng):
        for shape in [(4, 3), (2, 3, 4), (2, 3, 2, 2), (2, 2)]:
            c = shape[1]
            yield Sample((arr(rng, shape, dtype), arr(rng, (c,), dtype, -0.5, 0.5), arr(rng, (c,), dtype, 0.5, 1.5)),
                         dict(momentum=0.9, eps=1e-5), desc=f"{shape}")

    def _bn_cell_run(sample, use_jit):
        """nn.BatchNorm1d/2d in training, called once (eagerly or inside kiln.jit): y, moving_mean, moving_variance."""
        x, m0, v0 = sample.args
        cls = kiln.nn.BatchNorm2d if x.ndim == 4 else kiln.nn.BatchNorm1d
        bn = cls(x.shape[1], momentum=sample.kwargs["momentum"], eps=sample.kwargs["eps"],
                 dtype=kiln.float64 if x.dtype == F64 else kiln.float32)
        bn.set_train(True)
        ops.assign(bn.moving_mean, Tensor(m0))
        ops.assign(bn.moving_variance, Tensor(v0))
        return _run_stateful(bn, [bn.moving_mean, bn.moving_variance], [x], use_jit)

    def _bn_cell_ref(sample):
        x, m0, v0 = [a.astype(np.float64) for a in sample.args]
        c = x.shape[1]
        y, bm, _ = np_batch_norm(x, np.ones(c), np.zeros(c), m0, v0, True, sample.kwargs["eps"])
        mom = sample.kwargs["momentum"]
        return [y, mom * m0 + (1 - mom) * bm, mom * v0 + (1 - mom) * _np_unbiased_var(x)]

    register(OpInfo("nn.BatchNorm_training_update", ("BatchNorm", "Assign"), kind="state", samples=_bn_cell_samples,
                    dtypes=(F32, F64), run=_bn_cell_run, ref=_bn_cell_ref,
                    notes="nn.BatchNorm1d/2d in training: moving = momentum·moving + (1 − momentum)·batch, with the "
                          "UNBIASED batch variance (MindSpore: BatchNorm1d(2, momentum=0.9) on [[1,2],[3,6],[5,7],"
                          "[7,1]] gives moving_variance [1.5667, 1.7667]); the output uses the biased one"))

if hasattr(ops, "layer_norm"):
    def _np_layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5):
        axes = tuple(range(x.ndim - len(normalized_shape), x.ndim))
        y = (x - x.mean(axes, keepdims=True)) / np.sqrt(x.var(axes, keepdims=True) + eps)
        return y * (1 if weight is None else weight) + (0 if bias is None else bias)

    register(OpInfo("layer_norm", ("LayerNorm", "LayerNormGrad"),
                    lambda x, w, b, normalized_shape: ops.layer_norm(x, normalized_shape, w, b),
                    lambda x, w, b, normalized_shape: _np_layer_norm(x, normalized_shape, w, b),
                    lambda dtype, rng: iter([Sample((arr(rng, (3, 4), dtype), arr(rng, (4,), dtype),
                                                     arr(rng, (4,), dtype)), dict(normalized_shape=(4,))),
                                             Sample((NC(arr(rng, (2, 3, 2), dtype), "T"), arr(rng, (3, 2), dtype),
                                                     arr(rng, (3, 2), dtype)), dict(normalized_shape=(3, 2)),
                                                    desc="two axes, view"),
                                             Sample((arr(rng, (33, 5), dtype, -3.0, 5.0), arr(rng, (5,), dtype),
                                                     arr(rng, (5,), dtype)), dict(normalized_shape=(5,)),
                                                    desc="rows over two blocks")]),
                    (F32, F64), differentiable=True, tol={F32: (2e-5, 2e-5)},
                    notes="the fused LayerNorm op (y, mean, rstd) for Float32/Float64 with gamma and beta; its backward "
                          "is the fused LayerNormGrad unless the backward pass is itself differentiated (then Kiln "
                          "ops, statistics recomputed from x)"))

if hasattr(ops, "group_norm"):
    def _np_group_norm(x, num_groups, weight, bias, eps=1e-5):
        n, c = x.shape[:2]
        g = x.reshape(n, num_groups, -1)
        y = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + eps)).reshape(x.shape)
        shape = [1, c] + [1] * (x.ndim - 2)
        return y * weight.reshape(shape) + bias.reshape(shape)

    register(OpInfo("group_norm", (), lambda x, w, b, num_groups: ops.group_norm(x, num_groups, w, b),
                    lambda x, w, b, num_groups: _np_group_norm(x, num_groups, w, b),
                    lambda dtype, rng: iter([Sample((arr(rng, (2, 4, 3), dtype), arr(rng, (4,), dtype),
                                                     arr(rng, (4,), dtype)), dict(num_groups=2))]),
                    (F32, F64), differentiable=True, tol={F32: (2e-5, 2e-5)},
                    notes="composed of Kiln ops (no C++ op of its own)"))
