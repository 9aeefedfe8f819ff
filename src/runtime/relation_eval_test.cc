#include "runtime/relation_eval.h"

#include <gtest/gtest.h>

#include <map>
#include <stdexcept>

namespace gg::runtime {
namespace {

using symbolic::RelExpr;

// Two ranks' values of one D tensor (node 0) and a bias (node 1), looked up by (rank, node).
class RelationEvalTest : public ::testing::Test {
 protected:
  RelationEvalTest() {
    at::manual_seed(3);
    for (int32_t rank = 0; rank < 2; ++rank) {
      values_[{rank, 0}] = at::randn({4, 6}, at::kDouble);
      values_[{rank, 1}] = at::randn({6}, at::kDouble);
    }
  }
  at::Tensor Eval(const RelExpr& e) {
    return EvalRelExpr(e, [&](int32_t rank, ir::TensorRef ref) {
      auto it = values_.find({rank, ref.node});
      return it == values_.end() ? at::Tensor() : it->second;
    });
  }
  RelExpr X(int32_t rank) { return RelExpr::Tensor(rank, ir::TensorRef{0, 0}, "x"); }
  RelExpr Bias(int32_t rank) { return RelExpr::Tensor(rank, ir::TensorRef{1, 0}, "bias"); }
  const at::Tensor& Value(int32_t rank, int32_t node) { return values_.at({rank, node}); }

  std::map<std::pair<int32_t, int32_t>, at::Tensor> values_;
};

TEST_F(RelationEvalTest, EachOpIsItsATenCounterpart) {
  EXPECT_TRUE(
      at::equal(Eval(RelExpr::Concat(1, {X(0), X(1)})), at::cat({Value(0, 0), Value(1, 0)}, 1)));
  EXPECT_TRUE(at::equal(Eval(RelExpr::Slice(X(1), 0, 1, 3)), Value(1, 0).narrow(0, 1, 2)));
  EXPECT_TRUE(at::allclose(Eval(RelExpr::Scale(0.5, RelExpr::Sum({X(0), X(1)}))),
                           (Value(0, 0) + Value(1, 0)) * 0.5));
  EXPECT_TRUE(at::equal(Eval(RelExpr::Max({X(0), X(1)})), at::maximum(Value(0, 0), Value(1, 0))));
  EXPECT_TRUE(at::equal(Eval(RelExpr::Permute(RelExpr::Reshape(X(0), {2, 2, 6}), {2, 0, 1})),
                        Value(0, 0).reshape({2, 2, 6}).permute({2, 0, 1})));
}

// expand is aten::expand (right-aligned, new dims lead, size-1 dims repeat), materialized so that
// a relation's value never aliases the D tensor it reads.
TEST_F(RelationEvalTest, ExpandBroadcastsAndCopies) {
  at::Tensor rows = Eval(RelExpr::Expand(Bias(0), {3, 6}));
  ASSERT_EQ(rows.sizes().vec(), (std::vector<int64_t>{3, 6}));
  for (int64_t i = 0; i < 3; ++i) EXPECT_TRUE(at::equal(rows[i], Value(0, 1)));
  EXPECT_TRUE(rows.is_contiguous());
  at::Tensor cols = Eval(RelExpr::Expand(RelExpr::Reshape(Bias(1), {6, 1}), {2, 6, 5}));
  ASSERT_EQ(cols.sizes().vec(), (std::vector<int64_t>{2, 6, 5}));
  for (int64_t j = 0; j < 5; ++j) {
    EXPECT_TRUE(at::equal(cols.select(2, j).select(0, 1), Value(1, 1)));
  }
  cols.fill_(0.0);
  EXPECT_FALSE(at::equal(Value(1, 1), at::zeros({6}, at::kDouble)));
}

TEST_F(RelationEvalTest, AMissingValueIsAnError) {
  EXPECT_THROW(Eval(RelExpr::Tensor(5, ir::TensorRef{0, 0}, "x")), std::invalid_argument);
}

}  // namespace
}  // namespace gg::runtime
