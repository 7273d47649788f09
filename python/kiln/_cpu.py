"""The CPU that Kiln runs on, read before the native module loads (it needs no part of Kiln).

Kiln's C++ core is compiled for x86-64-v3 (AVX2, FMA, F16C, BMI1/2, LZCNT, MOVBE: every x86 server CPU since
Intel Haswell (2013) and AMD Excavator/Zen). On an older CPU its first vector instruction would kill the
interpreter with SIGILL, so `kiln._loader` calls `check_x86_64_v3()` first and raises a clear ImportError instead.
"""
import platform

# The CPU flags (as /proc/cpuinfo spells them) that x86-64-v3 requires beyond x86-64-v2.
X86_64_V3_FLAGS = ("avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "movbe", "abm")

# Flags worth reporting beside a figure or a test run: they decide which kernels oneDNN picks.
REPORTED_FLAGS = ("avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512_vnni", "avx512_bf16",
                  "avx512_fp16", "amx_tile", "amx_bf16")


def cpu_model_and_flags(path="/proc/cpuinfo"):
    """(model name, set of flags) of the first processor in `path` (Linux's /proc/cpuinfo format); (None, None)
    where the file is missing or unreadable (another OS)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read(1 << 20)
    except OSError:
        return None, None
    model, flags = None, None
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if not sep:
            continue
        key = key.strip()
        if key == "model name" and model is None:
            model = value.strip()
        elif key == "flags" and flags is None:
            flags = set(value.split())
        if model is not None and flags is not None:
            break
    return model, flags


def check_x86_64_v3(path="/proc/cpuinfo"):
    """Raises ImportError naming the missing flags when this is an x86-64 CPU without x86-64-v3; returns None
    otherwise (also when the flags cannot be read: the check is skipped rather than guessed)."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return
    model, flags = cpu_model_and_flags(path)
    if flags is None:
        return
    missing = [f for f in X86_64_V3_FLAGS if f not in flags]
    if missing:
        raise ImportError(
            f"Kiln's native module is built for x86-64-v3 (AVX2, FMA, F16C, BMI1/2, LZCNT, MOVBE), but this CPU "
            f"({model or 'unknown model'}) lacks {', '.join(missing)}: loading it would stop the interpreter with an "
            "illegal instruction. Build Kiln for this CPU (CMakeLists.txt: -march) or use a newer one.")
