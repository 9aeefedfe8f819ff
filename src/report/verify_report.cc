#include "report/verify_report.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "ir/op_registry.h"
#include "util/diagnostic.h"

namespace gg::report {
namespace {

using symbolic::InferredRelation;
using symbolic::NodeOutcome;
using symbolic::NodeStatus;
using symbolic::OutputCheck;
using symbolic::VerifyResult;

// Candidates listed in the readable report; the JSON report has all of them.
constexpr size_t kTextCandidates = 24;

std::string Seconds(double seconds) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.3f s", seconds);
  return buffer;
}

// "y: aten::mm.default"
std::string NodeLabel(const ir::Node& node) { return node.name + ": " + node.op.ToString(); }

// The S tensor names an operator produces (typed outputs only).
std::vector<std::string> OutputNames(const ir::Graph& s_graph, ir::NodeId id) {
  std::vector<std::string> names;
  const ir::Node& node = s_graph.node(id);
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (!node.outputs[i].type) continue;
    names.push_back(s_graph.ValueName(ir::TensorRef{id, static_cast<int32_t>(i)}));
  }
  return names;
}

const std::vector<InferredRelation>* RelationsOf(const VerifyResult& result,
                                                 const std::string& name) {
  auto it = result.relations.find(name);
  return it == result.relations.end() ? nullptr : &it->second;
}

// Operators the registry does not know (loaded opaque from their annotations) -> how many nodes
// of S and of every rank of D call them, in operator-name order.
std::map<std::string, int64_t> UnknownOperators(const ir::Graph& s_graph,
                                                const ir::Program& d_program) {
  std::map<std::string, int64_t> counts;
  auto count = [&](const ir::Graph& g) {
    for (const ir::Node& node : g.nodes) {
      if (node.kind != ir::NodeKind::kOperator) continue;
      if (ir::OpRegistry::Default().Find(node.op) == nullptr) ++counts[node.op.ToString()];
    }
  };
  count(s_graph);
  for (const ir::Graph& g : d_program.ranks) count(g);
  return counts;
}

std::string StatusLine(const NodeOutcome& outcome) {
  std::string line(symbolic::NodeStatusName(outcome.status));
  line += " (search " + std::string(symbolic::StopReasonName(outcome.stop)) + " after " +
          std::to_string(outcome.iterations) + " iteration" + (outcome.iterations == 1 ? "" : "s") +
          ")";
  return line;
}

// Counts of examined S operators per status, in NodeStatus order.
std::map<std::string, size_t> StatusCounts(const VerifyResult& result) {
  std::map<std::string, size_t> counts;
  for (const NodeOutcome& n : result.nodes) ++counts[std::string(NodeStatusName(n.status))];
  return counts;
}

void AppendRow(std::ostringstream& out, const std::string& label, const std::string& value) {
  constexpr size_t kWidth = 14;
  out << "  " << label << std::string(label.size() < kWidth ? kWidth - label.size() : 1, ' ')
      << value << "\n";
}

}  // namespace

std::optional<Localization> Localize(const VerifyResult& result) {
  if (result.verdict == symbolic::Verdict::kRefines) return std::nullopt;
  Localization where;
  if (result.first_failure) {
    where.node_index = *result.first_failure;
    where.outcome = &result.nodes.at(*result.first_failure);
    where.s_node = where.outcome->s_node;
    where.why = where.outcome->detail;
    return where;
  }
  for (size_t i = 0; i < result.outputs.size(); ++i) {
    const OutputCheck& c = result.outputs[i];
    if (c.implied) continue;
    where.output_index = i;
    where.s_node = c.expected.s_tensor.node;
    where.why = c.detail;
    for (size_t n = 0; n < result.nodes.size(); ++n) {
      if (result.nodes[n].s_node != where.s_node) continue;
      where.node_index = n;
      where.outcome = &result.nodes[n];
    }
    return where;
  }
  return std::nullopt;
}

std::vector<std::string> OperatorOutputNames(const ir::Graph& s_graph, ir::NodeId id) {
  return OutputNames(s_graph, id);
}

std::vector<std::string> OperatorInputNames(const ir::Graph& s_graph, ir::NodeId s_node) {
  std::vector<std::string> names;
  for (ir::TensorRef in : s_graph.node(s_node).TensorInputs()) {
    std::string name = s_graph.ValueName(in);
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  return names;
}

namespace {

// The distinct S tensors `s_node` reads, in argument order.
std::vector<std::string> InputNames(const ir::Graph& s_graph, ir::NodeId s_node) {
  return OperatorInputNames(s_graph, s_node);
}

void AppendRelations(std::ostringstream& out, const VerifyResult& result, const ir::Graph& s_graph,
                     const std::vector<std::string>& names) {
  if (names.empty()) out << "  (none)\n";
  for (const std::string& name : names) {
    const std::vector<InferredRelation>* rels = RelationsOf(result, name);
    if (rels == nullptr || rels->empty()) {
      out << "  " << name << ": no relation\n";
      continue;
    }
    for (const InferredRelation& r : *rels) {
      out << "  " << symbolic::RelationToString(r.relation, s_graph) << "\n";
    }
  }
}

// Where and why: the deciding S operator, its inputs' relations and the D candidates.
void AppendFailure(std::ostringstream& out, const VerifyResult& result, const ir::Graph& s_graph,
                   const Localization& where) {
  const ir::Node& node = s_graph.node(where.s_node);
  out << "\nwhere\n";
  std::string produces;
  for (const std::string& name : OutputNames(s_graph, where.s_node)) {
    if (!produces.empty()) produces += ", ";
    produces += name;
  }
  std::string kind = node.kind == ir::NodeKind::kOperator ? node.op.ToString() : "graph input";
  AppendRow(out, "S operator",
            kind + " -> " + produces + " (node " + node.name + ", line " +
                std::to_string(node.def_line) + " of " + s_graph.file + ")");
  AppendRow(out, "source", node.source.empty() ? "(not recorded)" : node.source.ToString());
  if (!node.source.code.empty()) AppendRow(out, "code", node.source.code);
  if (where.output_index) {
    AppendRow(out, "failed",
              "expected output " + symbolic::RelationToString(
                                       result.outputs[*where.output_index].expected, s_graph));
  }
  if (where.outcome != nullptr) AppendRow(out, "status", StatusLine(*where.outcome));
  if (result.unknown_cause != symbolic::UnknownCause::kNone) {
    std::string cause(symbolic::UnknownCauseName(result.unknown_cause));
    if (where.outcome != nullptr && !where.output_index) {
      cause += " (search stop: " + std::string(symbolic::StopReasonName(where.outcome->stop)) + ")";
    }
    AppendRow(out, "proof stopped", cause);
  }
  AppendRow(out, "why", where.why);
  if (where.output_index) {
    out << "\nrelations inferred for the output\n";
    AppendRelations(out, result, s_graph, OutputNames(s_graph, where.s_node));
  }
  out << "\ninputs of the operator and their relations\n";
  AppendRelations(out, result, s_graph, InputNames(s_graph, where.s_node));
  if (where.outcome == nullptr) return;
  const std::vector<std::string>& candidates = where.outcome->candidates;
  out << "\nD operators that were candidates (" << candidates.size() << ")\n";
  if (candidates.empty()) out << "  (none)\n";
  for (size_t i = 0; i < candidates.size() && i < kTextCandidates; ++i) {
    out << "  " << candidates[i] << "\n";
  }
  if (candidates.size() > kTextCandidates) {
    out << "  ... " << (candidates.size() - kTextCandidates)
        << " more (all are in the JSON report)\n";
  }
}

// What the numeric engine said about the UNKNOWN the symbolic engine left.
void AppendEvidence(std::ostringstream& out, const symbolic::NumericEvidence& evidence) {
  out << "\nnumeric evidence\n";
  AppendRow(out, "run", evidence.how);
  if (!evidence.resized.empty()) AppendRow(out, "sizes", evidence.resized);
  if (!evidence.error.empty()) {
    AppendRow(out, "no evidence", evidence.error);
    return;
  }
  std::string outputs = std::to_string(evidence.outputs_agreeing) + " of " +
                        std::to_string(evidence.outputs_checked) + " expected relations hold";
  if (evidence.outputs_unevaluated > 0) {
    outputs += ", " + std::to_string(evidence.outputs_unevaluated) + " not evaluated";
  }
  AppendRow(out, "outputs", outputs);
  for (const std::string& c : evidence.counterexamples) AppendRow(out, "differs", c);
  for (const std::string& c : evidence.marginal) AppendRow(out, "marginal", c);
  for (const std::string& c : evidence.classification) AppendRow(out, "equals", c);
  // Proposed lemmas, line by line (ready to paste into a rule file; --accept-proposed uses them).
  for (const std::string& p : evidence.proposals) {
    size_t start = 0;
    while (start < p.size()) {
      size_t end = p.find('\n', start);
      if (end == std::string::npos) end = p.size();
      AppendRow(out, "proposed", p.substr(start, end - start));
      start = end + 1;
    }
  }
}

nlohmann::ordered_json EvidenceJson(const symbolic::NumericEvidence& evidence) {
  nlohmann::ordered_json j;
  j["how"] = evidence.how;
  j["error"] = evidence.error.empty() ? nlohmann::ordered_json(nullptr)
                                      : nlohmann::ordered_json(evidence.error);
  j["outputs_checked"] = evidence.outputs_checked;
  j["outputs_agreeing"] = evidence.outputs_agreeing;
  j["outputs_unevaluated"] = evidence.outputs_unevaluated;
  j["counterexamples"] = evidence.counterexamples;
  j["marginal"] = evidence.marginal;
  j["classification"] = evidence.classification;
  // Only for a run the memory budget resized (docs/report-format.md): other reports keep their
  // keys.
  if (!evidence.resized.empty()) j["resized"] = evidence.resized;
  // Only when a lemma was proposed (docs/report-format.md).
  if (!evidence.proposals.empty()) j["proposals"] = evidence.proposals;
  return j;
}

nlohmann::ordered_json SourceJson(const ir::SourceLocation& source) {
  if (source.empty()) return nullptr;
  nlohmann::ordered_json j;
  j["file"] = source.file;
  j["line"] = source.line;
  j["function"] = source.function;
  j["code"] = source.code;
  return j;
}

nlohmann::ordered_json RelationJson(const InferredRelation& r, const ir::Graph& s_graph) {
  nlohmann::ordered_json j;
  j["s_tensor"] = s_graph.ValueName(r.relation.s_tensor);
  j["expr"] = r.relation.expr.ToString();
  j["relation"] = symbolic::RelationToString(r.relation, s_graph);
  j["origin"] = r.relation.origin;
  j["proof"] = r.proof;
  return j;
}

nlohmann::ordered_json NodeJson(const NodeOutcome& n, const ir::Graph& s_graph, bool timing,
                                bool hints) {
  const ir::Node& node = s_graph.node(n.s_node);
  nlohmann::ordered_json j;
  j["node"] = node.name;
  j["op"] = node.op.ToString();
  j["outputs"] = OutputNames(s_graph, n.s_node);
  j["graph_line"] = node.def_line;
  j["source"] = SourceJson(node.source);
  j["status"] = std::string(symbolic::NodeStatusName(n.status));
  j["detail"] = n.detail;
  j["stop"] = std::string(symbolic::StopReasonName(n.stop));
  j["iterations"] = n.iterations;
  j["egraph_nodes"] = n.egraph_nodes;
  j["egraph_classes"] = n.egraph_classes;
  if (timing) j["seconds"] = n.seconds;
  if (hints) {
    j["hint"] = std::string(symbolic::HintUseName(n.hint));
    j["attempts"] = n.attempts;
    j["work_nodes"] = n.work_nodes;
    j["work_classes"] = n.work_classes;
    j["work_iterations"] = n.work_iterations;
  }
  nlohmann::ordered_json rels = nlohmann::ordered_json::array();
  for (const InferredRelation& r : n.relations) rels.push_back(RelationJson(r, s_graph));
  j["relations"] = rels;
  j["candidates"] = n.candidates;
  return j;
}

[[noreturn]] void BadReport(const std::string& file, const std::string& problem) {
  throw InputError(file, 0,
                   "not a verify report of schema " + std::string(kVerifySchemaName) + " version " +
                       std::to_string(kVerifySchemaVersion) + ": " + problem);
}

}  // namespace

std::string VerdictLine(const VerifyResult& result) {
  std::string line(symbolic::VerdictName(result.verdict));
  if (result.verdict == symbolic::Verdict::kRefines && !result.premises.empty()) {
    const size_t n = result.premises.size();
    line += " under " + std::to_string(n) + (n == 1 ? " premise" : " premises") + " (";
    constexpr size_t kShown = 3;
    constexpr size_t kTextChars = 60;  // the premises section has each in full
    for (size_t i = 0; i < n && i < kShown; ++i) {
      const std::string& text = result.premises[i].text;
      line += (i ? "; " : "") + result.premises[i].kind + " " +
              (text.size() <= kTextChars ? text : text.substr(0, kTextChars - 3) + "...");
    }
    if (n > kShown) line += "; and " + std::to_string(n - kShown) + " more, see premises";
    line += ")";
  }
  return line + ": " + result.summary;
}

std::string FormatVerifyText(const VerifyResult& result, const ir::Graph& s_graph,
                             const ir::Program& d_program, const VerifyRunInfo& info) {
  std::ostringstream out;
  out << VerdictLine(result) << "\n";
  out << "\ninputs\n";
  AppendRow(out, "sequential", info.seq + " (" + std::to_string(s_graph.nodes.size()) + " nodes)");
  std::string dist;
  for (const std::string& d : info.dist) dist += (dist.empty() ? "" : " ") + d;
  AppendRow(out, "distributed",
            dist + " (" + std::to_string(d_program.world_size()) + " rank" +
                (d_program.world_size() == 1 ? "" : "s") + ")");
  AppendRow(out, "relations", info.relations);

  if (!result.premises.empty()) {
    out << "\npremises (taken as given, not proved)\n";
    for (const symbolic::Premise& p : result.premises) {
      out << "  " << p.kind << std::string(p.kind.size() < 9 ? 9 - p.kind.size() : 1, ' ')
          << p.text << "  [" << p.origin << "]\n";
    }
  }
  if (auto where = Localize(result)) AppendFailure(out, result, s_graph, *where);
  if (result.evidence) AppendEvidence(out, *result.evidence);

  out << "\nexpected outputs\n";
  out << "  implied  relation\n";
  for (const OutputCheck& c : result.outputs) {
    out << "  " << (c.implied ? "yes" : "no ") << "      "
        << symbolic::RelationToString(c.expected, s_graph) << "\n";
    if (!c.implied && !c.detail.empty()) out << "           " << c.detail << "\n";
  }

  out << "\nstatistics\n";
  size_t inferred = 0;
  for (const NodeOutcome& n : result.nodes) inferred += n.status == NodeStatus::kInferred;
  std::string others;
  for (const auto& [status, count] : StatusCounts(result)) {
    if (status == symbolic::NodeStatusName(NodeStatus::kInferred)) continue;
    others += (others.empty() ? "" : ", ") + status + " " + std::to_string(count);
  }
  AppendRow(out, "S operators",
            std::to_string(inferred) + " related of " + std::to_string(result.nodes.size()) +
                " examined" + (others.empty() ? "" : " (" + others + ")"));
  AppendRow(out, "e-graph nodes",
            "max " + std::to_string(result.max_egraph_nodes) + ", total " +
                std::to_string(result.total_egraph_nodes));
  // Shown when a local problem was reused (memo.h), so that reports of models without repeated
  // structure are those of an unmemoized run.
  if (result.local_reused > 0) {
    AppendRow(out, "local problems",
              std::to_string(result.local_solved) + " solved, " +
                  std::to_string(result.local_reused) + " reused (identical up to renaming)");
  }
  if (!info.hints.empty()) {
    AppendRow(
        out, "hints",
        std::to_string(result.hints_given) + " from " + info.hints + ": " +
            std::to_string(result.hints_proved) + " among the relations proved; " +
            std::to_string(result.hints_related) + " S operators related by the search " +
            "towards them, " + std::to_string(result.hints_full_related) +
            " by the full search that followed a failed one, " +
            std::to_string(result.hints_left_unrelated) + " left without a relation there" +
            (result.hints_rerun ? "; that run did not end REFINES (" + result.hints_guided_stop +
                                      ", " + std::to_string(result.hints_guided_nodes) +
                                      " e-nodes), so the verdict is that of a search without hints"
                                : ""));
  }
  std::map<std::string, int64_t> unknown = UnknownOperators(s_graph, d_program);
  if (!unknown.empty()) {
    std::string list;
    for (const auto& [op, count] : unknown) {
      list += (list.empty() ? "" : ", ") + op + " " + std::to_string(count);
    }
    AppendRow(out, "unknown operators", list + " (opaque, typed from the files; S and D)");
  }
  if (info.timing) {
    AppendRow(out, "time",
              Seconds(result.seconds) + (info.hints_seconds > 0
                                             ? " (and " + Seconds(info.hints_seconds) +
                                                   " before it: the numeric run of --guided)"
                                             : ""));
  }
  return out.str();
}

nlohmann::ordered_json VerifyReportJson(const VerifyResult& result, const ir::Graph& s_graph,
                                        const ir::Program& d_program, const VerifyRunInfo& info) {
  nlohmann::ordered_json j;
  j["schema"] = kVerifySchemaName;
  j["schema_version"] = kVerifySchemaVersion;
  j["tool"] = info.tool;
  j["inputs"] = {{"seq", info.seq},
                 {"dist", info.dist},
                 {"relations", info.relations},
                 {"world_size", d_program.world_size()}};
  if (!info.hints.empty()) j["inputs"]["hints"] = info.hints;
  j["options"] = {{"max_nodes", info.max_nodes},
                  {"max_iterations", info.max_iterations},
                  {"timeout_ms", info.timeout_ms},
                  {"hops", info.hops},
                  {"limit_deepenings", info.limit_deepenings}};
  j["verdict"] = std::string(symbolic::VerdictName(result.verdict));
  j["unknown_cause"] =
      result.unknown_cause == symbolic::UnknownCause::kNone
          ? nlohmann::ordered_json(nullptr)
          : nlohmann::ordered_json(symbolic::UnknownCauseName(result.unknown_cause));
  j["summary"] = result.summary;
  j["verdict_line"] = VerdictLine(result);
  nlohmann::ordered_json premises = nlohmann::ordered_json::array();
  for (const symbolic::Premise& p : result.premises) {
    premises.push_back({{"kind", p.kind}, {"text", p.text}, {"origin", p.origin}});
  }
  j["premises"] = premises;
  j["evidence"] =
      result.evidence ? EvidenceJson(*result.evidence) : nlohmann::ordered_json(nullptr);

  if (auto where = Localize(result)) {
    nlohmann::ordered_json failure;
    failure["node"] = s_graph.node(where->s_node).name;
    failure["node_index"] = where->node_index ? nlohmann::ordered_json(*where->node_index)
                                              : nlohmann::ordered_json(nullptr);
    failure["output_index"] = where->output_index ? nlohmann::ordered_json(*where->output_index)
                                                  : nlohmann::ordered_json(nullptr);
    failure["source"] = SourceJson(s_graph.node(where->s_node).source);
    failure["why"] = where->why;
    failure["stop"] = nullptr;
    if (where->outcome != nullptr) {
      failure["stop"] = std::string(symbolic::StopReasonName(where->outcome->stop));
    }
    nlohmann::ordered_json inputs = nlohmann::ordered_json::array();
    for (const std::string& name : InputNames(s_graph, where->s_node)) {
      nlohmann::ordered_json entry;
      entry["s_tensor"] = name;
      std::vector<std::string> rels;
      if (const auto* list = RelationsOf(result, name)) {
        for (const InferredRelation& r : *list) {
          rels.push_back(symbolic::RelationToString(r.relation, s_graph));
        }
      }
      entry["relations"] = rels;
      inputs.push_back(entry);
    }
    failure["input_relations"] = inputs;
    j["first_failure"] = failure;
  } else {
    j["first_failure"] = nullptr;
  }

  nlohmann::ordered_json outputs = nlohmann::ordered_json::array();
  for (const OutputCheck& c : result.outputs) {
    nlohmann::ordered_json o;
    o["s_tensor"] = s_graph.ValueName(c.expected.s_tensor);
    o["expected"] = symbolic::RelationToString(c.expected, s_graph);
    o["origin"] = c.expected.origin;
    o["implied"] = c.implied;
    o["detail"] = c.detail;
    o["proof"] = c.proof;
    outputs.push_back(o);
  }
  j["outputs"] = outputs;

  nlohmann::ordered_json stats;
  size_t inferred = 0;
  for (const NodeOutcome& n : result.nodes) inferred += n.status == NodeStatus::kInferred;
  stats["s_operators_examined"] = result.nodes.size();
  stats["s_operators_related"] = inferred;
  stats["status_counts"] = StatusCounts(result);
  stats["max_egraph_nodes"] = result.max_egraph_nodes;
  stats["total_egraph_nodes"] = result.total_egraph_nodes;
  if (result.local_reused > 0) {
    stats["local_problems"] = {{"solved", result.local_solved}, {"reused", result.local_reused}};
  }
  if (!info.hints.empty()) {
    stats["hints"] = {{"given", result.hints_given},
                      {"proved", result.hints_proved},
                      {"related", result.hints_related},
                      {"full_related", result.hints_full_related},
                      {"left_unrelated", result.hints_left_unrelated},
                      {"rerun_without", result.hints_rerun}};
    if (info.timing && info.hints_seconds > 0)
      stats["hints"]["numeric_seconds"] = info.hints_seconds;
    if (result.hints_rerun) {
      stats["hints"]["guided_summary"] = result.hints_guided_stop;
      stats["hints"]["guided_work_nodes"] = result.hints_guided_nodes;
    }
  }
  std::map<std::string, int64_t> unknown = UnknownOperators(s_graph, d_program);
  if (!unknown.empty()) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const auto& [op, count] : unknown) list.push_back({{"op", op}, {"count", count}});
    stats["unknown_operators"] = list;
  }
  if (info.timing) stats["seconds"] = result.seconds;
  j["stats"] = stats;

  nlohmann::ordered_json nodes = nlohmann::ordered_json::array();
  for (const NodeOutcome& n : result.nodes)
    nodes.push_back(NodeJson(n, s_graph, info.timing, !info.hints.empty()));
  j["nodes"] = nodes;

  // Every S tensor, with its relations (empty when none is known), so `explain --from-report`
  // can tell an unknown tensor from one without a relation.
  RelationTable table = RelationTableOf(result, s_graph);
  nlohmann::ordered_json tensors = nlohmann::ordered_json::object();
  for (const auto& [name, rels] : table.tensors) {
    nlohmann::ordered_json entry;
    entry["produced_by"] = table.producers[name];
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    if (const auto* known = RelationsOf(result, name)) {
      for (const InferredRelation& r : *known) list.push_back(RelationJson(r, s_graph));
    }
    entry["relations"] = list;
    tensors[name] = entry;
  }
  j["tensors"] = tensors;
  return j;
}

RelationTable RelationTableOf(const VerifyResult& result, const ir::Graph& s_graph) {
  RelationTable table;
  for (size_t id = 0; id < s_graph.nodes.size(); ++id) {
    const ir::Node& node = s_graph.nodes[id];
    std::string producer = node.kind == ir::NodeKind::kInput      ? "graph input"
                           : node.kind == ir::NodeKind::kConstant ? "graph constant"
                                                                  : "node " + NodeLabel(node);
    if (node.kind == ir::NodeKind::kOperator && !node.source.empty()) {
      producer += " at " + node.source.ToString();
    }
    for (const std::string& name : OutputNames(s_graph, static_cast<ir::NodeId>(id))) {
      std::vector<ExplainedRelation>& list = table.tensors[name];
      table.producers[name] = producer;
      if (const auto* known = RelationsOf(result, name)) {
        for (const InferredRelation& r : *known) {
          list.push_back({symbolic::RelationToString(r.relation, s_graph), r.proof});
        }
      }
    }
  }
  return table;
}

RelationTable RelationTableFromJson(const nlohmann::json& report, const std::string& file) {
  if (!report.is_object()) BadReport(file, "the top level is not an object");
  auto schema = report.find("schema");
  if (schema == report.end() || !schema->is_string() || *schema != kVerifySchemaName) {
    BadReport(file, "no \"schema\": \"" + std::string(kVerifySchemaName) + "\"");
  }
  auto version = report.find("schema_version");
  if (version == report.end() || !version->is_number_integer() ||
      version->get<int64_t>() != kVerifySchemaVersion) {
    BadReport(file, "\"schema_version\" is missing or not " + std::to_string(kVerifySchemaVersion));
  }
  auto tensors = report.find("tensors");
  if (tensors == report.end() || !tensors->is_object()) {
    BadReport(file, "\"tensors\" is missing or not an object");
  }
  RelationTable table;
  for (const auto& item : tensors->items()) {
    // Named copies, not a structured binding: lambdas capture these (clang before 16 refuses
    // captured bindings).
    const std::string& name = item.key();
    const nlohmann::json& entry = item.value();
    auto bad = [&](const std::string& what) {
      BadReport(file, "tensor \"" + name + "\": " + what);
    };
    if (!entry.is_object()) bad("not an object");
    auto producer = entry.find("produced_by");
    if (producer == entry.end() || !producer->is_string()) bad("no \"produced_by\" string");
    auto rels = entry.find("relations");
    if (rels == entry.end() || !rels->is_array()) bad("no \"relations\" array");
    std::vector<ExplainedRelation>& list = table.tensors[name];
    table.producers[name] = producer->get<std::string>();
    for (const auto& rel : *rels) {
      if (!rel.is_object()) bad("a relation is not an object");
      auto text = rel.find("relation");
      auto proof = rel.find("proof");
      if (text == rel.end() || !text->is_string()) bad("a relation has no \"relation\" string");
      if (proof == rel.end() || !proof->is_array()) bad("a relation has no \"proof\" array");
      ExplainedRelation out;
      out.relation = text->get<std::string>();
      for (const auto& step : *proof) {
        if (!step.is_string()) bad("a proof step is not a string");
        out.proof.push_back(step.get<std::string>());
      }
      list.push_back(std::move(out));
    }
  }
  return table;
}

ExplainStatus FormatExplain(const RelationTable& table, const std::string& tensor,
                            std::string* text) {
  std::ostringstream out;
  auto it = table.tensors.find(tensor);
  if (it == table.tensors.end()) {
    *text = "";
    return ExplainStatus::kUnknownTensor;
  }
  auto producer = table.producers.find(tensor);
  out << tensor;
  if (producer != table.producers.end() && !producer->second.empty()) {
    out << " (" << producer->second << ")";
  }
  const std::vector<ExplainedRelation>& rels = it->second;
  if (rels.empty()) {
    out << ": no relation was found\n";
    *text = out.str();
    return ExplainStatus::kNoRelation;
  }
  out << ": " << rels.size() << " relation" << (rels.size() == 1 ? "" : "s") << "\n";
  for (size_t i = 0; i < rels.size(); ++i) {
    out << "\n" << (i + 1) << ". " << rels[i].relation << "\n";
    if (rels[i].proof.empty()) {
      out << "   proof: (none recorded)\n";
      continue;
    }
    out << "   proof:\n";
    for (size_t s = 0; s < rels[i].proof.size(); ++s) {
      out << "     " << (s + 1) << ". " << rels[i].proof[s] << "\n";
    }
  }
  *text = out.str();
  return ExplainStatus::kFound;
}

}  // namespace gg::report
