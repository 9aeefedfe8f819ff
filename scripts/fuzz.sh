#!/usr/bin/env bash
# Builds the libFuzzer targets of the importers and of the relation spec language (clang,
# ASan+UBSan) and runs each for N seconds (default 30) on a seed corpus made of the test graphs
# and specs. Usage: scripts/fuzz.sh [seconds] [build dir]
# Exit status is non-zero when a fuzzer finds a crash; its reproducer is left in the build dir.
#
# The targets are compiled here from the sources they need (src/ir, src/frontend and the spec's
# relation_spec.cc and relation.cc) rather than
# through CMake's GG_FUZZ option, which instruments all of gg_core: the importers' fuzzing then
# does not depend on every other module compiling under clang. GG_FUZZ_EXTRA_FLAGS adds flags.
set -euo pipefail
seconds="${1:-30}"
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${2:-$root/build-fuzz}"
cxx="${CXX_FUZZ:-$(command -v clang++ || command -v clang++-14)}"
flags=(-std=c++20 -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined
       -Wall -Wextra -Werror -Wno-unused-parameter -I"$root/src" -DGG_VERSION=\"fuzz\"
       -DGG_SOURCE_DIR=\"$root\" ${GG_FUZZ_EXTRA_FLAGS:-})

objdir="$build/obj"
mkdir -p "$objdir"
sources=()
for f in "$root"/src/ir/*.cc "$root"/src/frontend/*.cc "$root"/src/symbolic/relation_spec.cc \
         "$root"/src/symbolic/relation.cc; do
  case "$f" in *_test.cc|*_fuzz.cc|*_bench.cc) continue ;; esac
  sources+=("$f")
done
objects=()
for f in "${sources[@]}"; do
  o="$objdir/$(basename "${f%.cc}").o"
  objects+=("$o")
  if [ ! -f "$o" ] || [ "$f" -nt "$o" ] || [ -n "$(find "$root/src" -name '*.h' -newer "$o" | head -1)" ]; then
    echo "compile $(basename "$f")"
    "$cxx" "${flags[@]}" -c "$f" -o "$o"
  fi
done
targets=(frontend/fx_reader frontend/json_format frontend/hlo_reader symbolic/relation_spec)
for t in "${targets[@]}"; do
  target=$(basename "$t")
  echo "link ${target}_fuzz"
  "$cxx" "${flags[@]}" -fsanitize=fuzzer "$root/src/${t}_fuzz.cc" "${objects[@]}" \
    -o "$build/${target}_fuzz"
done

# Seeds: the small test graphs (good and bad) and one small corpus file when present.
seeds="$build/seeds"
mkdir -p "$seeds/fx" "$seeds/json" "$seeds/spec" "$seeds/hlo"
find "$root/tests/data" -name '*.py' | while read -r f; do
  cp "$f" "$seeds/fx/$(echo "${f#$root/tests/data/}" | tr '/' '_')"
done
find "$root/tests/data" -name '*.json' | while read -r f; do
  cp "$f" "$seeds/json/$(echo "${f#$root/tests/data/}" | tr '/' '_')"
done
find "$root/tests/data" "$root/examples" -name '*.rel' | while read -r f; do
  cp "$f" "$seeds/spec/$(echo "${f#$root/}" | tr '/' '_')"
done
find "$root/tests/data" -name '*.hlo' | while read -r f; do
  cp "$f" "$seeds/hlo/$(echo "${f#$root/tests/data/}" | tr '/' '_')"
done
corpus="$root/examples/corpus"
if [ -f "$corpus/qwen2/paral2_layer1/fw.g0.r0.py" ]; then
  cp "$corpus/qwen2/paral2_layer1/fw.g0.r0.py" "$seeds/fx/qwen2_r0.py"
fi

status=0
for t in "${targets[@]}"; do
  target=$(basename "$t")
  case "$target" in fx_reader) kind=fx ;; json_format) kind=json ;; hlo_reader) kind=hlo ;; *) kind=spec ;; esac
  work="$build/corpus-$target"
  mkdir -p "$work"
  echo "== fuzzing $target for ${seconds}s"
  (cd "$build" && "./${target}_fuzz" -max_total_time="$seconds" -max_len=65536 -timeout=10 \
      -rss_limit_mb=4096 -print_final_stats=1 "$work" "$seeds/$kind") || status=1
done
exit $status
