#include "cli/budget_fit.h"

#include <gtest/gtest.h>

#include "cli/command_line.h"
#include "frontend/loader.h"
#include "frontend/memory_estimate.h"
#include "util/diagnostic.h"

namespace gg::cli {
namespace {

// A row-parallel matmul (tests/data/goals): S x[4, 6] @ w[3, 6]^T, D at TP 2.
struct Case {
  ir::Graph s = frontend::LoadGraph(std::string(GG_TEST_DATA_DIR) + "/goals/matmul_rowpar/seq.py");
  ir::Program d =
      frontend::LoadProgram({std::string(GG_TEST_DATA_DIR) + "/goals/matmul_rowpar/dist"});
};

frontend::MemoryEstimate Estimate(const ir::Graph& s, const ir::Program& d) {
  return frontend::EstimateCheckMemory(s, d, {});
}

void AcceptAll(const ir::Graph&, const ir::Program&) {}

std::string InputType(const ir::Graph& graph, size_t index) {
  return graph.node(graph.inputs.at(index)).type().ToString();
}

TEST(FitToMemoryBudget, UnderTheBudgetChangesNothing) {
  Case c;
  const uint64_t peak = Estimate(c.s, c.d).peak;
  std::string s_resize = "given", d_resize;
  for (uint64_t budget : {uint64_t{0}, peak}) {
    EXPECT_EQ(
        FitToMemoryBudget("the run", budget, Estimate, AcceptAll, &c.s, &c.d, &s_resize, &d_resize),
        "");
  }
  EXPECT_EQ(InputType(c.s, 0), "f32[4, 6]");
  EXPECT_EQ(s_resize, "given");
  EXPECT_EQ(d_resize, "");
}

TEST(FitToMemoryBudget, OverTheBudgetResizesAndSaysWhy) {
  Case c;
  const uint64_t peak = Estimate(c.s, c.d).peak;
  std::string s_resize = "9=9", d_resize;
  std::string note =
      FitToMemoryBudget("the run", peak - 1, Estimate, AcceptAll, &c.s, &c.d, &s_resize, &d_resize);
  EXPECT_NE(note.find("> budget"), std::string::npos) << note;
  EXPECT_NE(note.find(": ran at "), std::string::npos) << note;
  EXPECT_LT(Estimate(c.s, c.d).peak, peak);
  EXPECT_NE(InputType(c.s, 0), "f32[4, 6]") << "S was not resized";
  // The maps applied follow the given ones; D's start the text it had (none).
  EXPECT_EQ(s_resize.rfind("9=9 then ", 0), 0u) << s_resize;
  EXPECT_FALSE(d_resize.empty());
  EXPECT_EQ(d_resize.find(" then "), std::string::npos) << d_resize;
}

TEST(FitToMemoryBudget, NoSizesFitIsAUsageErrorNamingTheBudget) {
  Case c;
  std::string s_resize, d_resize;
  try {
    FitToMemoryBudget("the run", 100, Estimate, AcceptAll, &c.s, &c.d, &s_resize, &d_resize);
    FAIL() << "100 bytes fit";
  } catch (const UsageError& e) {
    std::string message = e.what();
    EXPECT_EQ(message.rfind("the run does not fit the memory budget: estimated peak ", 0), 0u)
        << message;
    EXPECT_NE(message.find("> budget 100 B"), std::string::npos) << message;
    EXPECT_NE(message.find("give a larger --memory-budget, or --resize"), std::string::npos)
        << message;
  }
  EXPECT_EQ(InputType(c.s, 0), "f32[4, 6]") << "a refused fit changed S";
  EXPECT_EQ(s_resize, "");
}

TEST(FitToMemoryBudget, ValidatorRefusingEverySizeIsAUsageError) {
  Case c;
  const uint64_t peak = Estimate(c.s, c.d).peak;
  auto refuse = [](const ir::Graph& s, const ir::Program&) {
    throw InputError(s.file, 1, "the layouts no longer fit");
  };
  std::string s_resize, d_resize;
  EXPECT_THROW(
      FitToMemoryBudget("the run", peak - 1, Estimate, refuse, &c.s, &c.d, &s_resize, &d_resize),
      UsageError);
  EXPECT_EQ(InputType(c.s, 0), "f32[4, 6]");
}

}  // namespace
}  // namespace gg::cli
