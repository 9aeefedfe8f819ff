#!/usr/bin/env bash
# `graphguard stats` over the Megatron GPT TP2 and TP4 graphs of the bundled corpus
# prints, per rank, the node/input/constant/operator/output counts, the operator histogram and
# the collectives per group that grep/awk compute from the FX files themselves.
# Usage: stats_matches_files.sh <graphguard> <repo root>
set -euo pipefail
GG=$1 ROOT=$2
source "$ROOT/tests/cli/expected_stats.bash"
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT

dirs=("$ROOT/examples/corpus/gpt/paral2_layer1" "$ROOT/examples/corpus/gpt/paral4_layer1")

for dir in "${dirs[@]}"; do
  "$GG" stats "$dir" >"$TMP/stats.txt" || fail "graphguard stats $dir exited $?"
  files=("$dir"/fw.g0.r*.py)
  groups=$(for f in "${files[@]}"; do fx_collectives "$f"; done | awk '{print $1}' | LC_ALL=C sort -u)
  ngroups=$(printf '%s\n' "$groups" | grep -c . || true)
  [[ "$(head -1 "$TMP/stats.txt")" == "program: ${#files[@]} ranks, $ngroups process group"* ]] ||
    fail "$dir: header is '$(head -1 "$TMP/stats.txt")', expected ${#files[@]} ranks, $ngroups groups"
  for f in "${files[@]}"; do
    rank=$(sed -nE 's/^# Graph\[rank=([0-9]+)\].*/\1/p' "$f")
    fx_expected_rank_section "$f" >"$TMP/expected.txt"
    stats_rank_section "$TMP/stats.txt" "$rank" >"$TMP/actual.txt"
    # The expectation must be substantial, or this test would prove nothing.
    [[ $(grep -c '^ \+[0-9]\+  ' "$TMP/expected.txt") -gt 20 ]] || fail "$f: too few operators parsed"
    diff -u "$TMP/expected.txt" "$TMP/actual.txt" >&2 || fail "$f: rank $rank stats differ (-expected +actual)"
  done
  echo "ok: $dir (${#files[@]} ranks)"
done
