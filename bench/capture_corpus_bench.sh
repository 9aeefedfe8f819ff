#!/usr/bin/env bash
# capture_corpus_bench.sh: `graphguard verify --no-numeric` over every case of the capture corpus
# (tests/corpus: model x fwd/joint x TP 2/4): verdict, wall time, peak RSS, S operators related of
# examined, and the largest / total local e-graph. One process per case.
# Usage: bench/capture_corpus_bench.sh [BUILD_DIR (default build)] [OUT_DIR (default a temp dir)]
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
GG="${1:-$ROOT/build}/graphguard"
[[ -x "$GG" ]] || { echo "no $GG: build first (bash scripts/setup.sh)" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "/usr/bin/time missing (apt-get install time)" >&2; exit 2; }
if [[ -n "${2:-}" ]]; then
  OUT=$2; mkdir -p "$OUT"
else
  OUT=$(mktemp -d); trap 'rm -rf "$OUT"' EXIT
fi
printf '%-24s %-4s %-8s %7s %8s %9s %8s %9s\n' case tp verdict "wall s" "RSS MiB" related \
  "max eg" "total eg"
for dir in "$ROOT"/tests/corpus/*/*/; do
  case_name=$(basename "$(dirname "$dir")")/$(basename "$dir")
  for tp in 2 4; do
    [[ -f "$dir/tp$tp.json" ]] || continue
    json="$OUT/${case_name//\//_}_tp$tp.json"
    timing="$OUT/${case_name//\//_}_tp$tp.time"
    /usr/bin/time -f '%e %M' -o "$timing" "$GG" verify --seq "$dir/seq.json" \
      --dist "$dir/tp$tp.json" --relations "$dir/spec.rel" --no-numeric --json "$json" \
      >/dev/null 2>&1 || true
    read -r wall rss < <(tail -n 1 "$timing")  # time prefixes a non-zero exit status line
    python3 - "$json" "$case_name" "$tp" "$wall" "$rss" <<'PY'
import json, sys
path, name, tp, wall, rss = sys.argv[1:]
r = json.load(open(path))
s = r["stats"]
print(f"{name:<24} {tp:<4} {r['verdict']:<8} {float(wall):7.2f} {int(rss) / 1024:8.0f} "
      f"{s['s_operators_related']:>4}/{s['s_operators_examined']:<4} {s['max_egraph_nodes']:8d} "
      f"{s['total_egraph_nodes']:9d}")
PY
  done
done
