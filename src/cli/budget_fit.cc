#include "cli/budget_fit.h"

#include <utility>

#include "cli/command_line.h"
#include "frontend/resize.h"

namespace gg::cli {

std::string FitToMemoryBudget(const std::string& run, uint64_t budget,
                              const frontend::MemoryEstimator& estimate,
                              const frontend::ResizeValidator& validate, ir::Graph* s_graph,
                              ir::Program* d_program, std::string* s_resize,
                              std::string* d_resize) {
  frontend::AutoResize fit =
      frontend::FitMemoryBudget(*s_graph, *d_program, budget, estimate, validate);
  if (!fit.needed) return "";
  if (!fit.fits) {
    throw UsageError(run + " does not fit the memory budget: " + fit.note +
                     " (give a larger --memory-budget, or --resize)");
  }
  *s_graph = std::move(fit.s_graph);
  *d_program = std::move(fit.d_program);
  auto join = [](const std::string& given, const frontend::ResizeMap& map) {
    return given.empty() ? frontend::ResizeMapText(map)
                         : given + " then " + frontend::ResizeMapText(map);
  };
  *s_resize = join(*s_resize, fit.s_map);
  *d_resize = join(*d_resize, fit.d_map);
  return fit.note;
}

}  // namespace gg::cli
