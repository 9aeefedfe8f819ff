#!/usr/bin/env bash
# graphguard verify --hints: hand-written hints (right and wrong) keep the verdict and show in the
# text and JSON reports; a bad hint file is exit 2 naming file:line. In a LibTorch build also
# infer-relations --hints-out on goal cases and the bundled Qwen2 TP2 (reduced sizes): the hint
# file reads back and verify with it says REFINES with operators related by the search towards
# their hints.
# Usage: verify_hints.sh <graphguard> <repo root>
set -euo pipefail
GG=$1 ROOT=$2
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
GOALS="$ROOT/tests/data/goals"
export OMP_WAIT_POLICY=passive

# verify_case <case> <hint file> <expected exit>: runs verify with the hints, text and JSON.
verify_case() {
  local c=$1 hints=$2 want=$3 code=0
  shift 3
  "$GG" verify --seq "$GOALS/$c/seq.py" --dist "$GOALS/$c/dist" --relations "$GOALS/$c/spec.rel" \
    "$@" --hints "$hints" --json "$TMP/report.json" --no-timing >"$TMP/out" 2>"$TMP/err" || code=$?
  [[ $code -eq $want ]] || fail "verify $c --hints $hints: exit $code, want $want: $(cat "$TMP/out" "$TMP/err")"
}

# Right hints on a row-parallel linear: both operators related by the search towards them, each
# hint proved (t's is flat, so it is its search's goal: the transpose of the related input is
# proved equal to the concat of D's transposes, not just taken as clean).
cat >"$TMP/right.hints" <<'EOF'
// hand-written
t == concat(0, t@0, t@1)
y == y@0
y == y@1
EOF
verify_case matmul_rowpar "$TMP/right.hints" 0
head -1 "$TMP/out" | grep -q '^REFINES: ' || fail "right hints: $(head -1 "$TMP/out")"
grep -q 'hints .*3 from .*right.hints: 3 among the relations proved; 2 S operators related by the search towards them, 0 by the full search that followed a failed one, 0 left without a relation there$' "$TMP/out" ||
  fail "right hints: no hints line in the report: $(cat "$TMP/out")"
python3 - "$TMP/report.json" <<'PY' || fail "right hints: JSON"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["inputs"]["hints"].endswith("right.hints"), r["inputs"]
assert r["stats"]["hints"] == {"given": 3, "proved": 3, "related": 2, "full_related": 0,
                              "left_unrelated": 0, "rerun_without": False}, r["stats"]
assert all(n["hint"] == "related" and n["attempts"] == 1 for n in r["nodes"]), r["nodes"]
PY

# Wrong hints: none proved; y is left without a relation by the search towards its hint, so that
# run is UNKNOWN and the search without hints decides: the verdict is the same.
cat >"$TMP/wrong.hints" <<'EOF'
t == concat(0, t@1, t@0)
y == partial@0
EOF
verify_case matmul_rowpar "$TMP/wrong.hints" 0
head -1 "$TMP/out" | grep -q '^REFINES: ' || fail "wrong hints: $(head -1 "$TMP/out")"
grep -q ': 0 among the relations proved; 1 S operators related by the search towards them, 0 by the full search that followed a failed one, 1 left without a relation there; that run did not end REFINES (.*), so the verdict is that of a search without hints' "$TMP/out" ||
  fail "wrong hints: $(cat "$TMP/out")"
# The false expected relation of a missing all_reduce as a hint: nothing proved (UNKNOWN, no
# relation, from the symbolic engine alone), the same as without hints.
printf 'y == y@0\ny == y@1\n' >"$TMP/false.hints"
verify_case matmul_rowpar_missing_allreduce "$TMP/false.hints" 3 --no-numeric
head -1 "$TMP/out" | grep -q '^UNKNOWN: ' || fail "false hint: $(head -1 "$TMP/out")"
grep -q '^  proof stopped no-relation' "$TMP/out" || fail "false hint: $(cat "$TMP/out")"
# No hints line without --hints (golden reports stay as they were).
"$GG" verify --seq "$GOALS/matmul_rowpar/seq.py" --dist "$GOALS/matmul_rowpar/dist" \
  --relations "$GOALS/matmul_rowpar/spec.rel" --no-timing >"$TMP/out"
! grep -q '^  hints' "$TMP/out" || fail "a hints line without --hints"

# Bad hint files: exit 2, one line naming file:line.
bad() {
  local text=$1 want=$2 code=0
  printf '%b' "$text" >"$TMP/bad.hints"
  "$GG" verify --seq "$GOALS/matmul_rowpar/seq.py" --dist "$GOALS/matmul_rowpar/dist" \
    --relations "$GOALS/matmul_rowpar/spec.rel" --hints "$TMP/bad.hints" >"$TMP/out" 2>"$TMP/err" ||
    code=$?
  [[ $code -eq 2 ]] || fail "bad hints '$text': exit $code"
  grep -q "^graphguard: error: $TMP/bad.hints:$want" "$TMP/err" ||
    fail "bad hints '$text': $(cat "$TMP/err")"
}
bad 'y == y@0\nnonsense\n' '2: expected a hint'
bad '// c\nnope == y@0\n' "2: unknown S tensor 'nope'"
bad 't == t@0\n' '1: hint for t has shape \[3, 3\] but t has shape \[6, 3\]'
bad 'y == concat(0, y@0\n' '1: '
code=0
"$GG" verify --seq "$GOALS/matmul_rowpar/seq.py" --dist "$GOALS/matmul_rowpar/dist" \
  --relations "$GOALS/matmul_rowpar/spec.rel" --hints "$TMP/missing.hints" >/dev/null 2>"$TMP/err" ||
  code=$?
[[ $code -eq 2 ]] && grep -q 'cannot open the hint file' "$TMP/err" || fail "missing hint file: $code"
code=0
"$GG" verify --seq "$GOALS/matmul_rowpar/seq.py" --dist "$GOALS/matmul_rowpar/dist" \
  --relations "$GOALS/matmul_rowpar/spec.rel" --hints "$TMP/right.hints" --guided >/dev/null \
  2>"$TMP/err" || code=$?
[[ $code -eq 2 ]] && grep -q "give '--hints FILE' or '--guided', not both" "$TMP/err" ||
  fail "--hints with --guided: exit $code: $(cat "$TMP/err")"
echo "ok: verify --hints"

if ! "$GG" infer-relations --help >/dev/null 2>&1; then
  code=0
  "$GG" verify --seq "$GOALS/matmul_rowpar/seq.py" --dist "$GOALS/matmul_rowpar/dist" \
    --relations "$GOALS/matmul_rowpar/spec.rel" --guided >/dev/null 2>"$TMP/err" || code=$?
  [[ $code -eq 2 ]] && grep -q "'--guided' runs S and D on random inputs, and this build has no numeric engine" "$TMP/err" ||
    fail "--guided without LibTorch: exit $code: $(cat "$TMP/err")"
  echo "SKIP: no infer-relations (built without LibTorch): --hints-out and --guided not tested"
  exit 0
fi

# verify --guided: the hints of one numeric run. A training graph of the capture corpus (the
# Megatron GPT joint graph: its vocabulary-parallel loss has operators no narrow search relates)
# REFINES with every hint kept from the run; a missing all_reduce is still a VIOLATION, decided by
# the search without hints.
C="$ROOT/tests/corpus/megatron_gpt/joint"
code=0
"$GG" verify --seq "$C/seq.json" --dist "$C/tp2.json" --relations "$C/spec.rel" --guided \
  --json "$TMP/guided.json" --no-timing >"$TMP/out" 2>"$TMP/err" || code=$?
[[ $code -eq 0 ]] || fail "guided megatron_gpt joint: exit $code: $(cat "$TMP/out" "$TMP/err")"
grep -q '^  hints .* from a numeric run (graphguard check, seed 0, cpu; [0-9]* fingerprint matches): [0-9]* among the relations proved; [0-9]* S operators related by the search towards them, [0-9]* by the full search that followed a failed one, [0-9]* left without a relation there$' "$TMP/out" ||
  fail "guided megatron_gpt joint: hints line: $(cat "$TMP/out")"
python3 - "$TMP/guided.json" <<'PY' || fail "guided megatron_gpt joint: JSON"
import json, sys
r = json.load(open(sys.argv[1]))
h = r["stats"]["hints"]
assert r["verdict"] == "REFINES" and not h["rerun_without"], h
assert h["related"] >= 150 and h["left_unrelated"] > 0, h
assert r["inputs"]["hints"].startswith("a numeric run"), r["inputs"]
assert "numeric_seconds" not in h, h  # --no-timing: no wall-clock values
PY
code=0
"$GG" verify --seq "$GOALS/matmul_rowpar_missing_allreduce/seq.py" \
  --dist "$GOALS/matmul_rowpar_missing_allreduce/dist" \
  --relations "$GOALS/matmul_rowpar_missing_allreduce/spec.rel" --guided >"$TMP/out" 2>"$TMP/err" ||
  code=$?
[[ $code -eq 1 ]] || fail "guided missing all_reduce: exit $code, want 1: $(cat "$TMP/out" "$TMP/err")"
grep -q 'that run did not end REFINES (.*), so the verdict is that of a search without hints' "$TMP/out" ||
  fail "guided missing all_reduce: $(cat "$TMP/out")"
# With timing, the report says what the numeric run cost, apart from the search.
grep -q '^  time  .* s (and [0-9.]* s before it: the numeric run of --guided)$' "$TMP/out" ||
  fail "guided missing all_reduce: time row: $(cat "$TMP/out")"
code=0
"$GG" verify --seq "$GOALS/matmul_rowpar/seq.py" --dist "$GOALS/matmul_rowpar/dist" \
  --relations "$GOALS/matmul_rowpar/spec.rel" --guided --no-numeric >/dev/null 2>"$TMP/err" || code=$?
[[ $code -eq 2 ]] || fail "--guided --no-numeric: exit $code"
echo "ok: verify --guided"
# infer_hints <seq> <dist> <spec> [infer-relations options...]: hints written, then verify with them.
infer_hints() {
  local seq=$1 dist=$2 spec=$3 code=0
  shift 3
  "$GG" infer-relations --seq "$seq" --dist "$dist" -o "$TMP/spec.rel" --hints-out "$TMP/h.hints" \
    "$@" >"$TMP/out" 2>"$TMP/err" || code=$?
  [[ $code -eq 0 ]] || fail "infer-relations $dist: exit $code: $(cat "$TMP/err")"
  grep -q "^wrote $TMP/h.hints: [1-9][0-9]* hints" "$TMP/out" || fail "no hints summary: $(cat "$TMP/out")"
  grep -q '^// graphguard hints' "$TMP/h.hints" || fail "hint file header: $(head -2 "$TMP/h.hints")"
  code=0
  "$GG" verify --seq "$seq" --dist "$dist" --relations "$spec" --hints "$TMP/h.hints" \
    --json "$TMP/report.json" >"$TMP/verify" 2>&1 || code=$?
  [[ $code -eq 0 ]] || fail "verify $dist --hints: exit $code: $(head -5 "$TMP/verify")"
  python3 - "$TMP/report.json" <<'PY' || fail "verify $dist --hints: no hint proved"
import json, sys
h = json.load(open(sys.argv[1]))["stats"]["hints"]
assert h["proved"] > 0 and h["related"] > 0, h
PY
}
infer_hints "$GOALS/matmul_colpar/seq.py" "$GOALS/matmul_colpar/dist" "$GOALS/matmul_colpar/spec.rel"
infer_hints "$GOALS/matmul_rowpar/seq.py" "$GOALS/matmul_rowpar/dist" "$GOALS/matmul_rowpar/spec.rel"
# Qwen2 TP2 at reduced sizes (docs/benchmarks.md): hints of the resized run that do not fit the
# full-size graphs (slice bounds) are left out; verify at full size with the rest.
Q="$ROOT/examples/corpus/qwen2"
infer_hints "$Q/paral1_layer1/fw.g0.r0.py" "$Q/paral2_layer1" "$ROOT/examples/qwen2.rel" \
  --resize 32768=256,151936=1024,75968=512,17920=1792,8960=896,4480=448
echo "ok: infer-relations --hints-out"
