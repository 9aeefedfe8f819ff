#!/usr/bin/env bash
# graphguard verify --lemmas FILE: user lemmas in the catalogue's syntax. With the catalogue's
# mm-concat-inner removed (GG_LEMMA_DIR), the tensor-parallel MLP of tests/data/regions is
# UNKNOWN; the same lemma passed with --lemmas makes it REFINES under a premise naming the lemma,
# its file:line and how it was checked. Refused with exit 2 and file:line: a malformed rule, an id
# the catalogue has, a lemma without a self-test signature, and (with the numeric runtime) a false
# lemma, with its counterexample.
# Usage: user_lemmas.sh <graphguard> <repo root>
set -euo pipefail
GG=$1 ROOT=$2
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
export OMP_WAIT_POLICY=passive
M="$ROOT/tests/data/regions/mlp"
ARGS=(--seq "$M/seq.py" --dist "$M/dist" --relations "$M/whole.rel" --no-numeric --no-timing)

# The catalogue without mm-concat-inner (its comment, rule and signature lines).
mkdir "$TMP/lemmas"
cp "$ROOT"/src/symbolic/lemmas/*.rules "$TMP/lemmas/"
python3 "$ROOT/tests/cli/remove_lemma.py" "$TMP/lemmas" mm-concat-inner
grep -q '^mm-concat-inner:' "$TMP/lemmas/linalg.rules" && fail "the lemma was not removed"
cat >"$TMP/user.rules" <<'RULES'
# mm([x_0 | x_1 | ...], [y_0; y_1; ...]) = sum_i mm(x_i, y_i)        (row-parallel linear)
mm-concat-inner: (mm (concat 1 ?xs...) (concat 0 ?ys...)) => (sumr (mm ?xs ?ys)...) if inner-splits-match
#   test ?xs: [m, k*]; ?ys: [k*, n]
RULES

run() {  # run <expected exit> <output file> <verify arguments...>
  local want=$1 out=$2 code=0
  shift 2
  "$GG" verify "$@" >"$out" 2>"$out.err" || code=$?
  [[ $code -eq $want ]] || fail "verify $*: exit $code, expected $want: $(head -c 400 "$out.err") $(head -3 "$out")"
}

run 0 "$TMP/full.txt" "${ARGS[@]}"
GG_LEMMA_DIR="$TMP/lemmas" run 3 "$TMP/without.txt" "${ARGS[@]}"
head -1 "$TMP/without.txt" | grep -q '^UNKNOWN' || fail "without the lemma: $(head -1 "$TMP/without.txt")"
GG_LEMMA_DIR="$TMP/lemmas" run 0 "$TMP/with.txt" "${ARGS[@]}" --lemmas "$TMP/user.rules"
head -1 "$TMP/with.txt" | grep -q '^REFINES under 1 premise' ||
  fail "with --lemmas: $(head -1 "$TMP/with.txt")"
grep -q "mm-concat-inner from --lemmas" "$TMP/with.txt" || fail "the premise does not name the lemma"
grep -q "user.rules:2" "$TMP/with.txt" || fail "the premise does not give the lemma's file:line"
if "$GG" infer-relations --help >/dev/null 2>&1; then
  grep -q "self-tested: 4 draws" "$TMP/with.txt" || fail "the premise does not say it was self-tested"
else
  grep -q "not self-tested" "$TMP/with.txt" || fail "the premise does not say it was not self-tested"
fi

# refuse <name> <expected message> <rule file text>
refuse() {
  local name=$1 want=$2
  printf '%s\n' "$3" >"$TMP/$name.rules"
  run 2 "$TMP/$name.txt" "${ARGS[@]}" --lemmas "$TMP/$name.rules"
  grep -q -- "$name.rules:$want" "$TMP/$name.txt.err" || fail "$name: $(cat "$TMP/$name.txt.err")"
}
refuse repeated "2: .*already in the catalogue" "$(cat "$TMP/user.rules")"
refuse untested "2: .*no self-test signature" "# neg(neg(x)) = x
neg-neg-user: (neg (neg ?x)) => ?x"
refuse malformed "2: " "# unbalanced
bad-rule: (neg (neg ?x) => ?x
#   test ?x: [a]"
run 2 "$TMP/nofile.txt" "${ARGS[@]}" --lemmas "$TMP/no-such.rules"
grep -q "no-such.rules" "$TMP/nofile.txt.err" || fail "a missing lemma file: $(cat "$TMP/nofile.txt.err")"

if "$GG" infer-relations --help >/dev/null 2>&1; then
  refuse false "2: .*fails its numeric self-test: .*differs from" "# exp(sum x) = sum exp(x)   (false)
exp-of-sumr-user: (exp (sumr ?xs...)) => (sumr (exp ?xs)...)
#   test W in 2..4; ?xs: [a, b]"
else
  echo "user_lemmas: no numeric runtime in this build: the false-lemma refusal is not checked"
fi
echo "user_lemmas: ok"
