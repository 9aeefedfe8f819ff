#!/usr/bin/env bash
# device-check.sh: the GPU checks in one run, for a machine with an NVIDIA GPU (an H200 node) and
# for any other machine, where the GPU tests report themselves skipped and the script still ends 0.
#   1. configures a CUDA build (sm_90; LibTorch off: the kernels and NCCL need none) in
#      $GG_DEVICE_BUILD_DIR (default build-device), finding NCCL in the CUDA toolkit or in
#      python3's nvidia-nccl package, GoogleTest and nlohmann-json on the system or in .devdeps/
#      (scripts/device-deps.sh packs them for a bare machine);
#   2. builds gg_gpu_tests and gg_gpu_kernels_bandwidth;
#   3. runs ctest -L gpu (kernels against the CPU reference, NCCL collectives, devices);
#   4. runs the kernel bandwidth benchmark (GB/s of each kernel and its fraction of a D2D copy);
#   5. configures a LibTorch build (python3's torch; CUDA, and MPI where found) in
#      $GG_DEVICE_TORCH_BUILD_DIR (default $GG_DEVICE_BUILD_DIR-torch), builds graphguard,
#      gg_runtime_gpu_tests and gg_nccl_backend_tests (MPI builds) and runs them: the executor,
#      check and the fused compare on CUDA against the CPU, the NCCL backend (a group of one
#      process; across processes under mpirun where each has a GPU) against the reference
#      collectives (cuda-executor.log);
#   6. runs mpirun -np 2 (and 4 with 4 GPUs) graphguard check --distributed --device cuda on the
#      reduced GPT TP2 (TP4) corpus graphs and asserts the CPU single-process run's verdicts, and
#      NCCL collectives where every process has a GPU of its own (one GPU: MPI, since NCCL takes
#      no two ranks on one device); skipped, with the reason, without mpirun, MPI or a GPU;
#   7. times a full-shape GPT TP4·L1 check on the GPU with /usr/bin/time -v (gpt-tp4-check.txt:
#      the report, then the time and peak memory), from the corpus in $GG_CORPUS_DIR (default
#      examples/corpus, the bundled copy, which travels to a device machine with the checkout);
#      skipped, with the reason, without a GPU.
# GG_DEVICE_BUILD_TYPE (default Release) lets a run reuse an existing build directory of another
# type without rebuilding it. Writes $OUT/summary.txt and the logs (configure.log, build.log, gpu-tests.log, bandwidth.txt)
# to $OUT (default $GG_DEVICE_BUILD_DIR/out). Exits non-zero when a step fails (a skipped test is
# no failure). Budget: under 8 minutes on 16 cores; every step has a timeout, and step 6 runs only
# when enough of the 8 minutes is left. At most 8 files land in $OUT (the device tool's limit).
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
BUILD=${GG_DEVICE_BUILD_DIR:-build-device}
OUT=${OUT:-$BUILD/out}
JOBS=${GG_JOBS:-$(nproc)}
mkdir -p "$BUILD" "$OUT"
SUMMARY="$OUT/summary.txt"
: >"$SUMMARY"
say() { echo "$*" | tee -a "$SUMMARY"; }
status=0
start=$SECONDS

say "device-check: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname), $(nproc) cores"
say "git: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
if command -v nvidia-smi >/dev/null 2>&1; then
  say "gpu: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | head -4)"
else
  say "gpu: no nvidia-smi on this machine"
fi
say "nvcc: $(nvcc --version 2>/dev/null | grep -o 'release [0-9.]*' || echo 'not found')"

# ---- dependencies a bare machine may lack -------------------------------------------------------
PREFIXES=()
if [[ -d .devdeps/nlohmann ]]; then PREFIXES+=("$ROOT/.devdeps/nlohmann"); fi
if [[ -d .devdeps/googletest ]] && ! ls /usr/lib/*/cmake/GTest /usr/lib/cmake/GTest \
     /usr/local/lib/cmake/GTest >/dev/null 2>&1; then
  say "deps: building GoogleTest from .devdeps/googletest"
  if cmake -S .devdeps/googletest -B "$BUILD/gtest-build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
       -DCMAKE_INSTALL_PREFIX="$ROOT/$BUILD/gtest" -DBUILD_GMOCK=OFF >"$OUT/deps.log" 2>&1 &&
     cmake --build "$BUILD/gtest-build" -j "$JOBS" --target install >>"$OUT/deps.log" 2>&1; then
    PREFIXES+=("$ROOT/$BUILD/gtest")
  else
    say "deps: GoogleTest build failed (deps.log)"
  fi
fi
CMAKE_ARGS=(-G Ninja -DCMAKE_BUILD_TYPE="${GG_DEVICE_BUILD_TYPE:-Release}" -DGG_WITH_TORCH=OFF
            -DGG_BUILD_BENCH=OFF
            -DCMAKE_CUDA_ARCHITECTURES="${GG_CUDA_ARCHITECTURES:-90}")
if ((${#PREFIXES[@]} > 0)); then
  CMAKE_ARGS+=("-DCMAKE_PREFIX_PATH=$(IFS=';'; echo "${PREFIXES[*]}")")
fi
# NCCL: the toolkit's, else the one pip installed for torch (nvidia-nccl-cu13).
if [[ ! -e /usr/local/cuda/include/nccl.h && -z "${NCCL_ROOT:-}" ]]; then
  nccl_root=$(python3 -c 'import nvidia.nccl, os; print(os.path.dirname(nvidia.nccl.__file__))' \
                2>/dev/null || true)
  if [[ -z "$nccl_root" ]]; then
    nccl_root=$(python3 -c 'import nvidia, os; print(os.path.join(list(nvidia.__path__)[0], "nccl"))' \
                  2>/dev/null || true)
  fi
  if [[ -n "$nccl_root" && -d "$nccl_root" ]]; then CMAKE_ARGS+=("-DGG_NCCL_ROOT=$nccl_root"); fi
fi

# ---- configure and build ------------------------------------------------------------------------
t=$SECONDS
if cmake -S . -B "$BUILD" "${CMAKE_ARGS[@]}" >"$OUT/configure.log" 2>&1; then
  say "configure: ok ($((SECONDS - t)) s) $(grep -E '^-- GraphGuard' "$OUT/configure.log" | tr '\n' ' ')"
else
  say "configure: FAILED (configure.log)"; tail -20 "$OUT/configure.log" | tee -a "$SUMMARY"
  exit 1
fi
t=$SECONDS
if timeout 360 cmake --build "$BUILD" -j "$JOBS" --target gg_gpu_tests gg_gpu_kernels_bandwidth \
     >"$OUT/build.log" 2>&1; then
  say "build: ok ($((SECONDS - t)) s)"
else
  say "build: FAILED (build.log)"; grep -E 'error|FAILED' "$OUT/build.log" | head -20 | tee -a "$SUMMARY"
  exit 1
fi

# ---- GPU tests ----------------------------------------------------------------------------------
t=$SECONDS
if timeout 240 ctest --test-dir "$BUILD" -L gpu --output-on-failure >"$OUT/gpu-tests.log" 2>&1; then
  say "gpu tests: ok ($((SECONDS - t)) s)"
else
  say "gpu tests: FAILED ($((SECONDS - t)) s, gpu-tests.log)"; status=1
fi
grep -E 'tests passed|tests failed|\(Skipped\)|\(Failed\)' "$OUT/gpu-tests.log" | tee -a "$SUMMARY"
skipped=$(grep -c '(Skipped)' "$OUT/gpu-tests.log" || true)
say "gpu tests skipped: $skipped$( ((skipped > 0)) && echo " ($(grep -m1 -o 'no CUDA device[^"]*' \
  "$OUT/gpu-tests.log" || echo see gpu-tests.log))")"

# ---- kernel bandwidth ---------------------------------------------------------------------------
if timeout 120 "$BUILD/src/cuda/gg_gpu_kernels_bandwidth" "${GG_BENCH_MIB:-1024}" 20 \
     >"$OUT/bandwidth.txt" 2>&1; then
  say "bandwidth:"; sed 's/^/  /' "$OUT/bandwidth.txt" | tee -a "$SUMMARY"
else
  say "bandwidth: FAILED (bandwidth.txt)"; status=1
fi
# ---- the executor on CUDA (LibTorch build) ------------------------------------------------------
TBUILD=${GG_DEVICE_TORCH_BUILD_DIR:-$BUILD-torch}
XLOG="$OUT/cuda-executor.log"
: >"$XLOG"
torch_dir=${GG_TORCH_DIR:-$(python3 -c 'import torch,os;print(os.path.dirname(torch.__file__))' \
                              2>/dev/null || true)}
if [[ -x .venv/bin/python && -z "${GG_TORCH_DIR:-}" ]]; then
  torch_dir=$(.venv/bin/python -c 'import torch,os;print(os.path.dirname(torch.__file__))' \
                2>/dev/null || echo "$torch_dir")
fi
if [[ -z "$torch_dir" ]]; then
  say "cuda executor: SKIPPED (no python3 torch to build the LibTorch runtime against)"
else
  # CUDA on (the fused compare kernel in check) and MPI where found (check --distributed, its
  # NCCL backend): the first build's arguments with LibTorch on.
  TARGS=()
  for arg in "${CMAKE_ARGS[@]}"; do [[ $arg == -DGG_WITH_TORCH=OFF ]] || TARGS+=("$arg"); done
  TARGS+=("-DGG_TORCH_DIR=$torch_dir")
  t=$SECONDS
  targets=(graphguard gg_runtime_gpu_tests)
  if timeout 90 cmake -S . -B "$TBUILD" "${TARGS[@]}" >>"$XLOG" 2>&1; then
    grep -E '^-- GraphGuard' "$XLOG" | sed 's/^-- /  /' | tee -a "$SUMMARY"
    # The NCCL backend's tests exist in CUDA+MPI builds only.
    if grep -q '^build gg_nccl_backend_tests:' "$TBUILD/build.ninja"; then
      targets+=(gg_nccl_backend_tests)
    fi
  fi
  if [[ -f "$TBUILD/build.ninja" ]] &&
     timeout 240 cmake --build "$TBUILD" -j "$JOBS" --target "${targets[@]}" >>"$XLOG" 2>&1; then
    say "cuda executor build: ok ($((SECONDS - t)) s, LibTorch at $torch_dir)"
    # The corpus for the reduced GPT test and the full-shape check.
    corpus=${GG_CORPUS_DIR:-examples/corpus}
    export GG_CORPUS_DIR=$corpus
    t=$SECONDS
    if timeout 150 ctest --test-dir "$TBUILD" -L gpu --output-on-failure -V \
         -R 'ExecutorCuda|CheckCuda|CompareCuda|NcclBackend|NcclSetup|nccl_backend' \
         >>"$XLOG" 2>&1; then
      say "cuda executor tests: ok ($((SECONDS - t)) s)"
    else
      say "cuda executor tests: FAILED ($((SECONDS - t)) s, cuda-executor.log)"; status=1
    fi
    grep -E 'tests passed,|tests failed|\(Skipped\)|\(Failed\)|\[ cuda vs cpu \]|\[ check \]' \
      "$XLOG" | sed 's/^[0-9]*: //' | sort -u | tee -a "$SUMMARY"
    # check --distributed --device cuda under mpirun on the reduced GPT TP2 (and TP4) corpus
    # graphs: NCCL collectives when every process has a GPU of its own, else (one GPU: NCCL takes
    # no two ranks on one device) MPI on host copies; the verdicts must be the CPU single-process
    # run's (the output goes to cuda-executor.log: $OUT holds at most 8 files).
    DLOG="$TBUILD/distributed-check.txt"
    gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
    mpiexec=$(command -v mpirun || command -v mpiexec || true)
    if [[ -z "$mpiexec" ]]; then
      say "distributed cuda check: SKIPPED (no mpirun on this machine)"
    elif ! "$TBUILD/graphguard" check --help 2>&1 | grep -q -- '--distributed'; then
      say "distributed cuda check: SKIPPED (graphguard built without MPI)"
    elif [[ ! -d "$corpus/gpt/paral4_layer1" ]]; then
      say "distributed cuda check: SKIPPED (no corpus at $corpus)"
    elif probe=$("$TBUILD/graphguard" check --device cuda --seq x --dist x --relations x 2>&1);
         [[ "$probe" == *"no CUDA device"* ]]; then
      say "distributed cuda check: SKIPPED ($(grep -o -m1 'no CUDA device.*' <<<"$probe"))"
    else
      mflags=()
      if "$mpiexec" --version 2>&1 | grep -q -E 'Open MPI|OpenRTE'; then
        mflags=(--allow-run-as-root --oversubscribe)
      fi
      C="$corpus/gpt"
      for np in 2 4; do
        if ((np == 4 && gpus < 4)); then
          say "distributed cuda check np 4: SKIPPED ($gpus GPU(s): NCCL needs one per process)"
          continue
        fi
        if ((np == 2)); then
          DIST="$C/paral2_layer1" DMAP=8=1,12288=1536,96=12,6144=768,98304=1024,49152=512
        else
          DIST="$C/paral4_layer1"
          DMAP=8=1,12288=1536,48=6,3072=384,98304=1024,24576=256,49152=512,73728=768
        fi
        args=(check --seq "$C/paral1_layer1/fw.g0.r0.py" --dist "$DIST"
              --relations examples/gpt.rel --resize 8=1,12288=1536,192=24,98304=1024
              --resize-dist "$DMAP" --seed 7 --no-timing)
        want=$((np <= gpus ? 1 : 0))
        t=$SECONDS
        c1=0 c2=0
        : >"$DLOG"
        OMP_NUM_THREADS=1 timeout 120 "$TBUILD/graphguard" "${args[@]}" \
          --json "$TBUILD/cpu-np$np.json" >>"$DLOG" 2>&1 || c1=$?
        OMP_NUM_THREADS=1 timeout 120 "$mpiexec" "${mflags[@]}" -np "$np" "$TBUILD/graphguard" \
          "${args[@]}" --distributed --device cuda --json "$TBUILD/cuda-np$np.json" >>"$DLOG" 2>&1 ||
          c2=$?
        verdict=$(python3 - "$TBUILD/cpu-np$np.json" "$TBUILD/cuda-np$np.json" "$want" <<'PY' 2>&1
import json, sys
try:
    a, b = (json.load(open(p)) for p in sys.argv[1:3])
except Exception as e:
    print(f"FAILED (no report: {e})"); sys.exit(0)
key = lambda j: [(c["s_tensor"], c["relation"], c["status"]) for c in j["checks"]]
ok = a["outcome"] == b["outcome"] and key(a) == key(b) and len(key(a)) > 0
nccl = b.get("collectives") == "nccl"
if sys.argv[3] == "1" and not nccl: ok = False
print(("ok" if ok else "FAILED") + f": {b['outcome']} on cuda ({b.get('device')}, collectives "
      f"{b.get('collectives')}), {a['outcome']} on the cpu, {len(key(b))} relations")
PY
)
        rm -f "$TBUILD/cpu-np$np.json" "$TBUILD/cuda-np$np.json"
        say "distributed cuda check np $np: exit $c2 (cpu $c1), $verdict ($((SECONDS - t)) s)"
        grep '^  collectives' "$DLOG" | tail -1 | tee -a "$SUMMARY"
        { echo "---- distributed cuda check np $np"; cat "$DLOG"; } >>"$XLOG"
        [[ $verdict == ok* && $c1 == "$c2" ]] || status=1
      done
    fi
    # A full-shape GPT TP4·L1 check on the GPU (the corpus has no TP4·L2), if time is left.
    CHECK="$OUT/gpt-tp4-check.txt"
    left=$((470 - (SECONDS - start)))
    if ! "$TBUILD/graphguard" check --help >/dev/null 2>&1; then
      say "gpt tp4 full shape: SKIPPED (graphguard has no check command)"
    elif [[ ! -d "$corpus/gpt/paral4_layer1" ]]; then
      say "gpt tp4 full shape: SKIPPED (no corpus at $corpus)"
    elif probe=$("$TBUILD/graphguard" check --device cuda --seq x --dist x --relations x 2>&1);
         [[ "$probe" == *"no CUDA device"* ]]; then
      say "gpt tp4 full shape: SKIPPED ($(grep -o -m1 'no CUDA device.*' <<<"$probe"))"
    elif ((left < 60)); then
      say "gpt tp4 full shape: SKIPPED (only $left s of the 8-minute budget left)"
    else
      timer=(/usr/bin/time -v)
      [[ -x /usr/bin/time ]] || timer=()
      t=$SECONDS
      code=0
      OMP_WAIT_POLICY=passive timeout "$((left - 10))" "${timer[@]}" "$TBUILD/graphguard" check \
        --device cuda --seq "$corpus/gpt/paral1_layer1/fw.g0.r0.py" \
        --dist "$corpus/gpt/paral4_layer1" --relations examples/gpt.rel >"$CHECK" 2>&1 || code=$?
      say "gpt tp4 full shape: exit $code ($((SECONDS - t)) s wall; gpt-tp4-check.txt)"
      grep -E '^check:|^  time|^  device|Elapsed \(wall|Maximum resident' "$CHECK" |
        sed 's/^[[:space:]]*/  /' | tee -a "$SUMMARY"
      ((code == 0)) || status=1
    fi
  else
    say "cuda executor build: FAILED ($((SECONDS - t)) s, cuda-executor.log)"
    grep -E 'error|FAILED' "$XLOG" | head -20 | tee -a "$SUMMARY"
    status=1
  fi
fi
say "device-check: done in $((SECONDS - start)) s, status $status"
exit "$status"
