"""Spatial sampling ops of MindSpore 2.10's `ops`: affine_grid (+ the AffineGrid primitive), grid_sample and upsample
(MindSpore's alias of ops.interpolate), compositions of Kiln's kernels (gradients w.r.t. the input and the grid /
theta from the building blocks).

Coordinates (PyTorch's and MindSpore's convention): a normalized coordinate g ∈ [−1, 1] maps to the pixel
coordinate x = (g + 1)/2·(W − 1) with align_corners=True (−1 and 1 are the centres of the corner pixels) and
x = ((g + 1)·W − 1)/2 with align_corners=False (−1 and 1 are the outer edges of the corner pixels).
grid_sample reads input at those coordinates:
  'bilinear': Σ over the 4 neighbours (⌊x⌋ + {0,1}, ⌊y⌋ + {0,1}) of the bilinear weights; 'nearest': the pixel at
  (round(x), round(y)), halves away from zero (C's round, as MindSpore's CPU kernel; PyTorch rounds halves to even);
  padding_mode 'zeros' (a neighbour outside the input contributes 0), 'border' (coordinates clipped into the input),
  'reflection' (coordinates reflected at the borders — the corner centres with align_corners, the outer edges
  without — then clipped).
"""
from .._loader import _core
from .._args import _got
from ..common import dtype as mstype
from ..common.tensor import Tensor
from ._opdef import defop

__all__ = ["affine_grid", "grid_sample", "upsample"]

_FLOATS = (mstype.float16, mstype.bfloat16, mstype.float32, mstype.float64)


def _base_coords(n, align_corners, dtype):
    """The n normalized coordinates of the pixel centres along one axis (linspace(−1, 1, n) with align_corners,
    (2i + 1)/n − 1 without); n = 1 gives 0 in both."""
    i = _core.arange(0, n, 1, dtype)
    if n == 1:
        return _core.zeros_like(i)
    if align_corners:
        return _core.sub(_core.mul(i, 2.0 / (n - 1)), 1.0)
    return _core.sub(_core.div(_core.add(_core.mul(i, 2.0), 1.0), float(n)), 1.0)


@defop(primitive="AffineGrid", prim_attrs={"align_corners": ("align_corners", False)})
def affine_grid(theta, size, align_corners=False):
    """MindSpore's ops.affine_grid(theta, size, align_corners=False): the sampling grid of the affine maps theta.

    theta: float (N, 2, 3) with size = (N, C, H, W) → grid (N, H, W, 2) whose [n, h, w] = theta[n]·(x_w, y_h, 1);
    or (N, 3, 4) with size = (N, C, D, H, W) → (N, D, H, W, 3) = theta[n]·(x_w, y_h, z_d, 1); x, y, z the pixel
    centres' normalized coordinates (module docstring). Gradient w.r.t. theta.
    Raises TypeError for a non-float theta or a size that is not a tuple of ints, ValueError for shapes that do not
    match (size[0] must be N; 4 or 5 entries)."""
    op = "affine_grid"
    if not isinstance(theta, Tensor):
        raise TypeError(f"For '{op}', the 'theta' must be a Tensor, but got {type(theta).__name__}.")
    if theta.dtype not in _FLOATS:
        raise TypeError(f"For '{op}', the 'theta' must be a float Tensor, but got {theta.dtype}.")
    if not isinstance(size, (tuple, list)) or not all(isinstance(v, int) and not isinstance(v, bool) for v in size):
        raise TypeError(f"For '{op}', the 'size' must be a tuple of ints, but got {_got(size)}.")
    if not isinstance(align_corners, bool):
        raise TypeError(f"For '{op}', the 'align_corners' must be a bool, but got {_got(align_corners)}.")
    nd = len(size) - 2
    if nd not in (2, 3) or tuple(theta.shape) != (size[0], nd, nd + 1) or any(v < 1 for v in size):
        raise ValueError(f"For '{op}', theta must be (N, 2, 3) for a 4-D size or (N, 3, 4) for a 5-D size, with N = "
                         f"size[0] and positive sizes, but got theta shape {tuple(theta.shape)} and size "
                         f"{tuple(size)}.")
    dt = theta.dtype
    spatial = list(size[2:])  # (H, W) or (D, H, W)
    axes = [_base_coords(s, align_corners, dt) for s in spatial]  # z?, y, x
    # base (P, nd + 1): columns x, y, (z), 1 over the grid positions in row-major order
    cols = []
    for k in range(nd):  # x, y, z: x varies along the last spatial dim
        dim = nd - 1 - k
        shape = [1] * nd
        shape[dim] = spatial[dim]
        cols.append(_core.broadcast_to(_core.reshape(axes[dim], shape), spatial))
    cols.append(_core.full(spatial, 1.0, dt))
    base = _core.reshape(_core.stack(cols, nd), [-1, nd + 1])  # (P, nd + 1)
    grid = _core.matmul(base, _core.transpose(theta, [0, 2, 1]))  # (N, P, nd)
    return _core.reshape(grid, [size[0]] + spatial + [nd])


def _unnormalize(g, n, align_corners):
    if align_corners:
        return _core.mul(_core.add(g, 1.0), (n - 1) / 2.0)
    return _core.div(_core.sub(_core.mul(_core.add(g, 1.0), float(n)), 1.0), 2.0)


def _reflect(x, lo, hi):
    """x reflected into [lo, hi] (PyTorch's reflect_coordinates, twice the range as the period)."""
    if hi <= lo:
        return _core.zeros_like(x) if lo == 0 else _core.add(_core.zeros_like(x), lo)
    span = hi - lo
    d = _core.abs(_core.sub(x, lo))
    flips = _core.floor(_core.div(d, span))
    extra = _core.sub(d, _core.mul(flips, span))
    even = _core.equal(_core.sub(flips, _core.mul(_core.floor(_core.div(flips, 2.0)), 2.0)), 0.0)
    return _core.select(even, _core.add(extra, lo), _core.sub(hi, extra))


def _source(g, n, padding_mode, align_corners):
    x = _unnormalize(g, n, align_corners)
    if padding_mode == "border":
        x = _core.clip(x, _core.full([], 0.0, x.dtype), _core.full([], float(n - 1), x.dtype))
    elif padding_mode == "reflection":
        x = _reflect(x, 0.0, float(n - 1)) if align_corners else _reflect(x, -0.5, n - 0.5)
        x = _core.clip(x, _core.full([], 0.0, x.dtype), _core.full([], float(n - 1), x.dtype))
    return x


def _round_half_away(x):
    """round to nearest, halves away from zero (C's round, which MindSpore's CPU kernel uses)."""
    r = _core.floor(_core.add(_core.abs(x), 0.5))
    return _core.select(_core.less(x, 0.0), _core.neg(r), r)


@defop(mint="nn.functional.grid_sample")
def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """MindSpore's ops.grid_sample(input, grid, mode='bilinear', padding_mode='zeros', align_corners=None) for 4-D
    input: out[n, c, i, j] = input[n, c] sampled at the normalized (x, y) = grid[n, i, j] (module docstring).

    input (N, C, H, W) float; grid (N, H_out, W_out, 2) of input's dtype, x (width) first; mode 'bilinear' or
    'nearest'; padding_mode 'zeros', 'border' or 'reflection'; align_corners None (= False) or bool. Result
    (N, C, H_out, W_out). Gradients w.r.t. input and (bilinear) grid; NaN coordinates read as outside (zeros).
    Raises TypeError for non-float Tensors or mismatched dtypes, ValueError for shapes (5-D volumetric input is not
    supported by Kiln: ValueError), modes or padding modes."""
    op = "grid_sample"
    for name, t in (("input", input), ("grid", grid)):
        if not isinstance(t, Tensor):
            raise TypeError(f"For '{op}', the '{name}' must be a Tensor, but got {type(t).__name__}.")
        if t.dtype not in _FLOATS:
            raise TypeError(f"For '{op}', the '{name}' must be a float Tensor, but got {t.dtype}.")
    if input.dtype != grid.dtype:
        raise TypeError(f"For '{op}', 'input' and 'grid' must have one dtype, but got {input.dtype} and {grid.dtype}.")
    if input.ndim != 4:
        raise ValueError(f"For '{op}', Kiln samples 4-D input (N, C, H, W) only, but got shape {tuple(input.shape)}.")
    if grid.ndim != 4 or grid.shape[0] != input.shape[0] or grid.shape[3] != 2:
        raise ValueError(f"For '{op}', the 'grid' must be (N, H_out, W_out, 2) with N = {input.shape[0]}, but got "
                         f"shape {tuple(grid.shape)}.")
    if mode not in ("bilinear", "nearest"):
        raise ValueError(f"For '{op}', the 'mode' must be 'bilinear' or 'nearest', but got {mode!r}.")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"For '{op}', the 'padding_mode' must be 'zeros', 'border' or 'reflection', but got "
                         f"{padding_mode!r}.")
    if align_corners is None:
        align_corners = False
    if not isinstance(align_corners, bool):
        raise TypeError(f"For '{op}', the 'align_corners' must be a bool or None, but got {_got(align_corners)}.")
    n, c, h, w = input.shape
    ho, wo = grid.shape[1], grid.shape[2]
    gx = _core.reshape(_core.strided_slice(grid, [0, 0, 0, 0], [n, ho, wo, 1], [1, 1, 1, 1]), [n, 1, ho * wo])
    gy = _core.reshape(_core.strided_slice(grid, [0, 0, 0, 1], [n, ho, wo, 2], [1, 1, 1, 1]), [n, 1, ho * wo])
    x = _source(gx, w, padding_mode, align_corners)
    y = _source(gy, h, padding_mode, align_corners)
    # a NaN coordinate reads as outside the input (0, as PyTorch's bounds test): moved to −2, whose taps are all out
    bad = _core.logical_or(_core.not_equal(x, x), _core.not_equal(y, y))
    x = _core.select(bad, _core.full([], -2.0, x.dtype), x)
    y = _core.select(bad, _core.full([], -2.0, y.dtype), y)
    flat = _core.reshape(input, [n, c, h * w])
    from .index_func import gather_elements

    def tap(xi, yi):
        """input at integer coordinates (xi, yi) (floats), 0 outside; and the in-bounds mask."""
        inside = _core.logical_and(_core.logical_and(_core.greater_equal(xi, 0.0), _core.less_equal(xi, w - 1.0)),
                                   _core.logical_and(_core.greater_equal(yi, 0.0), _core.less_equal(yi, h - 1.0)))
        xs = _core.select(inside, xi, _core.zeros_like(xi))
        ys = _core.select(inside, yi, _core.zeros_like(yi))
        idx = _core.cast(_core.add(_core.mul(ys, float(w)), xs), mstype.int64)
        v = gather_elements(flat, 2, _core.broadcast_to(idx, [n, c, ho * wo]))
        return _core.select(_core.broadcast_to(inside, [n, c, ho * wo]), v, _core.zeros_like(v))

    if mode == "nearest":
        out = tap(_core.stop_gradient(_round_half_away(x)), _core.stop_gradient(_round_half_away(y)))
    else:
        x0 = _core.stop_gradient(_core.floor(x))
        y0 = _core.stop_gradient(_core.floor(y))
        wx1, wy1 = _core.sub(x, x0), _core.sub(y, y0)
        wx0, wy0 = _core.sub(1.0, wx1), _core.sub(1.0, wy1)
        x1, y1 = _core.add(x0, 1.0), _core.add(y0, 1.0)
        top = _core.add(_core.mul(tap(x0, y0), _core.mul(wx0, wy0)), _core.mul(tap(x1, y0), _core.mul(wx1, wy0)))
        bottom = _core.add(_core.mul(tap(x0, y1), _core.mul(wx0, wy1)), _core.mul(tap(x1, y1), _core.mul(wx1, wy1)))
        out = _core.add(top, bottom)
    return _core.reshape(out, [n, c, ho, wo])


@defop()
def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
             recompute_scale_factor=None):
    """MindSpore's ops.upsample(input, size=None, scale_factor=None, mode='nearest', align_corners=None,
    recompute_scale_factor=None): MindSpore's alias of ops.interpolate (kiln/ops/resize_func.py documents the modes,
    shapes and errors)."""
    from .resize_func import interpolate
    return interpolate(input, size, scale_factor, mode, align_corners, recompute_scale_factor)
