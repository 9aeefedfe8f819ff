#!/usr/bin/env bash
# capture_transformers_tp: README's transformers example (examples/transformers/llama_tp_plan.py, a
# user's factory: a tiny Llama parallelized by transformers' own tp_plan with
# apply_tensor_parallelism) captured with `python -m gg_capture` at TP 2, joint forward+backward:
# graphguard verify REFINES; the forward under torch.no_grad() (`--set inference=true`: the layers'
# local fast path with an in-place dist.all_reduce, made functional by shims/transformers.py)
# at TP 2 REFINES too. Then the same factory with transformers' RowwiseParallel made to keep
# its partial sums (no all-reduce after o_proj/down_proj, patched in a test-only factory): not
# REFINES (VIOLATION with numeric evidence in a LibTorch build, UNKNOWN without one). Skipped
# without .venv (torch, transformers), and says so.
set -euo pipefail
GG=$1
ROOT=$2
PY=$ROOT/.venv/bin/python
if [[ ! -x $PY ]] || ! "$PY" -c 'import torch, transformers' 2>/dev/null; then
  echo "capture_transformers_tp: SKIP: no .venv with torch and transformers (laptop mode)"
  exit 0
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$ROOT"
export PYTHONPATH=$ROOT/scripts/capture
"$PY" -m gg_capture examples/transformers/llama_tp_plan.py:build --tp 2 --mode joint \
  -o "$TMP/ok" 2>/dev/null
"$GG" verify --seq "$TMP/ok/seq.json" --dist "$TMP/ok/dist.json" --relations "$TMP/ok/spec.rel" \
  --no-numeric >"$TMP/ok.txt"
head -1 "$TMP/ok.txt"
grep -q '^REFINES: ' "$TMP/ok.txt"

"$PY" -m gg_capture examples/transformers/llama_tp_plan.py:build --tp 2 --mode fwd \
  --set inference=true layers=1 -o "$TMP/infer" 2>/dev/null
"$GG" verify --seq "$TMP/infer/seq.json" --dist "$TMP/infer/dist.json" \
  --relations "$TMP/infer/spec.rel" --no-numeric >"$TMP/infer.txt"
head -1 "$TMP/infer.txt"
grep -q '^REFINES: ' "$TMP/infer.txt"

cat >"$TMP/buggy.py" <<PYEOF
"""The example with transformers' row-parallel layers keeping their partial sums (no all-reduce)."""
import sys
sys.path.insert(0, "$ROOT/examples/transformers")
import llama_tp_plan
from torch.distributed.tensor import DTensor
from transformers.distributed import tensor_parallel


def no_all_reduce(self, module, output, mesh):
    return output.to_local() if isinstance(output, DTensor) else output


def build(tp, **config):
    tensor_parallel.RowwiseParallel.transform_output_post_forward = no_all_reduce
    return llama_tp_plan.build(tp, **config)
PYEOF
"$PY" -m gg_capture "$TMP/buggy.py:build" --tp 2 --mode fwd --set layers=1 -o "$TMP/bug" 2>/dev/null
set +e
"$GG" verify --seq "$TMP/bug/seq.json" --dist "$TMP/bug/dist.json" --relations "$TMP/bug/spec.rel" \
  >"$TMP/bug.txt"
rc=$?
set -e
head -1 "$TMP/bug.txt" | cut -c1-160
if "$GG" check --help >/dev/null 2>&1; then
  [[ $rc == 1 ]] && grep -q '^VIOLATION: ' "$TMP/bug.txt"
else
  [[ $rc == 3 ]] && grep -q '^UNKNOWN: ' "$TMP/bug.txt"
fi
echo "capture_transformers_tp: transformers' tp_plan Llama joint and no_grad fwd TP 2 REFINES;" \
  "without the row-parallel all-reduce not REFINES (exit $rc)"
