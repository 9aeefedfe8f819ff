// Finding: the facts of a VIOLATION or UNKNOWN verdict that the SARIF and JUnit reports share
// (finding.h).
#include "report/finding.h"

#include "report/verify_report.h"

namespace gg::report {

std::string VerdictRuleId(const symbolic::VerifyResult& result) {
  switch (result.verdict) {
    case symbolic::Verdict::kRefines:
      return "";
    case symbolic::Verdict::kViolation:
      return kRuleViolation;
    case symbolic::Verdict::kUnknown:
      break;
  }
  // Verify sets a cause on every UNKNOWN; were one missing, "no-relation" is the reading that
  // claims least (nothing was shown either way).
  symbolic::UnknownCause cause = result.unknown_cause == symbolic::UnknownCause::kNone
                                     ? symbolic::UnknownCause::kNoRelation
                                     : result.unknown_cause;
  return kRuleUnknownPrefix + std::string(symbolic::UnknownCauseName(cause));
}

std::optional<VerifyFinding> FindingOf(const symbolic::VerifyResult& result,
                                       const ir::Graph& s_graph) {
  std::optional<Localization> where = Localize(result);
  if (!where) return std::nullopt;
  VerifyFinding f;
  f.verdict = std::string(symbolic::VerdictName(result.verdict));
  f.rule_id = VerdictRuleId(result);
  if (result.unknown_cause != symbolic::UnknownCause::kNone) {
    f.cause = std::string(symbolic::UnknownCauseName(result.unknown_cause));
  }
  f.verdict_line = VerdictLine(result);
  const ir::Node& node = s_graph.node(where->s_node);
  f.s_node = node.name;
  f.s_operator = node.kind == ir::NodeKind::kOperator ? node.op.ToString() : "graph input";
  for (const std::string& name : OperatorOutputNames(s_graph, where->s_node)) {
    f.produces += (f.produces.empty() ? "" : ", ") + name;
  }
  f.s_graph_file = s_graph.file;
  f.graph_line = node.def_line;
  f.source = node.source;
  if (where->outcome != nullptr) {
    f.status = std::string(symbolic::NodeStatusName(where->outcome->status));
  }
  f.why = where->why;
  if (where->output_index) {
    f.failed_output =
        symbolic::RelationToString(result.outputs[*where->output_index].expected, s_graph);
  }
  for (const std::string& name : OperatorInputNames(s_graph, where->s_node)) {
    auto it = result.relations.find(name);
    if (it == result.relations.end() || it->second.empty()) {
      f.inputs_without_relation.push_back(name);
      continue;
    }
    for (const symbolic::InferredRelation& r : it->second) {
      f.input_relations.push_back(symbolic::RelationToString(r.relation, s_graph));
    }
  }
  if (result.evidence) {
    const symbolic::NumericEvidence& e = *result.evidence;
    f.has_evidence = true;
    f.evidence_how = e.how;
    f.evidence_error = e.error;
    f.counterexamples = e.counterexamples;
    f.classification = e.classification;
    f.outputs_checked = e.outputs_checked;
    f.outputs_agreeing = e.outputs_agreeing;
  }
  return f;
}

std::string FindingWhere(const VerifyFinding& f) {
  if (!f.source.empty()) return f.source.ToString();
  return "S graph " + f.s_graph_file + (f.graph_line > 0 ? ":" + std::to_string(f.graph_line) : "");
}

std::string FindingText(const VerifyFinding& f, size_t max_relations, bool with_verdict_line) {
  std::string text = with_verdict_line ? f.verdict_line + "\n" : "";
  text += "S operator: " + f.s_operator + " -> " + f.produces + " (node " + f.s_node;
  if (f.graph_line > 0) text += ", line " + std::to_string(f.graph_line) + " of " + f.s_graph_file;
  text += ")\n";
  text +=
      "source: " + (f.source.empty() ? std::string("(not recorded)") : f.source.ToString()) + "\n";
  if (!f.source.code.empty()) text += "code: " + f.source.code + "\n";
  if (!f.cause.empty()) text += "proof stopped: " + f.cause + "\n";
  if (!f.failed_output.empty()) text += "failed: expected output " + f.failed_output + "\n";
  if (!f.why.empty()) text += "why: " + f.why + "\n";
  if (!f.input_relations.empty() || !f.inputs_without_relation.empty()) {
    text += "relations of the operator's inputs:";
    size_t shown = 0;
    for (const std::string& r : f.input_relations) {
      if (shown == max_relations) break;
      text += (shown++ ? "; " : " ") + r;
    }
    if (f.input_relations.size() > shown) {
      text += "; and " + std::to_string(f.input_relations.size() - shown) + " more";
    }
    for (const std::string& name : f.inputs_without_relation) {
      text += (shown++ ? "; " : " ") + name + ": no relation";
    }
    text += "\n";
  }
  if (f.has_evidence) {
    text += "numeric evidence: " + f.evidence_how;
    if (!f.evidence_error.empty()) {
      text += ": no evidence: " + f.evidence_error + "\n";
    } else {
      text += ": " + std::to_string(f.outputs_agreeing) + " of " +
              std::to_string(f.outputs_checked) + " expected relations hold\n";
    }
    for (const std::string& c : f.counterexamples) text += "counterexample: " + c + "\n";
    for (const std::string& c : f.classification) text += "equals: " + c + "\n";
  }
  text.pop_back();  // the trailing newline
  return text;
}

}  // namespace gg::report
