#!/usr/bin/env bash
# graphguard verify memoizes local problems (symbolic/memo.h): on the bundled GPT TP2 with two
# identical layers, a buggy bug-benchmark case and a goal case, the report with memoization equals
# the one of `--no-memo` (exit code, text and JSON) but for the `local problems` row and the
# JSON's stats.local_problems, which say how many were reused (some, on the two layers).
# Usage: verify_memo.sh <graphguard> <repo root>
set -euo pipefail
GG=$1 ROOT=$2
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
export OMP_WAIT_POLICY=passive

# compare <name> <verify arguments...>: memoized and not, same report but the memo counts.
compare() {
  local name=$1 code_memo=0 code_plain=0
  shift
  "$GG" verify "$@" --no-timing --no-numeric --json "$TMP/memo.json" >"$TMP/memo.txt" || code_memo=$?
  "$GG" verify "$@" --no-timing --no-numeric --no-memo --json "$TMP/plain.json" >"$TMP/plain.txt" ||
    code_plain=$?
  [[ $code_memo -eq $code_plain ]] || fail "$name: exit $code_memo memoized, $code_plain with --no-memo"
  grep -q '^  local problems' "$TMP/plain.txt" && fail "$name: --no-memo reports reused problems"
  grep -v '^  local problems' "$TMP/memo.txt" >"$TMP/memo.stripped"
  cmp -s "$TMP/memo.stripped" "$TMP/plain.txt" ||
    fail "$name: reports differ: $(diff "$TMP/memo.stripped" "$TMP/plain.txt" | head -20)"
  python3 - "$TMP/memo.json" "$TMP/plain.json" "$name" <<'PY'
import json, sys
memo, plain = (json.load(open(p)) for p in sys.argv[1:3])
memo["stats"].pop("local_problems", None)
if memo != plain:
    sys.exit(f"FAIL: {sys.argv[3]}: JSON reports differ")
PY
}

C="$ROOT/examples/corpus/gpt"
compare gpt --seq "$C/paral1_layer2/fw.g0.r0.py" --dist "$C/paral2_layer2" \
  --relations "$ROOT/examples/gpt.rel"
grep -qE '^  local problems +[0-9]+ solved, [1-9][0-9]* reused' "$TMP/memo.txt" ||
  fail "gpt: nothing reused over two identical layers: $(tail -5 "$TMP/memo.txt")"
python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["stats"]["local_problems"]; assert s["reused"] > 0 and s["solved"] > 0, s' \
  "$TMP/memo.json" || fail "gpt: stats.local_problems missing from the JSON report"
B="$ROOT/tests/bugs/missing_rowparallel_allreduce/buggy"
compare bug --seq "$B/seq.json" --dist "$B/tp2.json" --relations "$B/spec.rel"
G="$ROOT/tests/data/goals/pick_index_shifted_target_class_parallel"
compare goal --seq "$G/seq.py" --dist "$G/dist" --relations "$G/spec.rel"
# Through a file: `grep -q` closing the pipe early would fail the writer under pipefail.
"$GG" verify --help >"$TMP/help.txt"
grep -q -- '--no-memo' "$TMP/help.txt" || fail "verify --help does not list --no-memo"
echo "ok"
