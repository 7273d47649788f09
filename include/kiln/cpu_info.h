// What the CPU offers Kiln's kernels: the instruction set that oneDNN's JIT kernels run with in this process.
// Kiln's own kernels are compiled once for x86-64-v3 (AVX2, FMA, F16C, BMI2) and have no runtime dispatch; oneDNN
// picks its kernels per CPU at run time (docs/robustness.md, "Every CPU").
#pragma once

#include <string>

namespace kiln::cpu_info {

// The instruction set oneDNN's kernels use in this process, as oneDNN's dnnl_cpu_isa_t name without its prefix:
// "sse41", "avx", "avx2", "avx2_vnni", "avx2_vnni_2", "avx512_core", "avx512_core_vnni", "avx512_core_bf16",
// "avx512_core_fp16", "avx512_core_amx", "avx512_core_amx_fp16", or "unknown (0x..)" for a value this build does
// not name. It is the CPU's best ISA capped by the environment variable ONEDNN_MAX_CPU_ISA, which oneDNN reads once,
// at its first use in the process. Never throws.
std::string onednn_isa();

}  // namespace kiln::cpu_info
