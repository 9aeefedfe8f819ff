#!/usr/bin/env bash
# run_import_bench.sh: time and peak memory of `graphguard import` over every configuration of the
# shared corpus (one process per configuration, best wall time of REPEAT runs; peak RSS from
# `/usr/bin/time -v`), then the in-process Google Benchmark of the loader when it was built.
# Usage: bench/run_import_bench.sh [BUILD_DIR (default build)] [REPEAT (default 5)]
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${1:-$ROOT/build}
REPEAT=${2:-5}
GG="$BUILD_DIR/graphguard"
CORPUS="$ROOT/examples/corpus"
[[ -x "$GG" ]] || { echo "no $GG: build first (bash scripts/setup.sh)" >&2; exit 2; }
[[ -d "$CORPUS" ]] || { echo "no corpus at $CORPUS" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "/usr/bin/time missing (apt-get install time)" >&2; exit 2; }
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT

echo "graphguard import, one process per configuration (best of $REPEAT; peak RSS of the last)"
printf '%-22s %5s %6s %9s %10s %11s %12s\n' configuration ranks lines "FX KiB" "JSON KiB" "wall ms" "max RSS KiB"
total_ms=0
for dir in "$CORPUS"/*/*/; do
  dir=${dir%/}
  config="${dir#"$CORPUS"/}"
  ranks=$(ls "$dir"/fw.g0.r*.py | wc -l)
  lines=$(cat "$dir"/fw.g0.r*.py | wc -l)
  fx_kib=$(( $(cat "$dir"/fw.g0.r*.py | wc -c) / 1024 ))
  best=""
  for _ in $(seq "$REPEAT"); do
    start=$(date +%s%N)
    /usr/bin/time -v -o "$TMP/time.txt" "$GG" import "$dir" -o "$TMP/out.json"
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    [[ -z "$best" || $ms -lt $best ]] && best=$ms
  done
  rss=$(sed -nE 's/^[[:space:]]*Maximum resident set size \(kbytes\): ([0-9]+)/\1/p' "$TMP/time.txt")
  json_kib=$(( $(wc -c <"$TMP/out.json") / 1024 ))
  total_ms=$((total_ms + best))
  printf '%-22s %5d %6d %9d %10d %11d %12d\n' "$config" "$ranks" "$lines" "$fx_kib" "$json_kib" "$best" "$rss"
done
echo "sum of best wall times: ${total_ms} ms"

# The JSON reader, on the program each import wrote (one configuration, the largest).
"$GG" import "$CORPUS/gpt/paral2_layer2" -o "$TMP/big.json"
start=$(date +%s%N)
/usr/bin/time -v -o "$TMP/time.txt" "$GG" stats "$TMP/big.json" >/dev/null
ms=$(( ($(date +%s%N) - start) / 1000000 ))
rss=$(sed -nE 's/^[[:space:]]*Maximum resident set size \(kbytes\): ([0-9]+)/\1/p' "$TMP/time.txt")
echo "stats on the JSON of gpt/paral2_layer2: ${ms} ms, max RSS ${rss} KiB"

if [[ -x "$BUILD_DIR/bench/import_bench" ]]; then
  echo
  echo "in-process loader benchmark (bench/import_bench.cc)"
  "$BUILD_DIR/bench/import_bench" --benchmark_min_time=0.2
fi
