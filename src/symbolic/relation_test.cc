#include "symbolic/relation.h"

#include <gtest/gtest.h>

#include "util/diagnostic.h"

namespace gg::symbolic {
namespace {

ir::TensorType Type(const std::string& text) {
  std::string why;
  auto t = ir::ParseTensorType(text, &why);
  EXPECT_TRUE(t.has_value()) << why;
  return *t;
}

// A graph that only has inputs, which is all relations need.
ir::Graph InputGraph(int32_t rank, const std::vector<std::pair<std::string, std::string>>& inputs) {
  ir::Graph g;
  g.rank = rank;
  g.file = "rank" + std::to_string(rank) + ".py";
  for (const auto& [name, type] : inputs) {
    ir::Node n;
    n.kind = ir::NodeKind::kInput;
    n.name = name;
    n.outputs.push_back({name, Type(type)});
    g.AddNode(std::move(n));
  }
  return g;
}

ir::Program TwoRanks() {
  ir::Program p;
  for (int r = 0; r < 2; ++r) {
    p.ranks.push_back(InputGraph(r, {{"primals_1", "f32[4, 6]"},
                                     {"arg4_1", "bf16[1024, 1536]"},
                                     {"bias", "f32[6]"},
                                     {"ids", "i64[8]"}}));
  }
  return p;
}

TEST(RelExprTest, PrintsCanonicalText) {
  ir::Program p = TwoRanks();
  RelExpr a0 = RelExpr::Tensor(p, 0, "primals_1");
  RelExpr a1 = RelExpr::Tensor(p, 1, "primals_1");
  EXPECT_EQ(RelExpr::Concat(0, {a0, a1}).ToString(), "concat(0, primals_1@0, primals_1@1)");
  EXPECT_EQ(RelExpr::Slice(RelExpr::Tensor(p, 0, "arg4_1"), 0, 0, 768).ToString(),
            "slice(arg4_1@0, 0, 0, 768)");
  EXPECT_EQ(RelExpr::Scale(0.5, RelExpr::Sum({a0, a1})).ToString(),
            "scale(0.5, sum(primals_1@0, primals_1@1))");
  EXPECT_EQ(RelExpr::Permute(RelExpr::Transpose(a0, 0, 1), {1, 0}).ToString(),
            "permute(transpose(primals_1@0, 0, 1), [1, 0])");
  EXPECT_EQ(RelExpr::Reshape(a0, {-1}).ToString(), "reshape(primals_1@0, [-1])");
}

TEST(RelExprTest, ParsePrintRoundTrip) {
  ir::Program p = TwoRanks();
  const std::vector<std::string> texts = {
      "primals_1@1",
      "concat(0, primals_1@0, primals_1@1)",
      "concat(0, slice(arg4_1@0, 0, 0, 768), slice(arg4_1@1, 0, 0, 768), "
      "slice(arg4_1@0, 0, 768, 896))",
      "sum(primals_1@0, primals_1@1)",
      "max(primals_1@0, primals_1@1)",
      "min(primals_1@0, primals_1@1)",
      "scale(0.25, sum(primals_1@0, primals_1@1))",
      "scale(3, primals_1@0)",
      "reshape(primals_1@0, [2, -1, 3])",
      "expand(bias@0, [3, 6])",
      "expand(reshape(bias@1, [6, 1]), [2, 6, 5])",
      "transpose(primals_1@0, 0, -1)",
      "permute(concat(1, primals_1@0, primals_1@1), [1, 0])",
  };
  for (const std::string& text : texts) {
    RelExpr e = ParseRelExpr(text, p);
    EXPECT_EQ(e.ToString(), text);
    EXPECT_EQ(ParseRelExpr(e.ToString(), p), e) << text;
  }
  // Whitespace is free in the input; the printer normalizes it.
  EXPECT_EQ(ParseRelExpr("concat( 0,primals_1@0 ,  primals_1@1 )", p).ToString(),
            "concat(0, primals_1@0, primals_1@1)");
}

TEST(RelExprTest, EqualityIsStructural) {
  ir::Program p = TwoRanks();
  RelExpr a = ParseRelExpr("concat(0, primals_1@0, primals_1@1)", p);
  RelExpr b = RelExpr::Concat(0, {RelExpr::Tensor(p, 0, "primals_1"),
                                  RelExpr::Tensor(p, 1, "primals_1")});
  EXPECT_EQ(a, b);
  EXPECT_NE(a, ParseRelExpr("concat(1, primals_1@0, primals_1@1)", p));
  EXPECT_NE(a, ParseRelExpr("concat(0, primals_1@1, primals_1@0)", p));
  EXPECT_NE(a, ParseRelExpr("sum(primals_1@0, primals_1@1)", p));
}

TEST(RelExprTest, HashAgreesWithEquality) {
  ir::Program p = TwoRanks();
  RelExprHash hash;
  RelExpr a = ParseRelExpr("concat(0, slice(primals_1@0, 0, 0, 2), primals_1@1)", p);
  RelExpr b = RelExpr::Concat(
      0, {RelExpr::Slice(RelExpr::Tensor(0, *p.rank(0).Find("primals_1"), "other name"), 0, 0, 2),
          RelExpr::Tensor(p, 1, "primals_1")});
  ASSERT_EQ(a, b);  // leaf names are only labels
  EXPECT_EQ(hash(a), hash(b));
  EXPECT_EQ(hash(RelExpr::Scale(0.0, a)), hash(RelExpr::Scale(-0.0, b)));
  EXPECT_NE(hash(a), hash(ParseRelExpr("concat(0, primals_1@1, slice(primals_1@0, 0, 0, 2))", p)));
  EXPECT_NE(hash(a), hash(ParseRelExpr("concat(1, slice(primals_1@0, 0, 0, 2), primals_1@1)", p)));
  EXPECT_EQ(hash(RelExpr()), hash(RelExpr()));
}

TEST(RelExprTest, InfersShapes) {
  ir::Program p = TwoRanks();
  auto type = [&](const std::string& text) {
    std::string why;
    auto t = InferRelType(ParseRelExpr(text, p), p, &why);
    EXPECT_TRUE(t.has_value()) << text << ": " << why;
    return t ? t->ToString() : std::string("<error>");
  };
  EXPECT_EQ(type("primals_1@0"), "f32[4, 6]");
  EXPECT_EQ(type("concat(0, primals_1@0, primals_1@1)"), "f32[8, 6]");
  EXPECT_EQ(type("concat(-1, primals_1@0, primals_1@1)"), "f32[4, 12]");
  EXPECT_EQ(type("slice(arg4_1@0, 0, 768, 896)"), "bf16[128, 1536]");
  EXPECT_EQ(type("concat(0, slice(arg4_1@0, 0, 0, 768), slice(arg4_1@1, 0, 0, 768))"),
            "bf16[1536, 1536]");
  EXPECT_EQ(type("scale(0.5, sum(primals_1@0, primals_1@1))"), "f32[4, 6]");
  EXPECT_EQ(type("reshape(primals_1@0, [2, -1])"), "f32[2, 12]");
  EXPECT_EQ(type("transpose(primals_1@0, 0, 1)"), "f32[6, 4]");
  EXPECT_EQ(type("expand(bias@0, [4, 6])"), "f32[4, 6]");
  EXPECT_EQ(type("expand(reshape(bias@0, [6, 1]), [2, 6, 50])"), "f32[2, 6, 50]");
  EXPECT_EQ(type("permute(reshape(primals_1@0, [2, 2, 6]), [2, 0, 1])"), "f32[6, 2, 2]");
}

TEST(RelExprTest, ShapeErrorsSayWhy) {
  ir::Program p = TwoRanks();
  auto why_of = [&](const std::string& text) {
    std::string why;
    EXPECT_FALSE(InferRelType(ParseRelExpr(text, p), p, &why).has_value()) << text;
    return why;
  };
  EXPECT_NE(why_of("concat(0, primals_1@0, arg4_1@1)").find("must agree"), std::string::npos);
  EXPECT_NE(why_of("concat(2, primals_1@0, primals_1@1)").find("out of range"), std::string::npos);
  EXPECT_NE(why_of("sum(primals_1@0, bias@1)").find("different types"), std::string::npos);
  EXPECT_NE(why_of("slice(primals_1@0, 0, 2, 5)").find("outside dimension 0"), std::string::npos);
  EXPECT_NE(why_of("reshape(primals_1@0, [5, 5])").find("cannot reshape"), std::string::npos);
  EXPECT_NE(why_of("permute(primals_1@0, [0, 0])").find("does not fit"), std::string::npos);
  EXPECT_NE(why_of("transpose(bias@0, 0, 1)").find("out of range"), std::string::npos);
  EXPECT_NE(why_of("expand(bias@0, [4, 5])").find("cannot expand"), std::string::npos);
  EXPECT_NE(why_of("expand(primals_1@0, [6])").find("cannot expand"), std::string::npos);
  // A leaf that points outside the program.
  std::string why;
  EXPECT_FALSE(InferRelType(RelExpr::Tensor(5, ir::TensorRef{0, 0}, "x"), p, &why).has_value());
  EXPECT_NE(why.find("outside the distributed program"), std::string::npos);
}

TEST(RelExprTest, ParseErrorsAreInputErrors) {
  ir::Program p = TwoRanks();
  for (const char* bad :
       {"", "primals_1", "primals_1@2", "nosuch@0", "concat(0, primals_1@0", "frob(primals_1@0)",
        "slice(primals_1@0, 0, 1)", "primals_1@0 extra", "scale(nan, primals_1@0)",
        "reshape(primals_1@0, [2, x])", "expand(bias@0)", "expand(bias@0, 4)"}) {
    try {
      ParseRelExpr(bad, p, "spec.rel", 7);
      ADD_FAILURE() << "no error for '" << bad << "'";
    } catch (const InputError& e) {
      EXPECT_EQ(e.file(), "spec.rel");
      EXPECT_EQ(e.line(), 7);
      EXPECT_NE(e.problem().find("column"), std::string::npos) << e.what();
    }
  }
}

TEST(RelExprTest, DeepNestingIsAnInputErrorNotACrash) {
  ir::Program p = TwoRanks();
  std::string text;
  for (int i = 0; i < 5000; ++i) text += "sum(";
  text += "bias@0";
  for (int i = 0; i < 5000; ++i) text += ")";
  EXPECT_THROW(ParseRelExpr(text, p), InputError);
}

TEST(RelExprTest, RelationPrintsWithSName) {
  ir::Program p = TwoRanks();
  ir::Graph s = InputGraph(0, {{"primals_1", "f32[8, 6]"}});
  Relation rel{*s.Find("primals_1"), ParseRelExpr("concat(0, primals_1@0, primals_1@1)", p),
               "inferred"};
  EXPECT_EQ(RelationToString(rel, s), "primals_1 == concat(0, primals_1@0, primals_1@1)");
}

}  // namespace
}  // namespace gg::symbolic
