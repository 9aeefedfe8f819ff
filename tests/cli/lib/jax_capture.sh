# Helpers of the JAX end-to-end tests (tests/cli/jax_*.sh), sourced after they set GG (the
# graphguard binary), ROOT (the repository root), PY (the .venv's python), TMP (a scratch
# directory) and fail().
#   capture <dir> <capture args...>   graphguard-capture jax ... -o $TMP/<dir>
#   verify <dir> [D module]           prints verify's exit code; the report in $TMP/out
#   refines <dir>                     fails unless verify says REFINES
# The checkout's gg_capture first (a worktree's .venv may be another checkout's, whose editable
# install points at that checkout's scripts).
export PYTHONPATH="$ROOT/scripts/capture${PYTHONPATH:+:$PYTHONPATH}"
capture() {
  local out=$1
  shift
  "$PY" -m gg_capture jax "$@" -o "$TMP/$out" >"$TMP/cap.out" 2>&1 ||
    fail "capture $*: $(cat "$TMP/cap.out")"
}
verify() {
  local code=0
  "$GG" verify --seq "$TMP/$1/seq.hlo" --dist "${2:-$TMP/$1/dist.hlo}" \
    --relations "$TMP/$1/spec.rel" --no-timing --no-numeric >"$TMP/out" 2>"$TMP/err" || code=$?
  echo "$code"
}
refines() {
  local code
  code=$(verify "$1")
  [[ $code -eq 0 ]] || fail "$1: exit $code: $(cat "$TMP/err" "$TMP/out" "$TMP/$1/spec.rel")"
  head -1 "$TMP/out" | grep -q '^REFINES: ' || fail "$1: $(head -1 "$TMP/out")"
}
