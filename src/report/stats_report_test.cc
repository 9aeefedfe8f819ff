#include "report/stats_report.h"

#include <gtest/gtest.h>

namespace gg::report {
namespace {

ir::TensorType Type(const std::string& text) {
  std::string why;
  std::optional<ir::TensorType> type = ir::ParseTensorType(text, &why);
  EXPECT_TRUE(type.has_value()) << why;
  return *type;
}

ir::NodeId AddInput(ir::Graph& graph, const std::string& name) {
  ir::Node node;
  node.kind = ir::NodeKind::kInput;
  node.name = name;
  node.outputs.push_back({name, Type("f32[4, 8]")});
  ir::NodeId id = graph.AddNode(node);
  graph.inputs.push_back(id);
  return id;
}

ir::NodeId AddCall(ir::Graph& graph, const std::string& name, const std::string& op,
                   std::vector<ir::Value> args) {
  ir::Node node;
  node.name = name;
  node.op = *ir::OpName::Parse(op);
  node.args = std::move(args);
  node.outputs.push_back({name, Type("f32[4, 8]")});
  return graph.AddNode(node);
}

// Rank r of a two-rank toy program: two inputs, adds, two all_reduces and a wait each.
ir::Graph ToyRank(int32_t rank) {
  ir::Graph graph;
  graph.name = "Toy";
  graph.rank = rank;
  ir::NodeId x = AddInput(graph, "x");
  ir::NodeId y = AddInput(graph, "y");
  ir::NodeId add = AddCall(graph, "add", "aten::add.Tensor", {ir::TensorRef{x}, ir::TensorRef{y}});
  ir::NodeId add_1 =
      AddCall(graph, "add_1", "aten::add.Tensor", {ir::TensorRef{add}, ir::TensorRef{y}});
  ir::NodeId ar = AddCall(graph, "all_reduce", "_c10d_functional::all_reduce.default",
                          {ir::TensorRef{add_1}, "sum", "tp"});
  ir::NodeId wait = AddCall(graph, "wait_tensor", "_c10d_functional::wait_tensor.default",
                            {ir::TensorRef{ar}});
  ir::NodeId ar_1 = AddCall(graph, "all_reduce_1", "_c10d_functional::all_reduce.default",
                            {ir::TensorRef{wait}, "max", "tp"});
  ir::NodeId wait_1 = AddCall(graph, "wait_tensor_1", "_c10d_functional::wait_tensor.default",
                              {ir::TensorRef{ar_1}});
  ir::NodeId mul = AddCall(graph, "mul", "aten::mul.Tensor",
                           {ir::TensorRef{wait_1}, ir::TensorRef{x}});
  graph.outputs = {ir::TensorRef{mul}, ir::TensorRef{add}};
  return graph;
}

TEST(StatsReportTest, CountsNodesOperatorsAndCollectives) {
  ir::Program program;
  program.ranks = {ToyRank(0), ToyRank(1)};
  program.groups["tp"] = {0, 1};
  ProgramStats stats = ComputeStats(program);
  ASSERT_EQ(stats.ranks.size(), 2u);
  const RankStats& rank1 = stats.ranks[1];
  EXPECT_EQ(rank1.rank, 1);
  EXPECT_EQ(rank1.nodes, 9);
  EXPECT_EQ(rank1.inputs, 2);
  EXPECT_EQ(rank1.constants, 0);
  EXPECT_EQ(rank1.operators, 7);
  EXPECT_EQ(rank1.outputs, 2);
  // Ties in count are broken by name.
  std::vector<std::pair<std::string, int64_t>> expected = {
      {"_c10d_functional::all_reduce.default", 2},
      {"_c10d_functional::wait_tensor.default", 2},
      {"aten::add.Tensor", 2},
      {"aten::mul.Tensor", 1}};
  EXPECT_EQ(rank1.operator_counts, expected);
  ASSERT_EQ(rank1.collectives.size(), 1u);
  EXPECT_EQ(rank1.collectives.at("tp"), (std::map<std::string, int64_t>{{"all_reduce", 2}}));
}

TEST(StatsReportTest, FormatsDeterministicText) {
  ir::Program program;
  program.ranks = {ToyRank(0)};
  program.groups["tp"] = {0};
  std::string text = FormatStats(ComputeStats(program));
  EXPECT_EQ(text,
            "program: 1 rank, 1 process group\n"
            "group 'tp': ranks 0\n"
            "\n"
            "rank 0 (Toy)\n"
            "  nodes: 9 (inputs 2, constants 0, operators 7)\n"
            "  inputs: 2\n"
            "  outputs: 2\n"
            "  collectives:\n"
            "    group 'tp': all_reduce 2\n"
            "  operators: 4 distinct\n"
            "         2  _c10d_functional::all_reduce.default\n"
            "         2  _c10d_functional::wait_tensor.default\n"
            "         2  aten::add.Tensor\n"
            "         1  aten::mul.Tensor\n");
  EXPECT_EQ(text, FormatStats(ComputeStats(program)));
}

}  // namespace
}  // namespace gg::report
