// Numeric self-tests of the lemma catalogue (runtime/lemma_selftest.h): every lemma, every
// signature, four draws (world sizes 1..8, uneven pieces), all nodes of each class equal on random
// float64 tensors; and the harness itself must catch a false lemma and an uncheckable one.
#include "runtime/lemma_selftest.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <bit>
#include <map>
#include <string>
#include <vector>

#include "runtime/term_eval.h"
#include "symbolic/extract.h"
#include "symbolic/lemma_catalogue.h"
#include "symbolic/pattern.h"
#include "util/diagnostic.h"

namespace gg::runtime {
namespace {

using symbolic::ClassId;
using symbolic::SelfTestCase;
using symbolic::SelfTestLeaf;

TEST(LemmaSelfTest, EveryLemmaHoldsNumerically) {
  const auto& catalogue = symbolic::LemmaCatalogue::Default();
  ASSERT_FALSE(catalogue.lemmas().empty());
  for (const symbolic::Lemma& lemma : catalogue.lemmas()) {
    ASSERT_FALSE(lemma.tests.empty()) << lemma.rule.id << " has no self-test signature";
    symbolic::LemmaSelfTestReport report;
    try {
      report = SelfTestLemma(lemma);
    } catch (const InputError& e) {
      ADD_FAILURE() << e.what();
      continue;
    }
    EXPECT_EQ(report.draws, 4 * lemma.tests.size()) << lemma.rule.id;
    for (const std::string& failure : report.failures) {
      ADD_FAILURE() << lemma.rule.id << ": " << failure;
    }
  }
}

// The harness itself must catch a false lemma (here: exp distributing over a sum over ranks).
TEST(LemmaSelfTest, AFalseLemmaFails) {
  auto bad = symbolic::LemmaCatalogue::Load(
      {{"bad.rules",
        "# exp(sum x) = sum exp(x)   (false)\n"
        "exp-of-sumr: (exp (sumr ?xs...)) => (sumr (exp ?xs)...)\n"
        "#   test W in 2..4; ?xs: [a, b]\n"}});
  SelfTestCase c = symbolic::RunLemmaSelfTest(bad.lemmas()[0], 0, 0);
  ASSERT_TRUE(c.changed);
  // Evaluate the merged class directly: its two nodes must differ.
  symbolic::Extractor extractor(*c.graph, symbolic::AstSize());
  auto leaves = MakeSelfTestLeaves(c, 0);
  std::vector<at::Tensor> values;
  for (const symbolic::ENode& node : c.graph->Nodes(c.lhs)) {
    auto term = symbolic::TermRootedAt(*c.graph, extractor, node);
    ASSERT_TRUE(term);
    values.push_back(std::get<at::Tensor>(EvalTerm(*term, leaves)));
  }
  ASSERT_EQ(values.size(), 2u);
  EXPECT_FALSE(at::allclose(values[0], values[1], 1e-9, 1e-9));
  // ... and SelfTestLemma reports it, naming both terms.
  symbolic::LemmaSelfTestReport report = SelfTestLemma(bad.lemmas()[0]);
  EXPECT_EQ(report.draws, 4u);
  ASSERT_FALSE(report.failures.empty());
  EXPECT_NE(report.failures[0].find("differs from"), std::string::npos) << report.failures[0];
  EXPECT_NE(report.failures[0].find("(exp (sumr"), std::string::npos) << report.failures[0];
}

// rounding.rules' lemmas hold up to the rounding of their casts: compared within that rounding,
// cast-of-sumr passes; the same rule in another family (compared to 1e-9) fails, so the casts do
// round in the self-test; and a rounding lemma that drops a term fails despite the tolerance.
TEST(LemmaSelfTest, RoundingLemmasAreComparedWithinTheCastsRounding) {
  const std::string sum_of_casts =
      "# cast(sum x) = sum cast(x)   up to rounding\n"
      "cast-of-sumr: (cast (sumr ?xs...) ?t) => (sumr (cast ?xs ?t)...) if float-cast\n"
      "#   test W in 2..4; ?xs: [a, m]; ?t = 7\n";
  auto rounding = symbolic::LemmaCatalogue::Load({{"rounding.rules", sum_of_casts}});
  symbolic::LemmaSelfTestReport report = SelfTestLemma(rounding.lemmas()[0]);
  EXPECT_TRUE(report.failures.empty()) << report.failures[0];
  EXPECT_GT(report.compared, 0u);

  auto exact = symbolic::LemmaCatalogue::Load({{"exact.rules", sum_of_casts}});
  report = SelfTestLemma(exact.lemmas()[0]);
  ASSERT_FALSE(report.failures.empty());
  EXPECT_NE(report.failures[0].find("differs from"), std::string::npos) << report.failures[0];

  auto dropped = symbolic::LemmaCatalogue::Load(
      {{"rounding.rules",
        "# cast(x + y) = cast(x)   (false: y dropped)\n"
        "cast-drops-y: (cast (add ?x ?y) ?t) => (cast ?x ?t) if float-cast\n"
        "#   test ?x: [a, m]; ?y: [a, m]; ?t = 7\n"}});
  report = SelfTestLemma(dropped.lemmas()[0]);
  ASSERT_FALSE(report.failures.empty());
  EXPECT_NE(report.failures[0].find("differs from"), std::string::npos) << report.failures[0];
}

// float-cast refuses casts to integers: a rounding lemma never applies to a truncation.
TEST(LemmaSelfTest, RoundingLemmasRefuseIntegerCasts) {
  auto lemmas = symbolic::LemmaCatalogue::Load(
      {{"rounding.rules",
        "# cast(sum x) = sum cast(x)\n"
        "cast-of-sumr: (cast (sumr ?xs...) ?t) => (sumr (cast ?xs ?t)...) if float-cast\n"
        "#   test W in 2..4; ?xs: [a, m]; ?t = 5\n"}});
  SelfTestCase c = symbolic::RunLemmaSelfTest(lemmas.lemmas()[0], 0, 0);
  EXPECT_FALSE(c.condition_held);
}

// A lemma without a signature cannot be checked: reported, never passed.
TEST(LemmaSelfTest, ALemmaWithoutASignatureFails) {
  auto lemmas = symbolic::LemmaCatalogue::Load(
      {{"user.rules", "# no signature\nneg-neg: (neg (neg ?x)) => ?x\n"}});
  ASSERT_EQ(lemmas.lemmas().size(), 1u);
  symbolic::LemmaSelfTestReport untested = SelfTestLemma(lemmas.lemmas()[0]);
  EXPECT_EQ(untested.draws, 0u);
  ASSERT_EQ(untested.failures.size(), 1u);
  EXPECT_NE(untested.failures[0].find("no self-test signature"), std::string::npos);
}

TEST(TermEvalTest, EvaluatesRelationsAndComputeOps) {
  const auto& ops = symbolic::TensorLanguage::Get().ops();
  std::map<int64_t, at::Tensor> leaves{{0, at::arange(6, at::kDouble).reshape({2, 3})},
                                       {1, at::ones({2, 3}, at::kDouble)}};
  auto eval = [&](const char* text) {
    return std::get<at::Tensor>(EvalTerm(symbolic::ParseTerm(text, ops), leaves));
  };
  EXPECT_EQ(eval("(concat 0 (tensor 0) (tensor 1))").sizes(), at::IntArrayRef({4, 3}));
  EXPECT_TRUE(at::equal(eval("(slice (tensor 0) 1 1 3)"),
                        at::tensor({1.0, 2.0, 4.0, 5.0}, at::kDouble).reshape({2, 2})));
  EXPECT_TRUE(at::equal(eval("(sumr (tensor 0) (tensor 1))"), leaves[0] + 1));
  const std::string half = "(flt " + std::to_string(std::bit_cast<int64_t>(0.5)) + ")";
  EXPECT_TRUE(at::allclose(eval(("(scale (tensor 0) " + half + ")").c_str()), leaves[0] * 0.5));
  EXPECT_TRUE(at::equal(eval(("(lt (tensor 0) " + half + ")").c_str()), leaves[0] < 0.5));
  EXPECT_TRUE(at::equal(eval("(sum_dim (tensor 0) 1 0)"), at::tensor({3.0, 12.0}, at::kDouble)));
  EXPECT_THROW(EvalTerm(symbolic::ParseTerm("(tensor 7)", ops), leaves), TermEvalError);
}

}  // namespace
}  // namespace gg::runtime
