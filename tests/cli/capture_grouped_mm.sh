#!/usr/bin/env bash
# capture_grouped_mm: tensor-parallel MoE experts written with torch._grouped_mm (the operator
# torchtitan's GroupedExperts calls), as a user's file: tokens grouped per expert by cumulative
# counts (uneven, one expert with no tokens), W1 [E, H, F] sharded along F (column-parallel
# experts), W2 [E, F, H] along F (row-parallel, partial sums all-reduced).
#   1. fwd at TP 2, joint at TP 4 (the weight gradients are 2-d x 2-d grouped_mm, the input
#      gradient a grouped_mm against transposed experts): graphguard verify REFINES (exit 0);
#   2. the variant that forgets the all-reduce, joint at TP 2: VIOLATION (exit 1) with numeric
#      evidence in a LibTorch build; UNKNOWN (exit 3) in one without (no numeric engine to
#      tell a difference from a missing lemma), never REFINES.
# (Three captures, to keep the test cheap; fwd and joint at TP 2 and 4 all REFINE.)
# Laptop mode (no .venv with torch) skips, and says so.
set -euo pipefail
GG=$1
ROOT=$2
PY=$ROOT/.venv/bin/python
if [[ ! -x $PY ]] || ! "$PY" -c 'import torch' 2>/dev/null; then
  echo "capture_grouped_mm: SKIP: no .venv with torch (laptop mode)"
  exit 0
fi
export PYTHONPATH=$ROOT/scripts/capture${PYTHONPATH:+:$PYTHONPATH}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$TMP"
cat >userexperts.py <<'EOF'
"""A user's tensor-parallel MoE experts: silu(x W1_e) W2_e over the tokens routed to expert e
(rows grouped by cumulative counts, torch._grouped_mm), W1 sharded along its output columns, W2
along its input rows; the row-parallel partial sums all-reduced (or, build_buggy, not)."""
import torch
import torch.nn.functional as F

import gg_capture


class Experts(torch.nn.Module):
    def __init__(self, tp, experts, hidden, ffn, forget_allreduce):
        super().__init__()
        self.tp, self.forget = tp, forget_allreduce
        self.w1 = gg_capture.place(
            torch.nn.Parameter(gg_capture.shard(torch.randn(experts, hidden, ffn), 2, tp)),
            "shard", 2)
        self.w2 = gg_capture.place(
            torch.nn.Parameter(gg_capture.shard(torch.randn(experts, ffn, hidden), 1, tp)),
            "shard", 1)

    def forward(self, x, counts, target):
        offs = torch.cumsum(counts, dim=0, dtype=torch.int32)
        x = gg_capture.copy_to_tp(x, self.tp)
        h = F.silu(torch._grouped_mm(x, self.w1, offs=offs))
        y = torch._grouped_mm(h, self.w2, offs=offs)
        if not self.forget:
            y = gg_capture.reduce_from_tp(y, self.tp)
        return F.mse_loss(y, target), y


def _build(tp, experts, hidden, ffn, tokens, forget):
    counts = torch.tensor([3, 0, tokens - 5, 2])  # uneven, one expert without tokens
    inputs = {"x": torch.randn(tokens, hidden), "counts": counts,
              "target": torch.randn(tokens, hidden)}
    return Experts(tp, experts, hidden, ffn, forget), inputs


# ATen's CPU _grouped_mm wants 16-byte aligned rows: f32 widths that are multiples of 4
def build(tp, hidden=16, ffn=32, tokens=12):
    return _build(tp, 4, hidden, ffn, tokens, False)


def build_buggy(tp, hidden=16, ffn=32, tokens=12):
    return _build(tp, 4, hidden, ffn, tokens, True)
EOF

verify() {  # verify DIR: prints verify's first line, returns its exit status
  set +e
  "$GG" verify --seq "$1/seq.json" --dist "$1/dist.json" --relations "$1/spec.rel" >"$1/verify.txt" 2>&1
  local rc=$?
  set -e
  head -1 "$1/verify.txt"
  return $rc
}

for run in fwd:2 joint:4; do
  mode=${run%:*} tp=${run#*:}
  "$PY" -m gg_capture userexperts:build --tp $tp --mode $mode -o ${mode}_$tp >/dev/null 2>&1
  verify ${mode}_$tp || {
    echo "capture_grouped_mm: $mode TP $tp: expected REFINES (exit 0)" >&2
    cat ${mode}_$tp/verify.txt >&2
    exit 1
  }
done
"$PY" -m gg_capture userexperts:build_buggy --tp 2 --mode joint -o buggy >/dev/null 2>&1
rc=0
verify buggy || rc=$?
if "$GG" check --help >/dev/null 2>&1; then
  expected="VIOLATION (exit 1) with evidence"
  [[ $rc -eq 1 ]] && grep -q "numerically (graphguard check" buggy/verify.txt && expected=
else
  expected="UNKNOWN (exit 3), this build having no numeric engine"
  [[ $rc -eq 3 ]] && grep -q "^UNKNOWN: " buggy/verify.txt && expected=
fi
if [[ -n $expected ]]; then
  echo "capture_grouped_mm: buggy joint: expected $expected, got $rc" >&2
  cat buggy/verify.txt >&2
  exit 1
fi
echo "capture_grouped_mm: grouped-mm experts REFINES (fwd TP 2, joint TP 4); unreduced joint not REFINES (exit $rc)"
