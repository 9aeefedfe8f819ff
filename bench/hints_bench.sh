#!/usr/bin/env bash
# hints_bench.sh: `graphguard verify` with and without fingerprint hints on the shared corpus.
# For each configuration: `graphguard infer-relations --hints-out` (LibTorch build; at reduced
# sizes, the maps of docs/benchmarks.md) writes the hints once (kept in OUT_DIR and reused), then
# verify runs GG_HINTS_REPEAT times with an empty hint file (the search without hints, but the
# report carries the per-operator work) and as often with the hints. Prints per configuration:
# verdict, hints given / proved / S operators related by the search towards them / fell back to the
# full search, e-graph work
# per S operator summed over every attempt (e-nodes, e-classes, saturation iterations: total and
# max) and the median inference time (the report's stats.seconds: loading excluded).
# Usage: bench/hints_bench.sh [BUILD_DIR (default build)] [OUT_DIR (default a temp dir)]
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${1:-$ROOT/build}
GG="$BUILD_DIR/graphguard"
CORPUS="$ROOT/examples/corpus"
REPEAT=${GG_HINTS_REPEAT:-5}
[[ -x "$GG" ]] || { echo "no $GG: build first (bash scripts/setup.sh)" >&2; exit 2; }
[[ -d "$CORPUS" ]] || { echo "no corpus at $CORPUS" >&2; exit 2; }
command -v python3 >/dev/null || { echo "python3 missing (reads the JSON reports)" >&2; exit 2; }
"$GG" infer-relations --help >/dev/null 2>&1 ||
  { echo "$GG has no infer-relations (a LibTorch build writes the hints)" >&2; exit 2; }
if [[ -n "${2:-}" ]]; then
  OUT=$2; mkdir -p "$OUT"
else
  OUT=$(mktemp -d); trap 'rm -rf "$OUT"' EXIT
fi
# Idle OpenMP workers spin on a shared machine (docs/benchmarks.md, infer-relations).
export OMP_WAIT_POLICY=passive
: >"$OUT/empty.hints"

GPT_S="8=1,12288=1536,192=24,98304=1024"
GPT_TP2_D="8=1,12288=1536,96=12,6144=768,98304=1024,49152=512"
GPT_TP4_D="8=1,12288=1536,48=6,3072=384,98304=1024,24576=256,49152=512,73728=768"
QWEN_MAP="32768=256,151936=1024,75968=512,17920=1792,8960=896,4480=448"
# model tp layers | infer-relations options
CONFIGS=(
  "gpt 2 1|--outputs 0 --resize $GPT_S --resize-dist $GPT_TP2_D"
  "gpt 4 1|--outputs 0 --resize $GPT_S --resize-dist $GPT_TP4_D"
  "gpt 2 2|--outputs 0 --resize $GPT_S --resize-dist $GPT_TP2_D"
  "gpt 4 2|--outputs 0 --resize $GPT_S --resize-dist $GPT_TP4_D"
  "qwen2 2 1|--resize $QWEN_MAP"
)

echo "graphguard verify with and without fingerprint hints ($(nproc) cores, $REPEAT runs each)"
for config in "${CONFIGS[@]}"; do
  read -r model tp layers <<<"${config%%|*}"
  infer_opts=${config#*|}
  tag="${model}_tp${tp}_l${layers}"
  seq_file="$CORPUS/$model/paral1_layer$layers/fw.g0.r0.py"
  dist_dir="$CORPUS/$model/paral${tp}_layer$layers"
  if [[ ! -d "$dist_dir" || ! -f "$seq_file" ]]; then
    echo "$tag: not in the corpus"
    continue
  fi
  hints="$OUT/$tag.hints"
  if [[ ! -s "$hints" ]]; then
    start=$(date +%s)
    # shellcheck disable=SC2086
    "$GG" infer-relations --seq "$seq_file" --dist "$dist_dir" -o "$OUT/$tag.rel" \
      --hints-out "$hints" $infer_opts >"$OUT/$tag.infer.txt" 2>&1 || {
      code=$?
      [[ $code -eq 3 ]] || { echo "$tag: infer-relations exit $code: $(tail -2 "$OUT/$tag.infer.txt")"; continue; }
    }
    echo "$tag: hints written in $(( $(date +%s) - start )) s: $(grep '^wrote .*hints' "$OUT/$tag.infer.txt" || true)"
  fi
  for mode in plain hinted; do
    hint_file=$OUT/empty.hints
    [[ $mode == hinted ]] && hint_file=$hints
    for ((i = 1; i <= REPEAT; ++i)); do
      code=0
      "$GG" verify --seq "$seq_file" --dist "$dist_dir" --relations "$ROOT/examples/$model.rel" \
        --hints "$hint_file" --json "$OUT/$tag.$mode.$i.json" >/dev/null 2>"$OUT/err.txt" ||
        code=$?
      [[ $code -le 3 && -s "$OUT/$tag.$mode.$i.json" ]] ||
        { echo "$tag $mode: verify exit $code: $(head -1 "$OUT/err.txt")"; break; }
    done
  done
done

python3 - "$OUT" "$REPEAT" <<'PY'
import glob, json, os, statistics, sys
out, repeat = sys.argv[1], int(sys.argv[2])
rows = []
for tag in ["gpt_tp2_l1", "gpt_tp4_l1", "gpt_tp2_l2", "gpt_tp4_l2", "qwen2_tp2_l1"]:
    for mode in ["plain", "hinted"]:
        runs = [json.load(open(p)) for p in sorted(glob.glob(f"{out}/{tag}.{mode}.*.json"))]
        if not runs:
            continue
        r = runs[0]
        nodes = r["nodes"]
        h = r["stats"].get("hints", {})
        def tot(key): return sum(n[key] for n in nodes)
        def mx(key): return max((n[key] for n in nodes), default=0)
        secs = statistics.median(x["stats"]["seconds"] for x in runs)
        hints = "-" if mode == "plain" else f'{h["given"]}/{h["proved"]}/{h["related"]}/{h["left_unrelated"]}'
        rows.append((tag, mode, r["verdict"], hints, len(nodes), tot("attempts"),
                     tot("work_nodes"), mx("work_nodes"), tot("work_classes"), mx("work_classes"),
                     tot("work_iterations"), mx("work_iterations"), f"{secs:.3f}"))
head = ("configuration", "hints", "verdict", "given/proved/related/left unrelated", "S ops", "attempts",
        "nodes tot", "nodes max", "classes tot", "classes max", "iter tot", "iter max",
        "median s")
print("| " + " | ".join(head) + " |")
print("|" + "---|" * len(head))
for row in rows:
    print("| " + " | ".join(str(x) for x in row) + " |")
PY
echo "hints, specs and reports in $OUT${2:+}"; [[ -n "${2:-}" ]] || echo "(temporary; pass OUT_DIR to keep them)"
