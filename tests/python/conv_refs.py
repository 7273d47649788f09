"""NumPy references for convolution, pooling and batch normalization (NCHW), shared by test_conv_pool_norm.py and
the op-registry entries of op_registry_conv.py. Written for clarity on small shapes, in float64."""
import numpy as np


def conv_out_len(size, k, s, p0, p1, d):
    return (size + p0 + p1 - d * (k - 1) - 1) // s + 1


def _windows(xp, i, j, oh, ow, stride, dil):
    """The (…, OH, OW) slice of padded input xp seen by kernel tap (i, j)."""
    return xp[..., i * dil[0]:i * dil[0] + stride[0] * (oh - 1) + 1:stride[0],
              j * dil[1]:j * dil[1] + stride[1] * (ow - 1) + 1:stride[1]]


def np_conv2d(x, w, stride=(1, 1), pad=(0, 0, 0, 0), dilation=(1, 1), groups=1):
    """Cross-correlation: x (N, C, H, W), w (O, C/groups, KH, KW); pad (top, bottom, left, right)."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    oh = conv_out_len(h, kh, stride[0], pad[0], pad[1], dilation[0])
    ow = conv_out_len(wd, kw, stride[1], pad[2], pad[3], dilation[1])
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad[0], pad[1]), (pad[2], pad[3])))
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for g in range(groups):
        for i in range(kh):
            for j in range(kw):
                patch = _windows(xp[:, g * cg:(g + 1) * cg], i, j, oh, ow, stride, dilation)
                out[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", patch, w[g * og:(g + 1) * og, :, i, j])
    return out.astype(np.result_type(x, w))


def np_conv2d_backprop_input(dy, w, input_shape, stride=(1, 1), pad=(0, 0, 0, 0), dilation=(1, 1), groups=1):
    """The adjoint of np_conv2d in x: dy (N, O, OH, OW) → (input_shape)."""
    n, c, h, wd = input_shape
    o, cg, kh, kw = w.shape
    oh, ow = dy.shape[2:]
    xp = np.zeros((n, c, h + pad[0] + pad[1], wd + pad[2] + pad[3]))
    og = o // groups
    for g in range(groups):
        for i in range(kh):
            for j in range(kw):
                view = _windows(xp[:, g * cg:(g + 1) * cg], i, j, oh, ow, stride, dilation)
                view += np.einsum("nohw,oc->nchw", dy[:, g * og:(g + 1) * og], w[g * og:(g + 1) * og, :, i, j])
    return xp[:, :, pad[0]:pad[0] + h, pad[2]:pad[2] + wd].astype(np.result_type(dy, w))


def np_conv2d_backprop_filter(dy, x, filter_shape, stride=(1, 1), pad=(0, 0, 0, 0), dilation=(1, 1), groups=1):
    """The adjoint of np_conv2d in w: dy (N, O, OH, OW), x (N, C, H, W) → (filter_shape)."""
    o, cg, kh, kw = filter_shape
    oh, ow = dy.shape[2:]
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad[0], pad[1]), (pad[2], pad[3])))
    dw = np.zeros(filter_shape)
    og = o // groups
    for g in range(groups):
        for i in range(kh):
            for j in range(kw):
                patch = _windows(xp[:, g * cg:(g + 1) * cg], i, j, oh, ow, stride, dilation)
                dw[g * og:(g + 1) * og, :, i, j] = np.einsum("nchw,nohw->oc", patch, dy[:, g * og:(g + 1) * og])
    return dw.astype(np.result_type(dy, x))


def pool_out_len(size, k, s, p0, p1, d, ceil):
    span = size + p0 + p1 - d * (k - 1) - 1
    o = (-(-span // s) if ceil else span // s) + 1
    if ceil and (o - 1) * s >= size + p0:
        o -= 1
    return o


def np_max_pool(x, kernel, stride, pad=(0, 0, 0, 0), dilation=(1, 1), ceil_mode=False):
    """(values, Int64 argmax h·W + w): the first maximum in row-major window order; padding never wins."""
    n, c, h, w = x.shape
    oh = pool_out_len(h, kernel[0], stride[0], pad[0], pad[1], dilation[0], ceil_mode)
    ow = pool_out_len(w, kernel[1], stride[1], pad[2], pad[3], dilation[1], ceil_mode)
    out = np.full((n, c, oh, ow), -np.inf)
    idx = np.zeros((n, c, oh, ow), dtype=np.int64)
    for a in range(oh):
        for b in range(ow):
            best = np.full((n, c), -np.inf)
            for i in range(kernel[0]):
                for j in range(kernel[1]):
                    hh, ww = a * stride[0] - pad[0] + i * dilation[0], b * stride[1] - pad[2] + j * dilation[1]
                    if 0 <= hh < h and 0 <= ww < w:
                        v = x[:, :, hh, ww]
                        better = v > best
                        best = np.where(better, v, best)
                        idx[:, :, a, b] = np.where(better, hh * w + ww, idx[:, :, a, b])
            out[:, :, a, b] = best
    return out.astype(x.dtype), idx


def np_max_pool_grad(x, dy, kernel, stride, pad=(0, 0, 0, 0), dilation=(1, 1), ceil_mode=False):
    """dy scattered (added) to each window's argmax."""
    _, idx = np_max_pool(x, kernel, stride, pad, dilation, ceil_mode)
    n, c, h, w = x.shape
    dx = np.zeros((n * c, h * w))
    flat_i, flat_d = idx.reshape(n * c, -1), dy.reshape(n * c, -1)
    for p in range(n * c):
        np.add.at(dx[p], flat_i[p], flat_d[p])
    return dx.reshape(x.shape).astype(np.result_type(x, dy))


def np_max_pool_grad_grad(x, hx, kernel, stride, pad=(0, 0, 0, 0), dilation=(1, 1), ceil_mode=False):
    """hx (x's shape) read at each window's argmax."""
    _, idx = np_max_pool(x, kernel, stride, pad, dilation, ceil_mode)
    n, c = x.shape[:2]
    return np.take_along_axis(hx.reshape(n, c, -1), idx.reshape(n, c, -1), axis=2).reshape(idx.shape)


def _avg_windows(shape, kernel, stride, pad, ceil_mode, include_pad, divisor):
    """Yields (a, b, (h0, h1, w0, w1), divisor) for each output position."""
    n, c, h, w = shape
    oh = pool_out_len(h, kernel[0], stride[0], pad[0], pad[1], 1, ceil_mode)
    ow = pool_out_len(w, kernel[1], stride[1], pad[2], pad[3], 1, ceil_mode)
    for a in range(oh):
        for b in range(ow):
            hs, ws = a * stride[0] - pad[0], b * stride[1] - pad[2]
            he, we = min(hs + kernel[0], h + pad[1]), min(ws + kernel[1], w + pad[3])
            h0, h1, w0, w1 = max(hs, 0), min(he, h), max(ws, 0), min(we, w)
            d = divisor or ((he - hs) * (we - ws) if include_pad else (h1 - h0) * (w1 - w0))
            yield a, b, (h0, h1, w0, w1), d, (oh, ow)


def np_avg_pool(x, kernel, stride, pad=(0, 0, 0, 0), ceil_mode=False, count_include_pad=True, divisor_override=0):
    out = None
    for a, b, (h0, h1, w0, w1), d, (oh, ow) in _avg_windows(x.shape, kernel, stride, pad, ceil_mode,
                                                           count_include_pad, divisor_override):
        if out is None:
            out = np.zeros(x.shape[:2] + (oh, ow))
        out[:, :, a, b] = x[:, :, h0:h1, w0:w1].sum(axis=(2, 3)) / d
    return out.astype(x.dtype)


def np_avg_pool_grad(dy, input_shape, kernel, stride, pad=(0, 0, 0, 0), ceil_mode=False, count_include_pad=True,
                     divisor_override=0):
    dx = np.zeros(input_shape)
    for a, b, (h0, h1, w0, w1), d, _ in _avg_windows(input_shape, kernel, stride, pad, ceil_mode, count_include_pad,
                                                    divisor_override):
        dx[:, :, h0:h1, w0:w1] += (dy[:, :, a, b] / d)[:, :, None, None]
    return dx.astype(dy.dtype)


def _bins(size, out):
    return [((i * size) // out, -(-((i + 1) * size) // out)) for i in range(out)]


def np_adaptive_avg_pool(x, output_size):
    oh, ow = output_size
    out = np.zeros(x.shape[:2] + (oh, ow))
    for a, (hs, he) in enumerate(_bins(x.shape[2], oh)):
        for b, (ws, we) in enumerate(_bins(x.shape[3], ow)):
            out[:, :, a, b] = x[:, :, hs:he, ws:we].mean(axis=(2, 3))
    return out.astype(x.dtype)


def np_adaptive_avg_pool_grad(dy, input_shape):
    dx = np.zeros(input_shape)
    for a, (hs, he) in enumerate(_bins(input_shape[2], dy.shape[2])):
        for b, (ws, we) in enumerate(_bins(input_shape[3], dy.shape[3])):
            dx[:, :, hs:he, ws:we] += (dy[:, :, a, b] / ((he - hs) * (we - ws)))[:, :, None, None]
    return dx.astype(dy.dtype)


def np_batch_norm(x, gamma, beta, mean, var, training, epsilon):
    """(y, mean, variance) as the BatchNorm op: batch statistics (biased variance) when training."""
    axes = (0,) + tuple(range(2, x.ndim))
    shape = [1, -1] + [1] * (x.ndim - 2)
    if training:
        mean, var = x.mean(axis=axes), x.var(axis=axes)
    y = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + epsilon) * gamma.reshape(shape) + beta.reshape(shape)
    return y.astype(x.dtype), np.asarray(mean).astype(gamma.dtype), np.asarray(var).astype(gamma.dtype)
