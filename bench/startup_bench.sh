#!/usr/bin/env bash
# startup_bench.sh: what a symbolic command costs in each build — `graphguard --version`, `stats`
# and `verify --no-numeric` over the bundled corpus configurations — as the median wall time of
# REPEAT runs per binary. Compares any number of graphguard binaries (e.g. a laptop build and a
# LibTorch build, or a build before and after a change). The runtime plugin must not load for any
# of these commands (tests/cli/runtime_plugin.sh checks that; this measures it).
# Usage: bench/startup_bench.sh GRAPHGUARD... ; env REPEAT (default 7).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
C="$ROOT/examples/corpus"
REPEAT=${REPEAT:-7}
(($# > 0)) || { echo "usage: $0 GRAPHGUARD..." >&2; exit 2; }
command -v python3 >/dev/null || { echo "python3 missing" >&2; exit 2; }

# median seconds of REPEAT runs of a command (output discarded; exit 0 or 3 accepted)
median() {
  python3 - "$REPEAT" "$@" <<'PY'
import subprocess, sys, time, statistics
n = int(sys.argv[1]); cmd = sys.argv[2:]
times = []
for _ in range(n):
    t = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    times.append(time.perf_counter() - t)
    if r.returncode not in (0, 3):
        sys.exit(f"{' '.join(cmd)}: exit {r.returncode}")
print(f"{statistics.median(times) * 1000:.1f}")
PY
}

CASES=(
  "--version|--version"
  "stats gpt tp2|stats $C/gpt/paral2_layer1"
  "verify gpt tp2 L1|verify --no-numeric --seq $C/gpt/paral1_layer1/fw.g0.r0.py --dist $C/gpt/paral2_layer1 --relations $ROOT/examples/gpt.rel"
  "verify gpt tp4 L1|verify --no-numeric --seq $C/gpt/paral1_layer1/fw.g0.r0.py --dist $C/gpt/paral4_layer1 --relations $ROOT/examples/gpt.rel"
  "verify gpt tp2 L2|verify --no-numeric --seq $C/gpt/paral1_layer2/fw.g0.r0.py --dist $C/gpt/paral2_layer2 --relations $ROOT/examples/gpt.rel"
  "verify qwen2 tp2|verify --no-numeric --seq $C/qwen2/paral1_layer1/fw.g0.r0.py --dist $C/qwen2/paral2_layer1 --relations $ROOT/examples/qwen2.rel"
)
echo "median wall ms of $REPEAT runs ($(nproc) cores); columns: $*"
printf '%-20s' command
for gg in "$@"; do printf ' %12s' "$(basename "$(dirname "$gg")")"; done
echo
for entry in "${CASES[@]}"; do
  label=${entry%%|*}; args=${entry#*|}
  printf '%-20s' "$label"
  for gg in "$@"; do
    # shellcheck disable=SC2086
    printf ' %12s' "$(median "$gg" $args)"
  done
  echo
done
