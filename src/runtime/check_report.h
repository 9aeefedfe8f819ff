// CheckReport: `graphguard check`'s report — text for people and JSON (schema
// "graphguard.check-report", version 1, docs/report-format.md) for CI: every relation evaluated,
// whether it holds, its errors against its tolerance, and the first S tensor where one fails.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/program.h"
#include "report/check_summary.h"
#include "runtime/check.h"

namespace gg::runtime {

inline constexpr const char* kCheckSchemaName = "graphguard.check-report";
inline constexpr int kCheckSchemaVersion = 1;

struct CheckRunInfo {
  std::string tool;
  std::string seq;
  std::vector<std::string> dist;
  std::string relations;
  std::string from_verify;     // "" when not given
  std::string verify_verdict;  // the verify report's verdict, if one was given
  std::string resize;          // "8=1,..." or ""
  std::string resize_dist;
  // Set when the sizes were reduced to fit the memory budget (frontend/auto_resize.h): why and
  // which ("estimated peak 19.2 GiB > budget 11.0 GiB: ran at 8=1 (...); estimate now 3.5 GiB").
  std::string memory;
  bool timing = true;
};

// The outcome in one word: HOLDS (every relation holds), FAILS (some relation fails), or
// UNKNOWN (nothing failed but some relation could not be evaluated).
std::string CheckOutcome(const CheckResult& result);

// The figures of one relation's check: "max |S-D| 3.1 (rel ...), tolerance ...; worst at ...".
std::string RelationFigures(const RelationCheck& check);

std::string FormatCheckText(const CheckResult& result, const ir::Graph& s_graph,
                            const CheckRunInfo& info);

nlohmann::ordered_json CheckReportJson(const CheckResult& result, const ir::Graph& s_graph,
                                       const CheckRunInfo& info);

// The check in plain types for the CI reports (report/sarif.h, report/junit.h).
report::CheckSummary CheckSummaryOf(const CheckResult& result, const ir::Graph& s_graph,
                                    const CheckRunInfo& info);

}  // namespace gg::runtime
