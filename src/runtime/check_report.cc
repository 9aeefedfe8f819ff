#include "runtime/check_report.h"

#include <cstdio>
#include <sstream>

namespace gg::runtime {
namespace {

std::string Number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3g", value);
  return buffer;
}

std::string Producer(const ir::Graph& s_graph, const symbolic::Relation& relation) {
  const ir::Node& node = s_graph.node(relation.s_tensor.node);
  std::string text = node.kind == ir::NodeKind::kOperator ? node.op.ToString() : "input";
  if (!node.source.file.empty()) {
    text += " at " + node.source.file + ":" + std::to_string(node.source.line);
  }
  if (node.def_line > 0) text += ", " + s_graph.file + ":" + std::to_string(node.def_line);
  return text;
}

std::string Status(const RelationCheck& c) {
  if (!c.error.empty()) return "UNKNOWN";
  return c.holds() ? "holds" : "FAILS";
}

}  // namespace

std::string RelationFigures(const RelationCheck& c) {
  if (!c.error.empty()) return "not evaluated: " + c.error;
  const Comparison& m = c.comparison;
  std::string text = "max |S-D| " + Number(m.max_abs_error) + " (rel " + Number(m.max_rel_error) +
                     " of max |S| " + Number(m.expected_scale) + "), tolerance " +
                     Number(m.tolerance);
  if (m.holds && m.tolerance_at_worst != m.tolerance) {
    text += " (" + Number(m.tolerance_at_worst) +
            " at the largest difference, where |S| is above "
            "the RMS " +
            Number(m.magnitude) + ")";
  }
  if (!m.holds) {
    text += "; worst at " + IndexText(m.worst_index) + ": S " + Number(m.expected_at_worst) +
            ", D " + Number(m.actual_at_worst);
    if (m.tolerance_at_worst != m.tolerance) {
      text += " (tolerance there " + Number(m.tolerance_at_worst) + ": |S| above the RMS " +
              Number(m.magnitude) + ")";
    }
    text += "; " + std::to_string(m.out_of_tolerance) + " of " + std::to_string(m.elements) +
            " elements beyond tolerance";
    if (m.nan_mismatches) text += " (" + std::to_string(m.nan_mismatches) + " NaN on one side)";
  }
  return text;
}

std::string CheckOutcome(const CheckResult& result) {
  if (!result.d_failure.empty()) return "FAILS";
  bool unknown = false;
  for (const RelationCheck& c : result.checks) {
    if (!c.error.empty()) {
      unknown = true;
    } else if (!c.holds()) {
      return "FAILS";
    }
  }
  return unknown || result.checks.empty() ? "UNKNOWN" : "HOLDS";
}

std::string FormatCheckText(const CheckResult& result, const ir::Graph& s_graph,
                            const CheckRunInfo& info) {
  std::ostringstream out;
  size_t holds = 0, fails = 0, unknown = 0;
  for (const RelationCheck& c : result.checks) {
    (c.error.empty() ? (c.holds() ? holds : fails) : unknown) += 1;
  }
  out << "check: " << CheckOutcome(result) << " (" << holds << " of " << result.checks.size()
      << " relations hold";
  if (fails) out << ", " << fails << " fail";
  if (unknown) out << ", " << unknown << " not evaluated";
  out << ")\n";
  if (!result.d_failure.empty()) {
    out << "D fails to execute on inputs S runs on:\n  " << result.d_failure << "\n";
  }
  if (result.first_failure) {
    const RelationCheck& c = result.checks[*result.first_failure];
    out << "first failure (S topological order): " << s_graph.ValueName(c.relation.s_tensor)
        << " = " << Producer(s_graph, c.relation) << "\n  "
        << symbolic::RelationToString(c.relation, s_graph) << "  [" << RelationKindName(c.kind)
        << "]\n  " << RelationFigures(c) << "\n";
  }
  for (const auto& [ref, classification] : result.classifications) {
    out << "numeric classification of " << s_graph.ValueName(ref)
        << " (not related by verify): " << classification.ToString() << "\n";
  }
  out << "\nexpected outputs:\n";
  for (const RelationCheck& c : result.checks) {
    if (c.kind != RelationKind::kExpectedOutput) continue;
    out << "  " << Status(c) << "  " << symbolic::RelationToString(c.relation, s_graph)
        << "\n      " << RelationFigures(c) << "\n";
  }
  bool any_other = false;
  for (const RelationCheck& c : result.checks) {
    if (c.kind == RelationKind::kExpectedOutput || c.holds()) continue;
    if (!any_other) out << "\nother relations that do not hold:\n";
    any_other = true;
    out << "  " << Status(c) << "  " << symbolic::RelationToString(c.relation, s_graph) << "  ["
        << RelationKindName(c.kind) << "]\n      " << RelationFigures(c) << "\n";
  }
  out << "\n";
  auto row = [&](const std::string& key, const std::string& value) {
    out << "  " << key << std::string(key.size() < 12 ? 12 - key.size() : 1, ' ') << value << "\n";
  };
  row("S", info.seq);
  std::string dist;
  for (const std::string& d : info.dist) dist += (dist.empty() ? "" : " ") + d;
  row("D", dist);
  row("relations", info.relations);
  if (!info.from_verify.empty()) {
    row("verify", info.from_verify + " (" + info.verify_verdict + ")");
  }
  if (!info.resize.empty()) row("resized", info.resize);
  if (!info.resize_dist.empty()) row("resized D", info.resize_dist);
  if (!info.memory.empty()) row("memory", info.memory);
  row("inputs", "seed " + std::to_string(result.seed) + ", " + result.random_mode);
  row("device", result.device);
  row("collectives", result.collectives.empty() || result.collectives_note.empty()
                         ? result.collectives
                         : result.collectives + " (" + result.collectives_note + ")");
  if (result.passes > 1) {
    row("passes",
        std::to_string(result.passes) + " (D's kept tensors split to fit the memory budget)");
  }
  for (const std::string& note : result.input_notes) row("", note);
  if (info.timing) {
    row("time", "D " + Number(result.seconds_d) + " s, S " + Number(result.seconds_s) +
                    " s, perturbed S " + Number(result.seconds_reference) + " s");
  }
  return out.str();
}

nlohmann::ordered_json CheckReportJson(const CheckResult& result, const ir::Graph& s_graph,
                                       const CheckRunInfo& info) {
  nlohmann::ordered_json j;
  j["schema"] = kCheckSchemaName;
  j["schema_version"] = kCheckSchemaVersion;
  j["tool"] = info.tool;
  j["inputs"] = {
      {"seq", info.seq},
      {"dist", info.dist},
      {"relations", info.relations},
      {"from_verify", info.from_verify.empty() ? nlohmann::ordered_json(nullptr)
                                               : nlohmann::ordered_json(info.from_verify)},
      {"resize", info.resize},
      {"resize_dist", info.resize_dist}};
  // Only when the memory budget resized the run (docs/report-format.md), so other reports keep
  // their keys.
  if (!info.memory.empty()) j["memory"] = info.memory;
  j["seed"] = result.seed;
  j["random"] = result.random_mode;
  j["device"] = result.device;
  j["collectives"] = result.collectives;
  j["input_notes"] = result.input_notes;
  j["passes"] = result.passes;
  j["outcome"] = CheckOutcome(result);
  j["d_failure"] = result.d_failure.empty() ? nlohmann::ordered_json(nullptr)
                                            : nlohmann::ordered_json(result.d_failure);
  auto check_json = [&](const RelationCheck& c) {
    nlohmann::ordered_json o;
    const Comparison& m = c.comparison;
    o["s_tensor"] = s_graph.ValueName(c.relation.s_tensor);
    o["relation"] = symbolic::RelationToString(c.relation, s_graph);
    o["kind"] = std::string(RelationKindName(c.kind));
    o["status"] = c.error.empty() ? (c.holds() ? "holds" : "fails") : "not_evaluated";
    o["error"] = c.error;
    o["max_abs_error"] = m.max_abs_error;
    o["max_rel_error"] = m.max_rel_error;
    o["expected_scale"] = m.expected_scale;
    o["tolerance"] = m.tolerance;
    o["magnitude"] = m.magnitude;
    o["tolerance_at_worst"] = m.tolerance_at_worst;
    o["noise"] = c.noise;
    o["elements"] = m.elements;
    o["out_of_tolerance"] = m.out_of_tolerance;
    o["nan_mismatches"] = m.nan_mismatches;
    o["worst_index"] = m.worst_index;
    o["s_at_worst"] = m.expected_at_worst;
    o["d_at_worst"] = m.actual_at_worst;
    return o;
  };
  j["first_failure"] = result.first_failure ? check_json(result.checks[*result.first_failure])
                                            : nlohmann::ordered_json(nullptr);
  nlohmann::ordered_json classes = nlohmann::ordered_json::array();
  for (const auto& [ref, classification] : result.classifications) {
    classes.push_back(
        {{"s_tensor", s_graph.ValueName(ref)}, {"classification", classification.ToString()}});
  }
  j["classifications"] = classes;
  nlohmann::ordered_json checks = nlohmann::ordered_json::array();
  for (const RelationCheck& c : result.checks) checks.push_back(check_json(c));
  j["checks"] = checks;
  if (info.timing) {
    j["seconds"] = {{"d", result.seconds_d},
                    {"s", result.seconds_s},
                    {"perturbed_s", result.seconds_reference}};
  }
  return j;
}

report::CheckSummary CheckSummaryOf(const CheckResult& result, const ir::Graph& s_graph,
                                    const CheckRunInfo& info) {
  report::CheckSummary s;
  s.outcome = CheckOutcome(result);
  s.d_failure = result.d_failure;
  s.seq = info.seq;
  s.dist = info.dist;
  s.relations_file = info.relations;
  s.s_graph_file = s_graph.file;
  s.seed = result.seed;
  s.random_mode = result.random_mode;
  s.device = result.device;
  s.collectives = result.collectives;
  s.timing = info.timing;
  s.seconds = result.seconds_d + result.seconds_s + result.seconds_reference;
  for (size_t i = 0; i < result.checks.size(); ++i) {
    const RelationCheck& c = result.checks[i];
    report::CheckedRelation r;
    r.status = !c.error.empty() ? report::CheckedRelation::Status::kNotEvaluated
               : c.holds()      ? report::CheckedRelation::Status::kHolds
                                : report::CheckedRelation::Status::kFails;
    r.s_tensor = s_graph.ValueName(c.relation.s_tensor);
    r.relation = symbolic::RelationToString(c.relation, s_graph);
    r.kind = std::string(RelationKindName(c.kind));
    r.figures = RelationFigures(c);
    r.error = c.error;
    r.first_failure = result.first_failure && *result.first_failure == i;
    const ir::Node& node = s_graph.node(c.relation.s_tensor.node);
    r.s_node = node.name;
    r.s_operator = node.kind == ir::NodeKind::kOperator ? node.op.ToString() : "graph input";
    r.graph_line = node.def_line;
    r.source = node.source;
    s.relations.push_back(std::move(r));
  }
  return s;
}

}  // namespace gg::runtime
