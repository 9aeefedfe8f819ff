#!/usr/bin/env bash
# graphguard verify --dump-egraph NAME (and GG_DUMP_EGRAPH=NAME) prints the saturated local
# e-graph of S operator NAME to stderr, e-classes with their nodes ("c12: mm(3,7)#12 ..."), and
# changes nothing else: the report equals the one without it. An unknown name prints nothing.
# Usage: dump_egraph.sh <graphguard> <repo root>
set -euo pipefail
GG=$1 ROOT=$2
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
export OMP_WAIT_POLICY=passive
C="$ROOT/examples/corpus/gpt"
ARGS=(--seq "$C/paral1_layer1/fw.g0.r0.py" --dist "$C/paral2_layer1" --relations
  "$ROOT/examples/gpt.rel" --no-timing --no-numeric)

"$GG" verify "${ARGS[@]}" >"$TMP/plain.txt" 2>"$TMP/plain.err"
"$GG" verify "${ARGS[@]}" --dump-egraph mm >"$TMP/flag.txt" 2>"$TMP/flag.err"
GG_DUMP_EGRAPH=mm "$GG" verify "${ARGS[@]}" >"$TMP/env.txt" 2>"$TMP/env.err"
cmp -s "$TMP/plain.txt" "$TMP/flag.txt" || fail "--dump-egraph changed the report: $(diff "$TMP/plain.txt" "$TMP/flag.txt" | head)"
cmp -s "$TMP/plain.txt" "$TMP/env.txt" || fail "GG_DUMP_EGRAPH changed the report"
grep -qE '^c[0-9]+: .*mm\([0-9]+,[0-9]+\)#[0-9]+' "$TMP/flag.err" ||
  fail "no e-graph with an mm node on stderr: $(head -c 300 "$TMP/flag.err")"
cmp -s "$TMP/flag.err" "$TMP/env.err" || fail "the flag and the variable print different e-graphs"
grep -qE '^c[0-9]+:' "$TMP/plain.err" && fail "an e-graph printed without --dump-egraph"
"$GG" verify "${ARGS[@]}" --dump-egraph no_such_operator >/dev/null 2>"$TMP/none.err"
grep -qE '^c[0-9]+:' "$TMP/none.err" && fail "an e-graph printed for an unknown operator name"
echo "dump_egraph: ok"
