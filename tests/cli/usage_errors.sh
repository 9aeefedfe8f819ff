#!/usr/bin/env bash
# Usage errors exit 2 with one line "graphguard: error: ..." on stderr and nothing on stdout;
# --help, <cmd> --help and --version exit 0.
# Usage: usage_errors.sh <graphguard> <repo root>
set -euo pipefail
GG=$1 ROOT=$2
source "$ROOT/tests/cli/expected_stats.bash"
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
DIR="$ROOT/examples/corpus/gpt/paral2_layer1"

expect_usage_error() {
  local code=0
  "$GG" "$@" >"$TMP/out" 2>"$TMP/err" || code=$?
  [[ $code -eq 2 ]] || fail "'graphguard $*' exited $code, expected 2"
  [[ $(wc -l <"$TMP/err") -eq 1 ]] || fail "'graphguard $*': stderr is not one line: $(cat "$TMP/err")"
  grep -q '^graphguard: error: ' "$TMP/err" || fail "'graphguard $*': bad message: $(cat "$TMP/err")"
  [[ ! -s "$TMP/out" ]] || fail "'graphguard $*' wrote to stdout"
}
expect_usage_error
expect_usage_error frobnicate
expect_usage_error --frobnicate
expect_usage_error stats
expect_usage_error stats --bogus "$DIR"
expect_usage_error import "$DIR"                  # no -o
expect_usage_error import "$DIR" -o               # -o without a value
expect_usage_error import -o "$TMP/x.json"        # no input
expect_usage_error import "$DIR" -o a.json -o b.json
grep -q "unknown command 'frobnicate'" <("$GG" frobnicate 2>&1) || fail "message does not name the command"

"$GG" --help >"$TMP/help" || fail "--help exited $?"
for cmd in import stats; do
  grep -q "^  $cmd " "$TMP/help" || fail "--help does not list $cmd"
  "$GG" "$cmd" --help >"$TMP/cmdhelp" || fail "$cmd --help exited $?"
  grep -q "^usage: graphguard $cmd" "$TMP/cmdhelp" || fail "$cmd --help: no usage line"
done
grep -q 'Exit codes: 0' "$TMP/help" || fail "--help does not document exit codes"

version=$(sed -nE 's/^project\(GraphGuard VERSION ([0-9.]+).*/\1/p' "$ROOT/CMakeLists.txt")
[[ -n "$version" ]] || fail "no version in CMakeLists.txt"
[[ "$("$GG" --version)" == "graphguard $version" ]] || fail "--version says '$("$GG" --version)'"
echo "ok"
