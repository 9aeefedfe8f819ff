#!/usr/bin/env bash
# Regenerates the golden verify reports under tests/golden: for every hand-written goal case
# tests/data/goals/<case>, `graphguard verify --no-timing` writes <case>.txt (the readable report)
# and <case>.json (the JSON report without its "tool" line, so a version bump does not touch the
# goldens). Paths are relative to the repository root, so the reports hold no machine paths.
# The CI reports (--sarif, --junit) go to ci/: a REFINES and an UNKNOWN from the CLI (the bug
# benchmark's missing_rowparallel_allreduce, correct and buggy, whose captures record the model's
# source lines; for the UNKNOWN also the --html page, its tool line reading "graphguard VERSION"),
# and a VIOLATION and check's reports from gg_tests (CiReportGolden.* in
# src/cli/ci_reports_test.cc: a VIOLATION needs numeric evidence, which a laptop build has not;
# the test gives the evidence a LibTorch run records). The SARIF driver's version is "VERSION".
# The ctest tests/cli/verify_golden.sh runs this script into a temporary directory and diffs.
#
# Usage: scripts/regen-golden.sh [--binary GRAPHGUARD] [--out DIR]
#   defaults: build/graphguard (or $GG_BUILD_DIR/graphguard), tests/golden; gg_tests is the one
#   beside the binary
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
GG="$ROOT/${GG_BUILD_DIR:-build}/graphguard"
OUT="$ROOT/tests/golden"
while [[ $# -gt 0 ]]; do
  case $1 in
    --binary) GG=$(realpath "$2"); shift 2 ;;
    --out) mkdir -p "$2"; OUT=$(cd "$2" && pwd); shift 2 ;;
    *) echo "usage: $0 [--binary GRAPHGUARD] [--out DIR]" >&2; exit 2 ;;
  esac
done
[[ -x "$GG" ]] || { echo "regen-golden: no graphguard binary at $GG (build first)" >&2; exit 2; }
mkdir -p "$OUT"
cd "$ROOT"
for dir in tests/data/goals/*/; do
  dir=${dir%/}
  case_name=$(basename "$dir")
  code=0
  "$GG" verify --seq "$dir/seq.py" --dist "$dir/dist" --relations "$dir/spec.rel" --no-timing --no-numeric \
    --json "$OUT/$case_name.json.raw" >"$OUT/$case_name.txt" || code=$?
  if [[ $code -ne 0 && $code -ne 1 && $code -ne 3 ]]; then
    echo "regen-golden: $case_name: graphguard verify exited $code" >&2
    exit 1
  fi
  sed '/^  "tool": /d' "$OUT/$case_name.json.raw" >"$OUT/$case_name.json"
  rm -f "$OUT/$case_name.json.raw"
done

# ---- CI reports: SARIF and JUnit ------------------------------------------------------------------
mkdir -p "$OUT/ci"
version=$("$GG" --version | awk '{print $2}')
version_re=${version//./\\.}
# The SARIF driver's version (its two lines, at the driver's indentation) as "VERSION".
normalize_sarif() {
  sed -e "s/^          \"version\": \"$version_re\",\$/          \"version\": \"VERSION\",/" \
    -e "s/^          \"semanticVersion\": \"$version_re\",\$/          \"semanticVersion\": \"VERSION\",/"
}
bug=tests/bugs/missing_rowparallel_allreduce
for variant in correct buggy; do  # REFINES, UNKNOWN (the symbolic engine alone)
  name=missing_rowparallel_allreduce.$variant
  html=()
  [[ $variant == buggy ]] && html=(--html "$OUT/ci/$name.html.raw")
  code=0
  "$GG" verify --seq "$bug/$variant/seq.json" --dist "$bug/$variant/tp2.json" \
    --relations "$bug/$variant/spec.rel" --no-timing --no-numeric --quiet \
    --sarif "$OUT/ci/$name.sarif.raw" --junit "$OUT/ci/$name.junit.xml" "${html[@]}" >/dev/null ||
    code=$?
  if [[ $code -ne 0 && $code -ne 3 ]]; then
    echo "regen-golden: $name: graphguard verify exited $code" >&2
    exit 1
  fi
  normalize_sarif <"$OUT/ci/$name.sarif.raw" >"$OUT/ci/$name.sarif"
  rm -f "$OUT/ci/$name.sarif.raw"
  if [[ -f $OUT/ci/$name.html.raw ]]; then
    sed "s/<span class=\"tool\">graphguard $version_re</<span class=\"tool\">graphguard VERSION</" \
      "$OUT/ci/$name.html.raw" >"$OUT/ci/$name.html"
    rm -f "$OUT/ci/$name.html.raw"
  fi
done
GG_TESTS=$(dirname "$GG")/gg_tests
[[ -x "$GG_TESTS" ]] ||
  { echo "regen-golden: no gg_tests beside $GG (build the gg_tests target)" >&2; exit 2; }
GG_REGEN_GOLDEN_DIR="$OUT/ci" "$GG_TESTS" --gtest_filter='CiReportGolden.*' >"$OUT/ci/.log" 2>&1 ||
  { cat "$OUT/ci/.log" >&2; echo "regen-golden: gg_tests CiReportGolden failed" >&2; exit 1; }
rm -f "$OUT/ci/.log"
