#!/usr/bin/env bash
# `graphguard stats` over every configuration of the shared corpus (GPT and Qwen2, TP 1/2/4)
# agrees with the counts grep/awk compute from the FX files.
# Usage: stats_whole_corpus.sh <graphguard> <repo root>
set -euo pipefail
GG=$1 ROOT=$2
source "$ROOT/tests/cli/expected_stats.bash"
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
CORPUS="$ROOT/examples/corpus"
[[ -d "$CORPUS" ]] || fail "shared corpus missing: $CORPUS"

count=0
for dir in "$CORPUS"/*/*/; do
  dir=${dir%/}
  # the FX graphs (the HLO modules of aws_llama/ are tests/cli/aws_llama.sh's)
  compgen -G "$dir/fw.g0.r*.py" >/dev/null || continue
  "$GG" stats "$dir" >"$TMP/stats.txt" 2>"$TMP/err.txt" || fail "stats $dir: $(cat "$TMP/err.txt")"
  for f in "$dir"/fw.g0.r*.py; do
    rank=$(sed -nE 's/^# Graph\[rank=([0-9]+)\].*/\1/p' "$f")
    fx_expected_rank_section "$f" >"$TMP/expected.txt"
    stats_rank_section "$TMP/stats.txt" "$rank" >"$TMP/actual.txt"
    diff -u "$TMP/expected.txt" "$TMP/actual.txt" >&2 || fail "$f: rank $rank stats differ"
    count=$((count + 1))
  done
done
[[ $count -ge 13 ]] || fail "only $count graph files checked"
echo "ok: $count graph files"
