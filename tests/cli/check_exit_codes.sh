#!/usr/bin/env bash
# graphguard check: exit 0 when every relation holds, 1 when one fails (with the first failing S
# tensor, its errors and worst index), 2 for bad input; --from-verify adds verify's relations and
# classifies its first failure; the same seed gives the same JSON report. In a build without
# LibTorch the command is absent and says how to get it (exit 2).
# Usage: check_exit_codes.sh <graphguard> <repo root>
set -euo pipefail
GG=$1 ROOT=$2
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
GOALS="$ROOT/tests/data/goals"

if ! grep -q '^  check ' <<<"$("$GG" --help)"; then
  code=0
  "$GG" check --seq x --dist y --relations z >"$TMP/out" 2>"$TMP/err" || code=$?
  [[ $code -eq 2 ]] || fail "laptop build: check exit $code, expected 2"
  grep -q "needs the numeric runtime" "$TMP/err" || fail "laptop build: $(cat "$TMP/err")"
  echo "laptop build (no LibTorch): check is absent and says so"
  exit 0
fi

# check_case <case> <expected exit> [extra args...]
check_case() {
  local c=$1 want=$2 code=0
  shift 2
  "$GG" check --seq "$GOALS/$c/seq.py" --dist "$GOALS/$c/dist" --relations "$GOALS/$c/spec.rel" \
    "$@" >"$TMP/out" 2>"$TMP/err" || code=$?
  [[ $code -eq $want ]] || fail "check $c $*: exit $code, expected $want: $(cat "$TMP/err" "$TMP/out")"
}

check_case matmul_colpar 0
head -1 "$TMP/out" | grep -q '^check: HOLDS ' || fail "HOLDS report: $(head -3 "$TMP/out")"
grep -q 'dropout off' "$TMP/out" || fail "the report does not say how random ops were handled"

check_case matmul_rowpar_missing_allreduce 1 --json "$TMP/bad.json"
head -1 "$TMP/out" | grep -q '^check: FAILS ' || fail "FAILS report: $(head -3 "$TMP/out")"
grep -q '^first failure (S topological order): y = aten::mm.default' "$TMP/out" ||
  fail "first failure: $(cat "$TMP/out")"
grep -q 'worst at \[' "$TMP/out" || fail "no worst index"
grep -q '"outcome": "FAILS"' "$TMP/bad.json" || fail "JSON outcome"
grep -q '"schema": "graphguard.check-report"' "$TMP/bad.json" || fail "JSON schema"

# With verify's relations: every inferred relation is checked, and a VIOLATION is classified.
for c in layernorm_seqpar softmax_sharded_dim; do
  "$GG" verify --seq "$GOALS/$c/seq.py" --dist "$GOALS/$c/dist" --relations "$GOALS/$c/spec.rel" \
    --json "$TMP/$c.verify.json" >/dev/null || true
done
check_case layernorm_seqpar 0 --from-verify "$TMP/layernorm_seqpar.verify.json"
grep -q 'verify .*(REFINES)' "$TMP/out" || fail "verify report not named: $(cat "$TMP/out")"
check_case softmax_sharded_dim 1 --from-verify "$TMP/softmax_sharded_dim.verify.json"
grep -q '^numeric classification of y (not related by verify): numerically different' "$TMP/out" ||
  fail "classification: $(cat "$TMP/out")"

# Determinism: the same seed, the same JSON (without times); another seed, other inputs.
check_case matmul_rowpar 0 --seed 5 --no-timing --json "$TMP/a.json"
check_case matmul_rowpar 0 --seed 5 --no-timing --json "$TMP/b.json"
cmp -s "$TMP/a.json" "$TMP/b.json" || fail "same seed, different reports"

# The device: the report names it; an unknown one, or CUDA on a machine without a CUDA device, is
# a usage error (exit 2) that says why.
grep -q '^  device  *cpu$' "$TMP/out" || fail "device not reported: $(cat "$TMP/out")"
grep -q '"device": "cpu"' "$TMP/a.json" || fail "JSON device"
check_case matmul_rowpar 2 --device tpu
grep -q "unknown device 'tpu'" "$TMP/err" || fail "bad device: $(cat "$TMP/err")"
if ! nvidia-smi -L >/dev/null 2>&1; then
  check_case matmul_rowpar 2 --device cuda
  grep -q 'no CUDA device' "$TMP/err" || fail "--device cuda without a GPU: $(cat "$TMP/err")"
fi

# Bad input: a missing file, a verify report of another graph, a bad seed, a bad resize map.
check_case matmul_rowpar 2 --from-verify "$TMP/missing.json"
check_case matmul_colpar 2 --from-verify "$TMP/layernorm_seqpar.verify.json"
check_case matmul_rowpar 2 --seed -1
grep -qF "option '--seed' must be a non-negative integer, got -1" "$TMP/err" || fail "negative seed: $(cat "$TMP/err")"
# Issue 19: a capture with dynamic shapes was exit 4 (and --resize cannot help): exit 2 naming it.
DYN="$ROOT/tests/data/dynamic_shapes"
for args in "check --relations $DYN/spec.rel" "check --relations $DYN/spec.rel --resize 6=4" \
            "infer-relations -o $TMP/dyn.rel"; do
  code=0
  # shellcheck disable=SC2086
  "$GG" $args --seq "$DYN/seq.py" --dist "$DYN/dist" >"$TMP/out" 2>"$TMP/err" || code=$?
  [[ $code -eq 2 ]] || fail "$args on symbolic shapes: exit $code, expected 2: $(cat "$TMP/err")"
  grep -qF "dynamic_shapes/seq.py:4: the sequential graph has symbolic dims ('x' is f32[s0, " "$TMP/err" ||
    fail "$args on symbolic shapes: $(cat "$TMP/err")"
  grep -q "needs static shapes" "$TMP/err" || fail "$args on symbolic shapes: $(cat "$TMP/err")"
done
check_case matmul_rowpar 2 --resize 4=
grep -q 'resize' "$TMP/err" || fail "bad resize map message: $(cat "$TMP/err")"
echo "check exit codes: ok"
