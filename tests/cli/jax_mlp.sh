#!/usr/bin/env bash
# jax_mlp: JAX programs captured as XLA HLO (`graphguard-capture jax`, gg_capture/jax_capture.py)
# and verified end to end on 2 CPU host devices:
#   1. gg_capture.jax_models:mlp, a Megatron-style TP MLP under jax.jit shardings (x replicated,
#      w1/b1 column-sharded, w2 row-sharded, output replicated): S = the jitted function on one
#      device, D = the module after XLA's SPMD partitioner, the spec from the PartitionSpecs
#      (inputs named by jax's argument names): verify REFINES; the HLO keeps jax's source lines;
#   2. jax.grad of it (--grad, tanh and relu activations): REFINES; the relu gradient's compare
#      flipped in D: never REFINES;
#   2b. its sequence-parallel form (mlp_sp) on 4 devices: REFINES;
#   2c. gg_capture.jax_models:llama_block (RMSNorm, rotary attention, SwiGLU) under TP: REFINES,
#      also with its causal mask and rotary tables computed inside, and its --grad; the mask
#      off by one or another rotary base in D: never REFINES; in LibTorch builds the numeric
#      check of the gradient HOLDS and verify of the off-by-one mask is a VIOLATION; at TP 8
#      (8 heads) and with sequence parallelism (sp=true, TP 4; gathers on dim 1), fwd and grad;
#   3. the same MLP with jax.shard_map and an explicit psum over 'tp': REFINES;
#   4. its bug, the psum over the wrong (size-1) mesh axis 'dp': never REFINES;
#   5. a malformed --mesh: exit 2 with the message.
# Before that, without jax: the modules of step 1 as checked in (tests/data/hlo/jax_mlp_*.hlo,
# jax 0.10.2) REFINES, and the same D with its all-reduce removed never REFINES.
# Steps 1-5 skip (exit 0, say SKIP) when .venv has no jax (laptop mode).
# Usage: jax_mlp.sh <graphguard> <repo root>
source "$(dirname "$0")/lib/jax_capture.sh" "$@"
D="$ROOT/tests/data/hlo"

code=$(verify_files "$D/jax_mlp_seq.hlo" "$D/jax_mlp_tp2.hlo" "$D/jax_mlp.rel" --no-numeric)
[[ $code -eq 0 ]] && head -1 "$TMP/out" | grep -q '^REFINES: ' ||
  fail "checked-in modules: exit $code: $(cat "$TMP/err" "$TMP/out")"
# The ROOT all-reduce dropped: each rank returns its partial product.
sed -e 's/^  ROOT %all-reduce = .*$/  ROOT %copy.out = f32[8,16]{1,0} copy(%dot.1)/' \
  "$D/jax_mlp_tp2.hlo" >"$TMP/no_allreduce.hlo"
! grep -q all-reduce "$TMP/no_allreduce.hlo" || fail "the all-reduce was not removed"
code=$(verify_files "$D/jax_mlp_seq.hlo" "$TMP/no_allreduce.hlo" "$D/jax_mlp.rel" --no-numeric)
[[ $code -eq 1 || $code -eq 3 ]] || fail "no all-reduce: exit $code: $(cat "$TMP/out")"
if head -1 "$TMP/out" | grep -q '^REFINES'; then fail "no all-reduce verified as REFINES"; fi

skip_without_jax capture "checked-in modules ok"

capture mlp gg_capture.jax_models:mlp --mesh tp=2
grep -q '^input "w1" = shard(1)$' "$TMP/mlp/spec.rel" || fail "spec: $(cat "$TMP/mlp/spec.rel")"
grep -q '^output #0 = replicate$' "$TMP/mlp/spec.rel" || fail "spec: $(cat "$TMP/mlp/spec.rel")"
grep -q 'all-reduce' "$TMP/mlp/dist.hlo" || fail "D has no all-reduce: $(cat "$TMP/mlp/dist.hlo")"
refines mlp
# jax's metadata gives the user's file and line (gg_capture/jax_models.py, the matmuls).
"$GG" stats "$TMP/mlp/dist.hlo" >"$TMP/stats" 2>&1 || fail "stats: $(cat "$TMP/stats")"
grep -q '^program: 2 ranks' "$TMP/stats" || fail "stats: $(cat "$TMP/stats")"
"$GG" import "$TMP/mlp/seq.hlo" -o "$TMP/seq.json" || fail "import"
grep -q 'jax_models.py' "$TMP/seq.json" || fail "no source location in the imported S"

capture grad gg_capture.jax_models:mlp --mesh tp=2 --grad --set activation=tanh
refines grad
# relu: jax's gradient of maximum compares (x == max(x, 0), 0 == max(x, 0)) and selects between
# constants; REFINES. The first compare flipped to != in D: never REFINES.
capture relu_grad gg_capture.jax_models:mlp --mesh tp=2 --grad
refines relu_grad
awk '!done && /compare\(.*direction=EQ/ { sub(/direction=EQ/, "direction=NE"); done = 1 } 1' \
  "$TMP/relu_grad/dist.hlo" >"$TMP/relu_ne.hlo"
! cmp -s "$TMP/relu_grad/dist.hlo" "$TMP/relu_ne.hlo" || fail "no EQ compare in the relu gradient"
never_refines relu_grad "the relu gradient with != for ==" "$TMP/relu_ne.hlo"

# Sequence parallel on 4 devices: x's rows all-gathered, the output cut per device by
# partition-id (a table of offsets and a dynamic-slice, folded to each rank's slice).
capture sp4 gg_capture.jax_models:mlp_sp --mesh tp=4
grep -q 'partition-id' "$TMP/sp4/dist.hlo" || fail "sp4: D does not slice by partition-id"
refines sp4

# The Llama-style block (RMSNorm, rotary attention with an additive causal mask, SwiGLU).
capture llama gg_capture.jax_models:llama_block --mesh tp=2
refines llama
# The same with the causal mask (jnp.tril, jnp.where) and the rotary tables (jnp.arange) computed
# inside: values from no input, S's and D's alike; REFINES. D's mask off by one (> for >=) or
# its rotary base changed: never REFINES.
capture llama_where gg_capture.jax_models:llama_block --mesh tp=2 --set mask=where --set rope=computed
refines llama_where
awk '!done && /compare\(.*direction=GE/ { sub(/direction=GE/, "direction=GT"); done = 1 } 1' \
  "$TMP/llama_where/dist.hlo" >"$TMP/mask_gt.hlo"
! cmp -s "$TMP/llama_where/dist.hlo" "$TMP/mask_gt.hlo" || fail "no GE compare in the mask"
never_refines llama_where "the causal mask off by one" "$TMP/mask_gt.hlo"
sed -e 's/constant(10000)$/constant(500000)/' "$TMP/llama_where/dist.hlo" >"$TMP/rope_base.hlo"
! cmp -s "$TMP/llama_where/dist.hlo" "$TMP/rope_base.hlo" || fail "no rotary base in D"
never_refines llama_where "another rotary base" "$TMP/rope_base.hlo"
# jax.grad of the block (the RMSNorm backward's x * g and g * x, which XLA's CSE merges in D).
capture llama_grad gg_capture.jax_models:llama_block --mesh tp=2 --grad
refines llama_grad
# At TP 8 (8 heads, one per device), and with sequence parallelism on 4 devices (x and the
# output split along the sequence: XLA all-gathers dim 1 before the column-parallel projections
# and reduce-scatters after the row-parallel ones), forward and --grad: REFINES.
capture llama_tp8 gg_capture.jax_models:llama_block --mesh tp=8 --set heads=8
refines llama_tp8
capture llama_sp gg_capture.jax_models:llama_block --mesh tp=4 --set sp=true
grep -q 'all-gather(.*dimensions={1}' "$TMP/llama_sp/dist.hlo" || fail "llama_sp: no gather on dim 1"
refines llama_sp
capture llama_sp_grad gg_capture.jax_models:llama_block --mesh tp=4 --set sp=true --grad
refines llama_sp_grad

# With the numeric runtime (LibTorch builds: the plugin beside graphguard), HLO graphs run too:
# check HOLDS on the block's gradient, and verify gives VIOLATION with numeric evidence for the
# causal mask off by one.
holds llama_grad "the block's gradient"
holds llama_sp_grad "the sequence-parallel gradient"
violation llama_where "the mask off by one" "$TMP/mask_gt.hlo"

capture smap gg_capture.jax_models:mlp_shard_map --mesh dp=1 --mesh tp=2
refines smap

# psum over 'dp' (size 1): each device keeps its partial sum; never REFINES.
capture smap_bug gg_capture.jax_models:mlp_shard_map --mesh dp=1 --mesh tp=2 --set psum_axis=dp
never_refines smap_bug "wrong psum axis"

code=0; "$PY" -m gg_capture jax gg_capture.jax_models:mlp --mesh tp -o "$TMP/x" \
  >"$TMP/cap.out" 2>&1 || code=$?
[[ $code -eq 2 ]] || fail "bad --mesh: exit $code"
grep -q "write AXIS=SIZE" "$TMP/cap.out" || fail "bad --mesh: $(cat "$TMP/cap.out")"
echo "jax_mlp: ok"
