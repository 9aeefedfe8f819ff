// The FX dump forms of other capture setups (tests/data/forms, docs/graph-format.md section 1):
// pytree signatures, several graph kinds per directory, auto_functionalized_v2, out= variants,
// source frames and untyped constants.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "frontend/fx_reader.h"
#include "frontend/json_format.h"
#include "frontend/loader.h"
#include "util/diagnostic.h"
#include "util/diagnostic_testutil.h"

namespace gg::frontend {
namespace {

const std::string kForms = std::string(GG_TEST_DATA_DIR) + "/forms/";

std::string TypeOf(const ir::Graph& g, const std::string& name) {
  std::optional<ir::TensorRef> ref = g.Find(name);
  if (!ref) return "<no " + name + ">";
  return g.nodes.at(ref->node).outputs.at(ref->output).type->ToString();
}

const ir::Node& NodeOf(const ir::Graph& g, const std::string& name) {
  return g.nodes.at(g.Find(name).value().node);
}

TEST(Forms, JointGraphWithPytreeSignature) {
  ir::Graph g = ReadFxFile(kForms + "joint/joint.py");
  EXPECT_EQ(g.name, "joint");
  std::vector<std::string> inputs;
  for (const ir::Node& n : g.nodes) {
    if (n.kind == ir::NodeKind::kInput) inputs.push_back(n.name);
  }
  EXPECT_EQ(inputs, (std::vector<std::string>{"primals_1", "primals_2", "tangents_1"}));
  EXPECT_EQ(TypeOf(g, "tangents_1"), "f32[2, 4]");
  EXPECT_EQ(NodeOf(g, "primals_1").def_line, 7);  // the flatten line binds the leaves
  EXPECT_EQ(TypeOf(g, "mul"), "f32[2, 4]");
  ASSERT_EQ(g.outputs.size(), 3u);  // tree_unflatten's flat list, None kept
  EXPECT_TRUE(g.outputs[0].is_tensor());
  EXPECT_EQ(g.ValueName(g.outputs[1].as_tensor()), "mul");
  EXPECT_TRUE(g.outputs[2].is_none());
}

TEST(Forms, ExpandedDefWithKwargsAndNestedOutputs) {
  ir::Graph g = ReadFxFile(kForms + "joint/expanded.py");
  EXPECT_EQ(TypeOf(g, "x_1"), "f32[4, 8]");
  EXPECT_EQ(TypeOf(g, "scale_1"), "f32[8]");
  ASSERT_EQ(g.outputs.size(), 1u);
  ASSERT_TRUE(g.outputs[0].is_list());  // [[mul]]: the nesting is kept
  EXPECT_EQ(g.outputs[0].as_list().size(), 1u);
}

TEST(Forms, ModuleLevelForward) {
  ir::Graph g = ReadFxFile(kForms + "joint/function.py");
  EXPECT_EQ(g.name, "forward");
  EXPECT_EQ(TypeOf(g, "add"), "f32[4]");
}

TEST(Forms, UntypedPytreeLeavesAreAnError) {
  InputError e = ExpectInputError([] { ReadFxFile(kForms + "joint/untyped.py"); });
  EXPECT_EQ(e.line(), 4);
  EXPECT_NE(e.problem().find("input 'primals_1'"), std::string::npos) << e.problem();
  EXPECT_NE(e.problem().find("has no type"), std::string::npos) << e.problem();
}

TEST(Forms, PytreeErrors) {
  const std::string head = "class G(torch.nn.Module):\n    def forward(self, primals):\n";
  struct Case {
    std::string body;
    int line;
    const char* phrase;
  } cases[] = {
      // no flatten line at all
      {"        return (primals,)\n", 2, "no type annotation and no '..."},
      {"        a: \"f32[2]\"; b: \"f32[2]\"; \n        a, = "
       "fx_pytree.tree_flatten_spec([primals], "
       "self._in_spec)\n        return (a,)\n",
       3, "type declared for 'b'"},
      {"        a: \"f32[2]\"; \n        a, = fx_pytree.tree_flatten_spec([other], "
       "self._in_spec)\n        return (a,)\n",
       4, "'other' is not a parameter"},
      {"        a: \"f32[2]\"; \n        a, = fx_pytree.tree_flatten_spec([primals], "
       "self._spec)\n        return (a,)\n",
       4, "expected 'self._in_spec'"},
      {"        a: \"f32[2]\"; \n        a, = fx_pytree.tree_flatten_spec([primals], "
       "self._in_spec)\n        return pytree.tree_unflatten([a], self._in_spec)\n",
       5, "expected 'self._out_spec'"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.body);
    InputError e = ExpectInputError([&] { ParseFx(head + c.body, "p.py"); });
    EXPECT_EQ(e.line(), c.line);
    EXPECT_NE(e.problem().find(c.phrase), std::string::npos) << e.problem();
  }
  // A bare declaration in an ordinary (typed) signature is still an error.
  InputError e = ExpectInputError([] {
    ParseFx(
        "class G(torch.nn.Module):\n    def forward(self, x: \"f32[2]\"):\n        y: "
        "\"f32[2]\"\n        return (x,)\n",
        "p.py");
  });
  EXPECT_EQ(e.line(), 3);
  EXPECT_NE(e.problem().find("expected '='"), std::string::npos) << e.problem();
}

TEST(Forms, SeveralKindsPerRankNeedASelection) {
  InputError e = ExpectInputError([] { LoadProgram({kForms + "kinds"}); });
  EXPECT_NE(e.problem().find("several graph kinds for rank 0"), std::string::npos) << e.problem();
  EXPECT_NE(e.problem().find("'bw.g0' (2 files), 'fw.g0' (2 files)"), std::string::npos)
      << e.problem();
  EXPECT_NE(e.problem().find("--graph"), std::string::npos);
  {
    GraphSelection pick("fw.g0");
    ir::Program p = LoadProgram({kForms + "kinds"});
    ASSERT_EQ(p.world_size(), 2);
    EXPECT_TRUE(p.ranks[1].Find("neg").has_value());
  }
  {
    GraphSelection pick("bw.*");  // a glob
    ir::Program p = LoadProgram({kForms + "kinds"});
    ASSERT_EQ(p.world_size(), 2);
    EXPECT_TRUE(p.ranks[0].Find("exp").has_value());
  }
  {
    GraphSelection pick("*.g0");  // matches both kinds: still ambiguous
    InputError again = ExpectInputError([] { LoadProgram({kForms + "kinds"}); });
    EXPECT_NE(again.problem().find("matches several"), std::string::npos) << again.problem();
  }
  {
    GraphSelection pick("both.g0");
    InputError none = ExpectInputError([] { LoadProgram({kForms + "kinds"}); });
    EXPECT_NE(none.problem().find("no graph file matches --graph 'both.g0'"), std::string::npos)
        << none.problem();
  }
  EXPECT_EQ(GraphKindOf("/a/fw.g0.r12.py"), "fw.g0");
  EXPECT_EQ(GraphKindOf("both.g1.r0.json"), "both.g1");
  EXPECT_EQ(GraphKindOf("dist/r3.py"), "");
  EXPECT_EQ(GraphKindOf("seq.py"), "seq");
}

TEST(Forms, AutoFunctionalizedV2OfWholeBasesIsV1) {
  ir::Graph g = ReadFxFile(kForms + "functionalized_v2/whole_bases.py");
  const ir::Node& n = NodeOf(g, "getitem_1");
  EXPECT_EQ(n.op.ToString(), "_C::fused_add_rms_norm.default");
  EXPECT_TRUE(n.functionalized);
  EXPECT_TRUE(n.args.empty());
  // the mutated arguments are the bases, the v2 bookkeeping is gone
  std::vector<std::string> names;
  for (const ir::NamedArg& kw : n.kwargs) names.push_back(kw.name);
  EXPECT_EQ(names, (std::vector<std::string>{"input", "residual", "weight", "epsilon"}));
  EXPECT_EQ(g.ValueName(n.kwargs[0].value.as_tensor()), "clone");
  EXPECT_EQ(g.ValueName(n.kwargs[1].value.as_tensor()), "clone_1");
  ASSERT_EQ(n.outputs.size(), 3u);  // None (void), input, residual
  EXPECT_EQ(n.outputs[2].name, "getitem_2");
}

TEST(Forms, AutoFunctionalizedV2OfAViewIsOpaque) {
  for (const char* file : {"view_base.py", "slice_base.py"}) {
    SCOPED_TRACE(file);
    ir::Graph g = ReadFxFile(kForms + "functionalized_v2/" + file);
    const ir::Node& n = NodeOf(g, "getitem_1");
    EXPECT_EQ(n.op.ToString(), "higher_order::auto_functionalized_v2");
    EXPECT_FALSE(n.functionalized);
    EXPECT_EQ(TypeOf(g, "getitem_1"), "bf16[16, 32]");
  }
}

TEST(Forms, OutVariantsReadAsFunctionalOverloads) {
  ir::Graph g = ReadFxFile(kForms + "out_variant/out.py");
  EXPECT_EQ(NodeOf(g, "exp").op.ToString(), "aten::exp.default");
  EXPECT_EQ(NodeOf(g, "mm").op.ToString(), "aten::mm.default");
  const ir::Node& add = NodeOf(g, "add");
  EXPECT_EQ(add.op.ToString(), "aten::add.Tensor");
  ASSERT_EQ(add.kwargs.size(), 1u);  // alpha; out is gone
  EXPECT_EQ(add.kwargs[0].name, "alpha");
  // mm reads `empty` after exp.out wrote it: exp's result
  EXPECT_EQ(g.ValueName(NodeOf(g, "mm").args[0].as_tensor()), "exp");
  // returning the out tensor returns the written value
  EXPECT_EQ(g.ValueName(g.outputs[3].as_tensor()), "add");
  // no functional overload known: opaque, still the out tensor's new value
  const ir::Node& fancy = NodeOf(g, "fancy");
  EXPECT_EQ(fancy.op.ToString(), "mylib::fancy.out");
  EXPECT_EQ(g.ValueName(g.outputs[4].as_tensor()), "fancy");
}

TEST(Forms, OutVariantIntoAReadTensorIsAnError) {
  InputError e = ExpectInputError([] { ReadFxFile(kForms + "out_variant/aliased.py"); });
  EXPECT_EQ(e.line(), 6);
  EXPECT_NE(e.problem().find("read before"), std::string::npos) << e.problem();
  InputError input = ExpectInputError([] {
    ParseFx(
        "class G(torch.nn.Module):\n    def forward(self, x: \"f32[2]\", y: \"f32[2]\"):\n"
        "        e: \"f32[2]\" = torch.ops.aten.exp.out(x, out = y)\n        return (e,)\n",
        "o.py");
  });
  EXPECT_EQ(input.line(), 3);
  EXPECT_NE(input.problem().find("writes into graph input 'y'"), std::string::npos);
  // Into a view: the viewed tensor (x's storage here) would change too.
  InputError view = ExpectInputError([] {
    ParseFx(
        "class G(torch.nn.Module):\n    def forward(self, x: \"f32[2, 2]\", y: \"f32[4]\"):\n"
        "        v: \"f32[4]\" = torch.ops.aten.view.default(x, [4])\n"
        "        e: \"f32[4]\" = torch.ops.aten.exp.out(y, out = v)\n        return (e, x)\n",
        "o.py");
  });
  EXPECT_EQ(view.line(), 4);
  EXPECT_NE(view.problem().find("may share storage"), std::string::npos) << view.problem();
}

TEST(Forms, SourceIsTheInnermostUserFrame) {
  ir::Graph g = ReadFxFile(kForms + "frames/frames.py");
  EXPECT_EQ(NodeOf(g, "mm").source.file, "/home/me/model.py");  // not torch/nn/modules
  EXPECT_EQ(NodeOf(g, "mm").source.line, 40);
  // only torch frames: the innermost of them
  EXPECT_NE(NodeOf(g, "relu").source.file.find("torch/nn/modules/activation.py"),
            std::string::npos);
  EXPECT_EQ(NodeOf(g, "neg").source.file, "/home/me/layers.py");  // innermost user frame
  EXPECT_EQ(NodeOf(g, "neg").source.function, "outer");
}

TEST(Forms, UntypedConstantReadByAnOperatorIsAnError) {
  InputError e = ExpectInputError([] { LoadProgram({kForms + "constants/untyped.py"}); });
  EXPECT_NE(e.file().find("untyped.py"), std::string::npos);
  EXPECT_EQ(e.line(), 5);
  EXPECT_NE(e.problem().find("_tensor_constant0"), std::string::npos) << e.problem();
}

}  // namespace
}  // namespace gg::frontend

namespace gg::frontend {
namespace {

TEST(Forms, UnbackedSymbolsAndGuards) {
  // As S (LoadGraph): u0 is S's own; the guards are dropped, item is the SymInt it names.
  ir::Graph s = LoadGraph(kForms + "unbacked/seq.py");
  EXPECT_EQ(TypeOf(s, "zeros"), "f32[u0_s, 4]");
  EXPECT_EQ(NodeOf(s, "zeros").args[0],
            ir::Value(ir::Value::List{ir::Value(std::string("u0_s")), ir::Value(int64_t{4})}));
  EXPECT_FALSE(s.Find("item").has_value());  // a symbolic integer, not a node
  EXPECT_FALSE(s.Find("_assert_scalar_default").has_value());
  EXPECT_EQ(s.nodes.size(), 5u);  // x, y, sum_1, zeros, add
  // As D's ranks: every rank's u0 is its own.
  ir::Program d = LoadProgram({kForms + "unbacked/dist"});
  EXPECT_EQ(TypeOf(d.ranks[0], "add"), "f32[u0_r0, 4]");
  EXPECT_EQ(TypeOf(d.ranks[1], "add"), "f32[u0_r1, 4]");
  // Read as written without a suffix (ParseFx's default).
  ir::Graph plain = ReadFxFile(kForms + "unbacked/seq.py");
  EXPECT_EQ(TypeOf(plain, "add"), "f32[u0, 4]");
}

TEST(Forms, SymbolicStatementErrors) {
  const std::string head =
      "class G(torch.nn.Module):\n    def forward(self, x: \"i64[]\"):\n"
      "        item: \"Sym(u0)\" = torch.ops.aten.item.default(x)\n";
  InputError undefined = ExpectInputError([&] {
    ParseFx(head + "        ge: \"Sym(u0 >= 0)\" = item >= zz\n        return (x,)\n", "s.py");
  });
  EXPECT_EQ(undefined.line(), 4);
  EXPECT_NE(undefined.problem().find("undefined name 'zz'"), std::string::npos);
  InputError guard = ExpectInputError([&] {
    ParseFx(head +
                "        a = torch.ops.aten._assert_scalar.default(item, 'm')\n"
                "        n: \"f32[4]\" = torch.ops.aten.neg.default(a)\n        return (n,)\n",
            "s.py");
  });
  EXPECT_EQ(guard.line(), 5);
  EXPECT_NE(guard.problem().find("result of a runtime assertion (line 4)"), std::string::npos)
      << guard.problem();
}

}  // namespace
}  // namespace gg::frontend

namespace gg::frontend {
namespace {

TEST(Forms, ProcessGroupsAreIdentifiedByTheirMembers) {
  // Rank 0 calls DP group {0,2} '1', rank 2 calls it '3'; on ranks 1 and 3 the same names mean
  // {1,3}.
  ir::Program p = LoadProgram({kForms + "groups/per_rank_names.json"});
  EXPECT_EQ(p.groups, (GroupMap{{"ranks[0,2]", {0, 2}}, {"ranks[1,3]", {1, 3}}}));
  for (int r = 0; r < 4; ++r) {
    SCOPED_TRACE(r);
    const ir::Node& n = NodeOf(p.ranks[r], "all_reduce");
    EXPECT_EQ(n.args[2], ir::Value(std::string(r % 2 == 0 ? "ranks[0,2]" : "ranks[1,3]")));
  }
  // The members' collectives are compared as one group's: a different reduce op on rank 2.
  std::string text = ReadTextFile(kForms + "groups/per_rank_names.json");
  const std::string rank2 = "\"rank\": 2";
  size_t at = text.find("\"sum\"", text.find(rank2));
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 5, "\"max\"");
  const std::string path = testing::TempDir() + "/forms_groups_max.json";
  { std::ofstream(path) << text; }
  InputError e = ExpectInputError([&] { LoadProgram({path}); });
  EXPECT_NE(e.problem().find("differs between ranks"), std::string::npos) << e.problem();
  EXPECT_NE(e.problem().find("'ranks[0,2]'"), std::string::npos) << e.problem();
  InputError member = ExpectInputError([] { LoadProgram({kForms + "groups/not_a_member.json"}); });
  EXPECT_NE(member.problem().find("rank 3 is not a member"), std::string::npos);
}

TEST(Forms, ProcessGroupNamesMeaningOneSetAreKept) {
  std::string text = ReadTextFile(kForms + "groups/per_rank_names.json");
  // Name {0,2} 'dp_a' and {1,3} 'dp_b' on every rank.
  for (const char* rank : {"\"rank\": 0", "\"rank\": 1", "\"rank\": 2", "\"rank\": 3"}) {
    size_t b = text.find(rank);
    size_t e = text.find("\"outputs\": [{\"ref\":\"wait_tensor_1\"}]", b);
    std::string part = text.substr(b, e - b);
    const bool even = (rank[8] - '0') % 2 == 0;
    const char* name = even ? "dp_a" : "dp_b";
    for (const char* old : {"\"1\"", "\"3\""}) {
      for (size_t p = part.find(old); p != std::string::npos; p = part.find(old, p + 1)) {
        part.replace(p, 3, std::string("\"") + name + "\"");
      }
    }
    text.replace(b, e - b, part);
  }
  const std::string path = testing::TempDir() + "/forms_groups_named.json";
  { std::ofstream(path) << text; }
  ir::Program p = LoadProgram({path});
  EXPECT_EQ(p.groups, (GroupMap{{"dp_a", {0, 2}}, {"dp_b", {1, 3}}}));
}

}  // namespace
}  // namespace gg::frontend
