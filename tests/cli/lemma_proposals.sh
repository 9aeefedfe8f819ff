#!/usr/bin/env bash
# Lemma proposals (issue 22): for a sample of catalogue lemmas that the proofs of small
# tensor-parallel programs use, delete one at a time (GG_LEMMA_DIR): verify must stop UNKNOWN;
# where the numeric run proposes lemmas, each printed proposal must load with --lemmas (which
# self-tests it again) and `verify --accept-proposed` must say "REFINES under N premises", naming
# the proposed lemma. Prints the fraction of deleted lemmas recovered (docs/benchmarks.md) and
# fails below the recorded figure. Needs the numeric runtime (skips itself without it).
# Usage: lemma_proposals.sh <graphguard> <repo root>
set -euo pipefail
GG=$1 ROOT=$2
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
export OMP_WAIT_POLICY=passive
if ! "$GG" infer-relations --help >/dev/null 2>&1; then
  echo "lemma_proposals: no numeric runtime in this build: skipped"
  exit 0
fi
MIN_RECOVERED=${GG_MIN_RECOVERED:-8}

# case dir (under tests/data), spec file, lemma the proof of that case uses.
SAMPLE=(
  "goals/matmul_rowpar spec.rel mm-concat-inner"
  "goals/matmul_colpar spec.rel mm-concat-cols"
  "regions/mlp whole.rel mm-concat-inner"
  "regions/mlp whole.rel mm-concat-cols"
  "goals/softmax_rows_sharded spec.rel softmax-of-concat"
  "goals/logical_and_cols_sharded spec.rel and-of-concats"
  "goals/gelu_new_cube_cols_sharded spec.rel add-of-concats"
  "goals/gelu_new_cube_cols_sharded spec.rel mul-of-concats"
  "goals/matmul4d_heads_sharded spec.rel bmm-concat-batch"
  "goals/layernorm_seqpar spec.rel layernorm-of-concat"
  "goals/attention_heads_sharded spec.rel attention-of-head-concats"
)

remove_lemma() {  # remove_lemma <dir> <id>: the catalogue in <dir> without lemma <id>
  mkdir -p "$1"
  cp "$ROOT"/src/symbolic/lemmas/*.rules "$1/"
  python3 "$ROOT/tests/cli/remove_lemma.py" "$1" "$2"
}

total=0 recovered=0 proposed_any=0
for entry in "${SAMPLE[@]}"; do
  read -r dir spec lemma <<<"$entry"
  D="$ROOT/tests/data/$dir"
  ARGS=(--seq "$D/seq.py" --dist "$D/dist" --relations "$D/$spec" --no-timing)
  # The lemma must be one this proof uses: the full catalogue proves it with the lemma.
  code=0
  "$GG" verify "${ARGS[@]}" --no-numeric --json "$TMP/full.json" >/dev/null 2>&1 || code=$?
  [[ $code -eq 0 ]] || fail "$dir: the full catalogue does not prove it (exit $code)"
  grep -q "\"$lemma" "$TMP/full.json" || fail "$dir: the proof does not use $lemma"
  L="$TMP/lemmas-$lemma-$(basename "$dir")"
  remove_lemma "$L" "$lemma"
  code=0
  GG_LEMMA_DIR="$L" "$GG" verify "${ARGS[@]}" >"$TMP/without.txt" 2>"$TMP/without.err" || code=$?
  if [[ $code -eq 0 ]]; then  # other lemmas prove it as well: nothing to recover
    echo "not needed: $lemma ($dir): REFINES without it"
    continue
  fi
  total=$((total + 1))
  [[ $code -eq 3 ]] || fail "$dir without $lemma: exit $code, expected 3 (UNKNOWN): $(head -3 "$TMP/without.txt")"
  # The proposals, as a rule file (the report's 'proposed' rows).
  sed -n 's/^  proposed  *//p' "$TMP/without.txt" >"$TMP/proposed-$total.rules"
  if [[ ! -s "$TMP/proposed-$total.rules" ]]; then
    echo "not recovered: $lemma ($dir): no proposal"
    continue
  fi
  proposed_any=$((proposed_any + 1))
  # Every printed proposal loads as a user lemma (self-tested again at load: exit 2 if refuted).
  code=0
  GG_LEMMA_DIR="$L" "$GG" verify "${ARGS[@]}" --no-numeric --lemmas "$TMP/proposed-$total.rules" \
    >"$TMP/with.txt" 2>"$TMP/with.err" || code=$?
  [[ $code -ne 2 ]] || fail "$dir without $lemma: a printed proposal does not load: $(cat "$TMP/with.err")"
  code=0
  GG_LEMMA_DIR="$L" "$GG" verify "${ARGS[@]}" --accept-proposed >"$TMP/accept.txt" \
    2>"$TMP/accept.err" || code=$?
  if [[ $code -eq 0 ]]; then
    head -1 "$TMP/accept.txt" | grep -Eq '^REFINES under [0-9]+ premises?' ||
      fail "$dir without $lemma: --accept-proposed: $(head -1 "$TMP/accept.txt")"
    grep -q "proposed from the numeric run" "$TMP/accept.txt" ||
      fail "$dir without $lemma: the premises do not name the proposed lemma"
    recovered=$((recovered + 1))
    echo "recovered: $lemma ($dir): $(grep -m1 '^proposed-\|: (.*=>' "$TMP/proposed-$total.rules")"
  else
    echo "not recovered: $lemma ($dir): --accept-proposed exit $code: $(head -1 "$TMP/accept.txt")"
  fi
done
echo "lemma_proposals: recovered $recovered of $total deleted lemmas the proofs need ($proposed_any with a proposal)"
[[ $recovered -ge $MIN_RECOVERED ]] || fail "recovered $recovered, expected at least $MIN_RECOVERED"
echo "lemma_proposals: ok"
