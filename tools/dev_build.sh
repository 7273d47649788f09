#!/usr/bin/env bash
# Development build: compiles the core, the extension and (with --tests) the GoogleTest suite into
# build/${KILN_BUILD_NAME:-dev}, then places kiln/_core*.so into python/kiln so that `PYTHONPATH=python`
# imports the fresh build. Needs the project venv (.venv) from tools/setup_env.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
. .venv/bin/activate
name=${KILN_BUILD_NAME:-dev}
tests=OFF; [ "${1:-}" = "--tests" ] && tests=ON
cmake -S . -B "build/$name" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKILN_BUILD_TESTS=$tests \
      -DPython_EXECUTABLE="$(command -v python)" >/dev/null
cmake --build "build/$name" -j2
so=$(ls "build/$name"/_core*.so)
cp "$so" "python/kiln/.tmp_core_$$.so" && mv "python/kiln/.tmp_core_$$.so" "python/kiln/$(basename "$so")"
echo "built $so -> python/kiln/"
