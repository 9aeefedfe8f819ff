#include "frontend/hlo_reader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "frontend/loader.h"
#include "frontend/node_check.h"
#include "symbolic/egraph.h"
#include "symbolic/lowering.h"
#include "symbolic/tensor_lang.h"
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
  // partition-id is the rank, a constant of each rank's graph.
  HloModule r2 = ParseHlo(kCollectives, "c.hlo", HloOptions{.rank = 2, .world = 0});
  EXPECT_EQ(r2.groups, (GroupMap{{"hlo_ranks_0_2", {0, 2}}, {"hlo_ranks_2_3", {2, 3}}}));
  const ir::Node& pid = NodeOf(r2.graph, "pid");
  EXPECT_EQ(pid.op.ToString(), "aten::scalar_tensor");
  EXPECT_EQ(pid.args[0].as_int(), 2);
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
  // u32 has no GraphGuard dtype: typed i64, and what reads or gives an unknown one stays opaque
  // (its wrap-around arithmetic is not ATen's). partition-id (u32 in XLA's SPMD output) is the
  // rank, and arithmetic on known values that stays in range is folded to its value.
  const char* text = R"(HloModule m, num_partitions=2
ENTRY %e (p: f32[2], q: u32[]) -> (u32[], s32[], f32[2], u32[]) {
  %pid = u32[] partition-id()
  %c = u32[] constant(4)
  %m = u32[] multiply(%pid, %c)
  %i = s32[] convert(%m)
  %p = f32[2]{0} parameter(0)
  %n = f32[2]{0} negate(%p)
  %q = u32[] parameter(1)
  %mq = u32[] multiply(%q, %c)
  ROOT %t = (u32[], s32[], f32[2]{0}, u32[]) tuple(%m, %i, %n, %mq)
}
)";
  HloModule m = ParseHlo(text, "u.hlo", HloOptions{.rank = 1, .world = 0});
  EXPECT_EQ(NodeOf(m.graph, "mq").op.ToString(), "hlo::multiply");
  EXPECT_EQ(NodeOf(m.graph, "mq").type().ToString(), "i64[]");
  EXPECT_EQ(NodeOf(m.graph, "m").op.ToString(), "aten::scalar_tensor");
  EXPECT_EQ(NodeOf(m.graph, "m").args[0].as_int(), 4);  // rank 1 x 4
  EXPECT_EQ(NodeOf(m.graph, "i").args[0].as_int(), 4);
  EXPECT_EQ(NodeOf(m.graph, "i").type().ToString(), "i32[]");
  EXPECT_EQ(NodeOf(m.graph, "n").op.ToString(), "aten::neg");
  EXPECT_EQ(NodeOf(m.graph, "pid").args[0].as_int(), 1);
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

// What jax 0.10 prints (Lowered.as_text(debug_info=True) and the SPMD partitioner's dump): the
// stack-frame tables before the computations, metadata pointing into them, Shardy attributes
// and annotations, the mesh form of replica_groups.
const char* kJaxStyle =
    R"(HloModule jit_f, entry_computation_layout={(f32[4,8]{1,0})->f32[4,8]{1,0}}, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["tp"=2]>}}, num_partitions=4

FileNames
1 "/usr/lib/runpy.py"
2 "/src/model.py"

FunctionNames
1 "<module>"
2 "f"

FileLocations
1 {file_name_id=1 function_name_id=1 line=88 end_line=88 column=4 end_column=27}
2 {file_name_id=2 function_name_id=2 line=17 end_line=17 column=8 end_column=37}

StackFrames
1 {file_location_id=1 parent_frame_id=1}
2 {file_location_id=2 parent_frame_id=1}

%add.clone (x.3: f32[], y.1: f32[]) -> f32[] {
  %x.3 = f32[] parameter(0)
  %y.1 = f32[] parameter(1)
  ROOT %add.9 = f32[] add(%x.3, %y.1)
}

ENTRY %main.0_spmd (param: f32[4,8]) -> f32[4,8] {
  %param = f32[4,8]{1,0} parameter(0), sharding={replicated}, frontend_attributes={xla.sdy.sharding="#sdy.sharding<@mesh, [{}, {\"tp\"}]>"}, metadata={op_name="params['w']"}
  %neg = f32[4,8]{1,0} negate(%param), metadata={op_name="jit(f)/neg" stack_frame_id=2}
  %ann = f32[4,8]{1,0} custom-call(%neg), custom_call_target="xla.sdy.FuncResultSharding", custom_call_has_side_effect=true
  %rows = f32[4,8]{1,0} all-reduce(%ann), channel_id=1, replica_groups=mesh['a'=2,'b'=2] {'b'}, use_global_device_ids=true, to_apply=%add.clone
  %cols = f32[4,8]{1,0} all-reduce(%rows), channel_id=2, replica_groups=mesh['a'=2,'b'=2] {'a'}, use_global_device_ids=true, to_apply=%add.clone
  %both = f32[4,8]{1,0} all-reduce(%cols), channel_id=3, replica_groups=mesh['a'=2,'b'=2] {'b','a'}, use_global_device_ids=true, to_apply=%add.clone
  ROOT %one = f32[4,8]{1,0} all-reduce(%both), channel_id=4, replica_groups={{0},{1},{2},{3}}, use_global_device_ids=true, to_apply=%add.clone
}
)";

// The wait_tensor's collective's group.
std::string GroupOfCollective(const ir::Graph& g, const std::string& name) {
  const ir::Node& start = g.node(NodeOf(g, name).args[0].as_tensor().node);
  return start.args[2].as_string();
}

TEST(HloReader, ReadsJaxStackFramesShardyAndMeshGroups) {
  HloModule m = ParseHlo(kJaxStyle, "j.hlo", HloOptions{.rank = 2, .world = 0});
  const ir::Graph& g = m.graph;
  ASSERT_EQ(g.inputs.size(), 1u);
  // jax's argument path is the input's FQN (specs name inputs by it); the name stays the HLO's.
  EXPECT_EQ(g.node(g.inputs[0]).name, "param");
  EXPECT_EQ(g.node(g.inputs[0]).fqn, "params['w']");
  // stack_frame_id=2: frame 2 -> location 2 -> /src/model.py line 17.
  const ir::Node& neg = NodeOf(g, "neg");
  EXPECT_EQ(neg.source.file, "/src/model.py");
  EXPECT_EQ(neg.source.line, 17);
  EXPECT_EQ(neg.source.code, "jit(f)/neg");
  EXPECT_EQ(NodeOf(g, "ann").op.ToString(), "aten::alias");  // Shardy's result annotation
  // Devices row-major over mesh [a=2, b=2]: {'b'} varies b (rank 2 = a1 b0 is with 3), {'a'}
  // varies a (2 with 0), {'b','a'} every device.
  EXPECT_EQ(GroupOfCollective(g, "rows"), "hlo_ranks_2_3");
  EXPECT_EQ(GroupOfCollective(g, "cols"), "hlo_ranks_0_2");
  EXPECT_EQ(GroupOfCollective(g, "both"), "hlo_ranks_0_1_2_3");
  // A sum over groups of one device (psum over an axis of size 1) is its operand.
  const ir::Node& one = NodeOf(g, "one");
  EXPECT_EQ(one.op.ToString(), "aten::alias");
  EXPECT_EQ(g.ValueName(one.args[0].as_tensor()), "both");
  EXPECT_EQ(m.groups.count("hlo_ranks_2"), 0u);
}

TEST(HloReader, MeshGroupsOrderMembersByTheNamedAxes) {
  // {'b','a'} lists b's coordinate first: rank order within the group is b-major, so an
  // all-gather over it is not in rank order (opaque) while a sum is order-free.
  const char* text = R"(HloModule g, num_partitions=4
ENTRY %e {
  %p = f32[2,8]{1,0} parameter(0)
  %in_order = f32[8,8]{1,0} all-gather(%p), channel_id=1, replica_groups=mesh['a'=2,'b'=2] {'a','b'}, dimensions={0}, use_global_device_ids=true
  ROOT %swapped = f32[8,8]{1,0} all-gather(%p), channel_id=2, replica_groups=mesh['a'=2,'b'=2] {'b','a'}, dimensions={0}, use_global_device_ids=true
}
)";
  HloModule m = ParseHlo(text, "g.hlo", HloOptions{.rank = 1, .world = 0});
  EXPECT_EQ(NodeOf(m.graph, "in_order").op.ToString(), "_c10d_functional::wait_tensor");
  EXPECT_EQ(GroupOfCollective(m.graph, "in_order"), "hlo_ranks_0_1_2_3");
  EXPECT_TRUE(IsOpaqueNode(NodeOf(m.graph, "swapped")));
}

// How XLA's SPMD partitioner cuts a replicated value for a device (the pattern of a jax module
// on 4 devices): a table of offsets indexed by the u32 partition-id, then a dynamic-slice.
const char* kPartitionSlice = R"(HloModule jit_f, num_partitions=4
ENTRY %main.0_spmd (param: f32[8,16]) -> f32[2,16] {
  %param = f32[8,16]{1,0} parameter(0), sharding={replicated}
  %constant = s32[4]{0} constant({0, 2, 4, 6})
  %partition-id = u32[] partition-id()
  %dynamic-slice = s32[1]{0} dynamic-slice(%constant, %partition-id), dynamic_slice_sizes={1}
  %reshape = s32[] reshape(%dynamic-slice)
  %constant.1 = s32[] constant(0)
  %big = s32[] constant(100)
  %rows = f32[2,16]{1,0} dynamic-slice(%param, %reshape, %constant.1), dynamic_slice_sizes={2,16}
  %clamped = f32[2,16]{1,0} dynamic-slice(%param, %big, %constant.1), dynamic_slice_sizes={2,16}
  %upd = f32[8,16]{1,0} dynamic-update-slice(%param, %rows, %reshape, %constant.1)
  %off = s32[] add(%reshape, %reshape)
  %dyn = f32[2,16]{1,0} dynamic-slice(%param, %off, %off), dynamic_slice_sizes={2,16}
  ROOT %t = (f32[2,16]{1,0}, f32[2,16]{1,0}, f32[8,16]{1,0}, f32[2,16]{1,0}) tuple(%rows, %clamped, %upd, %dyn)
}
)";

TEST(HloReader, PartitionIdAndConstantOffsetsFoldToSlices) {
  for (int32_t rank : {0, 3}) {
    HloModule m = ParseHlo(kPartitionSlice, "p.hlo", HloOptions{.rank = rank, .world = 0});
    const ir::Graph& g = m.graph;
    // rows: x[2r : 2r + 2] on dim 0, the table read at the rank.
    const ir::Node& rows = NodeOf(g, "rows");
    ASSERT_EQ(rows.op.ToString(), "aten::slice.Tensor") << rank;
    EXPECT_EQ(rows.args[1].as_int(), 0);
    EXPECT_EQ(rows.args[2].as_int(), 2 * rank);
    EXPECT_EQ(rows.args[3].as_int(), 2 * rank + 2);
    // XLA clamps a start past the end so the slice fits: rows 6..8.
    const ir::Node& clamped = NodeOf(g, "clamped");
    EXPECT_EQ(clamped.args[2].as_int(), 6);
    EXPECT_EQ(clamped.args[3].as_int(), 8);
    // The update over whole rows: cat(x[:2r], rows, x[2r+2:]), its empty ends left out.
    const ir::Node& upd = NodeOf(g, "upd");
    EXPECT_EQ(upd.op.ToString(), "aten::cat");
    EXPECT_EQ(upd.args[0].as_list().size(), 2u) << rank;
    EXPECT_EQ(g.type(g.outputs[2].as_tensor()).ToString(), "f32[8, 16]");
    // Offsets 4r on both dims, clamped: min(4r, 6) rows; the columns (whole) stay uncut.
    const ir::Node& dyn = NodeOf(g, "dyn");
    EXPECT_EQ(dyn.op.ToString(), "aten::slice.Tensor");
    EXPECT_EQ(dyn.args[1].as_int(), 0);
    EXPECT_EQ(dyn.args[2].as_int(), std::min(4 * rank, 6));
  }
}

TEST(HloReader, OffsetsFromDataStayOpaque) {
  const char* text = R"(HloModule d
ENTRY %e {
  %p = f32[8]{0} parameter(0)
  %i = s32[] parameter(1)
  ROOT %s = f32[2]{0} dynamic-slice(%p, %i), dynamic_slice_sizes={2}
}
)";
  EXPECT_TRUE(IsOpaqueNode(NodeOf(ParseHlo(text, "d.hlo").graph, "s")));
  // Unsigned arithmetic that would wrap is not folded: the value stays opaque.
  const char* wrap = R"(HloModule w
ENTRY %e {
  %a = u32[] constant(1)
  %b = u32[] constant(2)
  ROOT %s = u32[] subtract(%a, %b)
}
)";
  EXPECT_TRUE(IsOpaqueNode(NodeOf(ParseHlo(wrap, "w.hlo").graph, "s")));
}

TEST(HloReader, GeneralDotsAreBmmOfPermutedOperands) {
  // Batch dims {0,2} and contracting {1} on the lhs; rhs [4(contract),2,3(batch)...]: a bmm of
  // [6, 5, 4] by [6, 4, 7] reshaped to HLO's [2, 3, 5, 7].
  const char* text = R"(HloModule g
ENTRY %e {
  %a = f32[2,4,3,5]{3,2,1,0} parameter(0)
  %b = f32[4,2,7,3]{3,2,1,0} parameter(1)
  %d = f32[2,3,5,7]{3,2,1,0} dot(%a, %b), lhs_batch_dims={0,2}, rhs_batch_dims={1,3}, lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %m = f32[2,4]{1,0} parameter(2)
  ROOT %two = f32[] dot(%m, %m), lhs_contracting_dims={0,1}, rhs_contracting_dims={0,1}
}
)";
  HloModule m = ParseHlo(text, "g.hlo");
  const ir::Graph& g = m.graph;
  const ir::Node& d = NodeOf(g, "d");
  EXPECT_EQ(d.op.ToString(), "aten::reshape");
  EXPECT_EQ(d.type().ToString(), "f32[2, 3, 5, 7]");
  const ir::Node& bmm = g.node(d.args[0].as_tensor().node);
  EXPECT_EQ(bmm.op.ToString(), "aten::bmm");
  EXPECT_EQ(bmm.type().ToString(), "f32[6, 5, 7]");
  const ir::Node& lhs3 = g.node(bmm.args[0].as_tensor().node);
  EXPECT_EQ(lhs3.type().ToString(), "f32[6, 5, 4]");
  const ir::Node& lhs_perm = g.node(lhs3.args[0].as_tensor().node);
  EXPECT_EQ(lhs_perm.op.ToString(), "aten::permute");
  EXPECT_EQ(lhs_perm.args[1].as_list().size(), 4u);
  EXPECT_EQ(lhs_perm.args[1].as_list()[3].as_int(), 1);  // the contracting dim last
  // Two contracting dims, no free ones: a [1,1,8] x [1,8,1] bmm, reshaped to a scalar.
  EXPECT_EQ(NodeOf(g, "two").type().ToString(), "f32[]");
  EXPECT_FALSE(IsOpaqueNode(NodeOf(g, "two")));
}

TEST(HloReader, IotaIsAnArangeAndIntegerOrderComparesNegateStrictOnes) {
  // The causal mask jnp.tril builds: iota along each dim, compare GE.
  const char* text = R"(HloModule t
ENTRY %e {
  %rows = s32[4,4]{1,0} iota(), iota_dimension=0
  %cols = s32[4,4]{1,0} iota(), iota_dimension=1
  %ge = pred[4,4]{1,0} compare(%rows, %cols), direction=GE
  %le = pred[4,4]{1,0} compare(%rows, %cols), direction=LE
  %x = f32[4,4]{1,0} parameter(0)
  %y = f32[4,4]{1,0} parameter(1)
  %fge = pred[4,4]{1,0} compare(%x, %y), direction=GE
  ROOT %line = f32[4]{0} iota(), iota_dimension=0
}
)";
  HloModule m = ParseHlo(text, "t.hlo");
  const ir::Graph& g = m.graph;
  const ir::Node& cols = NodeOf(g, "cols");
  EXPECT_EQ(cols.op.ToString(), "aten::expand");
  const ir::Node& shaped = g.node(cols.args[0].as_tensor().node);
  EXPECT_EQ(shaped.type().ToString(), "i32[1, 4]");
  EXPECT_EQ(g.node(shaped.args[0].as_tensor().node).op.ToString(), "aten::arange");
  EXPECT_EQ(NodeOf(g, "line").op.ToString(), "aten::arange");
  EXPECT_EQ(NodeOf(g, "line").type().ToString(), "f32[4]");
  // a >= b is not(a < b) on integers; on floats (NaN) it stays opaque.
  const ir::Node& ge = NodeOf(g, "ge");
  EXPECT_EQ(ge.op.ToString(), "aten::bitwise_not");
  EXPECT_EQ(g.node(ge.args[0].as_tensor().node).op.ToString(), "aten::lt.Tensor");
  EXPECT_EQ(g.node(NodeOf(g, "le").args[0].as_tensor().node).op.ToString(), "aten::gt.Tensor");
  EXPECT_TRUE(IsOpaqueNode(NodeOf(g, "fge")));
}

TEST(HloReader, MaxWithMinusInfinityIsItsOperand) {
  // jax's max reductions start from -inf (softmax's stabilizer): maximum(x, -inf) is x, NaN
  // included (XLA's maximum propagates NaN); minimum(x, +inf) alike; maximum(x, 1) is not.
  const char* text = R"(HloModule m
ENTRY %e {
  %x = f32[4]{0} parameter(0)
  %ninf = f32[] constant(-inf)
  %pinf = f32[] constant(inf)
  %one = f32[] constant(1)
  %bn = f32[4]{0} broadcast(%ninf), dimensions={}
  %bp = f32[4]{0} broadcast(%pinf), dimensions={}
  %b1 = f32[4]{0} broadcast(%one), dimensions={}
  %mx = f32[4]{0} maximum(%bn, %x)
  %mn = f32[4]{0} minimum(%x, %bp)
  ROOT %m1 = f32[4]{0} maximum(%x, %b1)
}
)";
  HloModule m = ParseHlo(text, "m.hlo");
  const ir::Graph& g = m.graph;
  EXPECT_EQ(NodeOf(g, "mx").op.ToString(), "aten::alias");
  EXPECT_EQ(g.ValueName(NodeOf(g, "mx").args[0].as_tensor()), "x");
  EXPECT_EQ(NodeOf(g, "mn").op.ToString(), "aten::alias");
  EXPECT_EQ(NodeOf(g, "m1").op.ToString(), "aten::maximum");
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
      {"HloModule m, num_partitions=2\nENTRY %e {\n  %p = f32[2] parameter(0)\n  ROOT %r = f32[2] "
       "all-reduce(%p), channel_id=1, replica_groups=mesh['x'=2] {'y'}, to_apply=%s\n}\n",
       4, "'y' is not a mesh axis"},
      {"HloModule m\nFileNames\n1 \"/a.py\"\nFileLocations\n1 x\n", 5, "expected '{' after row 1"},
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
      "HloModule m\n%cmp (a: f32[], b: f32[]) -> pred[] {\n  %a = f32[] parameter(0)\n"
      "  %b = f32[] parameter(1)\n  ROOT %lt = pred[] compare(%a, %b), direction=LT\n}\n"
      "ENTRY %e {\n  %p = f32[2] parameter(0)\n  ROOT %s = f32[2] "
      "sort(%p), dimensions={0}, to_apply=%cmp\n}\n";
  EXPECT_TRUE(IsOpaqueNode(NodeOf(ParseHlo(text, "o.hlo").graph, "s")));
  StrictOps strict(true);
  InputError e = ExpectInputError([&] { ParseHlo(text, "o.hlo"); });
  EXPECT_EQ(e.line(), 9);
  EXPECT_NE(std::string(e.what()).find("hlo::sort"), std::string::npos) << e.what();
}

// The graph node an argument refers to.
const ir::Node& ArgNode(const ir::Graph& g, const ir::Value& arg) {
  return g.node(arg.as_tensor().node);
}

// Whether the lowering gives every output of `name` a term of the tensor language (no opaque
// fallback): then the lemma catalogue reasons through it.
bool LowersWithoutOpaque(const ir::Graph& g, const std::string& name) {
  using namespace symbolic;  // NOLINT
  LeafTable leaves;
  EGraph egraph(TensorLanguage::Get().ops());
  const TensorAnalysis& analysis = egraph.AddAnalysis(std::make_unique<TensorAnalysis>(leaves));
  TensorClassFn leaf_of = [&](ir::TensorRef ref) {
    TensorLeaf leaf{TensorLeaf::Side::kSeq, 0, ref, g.type(ref), g.ValueName(ref)};
    return egraph.Add(TensorLanguage::Get().Tensor(leaves.Intern(leaf)));
  };
  LoweredNode lowered = LowerNode(egraph, analysis, g, g.Find(name)->node, leaf_of, "t");
  for (size_t k = 0; k < lowered.outputs.size(); ++k) {
    if (!lowered.outputs[k] || lowered.opaque[k]) return false;
  }
  return true;
}

const char* kPad = R"(HloModule p
ENTRY %e {
  %x = f32[4,6]{1,0} parameter(0)
  %v = f32[] parameter(1)
  %zero = f32[] constant(0)
  %both = f32[7,6]{1,0} pad(%x, %zero), padding=1_2x0_0
  %cut = f32[5,8]{1,0} pad(f32[4,6]{1,0} %x, f32[] %zero), padding=0_1x3_-1
  %dyn = f32[4,7]{1,0} pad(%x, %v), padding=0_0x0_1
  %gone = f32[2,6]{1,0} pad(%x, %v), padding=-5_3x0_0
  %same = f32[4,6]{1,0} pad(%x, %zero), padding=0_0x0_0
  %inner = f32[7,6]{1,0} pad(%x, %zero), padding=0_0_1x0_0
  ROOT %t = (f32[7,6], f32[5,8], f32[4,7], f32[2,6], f32[4,6], f32[7,6]) tuple(%both, %cut, %dyn, %gone, %same, %inner)
}
)";

TEST(HloReader, PadIsACatOfFillsAroundTheCutOperand) {
  const ir::Graph g = ParseHlo(kPad, "p.hlo").graph;
  // low 1, high 2 on dim 0: cat(full([1, 6], 0), x, full([2, 6], 0)) on dim 0.
  const ir::Node& both = NodeOf(g, "both");
  EXPECT_EQ(both.op.ToString(), "aten::cat");
  EXPECT_EQ(both.type().ToString(), "f32[7, 6]");
  EXPECT_EQ(both.args[1].as_int(), 0);
  ASSERT_EQ(both.args[0].as_list().size(), 3u);
  const ir::Node& low = ArgNode(g, both.args[0].as_list()[0]);
  EXPECT_EQ(low.op.ToString(), "aten::full");
  EXPECT_EQ(low.type().ToString(), "f32[1, 6]");
  EXPECT_EQ(low.args[1].as_double(), 0.0);
  EXPECT_EQ(g.ValueName(both.args[0].as_list()[1].as_tensor()), "x");
  EXPECT_EQ(ArgNode(g, both.args[0].as_list()[2]).type().ToString(), "f32[2, 6]");
  // high -1 on dim 1 cuts the last column first: x[:, 0:5], then padded on dims 0 and 1.
  const ir::Node& cut = NodeOf(g, "cut");
  EXPECT_EQ(cut.op.ToString(), "aten::cat");
  EXPECT_EQ(cut.type().ToString(), "f32[5, 8]");
  EXPECT_EQ(cut.args[1].as_int(), 1);
  ASSERT_EQ(cut.args[0].as_list().size(), 2u);  // no high padding left on dim 1
  EXPECT_EQ(ArgNode(g, cut.args[0].as_list()[0]).type().ToString(), "f32[5, 3]");
  const ir::Node& rows = ArgNode(g, cut.args[0].as_list()[1]);
  EXPECT_EQ(rows.op.ToString(), "aten::cat");
  EXPECT_EQ(rows.args[1].as_int(), 0);
  const ir::Node& slice = ArgNode(g, rows.args[0].as_list()[0]);
  EXPECT_EQ(slice.op.ToString(), "aten::slice.Tensor");
  EXPECT_EQ(slice.args[1].as_int(), 1);
  EXPECT_EQ(slice.args[2].as_int(), 0);
  EXPECT_EQ(slice.args[3].as_int(), 5);
  EXPECT_EQ(g.ValueName(slice.args[0].as_tensor()), "x");
  // A padding value computed from data: aten::expand of it.
  const ir::Node& dyn = NodeOf(g, "dyn");
  EXPECT_EQ(dyn.op.ToString(), "aten::cat");
  const ir::Node& fill = ArgNode(g, dyn.args[0].as_list()[1]);
  EXPECT_EQ(fill.op.ToString(), "aten::expand");
  EXPECT_EQ(g.ValueName(fill.args[0].as_tensor()), "v");
  EXPECT_EQ(fill.type().ToString(), "f32[4, 1]");
  // low -5 removes all 4 rows and one of the 3 high ones: only padding is left.
  const ir::Node& gone = NodeOf(g, "gone");
  EXPECT_EQ(gone.op.ToString(), "aten::expand");
  EXPECT_EQ(gone.type().ToString(), "f32[2, 6]");
  EXPECT_EQ(NodeOf(g, "same").op.ToString(), "aten::alias");
  // Interior padding: opaque, typed from the result.
  const ir::Node& inner = NodeOf(g, "inner");
  EXPECT_TRUE(IsOpaqueNode(inner));
  EXPECT_EQ(inner.op.ToString(), "hlo::pad");
  EXPECT_EQ(inner.type().ToString(), "f32[7, 6]");
  // Every node of the mapped pads has a lowering (the lemmas see through them).
  for (const char* name : {"both", "both_low0", "cut", "cut_cut1", "cut_pad0", "dyn", "gone"}) {
    EXPECT_TRUE(LowersWithoutOpaque(g, name)) << name;
  }
}

TEST(HloReader, MalformedPaddingIsAnErrorAtItsLine) {
  struct Case {
    const char* pad;
    const char* says;
  };
  const Case cases[] = {
      {"f32[4,6] pad(%x, %z), padding=1_2_3_4x0_0", "more than three numbers"},
      {"f32[5,6] pad(%x, %z), padding=1_0", "has 1 entries for an operand of rank 2"},
      {"f32[5,6] pad(%x, %z), padding=a_0x0_0", "'a' is not an integer"},
      {"f32[5,6] pad(%x, %z), padding=1x0_0", "needs low_high"},
      {"f32[4,6] pad(%x, %z)", "needs padding="},
      {"f32[5,6] pad(%x, %z), padding=1_1x0_0", "the padding gives f32[6, 6]"},
      {"f32[0,6] pad(%x, %z), padding=-3_-2x0_0", "negative size -1"},
      {"f32[5,6] pad(%x, %x), padding=1_0x0_0", "must be a scalar"},
  };
  for (const Case& c : cases) {
    const std::string text = std::string(
                                 "HloModule m\nENTRY %e {\n  %x = f32[4,6] parameter(0)\n"
                                 "  %z = f32[] constant(0)\n  ROOT %p = ") +
                             c.pad + "\n}\n";
    InputError e = ExpectInputError([&] { ParseHlo(text, "pad.hlo"); });
    EXPECT_EQ(e.line(), 5) << c.pad << "\n" << e.what();
    EXPECT_NE(std::string(e.what()).find(c.says), std::string::npos) << c.pad << "\n" << e.what();
  }
}

const char* kAllToAll = R"(HloModule a, num_partitions=4
ENTRY %e {
  %p = f32[4,6]{1,0} parameter(0)
  %rows = f32[4,6]{1,0} all-to-all(f32[4,6]{1,0} %p), channel_id=1, replica_groups={{0,1},{2,3}}, dimensions={0}
  %cols = f32[4,6]{1,0} all-to-all(%p), channel_id=2, replica_groups=[2,2]<=[2,2]T(1,0), dimensions={1}
  %swapped = f32[4,6]{1,0} all-to-all(%p), channel_id=3, replica_groups={{1,0},{3,2}}, dimensions={0}
  %one = f32[4,6]{1,0} all-to-all(%p), channel_id=4, replica_groups={{0},{1},{2},{3}}, dimensions={1}
  %q = f32[4,6]{1,0} negate(%p)
  %tup = (f32[4,6]{1,0}, f32[4,6]{1,0}) all-to-all(%p, %q), channel_id=5, replica_groups={{0,1},{2,3}}
  %a = f32[4,6]{1,0} get-tuple-element(%tup), index=1
  %s = f32[] parameter(1)
  %scalars = (f32[], f32[]) all-to-all(%s, %s), channel_id=6, replica_groups={{0,1},{2,3}}
  %b = f32[] get-tuple-element(%scalars), index=0
  %r = f32[6,4]{1,0} parameter(2)
  %mixed = (f32[4,6]{1,0}, f32[6,4]{1,0}) all-to-all(%p, %r), channel_id=7, replica_groups={{0,1},{2,3}}
  %c = f32[6,4]{1,0} get-tuple-element(%mixed), index=1
  ROOT %t = (f32[4,6]{1,0}, f32[4,6]{1,0}, f32[4,6]{1,0}, f32[4,6]{1,0}, f32[4,6]{1,0}, f32[], f32[6,4]{1,0}) tuple(%rows, %cols, %swapped, %one, %a, %b, %c)
}
)";

TEST(HloReader, AllToAllIsAllToAllSingleAlongItsDimension) {
  HloModule m = ParseHlo(kAllToAll, "a.hlo", HloOptions{.rank = 1, .world = 0});
  const ir::Graph& g = m.graph;
  // dimensions={0}, a group in rank order: all_to_all_single with equal splits, then its wait.
  const ir::Node& rows = NodeOf(g, "rows");
  EXPECT_EQ(rows.op.ToString(), "_c10d_functional::wait_tensor");
  EXPECT_EQ(rows.type().ToString(), "f32[4, 6]");
  const ir::Node& exchange = ArgNode(g, rows.args[0]);
  EXPECT_EQ(exchange.op.ToString(), "_c10d_functional::all_to_all_single");
  ASSERT_EQ(exchange.args.size(), 4u);
  EXPECT_EQ(g.ValueName(exchange.args[0].as_tensor()), "p");
  EXPECT_TRUE(exchange.args[1].is_none());  // equal splits
  EXPECT_TRUE(exchange.args[2].is_none());
  EXPECT_EQ(exchange.args[3].as_string(), "hlo_ranks_0_1");
  // dimensions={1} (iota groups {{0,2},{1,3}}): swapped with dim 0, exchanged, swapped back.
  const ir::Node& cols = NodeOf(g, "cols");
  EXPECT_EQ(cols.op.ToString(), "aten::transpose.int");
  EXPECT_EQ(cols.args[1].as_int(), 0);
  EXPECT_EQ(cols.args[2].as_int(), 1);
  EXPECT_EQ(cols.type().ToString(), "f32[4, 6]");
  const ir::Node& wait = ArgNode(g, cols.args[0]);
  EXPECT_EQ(wait.op.ToString(), "_c10d_functional::wait_tensor");
  EXPECT_EQ(wait.type().ToString(), "f32[6, 4]");
  const ir::Node& moved = ArgNode(g, wait.args[0]);
  EXPECT_EQ(moved.op.ToString(), "_c10d_functional::all_to_all_single");
  EXPECT_EQ(moved.args[3].as_string(), "hlo_ranks_1_3");
  EXPECT_EQ(ArgNode(g, moved.args[0]).op.ToString(), "aten::transpose.int");
  // A group out of rank order sends the blocks elsewhere: opaque, and never congruent across
  // ranks (its rank is part of its signature). Groups of one: the operand. Tuples: opaque.
  const ir::Node& swapped = NodeOf(g, "swapped");
  EXPECT_EQ(swapped.op.ToString(), "hlo::all_to_all");
  EXPECT_EQ(swapped.type().ToString(), "f32[4, 6]");
  ASSERT_NE(swapped.Kwarg("rank"), nullptr);
  EXPECT_EQ(swapped.Kwarg("rank")->as_int(), 1);
  EXPECT_EQ(NodeOf(g, "one").op.ToString(), "aten::alias");
  // The tuple form (compiled modules): member i's operand j becomes element i at member j. The
  // operands are concatenated on dim 0, exchanged, and element 1 is the second block.
  const ir::Node& element = g.node(g.outputs[4].as_tensor().node);
  EXPECT_EQ(element.op.ToString(), "aten::slice.Tensor");
  EXPECT_EQ(element.type().ToString(), "f32[4, 6]");
  EXPECT_EQ(element.args[2].as_int(), 4);
  EXPECT_EQ(element.args[3].as_int(), 8);
  const ir::Node& arrived = ArgNode(g, element.args[0]);
  EXPECT_EQ(arrived.op.ToString(), "_c10d_functional::wait_tensor");
  const ir::Node& sent = ArgNode(g, arrived.args[0]);
  EXPECT_EQ(sent.op.ToString(), "_c10d_functional::all_to_all_single");
  EXPECT_EQ(sent.args[3].as_string(), "hlo_ranks_0_1");
  const ir::Node& joined = ArgNode(g, sent.args[0]);
  EXPECT_EQ(joined.op.ToString(), "aten::cat");
  EXPECT_EQ(joined.type().ToString(), "f32[8, 6]");
  ASSERT_EQ(joined.args[0].as_list().size(), 2u);
  EXPECT_EQ(g.ValueName(joined.args[0].as_list()[0].as_tensor()), "p");
  EXPECT_EQ(g.ValueName(joined.args[0].as_list()[1].as_tensor()), "q");
  // Scalars travel as 1-row blocks; operands of different shapes stay opaque.
  const ir::Node& scalar = g.node(g.outputs[5].as_tensor().node);
  EXPECT_EQ(scalar.op.ToString(), "aten::reshape");
  EXPECT_EQ(scalar.type().ToString(), "f32[]");
  const ir::Node& mixed = g.node(g.outputs[6].as_tensor().node);
  EXPECT_EQ(mixed.op.ToString(), "hlo::all_to_all");
  EXPECT_EQ(mixed.outputs.size(), 2u);
  EXPECT_EQ(mixed.Kwarg("rank")->as_int(), 1);
  EXPECT_EQ(m.groups.at("hlo_ranks_1_3"), (std::vector<int32_t>{1, 3}));
}

// all-gather and reduce-scatter on a dimension other than 0 (jax's sequence-sharded activations):
// the dimension swapped with dim 0, the collective along dim 0, its wait, swapped back.
TEST(HloReader, GatherAndScatterOnAnotherDimSwapItWithDimZero) {
  const char* text = R"(HloModule g, num_partitions=2

ENTRY %main (p: f32[2,3,4]) -> (f32[2,6,4], f32[2,3,2]) {
  %p = f32[2,3,4]{2,1,0} parameter(0)
  %gathered = f32[2,6,4]{2,1,0} all-gather(%p), channel_id=1, replica_groups=mesh['x'=2] {'x'}, dimensions={1}, use_global_device_ids=true
  %scattered = f32[2,3,2]{2,1,0} reduce-scatter(%p), channel_id=2, replica_groups={{0,1}}, dimensions={2}, use_global_device_ids=true, to_apply=%add
  ROOT %t = (f32[2,6,4]{2,1,0}, f32[2,3,2]{2,1,0}) tuple(%gathered, %scattered)
}

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
)";
  HloModule m = ParseHlo(text, "g.hlo", HloOptions{.rank = 1, .world = 0});
  const ir::Graph& g = m.graph;
  struct Expect {
    const char* name;
    int64_t dim;
    const char* moved;
    const char* collective;
    const char* result;
  };
  for (const Expect& e : {Expect{"gathered", 1, "f32[6, 2, 4]",
                                 "_c10d_functional::all_gather_into_tensor", "f32[2, 6, 4]"},
                          Expect{"scattered", 2, "f32[2, 3, 2]",
                                 "_c10d_functional::reduce_scatter_tensor", "f32[2, 3, 2]"}}) {
    SCOPED_TRACE(e.name);
    const ir::Node& back = NodeOf(g, e.name);
    EXPECT_EQ(back.op.ToString(), "aten::transpose.int");
    EXPECT_EQ(back.args[1].as_int(), 0);
    EXPECT_EQ(back.args[2].as_int(), e.dim);
    EXPECT_EQ(back.type().ToString(), e.result);
    const ir::Node& wait = ArgNode(g, back.args[0]);
    EXPECT_EQ(wait.op.ToString(), "_c10d_functional::wait_tensor");
    const ir::Node& collective = ArgNode(g, wait.args[0]);
    EXPECT_EQ(collective.op.ToString(), e.collective);
    EXPECT_EQ(collective.type().ToString(), e.moved);
    const ir::Node& swap = ArgNode(g, collective.args[0]);
    EXPECT_EQ(swap.op.ToString(), "aten::transpose.int");
    EXPECT_EQ(swap.args[2].as_int(), e.dim);
    EXPECT_EQ(g.ValueName(swap.args[0].as_tensor()), "p");
  }
}

TEST(HloReader, MalformedAllToAllIsAnErrorAtItsLine) {
  struct Case {
    const char* a2a;
    const char* says;
  };
  const Case cases[] = {
      {"f32[4,6] all-to-all(%x), channel_id=1, replica_groups={{0,1}}, dimensions={2}",
       "dimensions= must name one dimension of the operand (0..1)"},
      {"f32[4,6] all-to-all(%x), channel_id=1, replica_groups={{0,1}}, dimensions={0,1}",
       "dimensions= must name one dimension"},
      {"f32[4,6] all-to-all(%x), channel_id=1, replica_groups={{0,1}}",
       "needs the attribute "
       "dimensions"},
      {"f32[4,5] all-to-all(%y), channel_id=1, replica_groups={{0,1}}, dimensions={1}",
       "dimension 1 (5) does not split into the group's 2 members"},
      {"f32[6,4] all-to-all(%x), channel_id=1, replica_groups={{0,1}}, dimensions={0}",
       "keeps its operand's shape"},
      {"(f32[4,6], f32[4,6], f32[4,6]) all-to-all(%x, %x, %x), channel_id=1, "
       "replica_groups={{0,1}}",
       "exchanges 3 operands in a group of 2 members"},
      {"(f32[4,6], f32[4,6]) all-to-all(%x), channel_id=1, replica_groups={{0,1}}",
       "one result element per operand"},
  };
  for (const Case& c : cases) {
    const std::string text = std::string(
                                 "HloModule m, num_partitions=2\nENTRY %e {\n"
                                 "  %x = f32[4,6] parameter(0)\n  %y = f32[4,5] parameter(1)\n"
                                 "  ROOT %a = ") +
                             c.a2a + "\n}\n";
    InputError e = ExpectInputError([&] { ParseHlo(text, "a2a.hlo"); });
    EXPECT_EQ(e.line(), 5) << c.a2a << "\n" << e.what();
    EXPECT_NE(std::string(e.what()).find(c.says), std::string::npos) << c.a2a << "\n" << e.what();
  }
}

TEST(HloReader, CollectivePermuteIsOpaqueAndPerRank) {
  // No IR collective sends to one peer: opaque, typed from the result; its rank and rank count
  // are in its signature, as the result is the source's operand, not this rank's.
  const char* text = R"(HloModule c, num_partitions=2
ENTRY %e {
  %p = f32[4,2]{1,0} parameter(0)
  ROOT %cp = f32[4,2]{1,0} collective-permute(%p), channel_id=1, source_target_pairs={{0,1},{1,0}}
}
)";
  for (int32_t rank : {0, 1}) {
    const ir::Graph g = ParseHlo(text, "cp.hlo", HloOptions{.rank = rank, .world = 0}).graph;
    const ir::Node& cp = NodeOf(g, "cp");
    EXPECT_TRUE(IsOpaqueNode(cp));
    EXPECT_EQ(cp.op.ToString(), "hlo::collective_permute");
    EXPECT_EQ(cp.type().ToString(), "f32[4, 2]");
    ASSERT_EQ(cp.args.size(), 1u);
    EXPECT_EQ(g.ValueName(cp.args[0].as_tensor()), "p");
    ASSERT_NE(cp.Kwarg("source_target_pairs"), nullptr);
    EXPECT_EQ(cp.Kwarg("source_target_pairs")->as_string(), "{{0, 1},{1, 0}}");
    EXPECT_EQ(cp.Kwarg("rank")->as_int(), rank);
    EXPECT_EQ(cp.Kwarg("world")->as_int(), 2);
  }
  for (const char* pairs : {"{{0,1,1}}", "{{0,1},{0,0}}", "{0,1}", "{{0,x}}"}) {
    const std::string bad = std::string(
                                "HloModule c, num_partitions=2\nENTRY %e {\n  %p = f32[4] "
                                "parameter(0)\n  ROOT %cp = f32[4] collective-permute(%p), "
                                "channel_id=1,\n    source_target_pairs=") +
                            pairs + "\n}\n";
    InputError e = ExpectInputError([&] { ParseHlo(bad, "cp.hlo"); });
    EXPECT_EQ(e.line(), 5) << pairs << "\n" << e.what();  // the attribute's line
    EXPECT_NE(std::string(e.what()).find("source_target_pairs"), std::string::npos) << e.what();
  }
}

TEST(HloReader, BitcastConvertOfTheSameTypeIsItsOperand) {
  const char* text = R"(HloModule b
ENTRY %e {
  %p = f32[4]{0} parameter(0)
  %same = f32[4]{0} bitcast-convert(%p)
  ROOT %bits = s32[4]{0} bitcast-convert(%same)
}
)";
  const ir::Graph g = ParseHlo(text, "b.hlo").graph;
  EXPECT_EQ(NodeOf(g, "same").op.ToString(), "aten::alias");
  // Another type of the same width reinterprets the bits: opaque, typed from the result.
  const ir::Node& bits = NodeOf(g, "bits");
  EXPECT_EQ(bits.op.ToString(), "hlo::bitcast_convert");
  EXPECT_EQ(bits.type().ToString(), "i32[4]");
  // bitcast-convert has no attributes to be malformed; a wrong operand is an error at its line.
  InputError e = ExpectInputError([&] {
    ParseHlo("HloModule b\nENTRY %e {\n  ROOT %c = s32[4] bitcast-convert(%nope)\n}\n", "b.hlo");
  });
  EXPECT_EQ(e.line(), 3);
}

// jnp.log1p, expm1, sign, floor, ceil and round (jax rounds half to even by default) are ATen
// operators; round-nearest-afz (half away from zero) has none and stays opaque.
TEST(HloReader, RoundingAndLogPlusOneAreTheirAtenOperators) {
  const char* text = R"(HloModule r
ENTRY %e {
  %p = f32[4]{0} parameter(0)
  %q = s32[4]{0} parameter(1)
  %l = f32[4]{0} log-plus-one(%p)
  %x = f32[4]{0} exponential-minus-one(%l)
  %s = s32[4]{0} sign(%q)
  %f = f32[4]{0} floor(%x)
  %c = f32[4]{0} ceil(%f)
  %re = f32[4]{0} round-nearest-even(%c)
  ROOT %ra = f32[4]{0} round-nearest-afz(%re)
}
)";
  const ir::Graph g = ParseHlo(text, "r.hlo").graph;
  EXPECT_EQ(NodeOf(g, "l").op.ToString(), "aten::log1p");
  EXPECT_EQ(NodeOf(g, "x").op.ToString(), "aten::expm1");
  EXPECT_EQ(NodeOf(g, "s").op.ToString(), "aten::sign");
  EXPECT_EQ(NodeOf(g, "s").type().ToString(), "i32[4]");
  EXPECT_EQ(NodeOf(g, "f").op.ToString(), "aten::floor");
  EXPECT_EQ(NodeOf(g, "c").op.ToString(), "aten::ceil");
  EXPECT_EQ(NodeOf(g, "re").op.ToString(), "aten::round");
  EXPECT_EQ(NodeOf(g, "ra").op.ToString(), "hlo::round_nearest_afz");
  // Each lowers to the tensor language's pointwise op of its name (the {f} lemma families).
  for (const char* name : {"l", "x", "s", "f", "c", "re"}) {
    EXPECT_TRUE(LowersWithoutOpaque(g, name)) << name;
  }
  EXPECT_FALSE(LowersWithoutOpaque(g, "ra"));
}

// What jax's sort, take (gather), .at[].add (scatter) and a max pool (reduce-window) print.
const char* kOpaqueOps = R"(HloModule o
%cmp (a: f32[], b: f32[]) -> pred[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %lt = pred[] compare(%a, %b), direction=LT
}
%sum (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}
%max (x.1: f32[], y.1: f32[]) -> f32[] {
  %x.1 = f32[] parameter(0)
  %y.1 = f32[] parameter(1)
  ROOT %m = f32[] maximum(%x.1, %y.1)
}
ENTRY %e {
  %x = f32[4,8]{1,0} parameter(0)
  %i = s32[3,1]{1,0} parameter(1)
  %u = f32[3,8]{1,0} parameter(2)
  %sorted = f32[4,8]{1,0} sort(%x), dimensions={1}, is_stable=true, to_apply=%cmp
  %g = f32[3,4]{1,0} gather(%x, %i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
  %sc = f32[4,8]{1,0} scatter(%x, %i, %u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%sum
  %ninf = f32[] constant(-inf)
  %pool = f32[4,4]{1,0} reduce-window(%x, %ninf), window={size=1x2 stride=1x2}, to_apply=%max
  ROOT %t = (f32[4,8]{1,0}, f32[3,4]{1,0}, f32[4,8]{1,0}, f32[4,4]{1,0}) tuple(%sorted, %g, %sc, %pool)
}
)";

TEST(HloReader, SortGatherScatterAndReduceWindowLoadOpaque) {
  const ir::Graph g = ParseHlo(kOpaqueOps, "o.hlo").graph;
  struct Want {
    const char* name;
    const char* op;
    const char* type;
    size_t tensors;
  };
  for (const Want& w :
       {Want{"sorted", "hlo::sort", "f32[4, 8]", 1}, Want{"g", "hlo::gather", "f32[3, 4]", 2},
        Want{"sc", "hlo::scatter", "f32[4, 8]", 3},
        Want{"pool", "hlo::reduce_window", "f32[4, 4]", 2}}) {
    const ir::Node& n = NodeOf(g, w.name);
    EXPECT_TRUE(IsOpaqueNode(n)) << w.name;
    EXPECT_EQ(n.op.ToString(), w.op);
    EXPECT_EQ(n.type().ToString(), w.type);
    EXPECT_EQ(n.TensorInputs().size(), w.tensors) << w.name;
  }
  EXPECT_EQ(NodeOf(g, "g").Kwarg("slice_sizes")->as_string(), "{1, 4}");
  EXPECT_EQ(NodeOf(g, "pool").Kwarg("window")->as_string(), "{size=1x2 stride=1x2}");
  // The comparator is in the signature by what it computes, not by its name: renamed, the
  // same; LT made GT, another operator (so the two sorts are never congruent).
  const std::string cmp = NodeOf(g, "sorted").Kwarg("to_apply")->as_string();
  EXPECT_NE(cmp.find("compare(#0,#1),direction=LT"), std::string::npos) << cmp;
  std::string renamed = kOpaqueOps;
  for (size_t at; (at = renamed.find("%cmp")) != std::string::npos;) {
    renamed.replace(at, 4, "%region_0.5");
  }
  EXPECT_EQ(NodeOf(ParseHlo(renamed, "r.hlo").graph, "sorted").Kwarg("to_apply")->as_string(), cmp);
  std::string flipped = kOpaqueOps;
  flipped.replace(flipped.find("direction=LT"), 12, "direction=GT");
  EXPECT_NE(NodeOf(ParseHlo(flipped, "f.hlo").graph, "sorted").Kwarg("to_apply")->as_string(), cmp);
}

TEST(HloReader, OpaqueCallersOfCollectivesAreTaggedPerRank) {
  // A while whose body all-reduces computes per rank what its operands alone do not say: it
  // carries the rank and rank count; one whose body draws carries the draw; a plain one neither.
  const char* text = R"(HloModule w, num_partitions=2
%sum (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}
%cond (c: f32[4]) -> pred[] {
  %c = f32[4]{0} parameter(0)
  ROOT %t = pred[] constant(true)
}
%reducing (b: f32[4]) -> f32[4] {
  %b = f32[4]{0} parameter(0)
  ROOT %ar = f32[4]{0} all-reduce(%b), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=%sum
}
%outer (o: f32[4]) -> f32[4] {
  %o = f32[4]{0} parameter(0)
  ROOT %n = f32[4]{0} while(%o), condition=%cond, body=%reducing
}
%drawing (d: f32[4]) -> f32[4] {
  %d = f32[4]{0} parameter(0)
  %lo = f32[] constant(0)
  %hi = f32[] constant(1)
  %u = f32[4]{0} rng(%lo, %hi), distribution=rng_uniform
  ROOT %a = f32[4]{0} add(%d, %u)
}
%plain (q: f32[4]) -> f32[4] {
  %q = f32[4]{0} parameter(0)
  ROOT %e = f32[4]{0} exponential(%q)
}
ENTRY %e {
  %p = f32[4]{0} parameter(0)
  %w1 = f32[4]{0} while(%p), condition=%cond, body=%outer
  %w2 = f32[4]{0} while(%w1), condition=%cond, body=%drawing
  ROOT %w3 = f32[4]{0} while(%w2), condition=%cond, body=%plain
}
)";
  const ir::Graph g = ParseHlo(text, "w.hlo", HloOptions{.rank = 1, .world = 0}).graph;
  const ir::Node& w1 = NodeOf(g, "w1");
  ASSERT_NE(w1.Kwarg("rank"), nullptr);  // through the nested while
  EXPECT_EQ(w1.Kwarg("rank")->as_int(), 1);
  EXPECT_EQ(w1.Kwarg("world")->as_int(), 2);
  EXPECT_EQ(w1.Kwarg("draw"), nullptr);
  const ir::Node& w2 = NodeOf(g, "w2");
  EXPECT_EQ(w2.Kwarg("rank"), nullptr);
  ASSERT_NE(w2.Kwarg("draw"), nullptr);
  const ir::Node& w3 = NodeOf(g, "w3");
  EXPECT_EQ(w3.Kwarg("rank"), nullptr);
  EXPECT_EQ(w3.Kwarg("draw"), nullptr);
  EXPECT_NE(w3.Kwarg("body")->as_string().find("exponential(#0)"), std::string::npos)
      << w3.Kwarg("body")->as_string();
}

TEST(HloReader, MalformedOpaqueAttributesAreErrorsAtTheirLine) {
  struct Case {
    const char* from;
    const char* to;
    const char* says;
  };
  const Case cases[] = {
      {"to_apply=%cmp", "to_apply=%nope", "to_apply=%nope names no computation"},
      {"offset_dims={1}", "offset_dims={{1}}", "offset_dims must be a flat list"},
      {"slice_sizes={1,4}", "slice_sizes={1,x}", "expected an integer in slice_sizes"},
      {"inserted_window_dims={0}", "inserted_window_dims=0",
       "expected '{' in inserted_window_dims"},
      {", to_apply=%sum", "", "needs to_apply=%computation"},
      {"window={size=1x2 stride=1x2}", "window=1x2", "needs window="},
      {"to_apply=%max", "to_apply=%missing", "to_apply=%missing names no computation"},
  };
  for (const Case& c : cases) {
    std::string text = kOpaqueOps;
    const size_t at = text.find(c.from);
    ASSERT_NE(at, std::string::npos) << c.from;
    text.replace(at, std::string(c.from).size(), c.to);
    const int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + at, '\n'));
    InputError e = ExpectInputError([&] { ParseHlo(text, "o.hlo"); });
    EXPECT_EQ(e.line(), line) << c.to << "\n" << e.what();
    EXPECT_NE(std::string(e.what()).find(c.says), std::string::npos) << c.to << "\n" << e.what();
  }
}

// What transformers-neuronx emits (examples/corpus/aws_llama): weights placed by
// AwsNeuronTransferWithStaticRing, RMSNorm as the AwsNeuronRmsNorm custom call, the last token
// taken by a gather, and the RoPE frequencies as a constant XLA prints without its values.
const char* kNeuron = R"(HloModule n
ENTRY %e {
  %x = f16[8,2,3]{2,1,0} parameter(0)
  %w = f32[8]{0} parameter(1)
  %i = s32[1]{0} parameter(2)
  %j = s32[2,1]{1,0} parameter(3)
  %wt = f32[8]{0} custom-call(%w), custom_call_target="AwsNeuronTransferWithStaticRing", api_version=API_VERSION_UNSPECIFIED
  %xf = f32[8,2,3]{2,1,0} convert(%x)
  %eps = f32[] constant(1e-05)
  %n = f16[8,2,3]{2,1,0} custom-call(%xf, %wt, %eps), custom_call_target="AwsNeuronRmsNorm", api_version=API_VERSION_UNSPECIFIED, metadata={op_type="<module>" source_file="transformers_neuronx/hlo.py" source_line=255}, backend_config="0"
  %t = f16[2,8,3]{2,1,0} transpose(%n), dimensions={1,0,2}
  %g = f16[1,8,3]{2,1,0} gather(%t, %i), offset_dims={1,2}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,8,3}
  %h = f16[8,2,3]{2,1,0} gather(%n, %j), offset_dims={0,2}, collapsed_slice_dims={1}, start_index_map={1}, index_vector_dim=1, slice_sizes={8,1,3}
  %freq = f32[4]{0} constant({...}), metadata={op_type="<module>" source_file="transformers_neuronx/hlo.py" source_line=2559}
  %xe = f32[8,2,3]{2,1,0} custom-call(%xf, %w, %xf), custom_call_target="AwsNeuronRmsNorm", backend_config="0"
  ROOT %r = (f16[1,8,3], f16[8,2,3], f32[4], f32[8,2,3]) tuple(%g, %h, %freq, %xe)
}
)";

TEST(HloReader, NeuronCustomCallsGatherAndElidedConstants) {
  const ir::Graph g = ParseHlo(kNeuron, "n.hlo").graph;
  // constant({...}): its values are not in the module, so it is an input after the parameters.
  ASSERT_EQ(g.inputs.size(), 5u);
  const ir::Node& freq = g.node(g.inputs[4]);
  EXPECT_EQ(freq.name, "freq");
  EXPECT_EQ(freq.kind, ir::NodeKind::kInput);
  EXPECT_EQ(freq.type().ToString(), "f32[4]");
  EXPECT_EQ(freq.source.line, 2559);
  EXPECT_EQ(NodeOf(g, "wt").op.ToString(), "aten::alias");
  // AwsNeuronRmsNorm over dim 0: x * rsqrt(mean(x^2, 0) + eps) * w along dim 0, cast to f16.
  const ir::Node& n = NodeOf(g, "n");
  EXPECT_EQ(n.op.ToString(), "aten::_to_copy");
  EXPECT_EQ(n.type().ToString(), "f16[8, 2, 3]");
  EXPECT_EQ(n.source.line, 255);
  const ir::Node& scaled = g.node(n.args[0].as_tensor().node);
  EXPECT_EQ(scaled.op.ToString(), "aten::mul.Tensor");
  const ir::Node& weight = g.node(scaled.args[1].as_tensor().node);
  EXPECT_EQ(weight.op.ToString(), "aten::reshape");
  EXPECT_EQ(weight.type().ToString(), "f32[8, 1, 1]");
  const ir::Node& normed = g.node(scaled.args[0].as_tensor().node);
  EXPECT_EQ(normed.op.ToString(), "aten::mul.Tensor");
  const ir::Node& rsqrt = g.node(normed.args[1].as_tensor().node);
  EXPECT_EQ(rsqrt.op.ToString(), "aten::rsqrt");
  const ir::Node& shifted = g.node(rsqrt.args[0].as_tensor().node);
  EXPECT_EQ(shifted.op.ToString(), "aten::add.Tensor");
  EXPECT_DOUBLE_EQ(shifted.args[1].as_double(), 1e-05);
  const ir::Node& mean = g.node(shifted.args[0].as_tensor().node);
  EXPECT_EQ(mean.op.ToString(), "aten::mean.dim");
  EXPECT_EQ(mean.type().ToString(), "f32[1, 2, 3]");
  EXPECT_EQ(g.node(mean.args[0].as_tensor().node).op.ToString(), "aten::pow.Tensor_Scalar");
  // eps read from data: opaque, never a guess.
  EXPECT_TRUE(IsOpaqueNode(NodeOf(g, "xe")));
  // The last token: index_select of the clamped index (XLA clamps gather starts).
  const ir::Node& gather = NodeOf(g, "g");
  EXPECT_EQ(gather.op.ToString(), "aten::index_select");
  EXPECT_EQ(gather.args[1].as_int(), 0);
  const ir::Node& clamp = g.node(gather.args[2].as_tensor().node);
  EXPECT_EQ(clamp.op.ToString(), "aten::clamp");
  EXPECT_EQ(clamp.args[2].as_int(), 1);
  // jax's form, one index per row of [2,1] indices, along dim 1.
  const ir::Node& h = NodeOf(g, "h");
  EXPECT_EQ(h.op.ToString(), "aten::index_select");
  EXPECT_EQ(h.args[1].as_int(), 1);
  const ir::Node& hclamp = g.node(h.args[2].as_tensor().node);
  EXPECT_EQ(hclamp.args[2].as_int(), 1);
  EXPECT_EQ(g.node(hclamp.args[0].as_tensor().node).type().ToString(), "i32[2]");
  // A gather that is no index_select (batch dim elsewhere) stays opaque.
  std::string moved = kNeuron;
  moved.replace(moved.find("offset_dims={0,2}"), 17, "offset_dims={1,2}");
  moved.replace(moved.find("%h = f16[8,2,3]"), 15, "%h = f16[2,8,3]");
  moved.replace(moved.find("f16[8,2,3], f32[4]"), 10, "f16[2,8,3]");
  EXPECT_TRUE(IsOpaqueNode(NodeOf(ParseHlo(moved, "m.hlo").graph, "h")));
}

// XLA's asynchronous collectives (what the latency-hiding scheduler leaves in a compiled module):
// all-reduce-start/-done and all-gather-start/-done (the start's result the tuple (operand,
// gathered)) are the functional collective and its wait; collective-permute-start stays opaque.
const char* kAsync = R"(HloModule a, num_partitions=2
%sum (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}
ENTRY %e {
  %p = f32[4,8]{1,0} parameter(0)
  %ars = f32[4,8]{1,0} all-reduce-start(%p), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=%sum
  %neg = f32[4,8]{1,0} negate(%p)
  %ard = f32[4,8]{1,0} all-reduce-done(%ars)
  %ags = (f32[4,8]{1,0}, f32[8,8]{1,0}) all-gather-start(%ard), channel_id=2, replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true
  %agd = f32[8,8]{1,0} all-gather-done(%ags)
  %cps = (f32[4,8]{1,0}, f32[4,8]{1,0}) collective-permute-start(%neg), channel_id=3, source_target_pairs={{0,1},{1,0}}
  %cpd = f32[4,8]{1,0} collective-permute-done(%cps)
  ROOT %t = (f32[8,8]{1,0}, f32[4,8]{1,0}) tuple(%agd, %cpd)
}
)";

TEST(HloReader, AsyncAllReduceAndAllGatherAreTheCollectiveAndItsWait) {
  HloModule m = ParseHlo(kAsync, "a.hlo", HloOptions{.rank = 1, .world = 0});
  const ir::Graph& g = m.graph;
  const ir::Node& ard = NodeOf(g, "ard");
  EXPECT_EQ(ard.op.ToString(), "_c10d_functional::wait_tensor");
  const ir::Node& ar = g.node(ard.args[0].as_tensor().node);
  EXPECT_EQ(ar.op.ToString(), "_c10d_functional::all_reduce");
  EXPECT_EQ(ar.args[1].as_string(), "sum");
  EXPECT_EQ(ar.args[2].as_string(), "hlo_ranks_0_1");
  const ir::Node& agd = NodeOf(g, "agd");
  EXPECT_EQ(agd.op.ToString(), "_c10d_functional::wait_tensor");
  EXPECT_EQ(agd.type().ToString(), "f32[8, 8]");
  const ir::Node& ag = g.node(agd.args[0].as_tensor().node);
  EXPECT_EQ(ag.op.ToString(), "_c10d_functional::all_gather_into_tensor");
  EXPECT_EQ(g.ValueName(ag.args[0].as_tensor()), "ard");
  EXPECT_TRUE(IsOpaqueNode(NodeOf(g, "cpd")));
  // The loader's checks hold (each started collective read by its wait only, the ranks'
  // collective sequences agree).
  const std::string path = testing::TempDir() + "/async.hlo";
  {
    std::ofstream f(path);
    f << kAsync;
  }
  ir::Program p = LoadProgram({path});
  EXPECT_EQ(p.world_size(), 2);
}

}  // namespace
}  // namespace gg::frontend
