#include "frontend/auto_resize.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "frontend/loader.h"
#include "symbolic/relation_spec.h"

namespace gg::frontend {
namespace {

std::string Corpus(const std::string& rel) { return std::string(GG_CORPUS_DIR) + "/" + rel; }

struct Gpt {
  ir::Graph s;
  ir::Program d;
  std::optional<symbolic::RelationSpec> spec;
  MemoryEstimator estimate;
  ResizeValidator validate;
};

// The full-size Megatron GPT at TP 2 with the estimate verify's evidence uses (expected outputs).
bool LoadGpt(Gpt* gpt) {
  std::string dir = Corpus("gpt/paral2_layer1");
  if (!std::filesystem::exists(dir)) return false;
  gpt->s = LoadGraph(Corpus("gpt/paral1_layer1/fw.g0.r0.py"));
  gpt->d = LoadProgram({dir});
  gpt->spec = symbolic::RelationSpec::Load(std::string(GG_SOURCE_DIR) + "/examples/gpt.rel");
  const symbolic::RelationSpec& spec = *gpt->spec;
  gpt->estimate = [&spec](const ir::Graph& s, const ir::Program& d) {
    CheckFootprint footprint;
    for (const symbolic::Relation& r : symbolic::EvaluateSpec(spec, s, d).expected_outputs) {
      footprint.compared.push_back(r.s_tensor);
    }
    return EstimateCheckMemory(s, d, footprint);
  };
  gpt->validate = [&spec](const ir::Graph& s, const ir::Program& d) {
    symbolic::EvaluateSpec(spec, s, d);
  };
  return true;
}

TEST(DeriveResizeMap, BatchBringsItsProducts) {
  Gpt gpt;
  if (!LoadGpt(&gpt)) GTEST_SKIP() << "corpus not found";
  // 12288 = 8 x 1536 tokens and 192 = 8 x 24 heads follow the batch in S; in D the
  // sequence-parallel shard 6144 and 96 = 8 x 12 local heads do.
  EXPECT_EQ(ResizeMapText(DeriveResizeMap(gpt.s, {{8, 1}})), "8=1,192=24,12288=1536");
  EXPECT_EQ(ResizeMapText(DeriveProgramResizeMap(gpt.d, {{8, 1}})),
            "8=1,96=12,6144=768,12288=1536");
}

TEST(FitMemoryBudget, ShrinksTheBatchFirstAndSaysSo) {
  Gpt gpt;
  if (!LoadGpt(&gpt)) GTEST_SKIP() << "corpus not found";
  MemoryEstimate full = gpt.estimate(gpt.s, gpt.d);
  AutoResize fit = FitMemoryBudget(gpt.s, gpt.d, full.peak / 2, gpt.estimate, gpt.validate);
  ASSERT_TRUE(fit.needed);
  ASSERT_TRUE(fit.fits) << fit.note;
  EXPECT_EQ(ResizeMapText(fit.chosen), "8=1");
  EXPECT_LE(fit.after.peak, full.peak / 2);
  EXPECT_EQ(fit.after.peak, gpt.estimate(fit.s_graph, fit.d_program).peak);
  EXPECT_NE(fit.note.find("ran at 8=1"), std::string::npos) << fit.note;
  EXPECT_NE(fit.note.find("> budget"), std::string::npos) << fit.note;
  // The resized graphs are those the derived maps give.
  EXPECT_EQ(fit.s_graph.node(fit.s_graph.inputs.back()).type().shape.at(0), ir::Dim(1));

  // Within the budget: nothing changes.
  AutoResize as_is = FitMemoryBudget(gpt.s, gpt.d, full.peak, gpt.estimate, gpt.validate);
  EXPECT_FALSE(as_is.needed);
  EXPECT_TRUE(as_is.fits);
  EXPECT_TRUE(as_is.chosen.empty());
}

TEST(FitMemoryBudget, SaysWhenNoSizesFit) {
  Gpt gpt;
  if (!LoadGpt(&gpt)) GTEST_SKIP() << "corpus not found";
  AutoResize fit = FitMemoryBudget(gpt.s, gpt.d, 1024, gpt.estimate, gpt.validate);
  EXPECT_TRUE(fit.needed);
  EXPECT_FALSE(fit.fits);
  EXPECT_NE(fit.note.find("no resize brings it under"), std::string::npos) << fit.note;
  // Every shard still divides: a vocabulary of 98304 split in 2 keeps at least 2 per rank.
  if (fit.d_map.count(49152)) {
    EXPECT_GE(fit.d_map.at(49152), 2);
  }
}

}  // namespace
}  // namespace gg::frontend

namespace gg::frontend {
namespace {

// The bug benchmark's model has a sequence of 8 and a head dim of 8: shrinking 8 would resize S's
// and D's attention views differently (a wrong program that still type-checks), so it is refused.
TEST(FitMemoryBudget, RefusesAnExtentThatAlsoStandsForAnother) {
  std::string dir =
      std::string(GG_SOURCE_DIR) + "/tests/bugs/missing_rowparallel_allreduce/correct";
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "bug benchmark not found";
  ir::Graph s = LoadGraph(dir + "/seq.json");
  ir::Program d = LoadProgram({dir + "/tp2.json"});
  symbolic::RelationSpec spec = symbolic::RelationSpec::Load(dir + "/spec.rel");
  auto estimate = [&](const ir::Graph& g, const ir::Program& p) {
    return EstimateCheckMemory(g, p, {});
  };
  auto validate = [&](const ir::Graph& g, const ir::Program& p) {
    symbolic::EvaluateSpec(spec, g, p);
  };
  AutoResize fit = FitMemoryBudget(s, d, estimate(s, d).peak - 1, estimate, validate);
  EXPECT_FALSE(fit.fits) << fit.note;
  ASSERT_FALSE(fit.rejected.empty());
  EXPECT_NE(fit.rejected[0].find("8 also stands for another size at 'view_"), std::string::npos)
      << fit.rejected[0];
}

}  // namespace
}  // namespace gg::frontend
