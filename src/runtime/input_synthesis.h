// InputSynthesis: the random inputs of a numeric check. S's inputs are drawn at random (floats
// scaled so that matrix products stay O(1); integers inside the range their consumers index;
// square boolean masks causal), and every rank's inputs of D are derived from them exactly through
// the relation spec's input relations, by running each relation backwards (a concat is split, a
// sum over ranks is split into random parts, a slice writes a region). Derived inputs are then
// checked forwards: the relations hold on the values handed to the executor, or the spec is
// contradictory and the error says which relation fails.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/program.h"
#include "runtime/executor.h"
#include "symbolic/relation_spec.h"

namespace gg::runtime {

struct ProgramInputs {
  GraphInputs s;
  std::vector<GraphInputs> d;      // by rank
  std::vector<std::string> notes;  // how inputs were drawn ("primals_18: int64 in [0, 98304),
                                   // the rows of embedding weight primals_1"), for the report
};

// Draws S's inputs from `seed` and derives D's. Throws gg::InputError (spec file) when a relation
// cannot be run backwards (its leaves are not D inputs, a slice of a computed value) or the derived
// inputs contradict one another.
// With `s_inputs`, those values are S's inputs (nothing is drawn for S), so that trials with
// different relations share S's values (infer-relations); the caller says where they came from
// (no note is added for them).
ProgramInputs SynthesizeInputs(const ir::Graph& s_graph, const ir::Program& d_program,
                               const symbolic::SpecResult& relations, uint64_t seed,
                               const std::vector<at::Tensor>* s_inputs = nullptr);

// The exclusive upper bound of the values an integer input of `graph` may take: the smallest size
// of a dimension it indexes (embedding rows, gathered or indexed dims, nll_loss classes, rotary
// cache rows), following it through views and elementwise arithmetic; nullopt when it indexes
// nothing. `why` says which consumer sets the bound.
std::optional<int64_t> IndexBound(const ir::Graph& graph, ir::NodeId input, std::string* why);

}  // namespace gg::runtime
