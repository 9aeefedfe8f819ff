// The NCCL backend set up over MPI (gg_nccl_backend_tests, ctest label gpu, run under mpirun -np 2
// as gpu.nccl_backend_np2): every collective, dtype and reduce op on CUDA tensors, groups spanning
// the processes, one GPU each, against the reference collectives. Skipped with the reason when
// NCCL cannot be used (no device, two processes on one GPU) or outside mpirun; the single-process
// tests are in runtime/nccl_backend_gpu_test.cc.
#include "runtime/mpi/nccl_setup.h"

#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "runtime/collectives.h"
#include "runtime/device.h"

namespace gg::runtime {
namespace {

bool mpi_active = false;  // main() started MPI (the binary runs under a launcher)

int WorldSize() {
  int n = 1;
  if (mpi_active) MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

int WorldRank() {
  int r = 0;
  if (mpi_active) MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

// A program of `world` empty ranks with the given groups (what the backends need).
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
  if (dtype == at::kInt) return at::randint(-50, 50, {rows, 3}, gen, at::kLong).to(at::kInt);
  if (dtype == at::kBool) return at::randint(0, 2, {rows, 3}, gen, at::kLong).to(at::kBool);
  return at::randn({rows, 3}, gen, at::kDouble).to(dtype);
}

void ExpectMatches(const at::Tensor& got, const at::Tensor& want) {
  ASSERT_EQ(got.scalar_type(), want.scalar_type());
  ASSERT_TRUE(got.sizes().equals(want.sizes()));
  if (!at::isFloatingType(want.scalar_type())) {
    EXPECT_TRUE(at::equal(got, want)) << "got\n" << got << "\nwant\n" << want;
    return;
  }
  // NCCL sums in its own order (16-bit types through float once, as the MPI backend).
  bool half = want.scalar_type() == at::kBFloat16 || want.scalar_type() == at::kHalf;
  double tol = half ? 1e-2 : 1e-6;
  EXPECT_TRUE(at::allclose(got.to(at::kDouble), want.to(at::kDouble), tol, tol))
      << "got\n"
      << got << "\nwant\n"
      << want;
}

TEST(NcclSetup, EveryKindDtypeAndReduceOpAgreesWithTheReferenceAcrossProcesses) {
  if (!mpi_active) GTEST_SKIP() << "runs under mpirun (gpu.nccl_backend_np2)";
  if (CudaDeviceCount() == 0) GTEST_SKIP() << NoCudaReason();
  const int world = WorldSize(), me = WorldRank();
  const at::Device device = ResolveDevice("cuda", LocalRankFromEnvironment());
  std::vector<int32_t> all, evens;
  for (int32_t r = 0; r < world; ++r) all.push_back(r);
  for (int32_t r = world - 1; r >= 0; --r) {
    if (r % 2 == 0) evens.push_back(r);  // group order differs from world order
  }
  ir::Program program = GroupsOnly(world, {{"all", all}, {"evens", evens}});
  MpiCollectives mpi(program);
  std::string why_not;
  std::unique_ptr<NcclBackend> nccl = MakeNcclBackend(program, mpi, device, &why_not);
  if (!nccl) GTEST_SKIP() << "NCCL not used: " << why_not;
  uint64_t salt = 0;
  for (const auto& [group, members] : program.groups) {
    auto position = std::find(members.begin(), members.end(), me);
    const int n = static_cast<int>(members.size());
    for (at::ScalarType dtype :
         {at::kFloat, at::kDouble, at::kBFloat16, at::kHalf, at::kLong, at::kInt, at::kBool}) {
      struct Case {
        ir::CollectiveKind kind;
        std::string op;
      };
      std::vector<Case> cases = {{ir::CollectiveKind::kAllGather, ""},
                                 {ir::CollectiveKind::kBroadcast, ""},
                                 {ir::CollectiveKind::kAllToAll, ""}};
      for (std::string op : {"sum", "avg", "max", "min", "product"}) {
        if (dtype == at::kBool && op != "sum" && op != "max") continue;
        bool integral = dtype == at::kLong || dtype == at::kInt;
        if (integral && op == "avg") continue;  // the reference truncates a double
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
        RankCollective call{c.kind,
                            reference.reduce_op,
                            n - 1,
                            group,
                            members,
                            me,
                            InputOf(me, dtype, 2 * n, salt).to(device)};
        at::Tensor got = nccl->Run(call);
        EXPECT_EQ(got.device(), device);
        size_t index = static_cast<size_t>(position - members.begin());
        ExpectMatches(got.cpu(), RunCollective(reference).at(index));
      }
    }
  }
}

}  // namespace

// main(): MPI only under a launcher (a plain run, ctest's test discovery, starts none); rank 0
// prints; a failure on any rank fails every rank's exit status.
int RunNcclBackendTests(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr) {
    MPI_Init(&argc, &argv);
    mpi_active = true;
    if (WorldRank() != 0) {
      auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
      delete listeners.Release(listeners.default_result_printer());
    }
  }
  int status = RUN_ALL_TESTS();
  if (mpi_active) {
    MPI_Allreduce(MPI_IN_PLACE, &status, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
  }
  return status;
}

}  // namespace gg::runtime

int main(int argc, char** argv) { return gg::runtime::RunNcclBackendTests(argc, argv); }
