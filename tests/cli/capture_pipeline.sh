#!/usr/bin/env bash
# capture_pipeline: the committed pipeline cases (tests/pipeline: torch.distributed.pipelining's
# GPipe and 1F1B schedules at PP 2 and 4, PP 2 x TP 2, and with DP replicas DP 2 x PP 2 and
# DP 2 x PP 2 x TP 2, forward and joint) are what scripts/capture/make_pipeline.py produces and
# graphguard verify gives the verdicts its manifest records.
#   1. verify --no-numeric on every case equals manifest.json's verdict (REFINES, every one);
#   2. the program-form files are canonical (graphguard import writes the same bytes);
#   3. with a LibTorch build: graphguard check of pp2_tp2_1f1b/joint (every rank's schedule run
#      with its transfers, S's loss and gradients compared) gives the manifest's verdict (HOLDS);
#   4. with .venv (torch): regenerating pp2_tp2_1f1b/fwd (a pp x tp mesh, the schedule traced on
#      the fake process group) gives byte-identical files.
# Without LibTorch step 3 is skipped, without .venv/torch step 4 (laptop mode); the test says so.
set -euo pipefail
GG=$1
ROOT=$2
CASES_DIR=$ROOT/tests/pipeline
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

python3 "$ROOT/scripts/capture/make_pipeline.py" --out "$CASES_DIR" --verdicts "$GG" --check

for f in "$CASES_DIR"/*/*/dist.json; do
  "$GG" import "$f" -o "$TMP/canonical.json"
  cmp "$f" "$TMP/canonical.json" || { echo "not canonical: $f" >&2; exit 1; }
done

if "$GG" check --help >/dev/null 2>&1; then
  python3 "$ROOT/scripts/capture/make_pipeline.py" --out "$CASES_DIR" --checks "$GG" --check \
    --only pp2_tp2_1f1b/joint
else
  echo "capture_pipeline: SKIP graphguard check: built without LibTorch (laptop mode)"
fi

PY=$ROOT/.venv/bin/python
if [[ ! -x $PY ]] || ! "$PY" -c 'import torch' 2>/dev/null; then
  echo "capture_pipeline: SKIP regeneration: no .venv with torch (laptop mode); verdicts checked"
  exit 0
fi
CASE=pp2_tp2_1f1b/fwd
PYTHONPATH="$ROOT/scripts/capture" "$PY" "$ROOT/scripts/capture/make_pipeline.py" \
  --out "$TMP/pipeline" --only "$CASE" 2>/dev/null
diff -r "$CASES_DIR/$CASE" "$TMP/pipeline/$CASE"
echo "capture_pipeline: regenerated $CASE byte-identical"
