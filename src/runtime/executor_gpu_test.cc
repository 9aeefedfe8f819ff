// GPU tests of the executor (gg_runtime_gpu_tests, ctest label gpu): S and D run on CUDA against
// the same runs on the CPU, and `check` on CUDA against `check` on the CPU. Every test skips with
// the reason when LibTorch's CUDA backend finds no device, so the suite passes (as skipped) on a
// machine without a GPU.
//
// Bound: a float output may differ from the CPU's by summation order only (inputs, random draws
// and kernels' algorithms are the same; cuBLAS runs float32 without TF32 by LibTorch's default):
// max |cuda - cpu| <= kRelBound(dtype) * max(1, max |cpu|), 1e-4 for float32/64 (deep reductions
// of thousands of terms round at ~1e-6 relative) and 5e-2 for bf16/fp16 (a few ulps of the scale:
// one rounding flipped early in a bf16 graph moves later values by whole ulps). Integer and bool
// outputs are equal.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "frontend/loader.h"
#include "frontend/resize.h"
#include "runtime/check.h"
#include "runtime/device.h"
#include "runtime/executor.h"
#include "runtime/input_synthesis.h"
#include "symbolic/relation_spec.h"

namespace gg::runtime {
namespace {

#define GG_SKIP_WITHOUT_CUDA()                                  \
  do {                                                          \
    if (CudaDeviceCount() == 0) GTEST_SKIP() << NoCudaReason(); \
  } while (0)

struct Case {
  std::string name;
  ir::Graph s;
  ir::Program d;
  symbolic::SpecResult spec;
};

Case LoadCase(const std::string& name, const std::string& seq, const std::string& dist,
              const std::string& rel, const std::string& s_map = "",
              const std::string& d_map = "") {
  Case c;
  c.name = name;
  c.s = frontend::LoadGraph(seq);
  c.d = frontend::LoadProgram({dist});
  if (!s_map.empty()) c.s = frontend::ResizeGraph(c.s, frontend::ParseResizeMap(s_map));
  if (!d_map.empty()) c.d = frontend::ResizeProgram(c.d, frontend::ParseResizeMap(d_map));
  c.spec = symbolic::EvaluateSpec(symbolic::RelationSpec::Load(rel), c.s, c.d);
  return c;
}

std::vector<Case> GoalCases() {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(GG_GOALS_DIR)) {
    if (std::filesystem::exists(entry.path() / "spec.rel"))
      names.push_back(entry.path().filename());
  }
  std::sort(names.begin(), names.end());
  std::vector<Case> cases;
  for (const std::string& n : names) {
    std::string dir = std::string(GG_GOALS_DIR) + "/" + n;
    cases.push_back(LoadCase(n, dir + "/seq.py", dir + "/dist", dir + "/spec.rel"));
  }
  return cases;
}

// Qwen2 TP2, one layer, bf16, from the repository's examples at reduced sizes.
Case Qwen2Reduced() {
  std::string ex = std::string(GG_SOURCE_DIR) + "/examples";
  return LoadCase("qwen2_tp2_reduced", ex + "/corpus/qwen2/paral1_layer1/fw.g0.r0.py",
                  ex + "/corpus/qwen2/paral2_layer1", ex + "/qwen2.rel",
                  "32768=256,151936=1024,75968=512", "32768=256,151936=1024,75968=512");
}

double RelBound(at::ScalarType type) {
  return type == at::kBFloat16 || type == at::kHalf ? 5e-2 : 1e-4;
}

// Every output of `cuda` against `cpu`; returns the largest relative error seen.
double ExpectSameOutputs(const std::string& what, const std::vector<at::Tensor>& cpu,
                         const std::vector<at::Tensor>& cuda) {
  double worst = 0;
  EXPECT_EQ(cpu.size(), cuda.size()) << what;
  for (size_t i = 0; i < cpu.size() && i < cuda.size(); ++i) {
    std::string where = what + " output " + std::to_string(i);
    EXPECT_EQ(cpu[i].defined(), cuda[i].defined()) << where;
    if (!cpu[i].defined() || !cuda[i].defined()) continue;
    EXPECT_TRUE(cuda[i].device().is_cuda()) << where;
    EXPECT_EQ(cpu[i].sizes(), cuda[i].sizes()) << where;
    EXPECT_EQ(cpu[i].scalar_type(), cuda[i].scalar_type()) << where;
    if (cpu[i].sizes() != cuda[i].sizes() || cpu[i].scalar_type() != cuda[i].scalar_type()) {
      continue;
    }
    at::Tensor back = cuda[i].cpu();
    if (cpu[i].numel() == 0) continue;
    if (!at::isFloatingType(cpu[i].scalar_type())) {
      EXPECT_TRUE(at::equal(cpu[i], back)) << where;
      continue;
    }
    at::Tensor e = cpu[i].to(at::kDouble), a = back.to(at::kDouble);
    at::Tensor nan = e.isnan();
    EXPECT_TRUE(at::equal(nan, a.isnan())) << where << ": NaNs differ";
    double scale = std::max(1.0, e.masked_fill(nan, 0).abs().max().item<double>());
    double err = (a - e).masked_fill(nan, 0).abs().max().item<double>();
    double rel = err / scale;
    worst = std::max(worst, rel);
    EXPECT_LE(rel, RelBound(cpu[i].scalar_type()))
        << where << ": max |cuda - cpu| " << err << ", scale " << scale;
  }
  return worst;
}

void ExpectCudaRunMatchesCpu(const Case& c) {
  ProgramInputs inputs = SynthesizeInputs(c.s, c.d, c.spec, 0);
  ExecutionOptions cpu;
  cpu.dropout_off = true;
  ExecutionOptions cuda = cpu;
  cuda.device = ResolveDevice("cuda");
  double worst = ExpectSameOutputs(c.name + " S", Execute(c.s, inputs.s, cpu).outputs,
                                   Execute(c.s, inputs.s, cuda).outputs);
  std::vector<ExecutionResult> d_cpu = ExecuteProgram(c.d, inputs.d, cpu);
  std::vector<ExecutionResult> d_cuda = ExecuteProgram(c.d, inputs.d, cuda);
  ASSERT_EQ(d_cpu.size(), d_cuda.size());
  for (size_t r = 0; r < d_cpu.size(); ++r) {
    worst = std::max(worst, ExpectSameOutputs(c.name + " D rank " + std::to_string(r),
                                              d_cpu[r].outputs, d_cuda[r].outputs));
  }
  std::cout << "[ cuda vs cpu ] " << c.name << ": max relative error " << worst << "\n";
}

void ExpectSameVerdicts(const Case& c) {
  CheckOptions cpu;
  CheckOptions cuda;
  cuda.device = ResolveDevice("cuda");
  CheckResult a = RunCheck(c.s, c.d, c.spec, {}, cpu);
  CheckResult b = RunCheck(c.s, c.d, c.spec, {}, cuda);
  EXPECT_EQ(a.device, "cpu");
  EXPECT_EQ(b.device.rfind("cuda:", 0), 0u) << b.device;
  EXPECT_EQ(a.all_hold, b.all_hold) << c.name;
  EXPECT_EQ(a.d_failure.empty(), b.d_failure.empty()) << c.name << ": " << b.d_failure;
  ASSERT_EQ(a.checks.size(), b.checks.size()) << c.name;
  for (size_t i = 0; i < a.checks.size(); ++i) {
    EXPECT_EQ(a.checks[i].holds(), b.checks[i].holds())
        << c.name << " relation " << i << ": cpu '" << a.checks[i].error << "' max abs "
        << a.checks[i].comparison.max_abs_error << ", cuda '" << b.checks[i].error << "' max abs "
        << b.checks[i].comparison.max_abs_error;
  }
  std::cout << "[ check ] " << c.name << ": " << (a.all_hold ? "HOLDS" : "FAILS") << " on both, "
            << a.checks.size() << " relations\n";
}

TEST(ExecutorCuda, GoalCasesMatchTheCpuRun) {
  GG_SKIP_WITHOUT_CUDA();
  for (const Case& c : GoalCases()) ExpectCudaRunMatchesCpu(c);
}

TEST(ExecutorCuda, ReducedQwen2MatchesTheCpuRun) {
  GG_SKIP_WITHOUT_CUDA();
  ExpectCudaRunMatchesCpu(Qwen2Reduced());
}

TEST(ExecutorCuda, ReducedGptMatchesTheCpuRun) {
  GG_SKIP_WITHOUT_CUDA();
  // GG_CORPUS_DIR in the environment first: on a GPU node the corpus may lie elsewhere
  // (scripts/device-check.sh sets it).
  const char* env = std::getenv("GG_CORPUS_DIR");
  std::string corpus = env != nullptr && *env != '\0' ? env : GG_CORPUS_DIR;
  if (!std::filesystem::exists(corpus + "/gpt/paral2_layer1")) {
    GTEST_SKIP() << "corpus not found at " << corpus;
  }
  // The sizes of the CPU check tests (check_test.cc): S and D have their own maps.
  ExpectCudaRunMatchesCpu(LoadCase(
      "gpt_tp2_reduced", corpus + "/gpt/paral1_layer1/fw.g0.r0.py", corpus + "/gpt/paral2_layer1",
      std::string(GG_SOURCE_DIR) + "/examples/gpt.rel", "8=1,12288=1536,192=24,98304=1024",
      "8=1,12288=1536,96=12,6144=768,98304=1024,49152=512"));
}

TEST(CheckCuda, GoalCasesGiveTheCpuVerdicts) {
  GG_SKIP_WITHOUT_CUDA();
  for (const Case& c : GoalCases()) ExpectSameVerdicts(c);
}

TEST(CheckCuda, ReducedQwen2GivesTheCpuVerdicts) {
  GG_SKIP_WITHOUT_CUDA();
  ExpectSameVerdicts(Qwen2Reduced());
}

}  // namespace
}  // namespace gg::runtime
