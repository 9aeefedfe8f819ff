#include "runtime/collectives.h"

#include <gtest/gtest.h>

namespace gg::runtime {
namespace {

at::Tensor T(std::vector<float> v, std::vector<int64_t> shape) {
  return at::tensor(v).reshape(shape);
}

TEST(Collectives, AllReduceSumAvgMaxMinOverFourRanks) {
  std::vector<at::Tensor> in;
  for (int r = 0; r < 4; ++r) in.push_back(T({float(r), float(-r), 1, float(r * r)}, {2, 2}));
  CollectiveCall call{ir::CollectiveKind::kAllReduce, "sum", 0, in};
  std::vector<at::Tensor> out = RunCollective(call);
  ASSERT_EQ(out.size(), 4u);
  for (const at::Tensor& o : out) EXPECT_TRUE(at::equal(o, T({6, -6, 4, 14}, {2, 2})));
  call.reduce_op = "max";
  EXPECT_TRUE(at::equal(RunCollective(call)[2], T({3, 0, 1, 9}, {2, 2})));
  call.reduce_op = "min";
  EXPECT_TRUE(at::equal(RunCollective(call)[1], T({0, -3, 1, 0}, {2, 2})));
  call.reduce_op = "avg";
  EXPECT_TRUE(at::allclose(RunCollective(call)[3], T({1.5, -1.5, 1, 3.5}, {2, 2})));
  call.reduce_op = "bogus";
  EXPECT_THROW(RunCollective(call), std::invalid_argument);
}

TEST(Collectives, GatherScatterBroadcastAllToAll) {
  std::vector<at::Tensor> in = {T({1, 2, 3, 4}, {2, 2}), T({5, 6, 7, 8}, {2, 2})};
  std::vector<at::Tensor> g = RunCollective({ir::CollectiveKind::kAllGather, "sum", 0, in});
  EXPECT_TRUE(at::equal(g[1], T({1, 2, 3, 4, 5, 6, 7, 8}, {4, 2})));
  std::vector<at::Tensor> s = RunCollective({ir::CollectiveKind::kReduceScatter, "sum", 0, in});
  EXPECT_TRUE(at::equal(s[0], T({6, 8}, {1, 2})));
  EXPECT_TRUE(at::equal(s[1], T({10, 12}, {1, 2})));
  std::vector<at::Tensor> b = RunCollective({ir::CollectiveKind::kBroadcast, "sum", 1, in});
  EXPECT_TRUE(at::equal(b[0], in[1]));
  std::vector<at::Tensor> a = RunCollective({ir::CollectiveKind::kAllToAll, "sum", 0, in});
  EXPECT_TRUE(at::equal(a[0], T({1, 2, 5, 6}, {2, 2})));
  EXPECT_TRUE(at::equal(a[1], T({3, 4, 7, 8}, {2, 2})));
  std::vector<at::Tensor> odd = {T({1, 2, 3}, {3}), T({4, 5, 6}, {3})};
  EXPECT_THROW(RunCollective({ir::CollectiveKind::kReduceScatter, "sum", 0, odd}),
               std::invalid_argument);
}

// Uneven splits: member 0 keeps 2 rows and sends member 1 none; member 1 sends 1 row to each.
TEST(Collectives, AllToAllWithUnevenSplits) {
  CollectiveCall call{ir::CollectiveKind::kAllToAll,
                      "sum",
                      0,
                      {T({1, 2}, {2, 1}), T({3, 4}, {2, 1})},
                      {{2, 0}, {1, 1}},
                      {{2, 1}, {0, 1}}};
  std::vector<at::Tensor> a = RunCollective(call);
  EXPECT_TRUE(at::equal(a[0], T({1, 2, 3}, {3, 1})));
  EXPECT_TRUE(at::equal(a[1], T({4}, {1, 1})));
  call.output_splits = {{1, 1}, {1, 1}};  // member 0 expects 1 row from itself: it sends 2
  EXPECT_THROW(RunCollective(call), std::invalid_argument);
  call.output_splits.clear();
  call.input_splits = {{1, 0}, {1, 1}};  // member 0's sizes do not cover its 2 rows
  EXPECT_THROW(RunCollective(call), std::invalid_argument);
}

TEST(Collectives, Bf16SumKeepsDtype) {
  std::vector<at::Tensor> in = {at::ones({3}, at::kBFloat16), at::ones({3}, at::kBFloat16)};
  at::Tensor r = ReduceTensors(in, "sum");
  EXPECT_EQ(r.scalar_type(), at::kBFloat16);
  EXPECT_TRUE(at::equal(r, at::full({3}, 2.0, at::kBFloat16)));
}

}  // namespace
}  // namespace gg::runtime
