// ExecuteRank: one rank of a program run alone with a pluggable collective backend gives what
// ExecuteProgram gives that rank, and the backend sees each call's group, members and input.
#include <gtest/gtest.h>

#include <stdexcept>

#include "runtime/collectives.h"
#include "runtime/executor.h"
#include "util/diagnostic.h"

namespace gg::runtime {
namespace {

using ir::Value;

ir::TensorType F32(std::vector<int64_t> dims) {
  ir::TensorType t{ir::DType::kFloat32, {}};
  for (int64_t d : dims) t.shape.push_back(d);
  return t;
}

ir::Node InputNode(const std::string& name, ir::TensorType type) {
  ir::Node n;
  n.kind = ir::NodeKind::kInput;
  n.name = name;
  n.outputs.push_back({name, type});
  return n;
}

ir::Node OpNode(const std::string& name, const std::string& op, std::vector<Value> args,
                ir::TensorType type, int line) {
  ir::Node n;
  n.name = name;
  n.op = *ir::OpName::Parse(op);
  n.args = std::move(args);
  n.outputs.push_back({name, type});
  n.def_line = line;
  return n;
}

// Rank r of 2: y = wait(all_reduce(x, "max", "g")) * 2; z = wait(all_gather(x, 2, "g")).
ir::Program TwoRanks() {
  ir::Program p;
  for (int r = 0; r < 2; ++r) {
    ir::Graph g;
    g.rank = r;
    g.file = "rank" + std::to_string(r) + ".py";
    Value x = ir::TensorRef{g.AddNode(InputNode("x", F32({2, 3}))), 0};
    Value ar = ir::TensorRef{
        g.AddNode(OpNode("ar", "_c10d_functional::all_reduce.default", {x, "max", "g"},
                         F32({2, 3}), 5)),
        0};
    Value w = ir::TensorRef{
        g.AddNode(OpNode("w", "_c10d_functional::wait_tensor.default", {ar}, F32({2, 3}), 6)), 0};
    Value y = ir::TensorRef{
        g.AddNode(OpNode("y", "aten::mul.Scalar", {w, 2.0}, F32({2, 3}), 7)), 0};
    Value ag = ir::TensorRef{
        g.AddNode(OpNode("ag", "_c10d_functional::all_gather_into_tensor.default",
                         {x, int64_t(2), "g"}, F32({4, 3}), 8)),
        0};
    Value z = ir::TensorRef{
        g.AddNode(OpNode("z", "_c10d_functional::wait_tensor.default", {ag}, F32({4, 3}), 9)), 0};
    g.outputs = {y, z};
    p.ranks.push_back(g);
  }
  p.groups["g"] = {0, 1};
  return p;
}

TEST(ExecuteRank, EachRankAloneMatchesExecuteProgram) {
  ir::Program p = TwoRanks();
  std::vector<GraphInputs> inputs = {{{at::randn({2, 3})}, {}}, {{at::randn({2, 3})}, {}}};
  std::vector<ExecutionResult> together = ExecuteProgram(p, inputs);
  for (int32_t r = 0; r < 2; ++r) {
    std::vector<RankCollective> seen;
    ExecutionOptions options;
    // A stand-in for the other process: the reference collective over the known inputs.
    options.collective_backend = [&](const RankCollective& call) {
      seen.push_back(call);
      CollectiveCall reference{call.kind, call.reduce_op, call.source, {}};
      for (int32_t m : call.members) reference.inputs.push_back(inputs[m].inputs[0]);
      return RunCollective(reference).at(static_cast<size_t>(r));
    };
    ExecutionResult alone = ExecuteRank(p, r, inputs[r], options);
    ASSERT_EQ(alone.outputs.size(), 2u);
    EXPECT_TRUE(at::equal(alone.outputs[0], together[r].outputs[0]));
    EXPECT_TRUE(at::equal(alone.outputs[1], together[r].outputs[1]));
    ASSERT_EQ(seen.size(), 2u);
    EXPECT_EQ(seen[0].kind, ir::CollectiveKind::kAllReduce);
    EXPECT_EQ(seen[0].reduce_op, "max");
    EXPECT_EQ(seen[0].group, "g");
    EXPECT_EQ(seen[0].members, (std::vector<int32_t>{0, 1}));
    EXPECT_EQ(seen[0].rank, r);
    EXPECT_TRUE(at::equal(seen[0].input, inputs[r].inputs[0]));
    EXPECT_EQ(seen[1].kind, ir::CollectiveKind::kAllGather);
  }
}

TEST(ExecuteRank, NeedsABackendAndReportsItsFailureAtTheNode) {
  ir::Program p = TwoRanks();
  GraphInputs in = {{at::ones({2, 3})}, {}};
  EXPECT_THROW(ExecuteRank(p, 0, in, {}), std::invalid_argument);
  ExecutionOptions options;
  options.collective_backend = [](const RankCollective&) -> at::Tensor {
    throw std::runtime_error("peer went away");
  };
  try {
    ExecuteRank(p, 1, in, options);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "rank1.py");
    EXPECT_EQ(e.line(), 5);
    EXPECT_NE(std::string(e.what()).find("peer went away"), std::string::npos);
  }
  EXPECT_THROW(ExecuteRank(p, 2, in, options), InputError);
  // A backend output that contradicts the annotation is caught like any computed value.
  options.collective_backend = [](const RankCollective&) { return at::ones({3, 3}); };
  EXPECT_THROW(ExecuteRank(p, 0, in, options), InputError);
}

}  // namespace
}  // namespace gg::runtime
