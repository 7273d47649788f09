"""benchmarks/bench_zoo.py (issue 25) starts against the installed Kiln and reports a missing PyTorch as such.

Runs the script as the benchmarks are run (this python, PYTHONPATH unset, cwd /) with its smallest settings: one
model (mindcv's MobileNetV3-small, the lightest), Kiln PyNative and PyTorch eager, float32, 1 thread, a --torch-python
that does not exist. A second test builds every model's Kiln step (PyNative and @jit) at batch 2, 32x32 and trains 3
steps. The PyTorch side is never imported here. Needs mindcv's sources (tools/mindcv_zoo.py: $MINDCV_SRC or
/tmp/mindcv_src); skipped without them."""
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest
from helpers import subprocess_env

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


KILN_STEPS = r"""
import json, sys
import numpy as np
sys.path[:0] = [BENCH, MINDCV]
import bench_zoo as z
z.configure(batch=2, image_size=32)
out = {}
for model in z.MODELS:
    out[model] = {"x": list(z.make_data(model)[0].shape)}
    for jit in (False, True):
        step, sync, version, n_params = z.kiln_step(model, "fp32", jit, None)
        losses = []
        for _ in range(3):
            step()
            losses.append(sync())
        out[model]["jit" if jit else "pynative"] = losses
        out[model]["params"] = n_params
print(json.dumps(out))
"""


@pytest.mark.skipif(not os.path.isfile(os.path.join(MINDCV, "mindcv", "__init__.py")),
                    reason=f"mindcv sources not found at {MINDCV} (set MINDCV_SRC)")
def test_bench_zoo_kiln_step_every_model():
    """The Kiln side of every model of the benchmark (kiln_step, PyNative and the @jit whole step) builds and trains
    3 steps at batch 2, 32x32 (bench_zoo's --batch 2 --image-size 32), in one kiln.compat process: the seeded build
    gives the same first loss in both modes, and the loss goes down. No PyTorch, no timing (the .npz of initial
    weights is exercised by the test above)."""
    code = f"BENCH, MINDCV = {os.path.dirname(SCRIPT)!r}, {MINDCV!r}\n" + KILN_STEPS
    p = subprocess.run([sys.executable, "-m", "kiln.compat", "-c", code], cwd=os.path.dirname(SCRIPT),
                       env=subprocess_env(), capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    res = json.loads(p.stdout.strip().splitlines()[-1])
    assert sorted(res) == ["mobilenet_v3", "resnet18", "resnet50", "vit_tiny"], res
    # mindcv's parameter counts with 10 classes (torchvision's models have the same; bench_zoo prints both)
    counts = {"resnet18": 11_181_642, "resnet50": 23_528_522, "mobilenet_v3": 1_528_106}
    for model, r in res.items():
        assert r["x"] == [2, 3, 32, 32], (model, r)
        assert r["params"] == counts.get(model, r["params"]) > 0, (model, r)
        for mode in ("pynative", "jit"):
            assert np.all(np.isfinite(r[mode])) and r[mode][-1] < r[mode][0], (model, mode, r)
        np.testing.assert_allclose(r["jit"][0], r["pynative"][0], rtol=1e-5, err_msg=model)
