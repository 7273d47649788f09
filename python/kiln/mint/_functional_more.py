"""More `mint` adapters: MindSpore 2.10 mint functions that are an `ops` function under PyTorch's argument names
(`dim` for `axis`, `input` for `x`), defaults or keyword-only arguments. Each calls the same Kiln op as the ops
function (so gradients and Graph mode are the op's) and is declared `@defop(name="mint.<path>")`;
tests/python/test_mint.py (CASES) checks each against NumPy. Signatures are MindSpore 2.10's (checked with
inspect.signature against mindspore.mint)."""
from ..common import _indexing
from ..common.tensor import Tensor
from .._args import int_arg
from .. import ops
from ..ops._opdef import defop

_F = "mint.nn.functional."


def _t(x, op, name="input"):
    if not isinstance(x, Tensor):
        raise TypeError(f"For 'mint.{op}', the argument '{name}' must be a Tensor, but got {type(x).__name__}.")
    return x


def _inplace(input, out, inplace, op):
    if not isinstance(inplace, bool):
        raise TypeError(f"For '{_F}{op}', 'inplace' must be a bool, but got {type(inplace).__name__}.")
    return _indexing.assign(input, out, f"{_F}{op}") if inplace else out


# ---------------------------------------------------------------------------------------------- tensor ops

@defop(name="mint.bmm")
def bmm(input, mat2):
    """mint.bmm(input, mat2): batched matrix product (b, n, m) @ (b, m, p) -> (b, n, p) (ops.bmm)."""
    return ops.bmm(_t(input, "bmm"), _t(mat2, "bmm", "mat2"))


@defop(name="mint.baddbmm")
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """mint.baddbmm(input, batch1, batch2, *, beta=1, alpha=1): beta·input + alpha·(batch1 @ batch2) (ops.baddbmm;
    beta and alpha keyword-only, as PyTorch's)."""
    return ops.baddbmm(_t(input, "baddbmm"), batch1, batch2, beta=beta, alpha=alpha)


@defop(name="mint.chunk")
def chunk(input, chunks, dim=0):
    """mint.chunk(input, chunks, dim=0): `chunks` pieces along dim, the last smaller when it does not divide
    (ops.chunk)."""
    return ops.chunk(_t(input, "chunk"), chunks, int_arg("mint.chunk", "dim", dim))


@defop(name="mint.cummax")
def cummax(input, dim):
    """mint.cummax(input, dim): (running maximum along dim, Int64 index of where it was reached) (ops.cummax)."""
    return ops.cummax(_t(input, "cummax"), int_arg("mint.cummax", "dim", dim))


@defop(name="mint.cummin")
def cummin(input, dim):
    """mint.cummin(input, dim): (running minimum along dim, Int64 index of where it was reached) (ops.cummin)."""
    return ops.cummin(_t(input, "cummin"), int_arg("mint.cummin", "dim", dim))


@defop(name="mint.diff")
def diff(input, n=1, dim=-1, prepend=None, append=None):
    """mint.diff(input, n=1, dim=-1, prepend=None, append=None): the n-th forward difference along dim, after
    concatenating prepend/append (ops.diff)."""
    return ops.diff(_t(input, "diff"), n, int_arg("mint.diff", "dim", dim), prepend, append)


@defop(name="mint.frac")
def frac(input):
    """mint.frac(input): input − trunc(input), the sign of input kept (ops.frac)."""
    return ops.frac(_t(input, "frac"))


@defop(name="mint.index_select")
def index_select(input, dim, index):
    """mint.index_select(input, dim, index): the entries at the 1-D integer `index` along dim (ops.index_select)."""
    return ops.index_select(_t(input, "index_select"), int_arg("mint.index_select", "dim", dim), index)


@defop(name="mint.isnan")
def isnan(tensor):
    """mint.isnan(tensor): Bool, True where the element is NaN (ops.isnan; MindSpore names the argument `tensor`)."""
    return ops.isnan(_t(tensor, "isnan", "tensor"))


@defop(name="mint.mv")
def mv(input, vec):
    """mint.mv(input, vec): matrix (n, m) times vector (m,) -> (n,) (ops.mv)."""
    return ops.mv(_t(input, "mv"), _t(vec, "mv", "vec"))


@defop(name="mint.t")
def t(input):
    """mint.t(input): a 2-D input transposed; 0-D and 1-D inputs unchanged (ops.t)."""
    return ops.t(_t(input, "t"))


@defop(name="mint.histc")
def histc(input, bins=100, min=0, max=0):
    """mint.histc(input, bins=100, min=0, max=0): counts in `bins` equal bins over [min, max] (min = max = 0: the
    input's own range), elements outside ignored, input's float dtype (ops.histc)."""
    return ops.histc(_t(input, "histc"), bins, float(min), float(max))


@defop(name="mint.cdist")
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """mint.cdist(x1, x2, p=2.0, compute_mode=...): p-norm distances between the rows of x1 (*, P, M) and x2
    (*, R, M) -> (*, P, R) (ops.cdist). compute_mode is PyTorch's choice of algorithm for p = 2; Kiln computes the
    differences directly in every mode (the exact values)."""
    modes = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist")
    if compute_mode not in modes:
        raise ValueError(f"For 'mint.cdist', 'compute_mode' must be one of {modes}, but got {compute_mode!r}.")
    return ops.cdist(_t(x1, "cdist", "x1"), _t(x2, "cdist", "x2"), p)


@defop(name="mint.nansum")
def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """mint.nansum(input, dim=None, keepdim=False, *, dtype=None): the sum over dim (None: all) with NaNs counted as
    zero (ops.nansum)."""
    return ops.nansum(_t(input, "nansum"), dim, keepdim, dtype=dtype)


# ---------------------------------------------------------------------------------------------- nn.functional

@defop(name=_F + "glu")
def glu(input, dim=-1):
    """F.glu(input, dim=-1): a · sigmoid(b) for the two halves a, b of input along dim (ops.glu)."""
    return ops.glu(_t(input, "nn.functional.glu"), int_arg(_F + "glu", "dim", dim))


@defop(name=_F + "mish")
def mish(input):
    """F.mish(input): x · tanh(softplus(x)) (ops.mish)."""
    return ops.mish(_t(input, "nn.functional.mish"))


@defop(name=_F + "selu")
def selu(input):
    """F.selu(input): scale · (max(0, x) + min(0, alpha·(exp(x) − 1))), scale ≈ 1.0507, alpha ≈ 1.6733 (ops.selu)."""
    return ops.selu(_t(input, "nn.functional.selu"))


@defop(name=_F + "pixel_shuffle")
def pixel_shuffle(input, upscale_factor):
    """F.pixel_shuffle(input, upscale_factor): (*, C·r², H, W) -> (*, C, H·r, W·r) (ops.pixel_shuffle)."""
    return ops.pixel_shuffle(_t(input, "nn.functional.pixel_shuffle"), upscale_factor)


@defop(name=_F + "silu")
def silu(input, inplace=False):
    """F.silu(input, inplace=False): x · sigmoid(x); inplace=True writes it into input."""
    return _inplace(input, ops.silu(_t(input, "nn.functional.silu")), inplace, "silu")


@defop(name=_F + "elu")
def elu(input, alpha=1.0, inplace=False):
    """F.elu(input, alpha=1.0, inplace=False): x for x > 0, alpha·(exp(x) − 1) otherwise; inplace=True writes it
    into input."""
    return _inplace(input, ops.elu(_t(input, "nn.functional.elu"), alpha), inplace, "elu")


@defop(name=_F + "hardtanh")
def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """F.hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False): input clipped to [min_val, max_val]; inplace=True
    writes it into input."""
    return _inplace(input, ops.hardtanh(_t(input, "nn.functional.hardtanh"), min_val, max_val), inplace,
                    "hardtanh")


@defop(name=_F + "threshold")
def threshold(input, threshold, value, inplace=False):
    """F.threshold(input, threshold, value, inplace=False): input where input > threshold, else value;
    inplace=True writes it into input."""
    return _inplace(input, ops.threshold(_t(input, "nn.functional.threshold"), threshold, value), inplace,
                    "threshold")


@defop(name=_F + "leaky_relu")
def leaky_relu(input, negative_slope=0.01):
    """F.leaky_relu(input, negative_slope=0.01): x for x ≥ 0, negative_slope·x otherwise (PyTorch's default slope;
    ops.leaky_relu's is 0.2)."""
    return ops.leaky_relu(_t(input, "nn.functional.leaky_relu"), negative_slope)


@defop(name=_F + "avg_pool1d")
def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """F.avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True): average
    pooling of (N, C, L) or (C, L); stride None = kernel_size (ops.avg_pool1d)."""
    return ops.avg_pool1d(_t(input, "nn.functional.avg_pool1d"), kernel_size,
                          kernel_size if stride is None else stride, padding, ceil_mode, count_include_pad)


@defop(name=_F + "avg_pool3d")
def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """F.avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
    divisor_override=None): average pooling of (N, C, D, H, W) or (C, D, H, W); stride None = kernel_size;
    divisor_override (None: the window size) divides the window sums (ops.avg_pool3d)."""
    return ops.avg_pool3d(_t(input, "nn.functional.avg_pool3d"), kernel_size,
                          kernel_size if stride is None else stride, padding, ceil_mode, count_include_pad,
                          0 if divisor_override is None else divisor_override)
