"""kiln.mint — MindSpore 2.10's `mindspore.mint`: the PyTorch-flavoured functional API (`input`, `dim`, `keepdim`,
PyTorch defaults and overloads), with `mint.nn` (layers with PyTorch-style constructors), `mint.nn.functional` and
`mint.optim`.

Every name is the same Kiln op as the `ops` function: the ops function itself where MindSpore's mint signature is
the ops one (declared with `mint=` on the op's @defop, or listed in SAME below while the op is not yet a @defop op),
else a thin adapter in kiln/mint/_functional.py (declared `@defop(name="mint.<name>")`). Ops that other modules
declare with `mint=` appear here automatically (kiln/ops/_opdef.py's `mint_names`, read when this module is
imported, after kiln.ops)."""
from ..common.tensor import Tensor  # noqa: F401  (mindspore.mint.Tensor)
from . import _functional  # noqa: F401  (declares the mint-only adapters)
from . import _functional_more  # noqa: F401  (more of them: PyTorch's argument names over ops functions)
from ._names import collect as _collect

# mint name -> ops name: same signature and semantics in MindSpore 2.10 (argument names included), the op not
# (yet) declared with @defop. Pinned by tests/python/test_mint.py.
SAME = {n: n for n in (
    "abs", "ceil", "cos", "cumprod", "eq", "erf", "exp", "eye", "flip", "floor", "floor_divide", "full", "full_like",
    "ge", "greater", "greater_equal", "gt", "isclose", "le", "lerp", "less", "less_equal", "log", "log1p",
    "logical_and", "logical_not", "logical_or", "logical_xor", "logsumexp", "lt", "maximum", "minimum", "mul", "ne",
    "neg", "negative", "nonzero", "not_equal", "ones", "ones_like", "reciprocal", "remainder", "roll", "round",
    "rsqrt", "sigmoid", "sign", "sin", "sqrt", "square", "tanh", "tile", "topk", "tril", "triu", "unbind",
    "unsqueeze", "zeros", "zeros_like",)}

globals().update(_collect("", SAME))

from . import nn  # noqa: E402,F401 (the submodule, after mint's own names)
from . import optim  # noqa: E402,F401 (the submodule, after mint's own names)
