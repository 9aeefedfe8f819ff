#!/usr/bin/env bash
# capture_torchtitan: README's torchtitan example (examples/torchtitan/llama3.py, a user's factory
# around real torchtitan's debugmodel Llama3 cut to one layer) captured with `python -m gg_capture`
# at TP 2, joint forward+backward with sequence parallelism under torchtitan's spmd_types backend:
# graphguard verify REFINES, and in a LibTorch build graphguard check HOLDS. Skipped without .venv
# (torch) or without torchtitan (scripts/setup.sh pins it), and says so.
set -euo pipefail
GG=$1
ROOT=$2
PY=$ROOT/.venv/bin/python
if [[ ! -x $PY ]] || ! "$PY" -c 'import torch, torchtitan' 2>/dev/null; then
  echo "capture_torchtitan: SKIP: no .venv with torch and torchtitan (laptop mode)"
  exit 0
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$ROOT"
PYTHONPATH=$ROOT/scripts/capture "$PY" -m gg_capture examples/torchtitan/llama3.py:build \
  --tp 2 --mode joint --set sp=true -o "$TMP/titan"
ARGS=(--seq "$TMP/titan/seq.json" --dist "$TMP/titan/dist.json" --relations "$TMP/titan/spec.rel")
"$GG" verify "${ARGS[@]}" --no-numeric >"$TMP/verify.txt"
head -1 "$TMP/verify.txt"
grep -q '^REFINES: ' "$TMP/verify.txt"
if "$GG" check --help >/dev/null 2>&1; then
  "$GG" check "${ARGS[@]}" >"$TMP/check.txt"
  head -1 "$TMP/check.txt"
  grep -q '^check: HOLDS' "$TMP/check.txt"
else
  echo "capture_torchtitan: SKIP graphguard check: built without LibTorch (laptop mode)"
fi
echo "capture_torchtitan: torchtitan's Llama3 (debugmodel, 1 layer) joint SP TP 2 REFINES"
