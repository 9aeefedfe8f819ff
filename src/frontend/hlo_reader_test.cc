#include "frontend/hlo_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "frontend/loader.h"
#include "frontend/node_check.h"
#include "util/diagnostic.h"
#include "util/diagnostic_testutil.h"

namespace gg::frontend {
namespace {

// The node holding `name` (as the reader names it).
const ir::Node& NodeOf(const ir::Graph& g, const std::string& name) {
  std::optional<ir::TensorRef> ref = g.Find(name);
  EXPECT_TRUE(ref.has_value()) << name;
  return g.node(ref->node);
}

const char* kElementwise = R"(HloModule m, entry_computation_layout={(f32[4,8]{1,0})->f32[4,8]{1,0}}

%max_f32 (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %m = f32[] maximum(f32[] %a, f32[] %b)
}

ENTRY %main.9 (Arg_0.1: f32[4,8], Arg_1.2: f32[4,8]) -> (f32[4,8], f32[4], pred[4,8]) {
  %Arg_0.1 = f32[4,8]{1,0} parameter(0), metadata={op_name="x"}
  Arg_1.2 = f32[4,8]{1,0} parameter(1)
  %add.3 = f32[4,8]{1,0} add(f32[4,8]{1,0} %Arg_0.1, f32[4,8]{1,0} %Arg_1.2), metadata={op_type="add" op_name="jit(f)/add" source_file="/src/f.py" source_line=12}
  %e = f32[4,8] exponential(add.3)
  %c = f32[] constant(2.5)
  %bc = f32[4,8]{1,0} broadcast(%c), dimensions={}
  %mul = f32[4,8]{1,0} multiply(%bc, %e)
  %ninf = f32[] constant(-inf)
  %r = f32[4]{0} reduce(f32[4,8]{1,0} %mul, f32[] %ninf), dimensions={1}, to_apply=%max_f32
  %cmp = pred[4,8]{1,0} compare(%mul, %Arg_1.2), direction=GT
  %t = (f32[4,8]{1,0}, /*index=1*/f32[4]{0}) tuple(%mul, %r)
  %g = f32[4]{0} get-tuple-element(%t), index=1
  ROOT %out = (f32[4,8]{1,0}, f32[4]{0}, pred[4,8]{1,0}) tuple(%mul, %g, %cmp)
}
)";

TEST(HloReader, ReadsElementwiseReducersTuplesAndMetadata) {
  HloModule m = ParseHlo(kElementwise, "f.hlo");
  const ir::Graph& g = m.graph;
  EXPECT_EQ(g.name, "m");
  ASSERT_EQ(g.inputs.size(), 2u);
  EXPECT_EQ(g.node(g.inputs[0]).name, "Arg_0_1");  // a name the spec language can write
  EXPECT_EQ(g.node(g.inputs[1]).name, "Arg_1_2");
  const ir::Node& add = NodeOf(g, "add_3");
  EXPECT_EQ(add.op.ToString(), "aten::add.Tensor");
  EXPECT_EQ(add.source.file, "/src/f.py");
  EXPECT_EQ(add.source.line, 12);
  EXPECT_EQ(add.source.code, "jit(f)/add");
  EXPECT_EQ(add.def_line, 12);
  EXPECT_EQ(NodeOf(g, "e").op.ToString(), "aten::exp");
  // c * e with c a broadcast scalar constant: the wrapped-scalar form, the scalar on the right.
  const ir::Node& mul = NodeOf(g, "mul");
  EXPECT_EQ(mul.op.ToString(), "aten::mul.Tensor");
  ASSERT_EQ(mul.args.size(), 2u);
  ASSERT_TRUE(mul.args[1].is_double());
  EXPECT_EQ(mul.args[1].as_double(), 2.5);
  EXPECT_EQ(NodeOf(g, "r").op.ToString(), "aten::amax");
  EXPECT_EQ(NodeOf(g, "cmp").op.ToString(), "aten::gt.Tensor");
  ASSERT_EQ(g.outputs.size(), 3u);
  EXPECT_EQ(g.ValueName(g.outputs[1].as_tensor()), "r");  // through get-tuple-element
  EXPECT_EQ(g.type(g.outputs[2].as_tensor()).ToString(), "b8[4, 8]");
}

TEST(HloReader, ShapesLayoutsDotsAndSlices) {
  const char* text = R"(HloModule s
ENTRY %e {
  %a = bf16[2,3,4]{2,1,0} parameter(0)
  %b = bf16[2,5,4]{2,1,0} parameter(1)
  %d = bf16[2,3,5]{2,1,0} dot(%a, %b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={2}
  %s = bf16[2,2,3]{2,1,0} slice(%d), slice={[0:2], [1:3], [2:5:1]}
  %t = bf16[3,2,2]{2,1,0} transpose(%s), dimensions={2,0,1}
  %r = bf16[6,2] reshape(%t)
  %c = bf16[12,2] concatenate(%r, %r), dimensions={0}
  %f = f32[12,2] convert(%c)
  %m = f32[12,12] dot(%c, %c), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  %o = f32[12,2] custom-call(%f), custom_call_target="Sharding", sharding={devices=[2,1]<=[2]}
  ROOT %k = f32[12,2] custom-call(%o), custom_call_target="__cudnn$norm", sharding={replicated}
}
)";
  HloModule m = ParseHlo(text, "s.hlo");
  const ir::Graph& g = m.graph;
  EXPECT_EQ(NodeOf(g, "d").op.ToString(), "aten::bmm");
  EXPECT_EQ(NodeOf(g, "s").op.ToString(), "aten::slice.Tensor");
  EXPECT_EQ(NodeOf(g, "t").op.ToString(), "aten::permute");
  EXPECT_EQ(NodeOf(g, "r").op.ToString(), "aten::reshape");
  EXPECT_EQ(NodeOf(g, "c").op.ToString(), "aten::cat");
  EXPECT_EQ(NodeOf(g, "f").op.ToString(), "aten::_to_copy");
  // A dot whose result dtype differs from its operands' (f32 from bf16): opaque, typed by HLO.
  const ir::Node& mixed = NodeOf(g, "m");
  EXPECT_TRUE(IsOpaqueNode(mixed));
  EXPECT_EQ(mixed.op.ToString(), "hlo::dot");
  EXPECT_EQ(NodeOf(g, "o").op.ToString(), "aten::alias");  // the Sharding annotation
  const ir::Node& custom = NodeOf(g, "k");
  EXPECT_EQ(custom.op.ToString(), "hlo::custom_call");
  EXPECT_EQ(custom.type().ToString(), "f32[12, 2]");
  ASSERT_NE(custom.Kwarg("custom_call_target"), nullptr);
  EXPECT_EQ(custom.Kwarg("custom_call_target")->as_string(), "\"__cudnn$norm\"");
  EXPECT_EQ(custom.Kwarg("sharding"), nullptr);  // an annotation, not part of the signature
}

const char* kCollectives = R"(HloModule c, num_partitions=4
%sum (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}
ENTRY %e (p: f32[4,8]) -> (f32[4,8], f32[8,8], f32[2,8], s32[]) {
  %p = f32[4,8]{1,0} parameter(0)
  %ar = f32[4,8]{1,0} all-reduce(%p), channel_id=1, replica_groups={{0,1},{2,3}}, use_global_device_ids=true, to_apply=%sum
  %ag = f32[8,8]{1,0} all-gather(%p), channel_id=2, replica_groups=[2,2]<=[2,2]T(1,0), dimensions={0}, use_global_device_ids=true
  %rs = f32[2,8]{1,0} reduce-scatter(%p), channel_id=3, replica_groups=[2,2]<=[4], dimensions={0}, to_apply=%sum
  %pid = s32[] partition-id()
  ROOT %t = (f32[4,8]{1,0}, f32[8,8]{1,0}, f32[2,8]{1,0}, s32[]) tuple(%ar, %ag, %rs, %pid)
}
)";

TEST(HloReader, CollectivesGetTheirRanksGroups) {
  HloModule r1 = ParseHlo(kCollectives, "c.hlo", HloOptions{.rank = 1, .world = 0});
  EXPECT_EQ(r1.world, 4);
  EXPECT_EQ(r1.graph.rank, 1);
  // {{0,1},{2,3}}, the transposed iota {{0,2},{1,3}} and the iota {{0,1},{2,3}}.
  EXPECT_EQ(r1.groups, (GroupMap{{"hlo_ranks_0_1", {0, 1}}, {"hlo_ranks_1_3", {1, 3}}}));
  const ir::Node& ar = NodeOf(r1.graph, "ar");
  EXPECT_EQ(ar.op.ToString(), "_c10d_functional::wait_tensor");
  const ir::Node& start = r1.graph.node(ar.args[0].as_tensor().node);
  EXPECT_EQ(start.op.ToString(), "_c10d_functional::all_reduce");
  EXPECT_EQ(start.args[1].as_string(), "sum");
  EXPECT_EQ(start.args[2].as_string(), "hlo_ranks_0_1");
  const ir::Node& ag = r1.graph.node(NodeOf(r1.graph, "ag").args[0].as_tensor().node);
  EXPECT_EQ(ag.op.ToString(), "_c10d_functional::all_gather_into_tensor");
  EXPECT_EQ(ag.args[2].as_string(), "hlo_ranks_1_3");
  const ir::Node& rs = r1.graph.node(NodeOf(r1.graph, "rs").args[0].as_tensor().node);
  EXPECT_EQ(rs.op.ToString(), "_c10d_functional::reduce_scatter_tensor");
  // partition-id is opaque and differs per rank (never congruent across ranks).
  HloModule r2 = ParseHlo(kCollectives, "c.hlo", HloOptions{.rank = 2, .world = 0});
  EXPECT_EQ(r2.groups, (GroupMap{{"hlo_ranks_0_2", {0, 2}}, {"hlo_ranks_2_3", {2, 3}}}));
  EXPECT_EQ(NodeOf(r2.graph, "pid").Kwarg("rank")->as_int(), 2);
}

TEST(HloReader, CollectivesWhoseGroupsAreNotRanksInOrderAreOpaque) {
  // No channel_id in a partitioned module: groups of replicas (here each device alone), not of
  // the partitions that are the ranks. An all-gather's group out of rank order puts the pieces
  // in another order than the registry's collective.
  const char* text = R"(HloModule m, num_partitions=2
ENTRY %e {
  %p = f32[2]{0} parameter(0)
  %ar = f32[2]{0} all-reduce(%p), replica_groups={}, to_apply=%s
  ROOT %ag = f32[4]{0} all-gather(%ar), channel_id=1, replica_groups={{1,0}}, dimensions={0}
}
%s (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %c = f32[] add(%a, %b)
}
)";
  HloModule m = ParseHlo(text, "o.hlo");
  EXPECT_EQ(NodeOf(m.graph, "ar").op.ToString(), "hlo::all_reduce");
  EXPECT_EQ(NodeOf(m.graph, "ag").op.ToString(), "hlo::all_gather");
  EXPECT_TRUE(IsOpaqueNode(NodeOf(m.graph, "ag")));
}

TEST(HloReader, UnsignedValuesLoadOpaque) {
  // partition-id is u32 in XLA's SPMD output; u32 has no GraphGuard dtype: typed i64, and what
  // reads or gives one stays opaque (its wrap-around arithmetic is not ATen's).
  const char* text = R"(HloModule m, num_partitions=2
ENTRY %e (p: f32[2]) -> (u32[], s32[], f32[2]) {
  %pid = u32[] partition-id()
  %c = u32[] constant(4)
  %m = u32[] multiply(%pid, %c)
  %i = s32[] convert(%m)
  %p = f32[2]{0} parameter(0)
  %n = f32[2]{0} negate(%p)
  ROOT %t = (u32[], s32[], f32[2]{0}) tuple(%m, %i, %n)
}
)";
  HloModule m = ParseHlo(text, "u.hlo", HloOptions{.rank = 1, .world = 0});
  EXPECT_EQ(NodeOf(m.graph, "m").op.ToString(), "hlo::multiply");
  EXPECT_EQ(NodeOf(m.graph, "m").type().ToString(), "i64[]");
  EXPECT_EQ(NodeOf(m.graph, "i").op.ToString(), "hlo::convert");
  EXPECT_EQ(NodeOf(m.graph, "n").op.ToString(), "aten::neg");
  EXPECT_EQ(NodeOf(m.graph, "pid").Kwarg("rank")->as_int(), 1);
}

TEST(HloReader, FusionsAndCallsAreInlined) {
  const char* text = R"(HloModule m
%fused (param_0: f32[4], param_1: f32[4]) -> f32[4] {
  %param_1 = f32[4]{0} parameter(1)
  %param_0 = f32[4]{0} parameter(0)
  %s = f32[4]{0} subtract(%param_0, %param_1)
  ROOT %e = f32[4]{0} exponential(%s), metadata={op_name="jit(f)/exp" source_file="/f.py" source_line=3}
}
%outer (a: f32[4]) -> f32[4] {
  %a = f32[4]{0} parameter(0)
  ROOT %f = f32[4]{0} fusion(%a, %a), kind=kLoop, calls=%fused
}
ENTRY %main (x: f32[4], y: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %y = f32[4]{0} parameter(1)
  %f = f32[4]{0} fusion(f32[4]{0} %x, f32[4]{0} %y), kind=kLoop, calls=%fused
  ROOT %c = f32[4]{0} call(%f), to_apply=%outer
}
)";
  const ir::Graph g = ParseHlo(text, "f.hlo").graph;
  const ir::Node& sub = NodeOf(g, "s");
  EXPECT_EQ(sub.op.ToString(), "aten::sub.Tensor");
  EXPECT_EQ(g.ValueName(sub.args[0].as_tensor()), "x");
  EXPECT_EQ(g.ValueName(sub.args[1].as_tensor()), "y");
  EXPECT_EQ(NodeOf(g, "e").source.line, 3);
  // The call inlines the fusion again: the second copy's names are made unique.
  ASSERT_EQ(g.outputs.size(), 1u);
  const ir::Node& out = g.node(g.outputs[0].as_tensor().node);
  EXPECT_EQ(out.op.ToString(), "aten::exp");
  EXPECT_EQ(out.name, "e_1");
  const char* bad =
      "HloModule m\n%g (p: f32[2]) -> f32[2] {\n  ROOT %p = f32[2] parameter(0)\n}\n"
      "ENTRY %e {\n  %x = f32[3] parameter(0)\n  ROOT %f = f32[3] fusion(%x), "
      "calls=%g\n}\n";
  InputError e = ExpectInputError([&] { ParseHlo(bad, "f.hlo"); });
  EXPECT_EQ(e.line(), 3);
  EXPECT_NE(std::string(e.what()).find("passes f32[3]"), std::string::npos) << e.what();
}

TEST(HloReader, LoaderReadsOneModuleForEveryRank) {
  const std::string dir = std::string(GG_TEST_DATA_DIR) + "/hlo/";
  ir::Program d = LoadProgram({dir + "mlp_tp2.hlo"});
  ASSERT_EQ(d.world_size(), 2);
  EXPECT_EQ(d.rank(1).rank, 1);
  EXPECT_EQ(d.groups.at("hlo_ranks_0_1"), (std::vector<int32_t>{0, 1}));
  ir::Graph s = LoadGraph(dir + "mlp_seq.hlo");
  EXPECT_EQ(s.inputs.size(), 4u);
  // relu(x) = maximum(x, broadcast(0)); the bias broadcast is the ATen add's own.
  EXPECT_EQ(NodeOf(s, "maximum_6").op.ToString(), "aten::relu");
  const ir::Node& add = NodeOf(s, "add_3");
  EXPECT_EQ(s.ValueName(add.args[1].as_tensor()), "b1");
  EXPECT_EQ(s.ValueName(s.outputs[0].as_tensor()), "dot_7");
}

TEST(HloReader, BadInputIsAnInputErrorWithTheLine) {
  struct Case {
    const char* text;
    int line;
    const char* says;
  };
  const Case cases[] = {
      {"HloModule m\nENTRY %e {\n  %p = f32[2] parameter(0)\n  ROOT %a = f32[3] add(%p, %p)\n}\n",
       4, "operands must have the result's shape"},
      {"HloModule m\nENTRY %e {\n  %p = f32[2] parameter(0)\n  ROOT %a = f32[2] negate(%q)\n}\n", 4,
       "is not defined before"},
      {"HloModule m\nENTRY %e {\n  %p = f32[2,3] parameter(0)\n  ROOT %t = f32[2,3] "
       "transpose(%p), dimensions={1,0}\n}\n",
       4, "the HLO shape says f32[2, 3] but"},
      {"HloModule m\nENTRY %e {\n  %p = f32[<=4] parameter(0)\n}\n", 3, "static dimension"},
      {"HloModule m\nENTRY %e {\n  %p = f32[2] parameter(0) /* open\n}\n", 3, "unterminated"},
      {"module m\n", 1, "expected 'HloModule <name>'"},
      {"HloModule m\nENTRY %e {\n  %p = f32[2] parameter(0)\n  ROOT %r = f32[2] all-reduce(%p), "
       "replica_groups={{0,1}}, to_apply=%nope\n}\n",
       4, "not defined"},
      {"HloModule m, num_partitions=2\nENTRY %e {\n  %p = f32[2] parameter(0)\n  ROOT %r = f32[2] "
       "all-gather(%p), channel_id=1, replica_groups={{0,5}}, dimensions={0}\n}\n",
       4, "names rank 5"},
      {"HloModule m\nENTRY %e {\n  %p = f32[2] parameter(1)\n}\n", 3, "without gaps"},
      {"HloModule m\nENTRY %e {\n  %p = f8e5m2[2] parameter(0)\n}\n", 3, "element type 'f8e5m2'"},
  };
  for (const Case& c : cases) {
    InputError e = ExpectInputError([&] { ParseHlo(c.text, "bad.hlo"); });
    EXPECT_EQ(e.file(), "bad.hlo") << c.text;
    EXPECT_EQ(e.line(), c.line) << c.text << "\n" << e.what();
    EXPECT_NE(std::string(e.what()).find(c.says), std::string::npos) << c.text << "\n" << e.what();
  }
}

TEST(HloReader, StrictOpsRejectsOpaqueInstructions) {
  const char* text =
      "HloModule m\nENTRY %e {\n  %p = f32[2] parameter(0)\n  ROOT %s = f32[2] "
      "sort(%p), dimensions={0}, to_apply=%cmp\n}\n";
  EXPECT_TRUE(IsOpaqueNode(NodeOf(ParseHlo(text, "o.hlo").graph, "s")));
  StrictOps strict(true);
  InputError e = ExpectInputError([&] { ParseHlo(text, "o.hlo"); });
  EXPECT_EQ(e.line(), 4);
  EXPECT_NE(std::string(e.what()).find("hlo::sort"), std::string::npos) << e.what();
}

}  // namespace
}  // namespace gg::frontend
