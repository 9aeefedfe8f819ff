// Liveness of a graph's values in its node order: where each value is read for the last time.
// The executor frees a value after that node; the numeric run's memory estimate
// (frontend/memory_estimate.h) follows the same order, so both read it from here.
#pragma once

#include <cstddef>
#include <map>

#include "ir/graph.h"

namespace gg::ir {

// Every output of every node -> the index of the last node that reads it (its own node when
// nothing does).
std::map<TensorRef, size_t> LastUses(const Graph& graph);

}  // namespace gg::ir
