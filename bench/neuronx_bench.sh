#!/usr/bin/env bash
# neuronx_bench.sh: `graphguard verify --no-numeric` on transformers-neuronx-style Llama programs
# at the paper's sizes (issue 15; docs/benchmarks.md "transformers-neuronx Llama"):
#   - the artifact's real layer-1 modules (examples/corpus/aws_llama, TP 2/4/8, and the broken
#     TP 2), spec examples/aws_llama.rel;
#   - gg_capture.jax_models:neuronx_llama (shard_map local code, fused QKV [q_r; k_r; v_r] per
#     rank, psum after the row-parallel projections; hidden 2048, 32 heads, 8 kv heads, FFN 8192,
#     vocabulary 128256, 4 x 64 tokens) captured by `graphguard-capture jax` at each TP x layers
#     point, its spec.rel from the capture (the factory's QKV rule).
# For each: wall time, user + system CPU and peak RSS (/usr/bin/time -v), the verdict, S operators
# related / examined and e-graph sizes (JSON report): one markdown table row per point on stdout.
# Usage: bench/neuronx_bench.sh [BUILD_DIR (default build)] [GRAPH_DIR (default /tmp/gg-neuronx)]
#                               [TPS (default "2 4 8")] [LAYERS (default "1 2 4 8")]
#   Captures already in GRAPH_DIR/tp<N>_l<L>/ are reused (their capture time in capture.txt).
#   env: GG_PYTHON (default ROOT/.venv/bin/python), GG_NEURONX_SET (extra --set KEY=VALUE words,
#   e.g. "dtype=float16"), GG_VERIFY_FLAGS (extra verify flags).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${1:-$ROOT/build}
GRAPHS=${2:-/tmp/gg-neuronx}
TPS=${3:-"2 4 8"}
LAYERS=${4:-"1 2 4 8"}
PY=${GG_PYTHON:-$ROOT/.venv/bin/python}
GG="$BUILD_DIR/graphguard"
[[ -x "$GG" ]] || { echo "no $GG: build first (bash scripts/setup.sh)" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "/usr/bin/time missing (apt-get install time)" >&2; exit 2; }
mkdir -p "$GRAPHS"

# run NAME SEQ DIST SPEC: one verify, one table row
run() {
  local name=$1 seq=$2 dist=$3 spec=$4 out="$GRAPHS/${1// /_}" code=0
  # shellcheck disable=SC2086
  /usr/bin/time -v -o "$out.time" "$GG" verify --seq "$seq" --dist "$dist" --relations "$spec" \
    --no-numeric --json "$out.json" ${GG_VERIFY_FLAGS:-} >"$out.txt" 2>"$out.err" || code=$?
  python3 - "$out" "$name" "$code" <<'PY'
import json, re, sys
out, name, code = sys.argv[1:]
t = open(out + ".time").read()
def field(key):
    m = re.search(re.escape(key) + r": (.*)", t)
    return m.group(1).strip() if m else "0"
parts = [float(x) for x in field("Elapsed (wall clock) time (h:mm:ss or m:ss)").split(":")]
wall = sum(p * 60 ** (len(parts) - 1 - i) for i, p in enumerate(parts))
cpu = float(field("User time (seconds)")) + float(field("System time (seconds)"))
rss = int(field("Maximum resident set size (kbytes)")) // 1024
verdict = open(out + ".txt").readline().split(":")[0] or f"exit {code}"
try:
    s = json.load(open(out + ".json"))["stats"]
    ops = f'{s["s_operators_related"]}/{s["s_operators_examined"]}'
    eg = f'{s["max_egraph_nodes"]} / {s["total_egraph_nodes"]}'
except (OSError, ValueError, KeyError):
    ops = eg = "-"
print(f"| {name} | {verdict} | {wall:.1f} | {cpu:.1f} | {rss} | {ops} | {eg} |")
PY
}

echo "| case | verdict | wall s | CPU s | peak RSS MiB | S operators related / examined | e-graph nodes max / total |"
echo "|---|---|---:|---:|---:|---:|---:|"
C="$ROOT/examples/corpus/aws_llama"
for cfg in tp2_layer1 tp4_layer1 tp8_layer1 tp2_layer1.broken; do
  run "real $cfg" "$C/tp1_layer1/graph.0.hlo" "$C/$cfg/graph.0.hlo" "$ROOT/examples/aws_llama.rel"
done
export PYTHONPATH="$ROOT/scripts/capture${PYTHONPATH:+:$PYTHONPATH}"
for layers in $LAYERS; do
  for tp in $TPS; do
    dir="$GRAPHS/tp${tp}_l${layers}"
    if [[ ! -f "$dir/spec.rel" ]]; then
      [[ -x "$PY" ]] || { echo "no $PY to capture with (bash scripts/setup.sh)" >&2; exit 2; }
      start=$(date +%s.%N)
      # shellcheck disable=SC2086
      "$PY" -m gg_capture jax gg_capture.jax_models:neuronx_llama --mesh tp="$tp" \
        --set layers="$layers" $GG_NEURONX_SET -o "$dir" >"$GRAPHS/capture.log" 2>&1 ||
        { cat "$GRAPHS/capture.log" >&2; exit 2; }
      echo "captured in $(echo "$(date +%s.%N) - $start" | bc) s" >"$dir/capture.txt"
    fi
    run "jax TP $tp, $layers layers" "$dir/seq.hlo" "$dir/dist.hlo" "$dir/spec.rel"
  done
done
