// infer-relations under --memory-budget: its memory estimate and the check that resized graphs
// still carry the candidate layouts (runtime/infer_relations.h).
#include <gtest/gtest.h>

#include "frontend/loader.h"
#include "frontend/memory_estimate.h"
#include "frontend/resize.h"
#include "runtime/infer_relations.h"
#include "util/diagnostic.h"

namespace gg::runtime {
namespace {

std::string Goal(const std::string& name) {
  return std::string(GG_SOURCE_DIR) + "/tests/data/goals/" + name;
}

// A row-parallel matmul: S x[4, 6] @ w[3, 6]^T; D at TP 2 holds x[4, 3] and w[3, 3] (shard(1)).
struct RowParallel {
  ir::Graph s = frontend::LoadGraph(Goal("matmul_rowpar/seq.py"));
  ir::Program d = frontend::LoadProgram({Goal("matmul_rowpar/dist")});
};

TEST(EstimateInferMemory, AddsTheFingerprintsToARunWithoutComparisons) {
  RowParallel c;
  frontend::MemoryEstimate base = frontend::EstimateCheckMemory(c.s, c.d, {});
  frontend::MemoryEstimate infer = EstimateInferMemory(c.s, c.d);
  EXPECT_EQ(infer.inputs, base.inputs);
  EXPECT_GT(infer.s_run, base.s_run);
  EXPECT_GT(infer.d_run, base.d_run);
  EXPECT_EQ(infer.peak, infer.inputs + std::max(infer.s_run, infer.d_run));
  // S's t (f32[6, 3]) and y (f32[4, 3]): 1 + 6 + 3 and 1 + 4 + 3 slices of 8 projections and a
  // sum of squares, twice (S's table and the perturbed run's), and the float64 copy of the
  // largest value fingerprinted (t, 18 elements).
  const uint64_t slice = 9 * sizeof(double);
  EXPECT_EQ(infer.s_run - base.s_run, 2 * (10 + 8) * slice + 18 * sizeof(double));
}

TEST(EstimateInferMemory, SkipsValuesOverTheFingerprintLimitUnlessReturned) {
  RowParallel c;
  InferOptions options;
  options.max_fingerprint_elements = 0;  // only returned values are fingerprinted
  frontend::MemoryEstimate base = frontend::EstimateCheckMemory(c.s, c.d, {});
  frontend::MemoryEstimate infer = EstimateInferMemory(c.s, c.d, options);
  // S returns y (f32[4, 3]) only.
  const uint64_t slice = 9 * sizeof(double);
  EXPECT_EQ(infer.s_run - base.s_run, 2 * 8 * slice + 12 * sizeof(double));
  EXPECT_LT(infer.peak, EstimateInferMemory(c.s, c.d).peak);
}

TEST(CheckResizedLayouts, AcceptsResizesThatKeepEveryCandidate) {
  RowParallel c;
  EXPECT_NO_THROW(CheckResizedLayouts(c.s, c.d, c.s, c.d));
  frontend::ResizeMap batch = frontend::ParseResizeMap("4=2");
  EXPECT_NO_THROW(CheckResizedLayouts(c.s, c.d, frontend::ResizeGraph(c.s, batch),
                                      frontend::ResizeProgram(c.d, batch)));
  // Twice the hidden size: D's shards of 6 still split into 3 equal blocks.
  EXPECT_NO_THROW(CheckResizedLayouts(
      c.s, c.d, frontend::ResizeGraph(c.s, frontend::ParseResizeMap("6=12,3=6")),
      frontend::ResizeProgram(c.d, frontend::ParseResizeMap("3=6"))));
}

TEST(CheckResizedLayouts, RefusesResizesThatLoseACandidate) {
  RowParallel c;
  // x's candidates at the given sizes: shard(1), and 3 equal blocks per rank (D's 3 = 3 x 1).
  // Resized to shards of 2, the blocks no longer divide: that layout could not be tested.
  ir::Graph s = frontend::ResizeGraph(c.s, frontend::ParseResizeMap("6=4,3=2"));
  ir::Program d = frontend::ResizeProgram(c.d, frontend::ParseResizeMap("3=2"));
  try {
    CheckResizedLayouts(c.s, c.d, s, d);
    FAIL() << "a resize losing x's block layout accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("blocks(1, 3 equal) does not fit the resized sizes (its "
                                         "blocks no longer divide)"),
              std::string::npos)
        << e.what();
  }
}

TEST(CheckResizedLayouts, NamesTheInputAndItsLayout) {
  RowParallel c;
  ir::Graph s = frontend::ResizeGraph(c.s, frontend::ParseResizeMap("6=4"));
  try {
    CheckResizedLayouts(c.s, c.d, s, c.d);
    FAIL() << "S x[4, 4] accepted as the concat of D's x[4, 3] pieces";
  } catch (const InputError& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("matmul_rowpar/seq.py"), std::string::npos) << message;
    EXPECT_NE(message.find("input x's candidate layout shard(1) does not fit the resized sizes"),
              std::string::npos)
        << message;
  }
}

}  // namespace
}  // namespace gg::runtime
