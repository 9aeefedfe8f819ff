#include "runtime/verify_evidence.h"

#include <exception>
#include <optional>
#include <string>

#include "runtime/check.h"
#include "runtime/check_report.h"
#include "runtime/executor.h"

namespace gg::runtime {

symbolic::NumericEvidence GatherVerifyEvidence(const ir::Graph& s_graph,
                                               const ir::Program& d_program,
                                               const symbolic::SpecResult& spec,
                                               const symbolic::VerifyResult& verify,
                                               uint64_t seed) {
  symbolic::NumericEvidence evidence;
  CheckOptions options;
  options.seed = seed;
  evidence.how = "graphguard check, seed " + std::to_string(seed) + ", cpu";
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
  if (!result.d_failure.empty()) {
    evidence.counterexamples.push_back("D fails on inputs S runs on: " + result.d_failure);
  }
  for (const RelationCheck& c : result.checks) {
    if (c.kind != RelationKind::kExpectedOutput) continue;
    ++evidence.outputs_checked;
    if (c.holds()) {
      ++evidence.outputs_agreeing;
    } else if (c.error.empty()) {
      evidence.counterexamples.push_back(symbolic::RelationToString(c.relation, s_graph) + ": " +
                                         RelationFigures(c));
    }
  }
  for (const auto& [ref, classification] : result.classifications) {
    evidence.classification.push_back(s_graph.ValueName(ref) + ": " + classification.ToString());
  }
  return evidence;
}

}  // namespace gg::runtime
