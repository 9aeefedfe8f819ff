#!/usr/bin/env bash
# graphguard verify on a region of a graph (docs/relations.md, "Regions"): `cut` makes a tensor a
# leaf holding its relation (a listed premise), inputs above the cuts need no rule, `expect`
# checks an intermediate tensor. On tests/data/regions/mlp: REFINES for the correct D and for a D
# whose bug lies above the cut (outside the region, by design); a bug inside the region is
# UNKNOWN (laptop) or VIOLATION (numeric runtime); a cut without a relation that the checked
# output reads is UNKNOWN naming it; an input inside the region without a rule is an error.
# Usage: verify_regions.sh <graphguard> <repo root>
set -euo pipefail
GG=$1 ROOT=$2
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
DIR="$ROOT/tests/data/regions/mlp"

# region <spec> <dist> <expected exit> [extra args...]
region() {
  local spec=$1 dist=$2 want=$3 code=0
  shift 3
  "$GG" verify --seq "$DIR/seq.py" --dist "$DIR/$dist" --relations "$DIR/$spec" --no-timing \
    "$@" >"$TMP/out" 2>"$TMP/err" || code=$?
  [[ $code -eq $want ]] ||
    fail "verify $spec $dist $*: exit $code, expected $want: $(cat "$TMP/out" "$TMP/err")"
}

# The correct D: REFINES, resting on the cut, which the premises list.
region region.rel dist 0
head -1 "$TMP/out" | grep -q '^REFINES under 1 premise (cut h == concat(1, h_par@0, h_par@1)): ' ||
  fail "REFINES does not name the cut premise: $(head -1 "$TMP/out")"
grep -q '^  cut      h == concat(1, h_par@0, h_par@1)  \[.*region.rel:4\]$' "$TMP/out" ||
  fail "the premises section does not list the cut: $(cat "$TMP/out")"
grep -q '^  yes      r == concat(1, r@0, r@1)$' "$TMP/out" || fail "expect r not checked: $(cat "$TMP/out")"
grep -q '^  yes      y == y@0$' "$TMP/out" || fail "output y not checked: $(cat "$TMP/out")"

# A bug above the cut (D negates x before h_par) is outside the region: still REFINES under the
# cut. The whole graph's spec sees it.
region region.rel dist_upstream_bug 0
head -1 "$TMP/out" | grep -q '^REFINES under 1 premise (cut ' || fail "upstream bug: $(head -1 "$TMP/out")"
region whole.rel dist 0
if "$GG" check --help >/dev/null 2>&1; then
  region whole.rel dist_upstream_bug 1
  # x and w1 have no rule, so the numeric run draws D's independently of S's and the cut premise
  # does not hold numerically: no evidence either way, and never REFINES (docs/relations.md).
  code=0
  "$GG" verify --seq "$DIR/seq.py" --dist "$DIR/dist_region_bug" --relations "$DIR/region.rel" \
    --no-timing >"$TMP/out" 2>"$TMP/err" || code=$?
  [[ $code -eq 1 || $code -eq 3 ]] || fail "region bug with the numeric runtime: exit $code"
else
  region whole.rel dist_upstream_bug 3
  region region.rel dist_region_bug 3
  head -1 "$TMP/out" | grep -q '^UNKNOWN: ' || fail "region bug: $(head -1 "$TMP/out")"
fi
region region.rel dist_region_bug 3 --no-numeric
grep -q '^  S operator    aten::mm.default -> y' "$TMP/out" || fail "the stopping operator: $(cat "$TMP/out")"

# A cut without a relation that y reads: UNKNOWN naming the cut, never REFINES.
region cut_unrelated.rel dist 3 --no-numeric
head -1 "$TMP/out" | grep -q "^UNKNOWN: S operator r (aten::relu.default) reads h, which the spec cuts without a relation (.*cut_unrelated.rel:3: cut h)" ||
  fail "unrelated cut: $(head -1 "$TMP/out")"
# ... and one nothing checked reads is allowed.
region cut_unread.rel dist 0

# An input inside the region without a rule: a spec error (2) naming it.
region missing_rule.rel dist 2
grep -q 'missing_rule.rel.*1 S input(s) are covered by no input rule: w2 (#2)' "$TMP/err" ||
  fail "missing rule: $(cat "$TMP/err")"
# The joint Megatron-style GPT of the bug benchmark (TP 2, SP), by region: from the cut at the
# logits' gradient back to layer 0's ln2 weight and bias gradients; the cross entropy above the
# cut is not analysed (its `labels` rule is kept for a numeric run only: without it the region
# still verifies). Correct: REFINES under the cut; the missing
# all-reduce of the norm gradients (Megatron-LM #1446): UNKNOWN at the unreduced gradient
# (VIOLATION with the numeric runtime, which the bug benchmark's whole-graph check shows).
BUGS="$ROOT/tests/bugs/megatron_1446_sp_norm_grad"
joint() {
  local v=$1 want=$2 code=0
  "$GG" verify --seq "$BUGS/$v/seq.json" --dist "$BUGS/$v/tp2.json" --no-timing --no-numeric \
    --relations "$ROOT/tests/data/regions/megatron_sp_ln2_grad.rel" >"$TMP/out" 2>"$TMP/err" || code=$?
  [[ $code -eq $want ]] || fail "joint $v: exit $code, expected $want: $(cat "$TMP/out" "$TMP/err")"
}
joint correct 0
head -1 "$TMP/out" | grep -q '^REFINES under 1 premise (cut view_20 == concat(1, view_20@0, view_20@1)): ' ||
  fail "joint region: $(head -1 "$TMP/out")"
grep -v '^input labels' "$ROOT/tests/data/regions/megatron_sp_ln2_grad.rel" >"$TMP/no_labels.rel"
code=0
"$GG" verify --seq "$BUGS/correct/seq.json" --dist "$BUGS/correct/tp2.json" --no-timing \
  --no-numeric --relations "$TMP/no_labels.rel" >"$TMP/out" 2>"$TMP/err" || code=$?
[[ $code -eq 0 ]] || fail "joint region without a labels rule: exit $code: $(cat "$TMP/out" "$TMP/err")"
joint buggy 3
head -1 "$TMP/out" | grep -q '^UNKNOWN: expected getitem_15 == getitem_15@0 but inferred getitem_15 == sum(getitem_15@0, getitem_15@1)' ||
  fail "joint region, buggy: $(head -1 "$TMP/out")"
# With the numeric runtime the region's bug is a VIOLATION with a counterexample: D's inputs
# follow the input rules (labels included), so the cut premise holds on the run and the
# unreduced gradient differs from S's.
if "$GG" check --help >/dev/null 2>&1; then
  code=0
  "$GG" verify --seq "$BUGS/buggy/seq.json" --dist "$BUGS/buggy/tp2.json" --no-timing \
    --relations "$ROOT/tests/data/regions/megatron_sp_ln2_grad.rel" >"$TMP/out" 2>"$TMP/err" || code=$?
  [[ $code -eq 1 ]] || fail "joint region, buggy, numeric: exit $code: $(cat "$TMP/out" "$TMP/err")"
  head -1 "$TMP/out" | grep -q '^VIOLATION: expected getitem_15 == getitem_15@0 .*numerically (graphguard check, seed 0, cpu) getitem_15 == getitem_15@0: max |S-D| ' ||
    fail "joint region, buggy, numeric: $(head -1 "$TMP/out")"
  grep -q '^  cut      view_20 == concat(1, view_20@0, view_20@1)' "$TMP/out" ||
    fail "joint region, buggy, numeric: the cut premise is not listed: $(cat "$TMP/out")"
fi
echo "verify_regions: ok"
