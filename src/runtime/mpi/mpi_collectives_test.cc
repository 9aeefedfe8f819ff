// The MPI backend under mpirun (2 or 4 processes): every collective, dtype and reduce op against
// the single-process reference collectives; a hand-built program with every collective kind and
// a sub-group executed one rank per process against ExecuteProgram; GatherToRoot; and the shared
// corpus's Megatron GPT layer-1 rank graphs (TP2 under 2 processes, TP4 under 4) at reduced batch
// size against ExecuteProgram on the same inputs; a pipeline's stages with their point-to-point
// transfers, one stage per process.
#include "runtime/mpi/mpi_collectives.h"

#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "frontend/loader.h"
#include "runtime/collectives.h"
#include "util/diagnostic.h"

namespace gg::runtime {
namespace {

using Mode = MpiCollectives::Mode;
using ir::Value;

int WorldRank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int WorldSize() {
  int n = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

// A program of `world` empty ranks with the given groups (what MpiCollectives needs).
ir::Program GroupsOnly(int world, std::map<std::string, std::vector<int32_t>> groups) {
  ir::Program p;
  for (int r = 0; r < world; ++r) {
    ir::Graph g;
    g.rank = r;
    p.ranks.push_back(g);
  }
  p.groups = std::move(groups);
  return p;
}

// Rank r's input of a collective test: the same on every process (seeded by r and the case).
at::Tensor InputOf(int32_t r, at::ScalarType dtype, int64_t rows, uint64_t salt) {
  at::Generator gen = at::detail::createCPUGenerator(1000 * salt + static_cast<uint64_t>(r));
  if (dtype == at::kLong) return at::randint(-50, 50, {rows, 3}, gen, at::kLong);
  if (dtype == at::kBool) return at::randint(0, 2, {rows, 3}, gen, at::kLong).to(at::kBool);
  return at::randn({rows, 3}, gen, at::kDouble).to(dtype);
}

void ExpectMatches(const at::Tensor& got, const at::Tensor& want, Mode mode) {
  ASSERT_EQ(got.scalar_type(), want.scalar_type());
  ASSERT_TRUE(got.sizes().equals(want.sizes()));
  if (mode == Mode::kExactReference || !at::isFloatingType(want.scalar_type())) {
    EXPECT_TRUE(at::equal(got, want)) << "got\n" << got << "\nwant\n" << want;
    return;
  }
  // Native MPI sums in another order (and 16-bit types through float once, not per step).
  bool half = want.scalar_type() == at::kBFloat16 || want.scalar_type() == at::kHalf;
  double tol = half ? 1e-2 : 1e-6;
  EXPECT_TRUE(at::allclose(got.to(at::kDouble), want.to(at::kDouble), tol, tol))
      << "got\n" << got << "\nwant\n" << want;
}

TEST(MpiCollectives, EveryKindDtypeAndReduceOpAgreesWithTheReference) {
  const int world = WorldSize(), me = WorldRank();
  std::vector<int32_t> all, evens;
  for (int32_t r = 0; r < world; ++r) all.push_back(r);
  for (int32_t r = world - 1; r >= 0; --r) {
    if (r % 2 == 0) evens.push_back(r);  // group order differs from world order
  }
  ir::Program program = GroupsOnly(world, {{"all", all}, {"evens", evens}});
  uint64_t salt = 0;
  for (Mode mode : {Mode::kNative, Mode::kExactReference}) {
    MpiCollectives mpi(program, MPI_COMM_WORLD, mode);
    for (const auto& [group, members] : program.groups) {
      auto position = std::find(members.begin(), members.end(), me);
      const int n = static_cast<int>(members.size());
      for (at::ScalarType dtype :
           {at::kFloat, at::kDouble, at::kBFloat16, at::kHalf, at::kLong, at::kBool}) {
        struct Case {
          ir::CollectiveKind kind;
          std::string op;
        };
        std::vector<Case> cases = {{ir::CollectiveKind::kAllGather, ""},
                                   {ir::CollectiveKind::kBroadcast, ""},
                                   {ir::CollectiveKind::kAllToAll, ""}};
        for (std::string op : {"sum", "avg", "max", "min", "product"}) {
          if (dtype == at::kBool && op != "sum" && op != "max") continue;
          if (dtype == at::kLong && op == "avg") continue;  // the reference truncates a double
          cases.push_back({ir::CollectiveKind::kAllReduce, op});
          cases.push_back({ir::CollectiveKind::kReduceScatter, op});
        }
        for (const Case& c : cases) {
          ++salt;
          if (position == members.end()) continue;  // not a member: nothing to call
          SCOPED_TRACE(group + " " + c10::toString(dtype) + " kind " +
                       std::to_string(static_cast<int>(c.kind)) + " " + c.op);
          CollectiveCall reference{c.kind, c.op.empty() ? "sum" : c.op, n - 1, {}};
          for (int32_t m : members) reference.inputs.push_back(InputOf(m, dtype, 2 * n, salt));
          RankCollective call{c.kind, reference.reduce_op, n - 1, group, members, me,
                              InputOf(me, dtype, 2 * n, salt)};
          at::Tensor got = mpi.Run(call);
          size_t index = static_cast<size_t>(position - members.begin());
          ExpectMatches(got, RunCollective(reference).at(index), mode);
        }
      }
    }
  }
}

TEST(MpiCollectives, RejectsACallerThatIsNotThisProcessAndUnknownGroups) {
  const int world = WorldSize(), me = WorldRank();
  std::vector<int32_t> all;
  for (int32_t r = 0; r < world; ++r) all.push_back(r);
  MpiCollectives mpi(GroupsOnly(world, {}), MPI_COMM_WORLD);
  RankCollective call{ir::CollectiveKind::kAllReduce, "sum", 0, "", all, (me + 1) % world,
                      at::ones({2})};
  EXPECT_THROW(mpi.Run(call), std::invalid_argument);
  call.rank = me;
  call.members = {me};
  EXPECT_THROW(mpi.Run(call), std::invalid_argument);
  EXPECT_THROW(MpiCollectives(GroupsOnly(world + 1, {}), MPI_COMM_WORLD), std::invalid_argument);
}

// ---- a hand-built program: every collective kind, a sub-group ----------------------------------

ir::TensorType F32(std::vector<int64_t> dims) {
  ir::TensorType t{ir::DType::kFloat32, {}};
  for (int64_t d : dims) t.shape.push_back(d);
  return t;
}

struct Builder {
  ir::Graph g;
  int line = 1;
  Value Input(const std::string& name, ir::TensorType type) {
    ir::Node n;
    n.kind = ir::NodeKind::kInput;
    n.name = name;
    n.outputs.push_back({name, type});
    return ir::TensorRef{g.AddNode(n), 0};
  }
  Value Op(const std::string& name, const std::string& op, std::vector<Value> args,
           ir::TensorType type) {
    ir::Node n;
    n.name = name;
    n.op = *ir::OpName::Parse(op);
    n.args = std::move(args);
    n.outputs.push_back({name, type});
    n.def_line = line++;
    return ir::TensorRef{g.AddNode(n), 0};
  }
  // A collective followed by its wait.
  Value Collective(const std::string& name, const std::string& op, std::vector<Value> args,
                   ir::TensorType type) {
    Value c = Op(name, "_c10d_functional::" + op + ".default", std::move(args), type);
    return Op(name + "_w", "_c10d_functional::wait_tensor.default", {c}, type);
  }
};

// Each rank of `world`: x [2w, 3] -> all_reduce(avg), all_gather, reduce_scatter of the gather,
// broadcast from rank 1, all_to_all, tanh in between; the even ranks also all_reduce(max) over
// the group "evens" (in reverse rank order).
ir::Program EveryKind(int world) {
  ir::Program p;
  std::vector<int32_t> all, evens;
  for (int32_t r = 0; r < world; ++r) all.push_back(r);
  for (int32_t r = world - 1; r >= 0; --r) {
    if (r % 2 == 0) evens.push_back(r);
  }
  const int64_t w = world;
  for (int r = 0; r < world; ++r) {
    Builder b;
    b.g.rank = r;
    b.g.file = "every_kind.r" + std::to_string(r) + ".py";
    Value x = b.Input("x", F32({2 * w, 3}));
    Value ar = b.Collective("ar", "all_reduce", {x, "avg", "all"}, F32({2 * w, 3}));
    Value t = b.Op("t", "aten::tanh.default", {ar}, F32({2 * w, 3}));
    Value ag = b.Collective("ag", "all_gather_into_tensor", {t, w, "all"}, F32({2 * w * w, 3}));
    Value rs =
        b.Collective("rs", "reduce_scatter_tensor", {ag, "sum", w, "all"}, F32({2 * w, 3}));
    Value bc = b.Collective("bc", "broadcast", {x, int64_t(1), "all"}, F32({2 * w, 3}));
    Value a2a = b.Collective("a2a", "all_to_all_single", {x, ir::None{}, ir::None{}, "all"},
                             F32({2 * w, 3}));
    std::vector<Value> outputs = {rs, bc, a2a};
    if (r % 2 == 0) {
      outputs.push_back(b.Collective("ev", "all_reduce", {rs, "max", "evens"}, F32({2 * w, 3})));
    }
    b.g.outputs = outputs;
    p.ranks.push_back(b.g);
  }
  p.groups["all"] = all;
  p.groups["evens"] = evens;
  return p;
}

TEST(ExecuteRankDistributed, EveryKindAndASubGroupMatchExecuteProgram) {
  const int world = WorldSize(), me = WorldRank();
  ir::Program program = EveryKind(world);
  std::vector<GraphInputs> inputs;
  for (int r = 0; r < world; ++r) inputs.push_back({{InputOf(r, at::kFloat, 2 * world, 7)}, {}});
  std::vector<ExecutionResult> reference = ExecuteProgram(program, inputs);
  for (Mode mode : {Mode::kNative, Mode::kExactReference}) {
    MpiCollectives mpi(program, MPI_COMM_WORLD, mode);
    ExecutionResult mine = ExecuteRankDistributed(program, inputs[me], mpi);
    ASSERT_EQ(mine.outputs.size(), reference[me].outputs.size());
    for (size_t o = 0; o < mine.outputs.size(); ++o) {
      SCOPED_TRACE("output " + std::to_string(o));
      ExpectMatches(mine.outputs[o], reference[me].outputs[o], mode);
    }
  }
}

// Point-to-point transfers: torch.distributed.pipelining's 1F1B schedule (tests/pipeline, forward
// and backward, PP = the number of processes), one stage per process, each send an MPI_Isend and
// each receive an MPI_Recv: every rank's loss or gradients equal ExecuteProgram's bit for bit
// (transfers copy values; the stages hold no collective).
TEST(ExecuteRankDistributed, PipelineTransfersMatchExecuteProgram) {
  const int world = WorldSize(), me = WorldRank();
  const std::string dist = std::string(GG_SOURCE_DIR) + "/tests/pipeline/pp" +
                           std::to_string(world) + "_1f1b/joint/dist.json";
  if (!std::filesystem::exists(dist)) GTEST_SKIP() << "no pipeline case of " << world << " ranks";
  ir::Program program = frontend::LoadProgram({dist});
  ASSERT_FALSE(program.transfers.empty());
  std::vector<GraphInputs> inputs(world);
  for (int r = 0; r < world; ++r) {
    const ir::Graph& g = program.rank(r);
    at::Generator gen = at::detail::createCPUGenerator(77 + static_cast<uint64_t>(r));
    for (ir::NodeId id : g.inputs) {
      std::vector<int64_t> sizes;
      for (const ir::Dim& d : g.node(id).outputs[0].type->shape) sizes.push_back(d.value());
      inputs[r].inputs.push_back(at::randn(sizes, gen, at::kDouble).to(at::kFloat));
    }
  }
  std::vector<ExecutionResult> reference = ExecuteProgram(program, inputs);
  MpiCollectives mpi(program, MPI_COMM_WORLD, Mode::kNative);
  ExecutionResult mine = ExecuteRankDistributed(program, inputs[me], mpi);
  ASSERT_EQ(mine.outputs.size(), reference[me].outputs.size());
  for (size_t o = 0; o < mine.outputs.size(); ++o) {
    EXPECT_TRUE(at::equal(mine.outputs[o], reference[me].outputs[o])) << "output " << o;
  }
}

TEST(GatherToRoot, NamedTensorsOfEveryRankArriveAtTheRoot) {
  const int world = WorldSize(), me = WorldRank();
  std::map<std::string, at::Tensor> mine = {
      {"rows", at::arange(me + 1, at::kLong)},
      {"half", at::full({2, me + 1}, 0.5 * me, at::kBFloat16)},
  };
  if (me == 1) mine["only_on_1"] = at::ones({3}, at::kBool);
  auto gathered = GatherToRoot(mine, MPI_COMM_WORLD, 0);
  if (me != 0) {
    EXPECT_TRUE(gathered.empty());
    return;
  }
  ASSERT_EQ(gathered.size(), static_cast<size_t>(world));
  for (int r = 0; r < world; ++r) {
    EXPECT_TRUE(at::equal(gathered[r].at("rows"), at::arange(r + 1, at::kLong)));
    EXPECT_TRUE(at::equal(gathered[r].at("half"), at::full({2, r + 1}, 0.5 * r, at::kBFloat16)));
    EXPECT_EQ(gathered[r].count("only_on_1"), r == 1 ? 1u : 0u);
  }
}

}  // namespace
}  // namespace gg::runtime
