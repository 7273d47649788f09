"""More activation cells of MindSpore 2.10's nn (CELU, SeLU, Hardtanh, HShrink, SoftShrink, Softmin, GLU, Threshold,
Tanhshrink, RReLU): each holds its arguments and calls the one functional op of kiln.ops (kiln/ops/nnact_func.py),
which checks the input and documents the formula and gradient. Arguments are checked at construction with the same
errors the op raises."""
from ...ops import nnact_func as _F
from ..cell import Cell

__all__ = ["CELU", "SeLU", "Hardtanh", "HShrink", "SoftShrink", "Softmin", "GLU", "Threshold", "Tanhshrink", "RReLU"]


class CELU(Cell):
    """MindSpore's nn.CELU(alpha=1.0): kiln.ops.celu(x, alpha) — max(0, x) + min(0, α·(exp(x/α) − 1)).
    Raises TypeError for a non-number alpha, ValueError for alpha == 0 (at construction)."""

    def __init__(self, alpha=1.0):
        super().__init__()
        self.alpha = _F._num(alpha, "CELU", "alpha")
        if self.alpha == 0.0:
            raise ValueError("For 'CELU', the 'alpha' must not be 0, but got 0.")

    def construct(self, x):
        return _F.celu(x, self.alpha)


class SeLU(Cell):
    """MindSpore's nn.SeLU(): kiln.ops.selu — scale·(x if x > 0 else α·(exp(x) − 1)), α ≈ 1.6733, scale ≈ 1.0507."""

    def construct(self, input_x):
        return _F.selu(input_x)


class Hardtanh(Cell):
    """MindSpore's nn.Hardtanh(min_val=-1.0, max_val=1.0): kiln.ops.hardtanh — min(max(x, min_val), max_val)."""

    def __init__(self, min_val=-1.0, max_val=1.0):
        super().__init__()
        self.min_val = _F._num(min_val, "Hardtanh", "min_val")
        self.max_val = _F._num(max_val, "Hardtanh", "max_val")

    def construct(self, x):
        return _F.hardtanh(x, self.min_val, self.max_val)


class HShrink(Cell):
    """MindSpore's nn.HShrink(lambd=0.5): kiln.ops.hardshrink — x where |x| > lambd, else 0."""

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = _F._num(lambd, "HShrink", "lambd")

    def construct(self, input):
        return _F.hardshrink(input, self.lambd)


class SoftShrink(Cell):
    """MindSpore's nn.SoftShrink(lambd=0.5): kiln.ops.softshrink — x ∓ lambd beyond ±lambd, else 0.
    Raises ValueError for lambd < 0."""

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = _F._lambd(lambd, "SoftShrink")

    def construct(self, input):
        return _F.softshrink(input, self.lambd)


class Softmin(Cell):
    """MindSpore's nn.Softmin(axis=-1): kiln.ops.softmin — softmax(−x) along axis."""

    def __init__(self, axis=-1):
        super().__init__()
        self.axis = axis

    def construct(self, x):
        return _F.softmin(x, self.axis)


class GLU(Cell):
    """MindSpore's nn.GLU(axis=-1): kiln.ops.glu — a·σ(b) for the halves a, b of x along axis."""

    def __init__(self, axis=-1):
        super().__init__()
        self.axis = axis

    def construct(self, x):
        return _F.glu(x, self.axis)


class Threshold(Cell):
    """MindSpore's nn.Threshold(threshold, value): kiln.ops.threshold — x where x > threshold, else value."""

    def __init__(self, threshold, value):
        super().__init__()
        self.threshold = _F._num(threshold, "Threshold", "threshold")
        self.value = _F._num(value, "Threshold", "value")

    def construct(self, input_x):
        return _F.threshold(input_x, self.threshold, self.value)


class Tanhshrink(Cell):
    """MindSpore's nn.Tanhshrink(): kiln.ops.tanhshrink — x − tanh(x)."""

    def construct(self, x):
        return _F.tanhshrink(x)


class RReLU(Cell):
    """MindSpore's nn.RReLU(lower=1/8, upper=1/3): kiln.ops.rrelu — x where x ≥ 0, a·x elsewhere with a drawn from
    Uniform[lower, upper) per element and call. Raises ValueError for lower > upper (at construction)."""

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3):
        super().__init__()
        self.lower, self.upper = _F._num(lower, "RReLU", "lower"), _F._num(upper, "RReLU", "upper")
        if self.lower > self.upper:
            raise ValueError(f"For 'RReLU', 'lower' must be at most 'upper', but got lower={self.lower}, "
                             f"upper={self.upper}.")

    def construct(self, x):
        return _F.rrelu(x, self.lower, self.upper)
