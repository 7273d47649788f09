#!/usr/bin/env bash
# Compares oneDNN builds on the float32 kernels Kiln runs on oneDNN (sgemm, the matmul primitive, a 3x3
# convolution forward and both backward passes): compiles benchmarks/onednn_compare.cpp once per oneDNN prefix
# (a directory with include/oneapi/dnnl and lib/libdnnl.so*), then runs the builds interleaved — round after round,
# for each thread count, each build in turn — and prints every run's lines and the best time per case.
# Decision and figures: docs/decisions/onednn-version.md.
#
# Usage:
#   benchmarks/bench_onednn_versions.sh [--rounds N] [--threads "1 2"] [--min-time S] PREFIX [PREFIX ...]
#   benchmarks/bench_onednn_versions.sh --make-venv DIR   # opt-in: a scratch venv with PyPI's onednn/onednn-devel
#                                                         # 2026.1.0 (oneDNN 3.13, ~2 GiB); then pass DIR as a PREFIX
# Kiln's own oneDNN (3.2, OpenMP) is the project venv: .venv. Thread counts are set with OMP_NUM_THREADS and the
# CPU affinity mask (taskset: TBB-threaded builds size their pool by it). A prefix holding libintelocl.so (PyPI's
# SYCL-runtime builds) gets OCL_ICD_FILENAMES pointed at it: its CPU engine runs through the OpenCL CPU runtime.
# Never run by the tests or CI.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
rounds=3; threads="1 2"; min_time=0.4; prefixes=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --min-time) min_time=$2; shift 2 ;;
    --make-venv)
      python3 -m venv "$2"
      "$2/bin/pip" install --quiet onednn==2026.1.0 onednn-devel==2026.1.0 tbb
      echo "made $2 (oneDNN from PyPI); pass it as a PREFIX"; exit 0 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) prefixes+=("$(cd "$1" && pwd)"); shift ;;
  esac
done
[ ${#prefixes[@]} -gt 0 ] || { echo "usage: $0 [--rounds N] [--threads \"1 2\"] PREFIX [PREFIX ...]" >&2; exit 1; }
ncpu=$(nproc)
out=$(mktemp -d /tmp/onednn_compare.XXXXXX)
bins=()
for i in "${!prefixes[@]}"; do
  p=${prefixes[$i]}
  [ -f "$p/include/oneapi/dnnl/dnnl.h" ] || { echo "no oneDNN headers under $p/include" >&2; exit 1; }
  bin="$out/onednn_compare_$i"
  g++ -O2 -std=c++17 -I"$p/include" "$here/onednn_compare.cpp" -L"$p/lib" -ldnnl -Wl,-rpath,"$p/lib" -o "$bin"
  bins+=("$bin")
done
echo "cpu: $(lscpu | sed -n 's/^Model name: *//p') | flags: $(grep -o -w -E 'avx512_bf16|avx512f|avx512_fp16|amx_bf16|avx2' /proc/cpuinfo | sort -u | tr '\n' ' ')| load: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 "$rounds"); do
  for t in $threads; do
    [ "$t" -le "$ncpu" ] || continue
    for i in "${!bins[@]}"; do
      p=${prefixes[$i]}
      env=(OMP_NUM_THREADS="$t" LD_LIBRARY_PATH="$p/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
      [ -f "$p/lib/libintelocl.so" ] && env+=(OCL_ICD_FILENAMES="$p/lib/libintelocl.so")
      env "${env[@]}" taskset -c "0-$((t - 1))" "${bins[$i]}" "$min_time" | sed "s|^|round=$r threads=$t lib=$i |" \
        | tee -a "$out/all.txt"
    done
  done
done
echo
echo "best over $rounds rounds (wall ms, process CPU ms; lib numbers: $(for i in "${!prefixes[@]}"; do printf '%s=%s ' "$i" "${prefixes[$i]}"; done))"
awk '/ case=/ { n = split($0, f, " "); key = ""; ms = 0; cpu = 0
       for (k = 1; k <= n; ++k) { if (f[k] ~ /^(threads|lib|case)=/) key = key " " f[k]
         if (f[k] ~ /^ms_min=/) { sub("ms_min=", "", f[k]); ms = f[k] + 0 }
         if (f[k] ~ /^cpu_ms_min=/) { sub("cpu_ms_min=", "", f[k]); cpu = f[k] + 0 } }
       if (!(key in best) || ms < best[key]) best[key] = ms
       if (!(key in bcpu) || cpu < bcpu[key]) bcpu[key] = cpu }
     END { for (k in best) printf "%s best_ms=%.3f best_cpu_ms=%.3f\n", k, best[k], bcpu[k] }' "$out/all.txt" | sort
echo "raw lines: $out/all.txt"
