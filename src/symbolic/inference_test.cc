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
