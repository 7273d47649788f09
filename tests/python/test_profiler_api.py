"""mindspore.profiler on Kiln: Profiler(...) ... analyse(), the trace it writes, schedule/step, mstx, threads."""
import csv
import glob
import json
import os
import re
import threading

import numpy as np
import pytest

import kiln
from kiln import nn, ops
from kiln.profiler import (Profiler, ProfilerAction, ProfilerActivity, ProfilerLevel, mstx, schedule,
                           tensorboard_trace_handler)
from kiln.profiler import _trace


def _read(folder):
    files = glob.glob(os.path.join(folder, "*_ascend_ms", "FRAMEWORK", "cpu_op_type_info_0.csv"))
    assert len(files) == 1, files
    with open(files[0]) as fh:
        return list(csv.DictReader(fh))


def test_profiler_counts_the_ops_run_while_started(tmp_path):
    assert kiln.Profiler is Profiler
    x = kiln.Tensor(np.ones((4, 8), np.float32))
    net = nn.Dense(8, 3)
    net(x)  # before the profiler: not counted
    p = Profiler(output_path=str(tmp_path))
    for _ in range(3):
        ops.relu(net(x))
        p.step()
    p.stop()
    net(x)  # after stop: not counted
    p.start()
    ops.relu(x)
    p.analyse()
    rows = _read(str(tmp_path))
    assert list(rows[0]) == ["op_type", "type_occurrences", "execution_frequency(per-step)", "total_compute_time",
                             "avg_time(ms)", "percent"]
    by = {r["op_type"]: r for r in rows}
    assert int(by["ReLU"]["type_occurrences"]) == 4  # 3 + 1 after start()
    # per step: the occurrences over the steps recorded (0, 1, 2 and the step after the last step(): 4)
    assert float(by["ReLU"]["execution_frequency(per-step)"]) == pytest.approx(1.0, rel=1e-5)
    dense_ops = [r for r in rows if r["op_type"] in ("MatMul", "MatMulBiasAct", "BiasAdd", "Add")]
    assert dense_ops and all(int(r["type_occurrences"]) % 3 == 0 for r in dense_ops)
    assert sum(float(r["percent"]) for r in rows) == pytest.approx(1.0, abs=1e-4)
    for r in rows:
        assert float(r["avg_time(ms)"]) == pytest.approx(float(r["total_compute_time"]) / int(r["type_occurrences"]),
                                                          rel=1e-3)
    totals = [float(r["total_compute_time"]) for r in rows]
    assert totals == sorted(totals, reverse=True)
    assert not kiln.runtime.is_profiling()  # the timers are off again
    with pytest.raises(RuntimeError, match="already been analysed"):
        p.start()


def test_profiler_graph_mode_and_options(tmp_path, caplog):
    f = kiln.jit(lambda a: ops.exp(a) * 2)
    x = kiln.Tensor(np.ones((3, 3), np.float32))
    f(x)
    p = Profiler(output_path=str(tmp_path), start_profile=False, profile_memory=True, nonsense_option=1)
    f(x)  # not started yet
    assert p.op_stats() == []
    p.start()
    f(x)
    f(x)
    stats = p.op_stats()
    assert stats and sum(r["type_occurrences"] for r in stats) >= 2
    p.analyse()
    assert _read(str(tmp_path))
    with pytest.raises(TypeError, match="'output_path' must be a str"):
        Profiler(output_path=3)
    with pytest.raises(TypeError, match="'start_profile' must be a bool"):
        Profiler(start_profile="yes")
    afile = tmp_path / "a_file"
    afile.write_text("x")
    with pytest.raises(ValueError, match="'output_path' must be a folder.*is a file"):
        Profiler(output_path=str(afile))


def test_profiler_nests_with_runtime_profile(tmp_path):
    x = kiln.Tensor(np.ones((2, 2), np.float32))
    p = Profiler(output_path=str(tmp_path))
    with kiln.runtime.profile() as prof:
        ops.sigmoid(x)
    ops.sigmoid(x)  # the Profiler is still on after the inner block ends
    assert kiln.runtime.is_profiling()
    p.stop()
    assert not kiln.runtime.is_profiling()
    assert {r["op_type"]: r["type_occurrences"] for r in p.op_stats()}["Sigmoid"] == 2
    assert prof.stats()[0]["op"] == "Sigmoid"


# ------------------------------------------------------------------------------------------- the trace file


def _trace_of(folder):
    """The one trace_view.json under folder, checked against the trace-event format's rules."""
    files = glob.glob(os.path.join(folder, "*_ascend_ms", "ASCEND_PROFILER_OUTPUT", "trace_view.json"))
    assert len(files) == 1, files
    assert re.fullmatch(r".+_\d+_\d{17}(_\d+)?_ascend_ms", os.path.basename(os.path.dirname(os.path.dirname(
        files[0]))))
    with open(files[0]) as fh:
        doc = json.load(fh)
    events = doc["traceEvents"]
    _validate(events)
    return events


def _validate(events):
    """Chrome trace-event rules: name/ph/ts/pid/tid on every event; "X" has dur >= 0; the "X" events of each
    (pid, tid) nest (each starts after its parent's start and ends before its parent's end) or follow each other."""
    by_thread = {}
    for e in events:
        for key in ("name", "ph", "ts", "pid", "tid"):
            assert key in e, (key, e)
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int)
        assert e["ph"] in ("X", "i", "M"), e
        if e["ph"] == "X":
            assert isinstance(e["dur"], (int, float)) and e["dur"] >= 0, e
            by_thread.setdefault((e["pid"], e["tid"]), []).append(e)
        if e["ph"] == "i":
            assert e.get("s") in ("t", "p", "g")
    eps = 2e-3  # µs: the 3 decimals the file keeps
    for evs in by_thread.values():
        evs.sort(key=lambda e: (e["ts"], -e["dur"]))
        stack = []
        for e in evs:
            while stack and stack[-1] <= e["ts"] + eps:
                stack.pop()
            end = e["ts"] + e["dur"]
            assert not stack or end <= stack[-1] + eps, ("events cross", e)
            stack.append(end)


def _train_step():
    net = nn.Dense(4, 3)
    opt = nn.SGD(net.trainable_params(), 0.1)
    loss_fn = nn.MSELoss()
    grad = kiln.value_and_grad(lambda a, b: loss_fn(net(a), b), None, opt.parameters)
    x = kiln.Tensor(np.ones((2, 4), np.float32))
    y = kiln.Tensor(np.zeros((2, 3), np.float32))

    def step():
        loss, g = grad(x, y)
        opt(g)
        return loss
    return step


def test_trace_pynative_training_step(tmp_path):
    step = _train_step()
    with Profiler(output_path=str(tmp_path), profiler_level=ProfilerLevel.Level1,
                  activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(2):
            step()
            prof.step()
    prof.analyse()
    events = _trace_of(str(tmp_path))
    cells = {e["name"] for e in events if e.get("cat") == "cell"}
    assert {"Dense", "MSELoss", "SGD"} <= cells
    kernels = [e for e in events if e.get("cat") == "kernel"]
    assert {"BatchMatMul", "SGD"} <= {e["name"] for e in kernels} or {"MatMul", "SGD"} <= {e["name"] for e in kernels}
    assert {e["args"]["step"] for e in kernels} == {0, 1}
    steps = [e["name"] for e in events if e.get("cat") == "step"]
    assert steps[:2] == ["ProfilerStep#0", "ProfilerStep#1"]
    names = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert any(n.startswith("MainThread") for n in names)
    per_step = list(csv.DictReader(open(glob.glob(str(tmp_path / "*_ascend_ms" / "FRAMEWORK" /
                                                          "kiln_step_op_info_0.csv"))[0])))
    assert {r["step"] for r in per_step} >= {"0", "1"}
    for st in ("0", "1"):
        assert sum(float(r["percent"]) for r in per_step if r["step"] == st) == pytest.approx(1.0, abs=1e-4)
    assert not _trace.hooks_installed() and not kiln.runtime.is_profiling()


def test_trace_graph_mode_training_step(tmp_path):
    net = nn.Dense(4, 3)
    opt = nn.SGD(net.trainable_params(), 0.1)
    loss_fn = nn.MSELoss()
    grad = kiln.value_and_grad(lambda a, b: loss_fn(net(a), b), None, opt.parameters)

    @kiln.jit
    def train(a, b):
        loss, g = grad(a, b)
        opt(g)
        return loss
    x = kiln.Tensor(np.ones((2, 4), np.float32))
    y = kiln.Tensor(np.zeros((2, 3), np.float32))
    train(x, y)  # compiled before profiling
    with Profiler(output_path=str(tmp_path)) as prof:
        train(x, y)
    prof.analyse()
    kernels = [e for e in _trace_of(str(tmp_path)) if e.get("cat") == "kernel"]
    graph_ops = {e["name"] for e in kernels if e["args"]["mode"] == "Graph"}
    assert "SGD" in graph_ops and graph_ops & {"MatMul", "BatchMatMul", "Dense", "MatMulBiasAct"}, graph_ops


# MindSpore 2.10's actions for schedule(wait=1, warmup=1, active=2, repeat=2, skip_first=1), steps 0..11
_MS_ACTIONS = ["NONE", "NONE", "WARM_UP", "RECORD", "RECORD_AND_SAVE", "NONE", "WARM_UP", "RECORD",
               "RECORD_AND_SAVE", "NONE", "NONE", "NONE"]


def test_schedule_selects_the_steps_and_calls_on_trace_ready(tmp_path):
    s = schedule(wait=1, warmup=1, active=2, repeat=2, skip_first=1)
    assert [s(i).name for i in range(12)] == _MS_ACTIONS
    assert repr(s) == "Schedule(wait=1, active=2, warmup=1, repeat=2, skip_first=1)"
    seen = []

    def ready(prof):
        seen.append(sorted({r["step"] for r in prof.step_stats()}))
        tensorboard_trace_handler(str(tmp_path))(prof)
    x = kiln.Tensor(np.ones((2, 2), np.float32))
    with Profiler(schedule=s, on_trace_ready=ready) as prof:
        for i in range(12):
            ops.exp(x)
            assert prof.current_action.name == _MS_ACTIONS[i]
            assert kiln.runtime.is_profiling() == (_MS_ACTIONS[i] in ("RECORD", "RECORD_AND_SAVE"))
            prof.step()
    assert seen == [[3, 4], [7, 8]]  # the RECORD / RECORD_AND_SAVE steps, saved after each cycle
    folders = sorted(glob.glob(str(tmp_path / "*_ascend_ms")))
    assert len(folders) == 2
    for f in folders:
        rows = list(csv.DictReader(open(os.path.join(f, "FRAMEWORK", "cpu_op_type_info_0.csv"))))
        assert {r["op_type"]: int(r["type_occurrences"]) for r in rows}["Exp"] == 2
    assert not _trace.hooks_installed()


def test_schedule_stop_mid_cycle_and_analyse_with_schedule(tmp_path, caplog):
    calls = []
    x = kiln.Tensor(np.ones((2, 2), np.float32))
    prof = Profiler(schedule=schedule(wait=0, warmup=0, active=3), on_trace_ready=calls.append)
    prof.step()
    ops.exp(x)
    prof.stop()  # in RECORD: the partial period is handed over (MindSpore's RECORD -> stop)
    assert calls == [prof] and not kiln.runtime.is_profiling()
    prof.analyse()  # with a schedule: a warning, nothing written
    assert not glob.glob(str(tmp_path / "*"))
    p2 = Profiler(schedule=schedule(wait=0, active=1, warmup=0))
    p2.stop()  # no step() ever: MindSpore's warning; Kiln also stops recording
    assert not kiln.runtime.is_profiling() and not _trace.hooks_installed()


def test_bad_arguments_as_mindspore(tmp_path):
    # MindSpore 2.10's behaviour (run on its CPU build): TypeError / ValueError below; resets with warnings after
    with pytest.raises(TypeError):
        schedule(active=1)  # wait is required (keyword-only), as in MindSpore 2.10
    with pytest.raises(TypeError):
        schedule(1, 1)
    with pytest.raises(ValueError, match="step, which must be not less than 0"):
        schedule(wait=0, active=1)(-1)
    # MindSpore 2.10 logs and resets these instead of raising
    assert repr(schedule(wait=-1, active=0)) == "Schedule(wait=0, active=1, warmup=0, repeat=0, skip_first=0)"
    assert repr(schedule(wait=1.5, active=2, repeat=True)) == \
        "Schedule(wait=0, active=2, warmup=0, repeat=0, skip_first=0)"
    p = Profiler(output_path=str(tmp_path), schedule=3, on_trace_ready=3, profiler_level="x", activities="CPU",
                 start_profile=False)
    assert p.profiler_level is ProfilerLevel.Level0
    assert p.activities == [ProfilerActivity.CPU, ProfilerActivity.NPU]
    assert p.schedule_arg == 3 and p._on_trace_ready is None
    assert ProfilerAction.get_by_value(3) is ProfilerAction.RECORD_AND_SAVE
    handler = tensorboard_trace_handler(3)  # reset to "./data"
    assert callable(handler)
    p.stop()  # not started: an error is logged, nothing raised (MindSpore's)


def test_mstx_ranges_and_marks(tmp_path):
    assert mstx.range_start("off") == 0  # no profiler with mstx=True: MindSpore's CPU value
    x = kiln.Tensor(np.ones((2, 2), np.float32))
    with Profiler(output_path=str(tmp_path), mstx=True) as prof:
        outer = mstx.range_start("outer", None, "train")
        inner = mstx.range_start("inner")
        ops.exp(x)
        mstx.mark("here")
        mstx.range_end(outer)  # ranges may cross: they go to separate lanes
        mstx.range_end(inner)
        assert mstx.range_start("") == 0  # invalid message: warning, nothing recorded
        mstx.range_end(12345)  # unknown id: nothing
    prof.analyse()
    events = _trace_of(str(tmp_path))
    ranges = {e["name"]: e for e in events if e.get("cat") == "mstx" and e["ph"] == "X"}
    assert set(ranges) == {"outer", "inner"}
    assert ranges["outer"]["args"]["domain"] == "train" and ranges["outer"]["tid"] != ranges["inner"]["tid"]
    marks = [e for e in events if e["ph"] == "i"]
    assert [m["name"] for m in marks] == ["here"]
    assert ranges["inner"]["ts"] <= marks[0]["ts"] <= ranges["inner"]["ts"] + ranges["inner"]["dur"]


def test_no_hooks_when_off_and_context_manager_restores():
    cell_call = nn.Cell.__call__
    p = Profiler(start_profile=False)
    assert not _trace.hooks_installed() and nn.Cell.__call__ is cell_call
    with p:
        assert _trace.hooks_installed() and nn.Cell.__call__ is not cell_call
        with Profiler() as inner:  # two profilers: the hooks stay until the last one stops
            pass
        assert _trace.hooks_installed()
        del inner
    assert not _trace.hooks_installed() and nn.Cell.__call__ is cell_call
    assert not kiln.runtime.is_profiling()


def test_profiling_from_two_threads(tmp_path):
    net = nn.Dense(8, 8)
    x = kiln.Tensor(np.ones((4, 8), np.float32))
    barrier = threading.Barrier(3)

    def work():
        barrier.wait()
        for _ in range(20):
            net(x)
    threads = [threading.Thread(target=work, name=f"worker{i}") for i in range(2)]
    for t in threads:
        t.start()
    with Profiler(output_path=str(tmp_path)) as prof:
        barrier.wait()
        for t in threads:
            t.join()
    prof.analyse()
    events = _trace_of(str(tmp_path))
    tids = {e["tid"] for e in events if e.get("cat") == "cell"}
    assert len(tids) == 2
    names = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert {n.split(" ")[0] for n in names} >= {"worker0", "worker1"}, names
    stats = {r["op_type"]: r["type_occurrences"] for r in prof.op_stats()}
    assert sum(stats.values()) >= 40


def test_model_train_dataset_and_callbacks_in_trace(tmp_path):
    from kiln import dataset as ds
    from kiln.train import Model, LossMonitor

    def gen():
        for i in range(4):
            yield np.full((4,), i, np.float32), np.zeros((3,), np.float32)
    data = ds.GeneratorDataset(gen, ["x", "y"], shuffle=False).batch(2)
    net = nn.Dense(4, 3)
    model = Model(net, nn.MSELoss(), nn.SGD(net.trainable_params(), 0.01))
    with Profiler(output_path=str(tmp_path)) as prof:
        model.train(1, data, callbacks=[LossMonitor(100)])
    prof.analyse()
    events = _trace_of(str(tmp_path))
    names = {e["name"] for e in events if e["ph"] == "X"}
    assert "Dataset.next" in names
    assert {"Callback.on_train_step_end", "Callback.on_train_epoch_end"} <= names or \
        {"Callback.step_end", "Callback.epoch_end"} <= names, names
    assert {"Dense", "SGD", "TrainOneStepCell", "WithLossCell", "Backward"} <= names
    for b in (e for e in events if e["name"] == "Backward"):  # between the forward and the optimizer
        assert b["args"] == {"forward": "WithLossCell", "optimizer": "SGD"} and b["dur"] > 0


def test_module_paths_and_launch_blocking():
    import kiln.profiler.profiler as pp
    assert pp.Profiler is Profiler and pp.tensorboard_trace_handler is tensorboard_trace_handler
    assert kiln.runtime.launch_blocking() is None
    from kiln.runtime.executor import is_launch_blocking
    assert is_launch_blocking()


def test_profile_class(tmp_path):
    from kiln.profiler import AicoreMetrics, ExportType, _ExperimentalConfig, profile
    config = _ExperimentalConfig(profiler_level=ProfilerLevel.Level1, aic_metrics=AicoreMetrics.AiCoreNone,
                                 l2_cache=False, mstx=True, data_simplification=False, export_type=[ExportType.Text],
                                 mstx_domain_exclude=["noisy"])
    assert config.mstx is True and config.mstx_domain_exclude == ["noisy"]
    assert _ExperimentalConfig(mstx=1).mstx == 1  # kept as given (MindSpore 2.10's); the Profiler resets it
    with Profiler(experimental_config=_ExperimentalConfig(mstx=1, mstx_domain_include="x")) as p:
        assert p._mstx is False and p._mstx_domains == ((), ())
    x = kiln.Tensor(np.ones((2, 2), np.float32))
    with profile(activities=[ProfilerActivity.CPU], schedule=schedule(wait=0, warmup=0, active=1, repeat=1),
                 on_trace_ready=tensorboard_trace_handler(str(tmp_path)), experimental_config=config) as prof:
        assert prof.profiler_level is ProfilerLevel.Level1
        for _ in range(3):
            rid = mstx.range_start("step")
            assert mstx.range_start("skipped", None, "noisy") == 0  # an excluded domain
            mstx.mark("dropped", None, "noisy")
            ops.sigmoid(x)
            mstx.range_end(rid)
            prof.step()
    events = _trace_of(str(tmp_path))  # one period: step 0
    assert [e["name"] for e in events if e.get("cat") == "mstx"] == ["step"]
    assert {e["name"] for e in events if e.get("cat") == "kernel"} == {"Sigmoid"}


def test_trace_png_draws_a_trace(tmp_path):
    pytest.importorskip("matplotlib")
    import importlib.util
    spec = importlib.util.spec_from_file_location("trace_png", os.path.join(os.path.dirname(__file__), "..", "..",
                                                                            "tools", "trace_png.py"))
    trace_png = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(trace_png)
    step = _train_step()
    with Profiler(output_path=str(tmp_path / "prof")) as prof:
        for _ in range(3):
            step()
            prof.step()
    prof.analyse()
    trace = glob.glob(str(tmp_path / "prof" / "*_ascend_ms" / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"))[0]
    n = trace_png.render(trace, str(tmp_path / "t.png"), steps=(1, 2))
    assert n > 10 and (tmp_path / "t.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(SystemExit, match="no ProfilerStep#7"):
        trace_png.render(trace, str(tmp_path / "u.png"), steps=(7, 8))
