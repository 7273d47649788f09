#!/usr/bin/env bash
# Creates benchmarks/.venv-peers, a venv of its own (the project's .venv stays lean), with the frameworks that
# bench_train_step.py compares Kiln with (and torchvision + timm, bench_zoo.py's zoo models) -- each from PyPI, each
# tried on its own (one that fails is reported and skipped) -- and Kiln built from this repository. Heavy (several
# GB: PyPI's Linux torch wheel is a CUDA build); never run by the tests or CI.
#   benchmarks/setup_peers.sh            everything
#   benchmarks/setup_peers.sh --kiln     only (re)install Kiln into the peers venv (after changing Kiln)
#   benchmarks/setup_peers.sh --only torch[,jax,mlx,mindspore,kiln]
#                                        only these (e.g. `--only torch` for bench_op_calls.py, whose torch child
#                                        needs neither Kiln nor the other peers); the others are left as they are
# What installed is written to benchmarks/.venv-peers/peers.txt and printed at the end.
#
# Findings on Debian 12 / Python 3.11 / x86_64 (2 cores):
#   torch      `pip install torch` works: ~5 GB with its nvidia-* / triton dependencies (~1 min at PyPI speed).
#              torchvision + timm (bench_zoo.py) come with it: torch 2.15.0 -> torchvision 0.29.2, timm 1.0.31.
#              `--no-deps` plus the pure-Python deps does NOT work: PyPI's Linux wheel links the CUDA libraries
#              (ImportError: libcufile.so.0), and PyPI has no CPU-only wheel. So the full install comes first,
#              the --no-deps route is kept only as a fallback for machines where it might import.
#   jax        `pip install "jax[cpu]"` (jax + jaxlib, ~100 MB).
#   mlx        `pip install "mlx[cpu]"` (mlx + mlx-cpu: the Linux CPU build).
#   mindspore  `pip install mindspore` (2.x; runs on CPU, warns about a missing GPU plugin).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
venv=$here/.venv-peers
py=$venv/bin/python
status=$venv/peers.txt
PYTHON3=${PYTHON3:-python3}
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1

say() { echo "[peers] $*" >&2; }
record() {  # name, result: replaces the name's line in $status
  { grep -v "^$1:" "$status" 2>/dev/null; echo "$1: $2"; } > "$status.new"; mv "$status.new" "$status"
  say "$1: $2"
}
pipq() { "$py" -m pip install -q "$@"; }

install_kiln() {
  # One wheel, built by the project venv in its kept build dir (incremental), installed into the peers venv.
  bash "$root/tools/setup_env.sh" || { record kiln "FAILED (tools/setup_env.sh)"; return 1; }
  local wheels=$root/build/peers-wheel
  rm -rf "$wheels"
  if ! (cd "$root" && env -u PYTHONPATH .venv/bin/python -m pip wheel -q --no-build-isolation --no-deps \
          -w "$wheels" . >"$root/build/peers-wheel.log" 2>&1); then
    tail -n 40 "$root/build/peers-wheel.log" >&2; record kiln "FAILED (wheel build, see build/peers-wheel.log)"
    return 1
  fi
  pipq --force-reinstall --no-deps "$wheels"/kiln-*.whl && pipq numpy "onednn-cpu-gomp==2023.2.0" &&
    (cd / && "$py" -c 'import kiln, kiln.nn') >/dev/null 2>&1 &&
    record kiln "ok ($(cd / && "$py" -c 'import kiln; print(kiln.__version__)'))" ||
    record kiln "FAILED (does not import in the peers venv)"
}

check_import() {  # name, python statement
  (cd / && "$py" -c "$2") >/dev/null 2>&1
}

only=",torch,jax,mlx,mindspore,kiln,"
if [ "${1:-}" = "--only" ]; then
  [ -n "${2:-}" ] || { say "--only needs a comma-separated list of: torch jax mlx mindspore kiln"; exit 2; }
  for n in ${2//,/ }; do
    case "$n" in torch|jax|mlx|mindspore|kiln) ;; *) say "--only: unknown peer '$n' (torch jax mlx mindspore kiln)"; exit 2;; esac
  done
  only=",$2,"
elif [ -n "${1:-}" ] && [ "$1" != "--kiln" ]; then
  say "unknown option '$1' (none, --kiln, or --only LIST)"; exit 2
fi
want() { [[ "$only" == *",$1,"* ]]; }

if [ ! -x "$py" ]; then
  say "creating $venv"
  "$PYTHON3" -m venv "$venv" || exit 1
fi
if [ "${1:-}" = "--kiln" ]; then
  install_kiln; cat "$status"; exit $?
fi

pipq --upgrade pip >/dev/null 2>&1 || true
pipq numpy || { say "pip cannot install numpy: no PyPI?"; exit 1; }

# PyTorch (eager and torch.compile; torch.compile's CPU backend also needs g++, which tools/setup_env.sh installs).
torch_ok='import torch; torch.nn.Linear(4, 2)(torch.randn(3, 4)).sum().item()'
if ! want torch; then :
elif pipq torch && check_import torch "$torch_ok"; then
  record torch "ok, full install ($("$py" -c 'import torch; print(torch.__version__)'))"
else
  say "full torch install failed; trying --no-deps + minimal deps"
  pipq --no-deps torch && pipq filelock fsspec jinja2 networkx sympy typing_extensions
  if check_import torch "$torch_ok"; then
    record torch "ok, --no-deps install ($("$py" -c 'import torch; print(torch.__version__)'))"
  else
    record torch "FAILED (neither the full nor the --no-deps install imports)"
  fi
fi
# torchvision and timm: the zoo models of bench_zoo.py (resnet18/50, mobilenet_v3_small; vit_tiny_patch16_224).
# torchvision's wheel pins the torch it was built for: pip picks the release that matches the torch above.
zoo_ok='import torchvision, timm; torchvision.models.resnet18(num_classes=10); timm.create_model("vit_tiny_patch16_224", num_classes=10)'
if ! want torch; then :
elif pipq torchvision timm && check_import torchvision "$zoo_ok"; then
  record torchvision "ok ($("$py" -c 'import torchvision, timm; print(torchvision.__version__, "timm", timm.__version__)'))"
else
  record torchvision "FAILED (bench_zoo.py reports PyTorch as not installed)"
fi

if ! want jax; then :
elif pipq "jax[cpu]" && check_import jax 'import jax.numpy as jnp; float(jnp.ones(3).sum())'; then
  record jax "ok ($("$py" -c 'import jax; print(jax.__version__)'))"
else
  record jax "FAILED"
fi

if ! want mlx; then :
elif { pipq "mlx[cpu]" || pipq mlx mlx-cpu; } && check_import mlx 'import mlx.core as mx; mx.eval(mx.ones(3).sum())'; then
  record mlx "ok ($("$py" -c 'from importlib.metadata import version; print(version("mlx"))'))"
else
  record mlx "FAILED (no MLX build for this platform on PyPI?)"
fi

if ! want mindspore; then :
elif pipq mindspore && check_import mindspore 'import mindspore'; then
  record mindspore "ok ($(GLOG_v=3 "$py" -c 'import mindspore; print(mindspore.__version__)' 2>/dev/null))"
else
  record mindspore "FAILED"
fi

if want kiln; then install_kiln; fi
echo
echo "peers venv: $venv ($(du -sh "$venv" | cut -f1))"
cat "$status"
