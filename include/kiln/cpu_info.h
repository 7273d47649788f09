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

#include "kiln/dtype.h"

namespace kiln::cpu_info {

// Note [low-precision path]: how BFloat16 / Float16 MatMul (BatchMatMul) and the three Conv2D kernels compute
// (MatMulBiasAct is Float32-only: the graph pass fuses Float32 Dense layers only) (docs/amp.md, "What runs natively in low precision on this CPU"):
// - "native": on oneDNN's bf16 / f16 primitives (operands in the low-precision type, products accumulated in
//   float32 by oneDNN, one rounding into the output);
// - "float32": the operands are widened to float32, the float32 kernels run, the result is rounded once.
// The setting comes from the environment variable KILN_LOW_PRECISION (auto | native | float32; read at the first
// low-precision kernel, default auto) unless set_low_precision_mode changed it. auto takes the native path where
// the CPU has the instructions that make it fast (bfloat16: AMX_BF16, or AVX512_BF16 on AMD cores; float16:
// AVX512_FP16 or AMX_FP16; native_low_precision_fast) and oneDNN can create the primitives (ONEDNN_MAX_CPU_ISA may cap it below them); native takes it
// wherever oneDNN can create the primitives (also oneDNN's emulated bf16 on plain AVX-512) and is an error
// elsewhere; float32 never takes it.
enum class LowPrecisionMode { Auto, Native, Float32 };

// The setting in effect (the environment's on first use; see Note [low-precision path]). Throws ValueError if
// KILN_LOW_PRECISION holds anything but auto, native or float32 (any case).
LowPrecisionMode low_precision_mode();

// Sets the mode for the rest of the process (overrides KILN_LOW_PRECISION). Throws RuntimeError, naming the CPU
// flags missing, when `m` is Native and this CPU cannot run oneDNN's bfloat16 primitives (the mode is then left
// unchanged). Thread-safe.
void set_low_precision_mode(LowPrecisionMode m);

// Whether oneDNN can create `dt`'s (BFloat16 or Float16) matmul and convolution primitives in this process:
// decided once per dtype by creating two small ones; false for other dtypes. Never throws.
bool native_low_precision_supported(DType dt);

// Whether the CPU has the instructions that make `dt`'s native path faster than the float32 path (BFloat16:
// amx_bf16, or avx512_bf16 on an AMD core -- on Intel cores without AMX it is slower, Note [bfloat16 speed by
// core] in cpu_info.cpp; Float16: avx512_fp16 or amx_fp16), read with CPUID. Never throws.
bool native_low_precision_fast(DType dt);

// The path a `dt` (BFloat16 or Float16) kernel takes now: true = native. Throws RuntimeError naming `op` (when
// given) and the missing CPU flags when the mode is Native and native_low_precision_supported(dt) is false; a bad
// KILN_LOW_PRECISION raises ValueError. Cheap after the first call.
bool use_native_low_precision(DType dt, const char* op = nullptr);

// The path of `dt` as a word for reports: "native", "float32", or, when the mode is Native on a CPU that cannot
// run it, "unavailable: <the error use_native_low_precision would raise>". Never throws.
std::string low_precision_path(DType dt);

// Test hook (Note [low-precision path]): while on, Float32 MatMul runs the native path's code (oneDNN matmul
// primitives, here with f32 operands) instead of sgemm, so that a CPU without bf16 primitives still tests that
// code's layouts, batching and caching. Off by default; not part of the public API.
void set_route_float32_through_native(bool on);
bool route_float32_through_native();

}  // namespace kiln::cpu_info
