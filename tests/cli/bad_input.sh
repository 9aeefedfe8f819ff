#!/usr/bin/env bash
# Bad input exits 2 with one line naming file:line: a corrupted node line, a bad annotation, a
# missing file, a truncated JSON, an unwritable output path.
# Usage: bad_input.sh <graphguard> <repo root>
set -euo pipefail
GG=$1 ROOT=$2
source "$ROOT/tests/cli/expected_stats.bash"
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
SRC="$ROOT/examples/corpus/gpt/paral2_layer1/fw.g0.r0.py"

# expect_bad_input <needle in the message> <args...>
expect_bad_input() {
  local needle=$1 code=0; shift
  "$GG" "$@" >"$TMP/out" 2>"$TMP/err" || code=$?
  [[ $code -eq 2 ]] || fail "'graphguard $*' exited $code, expected 2 (stderr: $(cat "$TMP/err"))"
  [[ $(wc -l <"$TMP/err") -eq 1 ]] || fail "'graphguard $*': stderr is not one line: $(cat "$TMP/err")"
  grep -q '^graphguard: error: ' "$TMP/err" || fail "bad message: $(cat "$TMP/err")"
  grep -qF -- "$needle" "$TMP/err" || fail "'graphguard $*': message lacks '$needle': $(cat "$TMP/err")"
}

# The first operator line of the file, found (not hard-coded), replaced by garbage.
line=$(grep -nE '^[[:space:]]+[A-Za-z0-9_]+: "[^"]*" = torch\.ops\.' "$SRC" | sed -n 5p | cut -d: -f1)
[[ -n "$line" ]] || fail "no operator line in $SRC"
# Both ranks are given (a lone rank 0 would disagree with its collectives' group size).
mkdir -p "$TMP/garbage"
cp "$(dirname "$SRC")/fw.g0.r1.py" "$TMP/garbage/"
sed "${line}s/= torch\.ops\./= torch.ops.(((/" "$SRC" >"$TMP/garbage/fw.g0.r0.py"
expect_bad_input "$TMP/garbage/fw.g0.r0.py:$line:" stats "$TMP/garbage"

# An annotation that contradicts the operator's shape rule (dims of an mm result swapped out).
mm=$(grep -nE '^[[:space:]]+mm: "f32\[' "$SRC" | head -1 | cut -d: -f1)
if [[ -n "$mm" ]]; then
  mkdir -p "$TMP/shape"
  cp "$(dirname "$SRC")/fw.g0.r1.py" "$TMP/shape/"
  sed -E "${mm}s/mm: \"f32\[[^]]*\]\"/mm: \"f32[3, 5]\"/" "$SRC" >"$TMP/shape/fw.g0.r0.py"
  expect_bad_input "$TMP/shape/fw.g0.r0.py:$mm:" stats "$TMP/shape"
fi

expect_bad_input "$TMP/missing.py" stats "$TMP/missing.py"

"$GG" import "$(dirname "$SRC")" -o "$TMP/one.json"
head -c 2000 "$TMP/one.json" >"$TMP/truncated.json"
expect_bad_input "$TMP/truncated.json" stats "$TMP/truncated.json"

expect_bad_input "$TMP/no/such/dir/out.json" import "$(dirname "$SRC")" -o "$TMP/no/such/dir/out.json"
echo "ok"
