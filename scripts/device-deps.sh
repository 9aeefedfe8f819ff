#!/usr/bin/env bash
# device-deps.sh: packs what a bare GPU machine may lack for scripts/device-check.sh into .devdeps/
# (ignored by git; name it in the device tool's `carry`): the GoogleTest sources (built there by
# device-check.sh when no GTest is installed) and the nlohmann-json headers with their CMake
# package files. Run on this (Debian) machine, where setup.sh installed both. Idempotent.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DEPS="$ROOT/.devdeps"
rm -rf "$DEPS"
mkdir -p "$DEPS/nlohmann/include" "$DEPS/nlohmann/share/cmake"
cp -a /usr/src/googletest "$DEPS/googletest"
cp -a /usr/include/nlohmann "$DEPS/nlohmann/include/"
cp -a /usr/share/cmake/nlohmann_json "$DEPS/nlohmann/share/cmake/"
du -sh "$DEPS"
