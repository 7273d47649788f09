"""mindspore.profiler.Profiler on Kiln's per-op timers: what a script's Profiler(...) ... analyse() writes."""
import csv
import glob
import os

import numpy as np
import pytest

import kiln
from kiln import nn, ops
from kiln.profiler import Profiler


def _read(folder):
    files = glob.glob(os.path.join(folder, "kiln_*", "FRAMEWORK", "cpu_op_type_info_0.csv"))
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
    assert float(by["ReLU"]["execution_frequency(per-step)"]) == pytest.approx(4 / 3, rel=1e-5)
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
