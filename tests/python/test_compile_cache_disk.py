"""The compile cache on disk (docs/compile_cache.md): set_context(enable_compile_cache=True, compile_cache_path=...)
and MS_COMPILER_CACHE_ENABLE / MS_COMPILER_CACHE_PATH.

Across processes: a second process loads the training step (Adam, Dropout with a seed) instead of tracing it — the
traced function's print runs only while tracing, and trace_count stays 0 — and gives bit-for-bit the losses,
parameters and later random draws of a run with the cache off; two processes writing one entry at once leave a valid
file; an edited source file invalidates. In one process (fresh objects built by the same code stand for a new
process): shape, Kiln version and configuration changes miss; every public layer, loss and optimizer loads; a
damaged file warns and is rewritten; an unwritable directory warns and still runs; graphs reading a global Tensor or
returning an unsupported value stay in memory. Values chosen at run time that change the traced graph (a function
held by a Cell, a global function, a global array made into a constant, a partial's keyword, a primitive's attribute,
a module attribute) key the graph, in one process and across real processes; values the key cannot describe keep the
graph in memory."""
import functools
import glob
import json
import os
import subprocess
import sys
import types
import warnings

import numpy as np
import pytest

import kiln as ms
import kiln.experimental.optim  # AdamW, in the optimizer sweep
from kiln import nn, ops, Tensor, context
from kiln._compiler import disk_cache as _disk_cache, cache_names as _cache_names

from helpers import subprocess_env

SCRIPT = r'''
import sys, json, hashlib
import numpy as np
import kiln as ms
from kiln import nn, ops, Tensor
from kiln._compiler import disk_cache as _disk_cache

mode = sys.argv[1]
if mode != "off":
    ms.set_context(enable_compile_cache=True, compile_cache_path=sys.argv[2])
ms.set_seed(5)


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Dense(6, 16)
        self.drop = nn.Dropout(p=0.25)
        self.fc2 = nn.Dense(16, 4)

    def construct(self, x):
        return self.fc2(self.drop(ops.relu(self.fc1(x))))


model = Net()
model.set_train(True)
loss_fn = nn.CrossEntropyLoss()
optimizer = nn.Adam(model.trainable_params(), 1e-2)


def forward_fn(data, label):
    logits = model(data)
    return loss_fn(logits, label) * SCALE, logits


grad_fn = ms.value_and_grad(forward_fn, None, optimizer.parameters, has_aux=True)


@ms.jit
def train_step(data, label):
    sys.stdout.write("TRACED train_step\n")  # trace time only (print() would print at every run)
    (loss, logits), grads = grad_fn(data, label)
    optimizer(grads)
    return {"loss": loss, "extra": (logits.max(), [7, None, 2.5])}


rng = np.random.default_rng(0)
x = Tensor(rng.standard_normal((BATCH, 6)).astype(np.float32))
y = Tensor(rng.integers(0, 4, BATCH).astype(np.int32))
out = []
for _ in range(5):
    r = train_step(x, y)
    assert r["extra"][1] == [7, None, 2.5]
    out.append(r["loss"].asnumpy().tobytes().hex() + "/" + r["extra"][0].asnumpy().tobytes().hex())
params = hashlib.sha256(b"".join(p.asnumpy().tobytes() for p in optimizer.get_parameters())).hexdigest()
later = ops.rand(3).asnumpy().tobytes().hex()  # the random streams after the graph's are the same ones
print("RESULT " + json.dumps({"out": out, "params": params, "later": later, "traces": train_step.trace_count,
                              "loads": train_step.disk_loads, "skipped": train_step.disk_skipped}))
'''


def _write_script(tmp_path, scale="1.0", batch=8):
    path = tmp_path / "train_script.py"
    path.write_text(SCRIPT.replace("SCALE", scale).replace("BATCH", str(batch)))
    return str(path)


def _start(script, mode, cache):
    return subprocess.Popen([sys.executable, script, mode, cache], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=subprocess_env(), text=True)


def _result(proc):
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    line = [ln for ln in out.splitlines() if ln.startswith("RESULT ")][-1]
    r = json.loads(line[len("RESULT "):])
    r["traced_print"] = out.count("TRACED train_step")
    r["stderr"] = err
    return r


def _files(cache):
    return sorted(glob.glob(os.path.join(cache, "rank_0", "graph_cache", "*.kgc")))


def test_second_process_loads_and_matches_cache_off(tmp_path):
    script = _write_script(tmp_path)
    cache = str(tmp_path / "cache")
    off = _start(script, "off", cache)
    # Two cold processes write the same entry at the same time.
    cold = [_start(script, "on", cache) for _ in range(2)]
    r_off, r_cold = _result(off), [_result(p) for p in cold]
    assert len(_files(cache)) == 1
    assert not [f for f in os.listdir(os.path.dirname(_files(cache)[0])) if f.startswith(".tmp")]
    r_warm = _result(_start(script, "on", cache))
    assert r_off["traces"] == 1 and r_off["traced_print"] == 1 and r_off["loads"] == 0
    for r in r_cold:  # (the later of the two may already find the other's file)
        assert r["traces"] + r["loads"] == 1 and r["skipped"] is None
    assert r_cold[0]["traces"] + r_cold[1]["traces"] >= 1
    assert r_warm["traces"] == 0 and r_warm["traced_print"] == 0 and r_warm["loads"] == 1
    for r in r_cold + [r_warm]:  # bit for bit: five steps' losses, final parameters, the next random draw
        assert r["out"] == r_off["out"]
        assert r["params"] == r_off["params"]
        assert r["later"] == r_off["later"]
    assert len(set(r_off["out"])) == 5  # the steps really train (the losses change)


def test_edited_source_invalidates(tmp_path):
    cache = str(tmp_path / "cache")
    first = _result(_start(_write_script(tmp_path), "on", cache))
    assert first["traces"] == 1
    (path,) = _files(cache)
    before = open(path, "rb").read()
    # A comment added at the end of the file: the code (in the key) is the same, the source file's hash (in the
    # header) is not: traced again, and the same entry is rewritten.
    script = _write_script(tmp_path)
    with open(script, "a") as f:
        f.write("# an edit that changes no code\n")
    commented = _result(_start(script, "on", cache))
    assert commented["traces"] == 1 and commented["loads"] == 0 and commented["out"] == first["out"]
    assert _files(cache) == [path] and open(path, "rb").read() != before
    # The traced forward function's code changes (a factor): its code digest is in the key, a new entry.
    edited = _result(_start(_write_script(tmp_path, scale="2.0"), "on", cache))
    assert edited["traces"] == 1 and edited["loads"] == 0 and edited["out"] != first["out"]
    assert len(_files(cache)) == 2


# ------------------------------------------------------------------------------------------------- in one process
def _make_step(hidden=8, train=True):
    """The same program built afresh (new Cells, new Parameters, new jit function) — what a new process sees."""
    ms.set_seed(3)
    net = nn.SequentialCell([nn.Dense(4, hidden), nn.ReLU(), nn.Dense(hidden, 2)])
    net.set_train(train)
    opt = nn.Momentum(net.trainable_params(), 0.1, 0.9)
    loss_fn = nn.MSELoss()

    def fwd(x, y):
        return loss_fn(net(x), y)

    grad = ms.value_and_grad(fwd, None, opt.parameters)

    @ms.jit
    def step(x, y):
        loss, g = grad(x, y)
        opt(g)
        return loss

    return step, net


def _data(batch=5):
    rng = np.random.default_rng(1)
    return (Tensor(rng.standard_normal((batch, 4)).astype(np.float32)),
            Tensor(rng.standard_normal((batch, 2)).astype(np.float32)))


def _losses(step, batch=5, n=3):
    x, y = _data(batch)
    return [step(x, y).asnumpy().tobytes() for _ in range(n)]


def test_fresh_objects_load_and_match(cache_dir):
    step, _ = _make_step()
    want = _losses(step)
    assert step.trace_count == 1 and len(_files(cache_dir)) == 1
    step2, _ = _make_step()
    assert _losses(step2) == want
    assert step2.trace_count == 0 and step2.disk_loads == 1


def test_configuration_changes_miss(cache_dir):
    step, _ = _make_step()
    _losses(step)
    wide, _ = _make_step(hidden=9)  # other parameter shapes
    _losses(wide)
    assert wide.trace_count == 1
    evaluating, _ = _make_step(train=False)  # other training flags
    _losses(evaluating)
    assert evaluating.trace_count == 1
    batch, _ = _make_step()
    _losses(batch, batch=6)  # another input shape
    assert batch.trace_count == 1
    assert len(_files(cache_dir)) == 4


def test_kiln_version_invalidates(cache_dir, monkeypatch):
    step, _ = _make_step()
    want = _losses(step)
    monkeypatch.setattr(ms, "__version__", "0.0.test")
    step2, _ = _make_step()
    assert _losses(step2) == want
    assert step2.trace_count == 1 and len(_files(cache_dir)) == 1  # the same entry, rewritten
    step3, _ = _make_step()
    _losses(step3)
    assert step3.trace_count == 0


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "empty"])
def test_damaged_file_warns_and_is_rewritten(cache_dir, damage):
    step, _ = _make_step()
    want = _losses(step)
    (path,) = _files(cache_dir)
    data = open(path, "rb").read()
    if damage == "truncate":
        data = data[:len(data) // 2]
    elif damage == "flip":
        data = data[:200] + bytes([data[200] ^ 0x40]) + data[201:]
    elif damage == "garbage":
        data = os.urandom(len(data))
    else:
        data = b""
    open(path, "wb").write(data)
    step2, _ = _make_step()
    with pytest.warns(RuntimeWarning, match="damaged cache file"):
        got = _losses(step2)
    assert got == want and step2.trace_count == 1
    step3, _ = _make_step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _losses(step3) == want
    assert step3.trace_count == 0  # the rewritten file loads


def test_valid_checksum_but_bad_graph_is_refused(cache_dir):
    # A file whose checksum is right but whose graph names an unknown op (as if written by another Kiln).
    step, _ = _make_step()
    want = _losses(step)
    (path,) = _files(cache_dir)
    header, graph_bytes = _disk_cache._read(path)
    graph_bytes = graph_bytes.replace(b"Momentum", b"Momentun")
    import hashlib
    import struct
    hb = json.dumps(header).encode()
    body = _disk_cache._MAGIC + struct.pack("<Q", len(hb)) + hb + graph_bytes
    open(path, "wb").write(body + hashlib.sha256(body).digest())
    step2, _ = _make_step()
    with pytest.warns(RuntimeWarning, match="unknown op 'ApplyMomentun'|unknown op"):
        assert _losses(step2) == want
    assert step2.trace_count == 1


def test_unwritable_directory_warns_and_runs(tmp_path):
    blocker = tmp_path / "not_a_dir"
    blocker.write_text("x")
    ms.set_context(enable_compile_cache=True, compile_cache_path=str(blocker))
    try:
        step, _ = _make_step()
        with pytest.warns(RuntimeWarning, match="cannot write"):
            got = _losses(step)
    finally:
        ms.set_context(enable_compile_cache=False, compile_cache_path=".")
    ms.set_context(enable_compile_cache=False)
    step_off, _ = _make_step()
    assert got == _losses(step_off)


GLOBAL_SHIFT = Tensor(np.array([0.5, -0.5], np.float32))


def test_unnameable_capture_stays_in_memory(cache_dir):
    net = nn.Dense(2, 2)

    @ms.jit
    def f(x):
        return net(x) + GLOBAL_SHIFT  # a global plain Tensor: no name a new process could find again

    x = Tensor(np.ones((3, 2), np.float32))
    with pytest.warns(RuntimeWarning, match="stays in memory only"):
        a = f(x).asnumpy()
    np.testing.assert_array_equal(a, f(x).asnumpy())
    assert "neither a Parameter" in f.disk_skipped
    assert _files(cache_dir) == []


def test_unsupported_output_stays_in_memory(cache_dir):
    @ms.jit
    def f(x):
        return x * 2, object  # a Python class in the outputs cannot be stored as data

    with pytest.warns(RuntimeWarning, match="stays in memory only"):
        out, cls = f(Tensor(np.ones(2, np.float32)))
    assert cls is object and _files(cache_dir) == []


def test_environment_variables(tmp_path, monkeypatch):
    monkeypatch.setenv("MS_COMPILER_CACHE_ENABLE", "1")
    monkeypatch.setenv("MS_COMPILER_CACHE_PATH", str(tmp_path))
    monkeypatch.setenv("RANK_ID", "3")
    context._explicit.discard("enable_compile_cache")
    context._explicit.discard("compile_cache_path")
    assert _disk_cache.cache_dir() == os.path.join(str(tmp_path), "rank_3", "graph_cache")
    step, _ = _make_step()
    _losses(step)
    assert len(glob.glob(os.path.join(str(tmp_path), "rank_3", "graph_cache", "*.kgc"))) == 1
    # set_context wins over the variables (MindSpore's precedence).
    ms.set_context(enable_compile_cache=False)
    try:
        assert _disk_cache.cache_dir() is None
    finally:
        context._explicit.discard("enable_compile_cache")
    monkeypatch.setenv("MS_COMPILER_CACHE_ENABLE", "0")
    assert _disk_cache.cache_dir() is None


def test_graph_mode_cell(cache_dir):
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        x = Tensor(np.arange(12, dtype=np.float32).reshape(3, 4))
        ms.set_seed(2)
        net = nn.SequentialCell([nn.Dense(4, 3), nn.Tanh()])
        want = net(x).asnumpy()
        ms.set_seed(2)
        net2 = nn.SequentialCell([nn.Dense(4, 3), nn.Tanh()])
        got = net2(x).asnumpy()
        first, second = net._compiled_construct(), net2._compiled_construct()
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_array_equal(got, want)
    assert first.trace_count == 1 and second.trace_count == 0 and second.disk_loads == 1


# ------------------------------------------------------------------------------ every layer, loss and optimizer
def test_every_layer_and_loss_loads_from_disk(cache_dir):
    """Each public layer/loss case of test_compile_cache.py, in both training modes, compiled by one instance and
    loaded by a fresh one: the graph is written (every capture named), loaded without a trace, and gives the same
    bits (Dropout: the same draws after the same set_seed)."""
    from test_compile_cache import LAYERS, B1, _outputs
    problems = {}
    for name, specs in LAYERS.items():
        for i, (make, inputs) in enumerate(specs):
            for training in (False, True):
                outs, jfs = [], []
                for _ in range(2):
                    ms.set_seed(1)
                    cell = make().set_train(training)
                    ms.set_context(mode=ms.GRAPH_MODE)
                    try:
                        out = cell(*inputs(B1))
                    finally:
                        ms.set_context(mode=ms.PYNATIVE_MODE)
                    jfs.append(cell._compiled_construct())
                    outs.append(_outputs(out))
                case = f"{name}[{i}] training={training}"
                if jfs[0].disk_skipped:
                    problems[case] = jfs[0].disk_skipped
                elif jfs[1].trace_count != 0 or jfs[1].disk_loads != 1:
                    problems[case] = "not loaded"
                elif not all(np.array_equal(a, b, equal_nan=True) for a, b in zip(*outs)):
                    problems[case] = "different results"
    assert not problems


@pytest.mark.parametrize("name", ["Adam", "AdamWeightDecay", "SGD", "Momentum", "RMSProp", "Adagrad", "Lamb",
                                  "AdamW", "Adam (experimental)", "ASGD", "NAdam", "Rprop"])
def test_every_optimizer_step_loads_from_disk(cache_dir, name):
    """A training step with each optimizer (and the learning-rate schedules they take): the loaded step continues
    exactly as the compiled one, state (moments, global_step) re-bound to the fresh optimizer."""
    from test_compile_cache import OPTIMIZERS

    def build():
        ms.set_seed(3)
        net = nn.Dense(5, 2)
        opt = OPTIMIZERS[name](net.trainable_params())
        loss_fn = nn.MSELoss()
        grad_fn = ms.value_and_grad(lambda x, y: loss_fn(net(x), y), None, opt.parameters)

        @ms.jit
        def step(x, y):
            loss, grads = grad_fn(x, y)
            opt(grads)
            return loss
        return net, opt, step

    rng = np.random.default_rng(0)
    x = Tensor(rng.standard_normal((4, 5)).astype(np.float32))
    y = Tensor(rng.standard_normal((4, 2)).astype(np.float32))
    runs = []
    for _ in range(2):
        net, opt, step = build()
        losses = [step(x, y).asnumpy().tobytes() for _ in range(3)]
        state = [p.asnumpy().tobytes() for p in opt.get_parameters()] + [net.weight.asnumpy().tobytes()]
        runs.append((losses, state, step))
    assert runs[0][2].disk_skipped is None and runs[0][2].trace_count == 1
    assert runs[1][2].trace_count == 0 and runs[1][2].disk_loads == 1
    assert runs[0][0] == runs[1][0] and runs[0][1] == runs[1][1]


class _Config:
    def __init__(self, shift):
        self.shift = shift


def test_plain_values_the_function_reads_key_the_graph(cache_dir):
    """A factor in a closure and an attribute of a config object are fixed while tracing: other values must never
    load a graph traced with the first ones."""
    def make(scale, cfg):
        ms.set_seed(4)
        net = nn.Dense(3, 2)

        @ms.jit
        def f(x):
            return net(x) * scale + cfg.shift
        return f

    x = Tensor(np.ones((2, 3), np.float32))
    base = make(2.0, _Config(1.0))
    want = base(x).asnumpy()
    same = make(2.0, _Config(1.0))
    np.testing.assert_array_equal(same(x).asnumpy(), want)
    assert same.trace_count == 0
    other_scale = make(3.0, _Config(1.0))
    other_cfg = make(2.0, _Config(5.0))
    np.testing.assert_allclose(other_scale(x).asnumpy(), (want - 1.0) * 1.5 + 1.0, rtol=1e-6)
    np.testing.assert_allclose(other_cfg(x).asnumpy(), want + 4.0, rtol=1e-6)
    assert other_scale.trace_count == 1 and other_cfg.trace_count == 1


class _Shifted(nn.Cell):
    def __init__(self, shift):
        super().__init__()
        self.dense = nn.Dense(3, 3)
        self.shift = Tensor(np.asarray(shift, np.float32))  # a plain Tensor attribute: a capture named by path

    def construct(self, x):
        return self.dense(x) + self.shift


def test_tensor_attribute_is_rebound_and_checked(cache_dir):
    x = Tensor(np.ones((2, 3), np.float32))
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        ms.set_seed(6)
        a = _Shifted([1.0, 2.0, 3.0])
        want = a(x).asnumpy()
        ms.set_seed(6)
        b = _Shifted([10.0, 20.0, 30.0])  # same shape, other values: loaded, reads b's own tensor
        got = b(x).asnumpy()
        ms.set_seed(6)
        c = _Shifted([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])  # another shape: the file does not fit, compiled again
        got_c = c(x).asnumpy()
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_allclose(got, want + np.array([9.0, 18.0, 27.0], np.float32), rtol=1e-6)
    assert b._compiled_construct().trace_count == 0
    np.testing.assert_allclose(got_c, want - np.array([1.0, 2.0, 3.0], np.float32) + c.shift.asnumpy(), rtol=1e-6)
    assert c._compiled_construct().trace_count == 1


def test_functions_sharing_a_name_do_not_share_a_file(cache_dir):
    x = Tensor(np.arange(3, dtype=np.float32))
    double = ms.jit(lambda t: t * 2)
    plus_one = ms.jit(lambda t: t + 1)  # the same qualified name '<lambda>' in the same file
    np.testing.assert_array_equal(double(x).asnumpy(), [0, 2, 4])
    np.testing.assert_array_equal(plus_one(x).asnumpy(), [1, 2, 3])
    assert plus_one.trace_count == 1 and len(_files(cache_dir)) == 2


# ------------------------------------------------------- values chosen at run time that change the traced graph
# Each case: a program built with one configuration writes its graph; the same program built with another
# configuration (what a second process with other command-line arguments sees) must trace again and give its own
# numbers; built again with the second configuration, it loads.
_ACTS = {"relu": ops.relu, "sigmoid": ops.sigmoid, "tanh": ops.tanh}
_ACT_REF = {"relu": lambda v: np.maximum(v, 0), "sigmoid": lambda v: 1 / (1 + np.exp(-v)), "tanh": np.tanh}


class _ActNet(nn.Cell):
    def __init__(self, act):
        super().__init__()
        self.fc = nn.Dense(2, 2, weight_init="ones", bias_init="zeros")
        self.act = _ACTS[act]  # a function chosen at run time, held by the Cell

    def construct(self, x):
        return self.act(self.fc(x))


def _graph_call(cell, *args):
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        out = cell(*args).asnumpy()
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    return out, cell._compiled_construct()


def test_function_held_by_a_cell_keys_the_graph(cache_dir):
    x = Tensor(np.array([[1.0, -3.0]], np.float32))
    for act, traces in (("relu", 1), ("sigmoid", 1), ("tanh", 1), ("sigmoid", 0)):
        got, jf = _graph_call(_ActNet(act), x)
        np.testing.assert_allclose(got, _ACT_REF[act](np.array([[-2.0, -2.0]])), rtol=1e-6)
        assert jf.trace_count == traces and jf.disk_loads == 1 - traces, act
    assert len(_files(cache_dir)) == 3


_PICKED = None  # a global function chosen at run time (set by the tests below)
_FACTOR = 1.0


def _helper(t):
    return t * _FACTOR  # a global read by a function the traced code calls


def test_global_function_and_helper_globals_key_the_graph(cache_dir):
    global _PICKED, _FACTOR
    x = Tensor(np.array([3.0], np.float32))
    try:
        runs = []
        for picked, factor in (("sq", 1.0), ("neg", 1.0), ("neg", 4.0), ("neg", 4.0)):
            _PICKED = {"sq": lambda t: t * t, "neg": lambda t: -t}[picked]
            _FACTOR = factor
            f = ms.jit(lambda t: _helper(_PICKED(t)) + 1)
            runs.append((f(x).asnumpy()[0], f.trace_count))
    finally:
        _PICKED, _FACTOR = None, 1.0
    assert runs == [(10.0, 1), (-2.0, 1), (-11.0, 1), (-11.0, 0)]


_MEAN = np.zeros(2, np.float32)


class _Centered(nn.Cell):
    def construct(self, x):
        return x - Tensor(_MEAN)  # a constant made while tracing from a global array


def test_global_array_read_while_tracing_keys_the_graph(cache_dir):
    global _MEAN
    x = Tensor(np.array([1.0, 2.0], np.float32))
    try:
        runs = []
        for v in (1.0, 5.0, 5.0):
            _MEAN = np.array([v, -v], np.float32)
            got, jf = _graph_call(_Centered(), x)
            runs.append((got.tolist(), jf.trace_count))
        _MEAN = np.array([5.0, -5.0], np.float64)  # same values, another dtype: another graph
        got, jf = _graph_call(_Centered(), x)
        assert got.tolist() == [-4.0, 7.0] and jf.trace_count == 1
    finally:
        _MEAN = np.zeros(2, np.float32)
    assert runs == [([0.0, 3.0], 1), ([-4.0, 7.0], 1), ([-4.0, 7.0], 0)]


def _lrelu(x, alpha):
    return ops.maximum(x, x * alpha)


class _PartialNet(nn.Cell):
    def __init__(self, alpha):
        super().__init__()
        self.act = functools.partial(_lrelu, alpha=alpha)

    def construct(self, x):
        return self.act(x)


def test_partial_keyword_keys_the_graph(cache_dir):
    x = Tensor(np.array([-1.0, 2.0], np.float32))
    runs = []
    for alpha in (0.1, 0.5, 0.5):
        got, jf = _graph_call(_PartialNet(alpha), x)
        np.testing.assert_allclose(got, np.maximum([-1.0, 2.0], np.array([-1.0, 2.0]) * alpha), rtol=1e-6)
        runs.append(jf.trace_count)
    assert runs == [1, 1, 0]


class _Reduce(nn.Cell):
    def __init__(self, keep):
        super().__init__()
        self.sum = ops.ReduceSum(keep_dims=keep)  # a primitive's attribute

    def construct(self, x):
        return self.sum(x, 1)


def test_primitive_attribute_and_module_attribute_key_the_graph(cache_dir, monkeypatch):
    x = Tensor(np.ones((2, 3), np.float32))
    assert _graph_call(_Reduce(True), x)[0].shape == (2, 1)
    out, jf = _graph_call(_Reduce(False), x)
    assert out.shape == (2,) and jf.trace_count == 1
    cfg = types.ModuleType("run_config")  # a configuration module: `cfg.scale` read while tracing
    monkeypatch.setitem(globals(), "_CFG", cfg)
    runs = []
    for scale in (2.0, 3.0, 3.0):
        cfg.scale = scale
        f = ms.jit(lambda t: t * _CFG.scale)  # noqa: F821 (set above)
        runs.append((f(x).asnumpy()[0, 0], f.trace_count))
    assert runs == [(2.0, 1), (3.0, 1), (3.0, 0)]


class _Noisy(nn.Cell):
    def __init__(self):
        super().__init__()
        self.rng = np.random.default_rng(0)  # a generator: its state cannot be fingerprinted

    def construct(self, x):
        return x + Tensor(self.rng.standard_normal(2).astype(np.float32))


def test_unfingerprintable_values_stay_in_memory(cache_dir, monkeypatch):
    x = Tensor(np.zeros(2, np.float32))
    with pytest.warns(RuntimeWarning, match="stays in memory only"):
        got, jf = _graph_call(_Noisy(), x)
    np.testing.assert_allclose(got, np.random.default_rng(0).standard_normal(2).astype(np.float32))
    assert "Generator" in jf.disk_skipped and _files(cache_dir) == []
    # An array above the size the key hashes: memory only too.
    monkeypatch.setattr(_cache_names, "_MAX_ARRAY_BYTES", 4)
    with pytest.warns(RuntimeWarning, match="stays in memory only"):
        got, jf = _graph_call(_Centered(), x)
    assert "larger than" in jf.disk_skipped and _files(cache_dir) == []
    np.testing.assert_array_equal(got, [0.0, 0.0])


RUN_TIME_SCRIPT = r'''
import sys, json, functools
import numpy as np
import kiln as ms
from kiln import nn, ops, Tensor
ms.set_context(enable_compile_cache=True, compile_cache_path=sys.argv[2], mode=ms.GRAPH_MODE)
v = float(sys.argv[1])
MEAN = np.array([v, v], np.float32)
pick = {1.0: ops.relu, 5.0: ops.sigmoid}[v]
def lrelu(x, alpha): return ops.maximum(x, x * alpha)
class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.act = functools.partial(lrelu, alpha=v / 10)
        self.out = {1.0: ops.tanh, 5.0: ops.exp}[v]
    def construct(self, x):
        return self.out(pick(self.act(x) - Tensor(MEAN)))
net = Net()
x = np.array([-1.0, 2.0], np.float32)
got = net(Tensor(x)).asnumpy()
jf = net._compiled_construct()
print("RESULT " + json.dumps({"got": got.tolist(), "traces": jf.trace_count, "loads": jf.disk_loads}))
'''


def test_run_time_choices_across_processes(tmp_path):
    """The tester's programs in real processes: a function picked from argv (global and Cell attribute), a global
    array made into a constant, a partial's keyword; the second configuration compiles and is right, and loads the
    third time."""
    script = tmp_path / "run_time.py"
    script.write_text(RUN_TIME_SCRIPT)
    cache = str(tmp_path / "cache")

    def run(v):
        p = subprocess.run([sys.executable, str(script), v, cache], capture_output=True, text=True,
                           env=subprocess_env(), timeout=120)
        assert p.returncode == 0, p.stderr
        return json.loads([ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")][-1][7:])

    x = np.array([-1.0, 2.0])
    ref = {"1": np.tanh(np.maximum(np.maximum(x, x * 0.1) - 1.0, 0)),
           "5": np.exp(1 / (1 + np.exp(-(np.maximum(x, x * 0.5) - 5.0))))}
    for v, traces in (("1", 1), ("5", 1), ("5", 0)):
        r = run(v)
        np.testing.assert_allclose(r["got"], ref[v], rtol=1e-5)
        assert (r["traces"], r["loads"]) == (traces, 1 - traces), v


class _SlotConfig:
    __slots__ = ("shift",)

    def __init__(self, shift):
        self.shift = shift


def test_slots_object_and_cycles_are_fingerprinted(cache_dir):
    """A config object with __slots__ (no __dict__) is walked by slot; a cyclic structure terminates."""
    x = Tensor(np.ones(2, np.float32))
    runs = []
    for shift in (1.0, 2.0, 2.0):
        cfg = _SlotConfig(shift)
        loop = {"cfg": cfg}
        loop["self"] = loop  # a cycle
        f = ms.jit(lambda t: t + loop["cfg"].shift)
        runs.append((f(x).asnumpy()[0], f.trace_count, f.disk_skipped))
    assert runs == [(2.0, 1, None), (3.0, 1, None), (3.0, 0, None)]
