#!/usr/bin/env bash
# guided_bench.sh: `graphguard verify` with and without numeric guidance (issue 22 s.1) on every
# case of the capture corpus (tests/corpus: model x fwd/joint x TP 2/4, and 8 where a case has
# it). "plain" is verify --no-numeric with an empty hint file (the search without hints, but the
# report carries the work per operator); "guided" is verify --guided (one CPU run of S and D, its fingerprint matches as
# hints). Prints per case: verdicts, e-nodes summed over every attempt of every S operator,
# saturation iterations, the inference seconds of the report (loading and the numeric run
# excluded), the guided run's numeric run (its report's hints.numeric_seconds) and the wall
# seconds of the whole command (LibTorch start-up and the run included),
# and whether the guided run had to search again without hints. Medians over GG_GUIDED_REPEAT.
# Usage: bench/guided_bench.sh [BUILD_DIR (default build)] [OUT_DIR (default a temp dir)]
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
GG="${1:-$ROOT/build}/graphguard"
REPEAT=${GG_GUIDED_REPEAT:-3}
[[ -x "$GG" ]] || { echo "no $GG: build first (bash scripts/setup.sh)" >&2; exit 2; }
"$GG" infer-relations --help >/dev/null 2>&1 ||
  { echo "$GG has no numeric runtime (--guided needs a LibTorch build)" >&2; exit 2; }
if [[ -n "${2:-}" ]]; then
  OUT=$2; mkdir -p "$OUT"
else
  OUT=$(mktemp -d); trap 'rm -rf "$OUT"' EXIT
fi
export OMP_WAIT_POLICY=passive
: >"$OUT/empty.hints"
for dir in "$ROOT"/tests/corpus/*/*/; do
  case_name=$(basename "$(dirname "$dir")")_$(basename "$dir")
  for tp in 2 4 8; do
    [[ -f "$dir/tp$tp.json" ]] || continue
    for mode in plain guided; do
      for ((i = 1; i <= REPEAT; ++i)); do
        args=(--no-numeric --hints "$OUT/empty.hints")
        [[ $mode == guided ]] && args=(--guided)
        start=$(date +%s%N)
        "$GG" verify --seq "$dir/seq.json" --dist "$dir/tp$tp.json" --relations "$dir/spec.rel" \
          "${args[@]}" --json "$OUT/${case_name}_tp$tp.$mode.$i.json" >/dev/null 2>&1 || true
        echo "$(( $(date +%s%N) - start ))e-9" >"$OUT/${case_name}_tp$tp.$mode.$i.wall"
      done
    done
  done
done
python3 - "$OUT" <<'PY'
import glob, json, os, statistics, sys
out = sys.argv[1]
tags = sorted({os.path.basename(p).split(".")[0] for p in glob.glob(f"{out}/*.plain.1.json")})
print("| case | verdict plain / guided | e-nodes plain | e-nodes guided | ratio | iterations plain / guided | inference s plain / guided | numeric run s | wall s plain / guided | hints given / related / left | rerun |")
print("|---|---|---:|---:|---:|---|---|---:|---|---|---|")
tot = {"plain": 0, "guided": 0}
joint = {"plain": 0, "guided": 0}
for tag in tags:
    row = {}
    for mode in ["plain", "guided"]:
        runs = [json.load(open(p)) for p in sorted(glob.glob(f"{out}/{tag}.{mode}.*.json"))]
        walls = [float(open(p).read()) for p in sorted(glob.glob(f"{out}/{tag}.{mode}.*.wall"))]
        r = runs[0]
        nodes = sum(n["work_nodes"] for n in r["nodes"])
        h = r["stats"].get("hints", {})
        if h.get("rerun_without"):
            nodes += h.get("guided_work_nodes", 0)
        row[mode] = dict(verdict=r["verdict"], nodes=nodes,
                         iters=sum(n["work_iterations"] for n in r["nodes"]),
                         secs=statistics.median(x["stats"]["seconds"] for x in runs),
                         wall=statistics.median(walls), hints=h,
                         numeric=statistics.median(x["stats"].get("hints", {}).get("numeric_seconds", 0)
                                                   for x in runs))
        tot[mode] += nodes
        if "_joint_" in tag:
            joint[mode] += nodes
    p, g = row["plain"], row["guided"]
    h = g["hints"]
    print(f"| {tag} | {p['verdict']} / {g['verdict']} | {p['nodes']} | {g['nodes']} | "
          f"{p['nodes'] / max(g['nodes'], 1):.2f} | {p['iters']} / {g['iters']} | "
          f"{p['secs']:.3f} / {g['secs']:.3f} | {g['numeric']:.2f} | {p['wall']:.2f} / {g['wall']:.2f} | "
          f"{h.get('given', 0)} / {h.get('related', 0)} / {h.get('left_unrelated', 0)} | "
          f"{'yes' if h.get('rerun_without') else 'no'} |")
print(f"\ntotal e-nodes: plain {tot['plain']}, guided {tot['guided']} "
      f"({tot['plain'] / max(tot['guided'], 1):.2f}x fewer); joint graphs: plain {joint['plain']}, "
      f"guided {joint['guided']} ({joint['plain'] / max(joint['guided'], 1):.2f}x fewer)")
PY
