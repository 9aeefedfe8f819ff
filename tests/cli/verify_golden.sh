#!/usr/bin/env bash
# The verify reports (text and JSON, no timings) of every goal case under tests/data/goals equal
# the golden files in tests/golden. After an intended change: bash scripts/regen-golden.sh, then
# review the diff.
# Usage: verify_golden.sh <graphguard> <repo root>
set -euo pipefail
GG=$1 ROOT=$2
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

bash "$ROOT/scripts/regen-golden.sh" --binary "$GG" --out "$TMP/now" || fail "regen-golden failed"
for dir in "$ROOT"/tests/data/goals/*/; do
  c=$(basename "$dir")
  [[ -f "$ROOT/tests/golden/$c.txt" && -f "$ROOT/tests/golden/$c.json" ]] ||
    fail "no golden report for goal case $c (run scripts/regen-golden.sh)"
done
diff -ru "$ROOT/tests/golden" "$TMP/now" || fail "verify reports differ from tests/golden (above)"
# The goldens agree with each case's expected verdict. They are the symbolic engine's reports
# (--no-numeric), which never say VIOLATION without evidence: a true VIOLATION is UNKNOWN there,
# stopped for want of a relation (verify_exit_codes.sh checks the evidence that decides it).
for dir in "$ROOT"/tests/data/goals/*/; do
  c=$(basename "$dir")
  want=$(tr -d '[:space:]' <"$dir/expect")
  if [[ $want == VIOLATION ]]; then
    grep -q '^  proof stopped no-relation' "$ROOT/tests/golden/$c.txt" ||
      fail "$c: a VIOLATION case whose golden does not stop for want of a relation"
    want=UNKNOWN
  fi
  # A REFINES resting on premises says so: "REFINES under N premises (...): ...".
  head -1 "$ROOT/tests/golden/$c.txt" | grep -qE "^$want(: | under [0-9]+ premises? \()" ||
    fail "$c: golden verdict '$(head -1 "$ROOT/tests/golden/$c.txt")' is not $want"
done
echo "ok"
