// SARIF: `graphguard verify --sarif FILE` and `graphguard check --sarif FILE`, the verdict as a
// SARIF 2.1.0 log (OASIS), which GitHub code scanning and other SARIF viewers show inline on the
// model's source. One run per log; the driver is graphguard with its version and every rule the
// command can report, whether or not this run reports it (rule indices stay fixed).
//
// verify: REFINES is a run with no results; VIOLATION or UNKNOWN is one result (rule
// `graphguard/violation` or `graphguard/unknown/<cause>`, finding.h) located at the user's source
// line of the S operator where the proof stopped (FX "# File:"; the S graph file and line when the
// capture recorded none), with the S graph node as a related location, and the operator, failed
// relation, inputs' relations and counterexample in its message. Premises, the verdict and its
// first line are run properties (`run.properties`), so a REFINES under premises says so.
// check: one result per relation that fails (`graphguard/check/fails`) or could not be
// evaluated (`graphguard/check/not-evaluated`), and one when D fails to run
// (`graphguard/check/d-fails`).
//
// Deterministic: no timestamps, no machine paths beyond those given; with timing off no
// wall-clock values. docs/report-format.md documents every field.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/program.h"
#include "report/check_summary.h"
#include "report/verify_report.h"
#include "symbolic/inference.h"

namespace gg::report {

inline constexpr const char* kSarifVersion = "2.1.0";
// The schema's own id (OASIS SARIF 2.1.0 errata 01), which validators and viewers recognise.
inline constexpr const char* kSarifSchemaUri =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

inline constexpr const char* kRuleCheckFails = "graphguard/check/fails";
inline constexpr const char* kRuleCheckNotEvaluated = "graphguard/check/not-evaluated";
inline constexpr const char* kRuleCheckDFails = "graphguard/check/d-fails";

struct SarifRule {
  std::string id;    // "graphguard/unknown/no-relation"
  std::string name;  // "UnknownNoRelation"
  std::string short_description;
  std::string full_description;
  std::string level;  // default level: "error" or "warning"
};
// verify: violation, then unknown/limit, no-relation, conflict, opaque.
const std::vector<SarifRule>& VerifySarifRules();
// check: fails, not-evaluated, d-fails.
const std::vector<SarifRule>& CheckSarifRules();

// A path as a SARIF artifact URI: relative paths stay relative (percent-encoded where RFC 3986
// needs it; GitHub resolves them against the checkout), absolute ones become file:// URIs.
std::string ArtifactUri(const std::string& path);

nlohmann::ordered_json VerifySarif(const symbolic::VerifyResult& result, const ir::Graph& s_graph,
                                   const VerifyRunInfo& info);
nlohmann::ordered_json CheckSarif(const CheckSummary& summary);

// The log as written: two-space indented, a final newline, invalid UTF-8 in names replaced (a
// SARIF file must be UTF-8; nlohmann would throw instead).
std::string SarifText(const nlohmann::ordered_json& log);

}  // namespace gg::report
