// Check: the numeric differential check. Draws S's inputs, derives D's through the relation spec
// (input_synthesis.h), runs D and S, and evaluates relations on the values: the spec's expected
// outputs (and assumed cut points) and, when given, every relation the symbolic engine inferred.
// Each is reported as holding or failing with its errors against the per-tensor tolerance of
// tolerance.h; failing relations are listed in S's topological order, so the first one is where
// S and D part ways numerically. The runtime gives evidence; verdicts stay with the caller.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/program.h"
#include "runtime/compare.h"
#include "runtime/executor.h"
#include "runtime/fingerprint_match.h"
#include "symbolic/relation.h"
#include "symbolic/relation_spec.h"

namespace gg::runtime {

struct CheckOptions {
  uint64_t seed = 0;
  // Dropout is turned off in S and D (masks would come from unrelated random streams otherwise).
  bool dropout_off = true;
  // S tensors the symbolic engine could not relate (a verify report's first failure): their
  // values are matched against D's by fingerprints (fingerprint_match.h) to tell a missing lemma
  // from a numeric difference. Fingerprints of every tensor are computed only when non-empty.
  std::vector<ir::TensorRef> classify;
  // Bytes of D tensors kept at once for the comparisons; more makes several passes (0: a quarter
  // of the machine's memory).
  uint64_t memory_budget = 0;
};

enum class RelationKind { kExpectedOutput, kAssumed, kInferred };
std::string_view RelationKindName(RelationKind kind);  // "expected", "assumed", "inferred"

struct RelationCheck {
  symbolic::Relation relation;
  RelationKind kind = RelationKind::kExpectedOutput;
  size_t s_order = 0;  // position of the S tensor's node in S's topological order
  Comparison comparison;
  double noise = 0;   // sigma_t of the tolerance model (0 for exact dtypes)
  std::string error;  // the relation could not be evaluated (a D value is missing, ...)
  bool holds() const { return error.empty() && comparison.holds; }
};

struct CheckResult {
  std::vector<RelationCheck> checks;    // in S topological order, then kind, then text
  std::optional<size_t> first_failure;  // index into checks
  bool all_hold = false;
  std::vector<std::string> input_notes;  // how S's inputs were drawn
  std::string random_mode;               // "dropout off"
  uint64_t seed = 0;
  std::vector<std::pair<ir::TensorRef, NumericClassification>> classifications;
  // D stopped with an error on inputs S runs on (an index out of range, ...): the counterexample
  // is the inputs themselves; no relation is evaluated then.
  std::string d_failure;
  size_t passes = 1;  // D and S runs needed to keep within the memory budget
  double seconds_d = 0, seconds_s = 0, seconds_reference = 0;
};

// The outputs of S node `node` that are tensors with a type (a functionalized op's first output
// is None), to classify.
std::vector<ir::TensorRef> TensorOutputs(const ir::Graph& graph, ir::NodeId node);

// Runs the check. `inferred` are relations from a verify report (may be empty). Throws
// gg::InputError for inputs that cannot be synthesized or graphs that fail to execute.
CheckResult RunCheck(const ir::Graph& s_graph, const ir::Program& d_program,
                     const symbolic::SpecResult& spec,
                     const std::vector<symbolic::Relation>& inferred,
                     const CheckOptions& options = {});

}  // namespace gg::runtime
