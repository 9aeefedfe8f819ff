#!/usr/bin/env bash
# Semantics the model enforces (issue 19): an async collective read before its wait_tensor,
# collective arguments that differ between ranks and a view ATen refuses are bad input (exit 2,
# file:line); vLLM attention reading another layer's KV cache does not refine; a dropout is related
# only under the spec's RNG model (UNKNOWN naming it without one, REFINES under a premise with it).
# Usage: semantics.sh <graphguard> <repo root>
set -euo pipefail
GG=$1 ROOT=$2
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
BAD="$ROOT/tests/data/bad"
GOALS="$ROOT/tests/data/goals"

# expect_bad_input <needle> <args...>: exit 2, one line on stderr naming the needle.
expect_bad_input() {
  local needle=$1 code=0; shift
  "$GG" "$@" >"$TMP/out" 2>"$TMP/err" || code=$?
  [[ $code -eq 2 ]] || fail "'graphguard $*' exited $code, expected 2 (stderr: $(cat "$TMP/err"))"
  [[ $(wc -l <"$TMP/err") -eq 1 ]] || fail "'graphguard $*': stderr is not one line: $(cat "$TMP/err")"
  grep -qF -- "$needle" "$TMP/err" || fail "'graphguard $*': message lacks '$needle': $(cat "$TMP/err")"
}
expect_bad_input "unsynchronized_read/fw.g0.r1.py:10: 'relu' (aten::relu.default) reads the result of the asynchronous collective 'all_reduce'" \
  stats "$BAD/unsynchronized_read"
expect_bad_input "broadcast_src_mismatch/fw.g0.r1.py:7: " stats "$BAD/broadcast_src_mismatch"
grep -qF "broadcast_src_mismatch/fw.g0.r0.py:7 (rank 0) does _c10d_functional::broadcast.default src 0" "$TMP/err" ||
  fail "the broadcast error does not name rank 0's line: $(cat "$TMP/err")"
expect_bad_input "all_to_all_split_mismatch/fw.g0.r1.py:7: " stats "$BAD/all_to_all_split_mismatch"
expect_bad_input "view_of_transpose.py:10: " stats "$BAD/view_of_transpose.py"
grep -qF "ATen raises here; use reshape" "$TMP/err" || fail "the view error says no remedy: $(cat "$TMP/err")"
# As the sequential model too.
C="$GOALS/matmul_colpar"
expect_bad_input "view_of_transpose.py:10: " verify --seq "$BAD/view_of_transpose.py" --dist "$C/dist" --relations "$C/spec.rel"

# verify_case <dir> <dist> <spec> <expected exit>
verify_case() {
  local code=0
  "$GG" verify --seq "$1/seq.py" --dist "$1/$2" --relations "$1/$3" --no-numeric --no-timing \
    >"$TMP/out" 2>"$TMP/err" || code=$?
  [[ $code -eq $4 ]] || fail "verify $1 $2 $3: exit $code, expected $4: $(head -3 "$TMP/out") $(cat "$TMP/err")"
}
# Attention: S's layer 0 against D reading layer 1's cache is never equated.
A="$GOALS/attention_heads_sharded"
verify_case "$A" dist spec.rel 0
verify_case "$A" dist_wrong_layer spec.rel 3
head -1 "$TMP/out" | grep -q '^UNKNOWN: ' || fail "wrong layer: $(head -1 "$TMP/out")"

# Dropout on shards: without an RNG model the proof stops at the dropout and says how to state one.
P="$GOALS/dropout_cols_sharded"
verify_case "$P" dist no_rng.rel 3
head -1 "$TMP/out" | grep -q '^UNKNOWN: .*random operator aten::native_dropout.default' ||
  fail "no-rng dropout does not name the random operator: $(head -1 "$TMP/out")"
grep -qF 'rng positional' "$TMP/out" || fail "no-rng dropout does not say how to state the model"
verify_case "$P" dist spec.rel 0
head -1 "$TMP/out" | grep -q '^REFINES under 1 premise (rng positional: ' ||
  fail "dropout under the RNG model: $(head -1 "$TMP/out")"
grep -q '^  rng ' "$TMP/out" || fail "the premises section lacks the rng premise: $(cat "$TMP/out")"
# A bad model name is bad input at its line.
printf 'input x = shard(1)\noutput y = shard(1)\nrng sequential\n' >"$TMP/bad.rel"
expect_bad_input "bad.rel:3" verify --seq "$P/seq.py" --dist "$P/dist" --relations "$TMP/bad.rel"
echo "ok"
