// kiln/cpu_info.h: the oneDNN ISA in effect and the low-precision path (Note [low-precision path]).
#include "kiln/cpu_info.h"

#include <cpuid.h>
#include <oneapi/dnnl/dnnl.h>

#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "kiln/error.h"

namespace kiln::cpu_info {

std::string onednn_isa() {
  const dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
  switch (isa) {
    case dnnl_cpu_isa_sse41: return "sse41";
    case dnnl_cpu_isa_avx: return "avx";
    case dnnl_cpu_isa_avx2: return "avx2";
    case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
    case dnnl_cpu_isa_avx2_vnni_2: return "avx2_vnni_2";
    case dnnl_cpu_isa_avx512_core: return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_fp16: return "avx512_core_fp16";
    case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
    case dnnl_cpu_isa_avx512_core_amx_fp16: return "avx512_core_amx_fp16";
    default: break;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "unknown (0x%x)", unsigned(isa));
  return buf;
}

namespace {

// CPUID leaf 7 (sub-leaf 0 and 1) feature bits (Intel SDM vol. 2A, CPUID; AMD APM vol. 3, same positions).
struct Leaf7 { unsigned ebx0 = 0, edx0 = 0, eax1 = 0; };
Leaf7 leaf7() {
  Leaf7 r;
  unsigned a, b, c, d;
  if (__get_cpuid_max(0, nullptr) < 7) return r;
  __cpuid_count(7, 0, a, b, c, d);
  r.ebx0 = b;
  r.edx0 = d;
  __cpuid_count(7, 1, a, b, c, d);
  r.eax1 = a;
  return r;
}
bool bit(unsigned v, int i) { return (v >> i) & 1u; }

// The flags (Linux /proc/cpuinfo spelling) relevant to oneDNN's low-precision kernels that this CPU has.
std::string lowp_flags_present() {
  const Leaf7 l = leaf7();
  std::string s;
  auto add = [&](bool on, const char* name) { if (on) s += (s.empty() ? "" : " ") + std::string(name); };
  add(__builtin_cpu_supports("avx2"), "avx2");
  add(bit(l.ebx0, 16), "avx512f");
  add(bit(l.ebx0, 30), "avx512bw");
  add(bit(l.ebx0, 31), "avx512vl");
  add(bit(l.eax1, 5), "avx512_bf16");
  add(bit(l.edx0, 23), "avx512_fp16");
  add(bit(l.edx0, 22), "amx_bf16");
  add(bit(l.eax1, 21), "amx_fp16");
  return s.empty() ? "none of them" : s;
}

// Tries to create a small matmul (f32 destination) and a 3x3 convolution primitive of oneDNN data type dt.
bool probe(dnnl_data_type_t dt) {
  dnnl_engine_t eng = nullptr;
  if (dnnl_engine_create(&eng, dnnl_cpu, 0) != dnnl_success) return false;
  bool ok = true;
  auto md = [&](std::initializer_list<int64_t> dims, dnnl_data_type_t t, dnnl_format_tag_t tag) {
    dnnl_dims_t d{};
    int n = 0;
    for (int64_t v : dims) d[n++] = v;
    dnnl_memory_desc_t m = nullptr;
    if (dnnl_memory_desc_create_with_tag(&m, n, d, t, tag) != dnnl_success) ok = false;
    return m;
  };
  dnnl_memory_desc_t a = md({16, 16}, dt, dnnl_ab), b = md({16, 16}, dt, dnnl_ab), c = md({16, 16}, dnnl_f32, dnnl_ab);
  dnnl_memory_desc_t s = md({1, 16, 8, 8}, dt, dnnl_format_tag_any), w = md({16, 16, 3, 3}, dt, dnnl_format_tag_any);
  dnnl_memory_desc_t y = md({1, 16, 8, 8}, dt, dnnl_format_tag_any);
  dnnl_primitive_desc_t pd = nullptr;
  ok = ok && dnnl_matmul_primitive_desc_create(&pd, eng, a, b, nullptr, c, nullptr) == dnnl_success;
  if (pd) dnnl_primitive_desc_destroy(pd);
  pd = nullptr;
  dnnl_dims_t st{1, 1}, dil{0, 0}, pad{1, 1};
  ok = ok && dnnl_convolution_forward_primitive_desc_create(&pd, eng, dnnl_forward_training, dnnl_convolution_direct,
                                                            s, w, nullptr, y, st, dil, pad, pad,
                                                            nullptr) == dnnl_success;
  if (pd) dnnl_primitive_desc_destroy(pd);
  for (auto m : {a, b, c, s, w, y})
    if (m) dnnl_memory_desc_destroy(m);
  dnnl_engine_destroy(eng);
  return ok;
}

// 0 auto, 1 native, 2 float32; -1 not read yet.
std::atomic<int> g_mode{-1};
std::atomic<bool> g_route_f32{false};

int read_env_mode() {
  const char* e = std::getenv("KILN_LOW_PRECISION");
  if (!e || !*e) return 0;
  std::string v(e);
  for (auto& ch : v) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  if (v == "auto") return 0;
  if (v == "native") return 1;
  if (v == "float32") return 2;
  KILN_FAIL(Value, "KILN_LOW_PRECISION must be 'auto', 'native' or 'float32', but got '", e, "'.");
}

int mode_int() {
  int m = g_mode.load(std::memory_order_acquire);
  if (m >= 0) return m;
  int want = read_env_mode();  // throws on a bad value, leaving the mode unread (the next call throws again)
  int expected = -1;
  g_mode.compare_exchange_strong(expected, want, std::memory_order_acq_rel);
  return g_mode.load(std::memory_order_acquire);
}

std::string missing_message(DType dt, const char* op = nullptr) {
  const bool bf = dt == DType::BFloat16;
  std::string capped;
  if (const char* cap = std::getenv("ONEDNN_MAX_CPU_ISA"))
    capped = std::string(" (ONEDNN_MAX_CPU_ISA=") + cap + " caps oneDNN's kernels at that ISA)";
  return (op ? std::string("For '") + op + "', " : std::string()) + "KILN_LOW_PRECISION=native: oneDNN cannot create " + dtype_name(dt) +
         " matmul/convolution primitives on this CPU" + capped + ". They need " +
         (bf ? "avx512_bf16 or amx_bf16 (oneDNN also emulates bfloat16 with avx512f, avx512bw and avx512vl)"
             : "avx512_fp16 or amx_fp16") +
         "; this CPU has " + lowp_flags_present() + " (oneDNN's ISA here: " + onednn_isa() +
         "). Use KILN_LOW_PRECISION=auto or float32 (kiln.runtime.set_low_precision) to compute " + dtype_name(dt) +
         " in float32.";
}

}  // namespace

bool native_low_precision_supported(DType dt) {
  if (dt == DType::BFloat16) {
    static const bool ok = probe(dnnl_bf16);
    return ok;
  }
  if (dt == DType::Float16) {
    static const bool ok = probe(dnnl_f16);
    return ok;
  }
  return false;
}

// Whether CPUID's vendor string is "AuthenticAMD".
bool vendor_amd() {
  unsigned a, b, c, d;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return false;
  char v[13];
  std::memcpy(v, &b, 4);
  std::memcpy(v + 4, &d, 4);
  std::memcpy(v + 8, &c, 4);
  v[12] = 0;
  return std::strcmp(v, "AuthenticAMD") == 0;
}

bool native_low_precision_fast(DType dt) {
  const Leaf7 l = leaf7();
  // Note [bfloat16 speed by core]: AVX512_BF16's VDPBF16PS pays off only where float32 FMA does not already use
  // the full 512-bit datapath. AMD Zen 4/5 (AVX-512 on 256-bit units) double their float32 rate with it (issue 25:
  // 1024^3 on Zen 4, 1 thread, PyTorch bf16 200 against float32 102 GFLOP/s). Intel cores with AVX512_BF16 but no
  // AMX (Cooper Lake; Sapphire/Emerald Rapids where the hypervisor hides AMX) issue it on one port against two for
  // FMA: measured on such a Xeon (family 6 model 207, 1 thread, oneDNN 3.2), 1024^3 native bf16 90 GFLOP/s, the
  // float32 path (widen, sgemm, round) 144, float32 179 -- there the float32 path is the faster one. AMX tiles
  // (amx_bf16) are fast on every core that has them.
  if (dt == DType::BFloat16) return bit(l.edx0, 22) || (bit(l.eax1, 5) && vendor_amd());
  if (dt == DType::Float16) return bit(l.edx0, 23) || bit(l.eax1, 21);
  return false;
}

LowPrecisionMode low_precision_mode() {
  switch (mode_int()) {
    case 1: return LowPrecisionMode::Native;
    case 2: return LowPrecisionMode::Float32;
    default: return LowPrecisionMode::Auto;
  }
}

void set_low_precision_mode(LowPrecisionMode m) {
  if (m == LowPrecisionMode::Native && !native_low_precision_supported(DType::BFloat16))
    KILN_FAIL(Runtime, missing_message(DType::BFloat16));
  g_mode.store(m == LowPrecisionMode::Native ? 1 : m == LowPrecisionMode::Float32 ? 2 : 0, std::memory_order_release);
}

bool use_native_low_precision(DType dt, const char* op) {
  switch (mode_int()) {
    case 2: return false;
    case 1:
      if (!native_low_precision_supported(dt)) KILN_FAIL(Runtime, missing_message(dt, op));
      return true;
    default: {
      if (dt == DType::BFloat16) {
        static const bool yes = native_low_precision_fast(dt) && native_low_precision_supported(dt);
        return yes;
      }
      if (dt == DType::Float16) {
        static const bool yes = native_low_precision_fast(dt) && native_low_precision_supported(dt);
        return yes;
      }
      return false;
    }
  }
}

std::string low_precision_path(DType dt) {
  try {
    return use_native_low_precision(dt) ? "native" : "float32";
  } catch (const Error& e) {
    return std::string("unavailable: ") + e.what();
  }
}

void set_route_float32_through_native(bool on) { g_route_f32.store(on, std::memory_order_relaxed); }
bool route_float32_through_native() { return g_route_f32.load(std::memory_order_relaxed); }

}  // namespace kiln::cpu_info
