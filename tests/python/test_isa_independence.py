"""Kiln gives the same special values, and its own kernels the same bits, on every instruction set oneDNN can use.

Issue 22: on AVX-512 (Zen 4) oneDNN's erf-GeLU post-op turned ±inf into NaN where the unfused ops (and the AVX2
kernel) gave numbers. Kiln's kernels are compiled once for x86-64-v3 and never dispatch on the CPU; oneDNN's JIT
kernels do. Each test here runs a child interpreter per ISA cap (oneDNN's ONEDNN_MAX_CPU_ISA, read once at its first
use) that this CPU can run, from SSE4.1 up to the CPU's best, and checks in each:
- fused act(x·w + b) (MatMulBiasAct, both kernels) has NaN/±inf exactly where the unfused ops have them, and the
  finite values agree;
- the unfused activations (Kiln's vmath kernels) give the same bits under every cap;
- the cap took effect (`kiln.runtime.cpu_info()["onednn_isa"]`).
Which caps ran is printed with `-rA`/`-s`; docs/robustness.md ("Every CPU") records which ISAs CI covered.
"""
import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from kiln import _cpu, runtime
from helpers import subprocess_env

# oneDNN's ISA names (ONEDNN_MAX_CPU_ISA values) and the /proc/cpuinfo flags each needs.
_CAPS = [
    ("SSE41", ("sse4_1",)),
    ("AVX", ("avx",)),
    ("AVX2", ("avx2",)),
    ("AVX512_CORE", ("avx512f", "avx512bw", "avx512vl", "avx512dq")),
    ("AVX512_CORE_VNNI", ("avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512_vnni")),
    ("AVX512_CORE_BF16", ("avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512_vnni", "avx512_bf16")),
]
_MODEL, _FLAGS = _cpu.cpu_model_and_flags()
_RUNNABLE = [cap for cap, need in _CAPS if _FLAGS is not None and all(f in _FLAGS for f in need)]

_CHILD = r'''
import json, sys
import numpy as np
import kiln
from kiln import Tensor, ops, runtime

out = sys.argv[1]
acts = {"none": lambda z: z, "relu": ops.relu, "sigmoid": ops.sigmoid, "tanh": ops.tanh, "gelu": ops.gelu,
        "gelu_tanh": lambda z: ops.gelu(z, approximate="tanh")}
res = {}
for (M, K, N) in [(6, 5, 4), (96, 80, 72)]:  # the sgemm kernel, the oneDNN primitive (from 2*64^3 flops)
    rng = np.random.default_rng(M)
    x = rng.uniform(-1, 1, (M, K)).astype(np.float32)
    x[0, 0], x[1, 0], x[2, 0], x[3, 0], x[4, 1] = np.nan, np.inf, -np.inf, 1000.0, -1000.0
    x[5, :5] = [1e30, -1e30, 3e38, 1e-40, -0.0]  # overflow to inf in the product, a subnormal, -0
    w = rng.uniform(-1, 1, (K, N)).astype(np.float32)
    w[0, 1] = 0.0  # inf*0 = NaN in one column
    b = rng.uniform(-1, 1, (N,)).astype(np.float32)
    for name, f in acts.items():
        def dense(x, w, b, f=f):
            return f(ops.add(ops.matmul(x, w), b))
        jf = kiln.jit(dense)
        args = (Tensor(x), Tensor(w), Tensor(b))
        fused = jf(*args).asnumpy()
        assert "MatMulBiasAct" in jf.graphs[0].graph.to_text()
        unfused = dense(*args).asnumpy()
        res[f"{name}-{M}-fused"] = fused
        res[f"{name}-{M}-unfused"] = unfused
# Kiln's own activation kernels on special and ordinary values
z = np.concatenate([np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, 88.7, -88.7, 1e4, -1e4], np.float32),
                    np.linspace(-12, 12, 1001, dtype=np.float32)])
for name, f in acts.items():
    res[f"own-{name}"] = f(Tensor(z)).asnumpy()
np.savez(out, **res)
print(json.dumps(runtime.cpu_info()))
'''


def _run_child(cap, tmp_path):
    out = tmp_path / f"{cap}.npz"
    env = subprocess_env([str(pathlib.Path(__file__).parent)])
    env["ONEDNN_MAX_CPU_ISA"] = cap
    r = subprocess.run([sys.executable, "-c", _CHILD, str(out)], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, f"ONEDNN_MAX_CPU_ISA={cap}: child failed:\n{r.stdout}\n{r.stderr}"
    info = json.loads(r.stdout.strip().splitlines()[-1])
    return info, dict(np.load(out))


@pytest.fixture(scope="module")
def isa_results(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("isa")
    return {cap: _run_child(cap, tmp) for cap in _RUNNABLE}


def test_some_isa_caps_run():
    assert _FLAGS is None or {"SSE41", "AVX", "AVX2"} <= set(_RUNNABLE), (_MODEL, _RUNNABLE)
    print(f"CPU {_MODEL}; oneDNN ISA caps tested: {', '.join(_RUNNABLE)}")


@pytest.mark.parametrize("cap", [c for c, _ in _CAPS])
def test_fused_matmul_special_values_on_every_isa(cap, isa_results):
    if cap not in isa_results:
        pytest.skip(f"this CPU ({_MODEL}) cannot run oneDNN's {cap} kernels")
    info, res = isa_results[cap]
    assert info["onednn_isa"] == cap.lower(), info  # the cap took effect
    for key in res:
        if not key.endswith("-fused"):
            continue
        got, want = res[key], res[key.replace("-fused", "-unfused")]
        for what, f in (("NaN", np.isnan), ("+inf", np.isposinf), ("-inf", np.isneginf)):
            np.testing.assert_array_equal(f(got), f(want), err_msg=f"{cap} {key}: {what} positions")
        fin = np.isfinite(want)
        np.testing.assert_allclose(got[fin], want[fin], rtol=1e-4, atol=1e-4 * (1 + np.abs(want[fin]).max()),
                                   err_msg=f"{cap} {key}")
        if key.split("-")[1] == "6":  # the sgemm kernel + Kiln's epilogue: the unfused ops' bits
            np.testing.assert_array_equal(got, want, err_msg=f"{cap} {key}: sgemm path")


def test_own_kernels_same_bits_on_every_isa(isa_results):
    caps = list(isa_results)
    if len(caps) < 2:
        pytest.skip("fewer than two ISA caps runnable here")
    first = isa_results[caps[0]][1]
    for cap in caps[1:]:
        res = isa_results[cap][1]
        for key in first:
            if key.startswith("own-"):
                np.testing.assert_array_equal(res[key], first[key], err_msg=f"{key}: {cap} vs {caps[0]}")


def test_no_onednn_eltwise_in_kiln():
    """Kiln's activations are its own (src/ops/fused_matmul.cpp, Note [activation outside oneDNN]): no oneDNN
    eltwise primitive or post-op, whose JIT approximations differ per ISA, anywhere in src/."""
    src = pathlib.Path(__file__).resolve().parents[2] / "src"
    if not src.is_dir():
        pytest.skip("no source tree beside the tests")
    found = []
    for p in src.rglob("*.[ch]*"):
        text = p.read_text(encoding="utf-8", errors="replace")
        for needle in ("dnnl_eltwise_", "post_ops_append_eltwise", "dnnl_eltwise_forward", "eltwise_forward"):
            if needle in text:
                found.append(f"{p.relative_to(src)}: {needle}")
    assert not found, found


def test_cpu_info_names_the_isa():
    info = runtime.cpu_info()
    assert set(info) == {"model", "flags", "onednn_isa", "onednn_max_cpu_isa", "kiln_kernels", "low_precision"}
    # the bfloat16/float16 path (tests/python/test_low_precision_path.py checks how it is chosen)
    assert {"mode", "bfloat16", "float16", "supported", "fast"} == set(info["low_precision"])
    assert info["kiln_kernels"] == "x86-64-v3"
    assert info["onednn_isa"] in {c.lower() for c, _ in _CAPS} | {"avx2_vnni", "avx2_vnni_2", "avx512_core_fp16",
                                                                  "avx512_core_amx", "avx512_core_amx_fp16"}
    if _FLAGS is not None:
        assert set(info["flags"]) <= _FLAGS and ("avx2" in info["flags"]) == ("avx2" in _FLAGS)


def test_missing_x86_64_v3_is_a_clear_import_error(tmp_path):
    base = "processor\t: 0\nmodel name\t: Old CPU\nflags\t\t: fpu sse sse2 sse4_1 sse4_2 avx {}\n"
    old = tmp_path / "old"
    old.write_text(base.format("fma"))
    if _cpu.platform.machine().lower() not in ("x86_64", "amd64"):
        pytest.skip("x86-64 only")
    with pytest.raises(ImportError, match=r"x86-64-v3.*Old CPU.*lacks avx2, bmi1, bmi2, f16c, movbe, abm"):
        _cpu.check_x86_64_v3(str(old))
    new = tmp_path / "new"
    new.write_text(base.format(" ".join(_cpu.X86_64_V3_FLAGS)))
    assert _cpu.check_x86_64_v3(str(new)) is None
    assert _cpu.check_x86_64_v3(str(tmp_path / "missing")) is None  # unreadable: skipped, not guessed
