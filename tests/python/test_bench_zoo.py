"""benchmarks/bench_zoo.py (issue 25) starts against the installed Kiln and reports a missing PyTorch as such.

Runs the script as the benchmarks are run (this python, PYTHONPATH unset, cwd /) with its smallest settings: one
model (mindcv's MobileNetV3-small, the lightest), Kiln PyNative and PyTorch eager, float32, 1 thread, a --torch-python
that does not exist. The PyTorch side is never imported here. Needs mindcv's sources (tools/mindcv_zoo.py: $MINDCV_SRC
or /tmp/mindcv_src); skipped without them."""
import json
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "benchmarks", "bench_zoo.py")
MINDCV = os.environ.get("MINDCV_SRC", "/tmp/mindcv_src")
NUMBER = r"\d+(?:\.\d+)?"


@pytest.mark.skipif(not os.path.isfile(os.path.join(MINDCV, "mindcv", "__init__.py")),
                    reason=f"mindcv sources not found at {MINDCV} (set MINDCV_SRC)")
def test_bench_zoo_kiln_cell_and_missing_torch(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSAFEPATH")}
    out_json = tmp_path / "zoo.json"
    missing = str(tmp_path / "no-such-venv" / "bin" / "python")
    p = subprocess.run([sys.executable, SCRIPT, "--models", "mobilenet_v3", "--variants", "kiln,torch",
                        "--dtypes", "fp32", "--threads", "1", "--repeats", "1", "--warmup", "0", "--min-time", "0.05",
                        "--mindcv", MINDCV, "--torch-python", missing, "--json", str(out_json)],
                       cwd="/", env=env, capture_output=True, text=True, timeout=600)
    out = p.stdout + p.stderr
    assert p.returncode == 0 and "Traceback" not in out, out
    # mindcv's mobilenet_v3_small_100 with 10 classes: torchvision's mobilenet_v3_small has the same count
    assert "parameters: Kiln/mindcv 1,528,106, PyTorch -" in out, out
    assert re.search(rf"^  fp32 +Kiln PyNative +\S+ +{NUMBER} +- +-$", out, re.M), out
    assert re.search(r"^  fp32 +PyTorch eager +not installed$", out, re.M), out
    assert re.search(r"1 thread\(s\): kiln \d+\.\d, torch not installed", out), out
    data = json.loads(out_json.read_text())
    cell = data["models"]["mobilenet_v3"]["cells"]["fp32|kiln|1"]
    assert cell["status"] == "ok" and cell["rate"] > 0 and cell["losses"][2] < cell["losses"][0], cell
    assert data["models"]["mobilenet_v3"]["cells"]["fp32|torch|1"]["status"] == "not installed"
