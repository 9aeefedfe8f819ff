#include "runtime/lemma_selftest.h"

#include <algorithm>
#include <optional>
#include <sstream>
#include <string>

#include "runtime/term_eval.h"
#include "runtime/tolerance.h"
#include "symbolic/extract.h"
#include "symbolic/pattern.h"

namespace gg::runtime {
namespace {

using symbolic::ClassId;
using symbolic::SelfTestCase;
using symbolic::SelfTestLeaf;

// The unit roundoff of the narrowest floating type `term` casts to (0 when it casts to none).
double NarrowestCastRoundoff(const symbolic::RecExpr& term) {
  const symbolic::TensorLanguage& lang = symbolic::TensorLanguage::Get();
  const std::optional<symbolic::OpId> cast = lang.ops().Find("cast");
  double u = 0;
  for (const symbolic::ENode& node : term.nodes) {
    if (!cast || node.op != *cast || node.children.size() != 2) continue;
    const symbolic::ENode& code = term.nodes[node.children[1]];
    if (code.op != lang.num || code.payload < 0 ||
        code.payload > static_cast<int64_t>(ir::DType::kComplex128)) {
      continue;
    }
    u = std::max(u, UnitRoundoff(static_cast<ir::DType>(code.payload)));
  }
  return u;
}

// Whether a and b agree: to 1e-9 for an exact lemma; for one that holds up to rounding (family
// "rounding"), within n * u * M, u the unit roundoff of the narrowest cast of either term, n their
// total number of nodes (each operation rounds at most once, by u relative to the magnitudes it
// sees) and M the largest magnitude of the two values and the leaves (so a sum whose terms cancel
// is held to the size of its terms). A lemma that drops or repeats a term is off by a whole term.
bool Agree(const at::Tensor& a, const at::Tensor& b, double rounding, double leaf_magnitude) {
  if (rounding == 0) return at::allclose(a, b, 1e-9, 1e-9, /*equal_nan=*/true);
  const double magnitude =
      std::max({a.abs().max().item<double>(), b.abs().max().item<double>(), leaf_magnitude});
  return (a - b).abs().max().item<double>() <= rounding * magnitude + 1e-9;
}

// Evaluates every node of every tensor class; returns the number of nodes compared with another
// node of their class, adding a failure for each disagreement or evaluation error.
// `up_to_rounding`: the lemma holds up to the rounding of its casts (Agree).
size_t CheckClasses(const SelfTestCase& c, const std::map<int64_t, at::Tensor>& leaves,
                    bool up_to_rounding, std::vector<std::string>* failures) {
  double leaf_magnitude = 0;
  for (const auto& [id, leaf] : leaves) {
    if (leaf.is_floating_point() && leaf.numel() > 0) {
      leaf_magnitude = std::max(leaf_magnitude, leaf.abs().max().item<double>());
    }
  }
  const symbolic::EGraph& graph = *c.graph;
  symbolic::Extractor extractor(graph, symbolic::AstSize());
  size_t compared = 0;
  for (ClassId id : graph.ClassIds()) {
    if (!(*c.analysis)[id].type) continue;
    std::optional<at::Tensor> first;
    std::string first_text;
    std::optional<symbolic::RecExpr> first_term;
    for (const symbolic::ENode& node : graph.Nodes(id)) {
      std::optional<symbolic::RecExpr> term = symbolic::TermRootedAt(graph, extractor, node);
      if (!term) continue;
      std::string text = term->ToString(graph.ops());
      at::Tensor value;
      try {
        value = std::get<at::Tensor>(EvalTerm(*term, leaves));
      } catch (const std::exception& e) {
        failures->push_back(c.draw + ": cannot evaluate " + text + ": " + e.what());
        continue;
      }
      if (!first) {
        first = value;
        first_text = text;
        first_term = *term;
        continue;
      }
      ++compared;
      // complex values compared as their (real, imag) pairs
      auto as_real = [](const at::Tensor& t) {
        return t.is_complex() ? at::view_as_real(t.resolve_conj()).to(at::kDouble)
                              : t.to(at::kDouble);
      };
      at::Tensor a = as_real(*first), b = as_real(value);
      if (a.sizes() != b.sizes()) {
        std::ostringstream out;
        out << c.draw << ": " << first_text << " has shape " << a.sizes() << " but " << text
            << " has shape " << b.sizes();
        failures->push_back(out.str());
      } else if (!Agree(a, b,
                        up_to_rounding
                            ? std::max(NarrowestCastRoundoff(*first_term),
                                       NarrowestCastRoundoff(*term)) *
                                  static_cast<double>(first_term->nodes.size() + term->nodes.size())
                            : 0.0,
                        leaf_magnitude)) {
        std::ostringstream out;
        out << c.draw << ": " << first_text << " differs from " << text << " (max |difference| "
            << (a - b).abs().max().item<double>() << ")";
        failures->push_back(out.str());
      }
    }
  }
  return compared;
}

}  // namespace

std::map<int64_t, at::Tensor> MakeSelfTestLeaves(const SelfTestCase& c, uint64_t seed) {
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
      case SelfTestLeaf::Kind::kComplex:
        leaves[static_cast<int64_t>(id)] = at::randn(shape, at::kComplexDouble);
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

symbolic::LemmaSelfTestReport SelfTestLemma(const symbolic::Lemma& lemma, uint64_t seeds) {
  symbolic::LemmaSelfTestReport report;
  if (lemma.tests.empty()) {
    report.failures.push_back("no self-test signature (a '#   test ...' line below the rule)");
    return report;
  }
  for (size_t t = 0; t < lemma.tests.size(); ++t) {
    for (uint64_t seed = 0; seed < seeds; ++seed) {
      SelfTestCase c = symbolic::RunLemmaSelfTest(lemma, t, seed);
      ++report.draws;
      const std::string where = "test " + std::to_string(t + 1) + ", " + c.draw;
      if (!c.condition_held) {
        report.failures.push_back(where +
                                  ": the rule does not match its own signature's instance "
                                  "(or its condition fails there)");
        continue;
      }
      if (!c.changed) {
        report.failures.push_back(where + ": applying the rule changed nothing");
        continue;
      }
      for (const std::string& conflict : c.conflicts) {
        report.failures.push_back(where + ": it equates tensors of different types: " + conflict);
      }
      c.draw = where;
      std::vector<std::string> failures;
      size_t compared = CheckClasses(c, MakeSelfTestLeaves(c, seed),
                                     lemma.family == symbolic::kRoundingFamily, &failures);
      report.compared += compared;
      report.failures.insert(report.failures.end(), failures.begin(), failures.end());
      if (compared == 0) {
        report.failures.push_back(where + ": the rule merged nothing that could be compared");
      }
    }
  }
  return report;
}

}  // namespace gg::runtime
