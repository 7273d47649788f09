"""Both seed programs with the second seed's mixed-precision tip applied (`net = amp.auto_mixed_precision(net,
amp_level="O2")` before training), as written (Graph mode / @jit) and in PyNative, through `python -m kiln.compat`:
they finish and seed 1's loss (fixed data) falls every epoch. Seed 2 draws fresh random data each step, so only
finite losses and a clean finish are asserted for it."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from helpers import subprocess_env

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SEEDS = os.environ.get("KILN_SEEDS_DIR", "/work/shared/seeds")


def _seed_script(tmp_path, name, amp_o2, pynative):
    src = open(os.path.join(SEEDS, name), encoding="utf-8").read()
    if amp_o2 and "SEED_AMP_O2" not in src:  # seed 1 has no tip in it: apply it where the network is made
        src = src.replace("print(net)\n", "print(net)\nfrom mindspore import amp\n"
                          "net = amp.auto_mixed_precision(net, amp_level=\"O2\")\n", 1)
    if pynative:
        src = src.replace("mode=ms.GRAPH_MODE", "mode=ms.PYNATIVE_MODE")
    path = tmp_path / name
    path.write_text(src, encoding="utf-8")
    return path


@pytest.mark.skipif(not os.path.isdir(SEEDS), reason="no seed programs here (set KILN_SEEDS_DIR)")
@pytest.mark.parametrize("pynative", [False, True])
def test_seeds_with_the_o2_tip(tmp_path, pynative):
    env = dict(subprocess_env(), SEED_AMP_O2="1")
    curves = []
    for name, pat in (("seed_1_custom_network.py", r"^Epoch: \d, Loss: (-?[\d.]+)$"),
                      ("seed_2_functional_jit.py", r"^Epoch \[\d+/20\], Loss: (-?[\d.]+)$")):
        path = _seed_script(tmp_path, name, True, pynative)
        out = subprocess.run([sys.executable, "-m", "kiln.compat", str(path)], capture_output=True, text=True,
                             env=env, cwd=tmp_path, timeout=300)
        assert out.returncode == 0, out.stderr[-2000:]
        assert "Error occurred" not in out.stdout, out.stdout
        curves.append([float(v) for v in re.findall(pat, out.stdout, re.M)])
    assert len(curves[0]) == 5 and all(b < a for a, b in zip(curves[0], curves[0][1:]))  # fixed data: falls
    assert len(curves[1]) == 10 and all(np.isfinite(curves[1]))  # fresh random data each step
