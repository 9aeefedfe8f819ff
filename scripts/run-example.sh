#!/usr/bin/env bash
# run-example.sh: set up, then run graphguard on the bundled examples (examples/corpus, see its
# NOTICE): `verify` of vLLM Qwen2 with tensor-parallel degree 2 against its sequential model
# (examples/qwen2.rel; expected verdict REFINES), then the Megatron-LM GPT TP2 graphs: per-rank
# statistics, an import to GraphGuard JSON and the same statistics read back from it.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
BUILD_DIR=${GG_BUILD_DIR:-build}
EXAMPLE=examples/corpus/gpt/paral2_layer1
OUT_DIR="$BUILD_DIR/example"

# Only what this script runs: the binary, and with LibTorch its numeric runtime plugin (the tests
# and benchmarks are scripts/test.sh's).
targets=graphguard
[[ "${GG_SKIP_TORCH:-0}" == 1 ]] || targets+=" graphguard_runtime"
GG_BUILD_TARGETS=$targets bash scripts/setup.sh
GG="$BUILD_DIR/graphguard"
mkdir -p "$OUT_DIR"

QWEN=examples/corpus/qwen2
echo "\$ graphguard verify --seq $QWEN/paral1_layer1/fw.g0.r0.py --dist $QWEN/paral2_layer1 --relations examples/qwen2.rel --json $OUT_DIR/qwen2_tp2.verify.json"
"$GG" verify --seq "$QWEN/paral1_layer1/fw.g0.r0.py" --dist "$QWEN/paral2_layer1" \
  --relations examples/qwen2.rel --json "$OUT_DIR/qwen2_tp2.verify.json"
echo
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
