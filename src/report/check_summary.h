// CheckSummary: what the CI reports (SARIF, JUnit) need of a `graphguard check` run, in plain
// types. runtime::CheckResult holds LibTorch values and builds only with LibTorch; this does not,
// so gg_core formats a check's SARIF and JUnit in every build and gg_tests tests them on a summary
// made in the test. runtime::CheckSummaryOf (runtime/check_report.h) fills it from a real run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace gg::report {

// One relation the check evaluated.
struct CheckedRelation {
  enum class Status { kHolds, kFails, kNotEvaluated };
  Status status = Status::kHolds;
  std::string s_tensor;        // "mean"
  std::string relation;        // canonical text "mean == mean@0"
  std::string kind;            // "expected", "assumed", "inferred"
  std::string figures;         // runtime::RelationFigures: errors against the tolerance, or why not
  std::string error;           // why it was not evaluated ("" otherwise)
  bool first_failure = false;  // the first failing relation in S's topological order
  // The S operator that produces the tensor and where it is.
  std::string s_node;
  std::string s_operator;     // "aten::mean.default", or "graph input"
  int32_t graph_line = 0;     // line in the S graph file (0: unknown)
  ir::SourceLocation source;  // the model code (FX "# File:"), may be empty
};

struct CheckSummary {
  std::string outcome;                     // "HOLDS", "FAILS" or "UNKNOWN" (runtime::CheckOutcome)
  std::string d_failure;                   // D failed to run on inputs S runs on ("" otherwise)
  std::vector<CheckedRelation> relations;  // in S topological order
  // The run.
  std::string seq;                // --seq as given
  std::vector<std::string> dist;  // --dist
  std::string relations_file;     // --relations
  std::string s_graph_file;       // the loaded S graph's file (for locations without a source)
  uint64_t seed = 0;
  std::string random_mode;  // "dropout off"
  std::string device;       // "cpu", "cuda:0"
  std::string collectives;  // "in-process", "mpi", "nccl"
  bool timing = true;       // false: no wall-clock values (goldens)
  double seconds = 0;       // D, S and perturbed S together
};

}  // namespace gg::report
