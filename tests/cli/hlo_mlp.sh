#!/usr/bin/env bash
# XLA HLO text (docs/graph-format.md "HLO text"): a two-layer MLP (dot, bias add, relu as
# maximum(x, 0), dot) against its Megatron-style TP2 split written as one SPMD module for both
# ranks (column-parallel first dot, row-parallel second dot and an all-reduce). verify REFINES,
# also with the all-reduce asynchronous (all-reduce-start/-done);
# the same module without the all-reduce is never REFINES; likewise the sequence-parallel split
# (all-gather, reduce-scatter) and its bug with a group out of rank order. stats read the module;
# a bad module is exit 2 with file:line.
# Usage: hlo_mlp.sh <graphguard> <repo root>
set -euo pipefail
GG=$1 ROOT=$2
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
D="$ROOT/tests/data/hlo"

# verify <D module> <spec>: prints the exit code
verify() {
  local dist=$1 spec=$2 code=0
  shift 2
  "$GG" verify --seq "$D/mlp_seq.hlo" --dist "$D/$dist" --relations "$D/$spec" --no-timing \
    --no-numeric "$@" >"$TMP/out" 2>"$TMP/err" || code=$?
  echo "$code"
}

code=$(verify mlp_tp2.hlo mlp.rel)
[[ $code -eq 0 ]] || fail "mlp_tp2: exit $code: $(cat "$TMP/err" "$TMP/out")"
head -1 "$TMP/out" | grep -q '^REFINES: ' || fail "mlp_tp2: $(head -1 "$TMP/out")"

# The all-reduce asynchronous (all-reduce-start, other work, all-reduce-done): the same.
code=$(verify mlp_tp2_async.hlo mlp.rel)
[[ $code -eq 0 ]] || fail "mlp_tp2_async: exit $code: $(cat "$TMP/err" "$TMP/out")"
head -1 "$TMP/out" | grep -q '^REFINES: ' || fail "mlp_tp2_async: $(head -1 "$TMP/out")"

# Without the all-reduce each rank holds a partial sum: not a refinement (never REFINES).
code=$(verify mlp_tp2_no_allreduce.hlo mlp.rel)
[[ $code -eq 1 || $code -eq 3 ]] || fail "no all-reduce: exit $code: $(cat "$TMP/err" "$TMP/out")"
if head -1 "$TMP/out" | grep -q '^REFINES'; then fail "no all-reduce verified as REFINES"; fi

# Sequence parallel: rows of x all-gathered, partial sums reduce-scattered (iota replica groups).
code=$(verify mlp_sp2.hlo mlp_sp.rel)
[[ $code -eq 0 ]] || fail "mlp_sp2: exit $code: $(cat "$TMP/err" "$TMP/out")"
head -1 "$TMP/out" | grep -q '^REFINES: ' || fail "mlp_sp2: $(head -1 "$TMP/out")"
grep -q 'dot_7 == concat(0, reduce_scatter_8@0, reduce_scatter_8@1)' "$TMP/out" ||
  fail "mlp_sp2: output relation: $(cat "$TMP/out")"
# The reduce-scatter's group out of rank order ({1,0}): rank 0 keeps the second block.
code=$(verify mlp_sp2_reversed_groups.hlo mlp_sp.rel)
[[ $code -eq 1 || $code -eq 3 ]] || fail "reversed groups: exit $code: $(cat "$TMP/err" "$TMP/out")"
if head -1 "$TMP/out" | grep -q '^REFINES'; then fail "reversed groups verified as REFINES"; fi

# stats read the module as one program of two ranks.
"$GG" stats "$D/mlp_tp2.hlo" >"$TMP/stats" 2>&1 || fail "stats: $(cat "$TMP/stats")"
grep -q '^program: 2 ranks, 1 process group$' "$TMP/stats" || fail "stats: $(cat "$TMP/stats")"
grep -q "^group 'hlo_ranks_0_1': ranks 0 1$" "$TMP/stats" || fail "stats group: $(cat "$TMP/stats")"

# import writes the program as GraphGuard JSON (both ranks, the group), which verifies alike.
"$GG" import "$D/mlp_tp2.hlo" -o "$TMP/tp2.json" || fail "import"
"$GG" verify --seq "$D/mlp_seq.hlo" --dist "$TMP/tp2.json" --relations "$D/mlp.rel" --no-timing \
  --no-numeric >"$TMP/out" 2>"$TMP/err" || fail "verify of the JSON: $(cat "$TMP/err" "$TMP/out")"
head -1 "$TMP/out" | grep -q '^REFINES: ' || fail "JSON: $(head -1 "$TMP/out")"

# One module is the program of every rank: a second file is an error.
code=0; "$GG" stats "$D/mlp_tp2.hlo" "$D/mlp_sp2.hlo" >/dev/null 2>"$TMP/err" || code=$?
[[ $code -eq 2 ]] || fail "two modules: exit $code"
grep -q "pass one .hlo file" "$TMP/err" || fail "two modules: $(cat "$TMP/err")"

# A bad module: exit 2 naming the file and the line.
printf 'HloModule m\nENTRY %%e {\n  %%p = f32[2] parameter(0)\n  ROOT %%a = f32[3] add(%%p, %%p)\n}\n' \
  >"$TMP/bad.hlo"
code=0; "$GG" stats "$TMP/bad.hlo" >/dev/null 2>"$TMP/err" || code=$?
[[ $code -eq 2 ]] || fail "bad module: exit $code"
grep -q "bad.hlo:4: " "$TMP/err" || fail "bad module: no file:line: $(cat "$TMP/err")"
echo "hlo_mlp: ok"
