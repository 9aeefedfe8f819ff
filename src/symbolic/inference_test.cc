#include "symbolic/inference.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "frontend/loader.h"
#include "symbolic/lemma_catalogue.h"

namespace gg::symbolic {
namespace {

namespace fs = std::filesystem;

std::string ReadWord(const fs::path& path) {
  std::ifstream in(path);
  std::string word;
  in >> word;
  return word;
}

std::string Describe(const VerifyResult& result, const ir::Graph& s_graph) {
  std::string out = std::string(VerdictName(result.verdict)) + ": " + result.summary + "\n";
  for (const NodeOutcome& n : result.nodes) {
    out += "  " + s_graph.node(n.s_node).name + ": " + std::string(NodeStatusName(n.status));
    for (const InferredRelation& r : n.relations) out += " | " + r.relation.expr.ToString();
    if (!n.detail.empty()) out += " (" + n.detail + ")";
    out += "\n";
  }
  for (const auto& [name, rels] : result.relations) {
    for (const InferredRelation& r : rels) out += "  " + name + " == " + r.relation.expr.ToString() + "\n";
  }
  return out;
}

// Each directory under tests/data/goals holds seq.py, dist/, spec.rel and `expect` (the verdict).
class GoalTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GoalTest, VerdictMatches) {
  fs::path dir = fs::path(GG_TEST_DATA_DIR) / "goals" / GetParam();
  ir::Graph s_graph = frontend::LoadGraph((dir / "seq.py").string());
  ir::Program d_program = frontend::LoadProgram({(dir / "dist").string()});
  RelationSpec spec = RelationSpec::Load((dir / "spec.rel").string());
  SpecResult relations = EvaluateSpec(spec, s_graph, d_program);
  InferenceOptions options;
  VerifyResult result =
      Verify(s_graph, d_program, relations, LemmaCatalogue::Default().Rules(), options);
  EXPECT_EQ(std::string(VerdictName(result.verdict)), ReadWord(dir / "expect"))
      << Describe(result, s_graph);
  // Determinism: a second run gives the same verdict and the same relations.
  VerifyResult again =
      Verify(s_graph, d_program, relations, LemmaCatalogue::Default().Rules(), options);
  EXPECT_EQ(result.verdict, again.verdict);
  EXPECT_EQ(Describe(result, s_graph), Describe(again, s_graph));
}

std::vector<std::string> GoalCases() {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(fs::path(GG_TEST_DATA_DIR) / "goals")) {
    if (entry.is_directory()) names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

INSTANTIATE_TEST_SUITE_P(HandWritten, GoalTest, ::testing::ValuesIn(GoalCases()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace gg::symbolic

namespace gg::symbolic {
namespace {

// Megatron GPT (tensor + sequence parallel): how far inference gets today. The vocabulary-parallel
// embedding (masked lookup + all_reduce, constants from the spec), sequence-parallel dropout,
// LayerNorm + all_gather, the column-parallel QKV projection with its bias, the batch*heads-merged
// attention (baddbmm / softmax / dropout / bmm, related as batched matmuls over head concats),
// the row-parallel projections with reduce_scatter and the MLP must be related; the vocabulary-
// parallel cross entropy's target mask (bitwise_or, S's own range mask) is the known first failure.
TEST(CorpusProgressTest, GptRelatesTransformerLayersAndCrossEntropy) {
  const std::string corpus = GG_CORPUS_DIR;
  RelationSpec gpt = RelationSpec::Load(std::string(GG_SOURCE_DIR) + "/examples/gpt.rel");
  struct Config {
    std::string s_dir, d_dir;
    int tp;
  };
  for (const Config& c : {Config{"paral1_layer1", "paral2_layer1", 2},
                          Config{"paral1_layer1", "paral4_layer1", 4},
                          Config{"paral1_layer2", "paral2_layer2", 2}}) {
    SCOPED_TRACE(c.d_dir);
    ir::Graph s = frontend::LoadGraph(corpus + "/gpt/" + c.s_dir + "/fw.g0.r0.py");
    ir::Program d = frontend::LoadProgram({corpus + "/gpt/" + c.d_dir});
    SpecResult spec = EvaluateSpec(gpt, s, d);
    InferenceOptions options;  // defaults: the masked lookup is found by iterative deepening
    VerifyResult r = Verify(s, d, spec, LemmaCatalogue::Default().Rules(), options);
    auto first = [&](const std::string& name) -> std::string {
      auto it = r.relations.find(name);
      return it == r.relations.end() || it->second.empty()
                 ? "none"
                 : it->second[0].relation.expr.ToString();
    };
    auto pieces = [&](const std::string& name) {
      std::string out;
      for (int rank = 0; rank < c.tp; ++rank) out += ", " + name + "@" + std::to_string(rank);
      return out + ")";
    };
    // The masked local lookups summed over ranks (what D's all_reduce computes).
    EXPECT_EQ(first("index"), "sum(" + pieces("index_put_1").substr(2)) << Describe(r, s);
    EXPECT_EQ(first("getitem"), "concat(0" + pieces("getitem")) << Describe(r, s);
    EXPECT_EQ(first("getitem_2"), "all_gather_into_tensor@0") << Describe(r, s);
    EXPECT_EQ(first("add_1"), "concat(2" + pieces("add_1")) << Describe(r, s);
    // Attention scores: S's [b*h, s, s] bmm is the merge of each rank's [b, h/W, s, s] view.
    EXPECT_EQ(first("baddbmm"), "reshape(concat(1" + pieces("view_8") + ", [192, 1536, 1536])")
        << Describe(r, s);
    // After the row-parallel projection, reduce_scatter and bias: sequence-parallel pieces.
    EXPECT_EQ(first("add_2"), "concat(0" + pieces("add_2")) << Describe(r, s);
    EXPECT_EQ(first("add_5"), "concat(0" + pieces("add_5")) << Describe(r, s);
    // Cross entropy: S's zero-filled target logit is the sum over ranks of each shard's masked
    // pick (vocab-parallel-pick; what D's all_reduce computes), and the loss relates.
    EXPECT_EQ(first("index_put_1").rfind("sum(", 0), 0u) << first("index_put_1");
    EXPECT_NE(first("div_2"), "none") << Describe(r, s);
    EXPECT_FALSE(r.first_failure.has_value()) << Describe(r, s);
  }
}

}  // namespace
}  // namespace gg::symbolic
