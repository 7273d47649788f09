"""Symbolic sizes while a graph with dynamic shapes is compiled (kiln/_compiler/dynamic.py): `x.shape[0]` of a
symbolic tensor is a SymInt during probe traces, and conditions on it are recorded as guards.

The core calls `_shape_hook` for the shape of symbolic tensors only (Tensor.shape; concrete tensors never reach
Python), so eager code pays nothing; outside a probe trace the hook returns the shape unchanged."""
import collections
import operator
import threading

from .. import _engine

_local = threading.local()  # .probe: the _ProbeState of the probe trace running on this thread (None: none)


class _ProbeState:
    """One probe trace: which sizes stand for which dynamic axis ({size: axis}), and the conditions (guards) Python
    code evaluated on them."""

    def __init__(self, values):
        self.values = dict(values)
        self.guards = []  # (location, text, function sizes -> bool, result while tracing)


class SymInt(int):
    """The size of a dynamic dimension while a graph with dynamic shapes is compiled: `x.shape[0]` inside such a
    graph. It is an int (the probe size of the trace: every API that takes an int takes it), and it knows how it was
    computed from the dynamic sizes: `+ - * // %` and unary minus give SymInts again. A comparison or truth test
    (`if x.shape[0] > 1`) is a guard: the graph is compiled for its outcome, and a call whose sizes give the other
    outcome raises ValueError naming the line (`DynamicExecutable.plan`). A size that reaches an op (a reshape,
    zeros((b, 3))) becomes the op's attribute or constant, which the probe traces fit (kiln/_compiler/dynamic.py,
    Note [dynamic shapes by probe traces])."""

    def __new__(cls, value, fn, text):
        obj = super().__new__(cls, value)
        obj._fn = fn
        obj._text = text
        return obj

    def __repr__(self):
        return int.__repr__(self)

    __str__ = __repr__

    def __hash__(self):
        return int.__hash__(self)

    def _arith(self, other, op, sym, reverse=False):
        if isinstance(other, bool) or not isinstance(other, int):
            return op(int(self), other) if not reverse else op(other, int(self))
        f, g = self._fn, _fn_of(other)
        a, b = (other, int(self)) if reverse else (int(self), other)
        ta, tb = (_text_of(other), self._text) if reverse else (self._text, _text_of(other))
        fn = (lambda s: op(g(s), f(s))) if reverse else (lambda s: op(f(s), g(s)))
        return SymInt(op(int(a), int(b)), fn, f"({ta} {sym} {tb})")

    def __add__(self, o): return self._arith(o, operator.add, "+")
    def __radd__(self, o): return self._arith(o, operator.add, "+", True)
    def __sub__(self, o): return self._arith(o, operator.sub, "-")
    def __rsub__(self, o): return self._arith(o, operator.sub, "-", True)
    def __mul__(self, o): return self._arith(o, operator.mul, "*")
    def __rmul__(self, o): return self._arith(o, operator.mul, "*", True)
    def __floordiv__(self, o): return self._arith(o, operator.floordiv, "//")
    def __rfloordiv__(self, o): return self._arith(o, operator.floordiv, "//", True)
    def __mod__(self, o): return self._arith(o, operator.mod, "%")
    def __rmod__(self, o): return self._arith(o, operator.mod, "%", True)

    def __neg__(self):
        f = self._fn
        return SymInt(-int(self), lambda s: -f(s), f"-{self._text}")

    def _compare(self, other, op, sym):
        if isinstance(other, float) and not isinstance(other, bool):
            other_fn, other_text, value = (lambda s, v=other: v), repr(other), other
        elif isinstance(other, SymInt) and other._text == self._text:  # the same size on both sides: no guard
            return op(int(self), int(other))
        elif isinstance(other, int):
            other_fn, other_text, value = _fn_of(other), _text_of(other), int(other)
        else:
            return NotImplemented
        result = op(int(self), value)
        f = self._fn
        _guard(f"{self._text} {sym} {other_text}", lambda s: op(f(s), other_fn(s)), result)
        return result

    def __eq__(self, o): return self._compare(o, operator.eq, "==")
    def __ne__(self, o): return self._compare(o, operator.ne, "!=")
    def __lt__(self, o): return self._compare(o, operator.lt, "<")
    def __le__(self, o): return self._compare(o, operator.le, "<=")
    def __gt__(self, o): return self._compare(o, operator.gt, ">")
    def __ge__(self, o): return self._compare(o, operator.ge, ">=")

    def __bool__(self):
        result = int(self) != 0
        f = self._fn
        _guard(f"bool({self._text})", lambda s: f(s) != 0, result)
        return result


def _fn_of(v):
    return v._fn if isinstance(v, SymInt) else (lambda s, v=int(v): v)


def _text_of(v):
    return v._text if isinstance(v, SymInt) else repr(int(v))


def _guard(text, fn, result):
    st = getattr(_local, "probe", None)
    if st is not None:
        st.guards.append((_engine._user_location(), text, fn, result))


def _shape_hook(tensor, shape):
    """Tensor.shape of a symbolic tensor (kiln._core calls it only for those): during a probe trace, a size equal to
    a dynamic axis's probe size is that axis's SymInt."""
    st = getattr(_local, "probe", None)
    if st is None:
        return shape
    vals = st.values
    return tuple(SymInt(v, (lambda s, a=vals[v]: s[a]), f"dim{vals[v]}") if v in vals else v for v in shape)


_engine._set_symbolic_shape_hook(_shape_hook)


class probing:
    """Context: a probe trace runs on this thread, in which the sizes `values` ({size: axis}) of symbolic tensors'
    shapes are SymInts of those axes; the value of `with` is the _ProbeState that collects the guards."""

    def __init__(self, values):
        self.state = _ProbeState(values)

    def __enter__(self):
        self._saved = getattr(_local, "probe", None)
        _local.probe = self.state
        return self.state

    def __exit__(self, *exc):
        _local.probe = self._saved
        return False


def common_guards(states):
    """The guards recorded at the same place with the same text in every probe trace (a static size that happens to
    equal a probe size in one trace is not one)."""
    first = states[0].guards
    keys = [collections.Counter((loc, text) for loc, text, _, _ in st.guards) for st in states[1:]]
    seen = set()
    out = []
    for g in first:
        k = (g[0], g[1])
        if k in seen or any(c[k] == 0 for c in keys):
            continue
        seen.add(k)
        out.append(g)
    return out


def guard_locations(states):
    locs = []
    for st in states:
        for loc, text, _, _ in st.guards:
            item = f"`{text}` at {loc}" if loc else f"`{text}`"
            if item not in locs:
                locs.append(item)
    return locs
