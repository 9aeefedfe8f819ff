#include "ir/shape.h"

#include <gtest/gtest.h>

namespace gg::ir {
namespace {

TEST(ShapeTest, ParsesAnnotations) {
  std::string why;
  auto t = ParseTensorType("f32[8, 1536, 768]", &why);
  ASSERT_TRUE(t) << why;
  EXPECT_EQ(t->dtype, DType::kFloat32);
  EXPECT_EQ(t->shape, (Shape{8, 1536, 768}));
  EXPECT_EQ(t->ToString(), "f32[8, 1536, 768]");
  auto scalar = ParseTensorType("i64[]", &why);
  ASSERT_TRUE(scalar);
  EXPECT_TRUE(scalar->shape.empty());
  auto sym = ParseTensorType("bf16[s0, 128]", &why);
  ASSERT_TRUE(sym);
  EXPECT_FALSE(sym->shape[0].is_static());
  EXPECT_EQ(sym->ToString(), "bf16[s0, 128]");
}

TEST(ShapeTest, RejectsMalformedAnnotations) {
  std::string why;
  EXPECT_FALSE(ParseTensorType("q32[8]", &why));
  EXPECT_NE(why.find("unknown dtype"), std::string::npos);
  EXPECT_FALSE(ParseTensorType("f32[8,", &why));
  EXPECT_FALSE(ParseTensorType("f32[8,,2]", &why));
  // Issue 19: a negative extent was read as a symbol named "-1"; an element count that wraps in
  // 64 bits made a view of 2^62 x 4 elements f32[0].
  EXPECT_FALSE(ParseTensorType("f32[-1, 6]", &why));
  EXPECT_NE(why.find("negative dimension '-1'"), std::string::npos) << why;
  EXPECT_FALSE(ParseTensorType("f32[(-1), 6]", &why));
  EXPECT_NE(why.find("bad dimension '(-1)'"), std::string::npos) << why;
  EXPECT_FALSE(ParseTensorType("f32[4611686018427387904, 4]", &why));
  EXPECT_NE(why.find("overflows a 64-bit integer"), std::string::npos) << why;
  EXPECT_FALSE(ParseTensorType("f32[0, 4611686018427387904, 4]", &why));
  EXPECT_TRUE(ParseTensorType("f32[0, 4611686018427387904]", &why)) << why;
  EXPECT_TRUE(ParseTensorType("f32[s0-1, 6]", &why)) << why;
}

TEST(ShapeTest, StaticArithmeticOverflowThrows) {
  const Dim big(int64_t{1} << 62);
  EXPECT_THROW(big * Dim(4), DimOverflow);
  EXPECT_THROW(big + big, DimOverflow);
  EXPECT_THROW(Dim(INT64_MIN) - Dim(1), DimOverflow);
  EXPECT_THROW(Dim(INT64_MIN) / Dim(-1), DimOverflow);
  EXPECT_THROW(Dim(4) / Dim(0), DimOverflow);
  EXPECT_THROW(NumElements({big, 4}), DimOverflow);
  EXPECT_EQ(NumElements({big, 1}), big);
}

TEST(ShapeTest, SymbolicArithmetic) {
  Dim s = Dim::Symbol("s0");
  EXPECT_EQ((s * Dim(1)).ToString(), "s0");
  EXPECT_EQ((s * Dim(8)).ToString(), "s0*8");
  EXPECT_EQ(((s * Dim(8)) / Dim(8)).ToString(), "(s0*8)/8");
  EXPECT_EQ(NumElements({2, 3, 4}), Dim(24));
  EXPECT_EQ(Dim(7) / Dim(2), Dim(3));
  EXPECT_EQ(Dim(-7) / Dim(2), Dim(-4));
}

TEST(ShapeTest, WrapDim) {
  EXPECT_EQ(WrapDim(-1, 3), 2);
  EXPECT_EQ(WrapDim(0, 0), 0);
  EXPECT_FALSE(WrapDim(3, 3));
  EXPECT_FALSE(WrapDim(-4, 3));
}

TEST(DTypeTest, NamesAndPromotion) {
  EXPECT_EQ(ParseDType("torch.float32"), DType::kFloat32);
  EXPECT_EQ(ParseDType("torch.int"), DType::kInt32);
  EXPECT_EQ(ParseDType("b8"), DType::kBool);
  EXPECT_EQ(TorchName(DType::kBFloat16), "torch.bfloat16");
  EXPECT_EQ(PromoteTypes(DType::kInt64, DType::kFloat32), DType::kFloat32);
  EXPECT_EQ(PromoteTypes(DType::kBool, DType::kInt64), DType::kInt64);
  EXPECT_EQ(PromoteTypes(DType::kFloat16, DType::kBFloat16), DType::kFloat32);
}

}  // namespace
}  // namespace gg::ir
