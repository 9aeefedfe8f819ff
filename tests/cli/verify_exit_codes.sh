#!/usr/bin/env bash
# graphguard verify exit codes: 0 REFINES, 1 VIOLATION, 3 UNKNOWN, 2 for bad input (a missing
# file, a bad spec, a spec without any `output` line) and usage errors; the readable report starts
# with the verdict, and --json writes the JSON report. The symbolic engine alone never says
# VIOLATION: a build with the numeric runtime (it has `check`) makes a proof that stops into one
# only with a numeric counterexample; a laptop build says it cannot tell.
# Usage: verify_exit_codes.sh <graphguard> <repo root>
set -euo pipefail
GG=$1 ROOT=$2
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
GOALS="$ROOT/tests/data/goals"

# verify_case <case> <expected exit> [extra args...]
verify_case() {
  local c=$1 want=$2 code=0
  shift 2
  "$GG" verify --seq "$GOALS/$c/seq.py" --dist "$GOALS/$c/dist" --relations "$GOALS/$c/spec.rel" \
    "$@" >"$TMP/out" 2>"$TMP/err" || code=$?
  [[ $code -eq $want ]] || fail "verify $c $*: exit $code, expected $want: $(cat "$TMP/err")"
}

verify_case matmul_colpar 0 --json "$TMP/colpar.json"
head -1 "$TMP/out" | grep -q '^REFINES: ' || fail "REFINES report does not start with the verdict"
grep -q '^expected outputs$' "$TMP/out" || fail "no expected-outputs table"
grep -q '^  yes      y == concat(1, y@0, y@1)$' "$TMP/out" || fail "output row missing: $(cat "$TMP/out")"
grep -q '^  time ' "$TMP/out" || fail "no time row without --no-timing"
grep -q '"schema": "graphguard.verify-report"' "$TMP/colpar.json" || fail "JSON report not written"
grep -q '"verdict": "REFINES"' "$TMP/colpar.json" || fail "JSON verdict"

# The symbolic engine alone: the missing all-reduce's proof stops at the output -> UNKNOWN (3).
verify_case matmul_rowpar_missing_allreduce 3 --no-numeric
head -1 "$TMP/out" | grep -q '^UNKNOWN: ' || fail "UNKNOWN report does not start with the verdict"
grep -q '^  S operator    aten::mm.default -> y' "$TMP/out" || fail "the S operator is not named"
grep -q '^  proof stopped no-relation' "$TMP/out" || fail "no cause: $(cat "$TMP/out")"
grep -q '^D operators that were candidates' "$TMP/out" || fail "no candidate list"
grep -q '^numeric evidence' "$TMP/out" && fail "--no-numeric ran the numeric check"

if "$GG" check --help >/dev/null 2>&1; then
  # With the numeric runtime: a counterexample makes it a VIOLATION (1), shown as evidence.
  verify_case matmul_rowpar_missing_allreduce 1
  head -1 "$TMP/out" | grep -q '^VIOLATION: .*; numerically (graphguard check, seed 0, cpu) y == y@0: max |S-D| ' ||
    fail "VIOLATION report does not start with the verdict and its evidence: $(head -1 "$TMP/out")"
  grep -q '^numeric evidence$' "$TMP/out" || fail "no evidence section"
  grep -q '^  outputs       0 of 2 expected relations hold$' "$TMP/out" || fail "evidence: $(cat "$TMP/out")"
  grep -q '^  equals        y: ' "$TMP/out" || fail "no classification: $(cat "$TMP/out")"
  # --json - : the JSON report alone on stdout, with the evidence.
  verify_case matmul_rowpar_missing_allreduce 1 --json - --no-timing
  grep -q '"counterexamples": \[' "$TMP/out" || fail "JSON has no counterexamples"
  # Another seed is another numeric run, same verdict.
  verify_case matmul_rowpar_missing_allreduce 1 --seed 3
  grep -q 'seed 3' "$TMP/out" || fail "--seed not used"
  # A limit, and outputs that agree numerically: still UNKNOWN (3), saying so.
  verify_case matmul_rowpar 3 --max-iterations 0
  head -1 "$TMP/out" | grep -q '^UNKNOWN: .*numerically (graphguard check, seed 0, cpu) 2 of 2 expected output relations hold$' ||
    fail "UNKNOWN with agreeing outputs: $(head -1 "$TMP/out")"
else
  verify_case matmul_rowpar_missing_allreduce 3
  head -1 "$TMP/out" | grep -q 'this build has no numeric engine' ||
    fail "a laptop build does not say it cannot tell: $(head -1 "$TMP/out")"
  verify_case matmul_rowpar 3 --max-iterations 0
fi
head -1 "$TMP/out" | grep -q '^UNKNOWN: ' || fail "UNKNOWN report does not start with the verdict"
grep -q '^  proof stopped limit (search stop: iteration limit)' "$TMP/out" ||
  fail "UNKNOWN report does not say which limit: $(cat "$TMP/out")"

# --json - : the JSON report alone on stdout.
verify_case matmul_rowpar_missing_allreduce 3 --json - --no-timing --no-numeric
head -c1 "$TMP/out" | grep -q '{' || fail "--json - did not print JSON first"
grep -q '"seconds"' "$TMP/out" && fail "--no-timing JSON has seconds"
grep -q '"unknown_cause": "no-relation"' "$TMP/out" || fail "JSON has no unknown_cause"

# expect_bad_input <message-regex> <args...>: exit 2, one line on stderr, nothing on stdout.
expect_bad_input() {
  local pattern=$1 code=0
  shift
  "$GG" "$@" >"$TMP/out" 2>"$TMP/err" || code=$?
  [[ $code -eq 2 ]] || fail "'$*' exited $code, expected 2"
  [[ $(wc -l <"$TMP/err") -eq 1 ]] || fail "'$*': stderr is not one line: $(cat "$TMP/err")"
  grep -Eq "^graphguard: error: .*$pattern" "$TMP/err" || fail "'$*': message: $(cat "$TMP/err")"
  [[ ! -s "$TMP/out" ]] || fail "'$*' wrote to stdout"
}
C="$GOALS/matmul_colpar"
expect_bad_input "no_such_seq.py" verify --seq "$TMP/no_such_seq.py" --dist "$C/dist" --relations "$C/spec.rel"
expect_bad_input "no_such_dir" verify --seq "$C/seq.py" --dist "$TMP/no_such_dir" --relations "$C/spec.rel"
expect_bad_input "missing.rel" verify --seq "$C/seq.py" --dist "$C/dist" --relations "$TMP/missing.rel"
printf 'input x = replicate\ninput w = frobnicate(0)\noutput y = replicate\n' >"$TMP/bad.rel"
expect_bad_input "bad.rel:2" verify --seq "$C/seq.py" --dist "$C/dist" --relations "$TMP/bad.rel"
grep -v '^output' "$C/spec.rel" >"$TMP/no_outputs.rel"
expect_bad_input "no_outputs.rel: the spec lists no expected output relation" \
  verify --seq "$C/seq.py" --dist "$C/dist" --relations "$TMP/no_outputs.rel"
expect_bad_input "report file" verify --seq "$C/seq.py" --dist "$C/dist" --relations "$C/spec.rel" --json "$TMP/no/such/dir/r.json"
expect_bad_input "relations" verify --seq "$C/seq.py" --dist "$C/dist"
expect_bad_input "max-nodes" verify --seq "$C/seq.py" --dist "$C/dist" --relations "$C/spec.rel" --max-nodes lots
expect_bad_input "hops" verify --seq "$C/seq.py" --dist "$C/dist" --relations "$C/spec.rel" --hops -1

"$GG" verify --help >"$TMP/help" || fail "verify --help exited $?"
for option in --seq --dist --relations --json --max-nodes --max-iterations --timeout-ms --hops --no-timing --no-numeric --seed; do
  grep -q -- "$option" "$TMP/help" || fail "verify --help does not list $option"
done
grep -q '^  verify ' <<<"$("$GG" --help)" || fail "--help does not list verify"
grep -q '^  explain ' <<<"$("$GG" --help)" || fail "--help does not list explain"
echo "ok"
