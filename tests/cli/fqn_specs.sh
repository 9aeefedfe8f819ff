#!/usr/bin/env bash
# Relation specs naming inputs by FQN (docs/relations.md, "Naming inputs by FQN"): the FQNs the
# AOT descriptor comments, Dynamo placeholder names and JSON "fqn" fields record pair S's and D's
# inputs (D's come in another order here), so one spec verifies all three forms, with the verdict
# of the spec written with graph names; a misspelt FQN is an error at its spec line, with the
# closest FQNs, exit 2.
# Usage: fqn_specs.sh <graphguard> <repo root>
set -euo pipefail
GG=$1 ROOT=$2
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
D="$ROOT/tests/data/fqn"

# verify <seq> <dist> <spec>: the first line of the report, exit code in $code
verify() {
  code=0
  "$GG" verify --seq "$D/$1" --dist "$D/$2" --relations "$D/$3" --no-timing >"$TMP/out" \
    2>"$TMP/err" || code=$?
}

verify aot/seq.py aot/dist aot_by_name.rel
[[ $code -eq 0 ]] || fail "by name: exit $code: $(cat "$TMP/out" "$TMP/err")"
by_name=$(head -1 "$TMP/out")
[[ $by_name == REFINES* ]] || fail "by name: $by_name"
for form in "aot/seq.py aot/dist" "dynamo/seq.py dynamo/dist" "json/seq.json json/dist.json"; do
  for spec in by_fqn.rel glob.rel explicit.rel; do
    # shellcheck disable=SC2086
    verify $form "$spec"
    [[ $code -eq 0 ]] || fail "$form $spec: exit $code: $(cat "$TMP/out" "$TMP/err")"
    [[ $(head -1 "$TMP/out") == "$by_name" ]] ||
      fail "$form $spec: '$(head -1 "$TMP/out")', by name '$by_name'"
  done
  # shellcheck disable=SC2086
  verify $form unknown.rel
  [[ $code -eq 2 ]] || fail "$form unknown.rel: exit $code, expected 2"
  grep -q "unknown.rel:2: no S input has the FQN \"mlp.fc1.weigth\"; closest FQNs in S: \"mlp.fc1.weight\"" \
    "$TMP/err" || fail "$form unknown.rel: $(cat "$TMP/err")"
done

# The JSON form keeps the FQNs through import: FX -> JSON -> JSON is a fixed point.
"$GG" import "$D/aot/dist" -o "$TMP/dist.json"
cmp "$TMP/dist.json" "$D/json/dist.json" || fail "importing aot/dist no longer gives json/dist.json"
grep -q '"fqn":"mlp.fc1.weight"' "$TMP/dist.json" || fail "import drops the FQNs"
echo "ok"
