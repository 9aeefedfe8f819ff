#!/usr/bin/env bash
# --memory-budget (verify, check): a numeric run whose estimated peak is over the budget runs at
# reduced sizes, which the report names with the reason (text and JSON), and keeps its verdict:
# VIOLATION for a seeded bug, HOLDS for the correct version; a budget no sizes fit skips verify's
# numeric run with a note (UNKNOWN, never an OOM); a bad value is exit 2 naming the option.
# Usage: memory_budget.sh <graphguard> <repo root>
set -euo pipefail
GG=$1 ROOT=$2
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# A row-parallel matmul, correct and with its all-reduce missing (tests/data/goals).
GOALS="$ROOT/tests/data/goals"
args() { echo --seq "$GOALS/$1/seq.py" --dist "$GOALS/$1/dist" --relations "$GOALS/$1/spec.rel"; }

for bad in 8Q -1G G ""; do
  code=0
  "$GG" verify $(args matmul_rowpar_missing_allreduce) --memory-budget "$bad" >"$TMP/out" 2>"$TMP/err" || code=$?
  [[ $code -eq 2 ]] || fail "--memory-budget '$bad': exit $code, expected 2"
  grep -q -- "--memory-budget" "$TMP/err" || fail "the error does not name the option: $(cat "$TMP/err")"
done

if ! grep -q '^  check ' <<<"$("$GG" --help)"; then
  echo "laptop build (no LibTorch): bad budgets are usage errors; no numeric run to resize"
  exit 0
fi

# The case's estimate is about 1.4 KiB; 1K forces smaller sizes.
code=0
"$GG" verify $(args matmul_rowpar_missing_allreduce) --memory-budget 1K --json "$TMP/v.json" --no-timing >"$TMP/out" 2>&1 ||
  code=$?
[[ $code -eq 1 ]] || fail "verify buggy at 1K: exit $code, expected 1 (VIOLATION): $(cat "$TMP/out")"
head -1 "$TMP/out" | grep -q '^VIOLATION' || fail "verdict: $(head -1 "$TMP/out")"
grep -q 'at reduced sizes ' "$TMP/out" || fail "the run line does not name the sizes: $(cat "$TMP/out")"
grep -Eq '^  sizes +estimated peak .* > budget 1.00 KiB: ran at [0-9=,]+ \(S .*; D .*\); estimate now' \
  "$TMP/out" || fail "no sizes row: $(cat "$TMP/out")"
python3 - "$TMP/v.json" <<'PY' || fail "JSON report: $(cat "$TMP/v.json" | head -50)"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["verdict"] == "VIOLATION", r["verdict"]
e = r["evidence"] if "evidence" in r else r["numeric_evidence"]
assert "ran at" in e["resized"] and "estimate now" in e["resized"], e
PY

# The default budget leaves this small case as it is: no resized key, same verdict.
code=0
"$GG" verify $(args matmul_rowpar_missing_allreduce) --json "$TMP/d.json" --no-timing >"$TMP/out" 2>&1 || code=$?
[[ $code -eq 1 ]] || fail "verify buggy: exit $code"
! grep -q '"resized"' "$TMP/d.json" || fail "a default run names resized sizes"
! grep -q '^  sizes ' "$TMP/out" || fail "a default run has a sizes row"

# No sizes fit 100 bytes: the numeric run is skipped, saying so.
code=0
"$GG" verify $(args matmul_rowpar_missing_allreduce) --memory-budget 100 --no-timing >"$TMP/out" 2>&1 || code=$?
[[ $code -eq 3 ]] || fail "verify at 100 bytes: exit $code, expected 3 (UNKNOWN): $(cat "$TMP/out")"
grep -q 'numeric run was skipped: estimated peak .* > budget 100 B, and no resize brings it under' \
  "$TMP/out" || fail "no skip note: $(cat "$TMP/out")"

# check: the correct version holds at the reduced sizes, the buggy one fails; the memory row and
# JSON key say why and which.
code=0
"$GG" check $(args matmul_rowpar) --memory-budget 1K --json "$TMP/c.json" --no-timing >"$TMP/out" 2>&1 ||
  code=$?
[[ $code -eq 0 ]] || fail "check correct at 1K: exit $code: $(cat "$TMP/out")"
head -1 "$TMP/out" | grep -q '^check: HOLDS' || fail "check correct: $(head -1 "$TMP/out")"
grep -Eq '^  memory +estimated peak .* ran at ' "$TMP/out" || fail "no memory row: $(cat "$TMP/out")"
grep -q '"memory": "estimated peak' "$TMP/c.json" || fail "no memory key in the check JSON"
code=0
"$GG" check $(args matmul_rowpar_missing_allreduce) --memory-budget 1K --no-timing >"$TMP/out" 2>&1 || code=$?
[[ $code -eq 1 ]] || fail "check buggy at 1K: exit $code, expected 1: $(cat "$TMP/out")"
echo "memory budget: resized runs keep their verdicts and say which sizes ran"
