// Finding: what the CI reports (SARIF, JUnit) say about a verdict other than REFINES, gathered
// once from a VerifyResult so that both formats name the same S operator, source line, relation
// and counterexample as the readable report (they all localize through report::Localize).
//
// Rule ids are per verdict cause: `graphguard/violation` (a numeric counterexample), and
// `graphguard/unknown/<cause>` with the cause of symbolic::UnknownCauseName (limit, no-relation,
// conflict, opaque). SARIF results carry them as ruleId, JUnit failures and errors as type.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "symbolic/inference.h"

namespace gg::report {

inline constexpr const char* kRuleViolation = "graphguard/violation";
inline constexpr const char* kRuleUnknownPrefix = "graphguard/unknown/";

// The rule id of a verdict: kRuleViolation, "graphguard/unknown/<cause>", or "" for REFINES.
std::string VerdictRuleId(const symbolic::VerifyResult& result);

struct VerifyFinding {
  std::string verdict;       // "VIOLATION" or "UNKNOWN"
  std::string rule_id;       // VerdictRuleId
  std::string cause;         // "no-relation", ...: why the symbolic proof stopped ("" if none)
  std::string verdict_line;  // the readable report's first line
  // The S operator where the proof stopped.
  std::string s_node;         // FX name
  std::string s_operator;     // "aten::mm.default", or "graph input"
  std::string produces;       // its S tensors, comma-separated
  std::string s_graph_file;   // the S graph file, as loaded
  int32_t graph_line = 0;     // the node's line in it (0: unknown)
  ir::SourceLocation source;  // the user's model code (FX "# File:"), may be empty
  std::string status;         // the operator's inference status ("no-relation"), "" if unexamined
  std::string why;
  std::string failed_output;                 // the expected output relation that decided, or ""
  std::vector<std::string> input_relations;  // "x == concat(1, x@0, x@1)" per input relation
  std::vector<std::string> inputs_without_relation;  // inputs read with none
  // Numeric evidence, when it ran.
  std::string evidence_how;    // "graphguard check, seed 0, cpu"
  std::string evidence_error;  // why it could not decide
  std::vector<std::string> counterexamples;
  std::vector<std::string> classification;
  size_t outputs_checked = 0, outputs_agreeing = 0;
  bool has_evidence = false;
};

// nullopt for REFINES.
std::optional<VerifyFinding> FindingOf(const symbolic::VerifyResult& result,
                                       const ir::Graph& s_graph);

// The finding as lines of text, verdict line first: the S operator and its source, the failed
// output, the inputs' relations (the first `max_relations`, then a count), the evidence. The
// SARIF message and the JUnit failure body are this text (the latter without the verdict line,
// which its message and the suite's properties hold).
std::string FindingText(const VerifyFinding& finding, size_t max_relations = 8,
                        bool with_verdict_line = true);

// "megatron/core/layers.py:12 in forward" or, without a source, "S graph FILE:LINE".
std::string FindingWhere(const VerifyFinding& finding);

}  // namespace gg::report
