#!/usr/bin/env bash
# Regenerates the golden verify reports under tests/golden: for every hand-written goal case
# tests/data/goals/<case>, `graphguard verify --no-timing` writes <case>.txt (the readable report)
# and <case>.json (the JSON report without its "tool" line, so a version bump does not touch the
# goldens). Paths are relative to the repository root, so the reports hold no machine paths.
# The ctest tests/cli/verify_golden.sh runs this script into a temporary directory and diffs.
#
# Usage: scripts/regen-golden.sh [--binary GRAPHGUARD] [--out DIR]
#   defaults: build/graphguard (or $GG_BUILD_DIR/graphguard), tests/golden
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
GG="$ROOT/${GG_BUILD_DIR:-build}/graphguard"
OUT="$ROOT/tests/golden"
while [[ $# -gt 0 ]]; do
  case $1 in
    --binary) GG=$(realpath "$2"); shift 2 ;;
    --out) mkdir -p "$2"; OUT=$(cd "$2" && pwd); shift 2 ;;
    *) echo "usage: $0 [--binary GRAPHGUARD] [--out DIR]" >&2; exit 2 ;;
  esac
done
[[ -x "$GG" ]] || { echo "regen-golden: no graphguard binary at $GG (build first)" >&2; exit 2; }
mkdir -p "$OUT"
cd "$ROOT"
for dir in tests/data/goals/*/; do
  dir=${dir%/}
  case_name=$(basename "$dir")
  code=0
  "$GG" verify --seq "$dir/seq.py" --dist "$dir/dist" --relations "$dir/spec.rel" --no-timing --no-numeric \
    --json "$OUT/$case_name.json.raw" >"$OUT/$case_name.txt" || code=$?
  if [[ $code -ne 0 && $code -ne 1 && $code -ne 3 ]]; then
    echo "regen-golden: $case_name: graphguard verify exited $code" >&2
    exit 1
  fi
  sed '/^  "tool": /d' "$OUT/$case_name.json.raw" >"$OUT/$case_name.json"
  rm -f "$OUT/$case_name.json.raw"
done
