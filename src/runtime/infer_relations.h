// Relation inference by execution: writes a relation spec (docs/relations.md) for a sequential
// graph S and a distributed program D that a user can review, instead of writing it by hand.
//
// Method. Every S input is paired with the D input of the same name on each rank (captures keep
// input names). Its candidate relations come from the shapes: equal on every rank -> replicate;
// one dimension whose rank extents add up to S's -> shard(d), and the fused layouts where each
// rank holds a slice of every block ([q; k; v], [gate; up]): S is the blocks one after another,
// each block the ranks' pieces in rank order (with fewer S rows than ranks hold, only every
// rep-th rank contributes: replicated kv heads). Block sizes come from the split_with_sizes nodes
// of the graphs, or equal blocks. Where an input has more than one candidate, S and D are
// executed on synthesized inputs (input_synthesis.h, dropout off) for each choice, and the choice
// under which the most S tensors are matched by some D expression (fingerprint_match.h) wins.
// Inputs that feed the same operator (a weight and its bias) are chosen together. The outputs'
// relations are the fingerprint matches of the final run, written as replicate / shard(d) /
// partial of the same-position D outputs where they are that, else as an explicit expression.
//
// Assumptions, written into the spec as comments: graph constants the capture omits are 0 (the
// executor's default; a `constant` line states it); dropout is off; a match on one random draw
// is evidence, not proof (verify proves, check re-tests on other seeds).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "frontend/memory_estimate.h"
#include "ir/graph.h"
#include "ir/program.h"
#include "runtime/fingerprint.h"
#include "runtime/fingerprint_match.h"
#include "symbolic/hints.h"

namespace gg::runtime {

struct InferOptions {
  uint64_t seed = 1;
  // 8 projections (the most): candidates are searched slice by slice at bf16 depth, where a
  // threshold loose enough for rounding noise lets 4 projections of an unrelated slice pass by
  // chance about once in 2000 slices; with 8, about once in 10^7.
  FingerprintOptions fingerprint{.projections = 8};
  MatchOptions match;
  // Computed values with more elements are not fingerprinted (unless returned): see
  // ComputedValueObserver in the .cc.
  int64_t max_fingerprint_elements = int64_t{1} << 22;
  // Which S outputs get an `output` line (positions in S's return list); empty: every output that
  // is not an S input and is matched.
  std::vector<int64_t> outputs;
  std::string resize_text;  // for the spec's banner ("8=1,12288=1536"), empty when not resized
  std::string s_origin;     // for the banner: S's file
  // For the banner: why the runs were resized, when --memory-budget chose the sizes
  // (frontend::AutoResize::note); empty otherwise.
  std::string memory_note;
  // Also collect hints for verify (InferResult::hints).
  bool hints = false;
};

struct InferResult {
  std::string spec_text;
  int executions = 0;          // D executions (one per trial)
  int s_tensors = 0;           // S tensors computed (not inputs or constants), fingerprinted
  int matched = 0;             // of those, matched by some D expression in the best run
  std::vector<std::string> unresolved;  // S inputs without a relation (a comment in the spec)
  std::vector<std::string> unmatched;   // S tensors no D expression matched in the best run
  std::vector<std::string> notes;       // choices made, as written into the spec
  std::vector<std::string> trials;      // each D run: what was tried and how many matched
  // With InferOptions::hints: every holding candidate of every S tensor in the best run, as
  // hints for `verify --hints` (symbolic/hints.h), over the graphs the spec is written for. A
  // candidate that does not type-check on them (a resized run's slice bounds or reshape sizes)
  // is left out and counted in hints_dropped.
  symbolic::Hints hints;
  size_t hints_dropped = 0;
  double seconds_inputs = 0, seconds_s = 0, seconds_d = 0, seconds_match = 0;
};

// Infers the spec for `s_graph` and `d_program` (whose sizes the spec text uses), executing
// `run_s` and `run_d`: the same graphs, possibly resized (frontend/resize.h; same nodes, smaller
// extents). An S input without a D input of the same name, or whose D inputs are no split of it,
// is listed in `unresolved` and written as a comment. Throws gg::InputError for graphs that
// cannot be executed.
InferResult InferRelations(const ir::Graph& s_graph, const ir::Program& d_program,
                           const ir::Graph& run_s, const ir::Program& run_d,
                           const InferOptions& options = {});

// The peak memory of InferRelations executing `run_s` and `run_d`, before anything runs (for
// --memory-budget, frontend/auto_resize.h): frontend::EstimateCheckMemory's model of a run that
// compares nothing (S's and D's inputs; S's plain and perturbed runs, or one D run), plus the
// fingerprints: the tables held at once (S's with the perturbed run's, or S's with the best and
// the current D run's) and the float64 copy of the value being fingerprinted.
frontend::MemoryEstimate EstimateInferMemory(const ir::Graph& run_s, const ir::Program& run_d,
                                             const InferOptions& options = {});

// Throws gg::InputError (S's file, the input's line) when a candidate layout of an S input,
// found on `s_graph` and `d_program`, no longer instantiates on the resized `run_s` and `run_d`
// as a relation of S's resized type: the runs would then not test the layouts the spec is
// chosen from (a fused block that no longer divides, a shard that no longer adds up).
void CheckResizedLayouts(const ir::Graph& s_graph, const ir::Program& d_program,
                         const ir::Graph& run_s, const ir::Program& run_d);

}  // namespace gg::runtime
