#!/usr/bin/env bash
# capture_megatron: real megatron-core captured as a user captures it (README "Check your own
# model"): examples/megatron_core/gpt.py builds megatron-core's GPTModel (local layer spec, its
# tensor-parallel layers, its vocabulary-parallel cross entropy and hand-written backward) with no
# edit of megatron and nothing about GraphGuard in the factory; gg_capture applies its megatron
# shims itself (scripts/capture/gg_capture/shims/megatron.py).
#   1. `python -m gg_capture examples/megatron_core/gpt.py:build` at TP 2, forward without and
#      joint with sequence parallelism: graphguard verify says REFINES (exit 0);
#   2. the spec comes from megatron's own parameter attributes (fused QKV column-parallel, the
#      output projection row-parallel, the word embedding vocabulary-parallel) and, under SP, the
#      LayerNorm gradients are all-reduced (replicated outputs).
# Without .venv (torch) or megatron-core (scripts/setup.sh installs it) the test skips, saying so.
set -euo pipefail
GG=$1
ROOT=$2
PY=$ROOT/.venv/bin/python
if [[ ! -x $PY ]] || ! "$PY" -c 'import torch' 2>/dev/null; then
  echo "capture_megatron: SKIP: no .venv with torch (laptop mode)"
  exit 0
fi
if ! "$PY" -c 'import megatron.core' 2>/dev/null; then
  echo "capture_megatron: SKIP: megatron-core is not installed in .venv (scripts/setup.sh)"
  exit 0
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$ROOT"
capture() {  # capture DIR ARGS...: this checkout's gg_capture, megatron's warnings dropped
  local out=$1
  shift
  PYTHONPATH=$ROOT/scripts/capture "$PY" -W ignore -m gg_capture examples/megatron_core/gpt.py:build \
    "$@" -o "$TMP/$out" >"$TMP/$out.log" 2>&1 || { cat "$TMP/$out.log" >&2; exit 1; }
}
verify() {  # verify DIR: REFINES (exit 0) or the report and a failure
  if ! "$GG" verify --seq "$TMP/$1/seq.json" --dist "$TMP/$1/dist.json" \
      --relations "$TMP/$1/spec.rel" --no-numeric >"$TMP/$1.txt" 2>&1; then
    echo "capture_megatron: $1: expected REFINES" >&2
    cat "$TMP/$1.txt" >&2
    exit 1
  fi
  head -1 "$TMP/$1.txt"
}

capture fwd --tp 2 --mode fwd
capture joint_sp --tp 2 --mode joint --set sp=true
for d in fwd joint_sp; do verify $d; done

spec=$TMP/joint_sp/spec.rel
grep -q '^input gpt_decoder_layers_0_self_attention_linear_qkv_weight = shard(0)$' "$spec"
grep -q '^input gpt_decoder_layers_0_self_attention_linear_proj_weight = shard(1)$' "$spec"
grep -q '^input gpt_embedding_word_embeddings_weight = shard(0)$' "$spec"
# the gradients: loss, then one per parameter; the SP LayerNorm weights' are replicated
# (all-reduced as megatron's finalize_model_grads does)
[[ $(grep -c '^output #' "$spec") -eq 18 ]]
grep -q '_c10d_functional::reduce_scatter_tensor' "$TMP/joint_sp/dist.json"
echo "capture_megatron: megatron-core GPTModel TP 2 fwd and joint (SP) REFINES"
