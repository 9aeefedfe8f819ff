// SARIF 2.1.0 logs of verify and check (sarif.h; fields in docs/report-format.md).
#include "report/sarif.h"

#include "report/exit_codes.h"
#include "report/finding.h"

#ifndef GG_VERSION
#define GG_VERSION "unknown"
#endif

namespace gg::report {
namespace {

using Json = nlohmann::ordered_json;

Json Text(const std::string& text) { return Json{{"text", text}}; }

Json RuleJson(const SarifRule& rule) {
  Json j;
  j["id"] = rule.id;
  j["name"] = rule.name;
  j["shortDescription"] = Text(rule.short_description);
  j["fullDescription"] = Text(rule.full_description);
  j["help"] = Text(rule.full_description + " See docs/report-format.md of GraphGuard.");
  j["defaultConfiguration"] = Json{{"level", rule.level}};
  return j;
}

Json Driver(const std::vector<SarifRule>& rules) {
  Json driver;
  driver["name"] = "graphguard";
  driver["version"] = GG_VERSION;
  driver["semanticVersion"] = GG_VERSION;
  Json list = Json::array();
  for (const SarifRule& rule : rules) list.push_back(RuleJson(rule));
  driver["rules"] = list;
  return driver;
}

int RuleIndex(const std::vector<SarifRule>& rules, const std::string& id) {
  for (size_t i = 0; i < rules.size(); ++i) {
    if (rules[i].id == id) return static_cast<int>(i);
  }
  return -1;
}

std::string RuleLevel(const std::vector<SarifRule>& rules, const std::string& id) {
  int i = RuleIndex(rules, id);
  return i < 0 ? "warning" : rules[static_cast<size_t>(i)].level;
}

// A physical location: the file, and the line when known (SARIF lines start at 1), with the
// source line's code as the region's snippet.
Json PhysicalLocation(const std::string& file, int32_t line, const std::string& code) {
  Json physical;
  Json artifact{{"uri", ArtifactUri(file)}};
  // A relative path is relative to the source root (GitHub resolves %SRCROOT% to the checkout).
  if (!file.empty() && file[0] != '/') artifact["uriBaseId"] = "%SRCROOT%";
  physical["artifactLocation"] = artifact;
  if (line > 0) {
    Json region;
    region["startLine"] = line;
    if (!code.empty()) region["snippet"] = Text(code);
    physical["region"] = region;
  }
  return physical;
}

// Where a finding is shown: the model's source line when the capture recorded it (the code a
// person edits), else the S graph file's line of the node. The S graph node is a related
// location when the source is the primary one, so a viewer links both.
void AddLocations(Json* result, const ir::SourceLocation& source, const std::string& graph_file,
                  int32_t graph_line, const std::string& node_text) {
  Json location;
  if (!source.empty()) {
    location["physicalLocation"] = PhysicalLocation(source.file, source.line, source.code);
    if (!source.function.empty()) {
      location["logicalLocations"] =
          Json::array({Json{{"name", source.function}, {"kind", "function"}}});
    }
  } else {
    location["physicalLocation"] = PhysicalLocation(graph_file, graph_line, "");
  }
  location["message"] = Text(node_text);
  (*result)["locations"] = Json::array({location});
  if (!source.empty() && !graph_file.empty()) {
    Json related;
    related["id"] = 1;
    related["physicalLocation"] = PhysicalLocation(graph_file, graph_line, "");
    related["message"] = Text(node_text + " in the S graph");
    (*result)["relatedLocations"] = Json::array({related});
  }
}

Json Log(Json run) {
  Json log;
  log["$schema"] = kSarifSchemaUri;
  log["version"] = kSarifVersion;
  log["runs"] = Json::array({std::move(run)});
  return log;
}

Json Invocation(int exit_code, const std::string& description) {
  // The tool ran to its verdict: a VIOLATION is a successful execution with exit code 1.
  return Json::array({Json{{"executionSuccessful", true},
                           {"exitCode", exit_code},
                           {"exitCodeDescription", description}}});
}

int VerdictExit(symbolic::Verdict verdict) {
  switch (verdict) {
    case symbolic::Verdict::kRefines:
      return kExitOk;
    case symbolic::Verdict::kViolation:
      return kExitViolation;
    case symbolic::Verdict::kUnknown:
      break;
  }
  return kExitUnknown;
}

Json VerifyResultJson(const VerifyFinding& f) {
  const std::vector<SarifRule>& rules = VerifySarifRules();
  Json r;
  r["ruleId"] = f.rule_id;
  r["ruleIndex"] = RuleIndex(rules, f.rule_id);
  r["level"] = RuleLevel(rules, f.rule_id);
  r["message"] = Text(FindingText(f));
  AddLocations(&r, f.source, f.s_graph_file, f.graph_line,
               "S operator " + f.s_operator + " -> " + f.produces + " (node " + f.s_node + ")");
  Json props;
  props["verdict"] = f.verdict;
  if (!f.cause.empty()) props["unknownCause"] = f.cause;
  props["sNode"] = f.s_node;
  props["sOperator"] = f.s_operator;
  props["sTensors"] = f.produces;
  if (!f.status.empty()) props["status"] = f.status;
  if (!f.failed_output.empty()) props["failedOutput"] = f.failed_output;
  props["why"] = f.why;
  props["inputRelations"] = f.input_relations;
  props["inputsWithoutRelation"] = f.inputs_without_relation;
  if (f.has_evidence) {
    Json evidence;
    evidence["how"] = f.evidence_how;
    if (!f.evidence_error.empty()) evidence["error"] = f.evidence_error;
    evidence["outputsChecked"] = f.outputs_checked;
    evidence["outputsAgreeing"] = f.outputs_agreeing;
    evidence["counterexamples"] = f.counterexamples;
    evidence["classification"] = f.classification;
    props["evidence"] = evidence;
  }
  r["properties"] = props;
  return r;
}

std::string CheckStatusWord(CheckedRelation::Status status) {
  switch (status) {
    case CheckedRelation::Status::kHolds:
      return "holds";
    case CheckedRelation::Status::kFails:
      return "fails";
    case CheckedRelation::Status::kNotEvaluated:
      break;
  }
  return "not_evaluated";
}

std::string RunText(const CheckSummary& s) {
  return "run: seed " + std::to_string(s.seed) + ", " + s.random_mode + ", " + s.device;
}

Json CheckRelationResult(const CheckSummary& s, const CheckedRelation& c) {
  const std::vector<SarifRule>& rules = CheckSarifRules();
  const bool fails = c.status == CheckedRelation::Status::kFails;
  const std::string rule = fails ? kRuleCheckFails : kRuleCheckNotEvaluated;
  std::string text =
      fails ? "check FAILS: " + c.relation + " [" + c.kind + "] does not hold: " + c.figures
            : "check: " + c.relation + " [" + c.kind + "] could not be evaluated: " + c.error;
  if (c.first_failure) text += "\nfirst failing relation in S's topological order";
  text += "\nS tensor: " + c.s_tensor + " = " + c.s_operator + " (node " + c.s_node;
  if (c.graph_line > 0) text += ", line " + std::to_string(c.graph_line) + " of " + s.s_graph_file;
  text += ")\nsource: " + (c.source.empty() ? std::string("(not recorded)") : c.source.ToString());
  if (!c.source.code.empty()) text += "\ncode: " + c.source.code;
  text += "\n" + RunText(s);
  Json r;
  r["ruleId"] = rule;
  r["ruleIndex"] = RuleIndex(rules, rule);
  r["level"] = RuleLevel(rules, rule);
  r["message"] = Text(text);
  AddLocations(&r, c.source, s.s_graph_file, c.graph_line,
               "S tensor " + c.s_tensor + " = " + c.s_operator + " (node " + c.s_node + ")");
  Json props;
  props["sTensor"] = c.s_tensor;
  props["relation"] = c.relation;
  props["kind"] = c.kind;
  props["status"] = CheckStatusWord(c.status);
  props["figures"] = c.figures;
  props["firstFailure"] = c.first_failure;
  r["properties"] = props;
  return r;
}

}  // namespace

const std::vector<SarifRule>& VerifySarifRules() {
  static const std::vector<SarifRule> rules = {
      {kRuleViolation, "Violation", "The distributed program does not refine its sequential model.",
       "The symbolic proof stopped at an S operator and a run of S and D on random inputs gave a "
       "counterexample: an expected output relation fails beyond its rounding tolerance (or D "
       "fails where S runs). The result is located at the model code of the operator where the "
       "proof stopped.",
       "error"},
      {std::string(kRuleUnknownPrefix) + "limit", "UnknownLimit",
       "Refinement not proved: a search limit was hit.",
       "A node, iteration, time or D-neighbourhood limit stopped the search for a relation first, "
       "or the operator has no lowering into the tensor language. Raise the limit "
       "(--max-nodes, --max-iterations, --timeout-ms) or report the operator.",
       "warning"},
      {std::string(kRuleUnknownPrefix) + "no-relation", "UnknownNoRelation",
       "Refinement not proved: no relation for an S operator or output.",
       "The searches saturated without relating the S operator (or without showing an expected "
       "output) to the D program: S and D differ there, or the lemma catalogue lacks a lemma. A "
       "LibTorch build decides it with a numeric run; agreeing outputs point at a missing lemma.",
       "warning"},
      {std::string(kRuleUnknownPrefix) + "conflict", "UnknownConflict",
       "Refinement not proved: the e-graph equated tensors of different types.",
       "A lemma or the relation spec is wrong: the proof equated tensors of different shapes or "
       "dtypes. Check the spec's relations near the operator.",
       "warning"},
      {std::string(kRuleUnknownPrefix) + "opaque", "UnknownOpaque",
       "Refinement not proved: the proof needs an operator GraphGuard does not know.",
       "The S operator is unknown to the operator registry (loaded opaque from its annotation, "
       "equal only by congruence) and the proof needed to look inside it. Add it to the registry "
       "and the lowering.",
       "warning"},
  };
  return rules;
}

const std::vector<SarifRule>& CheckSarifRules() {
  static const std::vector<SarifRule> rules = {
      {kRuleCheckFails, "CheckFails", "A relation does not hold numerically.",
       "On random inputs derived through the relation spec, the S tensor and the value rebuilt "
       "from D differ beyond the per-tensor rounding tolerance.",
       "error"},
      {kRuleCheckNotEvaluated, "CheckNotEvaluated", "A relation could not be evaluated.",
       "The check could not compute one side of the relation (a D value is missing, shapes "
       "differ, ...): nothing is known about it.",
       "warning"},
      {kRuleCheckDFails, "CheckDFails", "D fails to execute on inputs S runs on.",
       "The distributed program stopped with an error (an index out of range, ...) on inputs the "
       "sequential model runs on; no relation was evaluated.",
       "error"},
  };
  return rules;
}

std::string ArtifactUri(const std::string& path) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string encoded;
  for (unsigned char c : path) {
    bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '-' || c == '.' || c == '_' || c == '~' || c == '/';
    if (keep) {
      encoded += static_cast<char>(c);
    } else {
      encoded += '%';
      encoded += kHex[c >> 4];
      encoded += kHex[c & 15];
    }
  }
  return !path.empty() && path[0] == '/' ? "file://" + encoded : encoded;
}

Json VerifySarif(const symbolic::VerifyResult& result, const ir::Graph& s_graph,
                 const VerifyRunInfo& info) {
  Json run;
  run["tool"] = Json{{"driver", Driver(VerifySarifRules())}};
  const std::string verdict(symbolic::VerdictName(result.verdict));
  run["invocations"] = Invocation(VerdictExit(result.verdict), verdict);
  Json results = Json::array();
  if (std::optional<VerifyFinding> f = FindingOf(result, s_graph)) {
    results.push_back(VerifyResultJson(*f));
  }
  run["results"] = results;
  Json props;
  props["command"] = "verify";
  props["verdict"] = verdict;
  if (result.unknown_cause != symbolic::UnknownCause::kNone) {
    props["unknownCause"] = std::string(symbolic::UnknownCauseName(result.unknown_cause));
  }
  props["verdictLine"] = VerdictLine(result);
  Json premises = Json::array();
  for (const symbolic::Premise& p : result.premises) {
    premises.push_back(Json{{"kind", p.kind}, {"text", p.text}, {"origin", p.origin}});
  }
  props["premises"] = premises;
  props["inputs"] = Json{{"seq", info.seq}, {"dist", info.dist}, {"relations", info.relations}};
  if (info.timing) props["seconds"] = result.seconds;
  run["properties"] = props;
  return Log(std::move(run));
}

Json CheckSarif(const CheckSummary& s) {
  Json run;
  run["tool"] = Json{{"driver", Driver(CheckSarifRules())}};
  int exit_code = s.outcome == "HOLDS"   ? kExitOk
                  : s.outcome == "FAILS" ? kExitViolation
                                         : kExitUnknown;
  run["invocations"] = Invocation(exit_code, s.outcome);
  Json results = Json::array();
  if (!s.d_failure.empty()) {
    const std::vector<SarifRule>& rules = CheckSarifRules();
    Json r;
    r["ruleId"] = kRuleCheckDFails;
    r["ruleIndex"] = RuleIndex(rules, kRuleCheckDFails);
    r["level"] = RuleLevel(rules, kRuleCheckDFails);
    r["message"] = Text("check FAILS: D fails to execute on inputs S runs on: " + s.d_failure +
                        "\n" + RunText(s));
    // The error names D's file and line itself; the location is the D program as given.
    Json location;
    location["physicalLocation"] = PhysicalLocation(s.dist.empty() ? s.seq : s.dist[0], 0, "");
    r["locations"] = Json::array({location});
    results.push_back(r);
  }
  for (const CheckedRelation& c : s.relations) {
    if (c.status != CheckedRelation::Status::kHolds) results.push_back(CheckRelationResult(s, c));
  }
  run["results"] = results;
  Json props;
  props["command"] = "check";
  props["outcome"] = s.outcome;
  props["seed"] = s.seed;
  props["random"] = s.random_mode;
  props["device"] = s.device;
  props["collectives"] = s.collectives;
  props["inputs"] = Json{{"seq", s.seq}, {"dist", s.dist}, {"relations", s.relations_file}};
  if (s.timing) props["seconds"] = s.seconds;
  run["properties"] = props;
  return Log(std::move(run));
}

std::string SarifText(const Json& log) {
  return log.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace gg::report
