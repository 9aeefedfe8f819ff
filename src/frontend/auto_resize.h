// Automatic resize: when a numeric run's estimated peak (frontend/memory_estimate.h) is over the
// memory budget, choose smaller sizes for it — the shape reduction of TrainVerify, on the
// --resize machinery (frontend/resize.h) — instead of running into the kernel's OOM killer.
//
// Which extents shrink: the static extents of S's inputs, those of its integer inputs (token ids,
// positions, labels: batch and sequence) first in the order their dims come, then the others
// largest first (vocabulary, hidden). An extent E is split when D carries E/k for a split factor k
// (the world size or a process group's size): its new size must stay divisible by every such k
// with at least 2 per shard, and D's E/k shrinks with it. Each candidate map is completed with the
// extents derived from it (DeriveResizeMap: 12288 = 8 x 1536 shrinks with 8), applied to S and
// every rank (each node type-checked again) and validated by the caller (the relation spec still
// holds: shards still divide); a candidate that fails is backed off (a larger size, then the next
// extent). Extents are taken one by one until the estimate is under the budget.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "frontend/memory_estimate.h"
#include "frontend/resize.h"
#include "ir/graph.h"
#include "ir/program.h"

namespace gg::frontend {

struct AutoResize {
  bool needed = false;  // the estimate at the given sizes is over the budget
  bool fits = false;    // the run fits: as given, or at the sizes chosen
  uint64_t budget = 0;
  MemoryEstimate before, after;  // after == before when not resized
  ResizeMap chosen;              // the extents chosen to shrink (S's sizes)
  ResizeMap s_map, d_map;        // with their derived extents, as applied
  ir::Graph s_graph;             // the resized graphs (when needed and fits)
  ir::Program d_program;
  // One line for the report: "estimated peak 31.2 GiB > budget 11.0 GiB: ran at 8=1 (S
  // 8=1,12288=1536; D 8=1,6144=768); estimate now 3.9 GiB", or why no sizes fit.
  std::string note;
  std::vector<std::string> rejected;  // candidates backed off from, with why
};

using MemoryEstimator = std::function<MemoryEstimate(const ir::Graph&, const ir::Program&)>;
// Throws gg::InputError when the resized graphs no longer fit what the run needs (the spec).
using ResizeValidator = std::function<void(const ir::Graph&, const ir::Program&)>;

// `budget` 0: no budget (never resized).
AutoResize FitMemoryBudget(const ir::Graph& s_graph, const ir::Program& d_program, uint64_t budget,
                           const MemoryEstimator& estimate, const ResizeValidator& validate);

}  // namespace gg::frontend
