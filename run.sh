#!/usr/bin/env bash
# Kiln's two entry points. Both first run tools/setup_env.sh (Debian packages, .venv, build + install of Kiln;
# a no-op when everything is in place).
#   ./run.sh train [args]   trains LeNet-5 through kiln.dataset and Model on MNIST-format files
#                           (examples/train_mnist_model.py [args]; ./run.sh train-mlp: examples/train_mlp.py)
#   ./run.sh test           lint (ruff check + tools/check_noqa.py), C++ tests (GoogleTest via ctest), Python tests
#                           (pytest, against the installed Kiln),
#                           then the seed programs through `python -m kiln.compat` (../shared/acceptance, if present)
# Seed checks: KILN_SEED_CHECKS selects which of check_seeds.sh's checks run, by name, separated by ';'
# (default: the ones expected to pass now, DEFAULT_SEED_CHECKS below); KILN_SEED_CHECKS=all (or
# `./run.sh test --all-seeds`) runs them all.
set -euo pipefail
cd "$(dirname "$0")"
root=$PWD
py=$root/.venv/bin/python
unset PYTHONPATH  # what is tested is what setup_env.sh installed into .venv, never python/ of this tree

# The seed checks expected to pass at this stage: all of them since Graph mode / @jit landed. (Before, this was
# "seed 1, PyNative"; a list of check names separated by ';' selects some.)
DEFAULT_SEED_CHECKS=all

usage() {
  sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//' >&2
}

step() { echo; echo "=== $* ==="; }

# Lint (docs/decisions/python-lint.md): ruff with pyproject.toml's [tool.ruff] rules, then every `# noqa` must name
# its codes and give a reason. Seconds; a finding fails the run like a failing test.
run_lint() {
  step "lint (ruff check, tools/check_noqa.py)"
  "$root/.venv/bin/ruff" check --no-cache "$root" || return 1
  "$py" "$root/tools/check_noqa.py" || return 1
}

run_cpp_tests() {
  step "C++ tests (build/cpp-tests)"
  if ! compgen -G "tests/cpp/*.cpp" >/dev/null; then
    echo "no C++ tests in tests/cpp"; return 0
  fi
  # (Called in a `||` list, where set -e is off: every step returns explicitly.)
  cmake -S . -B build/cpp-tests -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DKILN_BUILD_TESTS=ON -DKILN_BUILD_PYTHON=OFF -DPython_EXECUTABLE="$py" >/dev/null || return 1
  cmake --build build/cpp-tests -j"$(nproc)" || return 1
  ctest --test-dir build/cpp-tests --output-on-failure -j"$(nproc)" || return 1
}

run_python_tests() {
  step "Python tests (pytest tests/python, installed kiln)"
  (cd / && "$py" -c 'import kiln; print("testing", kiln.__file__)') || return 1
  print_cpu || return 1
  # cwd = repo root (no `kiln` package there; python/ is never put on sys.path).
  "$py" -m pytest -q --rootdir="$root" tests/python || return 1
}

# The CPU the tests run on: its model, the flags that decide oneDNN's kernels, and the ISA oneDNN uses
# (kiln.runtime.cpu_info). Printed before the Python tests; docs/robustness.md, "Every CPU".
print_cpu() {
  (cd / && "$py" "$root/tools/cpu_report.py")
}

# The tests whose numbers depend on which kernels oneDNN picks: the op registry and the kernel tests.
ISA_SENSITIVE_TESTS=(tests/python/test_op_registry.py tests/python/test_transformer_kernels.py
  tests/python/test_amp_kernels.py tests/python/test_vector_kernels.py tests/python/test_threaded_kernels.py
  tests/python/test_fast_conv_bn_pool.py tests/python/test_layer_norm_fused.py tests/python/test_conv_pool_norm.py
  tests/python/test_edge_inputs_linalg_conv.py)

# On a CPU above AVX2 (AVX-512: Zen 4, Intel since Skylake-SP), the ISA-sensitive tests a second time with oneDNN
# capped at AVX2 (ONEDNN_MAX_CPU_ISA), so that one machine covers both kinds of this project's machines.
run_isa_capped_tests() {
  step "ISA-sensitive tests with oneDNN capped at AVX2"
  if ! grep -qw avx512f /proc/cpuinfo 2>/dev/null; then
    echo "this CPU has no AVX-512: the run above already used oneDNN's AVX2 kernels; skipped"; return 0
  fi
  (export ONEDNN_MAX_CPU_ISA=AVX2; print_cpu) || return 1
  ONEDNN_MAX_CPU_ISA=AVX2 "$py" -m pytest -q --rootdir="$root" "${ISA_SENSITIVE_TESTS[@]}" || return 1
}

run_seed_checks() {
  local selected=$1 shared acc tmp
  shared=$(cd .. && pwd)/shared
  acc=$shared/acceptance/check_seeds.sh
  step "Seed programs through python -m kiln.compat (checks: $selected)"
  if [ ! -f "$acc" ]; then
    echo "no $acc: skipped"; return 0
  fi
  if [ "$selected" = all ]; then
    bash "$acc" "$py" || return 1
    return 0
  fi
  # A copy of check_seeds.sh with only the selected `check "<name>" ...` lines (it finds ../seeds beside it).
  tmp=$(mktemp -d)
  mkdir "$tmp/acceptance"
  ln -s "$shared/seeds" "$tmp/seeds"
  awk -v sel="$selected" '
    BEGIN { n = split(sel, names, ";"); for (i = 1; i <= n; i++) keep[names[i]] = 1 }
    /^check "/ { name = $0; sub(/^check "/, "", name); sub(/".*/, "", name); if (!(name in keep)) next }
    { print }
  ' "$acc" > "$tmp/acceptance/check_seeds.sh"
  local want have rc=0
  want=$(awk -F';' '{ print NF }' <<<"$selected")
  have=$(grep -c '^check "' "$tmp/acceptance/check_seeds.sh" || true)
  if [ "$have" != "$want" ]; then
    echo "run.sh: $want seed check(s) selected ('$selected'), $have found in $acc"; rc=1
  else
    bash "$tmp/acceptance/check_seeds.sh" "$py" || rc=1
  fi
  rm -rf "$tmp"
  return $rc
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case "$cmd" in
  train)
    bash tools/setup_env.sh
    exec "$py" examples/train_mnist_model.py "$@"
    ;;
  train-mlp)
    bash tools/setup_env.sh
    exec "$py" examples/train_mlp.py "$@"
    ;;
  test)
    seeds=${KILN_SEED_CHECKS:-$DEFAULT_SEED_CHECKS}
    for a in "$@"; do
      case "$a" in
        --all-seeds) seeds=all ;;
        *) echo "run.sh test: unknown argument $a" >&2; usage; exit 2 ;;
      esac
    done
    start=$(date +%s)
    bash tools/setup_env.sh
    failed=()
    run_lint || failed+=("lint")
    run_cpp_tests || failed+=("C++ tests")
    run_python_tests || failed+=("Python tests")
    run_isa_capped_tests || failed+=("AVX2-capped tests")
    run_seed_checks "$seeds" || failed+=("seed checks")
    echo
    if [ ${#failed[@]} -gt 0 ]; then
      echo "FAILED: ${failed[*]} ($(( $(date +%s) - start )) s)"
      exit 1
    fi
    echo "all tests passed ($(( $(date +%s) - start )) s)"
    ;;
  -h|--help|help)
    usage
    ;;
  *)
    usage; exit 2
    ;;
esac
