"""`kiln.runtime.cpu_info()`: which CPU code paths this process runs (Kiln's own extension; MindSpore has none).

Numbers from oneDNN's kernels (matmul, convolution) can differ in their last bits from one instruction set to the
next (its kernels sum in ISA-specific orders); Kiln's own kernels cannot (one build for x86-64-v3, no runtime
dispatch). Quote this beside a figure or a test run: docs/robustness.md, "Every CPU".

bfloat16/float16 matmul and convolution run on oneDNN's native low-precision kernels or in float32 (docs/amp.md,
"What runs natively in low precision on this CPU"): `set_low_precision` / the environment variable
KILN_LOW_PRECISION pick, `low_precision()` and `cpu_info()["low_precision"]` report.
"""
import os

from .. import _cpu
from .. import _engine


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
        - ``"kiln_kernels"`` (str): ``"x86-64-v3"``, the one target Kiln's own kernels are compiled for;
        - ``"low_precision"`` (dict): what `low_precision()` returns.
    """
    model, flags = _cpu.cpu_model_and_flags()
    return {
        "model": model,
        "flags": [f for f in _cpu.REPORTED_FLAGS if flags and f in flags],
        "onednn_isa": _engine._onednn_isa(),
        "onednn_max_cpu_isa": os.environ.get("ONEDNN_MAX_CPU_ISA"),
        "kiln_kernels": "x86-64-v3",
        "low_precision": low_precision(),
    }


_MODES = ("auto", "native", "float32")


def low_precision():
    """Which path bfloat16/float16 MatMul, BatchMatMul and Conv2D (forward and both gradients) take here.

    Returns:
        dict with
        - ``"mode"`` (str): ``"auto"``, ``"native"`` or ``"float32"``: `set_low_precision`'s last value, else the
          environment variable ``KILN_LOW_PRECISION`` (default ``"auto"``);
        - ``"bfloat16"``, ``"float16"`` (str): ``"native"`` (oneDNN's bf16/f16 primitives, float32 accumulation),
          ``"float32"`` (widened to float32, the float32 kernels, one rounding), or ``"unavailable: <reason>"`` when
          the mode is ``"native"`` and this CPU cannot run that dtype's primitives (its kernels then raise
          RuntimeError with that reason);
        - ``"supported"`` (dict): per dtype, whether oneDNN creates its primitives on this CPU at all;
        - ``"fast"`` (dict): per dtype, whether the CPU has the instructions that make them faster than float32
          (bfloat16: amx_bf16, or avx512_bf16 on an AMD core -- Intel cores without AMX run it at half their
          float32 rate; float16: avx512_fp16 or amx_fp16). ``"auto"`` takes the native path where both hold.

    Raises:
        ValueError: ``KILN_LOW_PRECISION`` holds something else than auto, native or float32.
    """
    dts = ("bfloat16", "float16")
    return {
        "mode": _engine._low_precision_mode(),
        **{d: _engine._low_precision_path(d) for d in dts},
        "supported": {d: _engine._native_low_precision_supported(d) for d in dts},
        "fast": {d: _engine._native_low_precision_fast(d) for d in dts},
    }


def set_low_precision(mode):
    """Sets how bfloat16/float16 matmul and convolution kernels compute, for the rest of the process.

    Args:
        mode (str): in any case, as the environment variable (``"AUTO"`` is ``"auto"``): ``"auto"`` (native where the CPU has avx512_bf16/amx_bf16 resp. avx512_fp16/amx_fp16 and oneDNN
            creates the primitives, else float32), ``"native"`` (oneDNN's bf16/f16 primitives wherever oneDNN
            creates them; a float16 kernel raises where only bfloat16 ones exist) or ``"float32"`` (always widen to
            float32). Overrides the environment variable ``KILN_LOW_PRECISION``.

    Raises:
        ValueError: `mode` is not a string naming one of the three.
        RuntimeError: `mode` is ``"native"`` and oneDNN cannot create bfloat16 primitives on this CPU; the message
            names the CPU flags missing, and the mode is left as it was.
    """
    if not isinstance(mode, str) or mode.lower() not in _MODES:
        raise ValueError(f"kiln.runtime.set_low_precision: mode must be one of {_MODES} (any case, as "
                         f"KILN_LOW_PRECISION), but got {mode!r}.")
    _engine._set_low_precision_mode(mode.lower())
