#!/usr/bin/env bash
# jax_mesh: JAX programs on a 2-D device mesh (TP x DP, 4 CPU host devices), captured as XLA HLO
# (`graphguard-capture jax`) and verified end to end. The spec writer states such a mesh with a
# `mesh dp = 2, tp = 2` statement and one placements(...) rule per argument and output
# (docs/relations.md), relating every data-parallel replica:
#   1. gg_capture.jax_models:mlp with --set data=dp: x's and the output's rows split over dp, the
#      weights Megatron-style over tp; XLA all-reduces over each dp row's tp group: REFINES; the
#      same with the axes in the other order (--mesh tp=2 --mesh dp=2) and at dp=4;
#   2. D's all-reduce over the dp groups instead ({0,2},{1,3}): never REFINES;
#   3. jax.shard_map with an explicit psum over tp on the 2-D mesh: REFINES; over dp: never;
#   4. jax.grad of the TP x DP MLP (--grad): REFINES; mlp_dp_grads, DDP's gradients by hand
#      (per-device grads of the local loss, an explicit psum over dp): REFINES; the psum over tp
#      instead (a gradient reduction on the wrong mesh axis): never REFINES;
#   5. the Llama-style block with its batch split over dp, forward and --grad: REFINES;
#   6. the JAX capture runs where torch cannot be imported (a JAX-only environment).
# Before that, without jax: modules of steps 1, 3 and 5 as checked in (tests/data/hlo/
# jax_*_dp2tp2*, jax 0.10.2: the MLP's gradient, the shard_map MLP, the Llama block) REFINE, and
# with an all-reduce moved to the dp groups never REFINE.
# Steps 1-6 skip (exit 0, say SKIP) when .venv has no jax (laptop mode).
# Usage: jax_mesh.sh <graphguard> <repo root>
source "$(dirname "$0")/lib/jax_capture.sh" "$@"

DATA=$ROOT/tests/data/hlo
checked_in() {  # checked_in <name>: REFINES as checked in; with its first all-reduce over the dp
  local name=$1 code  # groups instead of tp, never REFINES
  code=$(verify_files "$DATA/${name}_seq.hlo" "$DATA/$name.hlo" "$DATA/$name.rel" --no-numeric)
  [[ $code -eq 0 ]] && head -1 "$TMP/out" | grep -q '^REFINES: ' ||
    fail "checked-in $name: exit $code: $(head -3 "$TMP/out")"
  awk '!done && /all-reduce\(.*replica_groups=\{\{0,1\},\{2,3\}\}/ {
         sub(/replica_groups=\{\{0,1\},\{2,3\}\}/, "replica_groups={{0,2},{1,3}}"); done = 1 } 1' \
    "$DATA/$name.hlo" >"$TMP/mutant.hlo"
  ! cmp -s "$DATA/$name.hlo" "$TMP/mutant.hlo" || fail "checked-in $name: no tp all-reduce to move"
  code=$(verify_files "$DATA/${name}_seq.hlo" "$TMP/mutant.hlo" "$DATA/$name.rel" --no-numeric)
  [[ $code -eq 1 || $code -eq 3 ]] || fail "checked-in $name, all-reduce over dp: exit $code"
  if head -1 "$TMP/out" | grep -q '^REFINES'; then
    fail "checked-in $name with an all-reduce over dp verified as REFINES"
  fi
}
for name in jax_mlp_grad_dp2tp2 jax_smap_dp2tp2 jax_llama_dp2tp2; do checked_in "$name"; done

skip_without_jax capture "checked-in modules ok"

capture mlp gg_capture.jax_models:mlp --mesh dp=2 --mesh tp=2 --set data=dp
spec=$TMP/mlp/spec.rel
grep -q '^mesh dp = 2, tp = 2$' "$spec" || fail "spec: $(cat "$spec")"
grep -q '^input "x" = placements(shard(0), replicate)$' "$spec" || fail "spec: $(cat "$spec")"
grep -q '^input "w1" = placements(replicate, shard(1))$' "$spec" || fail "spec: $(cat "$spec")"
grep -q '^output #0 = placements(shard(0), replicate)$' "$spec" || fail "spec: $(cat "$spec")"
grep -q 'replica_groups={{0,1},{2,3}}' "$TMP/mlp/dist.hlo" ||
  fail "D's all-reduce is not over the tp groups: $(grep all-reduce "$TMP/mlp/dist.hlo")"
refines mlp
# Every replica is related: two relations per input split on one axis, and for the output.
grep -q '2 checked' "$TMP/out" || fail "mlp: not both output replicas checked: $(head -1 "$TMP/out")"

sed -e 's/replica_groups={{0,1},{2,3}}/replica_groups={{0,2},{1,3}}/' "$TMP/mlp/dist.hlo" \
  >"$TMP/dp_reduce.hlo"
! cmp -s "$TMP/mlp/dist.hlo" "$TMP/dp_reduce.hlo" || fail "the all-reduce's groups were not changed"
never_refines mlp "all-reduce over dp instead of tp" "$TMP/dp_reduce.hlo"

capture mlp_swapped gg_capture.jax_models:mlp --mesh tp=2 --mesh dp=2 --set data=dp
grep -q '^mesh tp = 2, dp = 2$' "$TMP/mlp_swapped/spec.rel" || fail "spec: $(cat "$TMP/mlp_swapped/spec.rel")"
refines mlp_swapped
capture mlp_dp4 gg_capture.jax_models:mlp --mesh dp=4 --mesh tp=2 --set data=dp
refines mlp_dp4

capture smap gg_capture.jax_models:mlp_shard_map --mesh dp=2 --mesh tp=2
refines smap
capture smap_dp gg_capture.jax_models:mlp_shard_map --mesh dp=2 --mesh tp=2 --set psum_axis=dp
never_refines smap_dp "shard_map psum over dp instead of tp"

capture mlp_grad gg_capture.jax_models:mlp --mesh dp=2 --mesh tp=2 --set data=dp --grad
refines mlp_grad
capture ddp gg_capture.jax_models:mlp_dp_grads --mesh dp=2 --mesh tp=2
grep -q 'replica_groups={{0,2},{1,3}}' "$TMP/ddp/dist.hlo" ||
  fail "DDP's psum is not over the dp groups: $(grep all-reduce "$TMP/ddp/dist.hlo")"
refines ddp
capture ddp_tp gg_capture.jax_models:mlp_dp_grads --mesh dp=2 --mesh tp=2 --set grad_axis=tp
never_refines ddp_tp "gradients all-reduced over tp instead of dp"

capture llama gg_capture.jax_models:llama_block --mesh dp=2 --mesh tp=2 --set data=dp
refines llama
capture llama_grad gg_capture.jax_models:llama_block --mesh dp=2 --mesh tp=2 --set data=dp --grad
refines llama_grad

# A JAX-only environment: torch made unimportable, the capture still runs.
"$PY" - "$TMP/no_torch" >"$TMP/cap.out" 2>&1 <<'EOF' || fail "capture without torch: $(cat "$TMP/cap.out")"
import sys
sys.modules["torch"] = None  # `import torch` raises ImportError from here on
from gg_capture.__main__ import main
sys.exit(main(["jax", "gg_capture.jax_models:mlp", "--mesh", "tp=2", "-o", sys.argv[1]]))
EOF
[[ -s $TMP/no_torch/dist.hlo && -s $TMP/no_torch/spec.rel ]] || fail "capture without torch wrote nothing"
echo "jax_mesh: ok"
