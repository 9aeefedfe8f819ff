#!/usr/bin/env bash
# verify_bench.sh: `graphguard verify` over every configuration of the shared corpus (S = the
# paral1 graph with the same layer count, D = the per-rank graphs, spec = examples/<model>.rel):
# wall time, peak RSS (/usr/bin/time -v), verdict, e-graph sizes and where the check stops (the
# first failing S operator), next to the GraphGuard paper artifact's times for the same
# configurations (16 cores). One process per configuration; the JSON report is kept in OUT_DIR.
# Usage: bench/verify_bench.sh [BUILD_DIR (default build)] [OUT_DIR (default a temp dir)]
#   env: GG_VERIFY_TIMEOUT (seconds per configuration, default 900), extra verify flags in
#   GG_VERIFY_FLAGS (e.g. "--max-nodes 20000").
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${1:-$ROOT/build}
GG="$BUILD_DIR/graphguard"
CORPUS="$ROOT/examples/corpus"
TIMEOUT=${GG_VERIFY_TIMEOUT:-900}
[[ -x "$GG" ]] || { echo "no $GG: build first (bash scripts/setup.sh)" >&2; exit 2; }
[[ -d "$CORPUS" ]] || { echo "no corpus at $CORPUS" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "/usr/bin/time missing (apt-get install time)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "python3 missing (reads the JSON reports)" >&2; exit 2; }
if [[ -n "${2:-}" ]]; then
  OUT=$2; mkdir -p "$OUT"
else
  OUT=$(mktemp -d); trap 'rm -rf "$OUT"' EXIT
fi

# model  tp  layers  paper seconds (Entangle artifact, 16 cores)
CONFIGS=(
  "gpt 2 1 13.6"
  "gpt 4 1 18.9"
  "gpt 2 2 20.6"
  "gpt 4 2 29.4"
  "qwen2 2 1 6.8"
)

echo "graphguard verify per corpus configuration ($(nproc) cores here; paper: 16 cores)"
printf '%-18s %-9s %8s %8s %11s %9s %9s %10s  %s\n' configuration verdict "wall s" "paper s" \
  "max RSS MiB" "related" "max eg" "total eg" "stops at"
for config in "${CONFIGS[@]}"; do
  read -r model tp layers paper <<<"$config"
  name="$model tp$tp L$layers"
  seq_file="$CORPUS/$model/paral1_layer$layers/fw.g0.r0.py"
  dist_dir="$CORPUS/$model/paral${tp}_layer$layers"
  if [[ ! -d "$dist_dir" || ! -f "$seq_file" ]]; then
    printf '%-18s %-9s %8s %8s   (not in the corpus)\n' "$name" "-" "-" "$paper"
    continue
  fi
  json="$OUT/${model}_tp${tp}_l${layers}.json"
  code=0
  start=$(date +%s%N)
  # shellcheck disable=SC2086
  timeout "$TIMEOUT" /usr/bin/time -v -o "$OUT/time.txt" "$GG" verify --seq "$seq_file" \
    --dist "$dist_dir" --relations "$ROOT/examples/$model.rel" --json "$json" \
    ${GG_VERIFY_FLAGS:-} >"$OUT/${model}_tp${tp}_l${layers}.txt" 2>"$OUT/err.txt" || code=$?
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  wall=$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))
  rss=$(sed -nE 's/^[[:space:]]*Maximum resident set size \(kbytes\): ([0-9]+)/\1/p' \
    "$OUT/time.txt" 2>/dev/null || true)
  rss_mib=$(( ${rss:-0} / 1024 ))
  if [[ $code -eq 124 ]]; then
    printf '%-18s %-9s %8s %8s %11s   (timed out after %s s)\n' "$name" TIMEOUT "$wall" "$paper" \
      "-" "$TIMEOUT"
    continue
  fi
  if [[ ! -s "$json" ]]; then
    printf '%-18s %-9s %8s %8s %11s   exit %d: %s\n' "$name" ERROR "$wall" "$paper" "$rss_mib" \
      "$code" "$(head -1 "$OUT/err.txt")"
    continue
  fi
  python3 - "$json" "$name" "$wall" "$paper" "$rss_mib" <<'PY'
import json, sys
path, name, wall, paper, rss = sys.argv[1:]
r = json.load(open(path))
s = r["stats"]
related = f'{s["s_operators_related"]}/{s["s_operators_examined"]}'
stop = "-"
f = r.get("first_failure")
if f is not None:
    if f["node_index"] is not None:
        n = r["nodes"][f["node_index"]]
        what = f'{n["op"]}, {n["status"]}, stop {n["stop"]}'
    else:
        what = "not examined"
    src = f["source"]
    where = f' {src["file"]}:{src["line"]}' if src else ""
    out = " [output]" if f["output_index"] is not None else ""
    stop = f'{f["node"]} ({what}){out}{where}'
print(f'{name:<18} {r["verdict"]:<9} {wall:>8} {paper:>8} {rss:>11} {related:>9} '
      f'{s["max_egraph_nodes"]:>9} {s["total_egraph_nodes"]:>10}  {stop}')
PY
done
echo "reports (text and JSON) in $OUT${2:+}"; [[ -n "${2:-}" ]] || echo "(temporary; pass OUT_DIR to keep them)"
