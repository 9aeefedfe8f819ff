#include "ir/graph.h"

#include <gtest/gtest.h>

#include "ir/program.h"

namespace gg::ir {
namespace {

TEST(OpNameTest, ParsesBothSpellings) {
  auto a = OpName::Parse("torch.ops.aten.add.Tensor");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->ns, "aten");
  EXPECT_EQ(a->name, "add");
  EXPECT_EQ(a->overload, "Tensor");
  EXPECT_EQ(a->ToString(), "aten::add.Tensor");
  auto b = OpName::Parse("_c10d_functional::all_reduce.default");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->ns, "_c10d_functional");
  auto bare = OpName::Parse("torch.ops.vllm.all_reduce");
  ASSERT_TRUE(bare);
  EXPECT_EQ(bare->overload, "");
  EXPECT_EQ(bare->ToString(), "vllm::all_reduce");
  EXPECT_FALSE(OpName::Parse("add"));
  EXPECT_FALSE(OpName::Parse("aten::"));
  EXPECT_FALSE(OpName::Parse("aten::add.Ten-sor"));
}

TEST(ValueTest, KindsAndAccessors) {
  Value none;
  EXPECT_TRUE(none.is_none());
  Value ints(Value::List{Value(1), Value(int64_t{-2})});
  EXPECT_TRUE(ints.is_int_list());
  EXPECT_EQ(ints.as_int_list(), (std::vector<int64_t>{1, -2}));
  EXPECT_TRUE(Value(7).is_int_list());  // torch's int[] accepts a single int
  EXPECT_DOUBLE_EQ(Value(true).as_double(), 1.0);
  EXPECT_DOUBLE_EQ(Value(3).as_double(), 3.0);
  EXPECT_NE(Value(1), Value(1.0));  // int and float stay distinct (lossless round trips)
  Value nested(Value::List{Value(TensorRef{3, 0}), Value(None{}), Value(TensorRef{5, 1})});
  std::vector<TensorRef> refs;
  nested.CollectTensors(&refs);
  ASSERT_EQ(refs.size(), 2u);
  EXPECT_EQ(refs[1], (TensorRef{5, 1}));
  EXPECT_EQ(Value(DType::kBFloat16).as_dtype(), DType::kBFloat16);
  EXPECT_EQ(Value(Device{"cuda", 0}).as_device().index, 0);
}

Node Input(const std::string& name, TensorType type) {
  Node n;
  n.kind = NodeKind::kInput;
  n.name = name;
  n.outputs = {{name, std::move(type)}};
  return n;
}

TEST(GraphTest, AddFindAndNames) {
  Graph g;
  NodeId x = g.AddNode(Input("x", {DType::kFloat32, {4, 3}}));
  Node split;
  split.name = "split";
  split.op = *OpName::Parse("aten::split_with_sizes.default");
  split.args = {Value(TensorRef{x, 0}), Value(Value::List{Value(1), Value(3)}), Value(1)};
  split.outputs = {{"getitem", TensorType{DType::kFloat32, {4, 1}}},
                   {"", TensorType{DType::kFloat32, {4, 2}}}};
  NodeId s = g.AddNode(split);
  EXPECT_EQ(g.inputs, std::vector<NodeId>{x});
  EXPECT_EQ(g.Find("getitem"), (TensorRef{s, 0}));
  EXPECT_EQ(g.ValueName({s, 1}), "split#1");
  // ValueName's spelling of an unnamed output finds it; named outputs only by their name.
  EXPECT_EQ(g.Find("split#1"), (TensorRef{s, 1}));
  EXPECT_FALSE(g.Find("split#0"));
  EXPECT_FALSE(g.Find("split#7"));
  EXPECT_FALSE(g.Find("split#"));
  EXPECT_EQ(g.type({s, 0}).ToString(), "f32[4, 1]");
  EXPECT_EQ(g.node(s).TensorInputs(), (std::vector<TensorRef>{TensorRef{x, 0}}));
  // Editing names in place and re-indexing keeps lookups true.
  g.nodes[s].outputs[1].name = "getitem_1";
  g.Reindex();
  EXPECT_EQ(g.Find("getitem_1"), (TensorRef{s, 1}));
  EXPECT_EQ(g.inputs, std::vector<NodeId>{x});
}

TEST(GraphTest, KwargsAndSourceLocation) {
  Node n;
  n.kwargs = {{"alpha", Value(2)}, {"dtype", Value(DType::kInt64)}};
  ASSERT_NE(n.Kwarg("alpha"), nullptr);
  EXPECT_EQ(n.Kwarg("alpha")->as_int(), 2);
  EXPECT_EQ(n.Kwarg("beta"), nullptr);
  SourceLocation loc{"megatron/core/layers.py", 260, "forward", "x = f(y)"};
  EXPECT_EQ(loc.ToString(), "megatron/core/layers.py:260 in forward");
  EXPECT_TRUE(SourceLocation{}.empty());
}

TEST(ProgramTest, RanksAndGroups) {
  Program p;
  p.ranks.resize(2);
  p.ranks[1].rank = 1;
  p.groups["tp"] = {0, 1};
  EXPECT_EQ(p.world_size(), 2);
  EXPECT_EQ(p.rank(1).rank, 1);
  EXPECT_EQ(p.groups.at("tp").size(), 2u);
}

}  // namespace
}  // namespace gg::ir
