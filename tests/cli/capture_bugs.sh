#!/usr/bin/env bash
# capture_bugs: the bug benchmark (tests/bugs, tests/bugs/README.md) gives the verdicts its
# manifest records — the symbolic engine alone (verify --no-numeric): correct versions REFINES,
# buggy versions UNKNOWN where the proof stops, each with verify's first line (the reason) — and,
# with .venv (torch), regenerating two cases gives byte-identical files (one over a 2 x 2 mesh of
# process groups) and, with megatron-core installed, three real megatron-core cases (its code
# monkeypatched while the buggy variant is traced; the fix monkeypatched in the correct one; its
# MoE layer traced with live collectives).
# Without .venv the regeneration is skipped (laptop mode). With a LibTorch build, `graphguard check`
# and `graphguard verify` with its numeric evidence give the verdicts the manifest records (FAILS,
# VIOLATION) for one forward case and the gradient cases that the symbolic engine cannot relate,
# on real torchtitan and real megatron-core too, one of them a pipeline, one a TP x DP mesh, two
# expert-parallel with data-dependent all-to-all splits and megatron-core's MoE layer with its
# load-balancing loss (check and verify's numeric run on their traced values.json, --inputs), and
# torchtitan's own bf16 MoE (PR #2416: evidence within a tolerance that carries bf16's rounding),
# the ring-attention case and the two context-parallel gradient cases
# (ring_cp.py: its correct version REFINES through the online-softmax lemmas, the buggy one is a
# VIOLATION with evidence; the whole columns: make_bugs.py --checks GRAPHGUARD --check).
set -euo pipefail
GG=$1
ROOT=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

python3 "$ROOT/scripts/capture/make_bugs.py" --out "$ROOT/tests/bugs" --verdicts "$GG" --check
if "$GG" check --help >/dev/null 2>&1; then
  python3 "$ROOT/scripts/capture/make_bugs.py" --out "$ROOT/tests/bugs" --checks "$GG" --check \
    --only missing_rowparallel_allreduce --only megatron_599_moe_router_sync \
    --only tied_embedding_grad_sync --only torchtitan_1373_grad_not_reduced --only mcore_1446_sp_norm_grad \
    --only pp_stash_wrong_micro_batch --only swift_9947_logps_no_autograd \
    --only ring_merge_no_rescale --only dp_grad_reduce_tp_axis --only ep_wrong_expert_rank \
    --only ep_a2a_splits_transposed --only mcore_3768_moe_aux_loss_scale \
    --only cp_kv_grad_not_reduce_scattered --only cp_weight_grads_not_reduced \
    --only torchtitan_2416_router_grad_replicate
else
  echo "capture_bugs: SKIP graphguard check: built without LibTorch (laptop mode)"
fi

PY=$ROOT/.venv/bin/python
if [[ ! -x $PY ]] || ! "$PY" -c 'import torch' 2>/dev/null; then
  echo "capture_bugs: SKIP regeneration: no .venv with torch (laptop mode); verdicts checked"
  exit 0
fi
"$PY" "$ROOT/scripts/capture/make_bugs.py" --out "$TMP/bugs" --only missing_rowparallel_allreduce \
  --only sglang_31699_dp_gather_partial --only ring_merge_no_rescale 2>/dev/null
for case in missing_rowparallel_allreduce sglang_31699_dp_gather_partial ring_merge_no_rescale; do
  diff -r "$ROOT/tests/bugs/$case" "$TMP/bugs/$case"
done
echo "capture_bugs: regenerated missing_rowparallel_allreduce, sglang_31699_dp_gather_partial (a dp x tp mesh), ring_merge_no_rescale (ring attention, zig-zag split) byte-identical"
if "$PY" -c 'import megatron.core' 2>/dev/null; then
  "$PY" "$ROOT/scripts/capture/make_bugs.py" --out "$TMP/bugs" --only mcore_ce_vocab_offset \
    --only mcore_7452_cross_attention_tp_group --only mcore_3768_moe_aux_loss_scale 2>/dev/null
  for case in mcore_ce_vocab_offset mcore_7452_cross_attention_tp_group \
      mcore_3768_moe_aux_loss_scale; do
    diff -r "$ROOT/tests/bugs/$case" "$TMP/bugs/$case"
  done
  echo "capture_bugs: regenerated mcore_ce_vocab_offset (real megatron-core, patched), mcore_7452_cross_attention_tp_group (as released; the fix patched), mcore_3768_moe_aux_loss_scale (megatron-core's MoE layer, live collectives, training mode) byte-identical"
else
  echo "capture_bugs: megatron-core not installed: mcore_ce_vocab_offset, mcore_7452_cross_attention_tp_group, mcore_3768_moe_aux_loss_scale not regenerated"
fi
