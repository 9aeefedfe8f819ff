#!/usr/bin/env bash
# graphguard check --distributed under mpirun against the single-process check on the same seed,
# on the shared corpus's Megatron GPT layer 1 at batch 1 (vocabulary 1024):
#   tp2  mpirun -np 2 with --exact-collectives: stdout (rank 0's report; the other rank prints
#        nothing) and the JSON report are byte-identical to the single-process run's (--no-timing)
#        but for the row naming the collectives (in-process / mpi); so is a goal case's report with
#        --from-verify (classified by D's gathered fingerprints).
#   tp4  mpirun -np 4 with native MPI sums: the same relations with the same verdicts, and errors
#        within 1e-6 of each other relative to the S tensor (normwise relative errors), since MPI
#        may sum in another order.
#   mismatch  mpirun -np 2 on TP4: exit 2 on every process, one error line naming -np 4.
# Usage: check_distributed.sh <graphguard> <repo root> <case> <mpiexec> [mpiexec flags...]
set -euo pipefail
GG=$1 ROOT=$2 CASE=$3 MPIEXEC=$4
shift 4
MPI_FLAGS=("$@")
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
C="$ROOT/examples/corpus/gpt"
[[ -d "$C/paral4_layer1" ]] || { echo "corpus not found: $C (skipped)"; exit 0; }
# ATen single-threaded: idle OpenMP workers of several processes spin on a shared 2-core machine.
export OMP_NUM_THREADS=1

SEQ_MAP=8=1,12288=1536,192=24,98304=1024
case $CASE in
  tp2) NP=2 DIST="$C/paral2_layer1" DIST_MAP=8=1,12288=1536,96=12,6144=768,98304=1024,49152=512 ;;
  # TP4: a rank's vocabulary shard is 24576 and the ranks' offsets 24576, 49152 and 73728.
  tp4|mismatch) NP=4 DIST="$C/paral4_layer1"
    DIST_MAP=8=1,12288=1536,48=6,3072=384,98304=1024,24576=256,49152=512,73728=768 ;;
  *) fail "unknown case $CASE" ;;
esac
ARGS=(check --seq "$C/paral1_layer1/fw.g0.r0.py" --dist "$DIST" --relations "$ROOT/examples/gpt.rel"
      --resize "$SEQ_MAP" --resize-dist "$DIST_MAP" --seed 7 --no-timing)

if [[ $CASE == mismatch ]]; then
  code=0
  "$MPIEXEC" "${MPI_FLAGS[@]}" -np 2 "$GG" "${ARGS[@]}" --distributed >"$TMP/out" 2>"$TMP/err" ||
    code=$?
  [[ $code -eq 2 ]] || fail "mismatch: exit $code, expected 2: $(cat "$TMP/err")"
  grep -q 'graphguard: error: .*D has 4 ranks but 2 MPI processes.*mpirun -np 4' "$TMP/err" ||
    fail "mismatch message: $(cat "$TMP/err")"
  [[ $(grep -c 'graphguard: error' "$TMP/err") -eq 1 ]] || fail "error printed more than once"
  [[ ! -s "$TMP/out" ]] || fail "mismatch wrote a report"
  echo "world-size mismatch: exit 2, one error line"
  exit 0
fi

single=0 dist=0
start=$SECONDS
"$GG" "${ARGS[@]}" --json "$TMP/single.json" >"$TMP/single.txt" 2>"$TMP/single.err" || single=$?
t_single=$((SECONDS - start))
[[ $single -eq 0 ]] ||
  fail "single-process check exit $single: $(cat "$TMP/single.err" "$TMP/single.txt")"
EXTRA=()
[[ $CASE == tp2 ]] && EXTRA=(--exact-collectives)
start=$SECONDS
"$MPIEXEC" "${MPI_FLAGS[@]}" -np "$NP" "$GG" "${ARGS[@]}" --distributed "${EXTRA[@]}" \
  --json "$TMP/dist.json" >"$TMP/dist.txt" 2>"$TMP/dist.err" || dist=$?
t_dist=$((SECONDS - start))
[[ $dist -eq $single ]] || fail "distributed exit $dist, single $single: $(cat "$TMP/dist.err")"
echo "$CASE: single-process ${t_single} s, mpirun -np $NP ${t_dist} s (wall, incl. start-up)"

# The reports name how D's collectives ran: in-process here, MPI there (a CPU run).
grep -q '"collectives": "in-process"' "$TMP/single.json" || fail "single: collectives not named"
grep -q '"collectives": "mpi"' "$TMP/dist.json" || fail "distributed: collectives not 'mpi'"
grep -q '^  collectives  *mpi$' "$TMP/dist.txt" || fail "distributed text: no collectives row"
# Everything else is the same report.
same_but_collectives() {
  cmp <(grep -v -E '^  ("collectives": |collectives )' "$1") \
      <(grep -v -E '^  ("collectives": |collectives )' "$2")
}
if [[ $CASE == tp2 ]]; then
  same_but_collectives "$TMP/single.json" "$TMP/dist.json" ||
    fail "JSON reports differ: $(diff "$TMP/single.json" "$TMP/dist.json" | head -20)"
  same_but_collectives "$TMP/single.txt" "$TMP/dist.txt" ||
    fail "text reports differ (another rank printed?): $(diff "$TMP/single.txt" "$TMP/dist.txt")"
  echo "tp2 exact: identical reports but for the collectives row"
  # Classification by fingerprints (gathered to rank 0) of verify's failure on a goal case: exit 1.
  G="$ROOT/tests/data/goals/softmax_sharded_dim"
  GARGS=(check --seq "$G/seq.py" --dist "$G/dist" --relations "$G/spec.rel" --no-timing
         --from-verify "$TMP/verify.json")
  "$GG" verify --seq "$G/seq.py" --dist "$G/dist" --relations "$G/spec.rel" \
    --json "$TMP/verify.json" >/dev/null || true
  single=0 dist=0
  "$GG" "${GARGS[@]}" >"$TMP/single.txt" || single=$?
  "$MPIEXEC" "${MPI_FLAGS[@]}" -np 2 "$GG" "${GARGS[@]}" --distributed --exact-collectives \
    >"$TMP/dist.txt" 2>"$TMP/dist.err" || dist=$?
  [[ $single -eq 1 && $dist -eq 1 ]] || fail "classification case: exit $single / $dist"
  grep -q '^numeric classification of y .*numerically different' "$TMP/dist.txt" ||
    fail "no classification: $(cat "$TMP/dist.txt")"
  same_but_collectives "$TMP/single.txt" "$TMP/dist.txt" || fail "classification reports differ"
  echo "tp2 exact: classification report identical"
  exit 0
fi
python3 - "$TMP/single.json" "$TMP/dist.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert a["outcome"] == b["outcome"], (a["outcome"], b["outcome"])
ra, rb = a["checks"], b["checks"]
assert len(ra) == len(rb) and len(ra) > 0, (len(ra), len(rb))
for x, y in zip(ra, rb):
    key = lambda c: (c["s_tensor"], c["relation"], c["kind"], c["status"], c["error"])
    assert key(x) == key(y), (key(x), key(y))
    diff = abs(x["max_rel_error"] - y["max_rel_error"])
    assert diff <= 1e-6, (x["relation"], x["max_rel_error"], y["max_rel_error"])
print(f"tp4 native: {len(ra)} relations, same verdicts, relative errors within 1e-6")
PY
