// JUnit XML reports of verify and check: a case per expected output / checked relation, failures
// with the evidence, UNKNOWN as <error> with its cause, times only with timing on, and escaping.
// tests/cli/ci_reports.sh parses the CLI's files with Python's xml.etree.
#include "report/junit.h"

#include <gtest/gtest.h>

#include "report/report_testutil.h"

namespace gg::report {
namespace {

using testing::Count;
using testing::GoalRun;
using testing::RunGoal;

TEST(XmlEscape, TextAndAttributes) {
  EXPECT_EQ(XmlEscape("a < b && c > \"d\" 'e'", false), "a &lt; b &amp;&amp; c &gt; \"d\" 'e'");
  EXPECT_EQ(XmlEscape("a < b && c > \"d\" 'e'", true),
            "a &lt; b &amp;&amp; c &gt; &quot;d&quot; &apos;e&apos;");
  // Attribute normalization would turn these into spaces: references keep them.
  EXPECT_EQ(XmlEscape("1\t2\n3\r", true), "1&#9;2&#10;3&#13;");
  EXPECT_EQ(XmlEscape("1\t2\n3", false), "1\t2\n3");
}

// XML 1.0 cannot hold most control characters, U+FFFE/U+FFFF, or bytes that are not UTF-8.
TEST(XmlEscape, ReplacesWhatXmlCannotHold) {
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(XmlEscape(std::string("a\0b", 3), false), "a" + fffd + "b");
  EXPECT_EQ(XmlEscape("\x1b[0m", false), fffd + "[0m");
  EXPECT_EQ(XmlEscape("\xFF", false), fffd);
  EXPECT_EQ(XmlEscape("\xC3", false), fffd);                        // truncated sequence
  EXPECT_EQ(XmlEscape("\xED\xA0\x80", false), fffd + fffd + fffd);  // a surrogate
  EXPECT_EQ(XmlEscape("\xEF\xBF\xBF", false), fffd + fffd + fffd);  // U+FFFF
  EXPECT_EQ(XmlEscape("mod\xC3\xA8le \xE2\x88\x91 \xF0\x9F\x98\x80", true),
            "mod\xC3\xA8le \xE2\x88\x91 \xF0\x9F\x98\x80");  // valid UTF-8 stays
}

TEST(VerifyJunit, RefinesPassesEveryOutput) {
  GoalRun run = RunGoal("matmul_colpar");
  std::string xml = VerifyJunit(run.result, run.s_graph, run.info);
  EXPECT_EQ(xml.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites ", 0), 0u) << xml;
  EXPECT_NE(xml.find("<testsuite name=\"graphguard verify\" tests=\"1\" failures=\"0\" "
                     "errors=\"0\" skipped=\"0\">"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<testcase classname=\"graphguard.verify\" name=\"y == concat(1, y@0, "
                     "y@1)\"/>"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<property name=\"verdict\" value=\"REFINES\"/>"), std::string::npos);
  EXPECT_EQ(xml.find("time="), std::string::npos) << xml;  // timing off: no wall-clock value
  run.info.timing = true;
  std::string timed = VerifyJunit(run.result, run.s_graph, run.info);
  EXPECT_EQ(Count(timed, " time=\""), 3u) << timed;  // testsuites, testsuite, the case
}

TEST(VerifyJunit, UnknownIsAnErrorWithItsCause) {
  GoalRun run = RunGoal("matmul_rowpar_missing_allreduce", testing::LayersSource());
  std::string xml = VerifyJunit(run.result, run.s_graph, run.info);
  EXPECT_NE(xml.find("tests=\"2\" failures=\"0\" errors=\"2\" skipped=\"0\""), std::string::npos)
      << xml;
  EXPECT_EQ(Count(xml,
                  "<error type=\"graphguard/unknown/no-relation\" message=\"UNKNOWN "
                  "(no-relation): inferred y == sum(y@0, y@1), which the lemmas do not show "
                  "equal to the expectation (saturated)\">"),
            2u)
      << xml;
  // The body says where the proof stopped, with the model's source line; '>' is escaped.
  EXPECT_NE(xml.find("S operator: aten::mm.default -&gt; y (node y, line 5 of "), std::string::npos)
      << xml;
  EXPECT_NE(xml.find("source: megatron/core/tensor_parallel/layers.py:12 in forward"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<property name=\"unknown_cause\" value=\"no-relation\"/>"),
            std::string::npos);
}

// The output a counterexample contradicts fails with it; the one no counterexample names is still
// undecided (an error), although the verdict is VIOLATION.
TEST(VerifyJunit, ViolationFailsTheContradictedOutput) {
  GoalRun run = RunGoal("matmul_rowpar_missing_allreduce");
  symbolic::ApplyNumericEvidence(&run.result, testing::MissingAllReduceEvidence());
  ASSERT_EQ(run.result.verdict, symbolic::Verdict::kViolation);
  std::string xml = VerifyJunit(run.result, run.s_graph, run.info);
  EXPECT_NE(xml.find("tests=\"2\" failures=\"1\" errors=\"1\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<failure type=\"graphguard/violation\" message=\"VIOLATION: y == y@0: max "
                     "|S-D| 3.1"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("counterexample: y == y@0: max |S-D| 3.1"), std::string::npos) << xml;
  EXPECT_NE(xml.find("<error type=\"graphguard/unknown/no-relation\""), std::string::npos) << xml;
}

// Evidence that names no output (D fails where S runs) fails every output the proof missed.
TEST(VerifyJunit, ViolationWithoutNamedOutputFailsEveryUnprovedOutput) {
  GoalRun run = RunGoal("matmul_rowpar_missing_allreduce");
  symbolic::NumericEvidence e = testing::MissingAllReduceEvidence();
  e.counterexamples = {"D fails on inputs S runs on: index out of range"};
  symbolic::ApplyNumericEvidence(&run.result, e);
  ASSERT_EQ(run.result.verdict, symbolic::Verdict::kViolation);
  std::string xml = VerifyJunit(run.result, run.s_graph, run.info);
  EXPECT_NE(xml.find("tests=\"2\" failures=\"2\" errors=\"0\""), std::string::npos) << xml;
}

TEST(CheckJunit, CasePerRelation) {
  CheckSummary summary = testing::ThreeRelationCheck();
  std::string xml = CheckJunit(summary);
  EXPECT_NE(xml.find("<testsuite name=\"graphguard check\" tests=\"3\" failures=\"1\" "
                     "errors=\"1\" skipped=\"0\">"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<testcase classname=\"graphguard.check.assumed\" name=\"x == x@0\"/>"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<failure type=\"graphguard/check/fails\" message=\"max |S-D| 0.271"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("source: models/gpt.py:133 in forward"), std::string::npos) << xml;
  // The error's message and body are escaped text: "<missing> & gone".
  EXPECT_NE(xml.find("<error type=\"graphguard/check/not-evaluated\" message=\"not evaluated: D "
                     "value y@1 &lt;missing&gt; &amp; gone\">"),
            std::string::npos)
      << xml;
  EXPECT_EQ(xml.find("time="), std::string::npos);
  summary.timing = true;
  summary.seconds = 2.5;
  EXPECT_EQ(Count(CheckJunit(summary), " time=\"2.500\""), 2u);  // the suite only
}

TEST(CheckJunit, DFailureIsAFailingCase) {
  CheckSummary summary = testing::ThreeRelationCheck();
  summary.relations.clear();
  summary.d_failure = "tp2.json:40: index 9 is out of bounds";
  std::string xml = CheckJunit(summary);
  EXPECT_NE(xml.find("tests=\"1\" failures=\"1\" errors=\"0\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("name=\"D runs on the inputs S runs on\""), std::string::npos) << xml;
  EXPECT_NE(xml.find(">tp2.json:40: index 9 is out of bounds</failure>"), std::string::npos) << xml;
}

}  // namespace
}  // namespace gg::report
