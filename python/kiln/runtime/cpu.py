"""`kiln.runtime.cpu_info()`: which CPU code paths this process runs (Kiln's own extension; MindSpore has none).

Numbers from oneDNN's kernels (matmul, convolution) can differ in their last bits from one instruction set to the
next (its kernels sum in ISA-specific orders); Kiln's own kernels cannot (one build for x86-64-v3, no runtime
dispatch). Quote this beside a figure or a test run: docs/robustness.md, "Every CPU".
"""
import os

from .. import _cpu
from .._loader import _core


def cpu_info():
    """The CPU and the kernels' instruction sets in this process.

    Returns:
        dict with
        - ``"model"`` (str or None): the CPU's model name (Linux's /proc/cpuinfo; None elsewhere);
        - ``"flags"`` (list of str): those of ``avx2, fma, f16c, avx512f, avx512bw, avx512vl, avx512_vnni,
          avx512_bf16, avx512_fp16, amx_tile, amx_bf16`` that the CPU has (empty where they cannot be read);
        - ``"onednn_isa"`` (str): the ISA oneDNN's kernels use here (``"avx2"``, ``"avx512_core_bf16"``, ...), the
          CPU's best capped by ``ONEDNN_MAX_CPU_ISA``;
        - ``"onednn_max_cpu_isa"`` (str or None): that environment variable as oneDNN read it (None when unset);
        - ``"kiln_kernels"`` (str): ``"x86-64-v3"``, the one target Kiln's own kernels are compiled for.
    """
    model, flags = _cpu.cpu_model_and_flags()
    return {
        "model": model,
        "flags": [f for f in _cpu.REPORTED_FLAGS if flags and f in flags],
        "onednn_isa": _core._onednn_isa(),
        "onednn_max_cpu_isa": os.environ.get("ONEDNN_MAX_CPU_ISA"),
        "kiln_kernels": "x86-64-v3",
    }
