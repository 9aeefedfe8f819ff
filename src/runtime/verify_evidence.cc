#include "runtime/verify_evidence.h"

#include <cmath>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>

#include "runtime/check.h"
#include "runtime/check_report.h"
#include "runtime/executor.h"
#include "runtime/lemma_proposal.h"

namespace gg::runtime {
namespace {

// How many times its own tolerance the worst element differs (infinite for a NaN on one side or
// any difference of an exact dtype).
double ToleranceExcess(const Comparison& c) {
  if (c.nan_mismatches > 0) return INFINITY;
  double diff = std::abs(c.actual_at_worst - c.expected_at_worst);
  if (std::isnan(diff)) return INFINITY;
  if (c.tolerance_at_worst <= 0) return diff > 0 ? INFINITY : 0.0;
  return diff / c.tolerance_at_worst;
}

std::string ExcessText(double excess) {
  if (std::isinf(excess)) return "beyond any multiple of";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3gx", excess);
  return buffer;
}

}  // namespace

symbolic::NumericEvidence GatherVerifyEvidence(const ir::Graph& s_graph,
                                               const ir::Program& d_program,
                                               const symbolic::SpecResult& spec,
                                               const symbolic::VerifyResult& verify, uint64_t seed,
                                               const std::vector<at::Tensor>* s_inputs,
                                               const std::string& source) {
  symbolic::NumericEvidence evidence;
  CheckOptions options;
  options.seed = seed;
  evidence.how = "graphguard check, seed " + std::to_string(seed) + ", cpu";
  if (s_inputs != nullptr) {
    options.s_inputs = *s_inputs;
    options.s_inputs_note = source + " (not drawn)";
    evidence.how = "graphguard check on " + source + ", cpu";
  }
  // The S operator where the proof stopped: its tensors are classified by fingerprints, which
  // tells what they equal over D when the values agree.
  std::optional<ir::NodeId> stopped;
  if (verify.first_failure) {
    stopped = verify.nodes.at(*verify.first_failure).s_node;
  } else {
    for (const symbolic::OutputCheck& c : verify.outputs) {
      if (c.implied) continue;
      stopped = c.expected.s_tensor.node;
      break;
    }
  }
  if (stopped && s_graph.node(*stopped).kind == ir::NodeKind::kOperator) {
    options.classify = TensorOutputs(s_graph, *stopped);
  }
  CheckResult result;
  try {
    result = RunCheck(s_graph, d_program, spec, {}, options);
  } catch (const std::exception& e) {
    evidence.error = ErrorText(e);
    return evidence;
  }
  // An assumed relation (a cut point) that does not hold makes the spec's premise false: the
  // outputs may then differ without D being wrong.
  for (const RelationCheck& c : result.checks) {
    if (c.kind != RelationKind::kAssumed || c.holds()) continue;
    evidence.error = "the spec's assumed relation " +
                     symbolic::RelationToString(c.relation, s_graph) +
                     " does not hold numerically (" + RelationFigures(c) + ")";
    return evidence;
  }
  if (!result.d_failure.empty()) {
    evidence.counterexamples.push_back("D fails on inputs S runs on: " + result.d_failure);
  }
  for (const RelationCheck& c : result.checks) {
    if (c.kind != RelationKind::kExpectedOutput) continue;
    ++evidence.outputs_checked;
    if (c.holds()) {
      ++evidence.outputs_agreeing;
      continue;
    }
    if (!c.error.empty()) {
      ++evidence.outputs_unevaluated;
      continue;
    }
    double excess = ToleranceExcess(c.comparison);
    std::string text = symbolic::RelationToString(c.relation, s_graph) + ": " + RelationFigures(c) +
                       "; " + ExcessText(excess) + " its tolerance";
    if (excess >= symbolic::kDecisiveExcess ||
        c.comparison.out_of_tolerance > symbolic::kMarginalElements) {
      evidence.counterexamples.push_back(std::move(text));
    } else {
      evidence.marginal.push_back(std::move(text));
    }
  }
  std::vector<std::pair<ir::TensorRef, symbolic::RelExpr>> matching;
  for (const auto& [ref, classification] : result.classifications) {
    evidence.classification.push_back(s_graph.ValueName(ref) + ": " + classification.ToString());
    if (classification.kind == NumericClassification::Kind::kMissingLemma &&
        classification.closest) {
      for (const symbolic::RelExpr& e : classification.closest->exprs) matching.push_back({ref, e});
    }
  }
  // The expected outputs agree and the stopped tensor equals a D expression: propose the lemma.
  if (stopped && !matching.empty() && evidence.counterexamples.empty()) {
    for (const LemmaProposal& p :
         ProposeLemmas(s_graph, d_program, spec, verify, *stopped, matching)) {
      evidence.proposals.push_back(p.Text());
    }
  }
  return evidence;
}

symbolic::NumericGuide GatherNumericGuide(const ir::Graph& s_graph, const ir::Program& d_program,
                                          const symbolic::SpecResult& spec, uint64_t seed) {
  symbolic::NumericGuide guide;
  CheckOptions options;
  options.seed = seed;
  options.match_all = true;
  // A wrong hint costs only time: the floor finds the relations a backward's rounding blurs.
  options.match.float_floor = kLooseFloatFloor;
  options.match.distinct_slices = true;
  guide.how = "graphguard check, seed " + std::to_string(seed) + ", cpu";
  for (size_t i = 0; i < s_graph.nodes.size(); ++i) {
    const ir::NodeId id = static_cast<ir::NodeId>(i);
    if (s_graph.node(id).kind != ir::NodeKind::kOperator) continue;
    for (ir::TensorRef ref : TensorOutputs(s_graph, id)) options.classify.push_back(ref);
  }
  try {
    guide.matches = RunCheck(s_graph, d_program, spec, {}, options).matches;
  } catch (const std::exception& e) {
    guide.error = ErrorText(e);
  }
  return guide;
}

}  // namespace gg::runtime
