"""kiln.dataset regressions found by testing against MindSpore 2.10 (values checked on MindSpore): generator
objects replayed every epoch, per_batch_map row counts, sizes after infinite repeat + take, dtype mixing,
exception types, sampler semantics."""
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import kiln.dataset as ds
from helpers import subprocess_env


def rows(d, **kw):
    return list(d.create_tuple_iterator(output_numpy=True, num_epochs=1, **kw))


def col(d, k=0):
    return [r[k].tolist() for r in rows(d)]


# ---------------------------------------------------------------- 1. generator objects
def test_generator_object_replayed_every_epoch_and_after_size():
    pulled = []

    def gen():
        for i in range(5):
            pulled.append(i)
            yield (np.array(i),)

    d = ds.GeneratorDataset(gen(), ["x"], shuffle=False)
    it = d.create_tuple_iterator(num_epochs=3, output_numpy=True)
    assert [int(a[0]) for a in it] == [0, 1, 2, 3, 4]
    assert [int(a[0]) for a in it] == [0, 1, 2, 3, 4]  # MindSpore 2.10: the same rows again
    assert pulled == [0, 1, 2, 3, 4]  # the generator is read once
    d = ds.GeneratorDataset(gen(), ["x"])
    assert d.get_dataset_size() == 5
    assert col(d) == [0, 1, 2, 3, 4] and col(d) == [0, 1, 2, 3, 4]
    b = ds.GeneratorDataset(iter([(1,), (2,), (3,)]), ["x"]).batch(2)
    assert b.get_dataset_size() == 2
    assert col(b) == [[1, 2], [3]] and col(b) == [[1, 2], [3]]
    # an epoch cut short (take) and the next one still see every row
    t = ds.GeneratorDataset((np.array(i) for i in range(4)), ["x"])
    assert col(t.take(2)) == [0, 1] and col(t) == [0, 1, 2, 3]
    assert col(ds.GeneratorDataset((np.array(i) for i in range(4)), ["x"], num_samples=3)) == [0, 1, 2]


def test_generator_object_trains_every_epoch():
    from kiln import nn
    from kiln.train import Model, Callback

    class Count(Callback):
        steps = 0

        def on_train_step_end(self, run_context):
            Count.steps += 1

    g = ((np.ones(4, np.float32) * i, np.ones(1, np.float32)) for i in range(6))
    d = ds.GeneratorDataset(g, ["x", "y"]).batch(2)
    net = nn.Dense(4, 1)
    Model(net, nn.MSELoss(), nn.SGD(net.trainable_params(), 0.01)).train(3, d, callbacks=[Count()],
                                                                         dataset_sink_mode=False)
    assert Count.steps == 9


# ---------------------------------------------------------------- 2. no orphan workers
KILLED_PARENT = """
import multiprocessing, os, sys, threading, time
import numpy as np
import kiln.dataset as ds
def work(x):
    time.sleep(0.01)
    return x
def run():
    d = ds.NumpySlicesDataset(np.arange(100000), shuffle=False).map(work, num_parallel_workers=2,
                                                                    python_multiprocessing=True)
    for k, _ in enumerate(d.create_tuple_iterator(output_numpy=True)):
        if k == 20:
            for p in multiprocessing.active_children():
                print(p.pid, flush=True)
            print("ready", flush=True)
if sys.argv[1] == "thread":  # workers forked from a pipeline thread: PR_SET_PDEATHSIG cannot be used, the watch can
    t = threading.Thread(target=run)
    t.start()
    t.join()
else:
    run()
"""


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("where", ["main", "thread"])
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_workers_die_with_a_killed_parent(where, sig):
    p = subprocess.Popen([sys.executable, "-c", KILLED_PARENT, where], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=subprocess_env())
    pids, left = [], []
    try:
        for line in p.stdout:
            if line.strip() == "ready":
                break
            pids.append(int(line))
        assert len(pids) == 2
        p.send_signal(sig)
        p.wait(timeout=30)
        end = time.monotonic() + 15
        while time.monotonic() < end and any(_alive(q) for q in pids):
            time.sleep(0.05)
        left = [q for q in pids if _alive(q)]
    finally:
        if p.poll() is None:
            p.kill()
        for q in pids:  # orphans would hold the pipes open
            if _alive(q):
                os.kill(q, signal.SIGKILL)
        p.communicate(timeout=30)
    assert left == []


# ---------------------------------------------------------------- 3. per_batch_map row counts
def _pbm(f, ic=("a",), oc=None):
    d = ds.NumpySlicesDataset({"a": np.arange(8), "b": np.arange(8)}, shuffle=False)
    return d.batch(4, per_batch_map=f, input_columns=list(ic), output_columns=oc)


def test_per_batch_map_must_return_one_row_per_batch_row():
    with pytest.raises(RuntimeError, match=r"column: a expects: 4 rows returned from 'per_batch_map', got: 12"):
        rows(_pbm(lambda a, info: (a * 3,)))
    with pytest.raises(RuntimeError, match=r"column: b expects: 4 rows returned from 'per_batch_map', got: 2"):
        rows(_pbm(lambda a, b, info: (a, b[:2]), ("a", "b")))
    with pytest.raises(RuntimeError, match=r"column: a expects: 4 rows returned from 'per_batch_map', got: 2"):
        rows(_pbm(lambda a, info: (a[:2], a), oc=["a", "c"]))
    # an array is the batched column itself (MindSpore 2.10 takes it as is)
    assert [[x.tolist() for x in r] for r in rows(_pbm(lambda a, info: (np.arange(3),)))] == \
        [[[0, 1, 2], [0, 1, 2, 3]], [[0, 1, 2], [4, 5, 6, 7]]]
    assert [r[0].tolist() for r in rows(_pbm(lambda a, info: ([x * 2 for x in a],)))] == [[0, 2, 4, 6],
                                                                                          [8, 10, 12, 14]]


# ---------------------------------------------------------------- 4. sizes with infinite repeat
def _b(n=10):
    return ds.NumpySlicesDataset({"a": np.arange(n)}, shuffle=False)


@pytest.mark.parametrize("make,size", [
    (lambda: _b().repeat().take(25), 25),
    (lambda: _b().repeat().take(25).batch(5), 5),
    (lambda: _b().repeat().take(25).batch(4), 7),
    (lambda: _b().repeat().take(25).batch(4, True), 6),
    (lambda: _b().repeat().skip(3).take(20), 20),
    (lambda: _b().repeat(3).take(25), 25),
    (lambda: _b().repeat(3).skip(25), 5),
    (lambda: _b().repeat().take(25).zip(ds.NumpySlicesDataset({"c": np.arange(7)}, shuffle=False)), 7),
    (lambda: _b().repeat().zip(ds.NumpySlicesDataset({"c": np.arange(7)}, shuffle=False)), 7),
    (lambda: _b(7).concat(_b().repeat().take(25)), 32),
    (lambda: _b().repeat().take(25).repeat(2), 50),
    (lambda: _b().repeat().batch(4).take(3), 3),
    (lambda: _b().repeat().map(lambda x: x).take(25), 25),
    (lambda: _b().repeat().shuffle(4).take(25), 25),
    (lambda: _b().repeat().take(25).skip(5), 20),
    (lambda: _b().repeat().take(25).filter(lambda x: x % 2 == 0), 13),
])
def test_size_after_infinite_repeat_is_the_rows_produced(make, size):
    assert make().get_dataset_size() == size
    assert len(rows(make())) == size


def test_size_of_endless_pipelines():
    assert _b().repeat().get_dataset_size() == 10  # one pass, as MindSpore
    assert _b().repeat().skip(3).get_dataset_size() == 7
    with pytest.raises(RuntimeError, match="endless"):
        _b().repeat().filter(lambda x: x > 2).get_dataset_size()


# ---------------------------------------------------------------- 5. dtype mixing
def test_concat_of_different_column_types_raises():
    c = ds.NumpySlicesDataset({"a": np.arange(3)}, shuffle=False) + \
        ds.NumpySlicesDataset({"a": np.arange(3.0)}, shuffle=False)
    with pytest.raises(RuntimeError, match=r"concat: column 'a' is int64 in the first dataset but float64 in dataset 1"):
        rows(c)
    # text of different lengths is one type; equal types concatenate
    t = ds.NumpySlicesDataset({"s": ["a", "bb"]}, shuffle=False) + ds.NumpySlicesDataset({"s": ["ccc"]}, shuffle=False)
    assert [str(r[0]) for r in rows(t)] == ["a", "bb", "ccc"]
    assert col(ds.NumpySlicesDataset({"a": [1]}, shuffle=False) + ds.NumpySlicesDataset({"a": [2, 3]},
                                                                                          shuffle=False)) == [1, 2, 3]


def test_batch_of_different_row_types_raises():
    def src(t0, t1):
        return ds.GeneratorDataset(lambda: ((np.ones(2, t0) if i == 0 else np.ones(2, t1),) for i in range(2)),
                                   ["x"]).batch(2)
    with pytest.raises(RuntimeError, match=r"different types in column 'x'. First element had type float32 and "
                                           r"this element had type int64"):
        rows(src(np.float32, np.int64))
    with pytest.raises(RuntimeError, match="type int32 and this element had type int64"):
        rows(src(np.int32, np.int64))
    r = rows(src(np.float32, np.float32))
    assert r[0][0].dtype == np.float32 and r[0][0].tolist() == [[1, 1], [1, 1]]


# ---------------------------------------------------------------- 6. exception types
def test_column_and_sampler_errors_are_runtime_errors_as_mindspore():
    n = lambda: ds.NumpySlicesDataset({"a": np.arange(4)}, shuffle=False)
    for build, msg in [(lambda: n().map(lambda x: x, input_columns="zz"), "map: input column 'zz' does not exist"),
                       (lambda: n().project("zz"), "project: column 'zz' does not exist"),
                       (lambda: ds.zip((n(), n())), "duplicate column a"),
                       (lambda: rows(n(), columns=["zz"]), "create_tuple_iterator: column 'zz' does not exist")]:
        with pytest.raises(RuntimeError, match=msg) as e:
            build()
        assert isinstance(e.value, ValueError)  # raised when building, as before
    with pytest.raises(RuntimeError, match="sample index 20 is out of range for a dataset of 4 rows") as e:
        rows(ds.NumpySlicesDataset({"a": np.arange(4)}, sampler=ds.SubsetSampler([1, 20])))
    assert isinstance(e.value, IndexError)


# ---------------------------------------------------------------- 7. samplers, dict rows
def test_weighted_random_sampler_never_exceeds_the_dataset():
    def size_and_rows(n, w, k):
        d = ds.NumpySlicesDataset({"a": np.arange(n)}, sampler=ds.WeightedRandomSampler(w, k))
        return d.get_dataset_size(), len(rows(d))
    assert size_and_rows(10, [1] * 10, 25) == (10, 10)  # MindSpore 2.10
    assert size_and_rows(10, [1] * 10, 5) == (5, 5)
    assert size_and_rows(30, [1] * 10, 25) == (25, 25)
    d = ds.NumpySlicesDataset({"a": np.arange(10)}, sampler=ds.WeightedRandomSampler([0, 0, 1] + [0] * 7, 5))
    assert col(d) == [2] * 5


def test_generator_dict_row_is_one_column():
    # MindSpore 2.10: a dict row is one (Python-object) column, so two column names are a column-count mismatch
    # ("... the size of column_names is:2 and number of returned NumPy array is:1"); see
    # test_dataset_python_objects.py for dict columns
    with pytest.raises(RuntimeError, match=r"the source gave a row of 1 columns, but column_names names 2"):
        rows(ds.GeneratorDataset(lambda: ({"x": i, "y": 2 * i} for i in range(2)), ["x", "y"]))


def _double_rows(a, info):
    return ([x * 2 for x in a],)


def test_multiprocessing_start_method():
    from kiln.dataset.engine import workers
    assert ds.config.get_multiprocessing_start_method() == "fork"  # Linux default, as MindSpore
    with pytest.raises(ValueError, match="fork', 'spawn'"):
        ds.config.set_multiprocessing_start_method("forkserver")
    with pytest.raises(TypeError, match="start_method"):
        ds.config.set_multiprocessing_start_method(1)
    ds.config.set_multiprocessing_start_method("spawn")
    try:
        assert ds.config.get_multiprocessing_start_method() == "spawn" and workers._start_method() == "spawn"
        d = ds.NumpySlicesDataset({"a": np.arange(6)}, shuffle=False).map(np.negative, num_parallel_workers=2,
                                                                          python_multiprocessing=True)
        assert col(d) == [0, -1, -2, -3, -4, -5]
        b = ds.NumpySlicesDataset({"a": np.arange(8)}, shuffle=False).batch(
            4, per_batch_map=_double_rows, input_columns=["a"], num_parallel_workers=2, python_multiprocessing=True)
        assert col(b) == [[0, 2, 4, 6], [8, 10, 12, 14]]
        d = ds.NumpySlicesDataset({"a": np.arange(6)}, shuffle=False).map(lambda x: x, num_parallel_workers=2,
                                                                          python_multiprocessing=True)
        with pytest.raises(TypeError, match="'spawn' start method .* must be picklable"):
            rows(d)
    finally:
        ds.config.set_multiprocessing_start_method("fork")
    assert workers._start_method() == "fork"


def test_split_of_a_pipeline_randomizes_the_order_within_each_part():
    ds.config.set_seed(3)
    src = ds.NumpySlicesDataset({"a": np.arange(30)}, shuffle=False)
    a, b = src.split([0.6, 0.4], randomize=True)
    ds.config.set_seed(3)
    m_a, m_b = src.map(lambda x: x * 10).split([18, 12], randomize=True)
    pa, pb = col(a), col(b)
    assert sorted(pa + pb) == list(range(30)) and pa != sorted(pa)  # random order within the part (MindSpore)
    assert col(m_a) == [10 * x for x in pa] and col(m_b) == [10 * x for x in pb]  # the same permutation
    assert col(m_a) == col(m_a)  # fixed across epochs
    x, y = src.map(lambda v: v).split([20, 10], randomize=False)
    assert col(x) == list(range(20)) and col(y) == list(range(20, 30))


@pytest.mark.parametrize("processes", [False, True])
def test_decode_failure_names_the_file(tmp_path, processes):
    from PIL import Image
    import kiln.dataset.vision as vision
    (tmp_path / "c1").mkdir()
    Image.new("RGB", (4, 3), (10, 20, 30)).save(tmp_path / "c1" / "a_good.png")
    (tmp_path / "c1" / "b_bad.jpg").write_bytes(b"garbage!")
    d = ds.ImageFolderDataset(str(tmp_path), shuffle=False).map(vision.Decode(), input_columns="image",
                                                                 num_parallel_workers=2 if processes else 1,
                                                                 python_multiprocessing=processes)
    with pytest.raises(RuntimeError, match=r"The corresponding data file is: .*c1/b_bad\.jpg"):
        rows(d)
    good = ds.ImageFolderDataset(str(tmp_path), shuffle=False).take(1).map(vision.Decode(), input_columns="image")
    r = rows(good)
    assert r[0][0].shape == (3, 4, 3) and r[0][0][0, 0].tolist() == [10, 20, 30] and type(r[0][0]) is np.ndarray
    raw = rows(ds.ImageFolderDataset(str(tmp_path), shuffle=False).take(1))[0]
    assert type(raw) is list  # rows reach the user as plain lists, not FileRow
    assert raw[0].dtype == np.uint8 and int(raw[1]) == 0
