#!/usr/bin/env bash
# Operators GraphGuard does not know load as opaque nodes typed from their annotations
# (docs/graph-format.md): stats and the verify report list them, import -> JSON -> stats gives the
# same statistics, verify relates S and D calling one on a replicated tensor (congruence) and is
# UNKNOWN naming it where it sits on a sharded tensor's proof; --strict-ops keeps the error.
# Usage: opaque_ops.sh <graphguard> <repo root>
set -euo pipefail
GG=$1 ROOT=$2
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
D="$ROOT/tests/data/good/opaque"

# stats lists them; import writes them; the JSON's stats are the FX file's.
"$GG" stats "$D/fancy.py" >"$TMP/stats" || fail "stats: $(cat "$TMP/stats")"
grep -qx '  unknown operators (opaque, typed from the file): mylib::fancy_gelu.default 2, mylib::split_pair.default 1' \
  "$TMP/stats" || fail "stats do not list the unknown operators: $(cat "$TMP/stats")"
"$GG" import "$D/fancy.py" -o "$TMP/fancy.json" || fail "import"
grep -q '"op":"mylib::split_pair.default"' "$TMP/fancy.json" || fail "JSON lacks the opaque node"
"$GG" stats "$TMP/fancy.json" >"$TMP/stats_json" || fail "stats of the JSON"
cmp -s "$TMP/stats" "$TMP/stats_json" || fail "stats differ after the round trip: $(diff "$TMP/stats" "$TMP/stats_json")"
"$GG" import "$TMP/fancy.json" -o "$TMP/again.json" || fail "re-import"
cmp -s "$TMP/fancy.json" "$TMP/again.json" || fail "JSON not canonical for opaque nodes"

# --strict-ops: exit 2 with file:line, on every graph-reading command.
code=0; "$GG" stats --strict-ops "$D/fancy.py" >/dev/null 2>"$TMP/err" || code=$?
[[ $code -eq 2 ]] || fail "stats --strict-ops: exit $code"
grep -q "fancy.py:7: unknown operator 'mylib::fancy_gelu.default'" "$TMP/err" ||
  fail "stats --strict-ops: $(cat "$TMP/err")"
code=0; "$GG" import --strict-ops "$TMP/fancy.json" -o "$TMP/x.json" 2>"$TMP/err" || code=$?
[[ $code -eq 2 ]] || fail "import --strict-ops: exit $code"
grep -q "fancy.json:[0-9]*: unknown operator 'mylib::fancy_gelu.default'" "$TMP/err" ||
  fail "import --strict-ops: $(cat "$TMP/err")"
[[ ! -e "$TMP/x.json" ]] || fail "import --strict-ops wrote its output"

# verify: S and D call the unknown operator on the replicated x -> congruent, REFINES (0).
verify() {
  local c=$1 want=$2 code=0
  shift 2
  "$GG" verify --seq "$D/$c/seq.py" --dist "$D/$c/dist" --relations "$D/$c/spec.rel" --no-timing \
    "$@" >"$TMP/out" 2>"$TMP/err" || code=$?
  [[ $code -eq $want ]] || fail "verify $c $*: exit $code, expected $want: $(cat "$TMP/err" "$TMP/out")"
}
verify replicated 0 --json "$TMP/rep.json"
head -1 "$TMP/out" | grep -q '^REFINES: ' || fail "replicated: $(head -1 "$TMP/out")"
grep -q '^  unknown operators mylib::fancy_gelu.default 3 ' "$TMP/out" ||
  fail "verify report does not list the unknown operator: $(cat "$TMP/out")"
python3 - "$TMP/rep.json" <<'PY' || fail "JSON report's unknown_operators"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["stats"]["unknown_operators"] == [{"op": "mylib::fancy_gelu.default", "count": 3}], r["stats"]
PY

# On the row-sharded x the proof must look inside it: UNKNOWN (3) naming it.
verify sharded 3 --no-numeric --json "$TMP/sh.json"
head -1 "$TMP/out" | grep -q '^UNKNOWN: S operator y (mylib::fancy_gelu.default) at /src/model.py:7 in forward is unknown to GraphGuard (loaded opaque from its annotation): ' ||
  fail "sharded: $(head -1 "$TMP/out")"
grep -q '"unknown_cause": "opaque"' "$TMP/sh.json" || fail "sharded: unknown_cause"
grep -q '^  proof stopped opaque ' "$TMP/out" || fail "sharded: no cause: $(cat "$TMP/out")"
verify sharded 2 --strict-ops
grep -q "seq.py:5: unknown operator 'mylib::fancy_gelu.default'" "$TMP/err" ||
  fail "verify --strict-ops: $(cat "$TMP/err")"

# A build with the numeric runtime runs it on the UNKNOWN: LibTorch has no mylib::fancy_gelu, so
# the evidence says which operator it could not execute (no crash, still UNKNOWN).
if "$GG" check --help >/dev/null 2>&1; then
  verify sharded 3 --json "$TMP/num.json"
  grep -q 'mylib::fancy_gelu.default is unknown to GraphGuard (loaded opaque from its annotation) and LibTorch has no operator of that name' \
    "$TMP/num.json" || fail "numeric run does not name the operator: $(cat "$TMP/out")"
fi
echo "opaque_ops: ok"
