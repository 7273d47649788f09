"""kiln.data_sink: the numbers equal the per-step @jit loop bit for bit (losses, parameters, Adam state, dropout
draws) and PyNative within float tolerance; epochs wrap; partial batches; errors from the dataset and the step;
KeyboardInterrupt; bounded prefetch; threads; argument checks as MindSpore's."""
import _thread
import gc
import signal
import importlib
import threading
import time
import traceback

import numpy as np
import pytest

import kiln as ms
from kiln import nn, ops
from sink_helpers import ArrayDataset, regression_data

sink_module = importlib.import_module("kiln.train.data_sink")  # (kiln.train.data_sink is the function)


class MLP(nn.Cell):
    def __init__(self, dropout=None):
        super().__init__()
        self.fc1 = nn.Dense(10, 16)
        self.relu = nn.ReLU()
        self.drop = nn.Dropout(p=dropout) if dropout else None
        self.fc2 = nn.Dense(16, 1)

    def construct(self, x):
        h = self.relu(self.fc1(x))
        if self.drop is not None:
            h = self.drop(h)
        return self.fc2(h)


def build(seed=1, dropout=None, lr=0.01):
    """The seed's MLP + MSE + Adam and its training step (not compiled)."""
    ms.set_seed(seed)
    net = MLP(dropout)
    opt = nn.Adam(net.trainable_params(), learning_rate=lr)
    loss_fn = nn.MSELoss()

    def forward(data, label):
        logits = net(data)
        return loss_fn(logits, label), logits

    grad_fn = ms.value_and_grad(forward, None, opt.parameters, has_aux=True)

    def train_step(data, label):
        (loss, logits), grads = grad_fn(data, label)
        loss = ops.depend(loss, opt(grads))
        return loss, logits

    net.set_train(True)
    return net, opt, train_step


def state_of(opt):
    """Every piece of optimizer state (parameters, moments, beta powers, global step) as NumPy arrays."""
    out = {p.name: p.asnumpy().copy() for p in opt.parameters}
    for name in ("moment1", "moment2"):
        for p in getattr(opt, name):
            out[p.name] = p.asnumpy().copy()
    for name in ("beta1_power", "beta2_power", "global_step"):
        out[name] = getattr(opt, name).asnumpy().copy()
    return out


def per_step_reference(ds, steps, seed=1, dropout=None, compiled=True):
    """Losses and logits of each step of the plain loop (jit per batch, or PyNative), and the final state."""
    net, opt, fn = build(seed, dropout)
    step = ms.jit(fn) if compiled else fn
    batches = ds.batches()
    losses, logits = [], []
    for i in range(steps):
        b = batches[i % len(batches)]
        loss, lg = step(ms.Tensor(b[0]), ms.Tensor(b[1]))
        losses.append(loss.asnumpy().copy())
        logits.append(lg.asnumpy().copy())
    return losses, logits, state_of(opt)


@pytest.fixture
def threads_baseline():
    gc.collect()
    n = threading.active_count()
    yield n
    gc.collect()
    deadline = time.time() + 5
    while threading.active_count() > n and time.time() < deadline:
        time.sleep(0.01)
    assert threading.active_count() == n, [t.name for t in threading.enumerate()]


def test_equals_per_step_jit_loop_bitwise_across_epochs(threads_baseline):
    x, y = regression_data(40)
    ds = ArrayDataset([x, y], 8)  # 5 batches per epoch; 4 calls of 3 steps wrap into the third epoch
    net, opt, fn = build()
    sink = ms.data_sink(fn, ds, sink_size=3)
    outs = [sink() for _ in range(4)]
    losses, logits, ref_state = per_step_reference(ds, 12)
    for k, (loss, lg) in enumerate(outs):  # each call returns the last of its steps: fn's structure
        assert isinstance(loss, ms.Tensor) and loss.shape == ()
        np.testing.assert_array_equal(loss.asnumpy(), losses[3 * k + 2])
        np.testing.assert_array_equal(lg.asnumpy(), logits[3 * k + 2])
    got = state_of(opt)
    assert got.keys() == ref_state.keys()
    for name in ref_state:
        np.testing.assert_array_equal(got[name], ref_state[name], err_msg=name)
    assert int(got["global_step"].reshape(-1)[0]) == 12
    assert ds.produced >= 12
    del sink


def test_matches_pynative_within_tolerance(threads_baseline):
    x, y = regression_data(40)
    ds = ArrayDataset([x, y], 8)
    net, opt, fn = build()
    sink = ms.data_sink(fn, ds, sink_size=5)
    results = [sink()[0].asnumpy() for _ in range(2)]
    losses, _, ref_state = per_step_reference(ds, 10, compiled=False)
    np.testing.assert_allclose(results, [losses[4], losses[9]], rtol=1e-5, atol=1e-6)
    got = state_of(opt)
    for name in ref_state:
        np.testing.assert_allclose(got[name], ref_state[name], rtol=1e-4, atol=1e-6, err_msg=name)
    del sink


def test_partial_last_batch_compiles_once_and_is_exact(threads_baseline):
    x, y = regression_data(21)
    ds = ArrayDataset([x, y], 8)  # 8, 8, 5 rows
    net, opt, fn = build()
    step = ms.jit(fn)  # a JitFunction is used as is: its cache is the sink's
    sink = ms.data_sink(step, ds, sink_size=7)
    out = [sink()[0].asnumpy() for _ in range(3)]  # 21 steps: 7 epochs, 14 shape changes
    assert step.trace_count == 2
    assert len(sink._kiln_sink.table) == 2
    losses, _, ref_state = per_step_reference(ds, 21)
    np.testing.assert_array_equal(out, [losses[6], losses[13], losses[20]])
    got = state_of(opt)
    for name in ref_state:
        np.testing.assert_array_equal(got[name], ref_state[name], err_msg=name)
    del sink


def test_dropout_draws_as_per_step(threads_baseline):
    x, y = regression_data(32)
    ds = ArrayDataset([x, y], 8)
    net, opt, fn = build(seed=3, dropout=0.5)
    sink = ms.data_sink(fn, ds, sink_size=4)
    out = [sink()[1].asnumpy() for _ in range(3)]
    _, logits, ref_state = per_step_reference(ds, 12, seed=3, dropout=0.5)
    for k in range(3):
        np.testing.assert_array_equal(out[k], logits[4 * k + 3])
    got = state_of(opt)
    for name in ref_state:
        np.testing.assert_array_equal(got[name], ref_state[name], err_msg=name)
    _, plain, _ = per_step_reference(ds, 4, seed=3)  # same weights, no dropout: other outputs from step 1 on
    assert not np.array_equal(plain[3], logits[3])
    del sink


def test_a_cell_as_the_step(threads_baseline):
    x, y = regression_data(24)
    ds = ArrayDataset([x, y], 8)
    net, opt, fn = build()

    class TrainStep(nn.Cell):
        def construct(self, data, label):
            return fn(data, label)[0]

    sink = ms.data_sink(TrainStep(), ds, sink_size=6)
    loss = sink().asnumpy()
    losses, _, ref_state = per_step_reference(ds, 6)
    np.testing.assert_array_equal(loss, losses[5])
    assert len(sink._kiln_sink.table) == 1  # ran in the C++ loop, not through Python per step
    del sink


def test_training_flag_change_between_calls_uses_the_eval_graph(threads_baseline):
    x, y = regression_data(16)
    ds = ArrayDataset([x, y], 8)
    net, opt, fn = build(seed=4, dropout=0.5)
    sink = ms.data_sink(fn, ds, sink_size=2)
    sink()
    net.set_train(False)
    loss_eval, logits_eval = sink()
    # reference: 2 steps in training, then 2 in eval
    net2, opt2, fn2 = build(seed=4, dropout=0.5)
    step = ms.jit(fn2)
    b = ds.batches()
    for i in range(2):
        step(ms.Tensor(b[i][0]), ms.Tensor(b[i][1]))
    net2.set_train(False)
    for i in range(2):
        ref_loss, ref_logits = step(ms.Tensor(b[i][0]), ms.Tensor(b[i][1]))
    np.testing.assert_array_equal(logits_eval.asnumpy(), ref_logits.asnumpy())
    np.testing.assert_array_equal(loss_eval.asnumpy(), ref_loss.asnumpy())
    del sink


def test_mindspore_docs_example_and_exports(threads_baseline):
    assert ms.data_sink is ms.train.data_sink
    ds = ArrayDataset([np.ones((1,), np.int32), np.ones((1,), np.int32)], 1)

    def func_net(x, y):
        return x + y

    sink_process = ms.data_sink(func_net, ds, sink_size=1)
    outs = [sink_process() for _ in range(2)]
    for out in outs:
        assert out.dtype == ms.int32 and out.asnumpy().tolist() == [2]
    assert sink_process.__name__ == "func_net"
    del sink_process


def test_jit_config_as_mindspore():
    # values from MindSpore 2.10
    assert ms.JitConfig().jit_config_dict == {"jit_level": "", "exc_mode": "auto", "jit_syntax_level": "",
                                              "debug_level": "RELEASE", "infer_boost": "off"}
    assert ms.JitConfig(jit_level="O1", foo=1).jit_config_dict == {
        "foo": 1, "jit_level": "O1", "exc_mode": "auto", "jit_syntax_level": "", "debug_level": "RELEASE",
        "infer_boost": "off", "backend": "ms_backend"}
    assert ms.JitConfig(jit_level="O2").jit_config_dict["backend"] == "GE"
    with pytest.raises(ValueError, match=r"For 'jit_level' must be one of \['O0', 'O1', 'O2'\]"):
        ms.JitConfig(jit_level="O5")
    with pytest.raises(ValueError, match="exc_mode"):
        ms.JitConfig(exc_mode="fast")
    with pytest.raises(ValueError, match="jit_syntax_level"):
        ms.JitConfig(jit_syntax_level="loose")
    with pytest.raises(ValueError, match="debug_level"):
        ms.JitConfig(debug_level="INFO")
    with pytest.raises(ValueError, match="infer_boost"):
        ms.JitConfig(infer_boost="maybe")


def test_graph_mode_context_and_jit_config(threads_baseline):
    JitConfig = ms.JitConfig

    x, y = regression_data(16)
    ds = ArrayDataset([x, y], 8)
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        net, opt, fn = build()
        sink = ms.data_sink(fn, ds, sink_size=4, jit_config=JitConfig(jit_level="O1"))
        loss = sink()[0].asnumpy()
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    losses, _, _ = per_step_reference(ds, 4)
    np.testing.assert_array_equal(loss, losses[3])
    del sink


def test_producer_error_reaches_caller_with_traceback(threads_baseline):
    x, y = regression_data(40)
    ds = ArrayDataset([x, y], 8, fail_at=5)
    net, opt, fn = build()
    sink = ms.data_sink(fn, ds, sink_size=3)
    sink()  # batches 0-2
    with pytest.raises(ValueError, match="broken batch 5") as info:
        sink()  # batches 3, 4 run, then the dataset fails
    names = [f.name for f in traceback.extract_tb(info.value.__traceback__)]
    assert "broken_batch" in names and "_produce" in names
    assert int(opt.global_step.asnumpy().reshape(-1)[0]) == 5  # the steps before the failure ran
    with pytest.raises(RuntimeError, match="shut down by an earlier ValueError"):
        sink()
    del sink


def test_step_error_names_expected_and_received_shapes(threads_baseline):
    x, y = regression_data(24)
    bad = [np.zeros((8, 11), np.float32), np.zeros((8, 1), np.float32)]
    ds = ArrayDataset([x, y], 8, batch_override={2: bad})
    net, opt, fn = build()
    sink = ms.data_sink(fn, ds, sink_size=3)
    with pytest.raises(ValueError) as info:
        sink()
    msg = str(info.value)
    assert "batch 2" in msg and "Float32[8, 11], Float32[8, 1]" in msg
    assert "compiled for Float32[8, 10], Float32[8, 1]" in msg
    assert int(opt.global_step.asnumpy().reshape(-1)[0]) == 2
    del sink


def test_first_batch_error_and_input_signature(threads_baseline):
    x, y = regression_data(16)
    net, opt, fn = build()
    ds = ArrayDataset([x[:, :9], y], 8)  # 9 features: the Dense(10, 16) cannot take them
    sink = ms.data_sink(fn, ds, sink_size=1)
    with pytest.raises(ValueError, match=r"on batch 0 of the dataset \(Float32\[8, 9\], Float32\[8, 1\]\)"):
        sink()
    ds = ArrayDataset([x, y], 8)
    sig = [ms.Tensor(np.zeros((8, 10), np.float32)), ms.Tensor(np.zeros((8, 1), np.float32))]
    ok = ms.data_sink(fn, ds, sink_size=2, input_signature=sig)
    assert ok()[0].shape == ()
    ds64 = ArrayDataset([x.astype(np.float64), y], 8)
    bad_type = ms.data_sink(fn, ds64, sink_size=1, input_signature=sig)
    with pytest.raises(TypeError, match=r"column 0 of batch 0 is Float64\[8, 10\] but input_signature expects "
                                        r"Float32\[8, 10\]"):
        bad_type()
    bad_shape = ms.data_sink(fn, ArrayDataset([x, y], 4), sink_size=1, input_signature=sig)
    with pytest.raises(ValueError, match=r"has shape \[4, 10\] but input_signature expects \[8, 10\]"):
        bad_shape()
    del sink, ok, bad_type, bad_shape


def test_keyboard_interrupt_stops_the_loop(threads_baseline):
    x, y = regression_data(64)
    ds = ArrayDataset([x, y], 8, delay=0.002)  # a slow dataset: the loop also waits for batches
    net, opt, fn = build()
    step = ms.jit(fn)
    b = ds.batches()[0]
    step.graphs or step(ms.Tensor(b[0]), ms.Tensor(b[1]))  # compiled before the timer starts
    sink = ms.data_sink(step, ds, sink_size=100000)
    # interrupt_main does nothing while SIGINT is ignored, as it is when the tests run from a background job of a
    # non-interactive shell (POSIX): give SIGINT Python's handler for this test.
    saved = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.5, _thread.interrupt_main)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            sink()
    finally:
        timer.cancel()
        timer.join()
        signal.signal(signal.SIGINT, saved)
    done = int(opt.global_step.asnumpy().reshape(-1)[0]) - 1  # (one step compiled it)
    assert 0 < done < 100000
    with pytest.raises(RuntimeError, match="KeyboardInterrupt"):
        sink()
    del sink


def wait_until_idle(ds, queue, seconds=20.0):
    """Waits until the queue is at least half full and the dataset has yielded nothing new for 0.2 s (the producer
    is blocked on the full queue)."""
    deadline = time.time() + seconds
    last, since = ds.produced, time.time()
    while time.time() < deadline:
        time.sleep(0.01)
        if ds.produced != last:
            last, since = ds.produced, time.time()
        elif time.time() - since > 0.2 and queue.size >= sink_module.QUEUE_CAPACITY // 2:
            return


def test_prefetch_is_bounded(threads_baseline):
    x, y = regression_data(800)
    ds = ArrayDataset([x, y], 4)  # 200 batches per epoch, far more than the queue holds
    net, opt, fn = build()
    sink = ms.data_sink(fn, ds, sink_size=2)
    state = sink._kiln_sink
    cap = sink_module.QUEUE_CAPACITY
    for consumed in (2, 4, 24):
        while state.consumed < consumed:
            sink()
        wait_until_idle(ds, state.queue)
        held = state.queue.size
        # prefetched: the queue's batches plus at most one in the producer's hands, waiting to be pushed
        assert cap // 2 <= held <= cap
        assert consumed + held <= ds.produced <= consumed + held + 1
    del sink, state


def test_two_sinks_in_two_threads(threads_baseline):
    x, y = regression_data(40)
    x2, y2 = regression_data(40, seed=5)
    ds_a, ds_b = ArrayDataset([x, y], 8), ArrayDataset([x2, y2], 8)
    net_a, opt_a, fn_a = build(seed=1)
    net_b, opt_b, fn_b = build(seed=2)
    sinks = {"a": ms.data_sink(fn_a, ds_a, sink_size=5), "b": ms.data_sink(fn_b, ds_b, sink_size=5)}
    results, errors = {}, []

    def work(name):
        try:
            results[name] = [sinks[name]()[0].asnumpy() for _ in range(4)]
        except BaseException as e:  # noqa: BLE001 (re-checked by `assert not errors` below)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in sinks]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for name, ds, seed, opt in (("a", ds_a, 1, opt_a), ("b", ds_b, 2, opt_b)):
        losses, _, ref_state = per_step_reference(ds, 20, seed=seed)
        np.testing.assert_array_equal(results[name], [losses[i] for i in (4, 9, 14, 19)])
        got = state_of(opt)
        for p in ref_state:
            np.testing.assert_array_equal(got[p], ref_state[p])
    sinks = None  # the last references to the sinks (`del` would hide the closure's use from pyflakes)


def test_one_sink_called_from_two_threads_runs_each_step_once(threads_baseline):
    x, y = regression_data(40)
    ds = ArrayDataset([x, y], 8)
    net, opt, fn = build()
    sink = ms.data_sink(fn, ds, sink_size=3)
    threads = [threading.Thread(target=lambda: [sink() for _ in range(5)]) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    _, _, ref_state = per_step_reference(ds, 30)
    got = state_of(opt)
    for p in ref_state:
        np.testing.assert_array_equal(got[p], ref_state[p])
    sink = None  # the last reference (`del` would hide the lambda's use from pyflakes)


def test_dropped_sink_stops_its_thread(threads_baseline):
    x, y = regression_data(16)
    ds = ArrayDataset([x, y], 8)
    net, opt, fn = build()
    sink = ms.data_sink(fn, ds)
    sink()
    assert threading.active_count() == threads_baseline + 1
    del sink  # the fixture checks that the producer thread is gone


def test_empty_datasets(threads_baseline):
    net, opt, fn = build()
    empty = ArrayDataset([np.zeros((0, 10), np.float32), np.zeros((0, 1), np.float32)], 8)
    with pytest.raises(ValueError, match="the dataset is empty"):
        ms.data_sink(fn, empty)

    class Liar(ArrayDataset):  # claims batches, yields none
        def get_dataset_size(self):
            return 3

        def batches(self):
            return []

    sink = ms.data_sink(fn, Liar([np.zeros((0, 10), np.float32), np.zeros((0, 1), np.float32)], 8))
    with pytest.raises(ValueError, match="yields no batches"):
        sink()
    del sink


def test_dataset_rows_that_are_not_arrays(threads_baseline):
    x, y = regression_data(16)
    big_endian = ArrayDataset([x.astype(">f4"), y], 8)  # converted by kiln.Tensor, values kept
    net, opt, fn = build()
    sink = ms.data_sink(fn, big_endian, sink_size=2)
    loss = sink()[0].asnumpy()
    losses, _, _ = per_step_reference(ArrayDataset([x, y], 8), 2)
    np.testing.assert_array_equal(loss, losses[1])

    class Strings(ArrayDataset):
        def batches(self):
            return [[np.array(["a", "b"]), np.zeros((2, 1), np.float32)]]

    bad = ms.data_sink(fn, Strings([x, y], 8))
    with pytest.raises(TypeError, match="column 0 of the dataset holds ndarray"):
        bad()
    del sink, bad


@pytest.mark.parametrize("size, err, match", [
    (True, TypeError, "type of 'sink_size' should be 'int', but got type 'bool'"),
    (2.0, TypeError, "type of 'sink_size' should be 'int', but got type 'float'"),
    (0, ValueError, "'sink_size' must be positive, but got sink_size 0"),
    (-1, ValueError, "'sink_size' must be positive, but got sink_size -1"),
])
def test_sink_size_checked_as_mindspore(size, err, match):
    ds = ArrayDataset([np.ones((2, 1), np.float32)], 1)
    with pytest.raises(err, match=match):
        ms.data_sink(lambda x: x, ds, sink_size=size)


def test_bad_arguments():
    ds = ArrayDataset([np.ones((2, 1), np.float32)], 1)
    with pytest.raises(TypeError, match="'fn' must be callable, but got int"):
        ms.data_sink(3, ds)
    with pytest.raises(TypeError, match="'dataset' must be a Dataset .* but got list"):
        ms.data_sink(lambda x: x, [1, 2])
    with pytest.raises(TypeError, match="'jit_config' must be None or a JitConfig, but got str"):
        ms.data_sink(lambda x: x, ds, jit_config="O1")
    with pytest.raises(TypeError, match="'input_signature' must be a Tensor or a list/tuple of Tensors"):
        ms.data_sink(lambda x: x, ds, input_signature=[(2, 1)])
    sink = ms.data_sink(lambda x: x * 2, ds)
    with pytest.raises(TypeError, match="takes no arguments .* got 1 positional and 0 keyword"):
        sink(1)
    np.testing.assert_array_equal(sink().asnumpy(), [[2.0]])
    del sink


def test_interpreter_exit_with_a_live_sink_is_clean(tmp_path):
    import os
    import subprocess
    import sys
    from helpers import subprocess_env
    script = tmp_path / "live_sink.py"
    script.write_text(
        "import numpy as np, kiln as ms\n"
        "from sink_helpers import ArrayDataset\n"
        "ds = ArrayDataset([np.ones((64, 3), np.float32)], 4)\n"
        "sink = ms.data_sink(lambda x: x.sum(), ds, sink_size=3)\n"
        "print(sink().asnumpy())\n"
        "GLOBAL = sink  # still alive at exit, its producer blocked on a full queue\n")
    here = os.path.dirname(os.path.abspath(__file__))
    r = subprocess.run([sys.executable, str(script)], env=subprocess_env([here]), capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "12.0"
    assert "Traceback" not in r.stderr and "Exception" not in r.stderr


def test_row_conversion_fast_path():
    """The producer's C++ conversion of NumPy rows: copies, dtypes kept, None for what needs kiln.Tensor."""
    conv = ms._core._tensors_from_arrays
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    ro = a.copy()
    ro.flags.writeable = False
    arrays = [a, ro, np.array([True, False]), np.arange(4, dtype=np.uint16), np.float16([1.5]),
              np.zeros((0, 3), np.int64), np.array(3.0), np.arange(3, dtype=np.int8)]
    out = conv(arrays)
    for arr, t in zip(arrays, out):
        assert t.dtype == ms.Tensor(arr).dtype  # what kiln.Tensor would make
        assert t.shape == arr.shape
        np.testing.assert_array_equal(t.asnumpy(), arr)
    a[0, 0] = 100  # a copy: the tensor keeps the old value
    assert out[0].asnumpy()[0, 0] == 0
    t = ms.Tensor(np.ones(2, np.float32))
    np.testing.assert_array_equal(conv([t])[0].asnumpy(), [1, 1])
    scalar = conv([np.float32(2)])[0]
    assert scalar.dtype == ms.float32 and scalar.shape == () and float(scalar.asnumpy()) == 2.0
    for other in ([a[:, ::2]], [np.arange(3, dtype=">i4")], [[1, 2]], [np.array(["x"])], [np.zeros(2, np.complex64)]):
        assert conv(other) is None  # non-contiguous, big-endian, list, str, complex: kiln.Tensor's job


def test_tensor_from_read_only_arrays():
    """Datasets hand out read-only arrays (np.broadcast_to, frozen buffers): kiln.Tensor copies them (it raised
    RuntimeError std::bad_cast before)."""
    ro = np.arange(6, dtype=np.float32).reshape(2, 3)
    ro.flags.writeable = False
    np.testing.assert_array_equal(ms.Tensor(ro).asnumpy(), ro)
    np.testing.assert_array_equal(ms.Tensor(np.broadcast_to(np.int32(7), (2, 2))).asnumpy(), np.full((2, 2), 7))
    x, y = regression_data(16)
    x.flags.writeable = False
    ds = ArrayDataset([x, y], 8)
    net, opt, fn = build()
    sink = ms.data_sink(fn, ds, sink_size=2)
    loss = sink()[0].asnumpy()
    losses, _, _ = per_step_reference(ds, 2)
    np.testing.assert_array_equal(loss, losses[1])
    del sink
