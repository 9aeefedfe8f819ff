#!/usr/bin/env bash
# Bad input exits 2 with one line naming file:line: a corrupted node line, a bad annotation, a
# missing file, a truncated JSON, an unwritable output path, and the crashes of issue 19.
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

# Issue 19: inputs that crashed (exit 139), hung, ran out of memory or were accepted wrongly.
BAD="$ROOT/tests/data/bad"
# 100k levels of JSON nesting (generated here, not committed): once a stack overflow.
python3 -c 'import sys; sys.stdout.write("[" * 100000 + "]" * 100000)' >"$TMP/deep.json"
expect_bad_input "$TMP/deep.json:1: JSON nested deeper than 256 levels" stats "$TMP/deep.json"
{ printf '{"format": "graphguard-graph", "version": 1, "graph": {"name": "g", "rank": 0,\n'
  printf '"nodes": [{"name": "x", "kind": "input", "outputs": [{"name": "x", "type": "f32[4]"}]},\n'
  printf '{"name": "r", "kind": "call", "op": "aten::relu.default", "args": ['
  python3 -c 'import sys; sys.stdout.write("{\"x\":" * 100000 + "1" + "}" * 100000)'
  printf '], "outputs": [{"name": "r", "type": "f32[4]"}]}], "outputs": []}}\n'; } >"$TMP/deep_arg.json"
expect_bad_input "$TMP/deep_arg.json:3: JSON nested deeper" stats "$TMP/deep_arg.json"
expect_bad_input "untyped_constant.py:6: 'add' (aten::add.Tensor) reads the constant '_tensor_constant0' (line 5)" \
  stats "$BAD/untyped_constant.py"
expect_bad_input "json_untyped_constant.json:10: 'y' (aten::mul.Tensor) reads the constant 'c'" \
  stats "$BAD/json_untyped_constant.json"
expect_bad_input "element_count_overflow.py:3: bad type annotation: the element count of 'f32[4611686018427387904, 4]' overflows" \
  stats "$BAD/element_count_overflow.py"
expect_bad_input "view_size_overflow.py:4: shape error in 'view'" stats "$BAD/view_size_overflow.py"
expect_bad_input "negative_extent.py:3: bad type annotation: negative dimension '-1'" stats "$BAD/negative_extent.py"
expect_bad_input "dtype_mismatch.py:4: type error in 'mm' (aten::mm.default): mm: dtypes differ: f32 and bf16" \
  stats "$BAD/dtype_mismatch.py"
# A NUL and an escape character quoted from the input are escaped, never printed raw.
printf 'class GraphModule(torch.nn.Module):\n    def forward(self, x: "f32[4\000\033, 4]"):\n        return (x,)\n' \
  >"$TMP/nul.py"
expect_bad_input "nul.py:2: bad type annotation: bad dimension '4\\x00\\x1b'" stats "$TMP/nul.py"
if LC_ALL=C grep -q '[[:cntrl:]]' <(tr -d '\n' <"$TMP/err"); then fail "raw control characters: $(od -c "$TMP/err")"; fi

# Every file-taking option given a directory, and an output into a missing directory.
G="$ROOT/tests/data/goals/matmul_colpar"
V=(verify --seq "$G/seq.py" --dist "$G/dist" --no-numeric)
expect_bad_input "$G: is a directory, but the relation spec file must be a file" "${V[@]}" --relations "$G"
expect_bad_input "$G: expected one graph file, got a directory" verify --seq "$G" --dist "$G/dist" --relations "$G/spec.rel"
expect_bad_input "$G: is a directory, but the hint file must be a file" "${V[@]}" --relations "$G/spec.rel" --hints "$G"
expect_bad_input "$G: is a directory, but the report file must be a file" explain y --from-report "$G"
expect_bad_input "$TMP/none/r.json: cannot write the report file: the directory $TMP/none does not exist" \
  "${V[@]}" --relations "$G/spec.rel" --json "$TMP/none/r.json"
expect_bad_input "$G: is a directory; give a file name for the report file" "${V[@]}" --relations "$G/spec.rel" --json "$G"
expect_bad_input "$G: is a directory; give a file name for the output file" import "$G/seq.py" -o "$G"
# Negative numbers are values, rejected by the integer check.
expect_bad_input "option '--max-nodes' must be a non-negative integer, got -5" "${V[@]}" --relations "$G/spec.rel" --max-nodes -5
expect_bad_input "option '--hops' must be a non-negative integer, got -1" "${V[@]}" --relations "$G/spec.rel" --hops=-1
# Nested spec comprehensions whose sizes multiply: a step budget, not a hang.
Q="$ROOT/examples/corpus/qwen2"
expect_bad_input "comprehension_blowup.rel:3: the spec takes more than 2097152 evaluation steps" \
  verify --seq "$Q/paral1_layer1/fw.g0.r0.py" --dist "$Q/paral2_layer1" --no-numeric \
  --relations "$ROOT/tests/data/bad-specs/comprehension_blowup.rel"
echo "ok"
