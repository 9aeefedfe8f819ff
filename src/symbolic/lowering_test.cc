// Tests of lowering.h through ReadInputs: the tensors a lowered node reads show whether its table
// entry covered it (an opaque node reads every input; a covered one only what its term uses).
#include "symbolic/lowering.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "frontend/fx_reader.h"

namespace gg::symbolic {
namespace {

// Names of the tensors node `name` of `graph` reads, in reference order.
std::vector<std::string> Reads(const ir::Graph& graph, const std::string& name,
                               const ConstantValues* constants = nullptr) {
  std::optional<ir::TensorRef> value = graph.Find(name);
  if (!value) {
    ADD_FAILURE() << "no value " << name;
    return {};
  }
  std::vector<std::string> out;
  for (const ir::TensorRef& ref : ReadInputs(graph, value->node, constants)) {
    out.push_back(graph.node(ref.node).name);
  }
  return out;
}

// `t[mask] = 0.0` as DTensor's _MaskPartial writes it, with the value from scalar_tensor (how
// scripts/capture writes a 0-dim tensor constant).
constexpr char kScalarTensorValue[] = R"(class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4, 3]", mask: "b8[4]"):
        v: "f32[]" = torch.ops.aten.scalar_tensor.default(0.0, dtype = torch.float32)
        y: "f32[4, 3]" = torch.ops.aten.index_put.default(x, [mask], v)
        return (y,)
)";

// The same write with the value in a tensor constant (how make_fx records it).
constexpr char kConstantValue[] = R"(class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4, 3]", mask: "b8[4]"):
        _tensor_constant0 = self._tensor_constant0
        v: "f32[]" = torch.ops.aten.lift_fresh_copy.default(_tensor_constant0)
        y: "f32[4, 3]" = torch.ops.aten.index_put.default(x, [mask], v)
        return (y,)
)";

TEST(LoweringTest, IndexPutReadsItsValueFromScalarTensor) {
  ir::Graph g = frontend::ParseFx(kScalarTensorValue, "scalar_tensor.py");
  // masked_fill(x, mask, 0.0): the value is a number in the term, not a tensor read
  EXPECT_EQ(Reads(g, "y"), (std::vector<std::string>{"x", "mask"}));
}

TEST(LoweringTest, IndexPutOfAnUnstatedConstantStaysOpaque) {
  ir::Graph g = frontend::ParseFx(kConstantValue, "constant.py");
  EXPECT_EQ(Reads(g, "y"), (std::vector<std::string>{"x", "mask", "v"}));
  ConstantValues stated{{"_tensor_constant0", 0.0}};
  EXPECT_EQ(Reads(g, "y", &stated), (std::vector<std::string>{"x", "mask"}));
}

// A layer norm's backward from the forward's saved statistics: its terms read the gradient, the
// input, mean, rstd and the weight; the bias only shapes grad_bias, so it is not read.
constexpr char kLayerNormBackward[] = R"(class GraphModule(torch.nn.Module):
    def forward(self, g: "f32[4, 3]", x: "f32[4, 3]", mean: "f32[4, 1]", rstd: "f32[4, 1]", w: "f32[3]", b: "f32[3]"):
        native_layer_norm_backward = torch.ops.aten.native_layer_norm_backward.default(g, x, [3], mean, rstd, w, b, [True, True, True])
        getitem: "f32[4, 3]" = native_layer_norm_backward[0]
        getitem_1: "f32[3]" = native_layer_norm_backward[1]
        getitem_2: "f32[3]" = native_layer_norm_backward[2];  native_layer_norm_backward = None
        return (getitem, getitem_1, getitem_2)
)";

TEST(LoweringTest, NativeLayerNormBackwardReadsNoBias) {
  ir::Graph g = frontend::ParseFx(kLayerNormBackward, "layer_norm_backward.py");
  EXPECT_EQ(Reads(g, "getitem"), (std::vector<std::string>{"g", "x", "mean", "rstd", "w"}));
}

// Megatron's cross-entropy backward: index_put(zeros, [arange(n), ids], v, accumulate=True) is a
// one-hot of ids scaled by v (rows distinct: each position written once), reading ids and v only.
constexpr char kOnehotScatter[] = R"(class GraphModule(torch.nn.Module):
    def forward(self, ids: "i64[4]", v: "f32[4]"):
        new_zeros: "f32[4, 6]" = torch.ops.aten.new_zeros.default(v, [4, 6], dtype = torch.float32)
        arange: "i64[4]" = torch.ops.aten.arange.start(0, 4)
        y: "f32[4, 6]" = torch.ops.aten.index_put.default(new_zeros, [arange, ids], v, True)
        return (y,)
)";

TEST(LoweringTest, AccumulatingRowsColsIndexPutIsAOnehot) {
  ir::Graph g = frontend::ParseFx(kOnehotScatter, "onehot_scatter.py");
  EXPECT_EQ(Reads(g, "y"), (std::vector<std::string>{"ids", "v"}));
}

// Random draws relate only under the spec's RNG model: without it a training dropout is opaque and
// unique to its node (two lowerings under different salts differ); with `rng positional` it is
// `mul(scale(x), dropout_mask(x, p))`, the same term wherever it is lowered. A dropout that draws
// nothing (eval mode) is the identity either way.
constexpr char kDropouts[] = R"(class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4, 3]"):
        drop_train = torch.ops.aten.native_dropout.default(x, 0.1, True)
        y: "f32[4, 3]" = drop_train[0]
        drop_eval = torch.ops.aten.native_dropout.default(x, 0.1, False)
        z: "f32[4, 3]" = drop_eval[0]
        return (y, z)
)";

TEST(LoweringTest, DropoutDrawsOnlyUnderAnRngModel) {
  ir::Graph g = frontend::ParseFx(kDropouts, "dropouts.py");
  const TensorLanguage& lang = TensorLanguage::Get();
  LeafTable leaves;
  EGraph egraph(lang.ops());
  const TensorAnalysis& analysis = egraph.AddAnalysis(std::make_unique<TensorAnalysis>(leaves));
  ir::TensorRef x = *g.Find("x");
  TensorLeaf leaf{TensorLeaf::Side::kSeq, 0, x, g.type(x), "x"};
  ClassId x_class = egraph.Add(lang.Tensor(leaves.Intern(leaf)));
  TensorClassFn input = [&](ir::TensorRef) { return x_class; };
  const ir::NodeId train = g.Find("y")->node, eval = g.Find("z")->node;
  auto lower = [&](ir::NodeId id, const std::string& salt, bool rng) {
    return LowerNode(egraph, analysis, g, id, input, salt, nullptr, rng);
  };
  LoweredNode a = lower(train, "S:1", false), b = lower(train, "D0:1", false);
  ASSERT_TRUE(a.outputs[0] && b.outputs[0]);
  EXPECT_TRUE(a.opaque[0]);
  EXPECT_NE(egraph.Find(*a.outputs[0]), egraph.Find(*b.outputs[0]));
  LoweredNode c = lower(train, "S:1", true), d = lower(train, "D0:1", true);
  EXPECT_FALSE(c.opaque[0]);
  EXPECT_EQ(egraph.Find(*c.outputs[0]), egraph.Find(*d.outputs[0]));
  for (bool rng : {false, true}) {
    LoweredNode e = lower(eval, "S:2", rng);
    ASSERT_TRUE(e.outputs[0]);
    EXPECT_EQ(egraph.Find(*e.outputs[0]), egraph.Find(x_class));
  }
}

constexpr char kAttentionAndEmpty[] = R"(class GraphModule(torch.nn.Module):
    def forward(self, q: "f32[1, 4, 3, 8]", k: "f32[1, 2, 5, 8]", v: "f32[1, 2, 5, 8]"):
        attn = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(q, k, v, 0.0, True)
        y: "f32[1, 4, 3, 8]" = attn[0]
        lse: "f32[1, 4, 3]" = attn[1]
        drop = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(q, k, v, 0.1)
        z: "f32[1, 4, 3, 8]" = drop[0]
        e: "f32[3, 4]" = torch.ops.aten.new_empty_strided.default(q, [3, 4], [4, 1])
        return (y, lse, z, e)
)";

// SDPA's output lowers to (sdpa ...) and the CPU kernel's logsumexp to (sdpa_lse ...) over the
// same children; under dropout the output is a draw (opaque, unique to its graph);
// new_empty_strided's values are never trusted: two calls on the same input are different opaque
// classes.
TEST(LoweringTest, SdpaOutputLowersAndUninitializedBuffersAreUnique) {
  ir::Graph g = frontend::ParseFx(kAttentionAndEmpty, "attention.py");
  const TensorLanguage& lang = TensorLanguage::Get();
  LeafTable leaves;
  EGraph egraph(lang.ops());
  const TensorAnalysis& analysis = egraph.AddAnalysis(std::make_unique<TensorAnalysis>(leaves));
  TensorClassFn input = [&](ir::TensorRef ref) {
    TensorLeaf leaf{TensorLeaf::Side::kSeq, 0, ref, g.type(ref), g.ValueName(ref)};
    return egraph.Add(lang.Tensor(leaves.Intern(leaf)));
  };
  auto lower = [&](const char* name, const std::string& salt) {
    return LowerNode(egraph, analysis, g, g.Find(name)->node, input, salt);
  };
  LoweredNode attn = lower("y", "S:1");
  ASSERT_EQ(attn.outputs.size(), 2u);
  EXPECT_FALSE(attn.opaque[0]);
  EXPECT_FALSE(attn.opaque[1]);
  auto node_named = [&](ClassId c, const char* op) -> const ENode* {
    for (const ENode& n : egraph.Nodes(c)) {
      if (lang.ops().Name(n.op) == op) return &n;
    }
    return nullptr;
  };
  const ENode* sdpa = node_named(*attn.outputs[0], "sdpa");
  const ENode* lse = node_named(*attn.outputs[1], "sdpa_lse");
  ASSERT_TRUE(sdpa && lse);
  EXPECT_EQ(sdpa->children, lse->children);
  EXPECT_EQ(analysis[*attn.outputs[0]].type, g.type(*g.Find("y")));
  EXPECT_EQ(analysis[*attn.outputs[1]].type, g.type(*g.Find("lse")));
  LoweredNode drop_s = lower("z", "S:2"), drop_d = lower("z", "D0:2");
  EXPECT_TRUE(drop_s.opaque[0]);
  EXPECT_NE(egraph.Find(*drop_s.outputs[0]), egraph.Find(*drop_d.outputs[0]));
  LoweredNode empty_s = lower("e", "S:3"), empty_d = lower("e", "D0:3");
  EXPECT_TRUE(empty_s.opaque[0]);
  EXPECT_NE(egraph.Find(*empty_s.outputs[0]), egraph.Find(*empty_d.outputs[0]));
}

// Megatron's sinkhorn (unknown to the registry) and aten::nonzero (a data-dependent shape, u0)
// load from their annotations and stay opaque: each reads its whole input, and the same call on
// the same input is the same class (congruence), a different one another class.
constexpr char kUnknownOps[] = R"(class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4, 4]"):
        s: "f32[4, 4]" = torch.ops.megatron.sinkhorn.default(x)
        s2: "f32[4, 4]" = torch.ops.megatron.sinkhorn.default(x)
        n: "i64[u0, 2]" = torch.ops.aten.nonzero.default(x)
        return (s, s2, n)
)";

TEST(LoweringTest, SinkhornAndNonzeroLoadOpaqueAndAreEqualByCongruenceOnly) {
  ir::Graph g = frontend::ParseFx(kUnknownOps, "unknown_ops.py");
  EXPECT_EQ(Reads(g, "s"), (std::vector<std::string>{"x"}));
  EXPECT_EQ(Reads(g, "n"), (std::vector<std::string>{"x"}));
  const TensorLanguage& lang = TensorLanguage::Get();
  LeafTable leaves;
  EGraph egraph(lang.ops());
  const TensorAnalysis& analysis = egraph.AddAnalysis(std::make_unique<TensorAnalysis>(leaves));
  ir::TensorRef x = *g.Find("x");
  TensorLeaf leaf{TensorLeaf::Side::kSeq, 0, x, g.type(x), "x"};
  ClassId x_class = egraph.Add(lang.Tensor(leaves.Intern(leaf)));
  TensorClassFn input = [&](ir::TensorRef) { return x_class; };
  auto lower = [&](const char* name) {
    return LowerNode(egraph, analysis, g, g.Find(name)->node, input, "S");
  };
  LoweredNode s = lower("s"), s2 = lower("s2"), n = lower("n");
  ASSERT_TRUE(s.outputs[0] && s2.outputs[0] && n.outputs[0]);
  EXPECT_TRUE(s.opaque[0] && s2.opaque[0] && n.opaque[0]);
  EXPECT_EQ(egraph.Find(*s.outputs[0]), egraph.Find(*s2.outputs[0]));
  EXPECT_NE(egraph.Find(*s.outputs[0]), egraph.Find(*n.outputs[0]));
}

// One operator, one place: the registry entry says what an operator means; a named lowering it
// gives must exist, and every C++ lowering must be given by some entry (none left orphaned).
TEST(LoweringTest, EveryNamedLoweringExistsAndIsNamedByAnOperator) {
  std::set<std::string> named_by_registry;
  std::vector<std::string> missing;
  for (const ir::OpName& op : ir::OpRegistry::Default().Names()) {
    const ir::OpLowering& lowering = ir::OpRegistry::Default().Find(op)->traits.lowering;
    if (lowering.kind != ir::OpLowering::Kind::kNamed) continue;
    named_by_registry.insert(lowering.name);
    if (!HasNamedLowering(lowering.name)) missing.push_back(op.ToString() + " -> " + lowering.name);
  }
  EXPECT_TRUE(missing.empty()) << "no C++ lowering: " << ::testing::PrintToString(missing);
  std::vector<std::string> orphans;
  for (const std::string& name : NamedLoweringNames()) {
    if (named_by_registry.count(name) == 0) orphans.push_back(name);
  }
  EXPECT_TRUE(orphans.empty()) << "lowerings no operator names: "
                               << ::testing::PrintToString(orphans);
}

// A mirrored operator is an op of the language, typed by the registry's rule for it.
TEST(LoweringTest, EveryMirrorIsALanguageOpTypedByItsOperator) {
  const TensorLanguage& lang = TensorLanguage::Get();
  for (const ir::OpInfo* info : ir::OpRegistry::Default().Mirrors()) {
    SCOPED_TRACE(info->schema.name.ToString());
    std::optional<OpId> op = lang.ops().Find(info->traits.lowering.name);
    ASSERT_TRUE(op.has_value());
    EXPECT_EQ(lang.info(*op).mirror, info);
    EXPECT_EQ(lang.info(*op).pointwise, info->traits.lowering.pointwise);
  }
}

// aten::sin is declared once (ops_elementwise.cc: traits::Pointwise("sin")): it lowers to (sin x),
// reads only its input, and the `{f}` lemma family gives it sin-of-concat and sin-of-slice.
constexpr char kSin[] = R"(class GraphModule(torch.nn.Module):
    def forward(self, x: "i64[4, 3]"):
        y: "f32[4, 3]" = torch.ops.aten.sin.default(x)
        return (y,)
)";

TEST(LoweringTest, APointwiseMirrorLowersAndIsTypedByTheRegistry) {
  ir::Graph g = frontend::ParseFx(kSin, "sin.py");
  EXPECT_FALSE(LowersToRelationOps(g, g.Find("y")->node));
  LeafTable leaves;
  EGraph egraph(TensorLanguage::Get().ops());
  const TensorAnalysis& analysis = egraph.AddAnalysis(std::make_unique<TensorAnalysis>(leaves));
  TensorClassFn leaf_of = [&](ir::TensorRef ref) {
    TensorLeaf leaf{TensorLeaf::Side::kSeq, 0, ref, g.type(ref), g.ValueName(ref)};
    return egraph.Add(TensorLanguage::Get().Tensor(leaves.Intern(leaf)));
  };
  LoweredNode lowered = LowerNode(egraph, analysis, g, g.Find("y")->node, leaf_of, "t");
  ASSERT_TRUE(lowered.outputs[0].has_value());
  EXPECT_FALSE(lowered.opaque[0]);  // the i64 -> f32 rule of UnaryFloat types the term
  EXPECT_EQ(analysis[*lowered.outputs[0]].type->ToString(), "f32[4, 3]");
}

// Collectives of a group of 3, called by its member at position 1.
constexpr char kCollectives[] = R"(class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[6, 2]"):
        ar: "f32[6, 2]" = torch.ops._c10d_functional.all_reduce.default(x, 'avg', '0')
        ag: "f32[18, 2]" = torch.ops._c10d_functional.all_gather_into_tensor.default(x, 3, '0')
        rs: "f32[2, 2]" = torch.ops._c10d_functional.reduce_scatter_tensor.default(x, 'sum', 3, '0')
        bc: "f32[6, 2]" = torch.ops._c10d_functional.broadcast.default(x, 2, '0')
        a2a: "f32[6, 2]" = torch.ops._c10d_functional.all_to_all_single.default(x, [2, 2, 2], [2, 2, 2], '0')
        uneven: "f32[6, 2]" = torch.ops._c10d_functional.all_to_all_single.default(x, [1, 2, 3], [2, 2, 2], '0')
        return (ar, ag, rs, bc, a2a, uneven)
)";

// The one node of `cls` with operator `op`, or nullptr.
const ENode* NodeWithOp(const EGraph& egraph, ClassId cls, OpId op) {
  for (const ENode& n : egraph.Nodes(cls)) {
    if (n.op == op) return &n;
  }
  return nullptr;
}

TEST(LoweringTest, CollectivesLowerOverTheMembersInputs) {
  const TensorLanguage& lang = TensorLanguage::Get();
  ir::Graph g = frontend::ParseFx(kCollectives, "collectives.py");
  EGraph egraph(lang.ops());
  std::vector<ClassId> inputs;
  for (int64_t leaf = 0; leaf < 3; ++leaf) inputs.push_back(egraph.Add(lang.Tensor(leaf)));
  auto lower = [&](const std::string& name) {
    const ir::Node& node = g.node(g.Find(name)->node);
    return LowerCollective(egraph, node, inputs, 1, *node.outputs[0].type);
  };
  auto num = [&](ClassId cls) { return egraph.Nodes(cls)[0].payload; };

  // avg: the sum over ranks scaled by 1/3
  std::optional<ClassId> ar = lower("ar");
  ASSERT_TRUE(ar);
  const ENode* scale = NodeWithOp(egraph, *ar, lang.scale);
  ASSERT_NE(scale, nullptr);
  const ENode* sum = NodeWithOp(egraph, scale->children[0], lang.sumr);
  ASSERT_NE(sum, nullptr);
  EXPECT_EQ(sum->children, inputs);
  EXPECT_DOUBLE_EQ(TensorLanguage::FltValue(egraph.Nodes(scale->children[1])[0].payload), 1.0 / 3);

  // all-gather: concat on dim 0 of every member's input
  std::optional<ClassId> ag = lower("ag");
  ASSERT_TRUE(ag);
  const ENode* cat = NodeWithOp(egraph, *ag, lang.concat);
  ASSERT_NE(cat, nullptr);
  EXPECT_EQ(num(cat->children[0]), 0);
  EXPECT_EQ(std::vector<ClassId>(cat->children.begin() + 1, cat->children.end()), inputs);

  // reduce-scatter: member 1's rows [2, 4) of the sum
  std::optional<ClassId> rs = lower("rs");
  ASSERT_TRUE(rs);
  const ENode* slice = NodeWithOp(egraph, *rs, lang.slice);
  ASSERT_NE(slice, nullptr);
  EXPECT_NE(NodeWithOp(egraph, slice->children[0], lang.sumr), nullptr);
  EXPECT_EQ(num(slice->children[1]), 0);
  EXPECT_EQ(num(slice->children[2]), 2);
  EXPECT_EQ(num(slice->children[3]), 4);

  // broadcast: the source member's input, whoever calls it
  EXPECT_EQ(lower("bc"), std::optional<ClassId>(inputs[2]));

  // all-to-all with equal splits: rows [2, 4) of every member's input, concatenated
  std::optional<ClassId> a2a = lower("a2a");
  ASSERT_TRUE(a2a);
  const ENode* chunks = NodeWithOp(egraph, *a2a, lang.concat);
  ASSERT_NE(chunks, nullptr);
  ASSERT_EQ(chunks->children.size(), 4u);
  for (size_t m = 0; m < 3; ++m) {
    const ENode* chunk = NodeWithOp(egraph, chunks->children[m + 1], lang.slice);
    ASSERT_NE(chunk, nullptr);
    EXPECT_EQ(egraph.Find(chunk->children[0]), egraph.Find(inputs[m]));
    EXPECT_EQ(num(chunk->children[2]), 2);
    EXPECT_EQ(num(chunk->children[3]), 4);
  }
  // uneven splits without the other members' calls (where their chunks start): unlowered
  EXPECT_FALSE(lower("uneven"));
}

// Three members' calls of one uneven all_to_all_single (an MoE dispatch): each member cuts its
// own input by its input_split_sizes; member 1 receives rows [1, 3) of member 0's input, none of
// its own and rows [2, 4) of member 2's.
constexpr char kUnevenAllToAll[] = R"(class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[6, 2]"):
        m0: "f32[6, 2]" = torch.ops._c10d_functional.all_to_all_single.default(x, [1, 3, 2], [1, 2, 3], '0')
        m1: "f32[4, 2]" = torch.ops._c10d_functional.all_to_all_single.default(x, [2, 0, 2], [3, 0, 3], '0')
        m2: "f32[8, 2]" = torch.ops._c10d_functional.all_to_all_single.default(x, [3, 3, 2], [2, 2, 2], '0')
        disagrees: "f32[4, 2]" = torch.ops._c10d_functional.all_to_all_single.default(x, [1, 0, 3], [3, 0, 3], '0')
        return (m0, m1, m2, disagrees)
)";

TEST(LoweringTest, UnevenAllToAllCutsEachMembersInputByItsOwnSplits) {
  const TensorLanguage& lang = TensorLanguage::Get();
  ir::Graph g = frontend::ParseFx(kUnevenAllToAll, "uneven_a2a.py");
  EGraph egraph(lang.ops());
  std::vector<ClassId> inputs;
  for (int64_t leaf = 0; leaf < 3; ++leaf) inputs.push_back(egraph.Add(lang.Tensor(leaf)));
  auto node = [&](const std::string& name) -> const ir::Node& {
    return g.node(g.Find(name)->node);
  };
  auto num = [&](ClassId cls) { return egraph.Nodes(cls)[0].payload; };
  const std::vector<const ir::Node*> members{&node("m0"), &node("m1"), &node("m2")};

  std::optional<ClassId> m1 =
      LowerCollective(egraph, node("m1"), inputs, 1, *node("m1").outputs[0].type, members);
  ASSERT_TRUE(m1);
  const ENode* chunks = NodeWithOp(egraph, *m1, lang.concat);
  ASSERT_NE(chunks, nullptr);
  ASSERT_EQ(chunks->children.size(), 3u);  // the dim, member 0's chunk, member 2's chunk
  const std::vector<std::tuple<size_t, int64_t, int64_t>> want{{0, 1, 3}, {2, 2, 4}};
  for (size_t i = 0; i < want.size(); ++i) {
    const auto& [member, start, end] = want[i];
    const ENode* chunk = NodeWithOp(egraph, chunks->children[i + 1], lang.slice);
    ASSERT_NE(chunk, nullptr);
    EXPECT_EQ(egraph.Find(chunk->children[0]), egraph.Find(inputs[member]));
    EXPECT_EQ(num(chunk->children[2]), start);
    EXPECT_EQ(num(chunk->children[3]), end);
  }
  // member 0 receives 1 row of its own, 3 of member 1's (rows [0, 3)), 2 of member 2's
  std::optional<ClassId> m0 =
      LowerCollective(egraph, node("m0"), inputs, 0, *node("m0").outputs[0].type, members);
  ASSERT_TRUE(m0);
  const ENode* first = NodeWithOp(egraph, *m0, lang.concat);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->children.size(), 4u);

  // a call whose output sizes disagree with what the members send: not lowered
  const std::vector<const ir::Node*> disagreeing{&node("m0"), &node("disagrees"), &node("m2")};
  EXPECT_FALSE(LowerCollective(egraph, node("disagrees"), inputs, 1,
                               *node("disagrees").outputs[0].type, disagreeing));
}

}  // namespace
}  // namespace gg::symbolic
