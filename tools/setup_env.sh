#!/usr/bin/env bash
# Sets up everything Kiln needs on a Debian 12 machine and installs Kiln into the project venv (.venv).
# Idempotent: each step is skipped when its result is already there, so a second run takes seconds.
#   1. Debian packages (apt-get, only those missing; needs root or sudo): cmake ninja-build ccache g++
#      libeigen3-dev libgtest-dev libgloo-dev libssl-dev (+ python3, python3-venv, python3-dev when Debian's python3
#      lacks them). libssl-dev: libcrypto's HMAC-SHA256 for the rendezvous handshake (docs/decisions/rendezvous-auth.md).
#   2. .venv (python3 -m venv) with numpy pytest hypothesis scikit-learn nanobind scikit-build-core pyyaml (the op
#      schema's generator, tools/gen_ops.py) ninja and the
#      oneDNN 3.2 wheels (onednn-cpu-gomp, onednn-devel-cpu-gomp == 2023.2.0), and ruff (pinned: the lint step of
#      run.sh test; docs/decisions/python-lint.md).
#   3. Kiln itself: `pip install --no-build-isolation -v .` (scikit-build-core; the CMake build dir
#      build/{wheel_tag} is kept and ccache is used, so rebuilds are incremental). Skipped when no source file
#      changed since the last install; KILN_FORCE_REBUILD=1 forces it. Its log: build/setup_env.log (printed
#      only when the build fails).
# Usage: tools/setup_env.sh        Environment: KILN_FORCE_REBUILD=1, PYTHON3 (the python that creates .venv)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
say() { echo "[setup] $*" >&2; }

# ---- 1. Debian packages ------------------------------------------------------------------------------------------
PYTHON3=${PYTHON3:-python3}
pkgs=(cmake ninja-build ccache g++ libeigen3-dev libgtest-dev libgloo-dev libssl-dev)
if ! command -v "$PYTHON3" >/dev/null 2>&1; then
  pkgs+=(python3 python3-venv python3-dev)
elif [ "$(command -v "$PYTHON3")" = /usr/bin/python3 ]; then
  # Debian's own python3 splits venv support and the C headers into separate packages.
  pkgs+=(python3-venv python3-dev)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if ! command -v apt-get >/dev/null 2>&1; then
    say "missing system packages (${missing[*]}) and no apt-get: install them by hand"; exit 1
  fi
  sudo=""
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null 2>&1 || { say "need root (or sudo) to install: ${missing[*]}"; exit 1; }
    sudo="sudo"
  fi
  say "apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq >/dev/null
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# ---- 2. The venv and the Python packages ------------------------------------------------------------------------
py=$root/.venv/bin/python
if [ -x "$py" ] && ! "$py" -c 'import sys' >/dev/null 2>&1; then
  say ".venv is broken (its base python is gone): recreating it"; rm -rf .venv
fi
if [ ! -x "$py" ]; then
  say "creating .venv"
  "$PYTHON3" -m venv .venv
fi
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
deps=(numpy pytest hypothesis scikit-learn nanobind scikit-build-core pyyaml protobuf pillow tqdm matplotlib "safetensors>=0.8" "ml_dtypes>=0.3"
      opencv-python-headless onnx onnxruntime google-crc32c "tensorboardX>=2.6"
      onednn-cpu-gomp==2023.2.0 onednn-devel-cpu-gomp==2023.2.0 ninja ruff==0.17.6)
deps_stamp=.venv/.kiln-deps
if [ "$(cat "$deps_stamp" 2>/dev/null)" != "${deps[*]}" ] || \
   [ ! -x .venv/bin/ruff ] || ! "$py" -c 'import numpy, pytest, hypothesis, sklearn, nanobind, scikit_build_core, yaml, google.protobuf, PIL, tqdm, matplotlib, safetensors, cv2, google_crc32c, tensorboardX, ml_dtypes' >/dev/null 2>&1; then
  say "pip install ${deps[*]}"
  "$py" -m pip install -q "${deps[@]}"
  echo "${deps[*]}" > "$deps_stamp"
fi

# ---- 3. Kiln, built and installed into the venv -----------------------------------------------------------------
# Fingerprint of everything the build reads (paths, sizes, modification times); build outputs are left out.
fingerprint() {
  find CMakeLists.txt pyproject.toml README.md include src python tools/find_dnnl.py tools/gen_ops.py -type f \
       ! -name '*.so' ! -name '*.pyc' ! -path '*/__pycache__/*' -printf '%p %s %T@\n' 2>/dev/null \
    | LC_ALL=C sort | sha1sum | cut -d' ' -f1
}
build_stamp=.venv/.kiln-build
fp=$(fingerprint)
installed_ok() {  # Kiln imports from the venv's site-packages (not from python/ of this tree)
  (cd / && env -u PYTHONPATH "$py" -c 'import kiln, sys; sys.exit("site-packages" not in kiln.__file__)') \
    >/dev/null 2>&1
}
if [ "${KILN_FORCE_REBUILD:-0}" != 1 ] && [ "$(cat "$build_stamp" 2>/dev/null)" = "$fp" ] && installed_ok; then
  exit 0
fi
mkdir -p build
log=build/setup_env.log
say "building and installing kiln into .venv (log: $log)"
start=$(date +%s)
# CMAKE_BUILD_PARALLEL_LEVEL: scikit-build-core passes it to the build tool (all cores).
if ! env -u PYTHONPATH CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
     "$py" -m pip install --no-build-isolation -v . >"$log" 2>&1; then
  say "building kiln FAILED; the end of $log:"
  tail -n 80 "$log" >&2
  exit 1
fi
if ! installed_ok; then
  say "kiln was installed but does not import from .venv:"
  (cd / && env -u PYTHONPATH "$py" -c 'import kiln; print(kiln.__file__)') >&2 || true
  exit 1
fi
echo "$fp" > "$build_stamp"
say "kiln installed in $(( $(date +%s) - start )) s"
