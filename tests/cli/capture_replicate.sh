#!/usr/bin/env bash
# capture_replicate: fast capture of deep models by checked layer replication (issue 14 item 6).
# A user's tensor-parallel residual MLP stack (`layers` blocks of norm, column-parallel fc1, gelu,
# row-parallel fc2), captured at TP 2:
#   1. fwd at 6 layers (the command line) and joint at 8 (the Python API; a backward's first
#      and last layers are special, so joint needs traces up to 6 layers to see two alike ones):
#      the replicated files (traced at a few depths, the layer block replicated:
#      gg_capture/replicate.py, opt-in: --replicate-layers) are byte-identical to a full trace,
#      stderr says what replication assumes (no fallback), and graphguard verify --no-numeric
#      says REFINES;
#   2. layers that are not alike fall back to the full trace, say why on stderr, and still write
#      what a full trace writes: every odd layer has an extra op (wide=odd), and the widths double
#      from layer to layer (wide=grow; widths growing linearly would replicate, correctly);
#   3. layers_key (--layers-key) names another keyword (depth=6); 4 layers are traced in full.
# Laptop mode (no .venv with torch) skips, and says so.
set -euo pipefail
GG=$1
ROOT=$2
PY=$ROOT/.venv/bin/python
if [[ ! -x $PY ]] || ! "$PY" -c 'import torch' 2>/dev/null; then
  echo "capture_replicate: SKIP: no .venv with torch (laptop mode)"
  exit 0
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$TMP"
export PYTHONPATH=$ROOT/scripts/capture${PYTHONPATH:+:$PYTHONPATH}
cat >deepmlp.py <<'EOF'
"""A user's residual stack of tensor-parallel MLP blocks, `layers` deep."""
import torch
import torch.nn.functional as F

import gg_capture


class Block(torch.nn.Module):
    def __init__(self, tp, hidden, ffn, extra):
        super().__init__()
        self.norm = torch.nn.Parameter(torch.randn(hidden))
        self.fc1 = gg_capture.ColumnParallelLinear(torch.randn(ffn, hidden), torch.randn(ffn), tp)
        self.fc2 = gg_capture.RowParallelLinear(torch.randn(hidden, ffn), torch.randn(hidden), tp)
        self.extra = extra

    def forward(self, x):
        h = F.gelu(self.fc1(F.rms_norm(x, x.shape[-1:], self.norm)))
        if self.extra:
            h = torch.tanh(h)
        return x + self.fc2(h)


class Stack(torch.nn.Module):
    def __init__(self, tp, hidden, ffn, layers, wide):
        super().__init__()
        self.layers = torch.nn.ModuleList(
            Block(tp, hidden, ffn * (2**i if wide == "grow" else 1), wide == "odd" and i % 2 == 1)
            for i in range(layers))

    def forward(self, x, target):
        for layer in self.layers:
            x = layer(x)
        return F.mse_loss(x, target), x


def build(tp, hidden=8, ffn=16, layers=2, batch=4, wide="no"):
    return Stack(tp, hidden, ffn, layers, wide), {"x": torch.randn(batch, hidden),
                                                  "target": torch.randn(batch, hidden)}


def build_depth(tp, depth=2):
    return build(tp, layers=depth)
EOF

same() {  # same A B: the three files are byte-identical
  for f in seq.json dist.json spec.rel; do
    cmp "$1/$f" "$2/$f" || { echo "capture_replicate: $1/$f differs from $2/$f" >&2; exit 1; }
  done
}
verify() {  # verify DIR: graphguard verify --no-numeric says REFINES
  "$GG" verify --no-numeric --seq "$1/seq.json" --dist "$1/dist.json" --relations "$1/spec.rel" \
    >"$1/verify.txt" || true
  head -1 "$1/verify.txt" | grep -q '^REFINES' ||
    { echo "capture_replicate: $1: not REFINES" >&2; cat "$1/verify.txt" >&2; exit 1; }
}

# 1. fwd, the command line: replicated == full trace, stderr says what replication assumes, REFINES
"$PY" -W ignore -m gg_capture deepmlp:build --tp 2 --set layers=6 --replicate-layers -o rep_fwd \
  2>rep_fwd.err >/dev/null
"$PY" -W ignore -m gg_capture deepmlp:build --tp 2 --set layers=6 -o full_fwd 2>full_fwd.err \
  >/dev/null
# Replication says what it assumes; a full trace says nothing.
grep -q '^capture: layers 5..6 replicated from traces at 2, 3 and 4 layers' rep_fwd.err ||
  { echo "capture_replicate: fwd: stderr:" >&2; cat rep_fwd.err >&2; exit 1; }
grep -q 'is not seen' rep_fwd.err
[[ ! -s full_fwd.err ]] ||
  { echo "capture_replicate: full fwd: stderr:" >&2; cat full_fwd.err >&2; exit 1; }
same rep_fwd full_fwd
grep -q '^input layers_5_fc1_weight = shard(0)$' rep_fwd/spec.rel
verify rep_fwd
echo "capture_replicate: fwd 6 layers (graphguard-capture): replicated files byte-identical to" \
  "a full trace, REFINES"

# 2.-3. the Python API in one process (one torch import): joint, fallbacks, layers_key
"$PY" -W ignore - <<'PY'
import io

import deepmlp
import gg_capture


REPLICATED = "capture: layers "


def run(out, factory=deepmlp.build, mode="fwd", replicate=True, key="layers", **config):
    log = io.StringIO()
    gg_capture.capture(factory, tp=2, mode=mode, out_dir=out, replicate=replicate,
                       layers_key=key, log=log, **config)
    return log.getvalue()


assert run("rep_joint", mode="joint", layers=8).startswith(REPLICATED)
run("full_joint", mode="joint", layers=8, replicate=False)
for wide in ("odd", "grow"):
    why = run(f"rep_{wide}", layers=6, wide=wide)
    assert why.startswith("capture: not replicated from 2 and 3 layers: "), why
    assert why.endswith("capture: tracing all 6 layers\n"), why
    print(f"capture_replicate: wide={wide}: fell back ({why.splitlines()[0][:110]}...)")
    run(f"full_{wide}", layers=6, wide=wide, replicate=False)
assert run("rep_depth", deepmlp.build_depth, key="depth", depth=6).startswith(REPLICATED)
run("full_depth", deepmlp.build_depth, depth=6, replicate=False)
assert run("rep_4", layers=4) == ""
run("full_4", layers=4, replicate=False)
PY
same rep_joint full_joint
verify rep_joint
echo "capture_replicate: joint 8 layers: replicated files byte-identical to a full trace, REFINES"
for wide in odd grow; do
  same rep_$wide full_$wide
done
echo "capture_replicate: layers that differ fell back to files byte-identical to a full trace"
same rep_depth full_depth
same rep_4 full_4
echo "capture_replicate: layers_key depth replicated byte-identical; 4 layers traced in full"
