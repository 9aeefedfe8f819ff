// `graphguard infer-relations`: writes a relation spec for S and D (runtime/infer_relations.h)
// that a user reviews instead of writing one by hand. One entry of the numeric command table.
#include <sstream>

#include "cli/budget_fit.h"
#include "cli/numeric_commands.h"
#include "cli/runtime_plugin.h"
#include "cli/verify_command.h"
#include "frontend/loader.h"
#include "report/exit_codes.h"
#include "runtime/infer_relations.h"
#include "symbolic/hints.h"
#include "util/diagnostic.h"

namespace gg::cli {
namespace {

int RunInferRelations(const ParsedCommand& command, std::ostream& out) {
  std::string seq = command.One("--seq");
  std::vector<std::string> dist = command.Many("--dist");
  std::string output = command.One("--output");
  runtime::InferOptions options;
  options.seed = static_cast<uint64_t>(NonNegativeInteger(command, "--seed", 1));
  options.s_origin = seq;
  std::string hints_path = command.One("--hints-out");
  options.hints = !hints_path.empty();
  if (command.Has("--outputs")) {
    std::stringstream list(command.One("--outputs"));
    std::string item;
    while (std::getline(list, item, ',')) {
      try {
        size_t used = 0;
        options.outputs.push_back(std::stoll(item, &used));
        if (used != item.size()) throw std::invalid_argument(item);
      } catch (const std::exception&) {
        throw UsageError("--outputs: '" + item + "' is not an output position (e.g. 0,2)");
      }
    }
  }

  // Options are checked before any work.
  const uint64_t budget = MemoryBudget(command);

  ir::Graph s_graph = frontend::LoadGraph(seq);
  ir::Program d_program = frontend::LoadProgram(dist);
  ir::Graph run_s = s_graph;
  ir::Program run_d = d_program;
  std::string s_map, d_map;
  ApplyResize(command, &run_s, &run_d, &s_map, &d_map);
  RequireStaticShapes(run_s, run_d, "infer-relations");
  // Over the budget, the runs take smaller sizes still (on top of --resize); the spec and hints
  // are written for the loaded graphs, leaving out what holds at the run's sizes only.
  const std::string memory = FitToMemoryBudget(
      "infer-relations", budget,
      [&](const ir::Graph& s, const ir::Program& d) {
        return runtime::EstimateInferMemory(s, d, options);
      },
      [&](const ir::Graph& s, const ir::Program& d) {
        runtime::CheckResizedLayouts(s_graph, d_program, s, d);
      },
      &run_s, &run_d, &s_map, &d_map);
  options.resize_text = s_map == d_map || d_map.empty() ? s_map : "S " + s_map + ", D " + d_map;
  options.memory_note = memory;

  runtime::InferResult result = runtime::InferRelations(s_graph, d_program, run_s, run_d, options);
  WriteOutput(output, result.spec_text, out);
  if (options.hints) {
    std::string header =
        "graphguard hints: candidate relations of S tensors from fingerprint matching\n"
        "(infer-relations, seed " +
        std::to_string(options.seed) +
        (options.resize_text.empty() ? "" : ", resized " + options.resize_text) + ") for " + seq +
        (memory.empty() ? "" : ".\nMemory: " + memory) +
        ".\nNot proofs: 'graphguard verify --hints FILE' tries them first and proves each.\n" +
        std::to_string(result.hints.count()) + " hints for " +
        std::to_string(result.hints.by_tensor.size()) + " S tensors; " +
        std::to_string(result.hints_dropped) +
        " matches left out (sizes of the resized run, not of these graphs).";
    WriteOutput(hints_path, symbolic::FormatHints(result.hints, s_graph, header), out);
  }
  if (output != "-") {
    out << "wrote " << output << ": " << result.matched << " of " << result.s_tensors
        << " S tensors matched, " << result.executions << " D run"
        << (result.executions == 1 ? "" : "s") << "\n";
    if (!memory.empty()) out << "  memory: " << memory << "\n";
    for (const std::string& note : result.notes) out << "  chosen: " << note << "\n";
    if (options.hints && hints_path != "-") {
      out << "wrote " << hints_path << ": " << result.hints.count() << " hints for "
          << result.hints.by_tensor.size() << " S tensors (" << result.hints_dropped
          << " left out: sizes of the resized run)\n";
    }
    for (const std::string& name : result.unresolved) {
      out << "  NO RELATION for input " << name << " (see the comment in the spec)\n";
    }
  }
  return result.unresolved.empty() ? report::kExitOk : report::kExitUnknown;
}

}  // namespace

Command InferRelationsCommand() { return Command{InferRelationsSpec(), RunInferRelations}; }

}  // namespace gg::cli
