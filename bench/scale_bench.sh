#!/usr/bin/env bash
# scale_bench.sh: how `graphguard verify --no-numeric` scales with depth (issue 14). A
# transformers Llama (hidden 64, 8 heads, ffn 128, vocabulary 64, sequence 8) made tensor-parallel
# by scripts/capture (tp.py's Megatron-style layers), forward only, captured at each layer count,
# then verified once per depth: wall time, peak RSS (/usr/bin/time), S operators, ms per S
# operator and per layer, e-graph nodes (total and the largest local e-graph), local problems
# solved and reused (memoized inference; GG_VERIFY_FLAGS=--no-memo to compare) and the verdict.
# Usage: bench/scale_bench.sh [BUILD_DIR (default build)] [GRAPH_DIR (default /tmp/gg-scale)]
#                             [LAYERS... (default 4 8 16 32)]
#   Graphs already in GRAPH_DIR/<layers>/ (seq.json, dist.json, spec.rel) are reused; missing ones
#   are captured with the .venv's torch and transformers by api.write_deep: traced at 2, 3 and 4
#   layers (joint: up to 6) and the layer block replicated, checked byte for byte against the
#   deepest of those traces first (gg_capture/replicate.py; 2 cores: about 30 s for 126 layers
#   fwd, whatever the depth), else every layer is traced (stderr says why). The capture time is
#   in GRAPH_DIR/<layers>/capture.txt.
#   env: GG_SCALE_TP (default 8), GG_SCALE_MODE (fwd or joint, default fwd), GG_SCALE_REPLICATE
#   (default 1; 0 traces every layer: about 40 s at 8 layers, 7.5 min at 126), GG_PYTHON (default
#   ROOT/.venv/bin/python), extra verify flags in GG_VERIFY_FLAGS.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${1:-$ROOT/build}
GRAPHS=${2:-/tmp/gg-scale}
shift $(($# > 2 ? 2 : $#))
LAYERS=("$@")
[[ ${#LAYERS[@]} -gt 0 ]] || LAYERS=(4 8 16 32)
TP=${GG_SCALE_TP:-8}
MODE=${GG_SCALE_MODE:-fwd}
PY=${GG_PYTHON:-$ROOT/.venv/bin/python}
GG="$BUILD_DIR/graphguard"
[[ -x "$GG" ]] || { echo "no $GG: build first (bash scripts/setup.sh)" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "/usr/bin/time missing (apt-get install time)" >&2; exit 2; }
mkdir -p "$GRAPHS"

capture() {  # capture LAYERS DIR
  [[ -x "$PY" ]] || { echo "no $PY to capture with (bash scripts/setup.sh)" >&2; exit 2; }
  "$PY" -W ignore - "$ROOT" "$1" "$TP" "$MODE" "$2" "${GG_SCALE_REPLICATE:-1}" <<'PY'
import os, sys, time
root, layers, tp, mode, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
replicate = sys.argv[6] != "0"
sys.path.insert(0, os.path.join(root, "scripts", "capture"))
import transformers as T  # noqa: E402
from gg_capture import api  # noqa: E402
from gg_capture.models import hf  # noqa: E402


def llama(n):  # the program at n layers
    program = hf.HFCausalLM("hf_llama")
    cfg = T.LlamaConfig(vocab_size=64, hidden_size=64, intermediate_size=128, num_hidden_layers=n,
                        num_attention_heads=8, num_key_value_heads=8, max_position_embeddings=16,
                        tie_word_embeddings=False)
    cfg._attn_implementation = "eager"
    program.hf_config = cfg
    program.config.update(hidden=64, heads=8, kv_heads=8, ffn=128, layers=n)
    return program


start = time.time()
how = api.write_deep(llama, layers, tp, mode, out, replicate=replicate)
line = f"captured {layers} layers, TP {tp}, {mode}, {how} in {time.time() - start:.1f} s"
print(line, file=sys.stderr)
with open(os.path.join(out, "capture.txt"), "w") as f:
    f.write(line + "\n")
PY
}

echo "graphguard verify --no-numeric, transformers Llama TP $TP $MODE ($(nproc) cores)"
printf '%6s %8s %9s %9s %9s %8s %9s %10s %8s %8s %8s  %s\n' layers "wall s" "user s" "RSS MiB" \
  "S ops" "ms/op" "ms/layer" "nodes" "max eg" solved reused verdict
for layers in "${LAYERS[@]}"; do
  dir="$GRAPHS/$layers"
  if [[ ! -f "$dir/seq.json" || ! -f "$dir/dist.json" || ! -f "$dir/spec.rel" ]]; then
    capture "$layers" "$dir"
  fi
  # shellcheck disable=SC2086
  /usr/bin/time -f '%e %U %M' -o "$dir/time.txt" "$GG" verify --seq "$dir/seq.json" \
    --dist "$dir/dist.json" --relations "$dir/spec.rel" --no-numeric ${GG_VERIFY_FLAGS:-} \
    >"$dir/report.txt" 2>"$dir/err.txt" || true
  read -r wall user rss < <(tail -n 1 "$dir/time.txt")  # time prefixes a non-zero exit status
  verdict=$(grep -m1 -oE '^(REFINES|VIOLATION|UNKNOWN)' "$dir/report.txt" || echo "?")
  ops=$(sed -nE 's/^ *S operators +([0-9]+) related of ([0-9]+) examined.*/\2/p' "$dir/report.txt")
  read -r max_eg total_eg < <(sed -nE \
    's/^ *e-graph nodes +max ([0-9]+), total ([0-9]+).*/\1 \2/p' "$dir/report.txt")
  # The report has no local problems line when nothing was reused.
  read -r solved reused < <(sed -nE \
    's/^ *local problems +([0-9]+) solved, ([0-9]+) reused.*/\1 \2/p' "$dir/report.txt") || true
  ms=$(awk -v w="$wall" -v n="${ops:-0}" 'BEGIN { if (n > 0) printf "%.2f", 1000 * w / n; else print "-" }')
  ms_layer=$(awk -v w="$wall" -v n="$layers" 'BEGIN { printf "%.1f", 1000 * w / n }')
  printf '%6s %8s %9s %9d %9s %8s %9s %10s %8s %8s %8s  %s\n' "$layers" "$wall" "$user" \
    $((rss / 1024)) "${ops:--}" "$ms" "$ms_layer" "${total_eg:--}" "${max_eg:--}" "${solved:--}" \
    "${reused:-0}" "$verdict"
done
