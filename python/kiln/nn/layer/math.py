"""Math layers: MindSpore's nn.MatMul."""
from ...common.tensor import Tensor as _Tensor
from ...ops import _kernels
from ..cell import Cell

__all__ = ["MatMul"]


class MatMul(Cell):
    """Batched matrix product with optional transposes of the last two axes (MindSpore's nn.MatMul):
    x1 (..., n, k) (or (..., k, n) with transpose_x1), x2 (..., k, m) (or (..., m, k) with transpose_x2) →
    (..., n, m); leading axes broadcast. 1-D inputs are treated as a row / column vector and that axis is removed
    from the output. Raises TypeError (non-bool flags, non-Tensor inputs), ValueError (k differs)."""

    def __init__(self, transpose_x1=False, transpose_x2=False):
        super().__init__()
        for n, v in (("transpose_x1", transpose_x1), ("transpose_x2", transpose_x2)):
            if not isinstance(v, bool):
                raise TypeError(f"For 'MatMul', the '{n}' must be bool, but got {type(v).__name__}.")
        self.transpose_x1, self.transpose_x2 = transpose_x1, transpose_x2

    def construct(self, x1, x2):
        for n, v in (("x1", x1), ("x2", x2)):
            if not isinstance(v, _Tensor):
                raise TypeError(f"For 'MatMul', the input '{n}' must be a Tensor, but got {type(v).__name__}.")
        squeeze = []
        if x1.ndim == 1:
            x1 = _kernels.reshape(x1, [1, -1] if not self.transpose_x1 else [-1, 1])
            squeeze.append(-2)
        if x2.ndim == 1:
            x2 = _kernels.reshape(x2, [-1, 1] if not self.transpose_x2 else [1, -1])
            squeeze.append(-1)
        if self.transpose_x1:
            x1 = _kernels.transpose(x1, list(range(x1.ndim - 2)) + [x1.ndim - 1, x1.ndim - 2])
        if self.transpose_x2:
            x2 = _kernels.transpose(x2, list(range(x2.ndim - 2)) + [x2.ndim - 1, x2.ndim - 2])
        if x1.shape[-1] != x2.shape[-2]:
            raise ValueError(f"For 'MatMul', the contracted dims differ: x1 {tuple(x1.shape)} and x2 "
                             f"{tuple(x2.shape)} (after the transposes).")
        y = _kernels.matmul(x1, x2)
        if squeeze:
            y = _kernels.squeeze(y, sorted(a % y.ndim for a in squeeze))
        return y
