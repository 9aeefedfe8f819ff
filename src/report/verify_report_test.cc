#include "report/verify_report.h"

#include <gtest/gtest.h>

#include "frontend/loader.h"
#include "report/report_testutil.h"
#include "symbolic/lemma_catalogue.h"
#include "util/diagnostic.h"

namespace gg::report {
namespace {

using testing::GoalRun;
using testing::RunGoal;
using testing::VerifyWithSpec;

std::string FirstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

TEST(VerifyReportText, RefinesStartsWithVerdictAndListsOutputs) {
  GoalRun run = RunGoal("matmul_colpar");
  ASSERT_EQ(run.result.verdict, symbolic::Verdict::kRefines) << run.result.summary;
  std::string text = FormatVerifyText(run.result, run.s_graph, run.d_program, run.info);
  EXPECT_EQ(FirstLine(text), "REFINES: " + run.result.summary);
  EXPECT_NE(text.find("\nexpected outputs\n  implied  relation\n"
                      "  yes      y == concat(1, y@0, y@1)"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("\nwhere\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  e-graph nodes max " + std::to_string(run.result.max_egraph_nodes)),
            std::string::npos)
      << text;
  // Timing off: no wall-clock row; timing on: there is one.
  EXPECT_EQ(text.find("  time "), std::string::npos) << text;
  run.info.timing = true;
  EXPECT_NE(FormatVerifyText(run.result, run.s_graph, run.d_program, run.info).find("  time "),
            std::string::npos);
}

// A REFINES that rests on an assumed relation says so in its first line, lists the premise in
// its own section and in the JSON report (it once read "REFINES ... 0 S operators related").
TEST(VerifyReportText, RefinesUnderPremisesSaysSoFirst) {
  GoalRun run = RunGoal("matmul_colpar");
  VerifyWithSpec(
      run,
      "input x = replicate\ninput w = shard(0)\nassume y = concat(1, [D.y@r for r in ranks])\n"
      "output y = concat(1, [D.y@r for r in ranks])\n",
      "cut.rel");
  ASSERT_EQ(run.result.verdict, symbolic::Verdict::kRefines) << run.result.summary;
  ASSERT_EQ(run.result.premises.size(), 1u);
  std::string text = FormatVerifyText(run.result, run.s_graph, run.d_program, run.info);
  EXPECT_EQ(FirstLine(text), "REFINES under 1 premise (assume y == concat(1, y@0, y@1)): " +
                                 run.result.summary);
  EXPECT_NE(text.find("\npremises (taken as given, not proved)\n"
                      "  assume   y == concat(1, y@0, y@1)  [cut.rel:3]\n"),
            std::string::npos)
      << text;
  nlohmann::ordered_json j = VerifyReportJson(run.result, run.s_graph, run.d_program, run.info);
  ASSERT_EQ(j["premises"].size(), 1u);
  EXPECT_EQ(j["premises"][0]["kind"], "assume");
  EXPECT_EQ(j["premises"][0]["origin"], "cut.rel:3");
  EXPECT_EQ(j["verdict_line"], FirstLine(text));

  // More than three premises: the first three, then how many more.
  symbolic::VerifyResult many = run.result;
  for (int i = 0; i < 4; ++i) {
    symbolic::AddPremises(&many, {{"constant", "c" + std::to_string(i) + " = 0", "x.rel:1"}});
  }
  EXPECT_EQ(VerdictLine(many),
            "REFINES under 5 premises (assume y == concat(1, y@0, y@1); constant c0 = 0; constant "
            "c1 = 0; and 2 more, see premises): " +
                many.summary);
  // Without premises the first line is unchanged.
  many.premises.clear();
  EXPECT_EQ(VerdictLine(many), "REFINES: " + many.summary);
}

// The missing all-reduce: every operator has a relation, but the output's (a sum over ranks) is
// not shown equal to the expected replica; the report points at the operator producing the
// output. The symbolic engine alone leaves it UNKNOWN (no relation).
TEST(VerifyReportText, OutputNotShownLocalizesTheProducingOperator) {
  ir::SourceLocation source{"model/linear.py", 42, "forward", "y = x @ w.t()"};
  GoalRun run = RunGoal("matmul_rowpar_missing_allreduce", source);
  ASSERT_EQ(run.result.verdict, symbolic::Verdict::kUnknown) << run.result.summary;
  ASSERT_EQ(run.result.unknown_cause, symbolic::UnknownCause::kNoRelation);
  std::string text = FormatVerifyText(run.result, run.s_graph, run.d_program, run.info);
  EXPECT_EQ(FirstLine(text), "UNKNOWN: " + run.result.summary);
  EXPECT_NE(text.find("  proof stopped no-relation\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("numeric evidence"), std::string::npos) << text;
  EXPECT_NE(text.find("  S operator    aten::mm.default -> y (node y, line 5 of "),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  source        model/linear.py:42 in forward\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("  code          y = x @ w.t()\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  failed        expected output y == y@0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("relations inferred for the output\n  y == sum(y@0, y@1)\n"),
            std::string::npos)
      << text;
  // The relations of the operator's inputs: x from the spec, t inferred from w.
  EXPECT_NE(text.find("\n  x == concat(1, x@0, x@1)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\n  t == "), std::string::npos) << text;
  EXPECT_NE(text.find("D operators that were candidates ("), std::string::npos) << text;
  EXPECT_NE(text.find("\n  no       y == y@0\n"), std::string::npos) << text;
}

TEST(VerifyReportText, OperatorWithoutRelationListsStatusAndCandidates) {
  GoalRun run = RunGoal("softmax_sharded_dim");
  ASSERT_EQ(run.result.verdict, symbolic::Verdict::kUnknown) << run.result.summary;
  ASSERT_TRUE(run.result.first_failure.has_value());
  const symbolic::NodeOutcome& f = run.result.nodes[*run.result.first_failure];
  std::string text = FormatVerifyText(run.result, run.s_graph, run.d_program, run.info);
  EXPECT_NE(text.find("  S operator    aten::_softmax.default -> y"), std::string::npos) << text;
  EXPECT_NE(text.find("  source        (not recorded)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  status        no-relation (search "), std::string::npos) << text;
  EXPECT_NE(text.find("  why           " + f.detail + "\n"), std::string::npos) << text;
  EXPECT_NE(
      text.find("D operators that were candidates (" + std::to_string(f.candidates.size()) + ")"),
      std::string::npos)
      << text;
  ASSERT_FALSE(f.candidates.empty());
  EXPECT_NE(text.find("\n  " + f.candidates.front() + "\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  proof stopped no-relation (search stop: saturated)\n"), std::string::npos)
      << text;
}

// Numeric evidence decides: a counterexample makes the UNKNOWN a VIOLATION, shown in both
// reports; outputs that agree keep it UNKNOWN and say a lemma is likely missing.
TEST(VerifyReportText, NumericEvidenceDecidesAndIsShown) {
  GoalRun run = RunGoal("matmul_rowpar_missing_allreduce");
  std::string symbolic_summary = run.result.summary;
  symbolic::NumericEvidence differs;
  differs.how = "seed 0";
  differs.outputs_checked = 2;
  differs.counterexamples = {"y == y@0: max |S-D| 2", "y == y@1: max |S-D| 3"};
  differs.classification = {"y: sum: y@0, y@1"};
  symbolic::VerifyResult violation = run.result;
  symbolic::ApplyNumericEvidence(&violation, differs);
  EXPECT_EQ(violation.verdict, symbolic::Verdict::kViolation);
  EXPECT_EQ(violation.summary,
            symbolic_summary + "; numerically (seed 0) y == y@0: max |S-D| 2 (+1 more)");
  std::string text = FormatVerifyText(violation, run.s_graph, run.d_program, run.info);
  EXPECT_EQ(FirstLine(text), "VIOLATION: " + violation.summary);
  EXPECT_NE(text.find("\nnumeric evidence\n  run           seed 0\n  outputs       0 of 2 expected "
                      "relations hold\n  differs       y == y@0: max |S-D| 2\n  differs       "
                      "y == y@1: max |S-D| 3\n  equals        y: sum: y@0, y@1\n"),
            std::string::npos)
      << text;
  nlohmann::ordered_json j = VerifyReportJson(violation, run.s_graph, run.d_program, run.info);
  EXPECT_EQ(j["verdict"], "VIOLATION");
  EXPECT_EQ(j["unknown_cause"], "no-relation");
  EXPECT_EQ(j["evidence"]["counterexamples"].size(), 2u);
  EXPECT_TRUE(j["evidence"]["error"].is_null());

  symbolic::NumericEvidence agrees;
  agrees.how = "seed 0";
  agrees.outputs_checked = 2;
  agrees.outputs_agreeing = 2;
  symbolic::VerifyResult unknown = run.result;
  symbolic::ApplyNumericEvidence(&unknown, agrees);
  EXPECT_EQ(unknown.verdict, symbolic::Verdict::kUnknown);
  EXPECT_NE(unknown.summary.find("2 of 2 expected output relations hold: a lemma is likely missing"),
            std::string::npos)
      << unknown.summary;

  // A narrow difference within kDecisiveExcess of the tolerance is reported, not a VIOLATION.
  symbolic::NumericEvidence marginal;
  marginal.how = "seed 0";
  marginal.outputs_checked = 2;
  marginal.outputs_agreeing = 1;
  marginal.marginal = {"y == y@0: max |S-D| 1.2e-07; 1.19x its tolerance"};
  symbolic::VerifyResult suspicious = run.result;
  symbolic::ApplyNumericEvidence(&suspicious, marginal);
  EXPECT_EQ(suspicious.verdict, symbolic::Verdict::kUnknown);
  EXPECT_NE(suspicious.summary.find("1.19x its tolerance: beyond the rounding model's tolerance "
                                    "in at most 3 elements by less than 4x: not evidence"),
            std::string::npos)
      << suspicious.summary;
  EXPECT_NE(FormatVerifyText(suspicious, run.s_graph, run.d_program, run.info)
                .find("  marginal      y == y@0: max |S-D| 1.2e-07; 1.19x its tolerance\n"),
            std::string::npos);

  // A limit with agreeing outputs does not blame a lemma; unevaluated outputs are counted.
  symbolic::VerifyResult limited = run.result;
  limited.unknown_cause = symbolic::UnknownCause::kLimit;
  symbolic::NumericEvidence partial = agrees;
  partial.outputs_agreeing = 1;
  partial.outputs_unevaluated = 1;
  symbolic::ApplyNumericEvidence(&limited, partial);
  EXPECT_EQ(limited.verdict, symbolic::Verdict::kUnknown);
  EXPECT_NE(limited.summary.find("1 of 2 expected output relations hold, 1 could not be evaluated"),
            std::string::npos)
      << limited.summary;
  EXPECT_EQ(limited.summary.find("lemma is likely missing"), std::string::npos);

  symbolic::NumericEvidence failed;
  failed.how = "seed 0";
  failed.error = "no kernel for aten::foo";
  symbolic::VerifyResult still = run.result;
  symbolic::ApplyNumericEvidence(&still, failed);
  EXPECT_EQ(still.verdict, symbolic::Verdict::kUnknown);
  EXPECT_NE(FormatVerifyText(still, run.s_graph, run.d_program, run.info)
                .find("  no evidence   no kernel for aten::foo\n"),
            std::string::npos);

  // REFINES is never changed by evidence.
  GoalRun refines = RunGoal("matmul_rowpar");
  ASSERT_EQ(refines.result.verdict, symbolic::Verdict::kRefines);
  symbolic::ApplyNumericEvidence(&refines.result, differs);
  EXPECT_EQ(refines.result.verdict, symbolic::Verdict::kRefines);
  EXPECT_FALSE(refines.result.evidence.has_value());
}

TEST(VerifyReportText, UnknownNamesTheLimit) {
  symbolic::InferenceOptions options;
  options.per_node.iterations = 0;
  GoalRun run = RunGoal("matmul_rowpar", {}, options);
  ASSERT_EQ(run.result.verdict, symbolic::Verdict::kUnknown) << run.result.summary;
  std::string text = FormatVerifyText(run.result, run.s_graph, run.d_program, run.info);
  EXPECT_EQ(FirstLine(text), "UNKNOWN: " + run.result.summary);
  EXPECT_NE(text.find("  proof stopped limit (search stop: " +
                      std::string(symbolic::StopReasonName(symbolic::StopReason::kIterationLimit)) +
                      ")\n"),
            std::string::npos)
      << text;
}

TEST(VerifyReportJson, CarriesVerdictRelationsProofsAndNoTimingWhenOff) {
  GoalRun run = RunGoal("matmul_rowpar_missing_allreduce");
  nlohmann::ordered_json j = VerifyReportJson(run.result, run.s_graph, run.d_program, run.info);
  EXPECT_EQ(j["schema"], kVerifySchemaName);
  EXPECT_EQ(j["schema_version"], kVerifySchemaVersion);
  EXPECT_EQ(j["verdict"], "UNKNOWN");
  EXPECT_EQ(j["unknown_cause"], "no-relation");
  EXPECT_TRUE(j["evidence"].is_null());
  EXPECT_EQ(j["first_failure"]["node"], "y");
  EXPECT_EQ(j["first_failure"]["output_index"], 0);
  EXPECT_FALSE(j["first_failure"]["node_index"].is_null());
  EXPECT_EQ(j["outputs"].size(), 2u);  // `replicate`: one relation per rank
  EXPECT_EQ(j["outputs"][0]["implied"], false);
  EXPECT_EQ(j["nodes"].size(), run.result.nodes.size());
  EXPECT_EQ(j["tensors"]["x"]["relations"][0]["expr"], "concat(1, x@0, x@1)");
  EXPECT_EQ(j["tensors"]["x"]["produced_by"], "graph input");
  EXPECT_EQ(j["tensors"]["y"]["produced_by"], "node y: aten::mm.default");
  EXPECT_EQ(j["tensors"]["y"]["relations"][0]["expr"], "sum(y@0, y@1)");
  EXPECT_EQ(j["tensors"]["y"]["relations"][0]["origin"], "inferred");
  EXPECT_EQ(j.dump().find("\"seconds\""), std::string::npos);
  run.info.timing = true;
  nlohmann::ordered_json timed = VerifyReportJson(run.result, run.s_graph, run.d_program, run.info);
  EXPECT_TRUE(timed["stats"].contains("seconds"));
  EXPECT_TRUE(timed["nodes"][0].contains("seconds"));
}

TEST(VerifyReportJson, IsDeterministic) {
  GoalRun a = RunGoal("layernorm_seqpar");
  GoalRun b = RunGoal("layernorm_seqpar");
  EXPECT_EQ(VerifyReportJson(a.result, a.s_graph, a.d_program, a.info).dump(2),
            VerifyReportJson(b.result, b.s_graph, b.d_program, b.info).dump(2));
  EXPECT_EQ(FormatVerifyText(a.result, a.s_graph, a.d_program, a.info),
            FormatVerifyText(b.result, b.s_graph, b.d_program, b.info));
}

TEST(RelationTable, ReadsBackFromTheJsonReport) {
  GoalRun run = RunGoal("matmul_colpar");
  RelationTable direct = RelationTableOf(run.result, run.s_graph);
  nlohmann::json parsed = nlohmann::json::parse(
      VerifyReportJson(run.result, run.s_graph, run.d_program, run.info).dump());
  EXPECT_EQ(parsed["verdict"], "REFINES");
  EXPECT_TRUE(parsed["first_failure"].is_null());
  RelationTable read = RelationTableFromJson(parsed, "r.json");
  ASSERT_EQ(direct.tensors.size(), read.tensors.size());
  for (const auto& [name, rels] : direct.tensors) {
    ASSERT_EQ(read.tensors.count(name), 1u) << name;
    ASSERT_EQ(read.tensors[name].size(), rels.size()) << name;
    for (size_t i = 0; i < rels.size(); ++i) {
      EXPECT_EQ(read.tensors[name][i].relation, rels[i].relation);
      EXPECT_EQ(read.tensors[name][i].proof, rels[i].proof);
    }
    EXPECT_EQ(read.producers[name], direct.producers[name]);
  }
}

TEST(RelationTable, RejectsOtherSchemasAndMalformedEntries) {
  EXPECT_THROW(RelationTableFromJson(nlohmann::json::array(), "r.json"), InputError);
  EXPECT_THROW(RelationTableFromJson({{"schema", "other"}}, "r.json"), InputError);
  nlohmann::json wrong_version = {
      {"schema", kVerifySchemaName}, {"schema_version", 99}, {"tensors", nlohmann::json::object()}};
  EXPECT_THROW(RelationTableFromJson(wrong_version, "r.json"), InputError);
  nlohmann::json bad_entry = {{"schema", kVerifySchemaName},
                              {"schema_version", kVerifySchemaVersion},
                              {"tensors", {{"x", {{"produced_by", "input x"}, {"relations", 3}}}}}};
  try {
    RelationTableFromJson(bad_entry, "r.json");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "r.json");
    EXPECT_NE(e.problem().find("tensor \"x\""), std::string::npos) << e.problem();
  }
}

TEST(Explain, FoundNoneAndUnknown) {
  RelationTable table;
  table.tensors["x"] = {{"x == concat(1, x@0, x@1)", {"spec: spec.rel:2: input x = shard(1)"}}};
  table.tensors["y"] = {{"y == concat(1, y@0, y@1)", {"relation of x", "mm-concat-cols"}}};
  table.tensors["z"] = {};
  table.producers["y"] = "node y: aten::mm.default";
  std::string text;
  EXPECT_EQ(FormatExplain(table, "y", &text), ExplainStatus::kFound);
  EXPECT_EQ(text,
            "y (node y: aten::mm.default): 1 relation\n\n"
            "1. y == concat(1, y@0, y@1)\n"
            "   proof:\n"
            "     1. relation of x\n"
            "     2. mm-concat-cols\n");
  EXPECT_EQ(FormatExplain(table, "z", &text), ExplainStatus::kNoRelation);
  EXPECT_EQ(text, "z: no relation was found\n");
  EXPECT_EQ(FormatExplain(table, "nope", &text), ExplainStatus::kUnknownTensor);
}

TEST(Explain, RefinesCaseShowsAMatmulLemma) {
  GoalRun run = RunGoal("matmul_colpar");
  std::string text;
  ASSERT_EQ(FormatExplain(RelationTableOf(run.result, run.s_graph), "y", &text),
            ExplainStatus::kFound);
  EXPECT_NE(text.find("y == concat(1, y@0, y@1)"), std::string::npos) << text;
  EXPECT_NE(text.find("mm-"), std::string::npos) << text;
}

}  // namespace
}  // namespace gg::report
