#!/usr/bin/env bash
# run-example.sh: set up, then run graphguard on the bundled example — the Megatron-LM GPT graphs
# with tensor-parallel degree 2 (examples/corpus/gpt/paral2_layer1, see examples/corpus/NOTICE):
# per-rank statistics, then an import to GraphGuard JSON and the same statistics read back from it.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
BUILD_DIR=${GG_BUILD_DIR:-build}
EXAMPLE=examples/corpus/gpt/paral2_layer1
OUT_DIR="$BUILD_DIR/example"

bash scripts/setup.sh
GG="$BUILD_DIR/graphguard"
mkdir -p "$OUT_DIR"

echo "\$ graphguard stats $EXAMPLE"
"$GG" stats "$EXAMPLE"
echo
echo "\$ graphguard import $EXAMPLE -o $OUT_DIR/gpt_tp2.json"
"$GG" import "$EXAMPLE" -o "$OUT_DIR/gpt_tp2.json"
echo "wrote $OUT_DIR/gpt_tp2.json ($(wc -c <"$OUT_DIR/gpt_tp2.json") bytes)"
"$GG" stats "$OUT_DIR/gpt_tp2.json" >"$OUT_DIR/gpt_tp2.stats.json.txt"
"$GG" stats "$EXAMPLE" >"$OUT_DIR/gpt_tp2.stats.fx.txt"
if cmp -s "$OUT_DIR/gpt_tp2.stats.fx.txt" "$OUT_DIR/gpt_tp2.stats.json.txt"; then
  echo "stats of the JSON equal the stats of the FX files"
else
  echo "run-example: stats of the JSON differ from the FX files:" >&2
  diff "$OUT_DIR/gpt_tp2.stats.fx.txt" "$OUT_DIR/gpt_tp2.stats.json.txt" >&2 || true
  exit 1
fi
