#!/usr/bin/env bash
# verify --inputs VALUES: verify's numeric run on S's input values from a values file, for graphs
# that replay only on the values they were traced with (expert parallelism's data-dependent
# all-to-all split sizes; tests/bugs/ep_a2a_splits_transposed, its values.json):
#   1. without --inputs the numeric run is skipped and says which option runs it (UNKNOWN, exit 3);
#   2. with --inputs, a LibTorch build gives the buggy variant a VIOLATION with its evidence (exit
#      1) and leaves the correct one UNKNOWN with its outputs agreeing (exit 3, never a VIOLATION);
#      a build without the numeric engine (ASan) stays UNKNOWN (exit 3) and says why;
#   3. a missing values file, or one without S's inputs, is bad input naming the file (exit 2).
# Usage: verify_inputs.sh <graphguard> <repo root>
set -euo pipefail
GG=$1 ROOT=$2
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
CASE=$ROOT/tests/bugs/ep_a2a_splits_transposed

# run_verify <variant> <expected exit> [extra args...]: verify's report in $TMP/out
run_verify() {
  local v=$1 want=$2 code=0
  shift 2
  "$GG" verify --seq "$CASE/$v/seq.json" --dist "$CASE/$v/tp2.json" \
    --relations "$CASE/$v/spec.rel" --no-timing "$@" >"$TMP/out" 2>"$TMP/err" || code=$?
  [[ $code -eq $want ]] ||
    fail "verify $v $*: exit $code, expected $want: $(cat "$TMP/err") $(head -1 "$TMP/out")"
}

numeric=false
if "$GG" check --help >/dev/null 2>&1; then numeric=true; fi

run_verify buggy 3
if $numeric; then
  head -1 "$TMP/out" | grep -q "the numeric run was skipped: .* replays only on the values it was traced with .*'--inputs .*values.json'" ||
    fail "skipped run: $(head -1 "$TMP/out")"
fi

if $numeric; then
  run_verify buggy 1 --inputs "$CASE/buggy/values.json"
  head -1 "$TMP/out" | grep -q "^VIOLATION: .*numerically (graphguard check on S's inputs from .*buggy/values.json, cpu) add_1 == concat(0, add_1@0, add_1@1): max |S-D|" ||
    fail "buggy: $(head -1 "$TMP/out")"
  run_verify correct 3 --inputs "$CASE/correct/values.json"
  head -1 "$TMP/out" | grep -q "^UNKNOWN: .*1 of 1 expected output relations hold" ||
    fail "correct: $(head -1 "$TMP/out")"
else
  run_verify buggy 3 --inputs "$CASE/buggy/values.json"
  head -1 "$TMP/out" | grep -q "no numeric engine" || fail "no engine: $(head -1 "$TMP/out")"
fi

run_verify buggy 2 --inputs "$TMP/none.json"
grep -q "$TMP/none.json: no such values file" "$TMP/err" || fail "missing file: $(cat "$TMP/err")"
if $numeric; then
  printf '{"format": "graphguard-values", "inputs": {"x": {"type": "f32[2]", "data": [1, 2]}}}\n' \
    >"$TMP/other.json"
  run_verify buggy 2 --inputs "$TMP/other.json"
  grep -q "$TMP/other.json: no value for S's input 'moe_router'" "$TMP/err" ||
    fail "values of another graph: $(cat "$TMP/err")"
fi
echo "verify_inputs: skipped without --inputs; with it buggy VIOLATION, correct UNKNOWN (numeric: $numeric); bad values files exit 2"
