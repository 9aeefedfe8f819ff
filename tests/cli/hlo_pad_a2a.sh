#!/usr/bin/env bash
# XLA HLO pad and all-to-all (docs/graph-format.md section 2b): pad is read as aten::cat of
# aten::full pieces around the (cut) operand, all-to-all as _c10d_functional::all_to_all_single
# (a transpose around it for another dimension). A replicated pad verifies REFINES, its swapped
# padding does not; a pad of the columns of a row-sharded tensor REFINES, with another value
# not; two all-to-alls (dims 0 and 1) verify REFINES against the blocks they move, the same with
# a group out of rank order does not. A malformed padding is exit 2 with file:line.
# Usage: hlo_pad_a2a.sh <graphguard> <repo root>
set -euo pipefail
GG=$1 ROOT=$2
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
D="$ROOT/tests/data/hlo"

# verify <S module> <D module> <spec>: prints the exit code
verify() {
  local code=0
  "$GG" verify --seq "$D/$1" --dist "$D/$2" --relations "$D/$3" --no-timing --no-numeric \
    >"$TMP/out" 2>"$TMP/err" || code=$?
  echo "$code"
}
refines() {  # refines <S> <D> <spec>
  local code
  code=$(verify "$@")
  [[ $code -eq 0 ]] || fail "$2: exit $code: $(cat "$TMP/err" "$TMP/out")"
  head -1 "$TMP/out" | grep -q '^REFINES: ' || fail "$2: $(head -1 "$TMP/out")"
}
never_refines() {  # never_refines <S> <D> <spec> <what>
  local code
  code=$(verify "$1" "$2" "$3")
  [[ $code -eq 1 || $code -eq 3 ]] || fail "$4: exit $code: $(cat "$TMP/err" "$TMP/out")"
  if head -1 "$TMP/out" | grep -q '^REFINES'; then fail "$4 verified as REFINES"; fi
}

refines pad_seq.hlo pad_rep2.hlo pad.rel
never_refines pad_seq.hlo pad_rep2_swapped.hlo pad.rel "swapped padding"
# The columns padded (with 0.5) of x split by rows: each rank pads its own rows, REFINES; padding
# with 0 instead does not.
refines pad_cols_seq.hlo pad_cols_rows2.hlo pad_cols.rel
never_refines pad_cols_seq.hlo pad_cols_rows2_wrong_value.hlo pad_cols.rel "padding with 0"
refines a2a_seq.hlo a2a_ep2.hlo a2a.rel
never_refines a2a_seq.hlo a2a_ep2_reversed_groups.hlo a2a.rel "a reversed a2a group"

# A malformed padding: exit 2 naming the file and the line.
printf 'HloModule m\nENTRY %%e {\n  %%x = f32[2] parameter(0)\n  %%z = f32[] constant(0)\n  ROOT %%p = f32[3] pad(%%x, %%z), padding=1_0_0_0\n}\n' \
  >"$TMP/bad.hlo"
code=0; "$GG" stats "$TMP/bad.hlo" >/dev/null 2>"$TMP/err" || code=$?
[[ $code -eq 2 ]] || fail "bad padding: exit $code"
grep -q "bad.hlo:5: .*padding=1_0_0_0" "$TMP/err" || fail "bad padding: $(cat "$TMP/err")"
echo "hlo_pad_a2a: ok"
