#!/usr/bin/env bash
# jax_all_to_all: jax.lax.all_to_all inside shard_map (gg_capture.jax_models:all_to_all), the
# resharding of x [8, 12, 4] from one dim to another on 4 devices: XLA writes an all-to-all along
# the split dim (not 0) and a reshape / transpose / reshape that brings the members' blocks to the
# concat dim. S is the same function on one device (the identity), the spec from the
# PartitionSpecs. Every pair of dims REFINES; the received blocks rolled by one member
# (bug=roll) never REFINES, and in LibTorch builds verify is a VIOLATION with numeric evidence.
# Skips (exit 0, says SKIP) when .venv has no jax.
# Usage: jax_all_to_all.sh <graphguard> <repo root>
source "$(dirname "$0")/lib/jax_capture.sh" "$@"
skip_without_jax
M=gg_capture.jax_models:all_to_all

for pair in "1 0" "2 1" "0 2"; do
  read -r split concat <<<"$pair"
  capture "a2a_$split$concat" "$M" --mesh tp=4 --set split="$split" concat="$concat"
  grep -q "all-to-all(.*dimensions={$split}" "$TMP/a2a_$split$concat/dist.hlo" ||
    fail "split $split: no all-to-all along $split: $(grep all-to-all "$TMP/a2a_$split$concat/dist.hlo")"
  refines "a2a_$split$concat"
done

capture roll "$M" --mesh tp=4 --set split=1 concat=0 bug=roll
never_refines roll "the rolled blocks"
violation roll "the rolled blocks"
echo "jax_all_to_all: ok"
