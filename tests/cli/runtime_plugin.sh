#!/usr/bin/env bash
# The numeric runtime is a plugin (libgraphguard_runtime.so beside graphguard) loaded only when a
# command needs it: the binary itself links no LibTorch; --version, --help, a command's --help,
# import, stats, explain and verify --no-numeric run with the plugin pointed at a missing file; a
# command that needs it then fails with exit 2 naming the path it looked for and what to do; with
# the real plugin, check runs. A laptop build (no plugin) only checks the symbolic commands.
# Usage: runtime_plugin.sh <graphguard> <repo root>
set -euo pipefail
GG=$1 ROOT=$2
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
G="$ROOT/tests/data/goals/matmul_colpar"
PLUGIN="$(dirname "$GG")/libgraphguard_runtime.so"

if command -v ldd >/dev/null; then
  ! ldd "$GG" | grep -q 'libtorch' || fail "graphguard links LibTorch: $(ldd "$GG" | grep libtorch)"
fi

# Symbolic commands never load the plugin: they succeed with it pointed at nothing.
export GG_RUNTIME_PLUGIN="$TMP/missing/libgraphguard_runtime.so"
"$GG" --version >/dev/null || fail "--version"
"$GG" --help >/dev/null || fail "--help"
"$GG" stats "$G/dist" >/dev/null || fail "stats"
"$GG" import "$G/dist" -o "$TMP/d.json" || fail "import"
"$GG" verify --no-numeric --seq "$G/seq.py" --dist "$G/dist" --relations "$G/spec.rel" \
  --json "$TMP/r.json" >/dev/null || fail "verify --no-numeric"
"$GG" explain y --from-report "$TMP/r.json" >/dev/null || fail "explain"

if [[ ! -f "$PLUGIN" ]]; then
  echo "laptop build (no $PLUGIN): symbolic commands checked"
  exit 0
fi
"$GG" check --help >/dev/null || fail "check --help needs no plugin"
code=0
"$GG" check --seq "$G/seq.py" --dist "$G/dist" --relations "$G/spec.rel" >"$TMP/out" \
  2>"$TMP/err" || code=$?
[[ $code -eq 2 ]] || fail "check with a missing plugin: exit $code, expected 2: $(cat "$TMP/err")"
grep -q "needs the numeric runtime (LibTorch), which could not be loaded: $GG_RUNTIME_PLUGIN" \
  "$TMP/err" || fail "missing plugin message: $(cat "$TMP/err")"
grep -q "bash scripts/setup.sh" "$TMP/err" || fail "the message says what to do: $(cat "$TMP/err")"

# A file that is not a plugin: the same kind of error, never a loader crash.
echo "not an ELF file" >"$TMP/bad.so"
code=0
GG_RUNTIME_PLUGIN="$TMP/bad.so" "$GG" infer-relations --seq "$G/seq.py" --dist "$G/dist" \
  -o "$TMP/spec.rel" >"$TMP/out" 2>"$TMP/err" || code=$?
[[ $code -eq 2 ]] || fail "a broken plugin: exit $code, expected 2: $(cat "$TMP/err")"
grep -q "$TMP/bad.so" "$TMP/err" || fail "broken plugin message: $(cat "$TMP/err")"

unset GG_RUNTIME_PLUGIN
"$GG" check --seq "$G/seq.py" --dist "$G/dist" --relations "$G/spec.rel" >"$TMP/out" ||
  fail "check with the plugin: $(cat "$TMP/out")"
head -1 "$TMP/out" | grep -q '^check: HOLDS ' || fail "check: $(head -3 "$TMP/out")"
echo "ok: numeric runtime loaded only by the commands that need it"
