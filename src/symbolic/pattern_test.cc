// Tests of pattern parsing, e-matching (incl. variadic list variables) and RHS instantiation.
#include "symbolic/pattern.h"

#include <gtest/gtest.h>

#include "symbolic/toy_language_testutil.h"
#include "util/diagnostic.h"

namespace gg::symbolic {
namespace {

using toy::Language;

int ErrorLine(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const InputError& e) {
    return e.line();
  }
  return -1;
}

std::string ErrorText(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const InputError& e) {
    return e.problem();
  }
  return "";
}

TEST(SExprTest, ParsesListsAtomsAndEllipses) {
  SExpr e = ParseSExpr("(concat ?d (mm ?a ?xs)... ?ys...)", "f", 1);
  ASSERT_TRUE(e.is_list);
  ASSERT_EQ(e.items.size(), 4u);
  EXPECT_TRUE(e.items[2].is_list);
  EXPECT_TRUE(e.items[2].repeated);
  EXPECT_EQ(e.items[3].atom, "?ys");
  EXPECT_TRUE(e.items[3].repeated);
  EXPECT_FALSE(e.items[1].repeated);
}

TEST(SExprTest, ErrorsCarryTheLine) {
  EXPECT_EQ(ErrorLine([] { ParseSExpr("(add ?a (mul ?b ?c)", "f", 7); }), 7);
  EXPECT_NE(ErrorText([] { ParseSExpr("(add ?a ?b))", "f", 1); }).find("unexpected ')'"),
            std::string::npos);
  EXPECT_NE(ErrorText([] { ParseSExpr("", "f", 1); }).find("empty"), std::string::npos);
  EXPECT_NE(ErrorText([] { ParseSExpr("(add a b) c", "f", 1); }).find("trailing"),
            std::string::npos);
  EXPECT_NE(ErrorText([] { ParseSExpr("(... a)", "f", 1); }).find("'...'"), std::string::npos);
}

TEST(PatternTest, RejectsMalformedPatterns) {
  Language lang;
  const OpTable& ops = lang.ops;
  EXPECT_NE(ErrorText([&] { ParseLhs("(frob ?a)", ops); }).find("unknown op 'frob'"),
            std::string::npos);
  EXPECT_NE(ErrorText([&] { ParseLhs("(add ?a)", ops); }).find("takes 2 children, got 1"),
            std::string::npos);
  EXPECT_NE(ErrorText([&] { ParseLhs("(sum ?xs... ?a)", ops); }).find("must be the last"),
            std::string::npos);
  EXPECT_NE(ErrorText([&] { ParseLhs("(add ?xs... ?a)", ops); }).find("fixed-arity"),
            std::string::npos);
  EXPECT_NE(ErrorText([&] { ParseLhs("(sum (neg ?xs)...)", ops); }).find("right-hand sides"),
            std::string::npos);
  EXPECT_NE(ErrorText([&] { ParseLhs("?a", ops); }).find("bare variable"), std::string::npos);
  EXPECT_NO_THROW(ParseLhs("(sum ?xs... )", ops));
  EXPECT_NE(ErrorText([&] { ParseLhs("(num x)", ops); }).find("one integer"), std::string::npos);
  EXPECT_NE(ErrorText([&] { ParseLhs("(sum ?xs (sum ?xs...))", ops); }).find("only once"),
            std::string::npos);
  Pattern lhs = ParseLhs("(sum ?a ?xs...)", ops);
  EXPECT_NE(ErrorText([&] { ParseRhs("(add ?a ?z)", lhs, ops); }).find("unbound variable ?z"),
            std::string::npos);
  EXPECT_NE(ErrorText([&] { ParseRhs("(sum ?xs)", lhs, ops); }).find("needs '...'"),
            std::string::npos);
  EXPECT_NE(ErrorText([&] { ParseRhs("(sum ?a...)", lhs, ops); }).find("not a list variable"),
            std::string::npos);
  EXPECT_NE(ErrorText([&] { ParseRhs("(sum (neg ?a)...)", lhs, ops); }).find("no list variable"),
            std::string::npos);
  EXPECT_NE(ErrorText([&] { ParseRhs("(neg (neg ?xs)...)", lhs, ops); }).find("fixed-arity"),
            std::string::npos);
}

TEST(PatternTest, PrintsBack) {
  Language lang;
  Pattern lhs = ParseLhs("(mm ?a (concat ?d ?xs...))", lang.ops);
  EXPECT_EQ(lhs.ToString(lang.ops), "(mm ?a (concat ?d ?xs...))");
  Pattern rhs = ParseRhs("(concat ?d (mm ?a ?xs)...)", lhs, lang.ops);
  EXPECT_EQ(rhs.ToString(lang.ops), "(concat ?d (mm ?a ?xs)...)");
  EXPECT_EQ(ParseLhs("(mul ?x 0)", lang.ops).ToString(lang.ops), "(mul ?x (num 0))");
}

TEST(MatchTest, RepeatedVariablesMustAgree) {
  Language lang;
  EGraph g(lang.ops);
  ClassId aa = g.AddExpr(ParseTerm("(add a a)", lang.ops));
  g.AddExpr(ParseTerm("(add a b)", lang.ops));
  g.Rebuild();
  Pattern p = ParseLhs("(add ?x ?x)", lang.ops);
  std::vector<Match> matches;
  EXPECT_EQ(Search(g, p, 100, &matches), 1u);
  EXPECT_EQ(matches[0].eclass, g.Find(aa));
  EXPECT_EQ(matches[0].subst.vars[0], g.Lookup({lang.a, 0, {}}));
  EXPECT_EQ(matches[0].node_id, aa);
}

TEST(MatchTest, LiteralsMatchClassesContainingTheConstant) {
  Language lang;
  EGraph g(lang.ops);
  ClassId m0 = g.AddExpr(ParseTerm("(mul x (num 0))", lang.ops));
  ClassId my = g.AddExpr(ParseTerm("(mul a y)", lang.ops));
  g.AddExpr(ParseTerm("(mul x (num 1))", lang.ops));
  g.Rebuild();
  Pattern bare = ParseLhs("(mul ?a 0)", lang.ops);
  Pattern explicit_leaf = ParseLhs("(mul ?a (num 0))", lang.ops);
  std::vector<Match> m1, m2;
  EXPECT_EQ(Search(g, bare, 100, &m1), 1u);
  EXPECT_EQ(Search(g, explicit_leaf, 100, &m2), 1u);
  EXPECT_EQ(m1[0].eclass, g.Find(m0));
  // Once y is known to be 0, (mul a y) matches too.
  g.Union(g.Lookup({lang.y, 0, {}}).value(), g.Add({lang.num, 0, {}}));
  g.Rebuild();
  m1.clear();
  EXPECT_EQ(Search(g, bare, 100, &m1), 2u);
  EXPECT_EQ(m1[0].eclass, g.Find(m0));
  EXPECT_EQ(m1[1].eclass, g.Find(my));
}

TEST(MatchTest, BacktracksOverSeveralNodesPerClass) {
  Language lang;
  EGraph g(lang.ops);
  // Class of `a` also contains (neg b) and (neg c): (neg (neg ?z)) has two matches at (neg a).
  ClassId root = g.AddExpr(ParseTerm("(neg a)", lang.ops));
  ClassId a = g.Lookup({lang.a, 0, {}}).value();
  g.Union(a, g.AddExpr(ParseTerm("(neg b)", lang.ops)));
  g.Union(a, g.AddExpr(ParseTerm("(neg c)", lang.ops)));
  g.Rebuild();
  Pattern p = ParseLhs("(neg (neg ?z))", lang.ops);
  std::vector<Match> matches;
  SearchClass(g, p, root, 100, &matches);
  ASSERT_EQ(matches.size(), 2u);
  EXPECT_EQ(matches[0].subst.vars[0], g.Lookup({lang.b, 0, {}}));
  EXPECT_EQ(matches[1].subst.vars[0], g.Lookup({lang.c, 0, {}}));
  // The limit stops the search early.
  matches.clear();
  EXPECT_EQ(Search(g, p, 1, &matches), 1u);
}

TEST(MatchTest, VariadicListVariables) {
  Language lang;
  EGraph g(lang.ops);
  ClassId s3 = g.AddExpr(ParseTerm("(sum a b c)", lang.ops));
  ClassId s1 = g.AddExpr(ParseTerm("(sum x)", lang.ops));
  g.Rebuild();
  Pattern p = ParseLhs("(sum ?h ?rest...)", lang.ops);
  std::vector<Match> matches;
  ASSERT_EQ(Search(g, p, 100, &matches), 2u);
  uint32_t h = p.VarIndex("h").value(), rest = p.VarIndex("rest").value();
  EXPECT_EQ(matches[0].eclass, g.Find(s3));
  EXPECT_EQ(matches[0].subst.vars[h], g.Lookup({lang.a, 0, {}}));
  EXPECT_EQ(matches[0].subst.lists[rest],
            (std::vector<ClassId>{*g.Lookup({lang.b, 0, {}}), *g.Lookup({lang.c, 0, {}})}));
  EXPECT_EQ(matches[1].eclass, g.Find(s1));
  EXPECT_TRUE(matches[1].subst.lists[rest].empty());
  // Without a list variable, a variadic op matches only its exact child count.
  Pattern two = ParseLhs("(sum ?p ?q)", lang.ops);
  matches.clear();
  EXPECT_EQ(Search(g, two, 100, &matches), 0u);
}

TEST(InstantiateTest, RepetitionZipsListVariables) {
  Language lang;
  EGraph g(lang.ops);
  ClassId e = g.AddExpr(ParseTerm("(mm x (concat (num 1) a b c))", lang.ops));
  g.Rebuild();
  Pattern lhs = ParseLhs("(mm ?w (concat ?d ?xs...))", lang.ops);
  Pattern rhs = ParseRhs("(concat ?d (mm ?w ?xs)...)", lhs, lang.ops);
  std::vector<Match> matches;
  ASSERT_EQ(Search(g, lhs, 10, &matches), 1u);
  auto out = Instantiate(g, rhs, matches[0].subst);
  ASSERT_TRUE(out.has_value());
  g.Union(e, *out);
  g.Rebuild();
  auto expected = g.LookupExpr(ParseTerm("(concat (num 1) (mm x a) (mm x b) (mm x c))", lang.ops));
  ASSERT_TRUE(expected.has_value());
  EXPECT_EQ(*expected, g.Find(e));
}

TEST(InstantiateTest, BareListSpliceAndZipLengthMismatch) {
  Language lang;
  EGraph g(lang.ops);
  g.AddExpr(ParseTerm("(concat (sum a b) (sum x y c))", lang.ops));
  g.Rebuild();
  Pattern lhs = ParseLhs("(concat (sum ?xs...) (sum ?ys...))", lang.ops);
  Pattern splice = ParseRhs("(sum ?ys... ?xs...)", lhs, lang.ops);
  Pattern zip = ParseRhs("(sum (add ?xs ?ys)...)", lhs, lang.ops);
  std::vector<Match> matches;
  ASSERT_EQ(Search(g, lhs, 10, &matches), 1u);
  auto spliced = Instantiate(g, splice, matches[0].subst);
  ASSERT_TRUE(spliced.has_value());
  g.Rebuild();
  EXPECT_EQ(g.Find(*spliced), g.LookupExpr(ParseTerm("(sum x y c a b)", lang.ops)));
  size_t nodes = g.NumNodes();
  EXPECT_FALSE(Instantiate(g, zip, matches[0].subst).has_value());  // lengths 2 and 3
  EXPECT_EQ(g.NumNodes(), nodes);  // nothing was added
}

}  // namespace
}  // namespace gg::symbolic
