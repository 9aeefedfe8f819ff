// Tests of cost-based extraction: smallest term, forbidden (infinite-cost) ops, tie-breaking.
#include "symbolic/extract.h"

#include <gtest/gtest.h>

#include "symbolic/rewrite.h"
#include "symbolic/toy_language_testutil.h"

namespace gg::symbolic {
namespace {

using toy::Language;

TEST(ExtractTest, PicksTheSmallestTerm) {
  Language lang;
  RuleContext context{&lang.ops, nullptr, nullptr};
  auto rules = LoadRules("add0: (add ?a 0) => ?a\nmul1: (mul ?a 1) => ?a\n", context);
  EGraph g(lang.ops);
  ClassId e = g.AddExpr(ParseTerm("(neg (add (mul x 1) 0))", lang.ops));
  Runner(g, rules).Run();
  Extractor extractor(g, AstSize());
  auto best = extractor.Extract(e);
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(best->expr.ToString(lang.ops), "(neg x)");
  EXPECT_EQ(best->cost, 2);
  EXPECT_EQ(extractor.Cost(e), 2);
}

TEST(ExtractTest, InfiniteCostForbidsOps) {
  Language lang;
  EGraph g(lang.ops);
  ClassId m = g.AddExpr(ParseTerm("(mul x 2)", lang.ops));
  ClassId s = g.AddExpr(ParseTerm("(shl x 1)", lang.ops));
  ClassId only_mul = g.AddExpr(ParseTerm("(neg (mul y 3))", lang.ops));
  g.Union(m, s);
  g.Rebuild();
  auto no_mul = AdditiveCost([&](const ENode& n) { return n.op == lang.mul ? kInfiniteCost : 1; });
  Extractor extractor(g, no_mul);
  auto best = extractor.Extract(m);
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(best->expr.ToString(lang.ops), "(shl x (num 1))");
  EXPECT_FALSE(extractor.Extract(only_mul).has_value());
  EXPECT_EQ(extractor.Cost(only_mul), kInfiniteCost);
  // Preferring mul instead (cheap) flips the choice.
  Extractor prefer_mul(g, AdditiveCost([&](const ENode& n) { return n.op == lang.shl ? 10 : 1; }));
  EXPECT_EQ(prefer_mul.Extract(m)->expr.ToString(lang.ops), "(mul x (num 2))");
}

TEST(ExtractTest, TiesGoToTheSmallerNodeAndSharedSubtermsAreShared) {
  Language lang;
  EGraph g(lang.ops);
  ClassId e1 = g.AddExpr(ParseTerm("(add (neg b) (neg b))", lang.ops));
  ClassId e2 = g.AddExpr(ParseTerm("(add (neg a) (neg a))", lang.ops));
  g.Union(e1, e2);
  g.Rebuild();
  Extractor extractor(g, AstSize());
  auto best = extractor.Extract(e1);
  ASSERT_TRUE(best.has_value());
  // Equal cost: the add node whose children have smaller class ids ((neg b), added first) wins.
  EXPECT_EQ(best->expr.ToString(lang.ops), "(add (neg b) (neg b))");
  EXPECT_EQ(best->expr.nodes.size(), 3u);  // b, (neg b), add: the DAG shares (neg b)
  EXPECT_EQ(best->cost, 5);                // tree cost counts both uses
}

}  // namespace
}  // namespace gg::symbolic
