// The NCCL backend in one process (gg_runtime_gpu_tests, ctest label gpu): every collective, dtype
// and reduce op on CUDA tensors of a group of one process against the reference collectives (the
// multi-process form is gg_nccl_backend_tests under mpirun). Also, on any machine: CPU runs are
// not NCCL's, and the NCCL symbols are found in LibTorch's CUDA backend wherever that loads.
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "runtime/collectives.h"
#include "runtime/device.h"
#include "runtime/nccl_backend.h"

namespace gg::runtime {
namespace {

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

TEST(NcclBackend, CpuRunsDoNotUseNccl) {
  EXPECT_EQ(NcclUnavailableReason(at::kCPU), "the check runs on the CPU");
  EXPECT_EQ(DeviceBusId(at::kCPU), "");
}

TEST(NcclBackend, FindsTheNcclLibTorchLoaded) {
#if !GG_NCCL_BACKEND
  GTEST_SKIP() << NcclUnavailableReason(at::Device(at::kCUDA, 0));
#endif
  CudaDeviceCount();  // loads LibTorch's CUDA backend, if it can
  if (CudaBackendSymbol("cudaGetDeviceCount") == nullptr) {
    GTEST_SKIP() << "LibTorch's CUDA backend did not load: " << NoCudaReason();
  }
  for (const char* name : {"ncclGetUniqueId", "ncclCommInitRank", "ncclCommAbort", "ncclAllReduce",
                           "ncclAllGather", "ncclReduceScatter", "ncclBroadcast", "ncclSend",
                           "ncclRecv", "ncclGroupStart", "ncclGroupEnd", "ncclGetErrorString"}) {
    EXPECT_NE(CudaBackendSymbol(name), nullptr) << name;
  }
  if (CudaDeviceCount() == 0) {
    EXPECT_EQ(NcclUnavailableReason(at::Device(at::kCUDA, 0)), NoCudaReason());
  }
}

TEST(NcclBackend, EveryKindDtypeAndReduceOpAgreesWithTheReference) {
  if (CudaDeviceCount() == 0) GTEST_SKIP() << NoCudaReason();
  if (std::string why = NcclUnavailableReason(at::Device(at::kCUDA, 0)); !why.empty()) {
    GTEST_SKIP() << why;
  }
  const int world = 1, me = 0;
  const at::Device device = ResolveDevice("cuda", LocalRankFromEnvironment());
  std::vector<int32_t> all, evens;
  for (int32_t r = 0; r < world; ++r) all.push_back(r);
  for (int32_t r = world - 1; r >= 0; --r) {
    if (r % 2 == 0) evens.push_back(r);  // group order differs from world order
  }
  ir::Program program = GroupsOnly(world, {{"all", all}, {"evens", evens}});
  auto nccl = std::make_unique<NcclBackend>(CommunicatorGroups(program), 0, device,
                                            [](const std::vector<int32_t>&, void*, size_t) {});
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

TEST(NcclBackend, RejectsHostInputsAndUnknownGroups) {
  if (CudaDeviceCount() == 0) GTEST_SKIP() << NoCudaReason();
  if (std::string why = NcclUnavailableReason(at::Device(at::kCUDA, 0)); !why.empty()) {
    GTEST_SKIP() << why;
  }
  const at::Device device = ResolveDevice("cuda", LocalRankFromEnvironment());
  NcclBackend nccl({{0}}, 0, device, [](const std::vector<int32_t>&, void*, size_t) {});
  RankCollective call{ir::CollectiveKind::kAllReduce, "sum", 0, "", {0}, 0, at::ones({4})};
  EXPECT_THROW(nccl.Run(call), std::invalid_argument);  // a host tensor
  call.input = call.input.to(device);
  EXPECT_TRUE(at::equal(nccl.Run(call).cpu(), at::ones({4})));
  call.members = {0, 1};
  EXPECT_THROW(nccl.Run(call), std::invalid_argument);  // no such communicator
}

}  // namespace

}  // namespace gg::runtime
