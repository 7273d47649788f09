"""Spatial sampling ops of MindSpore 2.10's `ops`: affine_grid (+ the AffineGrid primitive; a composition of Kiln's
kernels, gradient w.r.t. theta from the building blocks), grid_sample (+ the GridSampler2D / GridSampler3D
primitives: one C++ op each, src/ops/grid_sample.cpp, with its backward op) and upsample (MindSpore's alias of
ops.interpolate).

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
from .primitives import Primitive

__all__ = ["affine_grid", "grid_sample", "upsample", "GridSampler2D", "GridSampler3D"]

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


_MODES = ("bilinear", "nearest")
_PADDINGS = ("zeros", "border", "reflection")


def _grid_sample_args(op, input, grid, mode, padding_mode, align_corners):
    """MindSpore's argument checks of grid_sample / GridSampler2D / GridSampler3D; returns align_corners as a bool."""
    for name, t in (("input", input), ("grid", grid)):
        if not isinstance(t, Tensor):
            raise TypeError(f"For '{op}', the '{name}' must be a Tensor, but got {type(t).__name__}.")
        if t.dtype not in _FLOATS:
            raise TypeError(f"For '{op}', the '{name}' must be a float Tensor, but got {t.dtype}.")
    if input.dtype != grid.dtype:
        raise TypeError(f"For '{op}', 'input' and 'grid' must have one dtype, but got {input.dtype} and {grid.dtype}.")
    if input.ndim not in (4, 5):
        raise ValueError(f"For '{op}', the 'input' must be 4-D (N, C, H, W) or 5-D (N, C, D, H, W), but got shape "
                         f"{tuple(input.shape)}.")
    nd = input.ndim - 2
    if grid.ndim != input.ndim or grid.shape[0] != input.shape[0] or grid.shape[-1] != nd:
        want = "(N, H_out, W_out, 2)" if nd == 2 else "(N, D_out, H_out, W_out, 3)"
        raise ValueError(f"For '{op}', the 'grid' must be {want} with N = {input.shape[0]}, but got shape "
                         f"{tuple(grid.shape)}.")
    if mode not in _MODES:
        raise ValueError(f"For '{op}', the 'mode' must be 'bilinear' or 'nearest', but got {mode!r}.")
    if padding_mode not in _PADDINGS:
        raise ValueError(f"For '{op}', the 'padding_mode' must be 'zeros', 'border' or 'reflection', but got "
                         f"{padding_mode!r}.")
    if align_corners is None:
        align_corners = False
    if not isinstance(align_corners, bool):
        raise TypeError(f"For '{op}', the 'align_corners' must be a bool or None, but got {_got(align_corners)}.")
    return align_corners


@defop(mint="nn.functional.grid_sample")
def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """MindSpore's ops.grid_sample(input, grid, mode='bilinear', padding_mode='zeros', align_corners=None):
    out[n, c, *p] = input[n, c] sampled at the normalized coordinates grid[n, *p] (module docstring).

    input (N, C, H, W) with grid (N, H_out, W_out, 2) -> (N, C, H_out, W_out) (the GridSampler2D op), or input
    (N, C, D, H, W) with grid (N, D_out, H_out, W_out, 3) -> (N, C, D_out, H_out, W_out) (GridSampler3D;
    'bilinear' is trilinear there); grid's x (width) first; one float dtype (float16/bfloat16 computed in float32:
    MindSpore 2.10's float16 kernel overflows to inf where Kiln gives the value). mode 'bilinear' or 'nearest';
    padding_mode 'zeros', 'border' or 'reflection'; align_corners None (= False) or bool. One C++ op
    (src/ops/grid_sample.cpp); gradients w.r.t. input and grid (GridSampler2DGrad / 3DGrad: PyTorch's and
    MindSpore's rules, the grid's gradient 0 for 'nearest' and where a coordinate is clipped); NaN coordinates
    read as outside with 'zeros' and clip to the last pixel with 'border'/'reflection' (reflection makes ±inf NaN
    first): MindSpore 2.10's values, never an out-of-bounds read. Raises TypeError for non-float Tensors, mismatched dtypes or a non-bool
    align_corners, ValueError for shapes, modes or padding modes."""
    align_corners = _grid_sample_args("grid_sample", input, grid, mode, padding_mode, align_corners)
    return _core.grid_sample(input, grid, mode, padding_mode, align_corners)


class _GridSampler(Primitive):
    """The shared body of GridSampler2D/3D: MindSpore's (interpolation_mode, padding_mode, align_corners) attributes
    and a call that is ops.grid_sample of an input of exactly _NDIM dimensions."""
    _NDIM = 0

    def __init__(self, interpolation_mode="bilinear", padding_mode="zeros", align_corners=False):
        super().__init__(type(self).__name__)
        self.interpolation_mode, self.padding_mode, self.align_corners = interpolation_mode, padding_mode, \
            align_corners

    def __call__(self, input_x, grid):
        op = type(self).__name__
        align = _grid_sample_args(op, input_x, grid, self.interpolation_mode, self.padding_mode, self.align_corners)
        if input_x.ndim != self._NDIM:
            raise ValueError(f"For '{op}', the 'input_x' must be {self._NDIM}-D, but got shape "
                             f"{tuple(input_x.shape)}.")
        return _core.grid_sample(input_x, grid, self.interpolation_mode, self.padding_mode, align)


class GridSampler2D(_GridSampler):
    """MindSpore's GridSampler2D(interpolation_mode='bilinear', padding_mode='zeros', align_corners=False)(input_x,
    grid): ops.grid_sample of 4-D input (one GridSampler2D op). Errors as grid_sample's (ValueError for 5-D)."""
    _NDIM = 4


class GridSampler3D(_GridSampler):
    """MindSpore's GridSampler3D(interpolation_mode='bilinear', padding_mode='zeros', align_corners=False)(input_x,
    grid): ops.grid_sample of 5-D input (one GridSampler3D op). Errors as grid_sample's (ValueError for 4-D)."""
    _NDIM = 5


@defop()
def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
             recompute_scale_factor=None):
    """MindSpore's ops.upsample(input, size=None, scale_factor=None, mode='nearest', align_corners=None,
    recompute_scale_factor=None): MindSpore's alias of ops.interpolate (kiln/ops/resize_func.py documents the modes,
    shapes and errors)."""
    from .resize_func import interpolate
    return interpolate(input, size, scale_factor, mode, align_corners, recompute_scale_factor)
