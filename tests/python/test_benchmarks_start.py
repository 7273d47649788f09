"""Every benchmark script starts against the installed Kiln (issue 22).

The benchmarks measure what tools/setup_env.sh installed into .venv: each script runs as `.venv/bin/python
benchmarks/NAME.py` with PYTHONPATH unset, starts its children with the same interpreter and an environment that does
not add the source tree's python/ (which holds no kiln/_core*.so: a half package, a circular import), and says so in
one line when the kiln it finds cannot be used (benchmarks/_env.py). Here, from cwd=/ with PYTHONPATH and
PYTHONSAFEPATH unset: every script answers --help; bench_amp.py (the reported case) and three scripts that start
child processes (kiln.msrun, `python -c`, per-build workers) run for real with their smallest settings, with peers
that are missing (reported, skipped); and a source tree without _core on PYTHONPATH gives the one-line reason."""
import glob
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(ROOT, "benchmarks")
SCRIPTS = sorted(os.path.basename(p) for p in glob.glob(os.path.join(BENCH, "*.py"))
                 if not os.path.basename(p).startswith("_"))
NUMBER = r"\d+(?:\.\d+)?"


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSAFEPATH")}
    env.update(extra)
    return env


def _run(script, *args, env=None, timeout=120):
    p = subprocess.run([sys.executable, os.path.join(BENCH, script), *args], cwd="/", env=env or _env(),
                       capture_output=True, text=True, timeout=timeout)
    return p, p.stdout + p.stderr


def test_scripts_found():
    assert "bench_amp.py" in SCRIPTS and len(SCRIPTS) >= 20, SCRIPTS


@pytest.mark.parametrize("script", SCRIPTS)
def test_help(script):
    p, out = _run(script, "--help", timeout=60)
    assert p.returncode == 0, out
    assert "Traceback" not in out, out
    assert "usage:" in p.stdout, out


def test_command_lines_do_not_put_python_dir_on_pythonpath():
    for path in [*glob.glob(os.path.join(BENCH, "*.py")), os.path.join(BENCH, "README.md"),
                 os.path.join(ROOT, "docs", "benchmarks.md"), *glob.glob(os.path.join(ROOT, "docs", "benchmarks", "*.md"))]:
        with open(path, encoding="utf-8") as f:
            m = re.search(r"PYTHONPATH=python\s+\S*python", f.read())
        assert m is None, f"{path}: a command line says {m.group(0)!r} (use .venv/bin/python alone)"


@pytest.fixture
def missing_python(tmp_path):
    return str(tmp_path / "no-such-venv" / "bin" / "python")


def test_bench_amp_runs_against_installed_kiln(missing_python):
    # The reported case: its kiln children got PYTHONPATH=<repo>/python and failed with a circular import.
    p, out = _run("bench_amp.py", "--frameworks", "kiln,torch,mindspore", "--torch-python", missing_python,
                  "--ms-python", missing_python, "--workloads", "lenet", "--variants", "fp32", "--threads", "1",
                  "--repeats", "1", "--warmup", "0", "--min-time", "0.05")
    assert p.returncode == 0 and "Traceback" not in out, out
    assert re.search(rf"round 1 lenet +kiln +fp32 +{NUMBER} steps/s", out), out
    assert re.search(r"round 1 lenet +torch +fp32 +not installed \(no python at ", out), out
    assert re.search(r"round 1 lenet +mindspore +fp32 +not installed", out), out


def test_bench_lenet_scaling_msrun_runs_against_installed_kiln():
    p, out = _run("bench_lenet_scaling.py", "--procs", "1", "--epochs", "2", "--batch", "256")
    assert p.returncode == 0 and "Traceback" not in out, out
    assert re.search(rf"^ +1 +\d+ +{NUMBER} +1\.00x", out, re.M), out


def test_bench_mindrecord_child_runs_against_installed_kiln(missing_python):
    p, out = _run("bench_mindrecord.py", "--rows", "1000", "--shards", "1", "--repeats", "1",
                  "--mindspore-python", missing_python)
    assert p.returncode == 0 and "Traceback" not in out, out
    for what in ("write", "minddataset", "filereader"):
        assert re.search(rf"^{what} +\d+ +not installed", out, re.M), out


def test_bench_cpu_step_default_build_is_installed_kiln(missing_python):
    p, out = _run("bench_cpu_step.py", "--workloads", "lenet", "--threads", "1", "--steps", "1",
                  "--torch-python", missing_python)
    assert p.returncode == 0 and "Traceback" not in out, out
    for variant in ("kiln", "kiln-jit"):
        assert re.search(rf"lenet +1 thr +kiln +{variant} +{NUMBER} +{NUMBER} +{NUMBER}", out), out
    assert re.search(r"lenet +1 thr +torch +torch +not installed", out), out


@pytest.fixture(scope="module")
def source_tree_without_core(tmp_path_factory):
    """A copy of python/ as the source tree has it: the kiln package without its built extension."""
    root = tmp_path_factory.mktemp("src") / "python"
    shutil.copytree(os.path.join(ROOT, "python", "kiln"), root / "kiln",
                    ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    return str(root)


@pytest.mark.parametrize("args", [
    ("bench_rnn.py", "--help"),                                # imports kiln at the top
    ("bench_amp.py", "--frameworks", "kiln", "--workloads", "lenet", "--variants", "fp32"),  # checks before children
    ("bench_cpu_step.py", "--workloads", "lenet"),             # the default build is this python's kiln
], ids=lambda a: a[0])
def test_source_tree_on_pythonpath_is_one_clear_line(source_tree_without_core, args):
    p, out = _run(*args, env=_env(PYTHONPATH=source_tree_without_core), timeout=60)
    assert p.returncode != 0, out
    assert "Traceback" not in out, out
    assert "a source tree without its built extension" in p.stderr, out
    assert "run tools/setup_env.sh and use .venv/bin/python" in p.stderr, out


def test_cpu_step_refuses_a_kiln_path_without_core(source_tree_without_core):
    p, out = _run("bench_cpu_step.py", "--kiln", f"old={source_tree_without_core}", timeout=60)
    assert p.returncode == 2 and "Traceback" not in out, out
    assert "has no built extension" in p.stderr, out


def test_bench_op_calls_quick_without_peers(missing_python, tmp_path):
    # Issue 23's per-op table: registry entries picked by --only, Kiln timed, torch missing (reported, skipped).
    ops = ("add", "reshape", "getitem_basic")
    out_json = tmp_path / "ops.json"
    p, out = _run("bench_op_calls.py", "--quick", "--only", ",".join(ops), "--torch-python", missing_python,
                  "--json", str(out_json), timeout=120)
    assert p.returncode == 0 and "Traceback" not in out, out
    assert re.search(r"^CPU: ", out, re.M), out
    assert "PyTorch not installed (no python at " in out, out
    for op in ops:  # Kiln median and min, no torch figures, traced and compiled node counts
        assert re.search(rf"^{re.escape(op)} +{NUMBER} +{NUMBER} +- +- +- +\d+ +\d+ ", out, re.M), out
    assert "summary: 3 of 3 registry entries timed" in out, out
    assert re.search(r"^threads: 1;", out, re.M), out
    data = json.loads(out_json.read_text())
    assert sorted(r["label"] for r in data["rows"]) == sorted(ops)
    assert all(r["kiln"] > 0 and r["ratio"] is None for r in data["rows"]), data["rows"]
