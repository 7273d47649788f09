"""tools/mindcv_zoo.py's comparison and table functions on synthetic data (no MindSpore, no mindcv needed)."""
import importlib.util
import math
import os

import numpy as np
import pytest

_PATH = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "mindcv_zoo.py")
_spec = importlib.util.spec_from_file_location("mindcv_zoo", _PATH)
zoo = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(zoo)


def test_forward_error_is_scale_relative():
    ref = np.array([[1.0, -4.0], [2.0, 0.5]], np.float32)
    got = ref.copy()
    got[1, 1] += 0.002  # max abs diff 0.002, max |ref| 4
    assert zoo.forward_error(got, ref) == pytest.approx(0.002 / 4.0, rel=1e-4)
    assert zoo.forward_error(ref, ref) == 0.0
    assert zoo.forward_error(np.zeros(3), np.zeros(3)) == 0.0
    assert math.isinf(zoo.forward_error(np.ones(3), np.zeros(3)))
    assert math.isinf(zoo.forward_error(np.array([np.nan, 1.0]), np.array([1.0, 1.0])))
    with pytest.raises(ValueError, match=r"forward_error: shapes differ.*\(2, 2\).*\(4,\)"):
        zoo.forward_error(ref, ref.ravel())


def test_grad_error_worst_parameter_and_floor():
    rng = np.random.RandomState(0)
    ref = {"a.weight": rng.standard_normal((3, 4)), "b.bias": rng.standard_normal(5), "c.zero": np.zeros(2)}
    got = {k: v.copy() for k, v in ref.items()}
    err, worst = zoo.grad_error(got, ref)
    assert err == 0.0 and worst == "a.weight"  # first name in sorted order when all are exact
    got["b.bias"] = ref["b.bias"] * (1 + 1e-2)
    err, worst = zoo.grad_error(got, ref)
    assert worst == "b.bias"
    total = math.sqrt(sum(float(np.sum(v ** 2)) for v in ref.values()))
    expect = 1e-2 * np.linalg.norm(ref["b.bias"]) / (np.linalg.norm(ref["b.bias"]) + zoo.GRAD_FLOOR * total)
    assert err == pytest.approx(expect, rel=1e-9)
    # a zero reference gradient: the error is measured against the floor GRAD_FLOOR * ||all gradients||
    got = {k: v.copy() for k, v in ref.items()}
    got["c.zero"] = np.array([1e-9, 0.0])
    err, worst = zoo.grad_error(got, ref)
    assert worst == "c.zero" and err == pytest.approx(1e-9 / (zoo.GRAD_FLOOR * total), rel=1e-9)
    assert zoo.grad_error(got, ref, floor=1e-6)[0] == pytest.approx(1e-9 / (1e-6 * total), rel=1e-9)
    got["c.zero"] = np.array([np.inf, 0.0])
    assert zoo.grad_error(got, ref) == (math.inf, "c.zero")


def test_grad_error_refuses_other_names_or_shapes():
    ref = {"w": np.ones((2, 2)), "b": np.ones(2)}
    with pytest.raises(ValueError, match=r"missing \['b'\], unexpected \['x'\]"):
        zoo.grad_error({"w": np.ones((2, 2)), "x": np.ones(2)}, ref)
    with pytest.raises(ValueError, match=r"gradient of 'w' has shape \(4,\), expected \(2, 2\)"):
        zoo.grad_error({"w": np.ones(4), "b": np.ones(2)}, ref)


def _result(**stages):
    st = {s: "ok" for s in zoo.STAGES}
    st.update(stages)
    return {"ms": "ok", "size": 64, "params": 1_500_000, "stages": st,
            "fwd_err": {"pynative": 1e-6, "graph": 2e-6}, "grad_err": {"pynative": 3e-6, "graph": math.inf},
            "seconds": {"ms": 3.2, "kiln": 4.9}, "note": "a|b"}


def test_kiln_failed():
    assert not zoo.kiln_failed(_result())
    assert zoo.kiln_failed(_result(graph_grad="mismatch"))
    r = _result()
    del r["stages"]["graph_fwd"]
    assert zoo.kiln_failed(r)  # a stage without a result is not a pass
    assert not zoo.kiln_failed({"ms": "forward error", "stages": {}})  # MindSpore itself could not run it


def test_render_table_marks_not_run_and_failures():
    results = {"good": _result(), "bad": _result(load="error"), "msfail": {"ms": "build error", "note": "x"}}
    text = zoo.render_table(["good", "bad", "msfail", "never"], results, header="# T\n")
    lines = text.splitlines()
    assert lines[0] == "# T"
    assert "4 models in mindcv; 3 run: 1 pass every stage (0 of them" in text
    assert "1 fail on Kiln, 1 did not run on MindSpore" in text
    assert "1 not run." in text
    row = {ln.split("|")[1].strip(): ln for ln in lines if ln.startswith("| ") and not ln.startswith("| model")}
    assert row["never"].count("not run") == 1 and " ok " not in row["never"]
    assert "| good | 2x3x64x64 | 1.50M | ok | ok | ok | ok | ok | ok | ok | 1.0e-06/2.0e-06 | 3.0e-06/inf | 3/5 |" \
        in row["good"]
    assert "a\\|b" in row["good"]  # a '|' in the note does not break the table
    assert "| ok | **error** | ok |" in row["bad"]
    assert "**build error**" in row["msfail"] and " ok " not in row["msfail"]


def test_fd_verdict():
    # slopes near Kiln's directional derivative (gap 0.0046): Kiln's gradient is the right one
    assert zoo.fd_verdict([0.00702, 0.00703], 0.00238, 0.00700) == "kiln"
    assert zoo.fd_verdict([0.0025, 0.0024], 0.00238, 0.00700) == "mindspore"
    assert zoo.fd_verdict([0.0070, 0.0030], 0.00238, 0.00700) == "undecided"  # the steps disagree
    assert zoo.fd_verdict([0.0047], 0.00238, 0.00700) == "undecided"  # halfway
    assert zoo.fd_verdict([], 0.0, 1.0) == "undecided"
    assert zoo.fd_verdict([1.0], 1.0, 1.0) == "undecided"  # no gap to decide


def test_ms_off_is_not_a_kiln_failure_and_shows_as_fd():
    r = _result(pynative_grad="ms_off", graph_grad="ms_off")
    assert not zoo.kiln_failed(r)
    text = zoo.render_table(["m"], {"m": r})
    assert "| ok | ok | ok (FD) | ok | ok (FD) |" in text
    assert "1 pass every stage" in text


def test_kink_is_a_pass_only_when_another_input_matches():
    # a kink retry passes a mode only when both its forward and its gradients matched at that input
    assert zoo.kink_retry_passes({"pynative_fwd": "ok", "pynative_grad": "ok", "graph_grad": "mismatch"}, "pynative")
    assert not zoo.kink_retry_passes({"pynative_fwd": "ok", "pynative_grad": "ok", "graph_grad": "mismatch"},
                                     "graph")
    assert not zoo.kink_retry_passes({"graph_fwd": "mismatch", "graph_grad": "ok"}, "graph")
    assert not zoo.kink_retry_passes({}, "graph")
    r = _result(pynative_grad="kink", graph_grad="kink")
    assert not zoo.kiln_failed(r)
    text = zoo.render_table(["m", "n"], {"m": r, "n": _result(graph_grad="mismatch")})
    assert "| ok | ok | ok (kink) | ok | ok (kink) |" in text
    assert "1 pass every stage (0 of them with a gradient where MindSpore's own finite differences side with Kiln, " \
        "'ok (FD)'; 1 with a kink at the first input that is gone at another, 'ok (kink)'; 0 whose float32 gradient is " \
        "float64's where MindSpore's is not, 'ok (f64)'), 1 fail on Kiln" in text


def test_kink_retry_wanted_unless_a_verdict_sides_with_mindspore():
    # step 5 runs other inputs when the finite differences leave the mismatch open
    assert zoo.kink_retry_wanted(["undecided", "undecided", "undecided"])
    # inception_v4 (input seed 0): one float32 slope sided with Kiln by chance (float64 slopes: all undecided, a
    # ReLU input of 1.5e-9 that Kiln's float32 rounds to -3.5e-10); at input seed 1 both frameworks match
    assert zoo.kink_retry_wanted(["undecided", "kiln", "undecided"])
    assert zoo.kink_retry_wanted(iter(["kiln", "undecided"]))
    assert not zoo.kink_retry_wanted(["kiln", "kiln"])  # 'ms_off' already
    assert not zoo.kink_retry_wanted(["undecided", "mindspore"])  # a slope for MindSpore keeps the mismatch
    assert not zoo.kink_retry_wanted([])  # no finite differences ran


def test_f64_arbitration_passes_only_when_every_float64_slope_and_the_gradient_side_with_kiln():
    fd_k = {"fd": [0.52, 0.52], "s_ms": 0.61, "s_kiln": 0.52, "verdict": "kiln"}
    fd_u = dict(fd_k, verdict="undecided")
    ok = {"err_kiln": 2e-5, "err_ms": 3.7e-3, "fd": {"a": fd_k, "b": fd_k}}
    assert zoo.f64_passes(ok)
    assert not zoo.f64_passes(dict(ok, fd={"a": fd_k, "b": fd_u}))  # one slope undecided
    assert not zoo.f64_passes(dict(ok, fd={}))  # nothing checked by differences
    assert not zoo.f64_passes(dict(ok, err_kiln=2e-3))  # Kiln's float32 gradient itself off float64 by > 1e-3
    assert not zoo.f64_passes(dict(ok, err_kiln=4e-4, err_ms=3e-4))  # MindSpore's is the closer one
    assert not zoo.f64_passes({"error": "TypeError: ..."})
    assert not zoo.f64_passes(None)
    r = _result(pynative_grad="f64", graph_grad="mismatch")
    assert zoo.kiln_failed(r)
    r["stages"]["graph_grad"] = "f64"
    assert not zoo.kiln_failed(r)
    text = zoo.render_table(["m"], {"m": r})
    assert "| ok | ok | ok (f64) | ok | ok (f64) |" in text
    assert "1 whose float32 gradient is float64's where MindSpore's is not, 'ok (f64)'" in text


def test_render_table_names_an_older_gradient_floor():
    r = _result()
    r["grad_floor"] = 1e-6
    assert "| 3.0e-06/inf (floor 1e-06) |" in zoo.render_table(["m"], {"m": r})
    r["grad_floor"] = zoo.GRAD_FLOOR
    assert "| 3.0e-06/inf |" in zoo.render_table(["m"], {"m": r})


def test_kept_notes(tmp_path):
    f = tmp_path / "t.md"
    assert zoo._kept_notes(str(f)) == ""
    f.write_text("# T\n| a |\n\n## Notes\nwhy x fails\n")
    assert zoo._kept_notes(str(f)) == "\n## Notes\nwhy x fails\n"
    f.write_text("# T\n| a |\n")
    assert zoo._kept_notes(str(f)) == ""
