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
