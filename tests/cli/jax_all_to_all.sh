#!/usr/bin/env bash
# jax_all_to_all: jax.lax.all_to_all inside shard_map (gg_capture.jax_models:all_to_all), the
# resharding of x [8, 12, 4] from one dim to another on 4 devices: XLA writes an all-to-all along
# the split dim (not 0) and a reshape / transpose / reshape that brings the members' blocks to the
# concat dim. S is the same function on one device (the identity), the spec from the
# PartitionSpecs. Every pair of dims REFINES; the received blocks rolled by one member
# (bug=roll) never REFINES, and in LibTorch builds verify is a VIOLATION with numeric evidence.
# Skips (exit 0, says SKIP) when .venv has no jax.
# Usage: jax_all_to_all.sh <graphguard> <repo root>
set -euo pipefail
GG=$1 ROOT=$2
PY=$ROOT/.venv/bin/python
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
if [[ ! -x $PY ]] || ! "$PY" -c 'import jax' 2>/dev/null; then
  echo "jax_all_to_all: SKIP: no .venv with jax (run scripts/setup.sh)"
  exit 0
fi
source "$ROOT/tests/cli/lib/jax_capture.sh"
M=gg_capture.jax_models:all_to_all

for pair in "1 0" "2 1" "0 2"; do
  read -r split concat <<<"$pair"
  capture "a2a_$split$concat" "$M" --mesh tp=4 --set split="$split" concat="$concat"
  grep -q "all-to-all(.*dimensions={$split}" "$TMP/a2a_$split$concat/dist.hlo" ||
    fail "split $split: no all-to-all along $split: $(grep all-to-all "$TMP/a2a_$split$concat/dist.hlo")"
  refines "a2a_$split$concat"
done

capture roll "$M" --mesh tp=4 --set split=1 concat=0 bug=roll
code=$(verify roll)
[[ $code -eq 1 || $code -eq 3 ]] || fail "roll: exit $code: $(cat "$TMP/err" "$TMP/out")"
if head -1 "$TMP/out" | grep -q '^REFINES'; then fail "rolled blocks verified as REFINES"; fi
if [[ -f "$(dirname "$GG")/libgraphguard_runtime.so" ]]; then
  code=0
  "$GG" verify --seq "$TMP/roll/seq.hlo" --dist "$TMP/roll/dist.hlo" --relations \
    "$TMP/roll/spec.rel" --no-timing >"$TMP/out" 2>&1 || code=$?
  [[ $code -eq 1 ]] && head -1 "$TMP/out" | grep -q '^VIOLATION: .*numerically' ||
    fail "numeric verify of the rolled blocks: exit $code: $(head -3 "$TMP/out")"
else
  echo "jax_all_to_all: SKIP numeric run: no runtime plugin beside $GG (laptop build)"
fi
echo "jax_all_to_all: ok"
