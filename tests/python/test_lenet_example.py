"""examples/train_lenet_digits.py: reaches 95% test accuracy on the digits, and PyNative and Graph mode give the
same first 20 losses (issue: LeNet on real images in both modes)."""
import os
import re
import subprocess
import sys

import pytest

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "train_lenet_digits.py")
pytest.importorskip("sklearn")


def run(*args):
    out = subprocess.run([sys.executable, EXAMPLE, *args], capture_output=True, text=True, timeout=600)
    return out.returncode, out.stdout + out.stderr


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_reaches_95_percent(mode):
    rc, out = run("--mode", mode)
    assert rc == 0, out
    acc = float(re.search(r"Test accuracy: ([0-9.]+)", out).group(1))
    assert acc >= 0.95


def test_first_20_losses_equal_in_both_modes():
    losses = {}
    for mode in ("pynative", "graph"):
        rc, out = run("--mode", mode, "--epochs", "1", "--print-steps", "20")
        losses[mode] = [float(v) for v in re.findall(r"step \d+: loss ([-0-9.e]+)", out)]
        assert len(losses[mode]) == 20, out
    for a, b in zip(losses["pynative"], losses["graph"]):
        assert abs(a - b) <= 1e-5 * abs(a)
