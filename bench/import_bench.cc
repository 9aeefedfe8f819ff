// Import benchmark: the loader (FX text -> checked ir::Program), the JSON writer and the JSON
// loader, in process, for every configuration of the shared corpus (GG_CORPUS_DIR). The
// per-process time and peak memory of `graphguard import` are measured by run_import_bench.sh.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "frontend/json_format.h"
#include "frontend/loader.h"

namespace {

namespace fs = std::filesystem;

std::vector<fs::path> CorpusConfigurations() {
  std::vector<fs::path> dirs;
  fs::path corpus(GG_CORPUS_DIR);
  if (!fs::is_directory(corpus)) return dirs;
  for (const auto& model : fs::directory_iterator(corpus)) {
    if (!model.is_directory()) continue;
    for (const auto& config : fs::directory_iterator(model.path())) {
      if (config.is_directory()) dirs.push_back(config.path());
    }
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

void BM_LoadFx(benchmark::State& state, const fs::path& dir) {
  for (auto _ : state) {
    gg::ir::Program program = gg::frontend::LoadProgram({dir.string()});
    benchmark::DoNotOptimize(program.ranks.data());
  }
}

void BM_WriteJson(benchmark::State& state, const fs::path& dir) {
  gg::ir::Program program = gg::frontend::LoadProgram({dir.string()});
  for (auto _ : state) {
    std::string json = gg::frontend::ToJson(program);
    benchmark::DoNotOptimize(json.data());
    state.SetBytesProcessed(state.bytes_processed() + static_cast<int64_t>(json.size()));
  }
}

void BM_LoadJson(benchmark::State& state, const fs::path& dir) {
  gg::ir::Program program = gg::frontend::LoadProgram({dir.string()});
  fs::path json_path =
      fs::temp_directory_path() / ("gg_import_bench_" + dir.parent_path().filename().string() +
                                   "_" + dir.filename().string() + ".json");
  {
    std::ofstream out(json_path, std::ios::binary);
    gg::frontend::WriteJson(program, out);
  }
  for (auto _ : state) {
    gg::ir::Program loaded = gg::frontend::LoadProgram({json_path.string()});
    benchmark::DoNotOptimize(loaded.ranks.data());
  }
  fs::remove(json_path);
}

}  // namespace

int main(int argc, char** argv) {
  for (const fs::path& dir : CorpusConfigurations()) {
    std::string name = dir.parent_path().filename().string() + "/" + dir.filename().string();
    benchmark::RegisterBenchmark(("LoadFx/" + name).c_str(), BM_LoadFx, dir)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("WriteJson/" + name).c_str(), BM_WriteJson, dir)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("LoadJson/" + name).c_str(), BM_LoadJson, dir)
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
