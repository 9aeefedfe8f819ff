#include "frontend/resize.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "frontend/loader.h"
#include "util/diagnostic.h"

namespace gg::frontend {
namespace {

std::string Corpus(const std::string& rel) { return std::string(GG_CORPUS_DIR) + "/" + rel; }

TEST(ResizeMap, ParsesAndPrints) {
  ResizeMap sizes = ParseResizeMap("8=1,12288=1536");
  EXPECT_EQ(sizes.size(), 2u);
  EXPECT_EQ(sizes.at(8), 1);
  EXPECT_EQ(ResizeMapText(sizes), "8=1,12288=1536");
  for (const char* bad : {"", "8", "8=0", "x=1", "8=1,8=2", "8=1,", "-1=2"}) {
    EXPECT_THROW(ParseResizeMap(bad), InputError) << bad;
  }
}

TEST(Resize, GptLayerAtBatchOne) {
  std::string dir = Corpus("gpt/paral2_layer1");
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "corpus not found: " << dir;
  ir::Program program = LoadProgram({dir});
  // 96 is batch x heads (8 x 12) in the attention and 3 x head_dim in the QKV view: the view
  // keeps 96 where the element count says so. 6144 = 8 x 768 is the sequence-parallel shard.
  ir::Program small =
      ResizeProgram(program, ParseResizeMap("8=1,12288=1536,96=12,6144=768,98304=1024,49152=512"));
  ASSERT_EQ(small.ranks.size(), 2u);
  const ir::Graph& g = small.ranks[0];
  // The token ids input becomes [1, 1536]; nothing else about the graph changes.
  bool found = false;
  for (ir::NodeId id : g.inputs) {
    if (g.node(id).type().dtype == ir::DType::kInt64) {
      EXPECT_EQ(g.node(id).type().shape.at(0), ir::Dim(1));
      found = true;
    }
  }
  EXPECT_TRUE(found);
  EXPECT_EQ(g.nodes.size(), program.ranks[0].nodes.size());
  // The vocabulary bound rank 0 compares token ids with is resized with the vocabulary.
  bool bound = false;
  for (const ir::Node& node : g.nodes) {
    if (node.op.ToString() == "aten::ge.Scalar" && node.args.at(1) == ir::Value(int64_t{512})) {
      bound = true;
    }
  }
  EXPECT_TRUE(bound);
}

TEST(Resize, MissingDerivedExtentNamesTheNode) {
  std::string dir = Corpus("gpt/paral2_layer1");
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "corpus not found: " << dir;
  ir::Program program = LoadProgram({dir});
  try {
    ResizeProgram(program, ParseResizeMap("8=1"));  // 12288 = 8 * 1536 left as it was
    FAIL() << "an inconsistent resize was accepted";
  } catch (const InputError& e) {
    EXPECT_GT(e.line(), 0);
    EXPECT_NE(e.problem().find("missing from the map"), std::string::npos) << e.problem();
  }
}

}  // namespace
}  // namespace gg::frontend
