#!/usr/bin/env bash
# graphguard verify on every configuration of the shared corpus, end to end through the binary:
# each must exit 0 with a report that starts "REFINES" and a JSON report whose verdict is
# REFINES; the bundled copy of Qwen2 (examples/corpus) must give the same.
# Usage: verify_corpus.sh <graphguard> <repo root>
set -euo pipefail
GG=$1 ROOT=$2
CORPUS="$ROOT/examples/corpus"
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# check <seq file> <dist dir> <spec>
check() {
  local code=0
  "$GG" verify --seq "$1" --dist "$2" --relations "$3" --json "$TMP/report.json" \
    >"$TMP/out" 2>"$TMP/err" || code=$?
  [[ $code -eq 0 ]] || fail "verify $2: exit $code: $(head -3 "$TMP/out") $(cat "$TMP/err")"
  # GPT rests on premises (stated constants, the RNG model of its dropouts): "REFINES under N ...".
  head -1 "$TMP/out" | grep -Eq '^REFINES( under [0-9]+ premises? \(.*\))?: ' ||
    fail "verify $2: report starts $(head -1 "$TMP/out")"
  grep -q '"verdict": "REFINES"' "$TMP/report.json" || fail "verify $2: JSON verdict is not REFINES"
  echo "ok: $2"
}

check "$CORPUS/gpt/paral1_layer1/fw.g0.r0.py" "$CORPUS/gpt/paral2_layer1" "$ROOT/examples/gpt.rel"
check "$CORPUS/gpt/paral1_layer1/fw.g0.r0.py" "$CORPUS/gpt/paral4_layer1" "$ROOT/examples/gpt.rel"
check "$CORPUS/gpt/paral1_layer2/fw.g0.r0.py" "$CORPUS/gpt/paral2_layer2" "$ROOT/examples/gpt.rel"
check "$CORPUS/qwen2/paral1_layer1/fw.g0.r0.py" "$CORPUS/qwen2/paral2_layer1" \
  "$ROOT/examples/qwen2.rel"
check "$ROOT/examples/corpus/qwen2/paral1_layer1/fw.g0.r0.py" \
  "$ROOT/examples/corpus/qwen2/paral2_layer1" "$ROOT/examples/qwen2.rel"
