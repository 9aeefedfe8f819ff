#!/usr/bin/env bash
# FX dump forms of other capture setups (tests/data/forms, docs/graph-format.md): pytree-flattened
# joint graphs, directories with several graph kinds per rank (--graph), out= variants and
# auto_functionalized_v2 load and verify; the ambiguous directory and untyped leaves are exit 2
# with file:line and what to do.
# Usage: graph_forms.sh <graphguard> <repo root>
set -euo pipefail
GG=$1 ROOT=$2
F="$ROOT/tests/data/forms"
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

expect_exit() {  # expect_exit CODE ARGS...: runs graphguard, output in $TMP/out, $TMP/err
  local want=$1 code=0
  shift
  "$GG" "$@" >"$TMP/out" 2>"$TMP/err" || code=$?
  [[ $code -eq $want ]] || fail "graphguard $*: exit $code, expected $want: $(cat "$TMP/err" "$TMP/out")"
}

# Several kinds per rank: an error listing them, naming the option; --graph picks one.
expect_exit 2 stats "$F/kinds"
grep -q "kinds: the directory holds several graph kinds for rank 0 .*'bw.g0' (2 files), 'fw.g0' (2 files)); pick one with --graph KIND" \
  "$TMP/err" || fail "ambiguous kinds: $(cat "$TMP/err")"
expect_exit 0 stats --graph fw.g0 "$F/kinds"
grep -q '^program: 2 ranks' "$TMP/out" || fail "stats --graph fw.g0: $(cat "$TMP/out")"
verify_kinds() {
  expect_exit "$1" verify --seq "$F/kinds_spec/seq.py" --dist "$F/kinds" --graph "$2" \
    --relations "$F/kinds_spec/spec.rel" --no-timing
}
verify_kinds 0 fw.g0
head -1 "$TMP/out" | grep -q '^REFINES: ' || fail "verify --graph fw.g0: $(head -1 "$TMP/out")"
verify_kinds 0 'fw.*'
verify_kinds 2 bw.g0  # the bw kind has no `neg`: the spec names a missing tensor
grep -q "rank 0 has no tensor named neg" "$TMP/err" || fail "verify --graph bw.g0: $(cat "$TMP/err")"
expect_exit 2 verify --seq "$F/kinds_spec/seq.py" --dist "$F/kinds" \
  --relations "$F/kinds_spec/spec.rel" --no-timing
grep -q "pick one with --graph KIND" "$TMP/err" || fail "verify without --graph: $(cat "$TMP/err")"
for cmd in stats import verify explain; do
  "$GG" "$cmd" --help >"$TMP/help"
  grep -q -- '--graph KIND' "$TMP/help" || fail "$cmd --help lacks --graph"
done

# Joint graph (pytree signature): loads, round-trips through JSON, verifies against itself.
expect_exit 0 stats "$F/joint/joint.py"
grep -q '^  inputs: 3$' "$TMP/out" || fail "joint inputs: $(cat "$TMP/out")"
expect_exit 0 import "$F/joint/joint.py" -o "$TMP/joint.json"
expect_exit 0 verify --seq "$F/joint/joint.py" --dist "$TMP/joint.json" \
  --relations "$F/joint/spec.rel" --no-timing
head -1 "$TMP/out" | grep -q '^REFINES: ' || fail "joint verify: $(head -1 "$TMP/out")"
expect_exit 2 stats "$F/joint/untyped.py"
grep -q "untyped.py:4: input 'primals_1' (a leaf of fx_pytree.tree_flatten_spec) has no type" \
  "$TMP/err" || fail "untyped leaves: $(cat "$TMP/err")"

# out= variants are their functional overloads: D written with out= refines the functional S.
expect_exit 0 verify --seq "$F/out_variant/functional.py" --dist "$F/out_variant/out.py" \
  --relations "$F/out_variant/spec.rel" --no-timing
head -1 "$TMP/out" | grep -q '^REFINES: ' || fail "out= verify: $(head -1 "$TMP/out")"
expect_exit 2 stats "$F/out_variant/aliased.py"
grep -q "aliased.py:6: .*read before" "$TMP/err" || fail "aliased out=: $(cat "$TMP/err")"

# auto_functionalized_v2: whole bases are v1 (a known op), a view of a base is opaque.
expect_exit 0 stats "$F/functionalized_v2/whole_bases.py"
grep -q '_C::fused_add_rms_norm.default \[functionalized\]' "$TMP/out" ||
  fail "v2 whole bases: $(cat "$TMP/out")"
expect_exit 0 stats "$F/functionalized_v2/view_base.py"
grep -q 'unknown operators (opaque, typed from the file): higher_order::auto_functionalized_v2 1' \
  "$TMP/out" || fail "v2 view base: $(cat "$TMP/out")"
expect_exit 2 stats --strict-ops "$F/functionalized_v2/view_base.py"

# Data-dependent sizes: Sym(u0) integers, guards dropped, tensors of size u0 load; each graph's
# u0 is its own, so a relation over them is never proved (S's u0 is not known to be D's).
expect_exit 0 stats "$F/unbacked/seq.py"
grep -q '^  nodes: 5 ' "$TMP/out" || fail "unbacked stats: $(cat "$TMP/out")"
code=0
"$GG" verify --seq "$F/unbacked/seq.py" --dist "$F/unbacked/dist" --relations "$F/unbacked/spec.rel" \
  --no-timing >"$TMP/out" 2>"$TMP/err" || code=$?
[[ $code -eq 2 || $code -eq 3 ]] || fail "unbacked verify: exit $code: $(cat "$TMP/out" "$TMP/err")"
grep -q 'u0_s' "$TMP/out" "$TMP/err" || fail "unbacked verify does not name S's u0: $(cat "$TMP/err")"
grep -q "each graph's own" "$TMP/out" "$TMP/err" ||
  fail "unbacked verify does not say why the sizes differ: $(cat "$TMP/err")"

# An untyped constant read by an operator: file:line and what to do.
expect_exit 2 stats "$F/constants/untyped.py"
grep -q "untyped.py:5: .*'_tensor_constant0' (line 4), which the capture left without a type" \
  "$TMP/err" || fail "untyped constant: $(cat "$TMP/err")"
echo "graph_forms: ok"
