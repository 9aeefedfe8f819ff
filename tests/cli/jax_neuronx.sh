#!/usr/bin/env bash
# jax_neuronx: gg_capture.jax_models:neuronx_llama, a Llama decoder written the way
# transformers-neuronx writes it (shard_map local code, each rank's fused QKV block [q_r; k_r;
# v_r], psum after the row-parallel projections, vocabulary-sharded logits, grouped kv heads),
# captured by `graphguard-capture jax` at small sizes (hidden 64, 8 query / 4 kv heads, FFN 128,
# vocabulary 256, 2 x 8 tokens) and verified; the spec's QKV rule is the factory's own:
#   1. TP 2 with 2 layers and TP 4: REFINES, the logits related as concat(2, ...) of the ranks';
#   2. bug=k_from_q (each rank reads K from its Q columns, the artifact's broken module): never
#      REFINES; in LibTorch builds verify is a VIOLATION with numeric evidence;
#   3. --grad of a program with its own spec rules: exit 2 with the reason.
# Skips (exit 0, says SKIP) when .venv has no jax.
# Usage: jax_neuronx.sh <graphguard> <repo root>
source "$(dirname "$0")/lib/jax_capture.sh" "$@"
skip_without_jax
SMALL=(hidden=64 heads=8 kv_heads=4 ffn=128 vocab=256 batch=2 seq=8)
M=gg_capture.jax_models:neuronx_llama

capture tp2 "$M" --mesh tp=2 --set "${SMALL[@]}" layers=2
grep -q '^input "p5" = concat(1, \[slice(D@r, 1, 0, 32) for r in ranks\], \[slice(D@r, 1, 32, 48)' \
  "$TMP/tp2/spec.rel" || fail "QKV rule: $(cat "$TMP/tp2/spec.rel")"
grep -q '^input "p12" = concat(1,' "$TMP/tp2/spec.rel" || fail "layer 2's QKV rule"
refines tp2
grep -q '== concat(2, .*@0, .*@1)' "$TMP/out" || fail "tp2 logits: $(cat "$TMP/out")"

capture tp4 "$M" --mesh tp=4 --set "${SMALL[@]}"
refines tp4

capture bug "$M" --mesh tp=2 --set "${SMALL[@]}" bug=k_from_q
never_refines bug k_from_q
violation bug k_from_q

code=0
"$PY" -m gg_capture jax "$M" --mesh tp=2 --set "${SMALL[@]}" --grad -o "$TMP/grad" \
  >"$TMP/cap.out" 2>&1 || code=$?
[[ $code -eq 2 ]] && grep -q 'spec rules of its own' "$TMP/cap.out" ||
  fail "--grad with rules: exit $code: $(cat "$TMP/cap.out")"
echo "jax_neuronx: ok"
