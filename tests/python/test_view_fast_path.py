"""The view ops dispatched in C++ (python/src/bind_views.cpp, issue 23): Tensor.__getitem__ with basic indices,
Tensor.reshape/view/transpose/permute/T/mT/squeeze/expand_dims/unsqueeze/flatten/ravel and the fast paths of
ops.reshape/transpose/permute/squeeze/expand_dims/unsqueeze/narrow and mint.select.

Each fast path is checked against NumPy (values, shapes, a view sharing the storage), against the Python code it
replaces (kiln/common/_indexing.py getitem and the functions of kiln/common/tensor.py, registered as the C++ methods'
fallbacks: the same values, strides, offset and view record), for its gradient (float64 central differences), for
one node per op in graph mode, and for its errors (the same types and texts as the Python code's). Random basic keys
(ints in and out of range, slices with any step, None, Ellipsis) come from hypothesis; examples are bounded and
derandomized (set KILN_HYPOTHESIS_EXAMPLES to explore more)."""
import os
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kiln
from kiln import Tensor, _core, mint, ops
from kiln.common import _indexing, _views
from kiln.common import tensor as _tensor

from helpers import central_difference

N_EXAMPLES = int(os.environ.get("KILN_HYPOTHESIS_EXAMPLES", "150"))
SETTINGS = settings(max_examples=N_EXAMPLES, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])
FALLBACKS = _tensor._VIEW_FALLBACKS


def _outcome(fn):
    """("ok", result) or ("err", exception type, message)."""
    try:
        return ("ok", fn())
    except Exception as e:  # noqa: BLE001 (the outcome under test is any exception's type and text)
        return ("err", type(e), str(e))


def _same_tensor(a, b):
    """a and b: the same values, dtype, shape and strides (those of the dims of size > 1: a size-1 dim's stride is
    never used, and depends on the order of the reshapes that made it), and the same data pointer for views."""
    assert a.shape == b.shape and a.dtype == b.dtype
    if a.size:
        assert [s for s, n in zip(a.strides, a.shape) if n > 1] == [s for s, n in zip(b.strides, b.shape) if n > 1]
        if a._shares_storage(b):  # two views of one storage: the same element 0 (copies have storages of their own)
            assert a.asnumpy().__array_interface__["data"] == b.asnumpy().__array_interface__["data"]
    np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())


def _record(t):
    info = t.__dict__.get("_kiln_view")
    return None if info is None else (id(info[0]), info[1], info[2])


def _same_outcome(fast, slow):
    """The outcome of the C++ path equals that of the Python path: equal tensors with equal view records, or the
    same exception type and text."""
    assert fast[0] == slow[0], (fast, slow)
    if fast[0] == "err":
        assert fast[1:] == slow[1:]
        return
    a, b = fast[1], slow[1]
    _same_tensor(a, b)
    assert _record(a) == _record(b)


class _Spy:
    """Counts the calls of the C++ methods' Python fallbacks (installed for the `with` block)."""

    def __init__(self):
        self.calls = []

    def __enter__(self):
        spied = {name: (lambda fn, name: lambda *a, **k: (self.calls.append(name), fn(*a, **k))[1])(fn, name)
                 for name, fn in FALLBACKS.items()}
        _core._set_view_fallbacks(spied)
        return self

    def __exit__(self, *exc):
        _core._set_view_fallbacks(FALLBACKS)


# ------------------------------------------------------------------------------------------------ basic indexing

@st.composite
def shapes_and_keys(draw, out_of_range=True):
    shape = tuple(draw(st.lists(st.integers(0, 4), max_size=4)))
    nd = len(shape)
    n_consuming = draw(st.integers(0, nd + (1 if out_of_range else 0)))
    items = []
    for i in range(n_consuming):
        n = shape[i] if i < nd else 1
        lim = n + (1 if out_of_range else 0)
        if n > 0 and draw(st.booleans()):
            items.append(draw(st.integers(-lim, lim - 1)))
        else:
            bound = st.one_of(st.none(), st.integers(-6, 6))
            step = st.one_of(st.none(), st.integers(-3, 3).filter(lambda s: s != 0))
            items.append(slice(draw(bound), draw(bound), draw(step)))
    for _ in range(draw(st.integers(0, 2))):
        items.insert(draw(st.integers(0, len(items))), None)
    if draw(st.booleans()):
        items.insert(draw(st.integers(0, len(items))), Ellipsis)
    key = tuple(items) if len(items) != 1 or draw(st.booleans()) else items[0]
    return shape, key


@SETTINGS
@given(shapes_and_keys())
def test_basic_getitem_matches_numpy_and_the_python_path(case):
    shape, key = case
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) - 3.0
    x = Tensor(a)
    fast = _outcome(lambda: x[key])
    slow = _outcome(lambda: _indexing.getitem(x, key))
    _same_outcome(fast, slow)
    want = _outcome(lambda: a[key])
    assert fast[0] == want[0], (shape, key, fast, want)
    if fast[0] == "err":
        assert fast[1] is IndexError and want[1] is IndexError
        return
    y = fast[1]
    assert y.shape == want[1].shape
    np.testing.assert_array_equal(y.asnumpy(), want[1])
    if y is not x:
        assert y._shares_storage(x)  # a view, as NumPy's
        assert _record(y) == (id(x), shape, (("getitem", key),))


@SETTINGS
@given(shapes_and_keys(out_of_range=False), st.sampled_from([np.float64, np.int32, np.bool_, np.float16]))
def test_basic_getitem_of_a_strided_view_any_dtype(case, dtype):
    """Keys on a non-contiguous (negatively strided, transposed) view of another dtype: NumPy's values; the view
    chain is the base's chain plus this key."""
    shape, key = case
    base = (np.arange(int(np.prod(shape)) * 2) % 7).astype(dtype).reshape((2,) + shape)
    b = Tensor(base)
    x = b[::-1].T.T[1]  # a view with a negative stride on the dropped axis, of the shape `shape`
    a = base[::-1][1]
    fast = _outcome(lambda: x[key])
    _same_outcome(fast, _outcome(lambda: _indexing.getitem(x, key)))
    if fast[0] == "err":  # (an int on a dim of size 0 behind an Ellipsis)
        assert fast[1] is IndexError
        return
    y = fast[1]
    np.testing.assert_array_equal(y.asnumpy(), a[key])
    if y is not x:
        root, root_shape, chain = y.__dict__["_kiln_view"]
        assert root is b and root_shape == base.shape and chain[-1] == ("getitem", key)


def test_basic_keys_stay_in_cpp_and_other_keys_fall_back():
    x = Tensor(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    with _Spy() as spy:
        for key in [1, -1, slice(1, 3), (None, 1, Ellipsis, slice(None, None, -2)), (), Ellipsis, None,
                    (0, 1, 2), (slice(5, -9, -1),)]:
            x[key]
        x.reshape(6, 4), x.view((4, 6)), x.transpose(), x.transpose(2, 0, 1), x.permute((1, 0, 2)), x.T, x.mT
        x[:1].squeeze(), x[:1].squeeze(0), x.expand_dims(-1), x.unsqueeze(0), x.flatten(), x.flatten(1), x.ravel()
        assert spy.calls == []
        for key in [[0], np.int64(1), True, (0, [1, 2]), Tensor(1), slice(np.int64(1), 2), (Ellipsis, Ellipsis),
                    5, (0, 0, 0, 0), 2.0]:
            _outcome(lambda: x[key])
        assert spy.calls == ["__getitem__"] * 10
        spy.calls.clear()
        x.reshape(np.int64(24)), x.transpose(np.int64(0), 1, 2), x.squeeze(axis=None), x.expand_dims(axis=0)
        assert spy.calls == ["reshape", "transpose", "squeeze", "expand_dims"]


def test_getitem_whole_key_returns_the_tensor_itself():
    """x[...], x[:], x[()] select everything: the tensor object itself, as the Python code returns; a None or an int
    makes a new tensor even where the shape stays (x[None, 0] of a 1-element x), as there."""
    x = Tensor(np.ones((2, 3), np.float32))
    for key in [Ellipsis, slice(None), (), (slice(None), Ellipsis), (slice(0, 2), slice(None, 99))]:
        assert x[key] is x and _indexing.getitem(x, key) is x
    x = Tensor(np.ones((1, 3), np.float32))
    for key in [(None, 0), (0, None), (None, 0, Ellipsis)]:
        y = x[key]
        assert y is not x and _indexing.getitem(x, key) is not x and y.shape == (1, 3) and y._shares_storage(x)


def test_getitem_errors_are_the_python_code_errors():
    x = Tensor(np.ones((2, 3), np.float32))
    for key, kind in [(2, IndexError), (-3, IndexError), ((0, 3), IndexError), ((0, 0, 0), IndexError),
                      ((Ellipsis, 0, Ellipsis), IndexError), (slice(0, 2, 0), ValueError), (2.0, IndexError),
                      ((None, 1, -4), IndexError)]:
        fast, slow = _outcome(lambda: x[key]), _outcome(lambda: _indexing.getitem(x, key))
        assert fast[0] == "err" and fast[1] is kind, (key, fast)
        assert fast[1:] == slow[1:]
    with pytest.raises(IndexError, match=r"index 2 is out of bounds for dimension 0 with size 2"):
        x[2]


def test_plain_pynative_views_share_memory_and_in_place_writes():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = Tensor(a.copy())
    v = x[1:, ::-2]
    v[0, 0] = 100.0  # writes x[1, 3] in place (the view shares x's storage)
    a[1:, ::-2][0, 0] = 100.0
    np.testing.assert_array_equal(x.asnumpy(), a)
    r = x.reshape(2, 6)
    r[1, 0] = -1.0
    a.reshape(2, 6)[1, 0] = -1.0
    np.testing.assert_array_equal(x.asnumpy(), a)


# ------------------------------------------------------------------------------------------------ other views

def _views_cases():
    """(name, C++ call, Python-code call, NumPy reference) on x of shape (2, 1, 3, 4)."""
    fb = FALLBACKS
    return [
        ("reshape(-1, 4)", lambda x: x.reshape(-1, 4), lambda x: fb["reshape"](x, -1, 4),
         lambda a: a.reshape(-1, 4)),
        ("reshape((6, 4))", lambda x: x.reshape((6, 4)), lambda x: fb["reshape"](x, (6, 4)),
         lambda a: a.reshape(6, 4)),
        ("view([24])", lambda x: x.view([24]), lambda x: fb["reshape"](x, [24]), lambda a: a.reshape(24)),
        ("reshape() of one element", lambda x: x[0, 0, 0, :1].reshape(), lambda x: fb["reshape"](x[0, 0, 0, :1]),
         lambda a: a[0, 0, 0, :1].reshape(())),
        ("transpose()", lambda x: x.transpose(), lambda x: fb["transpose"](x), lambda a: a.transpose()),
        ("transpose(None)", lambda x: x.transpose(None), lambda x: fb["transpose"](x, None),
         lambda a: a.transpose()),
        ("transpose(())", lambda x: x.transpose(()), lambda x: fb["transpose"](x, ()), lambda a: a.transpose()),
        ("transpose(3, 0, -2, 1)", lambda x: x.transpose(3, 0, -2, 1), lambda x: fb["transpose"](x, 3, 0, -2, 1),
         lambda a: a.transpose(3, 0, 2, 1)),
        ("permute([1, 0, 3, 2])", lambda x: x.permute([1, 0, 3, 2]), lambda x: fb["transpose"](x, [1, 0, 3, 2]),
         lambda a: a.transpose(1, 0, 3, 2)),
        ("T", lambda x: x.T, lambda x: fb["T"](x), lambda a: a.transpose()),
        ("mT", lambda x: x.mT, lambda x: fb["mT"](x), lambda a: np.swapaxes(a, -1, -2)),
        ("squeeze()", lambda x: x.squeeze(), lambda x: fb["squeeze"](x), lambda a: a.squeeze()),
        ("squeeze(1)", lambda x: x.squeeze(1), lambda x: fb["squeeze"](x, 1), lambda a: a.squeeze(1)),
        ("squeeze((1,))", lambda x: x.squeeze((-3,)), lambda x: fb["squeeze"](x, (-3,)), lambda a: a.squeeze(1)),
        ("squeeze(None)", lambda x: x.squeeze(None), lambda x: fb["squeeze"](x, None), lambda a: a.squeeze()),
        ("expand_dims(-1)", lambda x: x.expand_dims(-1), lambda x: fb["expand_dims"](x, -1),
         lambda a: a[..., None]),
        ("unsqueeze(0)", lambda x: x.unsqueeze(0), lambda x: fb["unsqueeze"](x, 0), lambda a: a[None]),
        ("flatten()", lambda x: x.flatten(), lambda x: fb["flatten"](x), lambda a: a.reshape(-1)),
        ("flatten(1)", lambda x: x.flatten(1), lambda x: fb["flatten"](x, 1), lambda a: a.reshape(2, -1)),
        ("flatten(1, 2)", lambda x: x.flatten(1, 2), lambda x: fb["flatten"](x, 1, 2), lambda a: a.reshape(2, 3, 4)),
        ("flatten(-2, -1)", lambda x: x.flatten(-2, -1), lambda x: fb["flatten"](x, -2, -1),
         lambda a: a.reshape(2, 1, 12)),
        ("ravel()", lambda x: x.ravel(), lambda x: fb["ravel"](x), lambda a: a.reshape(-1)),
        ("0-d flatten()", lambda x: x[0, 0, 0, 0].flatten(), lambda x: fb["flatten"](x[0, 0, 0, 0]),
         lambda a: a[0, 0, 0, 0].reshape(1)),
    ]


VIEW_CASES = _views_cases()


@pytest.mark.parametrize("name, fast, slow, ref", VIEW_CASES, ids=[c[0] for c in VIEW_CASES])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_view_methods_match_numpy_and_the_python_path(name, fast, slow, ref, layout):
    a = np.arange(24, dtype=np.float64).reshape(2, 1, 3, 4)
    if layout == "transposed":  # the same values as a non-contiguous view (reshape may have to copy)
        b = Tensor(np.ascontiguousarray(a.transpose(3, 1, 2, 0)))
        x = b.transpose(3, 1, 2, 0)
    else:
        x = Tensor(a)
    f, s = _outcome(lambda: fast(x)), _outcome(lambda: slow(x))
    _same_outcome(f, s)
    np.testing.assert_array_equal(f[1].asnumpy(), ref(a))


def _ops_cases():
    """(name, ops call, NumPy reference) on x of shape (2, 1, 3, 4); the Python code is run with the module's fast
    paths turned off (they return NotImplemented)."""
    return [
        ("ops.reshape tuple", lambda x: ops.reshape(x, (4, -1)), lambda a: a.reshape(4, -1)),
        ("ops.reshape list", lambda x: ops.reshape(x, [24]), lambda a: a.reshape(24)),
        ("ops.reshape int", lambda x: ops.reshape(x, 24), lambda a: a.reshape(24)),
        ("ops.transpose", lambda x: ops.transpose(x, (3, 2, 1, 0)), lambda a: a.transpose(3, 2, 1, 0)),
        ("ops.transpose ()", lambda x: ops.transpose(x, ()), lambda a: a.transpose()),
        ("ops.permute", lambda x: ops.permute(x, (0, 2, 1, 3)), lambda a: a.transpose(0, 2, 1, 3)),
        ("ops.squeeze", lambda x: ops.squeeze(x), lambda a: a.squeeze()),
        ("ops.squeeze 1", lambda x: ops.squeeze(x, 1), lambda a: a.squeeze(1)),
        ("ops.squeeze [1]", lambda x: ops.squeeze(x, [1]), lambda a: a.squeeze(1)),
        ("ops.expand_dims", lambda x: ops.expand_dims(x, 2), lambda a: np.expand_dims(a, 2)),
        ("ops.unsqueeze", lambda x: ops.unsqueeze(x, -1), lambda a: np.expand_dims(a, -1)),
        ("ops.flatten", lambda x: ops.flatten(x), lambda a: a.reshape(2, -1)),
        ("ops.narrow", lambda x: ops.narrow(x, 3, 1, 2), lambda a: a[..., 1:3]),
        ("ops.narrow -2", lambda x: ops.narrow(x, -2, 3, 0), lambda a: a[:, :, 3:3]),
        ("Tensor.narrow", lambda x: x.narrow(0, 1, 1), lambda a: a[1:2]),
        ("mint.select", lambda x: mint.select(x, 2, -1), lambda a: a[:, :, -1]),
        ("mint.select 0", lambda x: mint.select(x, 0, 1), lambda a: a[1]),
        ("ops.swapaxes", lambda x: ops.swapaxes(x, 0, -1), lambda a: np.swapaxes(a, 0, -1)),
        ("Tensor.swapaxes", lambda x: x.swapaxes(2, 1), lambda a: np.swapaxes(a, 2, 1)),
        ("ops.swapdims", lambda x: ops.swapdims(x, -3, -3), lambda a: a),
        ("ops.moveaxis", lambda x: ops.moveaxis(x, 0, -1), lambda a: np.moveaxis(a, 0, -1)),
        ("ops.movedim", lambda x: ops.movedim(x, -1, 1), lambda a: np.moveaxis(a, -1, 1)),
        ("Tensor.movedim", lambda x: x.movedim(2, 0), lambda a: np.moveaxis(a, 2, 0)),
        ("ops.flip", lambda x: ops.flip(x, (0, -1)), lambda a: a[::-1, :, :, ::-1]),
        ("ops.flip int", lambda x: ops.flip(x, 2), lambda a: a[:, :, ::-1]),
        ("ops.flip ()", lambda x: ops.flip(x, ()), lambda a: a),
        ("ops.fliplr", lambda x: ops.fliplr(x), lambda a: a[:, ::-1]),
        ("ops.flipud", lambda x: ops.flipud(x), lambda a: a[::-1]),
        ("ops.reverse", lambda x: ops.reverse(x, [3]), lambda a: a[..., ::-1]),
        ("ops.slice", lambda x: ops.slice(x, (1, 0, 1, 0), (1, -1, 2, 3)), lambda a: a[1:2, :, 1:3, 0:3]),
        ("ops.slice list", lambda x: ops.slice(x, [0, 0, 3, 4], [-1, 1, 0, 0]), lambda a: a[:, :, 3:3, 4:4]),
        ("ops.strided_slice", lambda x: ops.strided_slice(x, (0, 0, 1, 0), (2, 1, 3, 4), (1, 1, 1, 2)),
         lambda a: a[0:2, 0:1, 1:3, 0:4:2]),
        ("ops.strided_slice masks", lambda x: ops.strided_slice(x, (1, 0, 5, 2), (0, 0, -9, 4), (1, 1, -1, 1),
                                                                begin_mask=0b0100, end_mask=0b0001,
                                                                ellipsis_mask=0b0010, shrink_axis_mask=0b0001),
         lambda a: a[1, ..., ::-1, 2:4]),
        ("ops.strided_slice new axis", lambda x: ops.strided_slice(x, (0, 0), (1, 1), (1, 1), new_axis_mask=2,
                                                                   shrink_axis_mask=4, begin_mask=1),
         lambda a: a[0:1, None]),
        ("ops.strided_slice shrink masked", lambda x: ops.strided_slice(x, (1, 5), (2, 9), (-1, 1), begin_mask=1,
                                                                        shrink_axis_mask=1),
         lambda a: a[-1, 1:]),
        ("ops.expand_as", lambda x: ops.expand_as(x[..., :1], Tensor(np.zeros((5, 2, 2, 3, 1)))),
         lambda a: np.broadcast_to(a[..., :1], (5, 2, 2, 3, 1))),
    ]


OPS_CASES = _ops_cases()
_FAST_FUNCTIONS = ("_view_reshape", "_view_transpose", "_view_squeeze", "_view_expand_dims", "_view_narrow",
                   "_view_select", "_view_swap", "_view_moveaxis", "_view_flip", "_view_slice", "_view_expand_as",
                   "_view_strided_slice")


def _python_path(monkeypatch):
    from kiln.ops import _kernels  # the raw kernels other packages call (docs/decisions/core-boundary.md)
    for name in _FAST_FUNCTIONS:
        monkeypatch.setattr(_core, name, lambda *a: NotImplemented)
        if hasattr(_kernels, name):
            monkeypatch.setattr(_kernels, name, lambda *a: NotImplemented)


@pytest.mark.parametrize("name, call, ref", OPS_CASES, ids=[c[0] for c in OPS_CASES])
def test_ops_fast_paths_match_numpy_and_the_python_path(name, call, ref, monkeypatch):
    a = np.arange(24, dtype=np.float32).reshape(2, 1, 3, 4)
    x = Tensor(a)
    with _Spy() as spy:
        fast = _outcome(lambda: call(x))
        assert spy.calls == []
    np.testing.assert_array_equal(fast[1].asnumpy(), ref(a))
    with monkeypatch.context() as m:
        _python_path(m)
        slow = _outcome(lambda: call(x))
    _same_outcome(fast, slow)


BAD_CALLS = [
    ("reshape size", lambda x: x.reshape(5, 5)),
    ("reshape two -1", lambda x: x.reshape(-1, -1)),
    ("reshape float", lambda x: x.reshape(2.0, 12)),
    ("reshape bool", lambda x: x.reshape(True)),
    ("view negative", lambda x: x.view(-2, -12)),
    ("transpose short", lambda x: x.transpose(1, 0)),
    ("transpose repeated", lambda x: x.transpose(0, 0, 1, 2)),
    ("transpose out of range", lambda x: x.transpose(0, 1, 2, 4)),
    ("transpose str", lambda x: x.transpose("ab")),
    ("squeeze not 1", lambda x: x.squeeze(0)),
    ("squeeze out of range", lambda x: x.squeeze(7)),
    ("squeeze float", lambda x: x.squeeze(1.0)),
    ("expand_dims range", lambda x: x.expand_dims(6)),
    ("expand_dims float", lambda x: x.expand_dims(0.5)),
    ("unsqueeze bool", lambda x: x.unsqueeze(True)),
    ("flatten float", lambda x: x.flatten(0.0)),
    ("ravel arg", lambda x: x.ravel(1)),
    ("ops.reshape size", lambda x: ops.reshape(x, (7,))),
    ("ops.reshape float", lambda x: ops.reshape(x, (2.0, 12))),
    ("ops.reshape None", lambda x: ops.reshape(x, None)),
    ("ops.transpose", lambda x: ops.transpose(x, (0, 1))),
    ("ops.transpose float", lambda x: ops.transpose(x, 1.5)),
    ("ops.permute", lambda x: ops.permute(x, (0, 1, 2, 2))),
    ("ops.squeeze", lambda x: ops.squeeze(x, 2)),
    ("ops.squeeze str", lambda x: ops.squeeze(x, "1")),
    ("ops.expand_dims", lambda x: ops.expand_dims(x, -6)),
    ("ops.unsqueeze", lambda x: ops.unsqueeze(x, 1.0)),
    ("ops.narrow start", lambda x: ops.narrow(x, 3, -1, 2)),
    ("ops.narrow length", lambda x: ops.narrow(x, 3, 1, 4)),
    ("ops.narrow axis", lambda x: ops.narrow(x, 4, 0, 1)),
    ("ops.narrow float", lambda x: ops.narrow(x, 0, 0.0, 1)),
    ("ops.narrow list", lambda x: ops.narrow([1, 2], 0, 0, 1)),
    ("mint.select index", lambda x: mint.select(x, 3, 4)),
    ("mint.select dim", lambda x: mint.select(x, 4, 0)),
    ("mint.select bool", lambda x: mint.select(x, True, 0)),
    ("ops.swapaxes range", lambda x: ops.swapaxes(x, 0, 4)),
    ("ops.swapaxes float", lambda x: ops.swapaxes(x, 0, 1.0)),
    ("ops.swapdims range", lambda x: ops.swapdims(x, -5, 0)),
    ("ops.swapaxes 0-d", lambda x: ops.swapaxes(x[0, 0, 0, 0], 0, 1)),
    ("ops.moveaxis range", lambda x: ops.moveaxis(x, 4, 0)),
    ("ops.movedim repeated", lambda x: ops.movedim(x, (0, 0), (1, 2))),
    ("ops.movedim str", lambda x: ops.movedim(x, "a", 0)),
    ("ops.flip repeated", lambda x: ops.flip(x, (1, -3))),
    ("ops.flip range", lambda x: ops.flip(x, 4)),
    ("ops.flip float", lambda x: ops.flip(x, (0.0,))),
    ("ops.reverse range", lambda x: ops.reverse(x, (-5,))),
    ("ops.fliplr 1-D", lambda x: ops.fliplr(x[0, 0, 0])),
    ("ops.slice short", lambda x: ops.slice(x, (0, 0, 0), (1, 1, 1))),
    ("ops.slice negative", lambda x: ops.slice(x, (0, 0, -1, 0), (1, 1, 1, 1))),
    ("ops.slice too long", lambda x: ops.slice(x, (0, 0, 2, 0), (1, 1, 2, 1))),
    ("ops.slice size -2", lambda x: ops.slice(x, (0, 0, 0, 0), (1, 1, -2, 1))),
    ("ops.slice float", lambda x: ops.slice(x, (0, 0, 0, 0.0), (1, 1, 1, 1))),
    ("ops.strided_slice zero", lambda x: ops.strided_slice(x, (0,), (1,), (0,))),
    ("ops.strided_slice lengths", lambda x: ops.strided_slice(x, (0, 0), (1,), (1, 1))),
    ("ops.strided_slice ellipses", lambda x: ops.strided_slice(x, (0, 0), (1, 1), (1, 1), ellipsis_mask=3)),
    ("ops.strided_slice mask", lambda x: ops.strided_slice(x, (0,), (1,), (1,), begin_mask=-1)),
    ("ops.strided_slice shrink", lambda x: ops.strided_slice(x, (2,), (3,), (1,), shrink_axis_mask=1)),
    ("ops.strided_slice float", lambda x: ops.strided_slice(x, (0.0,), (1,), (1,))),
    ("ops.expand_as", lambda x: ops.expand_as(x, Tensor(np.zeros((2, 3, 4))))),
    ("ops.expand_as rank", lambda x: ops.expand_as(x, Tensor(np.zeros((3, 4))))),
    ("ops.expand_as array", lambda x: ops.expand_as(x, np.zeros((2, 1, 3, 4)))),
]


@pytest.mark.parametrize("name, call", BAD_CALLS, ids=[c[0] for c in BAD_CALLS])
def test_errors_keep_their_types_and_texts(name, call, monkeypatch):
    """The C++ paths raise what the Python code raises (each either leaves the call to it or raises the same C++
    op error the Python code's call raises)."""
    x = Tensor(np.zeros((2, 1, 3, 4), np.float32))
    fast = _outcome(lambda: call(x))
    assert fast[0] == "err" and fast[1] in (TypeError, ValueError, IndexError), fast
    with monkeypatch.context() as m:
        _python_path(m)
        slow_fns = {"reshape": _tensor._reshape, "view": _tensor._reshape, "transpose": _tensor._transpose,
                    "squeeze": _tensor._squeeze, "expand_dims": _tensor._expand_dims,
                    "unsqueeze": FALLBACKS["unsqueeze"], "flatten": FALLBACKS["flatten"], "ravel": FALLBACKS["ravel"]}
        method = name.split()[0]
        if method in slow_fns:  # the Tensor method's Python code, called directly
            slow = _outcome(lambda: call(_MethodsOf(x, slow_fns)))
        else:
            slow = _outcome(lambda: call(x))
    assert fast[1:] == slow[1:]


class _MethodsOf:
    """x with its view methods replaced by the Python code (for the error comparison)."""

    def __init__(self, x, fns):
        self._x, self._fns = x, fns

    def __getattr__(self, name):
        return lambda *a, **k: self._fns[name](self._x, *a, **k)


# ------------------------------------------------------------------------------------------------ gradients, graphs

GRAD_CASES = [
    ("x[1:, ::-2]", lambda x: x[1:, ::-2], lambda a: a[1:, ::-2]),
    ("x[None, -1, ..., 1]", lambda x: x[None, -1, ..., 1], lambda a: a[None, -1, ..., 1]),
    ("x[::-1][0]", lambda x: x[::-1][0], lambda a: a[::-1][0]),
    ("x.T[1:]", lambda x: x.T[1:], lambda a: a.T[1:]),
    ("reshape", lambda x: x.reshape(4, 3)[::2], lambda a: a.reshape(4, 3)[::2]),
    ("ops.reshape of a slice", lambda x: ops.reshape(x[:, 1:], (-1,)), lambda a: a[:, 1:].reshape(-1)),
    ("squeeze/unsqueeze", lambda x: x[:1].squeeze(0).unsqueeze(1), lambda a: a[:1].squeeze(0)[:, None]),
    ("flatten of a transpose", lambda x: x.transpose().flatten(), lambda a: a.T.reshape(-1)),
    ("narrow", lambda x: ops.narrow(x, 1, 1, 2), lambda a: a[:, 1:3]),
    ("mint.select", lambda x: mint.select(x, 1, -2), lambda a: a[:, -2]),
    ("ops.flip", lambda x: ops.flip(x, (0, 1))[1:], lambda a: a[::-1, ::-1][1:]),
    ("ops.slice", lambda x: ops.slice(x, (1, 1), (2, -1)), lambda a: a[1:3, 1:]),
    ("ops.swapaxes", lambda x: ops.swapaxes(x, 0, 1)[0], lambda a: a.T[0]),
    ("ops.expand_as", lambda x: ops.expand_as(x[:1], Tensor(np.zeros((2, 3, 4)))), lambda a: np.broadcast_to(
        a[:1], (2, 3, 4))),
]


@pytest.mark.parametrize("name, f, ref", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_gradient_through_views(name, f, ref, mode):
    a = np.linspace(-1.0, 2.0, 12).reshape(3, 4)
    w = np.cos(np.arange(ref(a).size, dtype=np.float64)).reshape(ref(a).shape)

    def loss(t):
        return (f(t) * Tensor(w)).sum() + (f(t * t) * f(t)).sum()

    def loss_np(x):
        return float((ref(x) * w).sum() + (ref(x * x) * ref(x)).sum())

    g = kiln.grad(loss)
    if mode == "graph":
        g = kiln.jit(g)
    np.testing.assert_allclose(g(Tensor(a)).asnumpy(), central_difference(loss_np, a), rtol=1e-6, atol=1e-7)


NODE_CASES = [
    ("x[1:3]", lambda x: x[1:3], ["StridedSlice"]),
    ("x[1]", lambda x: x[1], ["StridedSlice", "Reshape"]),
    ("x[None]", lambda x: x[None], ["Reshape"]),
    ("ops.reshape", lambda x: ops.reshape(x, (4, -1)), ["Reshape"]),
    ("Tensor.view", lambda x: x.view(-1), ["Reshape"]),
    ("ops.transpose", lambda x: ops.transpose(x, (2, 1, 0)), ["Transpose"]),
    ("Tensor.T", lambda x: x.T, ["Transpose"]),
    ("squeeze", lambda x: x[:1].squeeze(0), ["StridedSlice", "Reshape"]),
    ("expand_dims", lambda x: ops.expand_dims(x, 0), ["Reshape"]),
    ("flatten", lambda x: x.flatten(), ["Reshape"]),
    ("narrow", lambda x: ops.narrow(x, 1, 0, 2), ["StridedSlice"]),
    ("flip", lambda x: ops.flip(x, 1), ["StridedSlice"]),
    ("slice", lambda x: ops.slice(x, (0, 1, 0), (1, 2, -1)), ["StridedSlice"]),
    ("swapaxes", lambda x: ops.swapaxes(x, 0, 1), ["Transpose"]),
    ("movedim", lambda x: ops.movedim(x, 0, 2), ["Transpose"]),
]


@pytest.mark.parametrize("name, f, ops_traced", NODE_CASES, ids=[c[0] for c in NODE_CASES])
def test_graph_mode_nodes_unchanged(name, f, ops_traced):
    """Under kiln.jit the Python code traces, as before this fast path: one node per op (narrow: one StridedSlice;
    it traced the three pieces of a split before, two of them unused)."""
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    fn = kiln.jit(f)
    np.testing.assert_array_equal(fn(Tensor(a)).asnumpy(), f(Tensor(a)).asnumpy())
    names = re.findall(r"= (\w+)\(", fn.graphs[0].graph_before.to_text())
    assert names == ops_traced


def test_view_records_of_the_fast_path_drive_functional_writes():
    """A view chain recorded in C++ (plain PyNative) is written through under a gradient: the write reaches the
    root and the other views see it (the _views rules, applied to the C++ records)."""
    t0 = np.arange(12, dtype=np.float64).reshape(3, 4)

    def loss(t):
        b = t * 1.0
        c = b[1:].T.reshape(4, 2)  # three records made in C++
        d = b.flatten()
        c[3, 0] = t[0, 0] * 5.0  # b[1, 3]
        return (b * t).sum() + (d * t.flatten()).sum()

    def loss_np(t):
        b = t * 1.0
        b[1, 3] = t[0, 0] * 5.0
        return float((b * t).sum() * 2)

    np.testing.assert_allclose(float(loss(Tensor(t0))), loss_np(t0.copy()))
    np.testing.assert_allclose(kiln.grad(loss)(Tensor(t0)).asnumpy(), central_difference(loss_np, t0), rtol=1e-6)
    b = Tensor(t0)
    c = b[1:].T.reshape(4, 2)
    assert _views.view_info(c)[0] is b
    assert _views.view_info(c)[1] == (("getitem", slice(1, None)), ("transpose", (1, 0)), ("reshape", (4, 2)))
    np.testing.assert_array_equal(_views.positions((3, 4), _views.view_info(c)[1]),
                                  np.arange(12).reshape(3, 4)[1:].T.reshape(4, 2))


def test_dead_views_are_pruned_from_the_root():
    """The root's weak list of views is pruned as _views.note_view prunes it (beyond 32 entries, when more than
    half are dead), whichever side records them."""
    x = Tensor(np.ones((4, 4), np.float32))
    for _ in range(200):
        x[1:]
    assert len(x.__dict__["_kiln_views"]) <= 66
    keep = [x[i % 4] for i in range(40)]
    assert sum(r() is not None for r in x.__dict__["_kiln_views"]) == len(keep)


# ------------------------------------------------------------------------------------------------ setitem

@SETTINGS
@given(shapes_and_keys(out_of_range=False), st.sampled_from(["float", "int", "bool", "tensor", "row"]))
def test_basic_setitem_in_place_matches_numpy_and_the_python_path(case, kind):
    """x[key] = value in plain PyNative: the C++ write (Assign into the view) gives NumPy's array and the Python
    code's (same values, or the same error type and text), and views taken before see it."""
    shape, key = case
    a = np.array(np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) - 3.0)  # (0-d: an array)
    try:
        region = a[key].shape
    except IndexError:
        region = None
    rng = np.random.default_rng(len(shape))
    value = {"float": 2.5, "int": -7, "bool": True}.get(kind)
    if kind == "tensor":
        value = rng.standard_normal(region or ()).astype(np.float32)
    elif kind == "row":  # broadcast along the region's leading dims
        value = rng.standard_normal(region[-1:] if region else ()).astype(np.float32)
    kv = Tensor(value) if isinstance(value, np.ndarray) else value
    x_fast, x_slow = Tensor(a.copy()), Tensor(a.copy())
    before = x_fast[...] if x_fast.ndim == 0 else x_fast[:]
    with _Spy() as spy:
        fast = _outcome(lambda: x_fast.__setitem__(key, kv))
    slow = _outcome(lambda: _indexing.setitem(x_slow, key, kv))
    assert fast[0] == slow[0] and fast[1:] == slow[1:] if fast[0] == "err" else fast[0] == slow[0]
    if region is None:
        assert fast[0] == "err" and fast[1] is IndexError
        return
    assert spy.calls == []
    a[key] = value
    np.testing.assert_array_equal(x_fast.asnumpy(), a)
    np.testing.assert_array_equal(x_slow.asnumpy(), a)
    np.testing.assert_array_equal(before.asnumpy(), a)


def test_setitem_cases_left_to_the_python_code():
    x = Tensor(np.zeros((3, 4), np.float32))
    with _Spy() as spy:
        x[1:, 2] = 1.0
        x[0] = Tensor(np.arange(4, dtype=np.float32))
        x[..., -1] = True
        assert spy.calls == []
        x[[0, 2]] = 5.0  # an advanced key
        x[0] = [1.0, 2.0, 3.0, 4.0]  # a list value
        x[1] = np.float32(3.0)  # a NumPy scalar value
        x[np.int64(2)] = 4.0  # a NumPy integer key
        kiln.grad(lambda t: _setitem_then_sum(t))(Tensor(np.ones((3, 4))))  # under a grad transform
        assert spy.calls.count("__setitem__") == 5  # (x[np.int64(2)] also reads the view through the Python code)
    want = np.zeros((3, 4), np.float32)
    want[1:, 2], want[0], want[..., -1] = 1.0, np.arange(4), True
    want[[0, 2]], want[0], want[1], want[2] = 5.0, [1, 2, 3, 4], 3.0, 4.0
    np.testing.assert_array_equal(x.asnumpy(), want)


def _setitem_then_sum(t):
    b = t * 1.0
    b[1] = 2.0
    return (b * t).sum()


@pytest.mark.parametrize("key, value", [
    ((slice(0, 2),), np.ones((3, 4), np.float32)),  # does not broadcast to the region
    (5, 1.0),  # out of range
    ((0, 0, 0), 1.0),  # too many indices
    (slice(None, None, 0), 1.0),  # zero step
    (0, "a"),  # not a number
])
def test_setitem_errors_keep_their_types_and_texts(key, value):
    x = Tensor(np.zeros((3, 4), np.float32))
    v = Tensor(value) if isinstance(value, np.ndarray) else value
    fast = _outcome(lambda: x.__setitem__(key, v))
    slow = _outcome(lambda: _indexing.setitem(x, key, v))
    assert fast[0] == "err" and fast[1:] == slow[1:], (fast, slow)
    np.testing.assert_array_equal(x.asnumpy(), 0.0)
