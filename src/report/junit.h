// JUnit XML: `graphguard verify --junit FILE` and `graphguard check --junit FILE`, the verdict as
// the test report CI systems (GitLab, Jenkins, GitHub test reporters) read, in the shape pytest
// writes (xunit2: `testsuites` > `testsuite` with properties > `testcase` with classname, name,
// time).
//
// verify: one test suite "graphguard verify", one test case per expected output relation. An
// output the proof shows passes. One that a numeric counterexample contradicts (VIOLATION) is a
// `<failure>` with the evidence. One the proof could not show and no counterexample contradicts
// is an `<error>` whose type is the cause's rule id (`graphguard/unknown/no-relation`, ...):
// UNKNOWN is neither a pass nor a proved bug, and an error keeps it red in every viewer (a skip is
// green in most, yet `verify` exits 3 on it). A verdict other than REFINES whose outputs all pass
// (a failing operator whose result still reaches an output) adds a test case "verdict" that says
// so. check: one suite "graphguard check", one case per evaluated relation (failure: does not hold,
// error: not evaluated), and a failing case "D runs on the inputs S runs on" when D failed.
//
// Times (seconds) per case where known — verify: the S operator's search that produced the
// output; check: the suite only — and none at all with timing off (--no-timing), so golden files
// are byte-stable. No timestamp or host name is written.
#pragma once

#include <string>
#include <string_view>

#include "ir/graph.h"
#include "report/check_summary.h"
#include "report/verify_report.h"
#include "symbolic/inference.h"

namespace gg::report {

std::string VerifyJunit(const symbolic::VerifyResult& result, const ir::Graph& s_graph,
                        const VerifyRunInfo& info);
std::string CheckJunit(const CheckSummary& summary);

// XML 1.0 text: & < > escaped (and " ' in attributes, where tab, newline and carriage return
// become character references so attribute normalization keeps them); characters XML 1.0
// cannot hold (other control characters, invalid UTF-8) become U+FFFD.
std::string XmlEscape(std::string_view text, bool attribute);

}  // namespace gg::report
