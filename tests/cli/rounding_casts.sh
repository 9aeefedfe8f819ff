#!/usr/bin/env bash
# rounding_casts: floating-point casts under the engine's rounding-ignored semantics
# (src/symbolic/lemmas/rounding.rules), on the committed corpus case of torchtitan's own Qwen3 MoE
# (tests/corpus/torchtitan_qwen3_moe/fwd, TP 2): its bf16 grouped mms are cast back with
# .type_as(x) after each rank rounded its partial sum, so
#   - verify REFINES under the premise "rounding" that names the lemma used (cast-of-sumr) and the
#     graphs' narrowing conversions (f32->bf16), in the text report and the JSON report;
#   - verify --exact-casts (the rounding lemmas left out) is UNKNOWN at S's _to_copy (exit 3);
#   - a program without narrowing casts (torchtitan's Llama3, all f32) lists no such premise.
# Symbolic only (--no-numeric): the same in a build without LibTorch.
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
echo "rounding_casts: MoE REFINES under the rounding premise; --exact-casts UNKNOWN; f32 no premise"
