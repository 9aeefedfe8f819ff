# Shared by the JAX end-to-end tests (tests/cli/jax_*.sh), sourced first with the test's own
# arguments (<graphguard> <repo root>):  source "$(dirname "$0")/lib/jax_capture.sh" "$@"
# Sets GG (the graphguard binary), ROOT (the repository root), PY (the .venv's python), TMP (a
# scratch directory, removed on exit) and TEST (the script's name), and defines:
#   fail <message>                         FAIL on stderr, exit 1
#   skip_without_jax [<what> [<note>]]     exit 0 saying SKIP when the .venv has no jax
#   has_runtime                            true in LibTorch builds (the plugin beside graphguard)
#   capture <dir> <capture args...>        graphguard-capture jax ... -o $TMP/<dir>
#   verify_files <seq> <dist> <spec> [args...]
#                                          prints verify's exit code (--no-timing and args); the
#                                          report in $TMP/out, stderr in $TMP/err
#   verify <dir> [<D module>]              verify_files --no-numeric on a capture
#   refines <dir>                          fails unless verify says REFINES
#   never_refines <dir> <what> [<D module>]
#                                          fails unless verify exits 1 or 3, never REFINES
#   violation <dir> <what> [<D module>]    with the numeric runtime: fails unless verify (with its
#                                          numeric run) is a VIOLATION with numeric evidence;
#                                          without it says SKIP
#   holds <dir> <what>                     with the numeric runtime: fails unless check HOLDS
# The checkout's gg_capture comes first on PYTHONPATH (a worktree's .venv may be another
# checkout's, whose editable install points at that checkout's scripts).
set -euo pipefail
GG=$1 ROOT=$2
PY=$ROOT/.venv/bin/python
TEST=$(basename "$0" .sh)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export PYTHONPATH="$ROOT/scripts/capture${PYTHONPATH:+:$PYTHONPATH}"

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
skip_without_jax() {
  if [[ ! -x $PY ]] || ! "$PY" -c 'import jax' 2>/dev/null; then
    echo "$TEST: SKIP${1:+ $1}: no .venv with jax (run scripts/setup.sh)${2:+; $2}"
    exit 0
  fi
}
has_runtime() { [[ -f "$(dirname "$GG")/libgraphguard_runtime.so" ]]; }
capture() {
  local out=$1
  shift
  "$PY" -m gg_capture jax "$@" -o "$TMP/$out" >"$TMP/cap.out" 2>&1 ||
    fail "capture $*: $(cat "$TMP/cap.out")"
}
verify_files() {
  local code=0
  "$GG" verify --seq "$1" --dist "$2" --relations "$3" --no-timing "${@:4}" >"$TMP/out" \
    2>"$TMP/err" || code=$?
  echo "$code"
}
verify() { verify_files "$TMP/$1/seq.hlo" "${2:-$TMP/$1/dist.hlo}" "$TMP/$1/spec.rel" --no-numeric; }
refines() {
  local code
  code=$(verify "$1")
  [[ $code -eq 0 ]] || fail "$1: exit $code: $(cat "$TMP/err" "$TMP/out" "$TMP/$1/spec.rel")"
  head -1 "$TMP/out" | grep -q '^REFINES: ' || fail "$1: $(head -1 "$TMP/out")"
}
never_refines() {
  local code
  code=$(verify "$1" "${3:-}")
  [[ $code -eq 1 || $code -eq 3 ]] || fail "$2: exit $code: $(cat "$TMP/err" "$TMP/out")"
  if head -1 "$TMP/out" | grep -q '^REFINES'; then fail "$2 verified as REFINES"; fi
  echo "$TEST: $2: $(head -1 "$TMP/out" | cut -c1-160)"
}
violation() {
  if ! has_runtime; then
    echo "$TEST: SKIP numeric verify of $2: no runtime plugin beside $GG (laptop build)"
    return
  fi
  local code
  code=$(verify_files "$TMP/$1/seq.hlo" "${3:-$TMP/$1/dist.hlo}" "$TMP/$1/spec.rel")
  [[ $code -eq 1 ]] && head -1 "$TMP/out" | grep -q '^VIOLATION: .*numerically' ||
    fail "numeric verify of $2: exit $code: $(head -3 "$TMP/out")"
}
holds() {
  if ! has_runtime; then
    echo "$TEST: SKIP numeric check of $2: no runtime plugin beside $GG (laptop build)"
    return
  fi
  local code=0
  "$GG" check --seq "$TMP/$1/seq.hlo" --dist "$TMP/$1/dist.hlo" --relations "$TMP/$1/spec.rel" \
    >"$TMP/out" 2>&1 || code=$?
  [[ $code -eq 0 ]] && head -1 "$TMP/out" | grep -q '^check: HOLDS' ||
    fail "numeric check of $2: exit $code: $(cat "$TMP/out")"
}
