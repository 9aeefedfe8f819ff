// The memory estimate (frontend/memory_estimate.h) against what a check really takes: on the GPT
// TP2 corpus graphs at a reduced size, the estimate is an upper bound of the process's resident
// set growth during RunCheck, and not more than kSlack times it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "frontend/loader.h"
#include "frontend/memory_estimate.h"
#include "frontend/resize.h"
#include "runtime/check.h"
#include "symbolic/relation_spec.h"

namespace gg::runtime {
namespace {

// The estimate counts views as copies and every operator's temporary as big as its outputs; the
// allocator reuses freed blocks. Measured at batch 1, vocabulary 1024: 1.10 GiB estimated for
// 671 MiB of growth (1.7x).
constexpr double kSlack = 4.0;

// A field of /proc/self/status in bytes ("VmHWM", "VmRSS"); 0 when unreadable.
uint64_t StatusBytes(const std::string& field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field + ":", 0) != 0) continue;
    std::istringstream fields(line.substr(field.size() + 1));
    uint64_t kb = 0;
    fields >> kb;
    return kb * 1024;
  }
  return 0;
}

// Resets VmHWM to the current RSS (Linux >= 4.0); false when not possible.
bool ResetPeakRss() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
  clear.flush();
  return clear.good();
}

TEST(MemoryEstimate, BoundsTheMeasuredGrowthOfAResizedCorpusCheck) {
  std::string dir = std::string(GG_CORPUS_DIR) + "/gpt/paral2_layer1";
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "corpus not found: " << dir;
  ir::Graph s = frontend::LoadGraph(std::string(GG_CORPUS_DIR) + "/gpt/paral1_layer1/fw.g0.r0.py");
  ir::Program d = frontend::LoadProgram({dir});
  // Batch 1, vocabulary 1024: the derived extents follow (frontend/resize.h).
  s = frontend::ResizeGraph(s, frontend::DeriveResizeMap(s, {{8, 1}, {98304, 1024}}));
  d = frontend::ResizeProgram(
      d, frontend::DeriveProgramResizeMap(d, {{8, 1}, {98304, 1024}, {49152, 512}}));
  symbolic::RelationSpec spec =
      symbolic::RelationSpec::Load(std::string(GG_CORPUS_DIR) + "/../gpt.rel");
  symbolic::SpecResult relations = symbolic::EvaluateSpec(spec, s, d);
  CheckOptions options;
  CheckPlan plan = PlanCheck(s, d, relations, {}, options);
  frontend::CheckFootprint footprint;
  footprint.kept.resize(static_cast<size_t>(d.world_size()));
  for (const auto& [tensor, checks] : plan.pending) footprint.compared.push_back(tensor);
  for (const auto& pass : plan.keep) {
    for (size_t r = 0; r < pass.size(); ++r)
      footprint.kept[r].insert(pass[r].begin(), pass[r].end());
  }
  frontend::MemoryEstimate estimate = frontend::EstimateCheckMemory(s, d, footprint);

  // Warm LibTorch up (its first kernels allocate thread pools and caches once).
  RunCheck(s, d, relations, {}, options);
  if (!ResetPeakRss()) GTEST_SKIP() << "cannot reset VmHWM (/proc/self/clear_refs)";
  uint64_t before = StatusBytes("VmRSS");
  CheckResult result = RunCheck(s, d, relations, {}, options);
  uint64_t peak = StatusBytes("VmHWM");
  ASSERT_GT(before, 0u);
  ASSERT_GE(peak, before);
  EXPECT_TRUE(result.all_hold);
  uint64_t growth = peak - before;
  std::string figures = "estimate " + estimate.ToString() + ", measured growth " +
                        frontend::FormatBytes(growth) + " (RSS before " +
                        frontend::FormatBytes(before) + ")";
  EXPECT_GE(estimate.peak, growth) << figures;
  EXPECT_LE(static_cast<double>(estimate.peak), kSlack * static_cast<double>(growth)) << figures;
  std::cout << figures << "\n";
}

}  // namespace
}  // namespace gg::runtime
