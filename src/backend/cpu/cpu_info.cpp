// kiln/cpu_info.h: the oneDNN ISA in effect.
#include "kiln/cpu_info.h"

#include <oneapi/dnnl/dnnl.h>

#include <cstdio>

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

}  // namespace kiln::cpu_info
