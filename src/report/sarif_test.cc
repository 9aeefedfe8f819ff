// SARIF reports of verify and check: results per verdict cause at the model's source line, the
// driver's rules, REFINES with no result and its premises as run properties. The schema itself is
// checked by tests/cli/ci_reports.sh (jsonschema against the SARIF 2.1.0 schema).
#include "report/sarif.h"

#include <gtest/gtest.h>

#include "report/finding.h"
#include "report/report_testutil.h"

namespace gg::report {
namespace {

using testing::GoalRun;
using testing::RunGoal;
using testing::VerifyWithSpec;
using Json = nlohmann::ordered_json;

const Json& FirstRun(const Json& log) { return log.at("runs").at(0); }

// Every result's ruleId is the driver's rule at its ruleIndex, with that rule's default level.
void ExpectRulesConsistent(const Json& log) {
  const Json& run = FirstRun(log);
  const Json& rules = run.at("tool").at("driver").at("rules");
  for (const Json& result : run.at("results")) {
    size_t index = result.at("ruleIndex").get<size_t>();
    ASSERT_LT(index, rules.size());
    EXPECT_EQ(rules[index].at("id"), result.at("ruleId"));
    EXPECT_EQ(rules[index].at("defaultConfiguration").at("level"), result.at("level"));
  }
}

TEST(VerifySarif, RefinesIsARunWithoutResults) {
  GoalRun run = RunGoal("matmul_colpar");
  ASSERT_EQ(run.result.verdict, symbolic::Verdict::kRefines);
  Json log = VerifySarif(run.result, run.s_graph, run.info);
  EXPECT_EQ(log.at("version"), "2.1.0");
  EXPECT_EQ(log.at("$schema"), kSarifSchemaUri);
  const Json& run0 = FirstRun(log);
  EXPECT_TRUE(run0.at("results").empty());
  const Json& driver = run0.at("tool").at("driver");
  EXPECT_EQ(driver.at("name"), "graphguard");
  EXPECT_EQ(driver.at("version"), GG_VERSION);
  ASSERT_EQ(driver.at("rules").size(), VerifySarifRules().size());
  EXPECT_EQ(driver.at("rules")[0].at("id"), "graphguard/violation");
  EXPECT_EQ(run0.at("invocations")[0].at("exitCode"), 0);
  EXPECT_EQ(run0.at("properties").at("verdict"), "REFINES");
  EXPECT_TRUE(run0.at("properties").at("premises").empty());
  EXPECT_FALSE(run0.at("properties").contains("seconds"));  // timing off
  run.info.timing = true;
  EXPECT_TRUE(FirstRun(VerifySarif(run.result, run.s_graph, run.info))
                  .at("properties")
                  .contains("seconds"));
}

// A REFINES resting on an assumed relation carries it in the run's properties, and its first
// line says so.
TEST(VerifySarif, RefinesUnderPremisesListsThem) {
  GoalRun run = RunGoal("matmul_colpar");
  VerifyWithSpec(
      run,
      "input x = replicate\ninput w = shard(0)\nassume y = concat(1, [D.y@r for r in ranks])\n"
      "output y = concat(1, [D.y@r for r in ranks])\n",
      "cut.rel");
  ASSERT_EQ(run.result.verdict, symbolic::Verdict::kRefines);
  Json log = VerifySarif(run.result, run.s_graph, run.info);
  const Json& props = FirstRun(log).at("properties");
  ASSERT_EQ(props.at("premises").size(), 1u);
  EXPECT_EQ(props.at("premises")[0].at("kind"), "assume");
  EXPECT_EQ(props.at("premises")[0].at("text"), "y == concat(1, y@0, y@1)");
  EXPECT_EQ(props.at("verdictLine").get<std::string>().rfind("REFINES under 1 premise (", 0), 0u);
  EXPECT_TRUE(FirstRun(log).at("results").empty());
}

TEST(VerifySarif, UnknownIsOneResultAtTheModelSourceLine) {
  GoalRun run = RunGoal("matmul_rowpar_missing_allreduce", testing::LayersSource());
  ASSERT_EQ(run.result.verdict, symbolic::Verdict::kUnknown);
  Json log = VerifySarif(run.result, run.s_graph, run.info);
  ExpectRulesConsistent(log);
  const Json& results = FirstRun(log).at("results");
  ASSERT_EQ(results.size(), 1u);
  const Json& r = results[0];
  EXPECT_EQ(r.at("ruleId"), "graphguard/unknown/no-relation");
  EXPECT_EQ(r.at("level"), "warning");
  const Json& physical = r.at("locations")[0].at("physicalLocation");
  EXPECT_EQ(physical.at("artifactLocation").at("uri"), "megatron/core/tensor_parallel/layers.py");
  EXPECT_EQ(physical.at("artifactLocation").at("uriBaseId"), "%SRCROOT%");
  EXPECT_EQ(physical.at("region").at("startLine"), 12);
  EXPECT_EQ(physical.at("region").at("snippet").at("text"),
            "output = torch.matmul(input, weight.t())");
  EXPECT_EQ(r.at("locations")[0].at("logicalLocations")[0].at("name"), "forward");
  // The S graph node is the related location: the file graphguard read, at the node's line.
  const Json& related = r.at("relatedLocations")[0].at("physicalLocation");
  EXPECT_EQ(related.at("artifactLocation").at("uri"), ArtifactUri(run.s_graph.file));
  EXPECT_EQ(related.at("region").at("startLine"), 5);
  // The message names the operator, the relation that failed and the inputs' relations.
  std::string text = r.at("message").at("text");
  EXPECT_EQ(text.rfind("UNKNOWN: expected y == y@0 but inferred y == sum(y@0, y@1)", 0), 0u)
      << text;
  EXPECT_NE(text.find("S operator: aten::mm.default -> y (node y, line 5 of "), std::string::npos)
      << text;
  EXPECT_NE(text.find("failed: expected output y == y@0"), std::string::npos) << text;
  EXPECT_NE(text.find("relations of the operator's inputs: x == concat(1, x@0, x@1)"),
            std::string::npos)
      << text;
  EXPECT_EQ(r.at("properties").at("failedOutput"), "y == y@0");
  EXPECT_EQ(FirstRun(log).at("invocations")[0].at("exitCode"), 3);
}

// Without a recorded source line (a hand-written graph), the S graph file and line locate it.
TEST(VerifySarif, WithoutSourceTheGraphLineLocatesIt) {
  GoalRun run = RunGoal("matmul_rowpar_missing_allreduce");
  Json log = VerifySarif(run.result, run.s_graph, run.info);
  const Json& r = FirstRun(log).at("results")[0];
  const Json& physical = r.at("locations")[0].at("physicalLocation");
  EXPECT_EQ(physical.at("artifactLocation").at("uri"), ArtifactUri(run.s_graph.file));
  EXPECT_EQ(physical.at("region").at("startLine"), 5);
  EXPECT_FALSE(physical.at("region").contains("snippet"));
  EXPECT_FALSE(r.contains("relatedLocations"));
  EXPECT_NE(r.at("message").at("text").get<std::string>().find("source: (not recorded)"),
            std::string::npos);
}

TEST(VerifySarif, ViolationCarriesTheCounterexample) {
  GoalRun run = RunGoal("matmul_rowpar_missing_allreduce", testing::LayersSource());
  symbolic::ApplyNumericEvidence(&run.result, testing::MissingAllReduceEvidence());
  ASSERT_EQ(run.result.verdict, symbolic::Verdict::kViolation);
  Json log = VerifySarif(run.result, run.s_graph, run.info);
  ExpectRulesConsistent(log);
  const Json& r = FirstRun(log).at("results")[0];
  EXPECT_EQ(r.at("ruleId"), "graphguard/violation");
  EXPECT_EQ(r.at("level"), "error");
  std::string text = r.at("message").at("text");
  EXPECT_EQ(text.rfind("VIOLATION: ", 0), 0u) << text;
  EXPECT_NE(text.find("\ncounterexample: y == y@0: max |S-D| 3.1"), std::string::npos) << text;
  EXPECT_NE(text.find("numeric evidence: graphguard check, seed 0, cpu: 0 of 2 expected"),
            std::string::npos)
      << text;
  // The cause the symbolic proof stopped with is kept.
  EXPECT_EQ(r.at("properties").at("unknownCause"), "no-relation");
  EXPECT_EQ(r.at("properties").at("evidence").at("counterexamples").size(), 1u);
  EXPECT_EQ(FirstRun(log).at("invocations")[0].at("exitCode"), 1);
}

// A limit that stops the search is its own rule.
TEST(VerifySarif, RuleIdPerCause) {
  symbolic::InferenceOptions options;
  options.per_node.iterations = 0;
  GoalRun run = RunGoal("matmul_rowpar", {}, options);
  ASSERT_EQ(run.result.verdict, symbolic::Verdict::kUnknown) << run.result.summary;
  ASSERT_EQ(run.result.unknown_cause, symbolic::UnknownCause::kLimit);
  Json log = VerifySarif(run.result, run.s_graph, run.info);
  ExpectRulesConsistent(log);
  EXPECT_EQ(FirstRun(log).at("results")[0].at("ruleId"), "graphguard/unknown/limit");

  symbolic::VerifyResult result;
  result.verdict = symbolic::Verdict::kUnknown;
  for (auto [cause, id] : std::vector<std::pair<symbolic::UnknownCause, std::string>>{
           {symbolic::UnknownCause::kLimit, "graphguard/unknown/limit"},
           {symbolic::UnknownCause::kNoRelation, "graphguard/unknown/no-relation"},
           {symbolic::UnknownCause::kConflict, "graphguard/unknown/conflict"},
           {symbolic::UnknownCause::kOpaque, "graphguard/unknown/opaque"}}) {
    result.unknown_cause = cause;
    EXPECT_EQ(VerdictRuleId(result), id);
    bool listed = false;
    for (const SarifRule& rule : VerifySarifRules()) listed = listed || rule.id == id;
    EXPECT_TRUE(listed) << id;
  }
  result.verdict = symbolic::Verdict::kRefines;
  EXPECT_EQ(VerdictRuleId(result), "");
}

TEST(Sarif, ArtifactUriEncodes) {
  EXPECT_EQ(ArtifactUri("megatron/core/layers.py"), "megatron/core/layers.py");
  EXPECT_EQ(ArtifactUri("my models/a b.py"), "my%20models/a%20b.py");
  EXPECT_EQ(ArtifactUri("/opt/tiger/Megatron-LM/x.py"), "file:///opt/tiger/Megatron-LM/x.py");
  EXPECT_EQ(ArtifactUri("c:d#e%f"), "c%3Ad%23e%25f");  // no scheme, fragment or escape
  EXPECT_EQ(ArtifactUri("mod\xC3\xA8le.py"), "mod%C3%A8le.py");
}

// Names come from user files: bytes that are not UTF-8 are replaced, never an exception.
TEST(Sarif, InvalidUtf8IsReplaced) {
  Json log = {{"text", std::string("bad \xFF byte")}};
  std::string text;
  EXPECT_NO_THROW(text = SarifText(log));
  EXPECT_NE(text.find("bad \xEF\xBF\xBD byte"), std::string::npos) << text;
  EXPECT_EQ(text.back(), '\n');
}

TEST(CheckSarif, OneResultPerRelationThatDoesNotHold) {
  CheckSummary summary = testing::ThreeRelationCheck();
  Json log = CheckSarif(summary);
  ExpectRulesConsistent(log);
  const Json& run = FirstRun(log);
  ASSERT_EQ(run.at("tool").at("driver").at("rules").size(), CheckSarifRules().size());
  const Json& results = run.at("results");
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].at("ruleId"), kRuleCheckFails);
  EXPECT_EQ(results[0].at("level"), "error");
  std::string text = results[0].at("message").at("text");
  EXPECT_EQ(text.rfind("check FAILS: mean == mean@0 [expected] does not hold: max |S-D| 0.271", 0),
            0u)
      << text;
  EXPECT_NE(text.find("first failing relation"), std::string::npos) << text;
  const Json& physical = results[0].at("locations")[0].at("physicalLocation");
  EXPECT_EQ(physical.at("artifactLocation").at("uri"), "models/gpt.py");
  EXPECT_EQ(physical.at("region").at("startLine"), 133);
  EXPECT_TRUE(results[0].at("properties").at("firstFailure").get<bool>());
  // Not evaluated: a warning at the S graph's line (no source was recorded).
  EXPECT_EQ(results[1].at("ruleId"), kRuleCheckNotEvaluated);
  EXPECT_EQ(results[1].at("level"), "warning");
  EXPECT_EQ(results[1].at("locations")[0].at("physicalLocation").at("region").at("startLine"), 5);
  EXPECT_EQ(run.at("invocations")[0].at("exitCode"), 1);
  EXPECT_EQ(run.at("properties").at("outcome"), "FAILS");
}

TEST(CheckSarif, HoldsHasNoResultAndDFailureIsOne) {
  CheckSummary summary = testing::ThreeRelationCheck();
  summary.relations.resize(1);  // the one that holds
  summary.outcome = "HOLDS";
  Json log = CheckSarif(summary);
  EXPECT_TRUE(FirstRun(log).at("results").empty());
  EXPECT_EQ(FirstRun(log).at("invocations")[0].at("exitCode"), 0);

  summary.relations.clear();
  summary.outcome = "FAILS";
  summary.d_failure = "tp2.json:40: index 9 is out of bounds for dimension 0 with size 8";
  log = CheckSarif(summary);
  ExpectRulesConsistent(log);
  ASSERT_EQ(FirstRun(log).at("results").size(), 1u);
  const Json& r = FirstRun(log).at("results")[0];
  EXPECT_EQ(r.at("ruleId"), kRuleCheckDFails);
  EXPECT_NE(r.at("message").at("text").get<std::string>().find("index 9 is out of bounds"),
            std::string::npos);
  EXPECT_EQ(r.at("locations")[0].at("physicalLocation").at("artifactLocation").at("uri"),
            "tp2.json");
}

}  // namespace
}  // namespace gg::report
