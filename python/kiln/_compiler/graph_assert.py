"""`assert` and `in` on tensors computed by the graph (issue 11), routed here by the AST rewrite (ast_rewrite.py:
`assert c, m` → `_kiln_cf.assert_(c, lambda: m)`, `a in b` → `_kiln_cf.contains_(a, b)`).

Note [run-time assert]. `assert c` with a condition the graph computes can not be decided while compiling. It
becomes a CheckRange node (kept at every run, never folded: graph::has_side_effect) that requires float64(c) to
be in [1, 1]; its ValueError, when the graph runs, carries the assert's message and location in a fixed form that
`assertion_from` turns back into the AssertionError(message) that Python (and MindSpore 2.10's graph mode) raise.
Inside a tensor-dependent branch the check runs only when that branch is taken.

`x in [a, b]` with a graph tensor x is `x == a or x == b` (Python's definition of `in` for a list: identity or
equality), a one-element bool tensor; PyNative computes the same through bool(). MindSpore 2.10's graph mode
answers False whatever x holds (it compares the tensor object, not its value) — Kiln gives the value PyNative
gives, the same in both modes.
"""
import re

from .. import _engine
from .. import ops as _ops
from ..ops import _kernels
from ..common.tensor import Tensor

_OP = "assert"
_PATTERN = re.compile(r"^For 'assert', every condition of `assert` at (.*?) \[message: (.*)\] must be in \[1, 1\], "
                      r"but got", re.DOTALL)


def _symbolic(x):
    return isinstance(x, Tensor) and _engine.tracing() and x._symbolic


def _check_one(c, what):
    if c.size != 1:
        loc = _engine._user_location()
        raise ValueError(f"For {what}, the condition must be a tensor with one element, but got shape "
                         f"{list(c.shape)}{f' (at {loc})' if loc else ''}: the truth value of a tensor with several "
                         "elements is ambiguous (reduce it first, e.g. x.max() > 0 or x.min() > 0).")


def assert_(test, msg_fn=None):
    """`assert test[, msg]`: a graph tensor `test` (one element) becomes a check at every run of the graph
    (AssertionError(msg) when it is false then); any other value is Python's assert (msg evaluated only when it
    fails)."""
    if not _symbolic(test):
        if not test:
            raise AssertionError(msg_fn()) if msg_fn is not None else AssertionError()
        return
    _check_one(test, "`assert`")
    msg = ""
    if msg_fn is not None:
        m = msg_fn()
        msg = str(m)
    loc = _engine._user_location() or "<unknown>"
    c = _kernels.cast(_kernels.cast(_kernels.reshape(test, []), _engine.DType.Bool), _engine.DType.Float64)  # truth value: 1/0
    _kernels.check_range(c, _OP, f"condition of `assert` at {loc} [message: {msg}]", 1.0, 1.0, True, None)


def assertion_from(err):
    """The AssertionError that a run-time assert's ValueError stands for (Note [run-time assert]), or None."""
    m = _PATTERN.match(str(err))
    if m is None:
        return None
    return AssertionError(m.group(2)) if m.group(2) else AssertionError()


def contains_(x, seq):
    """`x in seq`: with a list/tuple seq and a graph tensor among x and seq's items, the one-element bool tensor
    `x is e or x == e` over the items (False for an empty seq); Python's `in` otherwise."""
    if not isinstance(seq, (list, tuple)) or not (_symbolic(x) or any(_symbolic(e) for e in seq)):
        return x in seq
    acc = None
    for e in seq:
        if e is x:
            return True
        eq = x == e
        if _symbolic(eq):
            _check_one(eq, "`in`")
            eq = _kernels.reshape(_kernels.cast(eq, _engine.DType.Bool), [])
            acc = eq if acc is None else _ops.logical_or(acc, eq)
        elif bool(eq):
            return True
    return False if acc is None else acc
