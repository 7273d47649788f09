"""How a kiln.mint module collects its names: the functions declared for it with @defop (`mint=` on an op, or a
mint-only adapter "mint.<path>", kiln/ops/_opdef.py), plus the `ops` functions listed in its SAME table — ops whose
MindSpore 2.10 mint function has the ops function's very signature and semantics but that are not (yet) declared
with @defop. A name declared both ways must be the same function (else RuntimeError at import), so that an op moved
to @defop with `mint=` later leaves the table entry redundant, never contradictory."""
from .. import ops as _ops
from ..ops._opdef import mint_names

__all__ = ["collect"]


def collect(prefix, same):
    """{name: function} for `mint.<prefix>` ("" for mint itself): mint_names(prefix) and, for each name in `same`
    (a dict mint name -> ops name), the ops function."""
    out = dict(mint_names(prefix))
    where = "mint" + ("." + prefix if prefix else "")
    for name, op in same.items():
        fn = getattr(_ops, op)
        if name in out and out[name] is not fn:
            raise RuntimeError(f"{where}.{name} is both declared with @defop ({out[name].__module__}) and listed as "
                               f"ops.{op} in kiln/mint's table of same-signature ops: keep one")
        out[name] = fn
    return out
