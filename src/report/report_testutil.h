// Test helpers of the report tests (verify_report_test.cc, sarif_test.cc, junit_test.cc,
// html_test.cc): a goal case verified in
// process, the numeric evidence a LibTorch build's run gives it, and a check summary made by hand.
#pragma once

#include <filesystem>
#include <string>

#include "frontend/loader.h"
#include "report/check_summary.h"
#include "report/verify_report.h"
#include "symbolic/inference.h"
#include "symbolic/lemma_catalogue.h"
#include "symbolic/relation_spec.h"

namespace gg::report::testing {

// One hand-written goal case (tests/data/goals/<name>) loaded and verified; the S graph's mm
// operators get `mm_source` as their captured source location.
struct GoalRun {
  ir::Graph s_graph;
  ir::Program d_program;
  symbolic::VerifyResult result;
  VerifyRunInfo info;
};

inline GoalRun RunGoal(const std::string& name, const ir::SourceLocation& mm_source = {},
                       symbolic::InferenceOptions options = {}) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(GG_TEST_DATA_DIR) / "goals" / name;
  GoalRun run;
  run.s_graph = frontend::LoadGraph((dir / "seq.py").string());
  for (ir::Node& node : run.s_graph.nodes) {
    if (node.op.name == "mm") node.source = mm_source;
  }
  run.d_program = frontend::LoadProgram({(dir / "dist").string()});
  symbolic::RelationSpec spec = symbolic::RelationSpec::Load((dir / "spec.rel").string());
  symbolic::SpecResult relations = symbolic::EvaluateSpec(spec, run.s_graph, run.d_program);
  run.result = symbolic::Verify(run.s_graph, run.d_program, relations,
                                symbolic::LemmaCatalogue::Default().Rules(), options);
  run.info.tool = "graphguard test";
  run.info.seq = "seq.py";
  run.info.dist = {"dist"};
  run.info.relations = "spec.rel";
  run.info.timing = false;
  return run;
}

// The goal case verified again under the spec `spec_text` (read as file `spec_file`) instead of
// its own spec.rel.
inline void VerifyWithSpec(GoalRun& run, const std::string& spec_text,
                           const std::string& spec_file) {
  symbolic::RelationSpec spec = symbolic::RelationSpec::Parse(spec_text, spec_file);
  symbolic::SpecResult relations = symbolic::EvaluateSpec(spec, run.s_graph, run.d_program);
  run.result = symbolic::Verify(run.s_graph, run.d_program, relations,
                                symbolic::LemmaCatalogue::Default().Rules(), {});
}

// How many times `what` occurs in `text` (overlapping occurrences counted).
inline size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

inline ir::SourceLocation LayersSource() {
  return {"megatron/core/tensor_parallel/layers.py", 12, "forward",
          "output = torch.matmul(input, weight.t())"};
}

// What the numeric run says of matmul_rowpar_missing_allreduce (y == y@0 and y == y@1 differ).
inline symbolic::NumericEvidence MissingAllReduceEvidence() {
  symbolic::NumericEvidence e;
  e.how = "graphguard check, seed 0, cpu";
  e.outputs_checked = 2;
  e.counterexamples = {
      "y == y@0: max |S-D| 3.1 (rel 0.5 of max |S| 6.2), tolerance 1e-05; 2.5e+05x its tolerance"};
  e.classification = {"y: numerically different"};
  return e;
}

// A check of three relations: one holds, one fails (the first failure), one not evaluated.
inline CheckSummary ThreeRelationCheck() {
  CheckSummary s;
  s.outcome = "FAILS";
  s.seq = "seq.json";
  s.dist = {"tp2.json"};
  s.relations_file = "spec.rel";
  s.s_graph_file = "seq.json";
  s.seed = 0;
  s.random_mode = "dropout off";
  s.device = "cpu";
  s.collectives = "in-process";
  s.timing = false;
  CheckedRelation holds;
  holds.status = CheckedRelation::Status::kHolds;
  holds.s_tensor = "x";
  holds.relation = "x == x@0";
  holds.kind = "assumed";
  holds.figures = "max |S-D| 0 (rel 0 of max |S| 1), tolerance 1e-06";
  holds.s_node = "x";
  holds.s_operator = "graph input";
  holds.graph_line = 3;
  CheckedRelation fails;
  fails.status = CheckedRelation::Status::kFails;
  fails.s_tensor = "mean";
  fails.relation = "mean == mean@0";
  fails.kind = "expected";
  fails.figures =
      "max |S-D| 0.271 (rel 0.0576 of max |S| 4.7), tolerance 1.09e-05; worst at []: "
      "S 4.7, D 4.43; 1 of 1 elements beyond tolerance";
  fails.first_failure = true;
  fails.s_node = "mean";
  fails.s_operator = "aten::mean.default";
  fails.graph_line = 109;
  fails.source = {"models/gpt.py", 133, "forward", "return loss.mean()"};
  CheckedRelation unevaluated;
  unevaluated.status = CheckedRelation::Status::kNotEvaluated;
  unevaluated.s_tensor = "y";
  unevaluated.relation = "y == y@1";
  unevaluated.kind = "inferred";
  unevaluated.error = "D value y@1 <missing> & gone";
  unevaluated.figures = "not evaluated: " + unevaluated.error;
  unevaluated.s_node = "y";
  unevaluated.s_operator = "aten::mm.default";
  unevaluated.graph_line = 5;
  s.relations = {holds, fails, unevaluated};
  return s;
}

}  // namespace gg::report::testing
