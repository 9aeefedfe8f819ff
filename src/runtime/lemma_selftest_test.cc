// Numeric self-tests of the lemma catalogue: for every lemma and signature, several draws (world
// sizes 1..8, uneven pieces): build the LHS instance, apply the lemma (rule or applier) once, then
// evaluate every node of every class on random float64 tensors; all nodes of a class must agree.
// A false lemma merges classes whose nodes differ and fails here.
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

std::map<int64_t, at::Tensor> MakeLeaves(const SelfTestCase& c, uint64_t seed) {
  at::manual_seed(seed);
  std::map<int64_t, at::Tensor> leaves;
  for (size_t id = 0; id < c.leaves->size(); ++id) {
    const auto& type = c.leaves->at(static_cast<int64_t>(id)).type;
    std::vector<int64_t> shape;
    for (const auto& d : type.shape) shape.push_back(d.value());
    const SelfTestLeaf& spec = c.leaf_specs.at(id);
    switch (spec.kind) {
      case SelfTestLeaf::Kind::kReal:
        leaves[static_cast<int64_t>(id)] = at::randn(shape, at::kDouble);
        break;
      case SelfTestLeaf::Kind::kBool:
        leaves[static_cast<int64_t>(id)] = at::randint(0, 2, shape, at::kLong).to(at::kBool);
        break;
      case SelfTestLeaf::Kind::kIndex:
        leaves[static_cast<int64_t>(id)] =
            at::randint(spec.index_low, spec.index_bound, shape, at::kLong);
        break;
      case SelfTestLeaf::Kind::kLhsValue:  // its term over the leaves before it
        leaves[static_cast<int64_t>(id)] = std::get<at::Tensor>(EvalTerm(spec.term, leaves));
        break;
    }
  }
  return leaves;
}

// Evaluates every node of every tensor class; returns the number of nodes compared with another
// node of their class, adding a failure for each disagreement.
size_t CheckClasses(const SelfTestCase& c, const std::map<int64_t, at::Tensor>& leaves) {
  const symbolic::EGraph& graph = *c.graph;
  symbolic::Extractor extractor(graph, symbolic::AstSize());
  size_t compared = 0;
  for (ClassId id : graph.ClassIds()) {
    if (!(*c.analysis)[id].type) continue;
    std::optional<at::Tensor> first;
    std::string first_text;
    for (const symbolic::ENode& node : graph.Nodes(id)) {
      std::optional<symbolic::RecExpr> term = symbolic::TermRootedAt(graph, extractor, node);
      if (!term) continue;
      std::string text = term->ToString(graph.ops());
      at::Tensor value;
      try {
        value = std::get<at::Tensor>(EvalTerm(*term, leaves));
      } catch (const std::exception& e) {
        ADD_FAILURE() << c.draw << ": cannot evaluate " << text << ": " << e.what();
        continue;
      }
      if (!first) {
        first = value;
        first_text = text;
        continue;
      }
      ++compared;
      bool same = first->sizes() == value.sizes() &&
                  at::allclose(first->to(at::kDouble), value.to(at::kDouble), 1e-9, 1e-9,
                               /*equal_nan=*/true);
      EXPECT_TRUE(same) << c.draw << ":\n  " << first_text << "\n  != " << text;
    }
  }
  return compared;
}

TEST(LemmaSelfTest, EveryLemmaHoldsNumerically) {
  const auto& catalogue = symbolic::LemmaCatalogue::Default();
  ASSERT_FALSE(catalogue.lemmas().empty());
  for (const symbolic::Lemma& lemma : catalogue.lemmas()) {
    ASSERT_FALSE(lemma.tests.empty()) << lemma.rule.id << " has no self-test signature";
    for (size_t t = 0; t < lemma.tests.size(); ++t) {
      for (uint64_t seed = 0; seed < 4; ++seed) {
        SCOPED_TRACE(lemma.rule.id + " test " + std::to_string(t) + " seed " +
                     std::to_string(seed));
        SelfTestCase c;
        try {
          c = symbolic::RunLemmaSelfTest(lemma, t, seed);
        } catch (const InputError& e) {
          ADD_FAILURE() << e.what();
          continue;
        }
        EXPECT_TRUE(c.condition_held) << c.draw;
        EXPECT_TRUE(c.changed) << c.draw;
        EXPECT_TRUE(c.conflicts.empty()) << c.draw;
        EXPECT_GT(CheckClasses(c, MakeLeaves(c, seed)), 0u)
            << c.draw << ": the lemma merged nothing that could be compared";
      }
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
  auto leaves = MakeLeaves(c, 0);
  std::vector<at::Tensor> values;
  for (const symbolic::ENode& node : c.graph->Nodes(c.lhs)) {
    auto term = symbolic::TermRootedAt(*c.graph, extractor, node);
    ASSERT_TRUE(term);
    values.push_back(std::get<at::Tensor>(EvalTerm(*term, leaves)));
  }
  ASSERT_EQ(values.size(), 2u);
  EXPECT_FALSE(at::allclose(values[0], values[1], 1e-9, 1e-9));
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
