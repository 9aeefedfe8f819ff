// Verify report: what `graphguard verify` prints (readable text) and writes (JSON) about a
// VerifyResult, and the per-tensor relation table `graphguard explain` reads back from either.
//
// The JSON schema is documented and versioned in docs/report-format.md (kVerifySchemaVersion).
// Both renderings are deterministic: with timing off, the same inputs give byte-identical text and
// JSON (no addresses, no wall-clock values, ordered containers).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/program.h"
#include "symbolic/inference.h"

namespace gg::report {

inline constexpr const char* kVerifySchemaName = "graphguard.verify-report";
inline constexpr int kVerifySchemaVersion = 1;

// What the report says about how it was produced (paths as the user gave them, limits).
struct VerifyRunInfo {
  std::string tool;               // "graphguard 0.1.0"
  std::string seq;                // --seq
  std::vector<std::string> dist;  // --dist
  std::string relations;          // --relations
  std::string hints;              // --hints, empty when none (hints.h)
  double hints_seconds = 0;       // --guided: the numeric run's wall time (before the search)
  int64_t max_nodes = 0;          // per local e-graph
  int64_t max_iterations = 0;
  int64_t timeout_ms = 0;
  int32_t hops = 0;
  int32_t limit_deepenings = 0;  // deeper attempts after a node or iteration limit
  bool timing = true;  // false: no wall-clock values anywhere (golden files)
};

// What decided a verdict other than REFINES: the first failing S operator, or else the first
// expected output the lemmas could not show, located at the S operator that produces it. Every
// rendering (text, JSON, SARIF, JUnit) localizes through this, so they name the same operator.
struct Localization {
  ir::NodeId s_node = -1;
  const symbolic::NodeOutcome* outcome = nullptr;  // the operator's inference, when examined
  std::optional<size_t> node_index;                // into result.nodes
  std::optional<size_t> output_index;  // into result.outputs (verdict decided by an output)
  std::string why;
};
// nullopt for REFINES (and for a result that names nothing, which Verify never returns).
std::optional<Localization> Localize(const symbolic::VerifyResult& result);

// The S tensors operator `id` produces (typed outputs only) and the distinct ones it reads, in
// argument order.
std::vector<std::string> OperatorOutputNames(const ir::Graph& s_graph, ir::NodeId id);
std::vector<std::string> OperatorInputNames(const ir::Graph& s_graph, ir::NodeId id);

// The report's first line: the verdict, for a REFINES resting on premises "REFINES under N
// premises (the first three)", then the summary.
std::string VerdictLine(const symbolic::VerifyResult& result);

// The readable report: verdict line first, then the premises, where/why for VIOLATION and
// UNKNOWN, the table of expected outputs, and statistics.
std::string FormatVerifyText(const symbolic::VerifyResult& result, const ir::Graph& s_graph,
                             const ir::Program& d_program, const VerifyRunInfo& info);

// The JSON report (schema kVerifySchemaName, version kVerifySchemaVersion): everything in the
// result, including every relation (canonical text) with its proof and per-node statistics.
nlohmann::ordered_json VerifyReportJson(const symbolic::VerifyResult& result,
                                        const ir::Graph& s_graph, const ir::Program& d_program,
                                        const VerifyRunInfo& info);

// One relation of an S tensor as `explain` shows it.
struct ExplainedRelation {
  std::string relation;            // "y == concat(1, y@0, y@1)"
  std::vector<std::string> proof;  // lemma ids and other reasons, in order
};

// Every S tensor of the sequential graph (also those without a relation), with its relations.
struct RelationTable {
  std::map<std::string, std::vector<ExplainedRelation>> tensors;
  std::map<std::string, std::string> producers;  // S tensor -> "name (op) at file:line"
};

RelationTable RelationTableOf(const symbolic::VerifyResult& result, const ir::Graph& s_graph);
// Reads the table back from a JSON report; `file` names it in errors. A report of another schema
// or version, or a malformed one, is a gg::InputError.
RelationTable RelationTableFromJson(const nlohmann::json& report, const std::string& file);

enum class ExplainStatus { kFound, kNoRelation, kUnknownTensor };

// Prints the relations of `tensor` and their proofs, or why there are none, into *text.
ExplainStatus FormatExplain(const RelationTable& table, const std::string& tensor,
                            std::string* text);

}  // namespace gg::report
