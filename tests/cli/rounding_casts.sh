#!/usr/bin/env bash
# rounding_casts: floating-point casts under the engine's rounding-ignored semantics
# (src/symbolic/lemmas/rounding.rules), on the committed corpus case of torchtitan's own Qwen3 MoE
# (tests/corpus/torchtitan_qwen3_moe/fwd, TP 2): its bf16 grouped mms are cast back with
# .type_as(x) after each rank rounded its partial sum, so
#   - verify REFINES under the premise "rounding" that names the lemma used (cast-of-sumr) and the
#     graphs' narrowing conversions (f32->bf16), in the text report and the JSON report;
#   - verify --exact-casts (the rounding lemmas left out) is UNKNOWN at S's _to_copy (exit 3);
#   - a program without narrowing casts (torchtitan's Llama3, all f32) lists no such premise;
#   - in a LibTorch build, check of the joint MoE at TP 4 with seed 0 HOLDS: its scalar loss,
#     whose tolerance from one perturbed run of S was 0.003 against a difference of 0.0088 (a
#     false FAILS), is judged again on 8 runs' samples (check.cc's Rejudge).
# The verify parts are symbolic (--no-numeric): the same in a build without LibTorch.
set -euo pipefail
GG=$1
ROOT=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
CASE=$ROOT/tests/corpus/torchtitan_qwen3_moe/fwd
ARGS=(--seq "$CASE/seq.json" --dist "$CASE/tp2.json" --relations "$CASE/spec.rel" --no-numeric
      --no-timing)

"$GG" verify "${ARGS[@]}" --json "$TMP/report.json" >"$TMP/out" || fail "verify: exit $?"
head -1 "$TMP/out"
head -1 "$TMP/out" |
  grep -q '^REFINES under 1 premise (rounding floating-point rounding at casts ignored' ||
  fail "first line: $(head -1 "$TMP/out")"
grep -A3 '^premises' "$TMP/out" | grep -q 'rounding .*used: cast-of-sumr.*S narrows: .*(f32->bf16)' ||
  fail "premises section: $(grep -A3 '^premises' "$TMP/out")"
grep -q '"kind": "rounding"' "$TMP/report.json" || fail "JSON report: no premise of kind rounding"

code=0
"$GG" verify "${ARGS[@]}" --exact-casts >"$TMP/exact" || code=$?
[[ $code -eq 3 ]] || fail "--exact-casts: exit $code, expected 3 (UNKNOWN)"
head -1 "$TMP/exact" | grep -q '^UNKNOWN: .*_to_copy' || fail "--exact-casts: $(head -1 "$TMP/exact")"

LLAMA=$ROOT/tests/corpus/torchtitan_llama/fwd
"$GG" verify --seq "$LLAMA/seq.json" --dist "$LLAMA/tp2.json" --relations "$LLAMA/spec.rel" \
  --no-numeric --no-timing >"$TMP/llama" || fail "verify llama: exit $?"
if grep -q '^  rounding' "$TMP/llama"; then fail "f32 program lists a rounding premise"; fi
if "$GG" check --help >/dev/null 2>&1; then
  JOINT=$ROOT/tests/corpus/torchtitan_qwen3_moe/joint
  "$GG" check --seq "$JOINT/seq.json" --dist "$JOINT/tp4.json" --relations "$JOINT/spec.rel" \
    --seed 0 --no-timing >"$TMP/check" || fail "check joint TP 4 seed 0: exit $?: $(head -8 "$TMP/check")"
  head -1 "$TMP/check" | grep -q '^check: HOLDS' || fail "check: $(head -1 "$TMP/check")"
  # the loss's tolerance from 8 runs, not the one-run 0.003
  tol=$(grep -A1 'holds  getitem_7 == ' "$TMP/check" | sed -n 's/.*tolerance \([0-9.e-]*\).*/\1/p' | head -1)
  python3 -c "import sys; sys.exit(0 if float('$tol') > 0.02 else 1)" ||
    fail "the loss's tolerance $tol: not judged on several runs"
else
  echo "rounding_casts: SKIP graphguard check: built without LibTorch (laptop mode)"
fi
echo "rounding_casts: MoE REFINES under the rounding premise; --exact-casts UNKNOWN; f32 no premise"
