#!/usr/bin/env bash
# vocab_bench.sh: the symbolic proof's cost as the vocabulary grows (issue 12 s.3). Captures the
# Megatron GPT joint graph with sequence parallelism at TP 2 (scripts/capture, model
# megatron_gpt_sp) at each vocabulary size of GG_VOCABS and runs `graphguard verify --no-numeric`
# on it. The cross-entropy backward broadcasts [T, 1] over [T, V]: a proof whose size follows V
# does not scale to a real vocabulary (50304). Prints per size: verdict, e-nodes summed over the
# local e-graphs (stats.total_egraph_nodes), the largest one, inference seconds of the report and the
# peak RSS of the command.
# Usage: bench/vocab_bench.sh [BUILD_DIR (default build)] [OUT_DIR (default a temp dir)]
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
GG="${1:-$ROOT/build}/graphguard"
VOCABS=${GG_VOCABS:-"64 512 50304"}
PY="$ROOT/.venv/bin/python"
[[ -x "$GG" ]] || { echo "no $GG: build first (bash scripts/setup.sh)" >&2; exit 2; }
[[ -x "$PY" ]] || { echo "no $PY: the capture needs the venv (bash scripts/setup.sh)" >&2; exit 2; }
if [[ -n "${2:-}" ]]; then
  OUT=$2; mkdir -p "$OUT"
else
  OUT=$(mktemp -d); trap 'rm -rf "$OUT"' EXIT
fi
for vocab in $VOCABS; do
  dir="$OUT/vocab$vocab"
  (cd "$ROOT/scripts/capture" && "$PY" - "$vocab" "$dir" <<'PY'
import sys
import capture
from gg_capture import registry
program = registry.make("megatron_gpt_sp")
program.config["vocab"] = int(sys.argv[1])
capture.capture(program, 2, "joint", sys.argv[2])
PY
  )
  /usr/bin/time -f "%M" -o "$dir/rss_kb" "$GG" verify --seq "$dir/seq.json" --dist "$dir/dist.json" \
    --relations "$dir/spec.rel" --no-numeric --json "$dir/report.json" >/dev/null 2>&1 || true
done
python3 - "$OUT" $VOCABS <<'PY'
import json, sys
out, vocabs = sys.argv[1], sys.argv[2:]
print("| vocab | verdict | e-nodes total | e-nodes max | inference s | peak RSS MB |")
print("|---:|---|---:|---:|---:|---:|")
for v in vocabs:
    r = json.load(open(f"{out}/vocab{v}/report.json"))
    s = r["stats"]
    rss = int(open(f"{out}/vocab{v}/rss_kb").read().split()[-1]) / 1024
    print(f"| {v} | {r['verdict']} | {s['total_egraph_nodes']} | {s['max_egraph_nodes']} | "
          f"{s['seconds']:.3f} | {rss:.0f} |")
PY
