#include "symbolic/tensor_lang.h"

#include <gtest/gtest.h>

namespace gg::symbolic {
namespace {

using ir::DType;
using ir::TensorType;

class TensorLangTest : public ::testing::Test {
 protected:
  TensorLangTest() : graph_(lang_.ops()) {
    analysis_ = &graph_.AddAnalysis(std::make_unique<TensorAnalysis>(leaves_));
  }

  ClassId Leaf(TensorLeaf::Side side, int32_t rank, int32_t node, TensorType type) {
    TensorLeaf leaf{side, rank, ir::TensorRef{node, 0}, std::move(type), "t"};
    return graph_.Add(lang_.Tensor(leaves_.Intern(leaf)));
  }
  ClassId Num(int64_t v) { return graph_.Add(lang_.Num(v)); }
  ClassId Op(const char* name, std::vector<ClassId> children) {
    return graph_.Add(ENode{*lang_.ops().Find(name), 0, std::move(children)});
  }
  const TensorFacts& Facts(ClassId id) { return (*analysis_)[id]; }

  const TensorLanguage& lang_ = TensorLanguage::Get();
  LeafTable leaves_;
  EGraph graph_;
  TensorAnalysis* analysis_ = nullptr;
};

TEST_F(TensorLangTest, ConcatOfDistTensorsIsCleanAndTyped) {
  ClassId a = Leaf(TensorLeaf::Side::kDist, 0, 1, {DType::kFloat32, {4, 3}});
  ClassId b = Leaf(TensorLeaf::Side::kDist, 1, 1, {DType::kFloat32, {5, 3}});
  ClassId cat = Op("concat", {Num(0), a, b});
  ASSERT_TRUE(Facts(cat).type);
  EXPECT_EQ(Facts(cat).type->ToString(), "f32[9, 3]");
  EXPECT_TRUE(Facts(cat).clean);
  ClassId s = Op("slice", {cat, Num(0), Num(4), Num(9)});
  EXPECT_EQ(Facts(s).type->ToString(), "f32[5, 3]");
  EXPECT_TRUE(Facts(s).clean);
}

TEST_F(TensorLangTest, ComputeOpsAndSeqLeavesAreNotClean) {
  ClassId x = Leaf(TensorLeaf::Side::kSeq, 0, 1, {DType::kFloat32, {8, 6}});
  ClassId w = Leaf(TensorLeaf::Side::kDist, 0, 2, {DType::kFloat32, {6, 2}});
  EXPECT_FALSE(Facts(x).clean);
  ClassId mm = Op("mm", {x, w});
  EXPECT_EQ(Facts(mm).type->ToString(), "f32[8, 2]");
  EXPECT_FALSE(Facts(mm).clean);
  // Unioning the S leaf with a clean D expression makes it clean.
  ClassId d = Leaf(TensorLeaf::Side::kDist, 0, 3, {DType::kFloat32, {8, 6}});
  graph_.Union(x, d);
  graph_.Rebuild();
  EXPECT_TRUE(Facts(x).clean);
  EXPECT_FALSE(Facts(x).conflict);
}

TEST_F(TensorLangTest, ShapeRules) {
  ClassId x = Leaf(TensorLeaf::Side::kDist, 0, 1, {DType::kFloat32, {2, 3, 4}});
  EXPECT_EQ(Facts(Op("reshape", {x, Num(6), Num(-1)})).type->ToString(), "f32[6, 4]");
  EXPECT_EQ(Facts(Op("transpose", {x, Num(0), Num(-1)})).type->ToString(), "f32[4, 3, 2]");
  EXPECT_EQ(Facts(Op("permute", {x, Num(2), Num(0), Num(1)})).type->ToString(), "f32[4, 2, 3]");
  EXPECT_EQ(Facts(Op("sum_dim", {x, Num(-1), Num(0)})).type->ToString(), "f32[2, 3]");
  EXPECT_EQ(Facts(Op("max_dim", {x, Num(1), Num(1)})).type->ToString(), "f32[2, 1, 4]");
  ClassId bias = Leaf(TensorLeaf::Side::kDist, 0, 2, {DType::kFloat32, {4}});
  EXPECT_EQ(Facts(Op("add", {x, bias})).type->ToString(), "f32[2, 3, 4]");
  EXPECT_EQ(Facts(Op("lt", {x, bias})).type->ToString(), "b8[2, 3, 4]");
  ClassId y = Leaf(TensorLeaf::Side::kDist, 0, 3, {DType::kFloat32, {2, 4, 5}});
  EXPECT_EQ(Facts(Op("bmm", {x, y})).type->ToString(), "f32[2, 3, 5]");
  ClassId idx = Leaf(TensorLeaf::Side::kDist, 0, 4, {DType::kInt64, {7}});
  ClassId table = Leaf(TensorLeaf::Side::kDist, 0, 5, {DType::kFloat32, {10, 16}});
  EXPECT_EQ(Facts(Op("embedding", {table, idx})).type->ToString(), "f32[7, 16]");
  // Per-expert weights [E, n, k] looked up per token (Mixtral): ids.shape + [n, k].
  ClassId experts = Leaf(TensorLeaf::Side::kDist, 0, 6, {DType::kFloat32, {4, 8, 6}});
  EXPECT_EQ(Facts(Op("embedding", {experts, idx})).type->ToString(), "f32[7, 8, 6]");
}

// expand broadcasts right-aligned as aten::expand: a dim of size 1 repeats, new dims lead, and a
// D tensor broadcast is still a relation (clean).
TEST_F(TensorLangTest, ExpandBroadcastsRightAligned) {
  ClassId row = Leaf(TensorLeaf::Side::kDist, 0, 1, {DType::kFloat32, {3, 1}});
  ClassId wide = Op("expand", {row, Num(3), Num(300)});
  ASSERT_TRUE(Facts(wide).type);
  EXPECT_EQ(Facts(wide).type->ToString(), "f32[3, 300]");
  EXPECT_TRUE(Facts(wide).clean);
  EXPECT_EQ(Facts(Op("expand", {row, Num(2), Num(3), Num(5)})).type->ToString(), "f32[2, 3, 5]");
  EXPECT_EQ(Facts(Op("expand", {row, Num(3), Num(1)})).type->ToString(), "f32[3, 1]");
  // A dim that is not 1 cannot change, and the target cannot drop dims.
  EXPECT_TRUE(Facts(Op("expand", {row, Num(4), Num(300)})).conflict);
  EXPECT_TRUE(Facts(Op("expand", {row, Num(3)})).conflict);
  ClassId seq = Leaf(TensorLeaf::Side::kSeq, 0, 2, {DType::kFloat32, {1}});
  EXPECT_FALSE(Facts(Op("expand", {seq, Num(8)})).clean);
}

TEST_F(TensorLangTest, ConstantsAndEmbeddingGradientsAreTyped) {
  ClassId zero = graph_.Add(lang_.Flt(0.0));
  ClassId zeros =
      Op("full", {zero, Num(static_cast<int64_t>(DType::kBFloat16)), Num(1), Num(4), Num(8)});
  ASSERT_TRUE(Facts(zeros).type);
  EXPECT_EQ(Facts(zeros).type->ToString(), "bf16[1, 4, 8]");
  // A constant reads no D tensor, but it is not a relation op: relations name D tensors only.
  EXPECT_FALSE(Facts(zeros).clean);
  EXPECT_TRUE(Facts(Op("full", {zero, Num(99), Num(2)})).conflict);  // no such dtype
  ClassId x = Leaf(TensorLeaf::Side::kDist, 0, 1, {DType::kFloat32, {2}});
  EXPECT_TRUE(Facts(Op("full", {x, Num(8), Num(2)})).conflict);  // the value must be a number

  ClassId grad = Leaf(TensorLeaf::Side::kDist, 0, 2, {DType::kFloat32, {2, 3, 16}});
  ClassId ids = Leaf(TensorLeaf::Side::kDist, 0, 3, {DType::kInt64, {2, 3}});
  EXPECT_EQ(Facts(Op("embedding_bwd", {grad, ids, Num(10)})).type->ToString(), "f32[10, 16]");
  ClassId other_ids = Leaf(TensorLeaf::Side::kDist, 0, 4, {DType::kInt64, {3, 2}});
  EXPECT_TRUE(Facts(Op("embedding_bwd", {grad, other_ids, Num(10)})).conflict);
  // The gradient of per-expert weights: g [ids..., n, k] -> [rows, n, k].
  ClassId expert_grad = Leaf(TensorLeaf::Side::kDist, 0, 5, {DType::kFloat32, {2, 3, 8, 6}});
  EXPECT_EQ(Facts(Op("embedding_bwd", {expert_grad, ids, Num(4)})).type->ToString(),
            "f32[4, 8, 6]");
  EXPECT_TRUE(Facts(Op("embedding_bwd", {ids, ids, Num(4)})).conflict);  // no dim left for m
}

TEST_F(TensorLangTest, IllTypedTermsAreFlagged) {
  ClassId a = Leaf(TensorLeaf::Side::kDist, 0, 1, {DType::kFloat32, {4, 3}});
  ClassId b = Leaf(TensorLeaf::Side::kDist, 0, 2, {DType::kFloat32, {4, 3}});
  ClassId mm = Op("mm", {a, b});
  EXPECT_TRUE(Facts(mm).conflict);
  EXPECT_NE(Facts(mm).conflict_reason.find("inner dimensions"), std::string::npos);
  ClassId cut = Op("slice", {a, Num(0), Num(2), Num(9)});
  EXPECT_TRUE(Facts(cut).conflict);
}

TEST_F(TensorLangTest, MergingDifferentTypesIsAConflict) {
  ClassId a = Leaf(TensorLeaf::Side::kDist, 0, 1, {DType::kFloat32, {4, 3}});
  ClassId b = Leaf(TensorLeaf::Side::kDist, 0, 2, {DType::kFloat32, {3, 4}});
  graph_.Union(a, b);
  graph_.Rebuild();
  EXPECT_TRUE(Facts(a).conflict);
  EXPECT_NE(Facts(a).conflict_reason.find("f32[4, 3]"), std::string::npos);
}

TEST_F(TensorLangTest, FloatLeavesRoundTrip) {
  EXPECT_EQ(TensorLanguage::FltValue(lang_.Flt(0.17677669529663687).payload),
            0.17677669529663687);
  ClassId f = graph_.Add(lang_.Flt(-10000.0));
  EXPECT_EQ(Facts(f).fconstant, -10000.0);
}

}  // namespace
}  // namespace gg::symbolic

namespace gg::symbolic {
namespace {

TEST_F(TensorLangTest, OpaqueOpsCarryTheirSignatureType) {
  int64_t code = OpaqueSignatures::Get().Intern("aten::arange.start(0, 12)",
                                                TensorType{DType::kInt64, {12}});
  EXPECT_EQ(OpaqueSignatures::Get().Intern("aten::arange.start(0, 12)",
                                           TensorType{DType::kInt64, {12}}),
            code);
  ClassId op = Op("opaque", {Num(code)});
  ASSERT_TRUE(Facts(op).type);
  EXPECT_EQ(Facts(op).type->ToString(), "i64[12]");
  EXPECT_FALSE(Facts(op).clean);
}

TEST_F(TensorLangTest, DropoutMaskIsBoolOfInputShape) {
  ClassId x = Leaf(TensorLeaf::Side::kDist, 0, 1, {DType::kFloat32, {4, 3}});
  ClassId mask = Op("dropout_mask", {x, graph_.Add(lang_.Flt(0.1))});
  EXPECT_EQ(Facts(mask).type->ToString(), "b8[4, 3]");
}

}  // namespace
}  // namespace gg::symbolic
