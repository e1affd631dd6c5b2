#!/usr/bin/env bash
# The GPU benchmark set on one CUDA GPU, in under 8 minutes; writes bench/out/results.json
# (raw figures and the flat `ratios` map, as `make bench` does).
#
#   bench/gpu.sh [more bench.run arguments]
#
# Measures, on backend mjwarp (MuJoCo Warp, step captured as a CUDA graph) on cuda:
# env vs raw stepping for quadrotor-hover and quadruped-flat (8192 envs), our PPO update vs
# rsl_rl's on the same network and batch, and the wall clock of quadrotor-hover training to
# 90 % evaluated success (quadrotor-track too with `--train-tasks
# quadrotor-hover,quadrotor-track`, if the 8 minutes allow).
#
# Python: $PYTHON (default python3) with torch built for CUDA. Missing packages are installed
# into bench/.gpu-deps (not into the interpreter) from, in this order:
#   1. wheels placed beside this script in bench/wheels/ (offline; nothing is downloaded).
#      All of them are installed (--no-deps). For a cp312 x86-64 machine, fetch them on a
#      connected one with (the list: REQUIREMENTS below)
#        pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#          --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 -d bench/wheels \
#          mujoco mujoco-core mujoco-studio websockets mujoco-warp warp-lang rsl-rl-lib \
#          tensordict pyvers GitPython gitdb smmap array-api-compat glfw pyopengl
#      A wheel too large to copy in one piece may lie there split (NAME.whl.part-aa,
#      NAME.whl.part-ab, ... from `split -b 60M NAME.whl NAME.whl.part-`), with NAME.whl.sha256
#      beside it; the parts are joined and the checksum verified before installing.
#   2. the package index, when GPU_SH_ONLINE=1 (the same list).
#   GPU_SH_WHEELS and GPU_SH_DEPS move both folders (e.g. wheels copied to /tmp in parts).
# Exit codes: 2 packages missing, 3 no CUDA device, 4 a checksum mismatch; else bench.run's.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
DEVICE=${GPU_SH_DEVICE:-cuda}   # GPU_SH_DEVICE=cpu exercises the script without a GPU
DEPS=${GPU_SH_DEPS:-bench/.gpu-deps}     # where missing packages are installed
WHEELS=${GPU_SH_WHEELS:-bench/wheels}    # where their wheels lie
# what a CUDA PyTorch image (torch, numpy, yaml, onnx, onnxruntime, tqdm, matplotlib,
# tensorboard, absl-py, etils) usually lacks: these and their own dependencies
REQUIREMENTS='mujoco mujoco-core mujoco-studio websockets mujoco-warp warp-lang rsl-rl-lib
  tensordict pyvers GitPython gitdb smmap array-api-compat glfw pyopengl'
# -P (Python >= 3.11): the checkout's sim2real/ must not shadow the installed package, whose
# sim2real.tasks and sim2real.deploy come from tasks/ and deploy/
export PYTHONPATH="$DEPS:$PWD${PYTHONPATH:+:$PYTHONPATH}"
export WARP_CACHE_PATH=${WARP_CACHE_PATH:-$HOME/.cache/sim2real-warp}
export PYTHONUNBUFFERED=1

fail() { echo "bench/gpu.sh: $2" >&2; exit "$1"; }

missing_modules() {
  "$PY" -P - <<'PYEOF'
import importlib.util
need = {'torch': 'torch', 'mujoco': 'mujoco', 'mujoco_warp': 'mujoco-warp',
        'warp': 'warp-lang', 'rsl_rl': 'rsl-rl-lib', 'tensordict': 'tensordict',
        'array_api_compat': 'array-api-compat', 'yaml': 'pyyaml', 'onnx': 'onnx',
        'onnxruntime': 'onnxruntime', 'tqdm': 'tqdm', 'matplotlib': 'matplotlib',
        'tensorboard': 'tensorboard', 'sim2real.tasks': 'sim2real'}


def absent(module):
    try:
        return importlib.util.find_spec(module) is None
    except ImportError:   # a parent package is missing
        return True


print(' '.join(pip for mod, pip in need.items() if absent(mod)))
PYEOF
}

join_split_wheels() {
  local first whl
  for first in "$WHEELS"/*.whl.part-aa; do
    [ -e "$first" ] || continue
    whl=${first%.part-aa}
    [ -e "$whl" ] || cat "$whl".part-* > "$whl"
    if [ -e "$whl.sha256" ]; then
      (cd "$WHEELS" && sha256sum -c --status "$(basename "$whl").sha256") ||
        fail 4 "checksum mismatch of $whl (parts incomplete?)"
    fi
  done
}

command -v "$PY" >/dev/null || fail 2 "no Python interpreter '$PY' (set PYTHON)"
"$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' ||
  fail 2 "$PY is older than Python 3.11"
"$PY" -c 'import torch' 2>/dev/null ||
  fail 2 "torch is not importable by $PY: install a CUDA build of torch first"
need=$(missing_modules)
if [ -n "$need" ]; then
  echo "bench/gpu.sh: missing: $need; installing into $DEPS"
  case " $need " in *' torch '*) fail 2 'torch is missing: install a CUDA build of torch first' ;; esac
  mkdir -p "$DEPS"
  # --no-deps throughout: a resolver run for --target would fetch torch again (a CUDA build)
  if compgen -G "$WHEELS/*.whl*" >/dev/null; then
    join_split_wheels
    "$PY" -m pip install -q --no-cache-dir --no-index --no-deps --upgrade --target "$DEPS" \
      "$WHEELS"/*.whl || fail 2 "could not install the wheels in $WHEELS/"
  elif [ "${GPU_SH_ONLINE:-0}" = 1 ]; then
    "$PY" -m pip install -q --no-cache-dir --no-deps --upgrade --target "$DEPS" $REQUIREMENTS ||
      fail 2 "could not install $REQUIREMENTS"
  else
    fail 2 "place wheels in $WHEELS/ (see the header of this script) or run with GPU_SH_ONLINE=1"
  fi
  if [[ " $(missing_modules) " == *' sim2real '* ]]; then   # this repository, no dependencies
    "$PY" -m pip install -q --no-deps --no-build-isolation --no-index --upgrade --target "$DEPS" . ||
      fail 2 'could not install this repository (needs setuptools and wheel)'
  fi
  still=$(missing_modules)
  [ -z "$still" ] || fail 2 "still missing after installing: $still (add their wheels to $WHEELS/)"
fi
if [ "$DEVICE" != cpu ]; then
  "$PY" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' ||
    fail 3 'torch sees no CUDA device (nvidia-smi? a CPU-only torch build?)'
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
fi
envs=$([ "$DEVICE" = cpu ] && echo 64 || echo 8192)
exec timeout 470 "$PY" -P -m bench.run --backend mjwarp --device "$DEVICE" --mjwarp-envs "$envs" \
  --skip-deploy-loop --skip-sb3 --max-seconds 240 --train-tasks quadrotor-hover "$@"
