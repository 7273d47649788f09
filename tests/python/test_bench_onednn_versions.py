"""benchmarks/bench_onednn_versions.sh (docs/decisions/onednn-version.md) builds its C++ harness against a oneDNN
prefix and runs it: here once, against the oneDNN this Kiln is built with (the test interpreter's venv), with the
smallest settings. The script's opt-in scratch venv (--make-venv, PyPI's oneDNN 3.13) is never made here."""
import os
import re
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "benchmarks", "bench_onednn_versions.sh")


def test_help():
    p = subprocess.run(["bash", SCRIPT, "--help"], capture_output=True, text=True, timeout=30)
    assert p.returncode == 0 and "--make-venv" in p.stdout, p.stdout + p.stderr


@pytest.mark.skipif(shutil.which("g++") is None or shutil.which("taskset") is None, reason="needs g++ and taskset")
def test_runs_against_kilns_onednn():
    prefix = sys.prefix
    if not os.path.isfile(os.path.join(prefix, "include", "oneapi", "dnnl", "dnnl.h")):
        pytest.skip(f"no oneDNN headers under {prefix}/include")
    p = subprocess.run(["bash", SCRIPT, "--rounds", "1", "--threads", "1", "--min-time", "0.01", prefix],
                       capture_output=True, text=True, timeout=300)
    out = p.stdout + p.stderr
    raw = re.search(r"raw lines: (\S+)/all\.txt", out)
    if raw and raw.group(1).startswith("/tmp/onednn_compare."):
        shutil.rmtree(raw.group(1), ignore_errors=True)  # the builds and raw lines the script keeps
    assert p.returncode == 0, out
    assert re.search(r"onednn=3\.\d+\.\d+", out), out
    assert re.search(r"lowp=bf16 matmul=(yes|no) conv=(yes|no)", out), out
    for case in ("sgemm_1024", "sgemm_256", "matmul_1024", "conv3x3_fwd_", "conv3x3_bwd_data_", "conv3x3_bwd_weights_"):
        assert re.search(rf"threads=1 lib=0 case={case}\S* best_ms=\d+\.\d+ best_cpu_ms=\d+\.\d+", out), (case, out)
