#!/usr/bin/env bash
# graphguard explain: on a REFINES case it prints the S tensor's relation and the lemma chain that
# proved it (mm-concat-cols for a column-parallel matmul); reading the verify JSON report gives the
# same text; a tensor without a relation exits 1, an unknown tensor 2.
# Usage: verify_explain.sh <graphguard> <repo root>
set -euo pipefail
GG=$1 ROOT=$2
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
C="$ROOT/tests/data/goals/matmul_colpar"
V="$ROOT/tests/data/goals/softmax_sharded_dim"
inputs() { echo --seq "$1/seq.py" --dist "$1/dist" --relations "$1/spec.rel"; }

code=0
"$GG" explain y $(inputs "$C") >"$TMP/direct" 2>"$TMP/err" || code=$?
[[ $code -eq 0 ]] || fail "explain y exited $code: $(cat "$TMP/err")"
grep -q '^1\. y == concat(1, y@0, y@1)$' "$TMP/direct" || fail "relation missing: $(cat "$TMP/direct")"
grep -Eq '^     [0-9]+\. mm-concat-cols' "$TMP/direct" || fail "no mm-concat-cols in the proof: $(cat "$TMP/direct")"

code=0
"$GG" verify $(inputs "$C") --json "$TMP/report.json" >/dev/null || code=$?
[[ $code -eq 0 ]] || fail "verify exited $code"
"$GG" explain y --from-report "$TMP/report.json" >"$TMP/from_report" || fail "explain --from-report exited $?"
diff "$TMP/direct" "$TMP/from_report" || fail "explain from the report differs from the recomputed one"

# An input's relation comes from the spec.
"$GG" explain x --from-report "$TMP/report.json" >"$TMP/x" || fail "explain x exited $?"
grep -q 'spec: .*spec.rel:[0-9]*: input x = replicate' "$TMP/x" || fail "x: $(cat "$TMP/x")"

# No relation found: exit 1 with the reason on stdout.
code=0
"$GG" explain y $(inputs "$V") >"$TMP/none" 2>&1 || code=$?
[[ $code -eq 1 ]] || fail "explain of an unrelated tensor exited $code, expected 1"
grep -q 'no relation was found' "$TMP/none" || fail "no-relation text: $(cat "$TMP/none")"

# Unknown tensor, bad report, conflicting options: exit 2 with one error line.
for args in "nosuch --from-report $TMP/report.json" "nosuch $(inputs "$C")" \
            "y --from-report $TMP/missing.json" "y --from-report $C/spec.rel" \
            "y --from-report $TMP/report.json --seq $C/seq.py" "y --seq $C/seq.py"; do
  code=0
  "$GG" explain $args >"$TMP/out" 2>"$TMP/err" || code=$?
  [[ $code -eq 2 ]] || fail "explain $args exited $code, expected 2"
  grep -q '^graphguard: error: ' "$TMP/err" || fail "explain $args: $(cat "$TMP/err")"
done
echo '{"schema": "something-else"}' >"$TMP/other.json"
code=0
"$GG" explain y --from-report "$TMP/other.json" 2>"$TMP/err" || code=$?
[[ $code -eq 2 ]] && grep -q 'not a verify report' "$TMP/err" ||
  fail "a report of another schema is not refused by name: $code $(cat "$TMP/err")"
echo "ok"
