#!/usr/bin/env bash
# Builds the libFuzzer targets of the importers (clang, ASan+UBSan) and runs each for N seconds
# (default 30) on a seed corpus made of the test graphs. Usage: scripts/fuzz.sh [seconds] [build dir]
# Exit status is non-zero when a fuzzer finds a crash; its reproducer is left in the build dir.
set -euo pipefail
seconds="${1:-30}"
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${2:-$root/build-fuzz}"
cxx="${CXX_FUZZ:-$(command -v clang++ || command -v clang++-14)}"
cc="${CC_FUZZ:-$(command -v clang || command -v clang-14)}"

cmake -S "$root" -B "$build" -G Ninja -DGG_FUZZ=ON -DGG_BUILD_TESTS=OFF \
  -DGG_WITH_TORCH=OFF -DGG_WITH_CUDA=OFF -DGG_WITH_MPI=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_C_COMPILER="$cc" \
  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address,undefined" >/dev/null
cmake --build "$build" --target fx_reader_fuzz json_format_fuzz

# Seeds: the small test graphs (good and bad) and, when present, a few corpus files.
seeds="$build/seeds"
mkdir -p "$seeds/fx" "$seeds/json"
cp "$root"/tests/data/good/*.py "$root"/tests/data/bad/*.py "$seeds/fx/" 2>/dev/null || true
find "$root/tests/data" -name '*.py' -path '*tp2*' -exec cp {} "$seeds/fx/" \;
cp "$root"/tests/data/good/*.json "$root"/tests/data/bad/*.json "$seeds/json/" 2>/dev/null || true
corpus="$root/../shared/corpus/megatron-vllm"
if [ -d "$corpus/qwen2/paral2_layer1" ]; then
  cp "$corpus/qwen2/paral2_layer1/fw.g0.r0.py" "$seeds/fx/qwen2_r0.py"
fi

status=0
for target in fx_reader json_format; do
  kind=$([ "$target" = fx_reader ] && echo fx || echo json)
  work="$build/corpus-$target"
  mkdir -p "$work"
  echo "== fuzzing $target for ${seconds}s"
  (cd "$build" && "./${target}_fuzz" -max_total_time="$seconds" -max_len=65536 -timeout=10 \
      -print_final_stats=1 "$work" "$seeds/$kind") || status=1
done
exit $status
