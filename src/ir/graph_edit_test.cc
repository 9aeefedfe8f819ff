#include "ir/graph_edit.h"

#include <gtest/gtest.h>

#include "util/diagnostic.h"

namespace gg::ir {
namespace {

Node Input(const std::string& name) {
  Node n;
  n.kind = NodeKind::kInput;
  n.name = name;
  n.outputs = {NodeOutput{name, std::nullopt}};
  return n;
}

Node Call(const std::string& name, const std::string& op, std::vector<Value> args,
          int32_t line) {
  Node n;
  n.name = name;
  n.op = *OpName::Parse(op);
  n.args = std::move(args);
  n.outputs = {NodeOutput{name, std::nullopt}};
  n.def_line = line;
  return n;
}

// x, y -> a = add(x, y) -> b = cat([a, x]) -> return (b, a)
Graph Small() {
  Graph g;
  g.file = "small.py";
  g.AddNode(Input("x"));
  g.AddNode(Input("y"));
  g.AddNode(Call("a", "aten::add.Tensor", {TensorRef{0, 0}, TensorRef{1, 0}}, 10));
  g.AddNode(Call("b", "aten::cat.default",
                 {Value(Value::List{Value(TensorRef{2, 0}), Value(TensorRef{0, 0})}), 0}, 11));
  g.outputs = {TensorRef{3, 0}, TensorRef{2, 0}};
  g.return_line = 12;
  return g;
}

TEST(GraphEditTest, FindNodeByName) {
  Graph g = Small();
  EXPECT_EQ(FindNode(g, "a"), std::optional<NodeId>(2));
  EXPECT_EQ(FindNode(g, "x"), std::optional<NodeId>(0));
  EXPECT_FALSE(FindNode(g, "zzz"));
}

TEST(GraphEditTest, ReplaceAllUsesReachesListsAndOutputs) {
  Graph g = Small();
  // Every reader of `a` (inside b's list, and the second output) now reads `y`.
  EXPECT_EQ(ReplaceAllUses(&g, TensorRef{2, 0}, TensorRef{1, 0}), 2);
  EXPECT_EQ(g.nodes[3].args[0].as_list()[0].as_tensor(), (TensorRef{1, 0}));
  EXPECT_EQ(g.outputs[1].as_tensor(), (TensorRef{1, 0}));
  EXPECT_EQ(ReplaceAllUses(&g, TensorRef{2, 0}, TensorRef{1, 0}), 0);  // nothing left to replace
}

TEST(GraphEditTest, ReplaceWithALaterValueIsRejected) {
  Graph g = Small();
  // x is read by a (id 2); b (id 3) is defined after a, so a cannot read it.
  try {
    ReplaceAllUses(&g, TensorRef{0, 0}, TensorRef{3, 0});
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "small.py");
    EXPECT_EQ(e.line(), 10);
    EXPECT_NE(e.problem().find("defined later"), std::string::npos) << e.problem();
  }
}

TEST(GraphEditTest, RemoveNodeRenumbersLaterReferences) {
  Graph g = Small();
  EXPECT_THROW(RemoveNode(&g, 2), InputError);  // a is still read by b and returned
  ReplaceAllUses(&g, TensorRef{2, 0}, TensorRef{1, 0});
  RemoveNode(&g, 2);
  ASSERT_EQ(g.nodes.size(), 3u);
  EXPECT_EQ(g.nodes[2].name, "b");
  EXPECT_EQ(g.outputs[0].as_tensor(), (TensorRef{2, 0}));  // b moved from 3 to 2
  EXPECT_EQ(g.Find("b"), std::optional<TensorRef>(TensorRef{2, 0}));
  EXPECT_FALSE(g.Find("a"));
  EXPECT_EQ(g.inputs, (std::vector<NodeId>{0, 1}));
}

TEST(GraphEditTest, InsertNodeShiftsLaterNodes) {
  Graph g = Small();
  // t = neg(x) before a; then b reads t instead of x.
  NodeId t = InsertNode(&g, 2, Call("t", "aten::neg.default", {TensorRef{0, 0}}, 0));
  EXPECT_EQ(t, 2);
  ASSERT_EQ(g.nodes.size(), 5u);
  EXPECT_EQ(g.nodes[3].name, "a");
  EXPECT_EQ(g.nodes[3].args[1].as_tensor(), (TensorRef{1, 0}));    // inputs keep their ids
  EXPECT_EQ(g.nodes[4].args[0].as_list()[0].as_tensor(), (TensorRef{3, 0}));  // a: 2 -> 3
  EXPECT_EQ(g.outputs[0].as_tensor(), (TensorRef{4, 0}));
  EXPECT_EQ(g.Find("t"), std::optional<TensorRef>(TensorRef{2, 0}));
  // Replacing x everywhere would make t read itself: rejected, and nothing changed.
  EXPECT_THROW(ReplaceAllUses(&g, TensorRef{0, 0}, TensorRef{2, 0}), InputError);
  EXPECT_EQ(g.nodes[3].args[0].as_tensor(), (TensorRef{0, 0}));
  // Only the nodes after t: a and b read t, t still reads x.
  EXPECT_EQ(ReplaceAllUses(&g, TensorRef{0, 0}, TensorRef{2, 0}, /*after=*/2), 2);
  EXPECT_EQ(g.nodes[2].args[0].as_tensor(), (TensorRef{0, 0}));
  EXPECT_EQ(g.nodes[3].args[0].as_tensor(), (TensorRef{2, 0}));
  EXPECT_EQ(g.nodes[4].args[0].as_list()[1].as_tensor(), (TensorRef{2, 0}));
}

TEST(GraphEditTest, InsertNodeRejectsForwardReferences) {
  Graph g = Small();
  EXPECT_THROW(InsertNode(&g, 2, Call("t", "aten::neg.default", {TensorRef{2, 0}}, 0)),
               InputError);
  EXPECT_THROW(InsertNode(&g, 9, Call("t", "aten::neg.default", {TensorRef{0, 0}}, 0)),
               InputError);
  EXPECT_EQ(g.nodes.size(), 4u);  // unchanged
}

TEST(GraphEditTest, RenameValue) {
  Graph g = Small();
  RenameValue(&g, TensorRef{2, 0}, "a_renamed");
  EXPECT_EQ(g.nodes[2].name, "a_renamed");
  EXPECT_EQ(g.Find("a_renamed"), std::optional<TensorRef>(TensorRef{2, 0}));
  EXPECT_FALSE(g.Find("a"));
  EXPECT_THROW(RenameValue(&g, TensorRef{2, 0}, "b"), InputError);
  EXPECT_THROW(RenameValue(&g, TensorRef{2, 1}, "c"), InputError);
}

}  // namespace
}  // namespace gg::ir
