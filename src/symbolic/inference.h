// Inference: relation inference over the sequential graph S, operator by operator, and the
// verdict that follows: REFINES when every expected output relation is proved, else UNKNOWN with
// its cause (a limit that was hit, or a search that ended without a relation) and the S operator
// where the proof stopped. The lemma catalogue is incomplete, so a search that saturates without a
// relation proves nothing wrong: only numeric evidence (NumericEvidence below) turns it into
// a VIOLATION.
//
// For each S operator that the expected outputs depend on, a small local e-graph holds: the
// relations already known for its inputs, the operator itself, and the D operators reachable from
// the D tensors in those relations (structural ones — views, collectives — freely, computing ones
// up to a hop limit). Saturating it with the lemma catalogue and extracting the cheapest clean
// class member gives the operator's relation. Every limit is explicit and reported.
//
// Hints (hints.h), when given, guide the search: an operator whose wanted outputs all have hints
// is searched only over the D operators on the paths from its inputs' related D tensors to the
// hinted ones; when that relates nothing, the operator is left without a relation (its consumers
// read its S definition), with no search of the whole neighbourhood, unless the operator reads
// both a related tensor and an unrelated one whose S definition that attempt carried in (the
// proof then needs D operators off the paths): then the full search follows. A flat hint (D
// tensors, concats and sums of them) is that attempt's goal: the output proved equal to it, so
// the relation passed on is the short hinted form. Nothing is trusted: a
// relation kept is one the e-graph proves, and a guided run that does not end REFINES is run
// again without hints, whose verdict is the one reported. So a wrong hint costs work, never a
// verdict.
//
// Operators of S that do not read each other's outputs (one level: one more than the deepest
// operator an input comes from) are searched in rounds: each round builds every open operator's
// next local problem in node order on the calling thread, saturates the new ones side by side
// (InferenceOptions::threads), and takes the solutions in node order; so what is inferred does not
// depend on the thread count.
//
// Local problems repeat (identical layers): one equal to an earlier one up to a renaming of its
// tensors (the same seeded e-graph, memo.h) takes that one's saturation and extraction, renamed,
// instead of saturating again; the report is the same, with the counts in VerifyResult.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/program.h"
#include "symbolic/hints.h"
#include "symbolic/relation.h"
#include "symbolic/relation_spec.h"
#include "symbolic/rewrite.h"

namespace gg::symbolic {

struct InferenceOptions {
  RunnerLimits per_node;       // limits of each local saturation
  // D computing operators allowed beyond the related D tensors: the search starts at
  // compute_hops and doubles while an operator stays unrelated and the neighbourhood grows, up to
  // max_compute_hops (a reported limit).
  int32_t compute_hops = 1;
  int32_t max_compute_hops = 1024;
  // Deepenings past a node or iteration limit: a search that hits one in a neighbourhood that
  // was cut short is tried again deeper, at most this many times per operator (0: a limit ends
  // the operator's search, as a time limit always does).
  int32_t limit_deepenings = 2;
  // How deep S operators without a relation of their own are carried into their consumers.
  int32_t max_inline_depth = 16;
  size_t max_d_nodes = 4000;   // D operators added to one local e-graph
  // Relations kept per S tensor (every replica on every rank is one); 0 keeps all, which
  // later operators need to meet each rank's D operators by congruence.
  size_t max_relations = 0;
  // Candidate relations that guide the search (not owned; nullptr: none).
  const Hints* hints = nullptr;
  // Called with each S operator before its search (empty: none). For a progress display
  // (report/progress.h) only: it must not throw or change what is inferred.
  std::function<void(ir::NodeId)> progress;
  // Reuse the solution of a local problem for every later one equal to it up to a renaming of
  // its tensors (memo.h: the same seeded e-graph, so the same saturation); false solves each
  // afresh (`verify --no-memo`). The verdict and relations are the same either way.
  bool memoize = true;
  // A debugging aid for lemma authors (`verify --dump-egraph NAME`): the S operator of that
  // name is always saturated (never answered from the memo) and each of its saturated local
  // e-graphs is printed to stderr. Empty: none.
  std::string dump_egraph;
  // Threads saturating independent local problems side by side (operators of S that do not read
  // each other's outputs); 0: the machine's hardware threads. What is inferred, and the report,
  // are the same for every count.
  size_t threads = 0;
};

enum class NodeStatus {
  kInferred,    // a clean relation was found for every tensor output that matters
  kNoRelation,  // saturated (or goal unreachable) without a clean relation
  kLimitHit,    // a limit stopped the search first
  kBlocked,     // an input has no relation (downstream of an earlier failure)
  kConflict,    // the e-graph equated tensors of different types: a lemma or spec is wrong
};
std::string_view NodeStatusName(NodeStatus status);

enum class HintUse {
  kNone,           // no hint for every wanted output (or no hints at all)
  kRelated,        // the search towards the hinted tensors related every output (not
                   // necessarily to the hinted expression: whatever the e-graph proves there)
  kLeftUnrelated,  // it did not: the operator is left without a relation
  kFullRelated,    // it did not, with an unrelated input's S definition carried in next to a
                   // related input, and the full search that followed related every output
};
std::string_view HintUseName(HintUse use);

struct InferredRelation {
  Relation relation;
  std::vector<std::string> proof;  // lemma ids along the proof, in order
};

struct NodeOutcome {
  ir::NodeId s_node = -1;
  NodeStatus status = NodeStatus::kInferred;
  std::vector<InferredRelation> relations;  // for the node's outputs
  std::string detail;                       // why not, for failures
  std::vector<std::string> candidates;      // D operators in the local e-graph ("mm@0")
  StopReason stop = StopReason::kSaturated;
  int32_t hops = 0;  // depth of the D neighbourhood of the last attempt
  size_t iterations = 0;
  size_t egraph_nodes = 0;
  size_t egraph_classes = 0;
  double seconds = 0;
  HintUse hint = HintUse::kNone;
  // Work over every attempt (the guided one or each deepening step; the sizes above are the last
  // attempt's): local e-graphs built, their e-nodes, e-classes and saturation iterations summed.
  size_t attempts = 0;
  size_t work_nodes = 0;
  size_t work_classes = 0;
  size_t work_iterations = 0;
};

enum class Verdict { kRefines, kViolation, kUnknown };
std::string_view VerdictName(Verdict verdict);

// Why the symbolic engine did not prove REFINES (kept when evidence makes it a VIOLATION).
enum class UnknownCause {
  kNone,        // the proof completed (REFINES)
  kLimit,       // a node, iteration, time or hop limit stopped a search first, or an operator
                // has no lowering into the tensor language
  kNoRelation,  // searches ended (saturated) without relating an operator or showing an output:
                // S and D differ there, or the catalogue lacks a lemma
  kConflict,    // the e-graph equated tensors of different types: a lemma or the spec is wrong
  kOpaque,      // the first failing S operator is unknown to the registry (an opaque node loaded
                // from its annotation, equal only by congruence) and the proof must look inside
};
// "limit", "no-relation", "conflict", "opaque"
std::string_view UnknownCauseName(UnknownCause cause);

// The rounding tolerance of the numeric check is a model (tolerance.h), not a bound. Its known
// misses were isolated: 1 to 3 elements of an accumulation beyond it by at most 1.2x. A failure
// confined to at most kMarginalElements elements, each within kDecisiveExcess times its
// tolerance, is reported, never called a VIOLATION. Real differences are wide or far: the bug
// benchmark's exceed the tolerance by 876x to 840000x, a seeded one-column shift of Qwen2's
// rotary scatter (bf16) by 2.1x in 598 elements.
inline constexpr double kDecisiveExcess = 4.0;
inline constexpr int64_t kMarginalElements = 3;

// What a run of S and D on random inputs said about an UNKNOWN verdict (gathered by the numeric
// engine, runtime/; the core only records it and decides with it, see ApplyNumericEvidence).
struct NumericEvidence {
  std::string how;    // "graphguard check, seed 0, cpu"
  std::string error;  // no evidence: the run could not be made, or an assumed relation of the
                      // spec does not hold numerically (a false premise, not a difference of D)
  // Counterexamples: expected output relations that fail in more than kMarginalElements elements,
  // or by at least kDecisiveExcess times their tolerance, or by NaN on one side ("y == y@0: max
  // |S-D| 3.1 ...; 1.2e+05x its tolerance"), or D failing on inputs S runs on. Any makes a
  // VIOLATION.
  std::vector<std::string> counterexamples;
  // Expected output relations beyond their tolerance in at most kMarginalElements elements, by
  // less than kDecisiveExcess.
  std::vector<std::string> marginal;
  size_t outputs_checked = 0;      // expected output relations
  size_t outputs_agreeing = 0;     // ... of which hold numerically
  size_t outputs_unevaluated = 0;  // ... of which could not be evaluated
  // What the S tensors of the operator where the proof stopped equal numerically, by fingerprints
  // ("y: sum: y@0, y@1 (error 1.1e-07, tolerance 3.8e-06)"): a match points at a missing lemma.
  std::vector<std::string> classification;
  // Lemmas proposed from that classification (runtime/lemma_proposal.h), each a ready-to-paste
  // block in the catalogue's syntax (comment, rule, `#   test` line) that passed its numeric
  // self-test; `verify --accept-proposed` re-runs with them as user lemmas.
  std::vector<std::string> proposals;
  // Why and at which sizes the run was made when its memory estimate was over the budget
  // (frontend/auto_resize.h); "" at the verified sizes.
  std::string resized;
};

struct OutputCheck {
  Relation expected;
  bool implied = false;
  std::string detail;
  std::vector<std::string> proof;
};

struct VerifyResult {
  Verdict verdict = Verdict::kUnknown;
  UnknownCause unknown_cause = UnknownCause::kNone;  // why the symbolic engine left it UNKNOWN
  std::string summary;                               // one line
  std::optional<NumericEvidence> evidence;           // when the numeric engine was asked
  // What the verdict takes as given (assumed relations, stated constants, spec premises, models
  // of random operators), sorted and unique; a REFINES with any is "REFINES under N premises".
  std::vector<Premise> premises;
  std::vector<NodeOutcome> nodes;                    // S operators inferred, in topological order
  std::vector<OutputCheck> outputs;                  // expected output relations
  std::optional<size_t> first_failure;               // index into nodes
  size_t max_egraph_nodes = 0;
  size_t total_egraph_nodes = 0;
  size_t hints_given = 0;           // hint expressions in InferenceOptions::hints
  size_t hints_related = 0;         // S operators related by the search towards their hints
  size_t hints_left_unrelated = 0;  // S operators that search did not relate
  size_t hints_full_related = 0;    // related by the full search that followed a failed one
  size_t hints_proved = 0;          // hint expressions among the relations it kept
  // The guided run did not end REFINES, so this result is the run without hints; the counts
  // above, its summary and its e-nodes (summed work) are the guided run's.
  bool hints_rerun = false;
  std::string hints_guided_stop;
  size_t hints_guided_nodes = 0;
  // Local problems (one per search of an S operator: the guided one, each deepening step) saturated
  // afresh, and answered from an identical earlier one (InferenceOptions::memoize).
  size_t local_solved = 0;
  size_t local_reused = 0;
  double seconds = 0;
  // Every relation known per S tensor name (inputs, assumptions and inferred), for `explain`.
  std::map<std::string, std::vector<InferredRelation>> relations;
};

// Runs inference and decides the verdict: REFINES or UNKNOWN (never VIOLATION: that needs
// evidence). `rules` is the lemma catalogue.
VerifyResult Verify(const ir::Graph& s_graph, const ir::Program& d_program, const SpecResult& spec,
                    const std::vector<Rewrite>& rules, const InferenceOptions& options);

// Adds premises to result->premises, keeping the list sorted and unique.
void AddPremises(VerifyResult* result, const std::vector<Premise>& premises);

// The premise that floating-point rounding at casts is ignored (kind "rounding"): when `rules`
// hold the rounding family's lemmas (lemmas/rounding.rules: casts commuted with sums up to
// rounding) and a proof of `result` uses one or a graph holds a narrowing floating-point
// conversion (an operator whose output has fewer ir::SignificandBits than its floating input:
// f32 -> bf16, f32 -> f16, ...). Its text names the lemmas used and the conversions (the first few of
// each graph, then how many more); empty otherwise.
std::vector<Premise> RoundingPremises(const ir::Graph& s_graph, const ir::Program& d_program,
                                      const std::vector<Rewrite>& rules,
                                      const VerifyResult& result);

// Records the numeric evidence of an UNKNOWN verdict and decides with it: a counterexample makes
// it a VIOLATION (the symbolic engine still says where the proof stopped); outputs that agree
// leave it UNKNOWN and say so (a missing lemma is then the likely cause, the classification shows
// what the stopping tensor equals). REFINES is never changed.
void ApplyNumericEvidence(VerifyResult* result, NumericEvidence evidence);

}  // namespace gg::symbolic
