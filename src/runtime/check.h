// Check: the numeric differential check. Draws S's inputs, derives D's through the relation spec
// (input_synthesis.h), runs D and S, and evaluates relations on the values: the spec's expected
// outputs (and assumed cut points) and, when given, every relation the symbolic engine inferred.
// Each is reported as holding or failing with its errors against the per-tensor tolerance of
// tolerance.h; failing relations are listed in S's topological order, so the first one is where
// S and D part ways numerically. The runtime gives evidence; verdicts stay with the caller.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/program.h"
#include "runtime/compare.h"
#include "runtime/executor.h"
#include "runtime/fingerprint_match.h"
#include "runtime/input_synthesis.h"
#include "symbolic/relation.h"
#include "symbolic/relation_spec.h"

namespace gg::runtime {

struct CheckOptions {
  uint64_t seed = 0;
  // S's inputs, in S's signature order, instead of random ones (check --inputs: the values a
  // graph with value-dependent shapes was traced with); D's are derived from them as usual.
  std::vector<at::Tensor> s_inputs;
  std::string s_inputs_note;  // where they came from, for the report's input notes
  // Dropout is turned off in S and D (masks would come from unrelated random streams otherwise).
  bool dropout_off = true;
  // S tensors the symbolic engine could not relate (a verify report's first failure): their
  // values are matched against D's by fingerprints (fingerprint_match.h) to tell a missing lemma
  // from a numeric difference. Fingerprints of every tensor are computed only when non-empty.
  std::vector<ir::TensorRef> classify;
  // Also every holding fingerprint match of each classified tensor (CheckResult::matches): the
  // candidates that guide `verify --guided`, held to `match`'s tolerances.
  bool match_all = false;
  MatchOptions match;
  // Bytes of D tensors kept at once for the comparisons; more makes several passes (0: a quarter
  // of the machine's memory).
  uint64_t memory_budget = 0;
  // Where S and D run (ExecutionOptions::device). Inputs are drawn on the CPU (the same values as
  // a CPU run) and moved; comparisons and the perturbation run on the device; fingerprints copy
  // to the CPU (fingerprint.h computes them in float64 there).
  at::Device device = at::kCPU;
  // Called as each run of the check starts — "pass 1/2: D", "perturbed S", "pass 1/2: S" — with
  // the runs done and planned (empty: none). For a progress display (report/progress.h) only.
  std::function<void(const std::string& stage, size_t done, size_t total)> progress;
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
  std::string device = "cpu";  // where S and D ran: "cpu", "cuda:0", ...
  // How D's collectives ran: "in-process" (reference collectives, RunCheck), "mpi" or "nccl"
  // (check --distributed); the note says why a CUDA run's collectives did not use NCCL.
  std::string collectives = "in-process";
  std::string collectives_note;
  std::vector<std::pair<ir::TensorRef, NumericClassification>> classifications;
  // With CheckOptions::match_all: S tensor == D expression, every holding candidate, in
  // CheckOptions::classify order.
  std::vector<std::pair<ir::TensorRef, symbolic::RelExpr>> matches;
  // D stopped with an error on inputs S runs on (an index out of range, ...): the counterexample
  // is the inputs themselves; no relation is evaluated then.
  std::string d_failure;
  size_t passes = 1;  // D and S runs needed to keep within the memory budget
  double seconds_d = 0, seconds_s = 0, seconds_reference = 0;
};

// The outputs of S node `node` that are tensors with a type (a functionalized op's first output
// is None), to classify.
std::vector<ir::TensorRef> TensorOutputs(const ir::Graph& graph, ir::NodeId node);

// Runs the check, every rank of D in this process with reference collectives. `inferred` are
// relations from a verify report (may be empty). Throws gg::InputError for inputs that cannot be
// synthesized or graphs that fail to execute.
CheckResult RunCheck(const ir::Graph& s_graph, const ir::Program& d_program,
                     const symbolic::SpecResult& spec,
                     const std::vector<symbolic::Relation>& inferred,
                     const CheckOptions& options = {});

// ---- the parts RunCheck shares with the distributed mode (runtime/mpi/distributed_check.h) ----
// Both plan the same passes from the same inputs, so every process of a distributed run knows
// which D tensors each pass keeps without being told; only how D runs differs.

// The relations to evaluate, grouped by S tensor, and the passes that keep D's kept tensors
// within the memory budget.
struct CheckPlan {
  std::map<ir::TensorRef, std::vector<RelationCheck>> pending;
  std::vector<std::vector<ir::TensorRef>> passes;          // S tensors compared in each pass
  std::vector<std::vector<std::set<ir::TensorRef>>> keep;  // per pass, per rank: D tensors kept
};
CheckPlan PlanCheck(const ir::Graph& s_graph, const ir::Program& d_program,
                    const symbolic::SpecResult& spec,
                    const std::vector<symbolic::Relation>& inferred, const CheckOptions& options);

// The observe hook of D's first run when classifying: fingerprints into `table` the D tensors
// that could take part in a candidate for a classified S tensor (as many dimensions or elements,
// and at most world-size times its elements). Empty when options.classify is.
using ValueObserver = std::function<void(int32_t rank, ir::TensorRef ref, const at::Tensor&)>;
ValueObserver DFingerprintObserver(const ir::Graph& s_graph, const ir::Program& d_program,
                                   const CheckOptions& options, FingerprintTable* table);

// The same inputs on `device` (a no-op for tensors already there).
ProgramInputs InputsOn(ProgramInputs inputs, at::Device device);

// How a check runs S and D: dropout as options say, seeded, graph outputs freed after use, on
// options.device.
ExecutionOptions CheckExecutionOptions(const CheckOptions& options);

// What one pass of D hands to the comparisons: the kept values of every rank.
struct DPass {
  std::vector<std::map<ir::TensorRef, at::Tensor>> kept;  // by rank
  std::string random_mode;                                // "dropout off", ...
};
// Runs D for pass `pass` with `exec` (keeping plan.keep[pass]); in the first pass of a check that
// classifies, `fingerprints` is the table DFingerprintObserver fills (else null). Throws
// gg::InputError when D fails to run.
using DPassRunner =
    std::function<DPass(size_t pass, const ExecutionOptions& exec, FingerprintTable* fingerprints)>;

// The check on given inputs: per pass, D through `run_d`, then (first pass) the perturbed S run
// and the plain S run that compares each relation the moment its S tensor exists.
CheckResult RunCheckPasses(const ir::Graph& s_graph, const ir::Program& d_program, CheckPlan plan,
                           const ProgramInputs& inputs, const CheckOptions& options,
                           const DPassRunner& run_d);

}  // namespace gg::runtime
