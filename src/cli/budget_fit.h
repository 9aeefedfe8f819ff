// The automatic resize of a numeric command (check, infer-relations) under --memory-budget: the
// steps around frontend::FitMemoryBudget that both commands take, so they resize, report and
// refuse alike.
#pragma once

#include <cstdint>
#include <string>

#include "frontend/auto_resize.h"
#include "ir/graph.h"
#include "ir/program.h"

namespace gg::cli {

// When the estimated peak of S and D is over `budget` (0: none), replaces *s_graph and *d_program
// with the graphs at the sizes frontend::FitMemoryBudget chose, appends the maps it applied to
// *s_resize and *d_resize (the texts of any --resize already applied: "GIVEN then MAP", whose
// extents MAP names at their given sizes) and returns the AutoResize note saying why and which;
// returns "" and changes nothing when they fit as they are. When no sizes fit, throws UsageError
// "RUN does not fit the memory budget: NOTE (give a larger --memory-budget, or --resize)": the
// run never starts, so it is never killed for memory.
std::string FitToMemoryBudget(const std::string& run, uint64_t budget,
                              const frontend::MemoryEstimator& estimate,
                              const frontend::ResizeValidator& validate, ir::Graph* s_graph,
                              ir::Program* d_program, std::string* s_resize, std::string* d_resize);

}  // namespace gg::cli
