"""kiln.dataset.transforms: every operation against NumPy references (values checked against MindSpore 2.10's
eager results where semantics are subtle), argument and data errors, random ops' distribution and seeding."""
import multiprocessing
import threading

import numpy as np
import pytest

import kiln
import kiln.dataset.transforms as T
from kiln.dataset.vision import _random

A = np.array([1, 2, 3], dtype=np.int32)


# ---------------------------------------------------------------- TypeCast

def test_typecast_kiln_numpy_and_name_dtypes():
    for dt, npdt in ((kiln.float32, np.float32), (np.float16, np.float16), ("int8", np.int8), (kiln.bool_, np.bool_)):
        out = T.TypeCast(dt)(A)
        assert out.dtype == npdt
        np.testing.assert_array_equal(out, A.astype(npdt))


def test_typecast_truncates_and_wraps_like_numpy():
    np.testing.assert_array_equal(T.TypeCast(kiln.int32)(np.array([1.7, -1.7, 2.5])), [1, -1, 2])
    np.testing.assert_array_equal(T.TypeCast(kiln.uint8)(np.array([300, -1])), [44, 255])  # MindSpore: same


def test_typecast_eager_inputs_list_scalar_tensor():
    assert T.TypeCast(kiln.float32)([1, 2]).dtype == np.float32
    out = T.TypeCast(kiln.float32)(7)
    assert out.shape == () and out == 7.0
    t = kiln.Tensor(np.array([1, 2], np.int64))
    np.testing.assert_array_equal(T.TypeCast(kiln.float32)(t), np.array([1, 2], np.float32))


def test_typecast_errors():
    with pytest.raises(TypeError, match="data_type"):
        T.TypeCast(3)
    with pytest.raises(RuntimeError, match="1 input column"):
        T.TypeCast(kiln.float32)(A, A)
    with pytest.raises(TypeError, match="TypeCast"):
        T.TypeCast(kiln.float32)(object())


# ---------------------------------------------------------------- OneHot

def test_onehot_values_and_dtype():
    out = T.OneHot(4)(np.array([1, 3]))
    np.testing.assert_array_equal(out, np.eye(4, dtype=np.int64)[[1, 3]])
    assert out.dtype == np.int64
    assert T.OneHot(4)(np.array([1, 2], np.uint8)).dtype == np.uint8
    np.testing.assert_array_equal(T.OneHot(4)(np.array(2)), [0, 0, 1, 0])
    np.testing.assert_array_equal(T.OneHot(4)(np.array([2])), [0, 0, 1, 0])  # (1,) acts as a scalar (MindSpore)
    np.testing.assert_array_equal(T.OneHot(4)(np.array([2, -1])), [[0, 0, 1, 0], [0, 0, 0, 0]])


def test_onehot_smoothing():
    out = T.OneHot(4, 0.1)(np.array(3))
    np.testing.assert_allclose(out, [0.025, 0.025, 0.025, 0.925])  # MindSpore 2.10's values
    assert out.dtype == np.float64
    out = T.OneHot(4, 0.2)(np.array([0, 2]))
    np.testing.assert_allclose(out, [[0.85, 0.05, 0.05, 0.05], [0.05, 0.05, 0.85, 0.05]])


def test_onehot_errors():
    with pytest.raises(ValueError, match="greater than 0"):
        T.OneHot(0)
    with pytest.raises(ValueError, match="smoothing_rate"):
        T.OneHot(4, 2.0)
    with pytest.raises(TypeError, match="num_classes"):
        T.OneHot(4.0)
    with pytest.raises(RuntimeError, match="int type.*float64"):
        T.OneHot(4)(np.array([1.0]))
    with pytest.raises(RuntimeError, match="int type.*bool"):
        T.OneHot(4)(np.array([True]))
    with pytest.raises(RuntimeError, match="scalar or 1D.*rank: 2"):
        T.OneHot(4)(np.array([[1, 2], [0, 3]]))
    with pytest.raises(RuntimeError, match="num classes: 3, but got: 7"):
        T.OneHot(3)(7)


# ---------------------------------------------------------------- Fill, Duplicate, Concatenate, Mask, PadEnd

def test_fill():
    out = T.Fill(7.5)(A)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, [7, 7, 7])  # cast to the input's dtype
    np.testing.assert_array_equal(T.Fill(7)(np.array([1.0, 2.0])), [7.0, 7.0])
    np.testing.assert_array_equal(T.Fill(True)(A), [1, 1, 1])
    np.testing.assert_array_equal(T.Fill("z")(np.array(["a", "bb"])), ["z", "z"])
    with pytest.raises(RuntimeError, match="Fill"):
        T.Fill("x")(A)
    with pytest.raises(RuntimeError, match="Fill"):
        T.Fill(1)(np.array(["a"]))
    with pytest.raises(TypeError, match="fill_value"):
        T.Fill([1])


def test_duplicate():
    x, y = T.Duplicate()(A)
    np.testing.assert_array_equal(x, A)
    np.testing.assert_array_equal(y, A)
    assert not np.shares_memory(x, y)
    with pytest.raises(RuntimeError, match="one column"):
        T.Duplicate()(A, A)


def test_concatenate():
    out = T.Concatenate(0, np.array([9, 9], np.int32), np.array([7], np.int32))(A)
    np.testing.assert_array_equal(out, [9, 9, 1, 2, 3, 7])
    np.testing.assert_array_equal(T.Concatenate(-1)(A), A)
    np.testing.assert_array_equal(T.Concatenate(0, np.array(["x"]), np.array(["yy"]))(np.array(["a"])),
                                  ["x", "a", "yy"])
    with pytest.raises(RuntimeError, match="prepend datatype"):
        T.Concatenate(0, np.array([9, 9], np.int64))(A)
    with pytest.raises(RuntimeError, match="only 1D input"):
        T.Concatenate()(np.ones((2, 2)))
    with pytest.raises(ValueError, match="only 1D concatenation"):
        T.Concatenate(1)
    with pytest.raises(TypeError, match="prepend"):
        T.Concatenate(0, [1, 2])


@pytest.mark.parametrize("rel,fn", [(T.Relational.EQ, np.equal), (T.Relational.NE, np.not_equal),
                                    (T.Relational.GT, np.greater), (T.Relational.GE, np.greater_equal),
                                    (T.Relational.LT, np.less), (T.Relational.LE, np.less_equal)])
def test_mask_relations(rel, fn):
    out = T.Mask(rel, 2)(A)
    assert out.dtype == np.bool_
    np.testing.assert_array_equal(out, fn(A, 2))


def test_mask_constant_cast_dtype_and_strings():
    np.testing.assert_array_equal(T.Mask(T.Relational.EQ, 1.5)(A), [True, False, False])  # 1.5 -> int32 1
    np.testing.assert_array_equal(T.Mask(T.Relational.EQ, 1.5)(A.astype(float)), [False, False, False])
    out = T.Mask(T.Relational.EQ, 2, kiln.float32)(A)
    assert out.dtype == np.float32 and out.tolist() == [0.0, 1.0, 0.0]
    np.testing.assert_array_equal(T.Mask(T.Relational.EQ, "b")(np.array(["a", "b"])), [False, True])
    with pytest.raises(RuntimeError, match="Mask"):
        T.Mask(T.Relational.NE, "a")(A)
    with pytest.raises(TypeError, match="operator"):
        T.Mask(3, 2)


def test_padend():
    np.testing.assert_array_equal(T.PadEnd([5])(A), [1, 2, 3, 0, 0])
    np.testing.assert_array_equal(T.PadEnd([5], 9)(A), [1, 2, 3, 9, 9])
    np.testing.assert_array_equal(T.PadEnd([5], 1.5)(A), [1, 2, 3, 1, 1])
    np.testing.assert_array_equal(T.PadEnd([2])(A), [1, 2])  # truncates
    np.testing.assert_array_equal(T.PadEnd([2, 4])(np.ones((1, 3))), [[1, 1, 1, 0], [0, 0, 0, 0]])
    np.testing.assert_array_equal(T.PadEnd([None, 4])(np.ones((2, 3))), [[1, 1, 1, 0], [1, 1, 1, 0]])
    np.testing.assert_array_equal(T.PadEnd([3], "s")(np.array(["a"])), ["a", "s", "s"])
    np.testing.assert_array_equal(T.PadEnd([3])(np.array(["a"])), ["a", "", ""])
    with pytest.raises(RuntimeError, match="rank of input is: 2"):
        T.PadEnd([4])(np.ones((2, 3)))
    with pytest.raises(RuntimeError, match="numeric and string"):
        T.PadEnd([4], "a")(np.ones(3))
    with pytest.raises(ValueError, match="pad_shape"):
        T.PadEnd([-1])


# ---------------------------------------------------------------- Slice, Unique

def test_slice():
    np.testing.assert_array_equal(T.Slice(slice(1, 3))(A), [2, 3])
    np.testing.assert_array_equal(T.Slice([0, 2])(A), [1, 3])
    np.testing.assert_array_equal(T.Slice(1)(A), [2])
    np.testing.assert_array_equal(T.Slice(-1)(A), [3])
    np.testing.assert_array_equal(T.Slice(None)(A), A)
    np.testing.assert_array_equal(T.Slice(Ellipsis)(A), A)
    np.testing.assert_array_equal(T.Slice(slice(0, 5))(A), A)
    m = np.arange(12).reshape(3, 4)
    np.testing.assert_array_equal(T.Slice(slice(0, 1), [1, 2])(m), [[1, 2]])
    np.testing.assert_array_equal(T.Slice(slice(0, 3, 2), 1)(m), [[1], [9]])


def test_slice_errors():
    with pytest.raises(RuntimeError, match="Index 5 is out of bounds"):
        T.Slice(5)(A)
    with pytest.raises(RuntimeError, match="Index 7 is out of bounds"):
        T.Slice([0, 2, 7])(A)
    with pytest.raises(RuntimeError, match="step"):
        T.Slice(slice(None, None, -1))(A)
    with pytest.raises(RuntimeError, match="rank 1, 2 slices"):
        T.Slice(1, 1)(A)
    with pytest.raises(TypeError, match="slice"):
        T.Slice("a")


def test_unique_first_appearance_order():
    vals, idx, cnt = T.Unique()(np.array([[5, 3, 5], [1, 3, 1]]))  # MindSpore 2.10's result
    np.testing.assert_array_equal(vals, [5, 3, 1])
    np.testing.assert_array_equal(idx, [0, 1, 0, 2, 1, 2])
    np.testing.assert_array_equal(cnt, [2, 2, 2])
    assert idx.dtype == np.int32 and cnt.dtype == np.int32
    x = np.random.default_rng(0).integers(0, 7, 50)
    vals, idx, cnt = T.Unique()(x)
    np.testing.assert_array_equal(vals[idx], x)
    np.testing.assert_array_equal(cnt, [np.sum(x == v) for v in vals])
    firsts = [int(np.argmax(x == v)) for v in vals]
    assert firsts == sorted(firsts)
    with pytest.raises(RuntimeError, match="at least 1-D"):
        T.Unique()(np.array(5))
    with pytest.raises(RuntimeError, match="numeric"):
        T.Unique()(np.array([["a", "b"]]))


# ---------------------------------------------------------------- Compose and random composition

def test_compose_chains_ops_and_pyfuncs():
    np.testing.assert_array_equal(T.Compose([T.Fill(1), T.TypeCast(kiln.float32)])(A), np.ones(3, np.float32))
    out = T.Compose([lambda x: x * 2, T.TypeCast(kiln.float32)])(A)
    assert out.dtype == np.float32 and out.tolist() == [2, 4, 6]
    np.testing.assert_array_equal(T.Compose([T.Duplicate(), lambda x, y: x + y])(A), [2, 4, 6])
    out = T.Compose([lambda x: x * 2])([1, 2])  # list input becomes an int64 array first
    assert isinstance(out, np.ndarray) and out.dtype == np.int64
    x, y = T.Compose([T.Duplicate()])(A)
    np.testing.assert_array_equal(x, y)


def test_compose_errors():
    with pytest.raises(ValueError, match="can not be empty"):
        T.Compose([])
    with pytest.raises(TypeError, match=r"transforms\[0\]"):
        T.Compose([1])
    with pytest.raises(TypeError, match="transforms"):
        T.Compose(T.Fill(1))


def test_random_apply_choice_order_errors():
    with pytest.raises(ValueError, match="prob"):
        T.RandomApply([T.Fill(1)], 1.5)
    for cls in (T.RandomChoice, T.RandomOrder):
        with pytest.raises(ValueError, match="can not be empty"):
            cls([])
    np.testing.assert_array_equal(T.RandomApply([T.Fill(1)], 1)(A), [1, 1, 1])
    np.testing.assert_array_equal(T.RandomApply([T.Fill(1)], 0.0)(A), A)


def test_random_apply_probability():
    _random.reseed(123)
    op = T.RandomApply([lambda x: x + 1], prob=0.3)
    hits = sum(int(op(np.array(0))) for _ in range(4000))
    assert abs(hits / 4000 - 0.3) < 0.03  # 4.5 standard deviations


def test_random_choice_uniform_and_order_permutations():
    _random.reseed(7)
    op = T.RandomChoice([lambda x: x * 0 + 0, lambda x: x * 0 + 1, lambda x: x * 0 + 2])
    counts = np.bincount([int(op(np.array(5))) for _ in range(3000)], minlength=3)
    assert np.all(np.abs(counts / 3000 - 1 / 3) < 0.035)
    order = T.RandomOrder([lambda x: np.append(x, 1), lambda x: np.append(x, 2), lambda x: np.append(x, 3)])
    seen = {tuple(order(np.array([], np.int64)).tolist()) for _ in range(300)}
    assert seen == {(1, 2, 3), (1, 3, 2), (2, 1, 3), (2, 3, 1), (3, 1, 2), (3, 2, 1)}


def test_random_ops_reproducible_under_reseed():
    op = T.RandomApply([lambda x: x + 1], prob=0.5)

    def run():
        _random.reseed(2024)
        return [int(op(np.array(0))) for _ in range(64)]
    first, second = run(), run()
    assert first == second
    assert 10 < sum(first) < 54
    _random.reseed(2025)
    assert [int(op(np.array(0))) for _ in range(64)] != first


# ---------------------------------------------------------------- the random state: threads and processes

def test_reseed_argument_errors():
    with pytest.raises(TypeError, match="seed"):
        _random.reseed(1.5)
    with pytest.raises(ValueError, match="seed"):
        _random.reseed(-1)
    with pytest.raises(ValueError, match="stream"):
        _random.reseed(1, stream=-2)


def test_threads_get_independent_streams():
    _random.reseed(99)
    main = _random._rng().random(8).tolist()
    results = {}

    def work(k):
        results[k] = _random._rng().random(8).tolist()
    threads = [threading.Thread(target=work, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    streams = [tuple(main)] + [tuple(v) for v in results.values()]
    assert len(set(streams)) == 4  # no two threads share a generator or a stream


def _child_draw(queue):
    queue.put(_random._rng().random(4).tolist())


def _child_draw_seeded(queue, stream):
    _random.reseed(5, stream=stream)
    queue.put(_random._rng().random(4).tolist())


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="needs fork")
def test_forked_workers_get_their_own_streams():
    ctx = multiprocessing.get_context("fork")
    _random.reseed(5)
    parent = _random._rng().random(4).tolist()
    _random.reseed(5)
    _random._rng()  # the parent's thread generator exists before the fork (it is copied into the child)
    q = ctx.Queue()
    procs = [ctx.Process(target=_child_draw, args=(q,)) for _ in range(2)]
    for p in procs:
        p.start()
    draws = [q.get(timeout=30) for _ in procs]
    for p in procs:
        p.join(timeout=30)
    assert parent not in draws and draws[0] != draws[1]
    # workers seeded explicitly with their index are reproducible
    q2 = ctx.Queue()
    again = []
    for _ in range(2):
        p = ctx.Process(target=_child_draw_seeded, args=(q2, 3))
        p.start()
        again.append(q2.get(timeout=30))
        p.join(timeout=30)
    assert again[0] == again[1]


# ---------------------------------------------------------------- module paths

def test_module_paths_and_1x_aliases():
    import kiln.dataset.transforms.c_transforms as C
    import kiln.dataset.transforms.py_transforms as P
    import kiln.dataset.transforms.transforms as TT
    assert C.TypeCast is T.TypeCast and C.OneHot is T.OneHot and C.Compose is T.Compose
    assert P.Compose is T.Compose and P.RandomOrder is T.RandomOrder
    assert TT.Unique is T.Unique
    assert not hasattr(P, "OneHotOp")


def test_operations_pickle_for_worker_processes():
    import pickle
    import kiln.dataset.vision as V
    ops = [T.Compose([T.TypeCast(kiln.float32), T.OneHot(3)]), T.Mask(T.Relational.GE, 2), T.Slice(slice(0, 2)),
           V.RandomResizedCrop(4), V.Normalize([1] * 3, [2] * 3), V.Pad(1, padding_mode=V.Border.EDGE)]
    img = np.arange(48, dtype=np.uint8).reshape(4, 4, 3)
    for op in ops[1:3]:
        np.testing.assert_array_equal(pickle.loads(pickle.dumps(op))(A), op(A))
    for op in ops[4:]:
        np.testing.assert_array_equal(pickle.loads(pickle.dumps(op))(img), op(img))
    assert pickle.loads(pickle.dumps(ops[3])).size == 4
    assert len(pickle.loads(pickle.dumps(ops[0])).transforms) == 2


def test_bad_data_errors_name_the_operation():
    with pytest.raises(RuntimeError, match="TypeCast: cannot cast"):
        T.TypeCast(kiln.int32)(np.array(["1", "x"]))
    with pytest.raises(ValueError, match="num_classes"):
        T.OneHot(10 ** 12)
    with pytest.raises(RuntimeError, match="out of bounds"):
        T.Slice([10 ** 18])(A)
    with pytest.raises(ZeroDivisionError):  # a user function's own exception reaches the caller unchanged
        T.Compose([lambda x: 1 / 0])(A)


def test_compose_returns_a_tuple_when_it_runs_as_a_python_op():
    # MindSpore 2.10 eager: a PIL input, or a Python-only op inside, makes Compose return a tuple of columns
    from PIL import Image
    import kiln.dataset.vision as V
    img = np.arange(6 * 8 * 3, dtype=np.uint8).reshape(6, 8, 3)
    out = T.Compose([V.ToPIL(), V.Resize(3)])(img)
    assert isinstance(out, tuple) and len(out) == 1 and isinstance(out[0], Image.Image)
    out = T.Compose([V.Resize(3), V.ToTensor()])(Image.fromarray(img))
    assert isinstance(out, tuple) and out[0].shape == (3, 3, 4)
    assert isinstance(T.Compose([T.Compose([V.ToPIL()]), V.Resize(3)])(img), tuple)
    import io
    buf = io.BytesIO()
    Image.fromarray(img).save(buf, "PNG")
    out = T.Compose([V.Decode(to_pil=True), V.Resize((2, 2))])(np.frombuffer(buf.getvalue(), np.uint8))
    assert isinstance(out, tuple) and out[0].size == (2, 2)
    out = T.Compose([V.Decode(), V.Resize((2, 2))])(np.frombuffer(buf.getvalue(), np.uint8))
    assert isinstance(out, np.ndarray) and out.shape == (2, 2, 3)
    assert isinstance(T.Compose([V.Rescale(1 / 255, 0), V.HWC2CHW()])(img), np.ndarray)  # C ops only: an array
    assert isinstance(T.RandomApply([V.ToPIL()], 1.0)(img), Image.Image)  # RandomApply never wraps
