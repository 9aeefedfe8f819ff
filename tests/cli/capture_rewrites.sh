#!/usr/bin/env bash
# capture_rewrites: numeric self-tests of gg_capture's graph rewrites (tests/cli/capture_rewrites.py:
# plain as_strided views, in-place writes made values by out_of_place or functionalization,
# torch fully_shard's flat buffers and in-place collectives made values by fsdp2.py), on
# this checkout's scripts/capture. Laptop mode (no .venv with torch) skips, and says so.
set -euo pipefail
ROOT=$2
PY=$ROOT/.venv/bin/python
if [[ ! -x $PY ]] || ! "$PY" -c 'import torch' 2>/dev/null; then
  echo "capture_rewrites: SKIP: no .venv with torch (laptop mode)"
  exit 0
fi
PYTHONPATH=$ROOT/scripts/capture "$PY" "$ROOT/tests/cli/capture_rewrites.py"
