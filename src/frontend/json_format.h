// JsonFormat: GraphGuard's own graph file format (versioned JSON, documented field by field in
// docs/graph-format.md). It holds exactly what ir::Graph holds, so FX -> JSON -> IR is lossless:
// int vs float, inf/nan, dtypes, devices, enums, operator references, source locations.
// Reading checks the structure and re-infers every node's types against the registry; every
// problem is a gg::InputError with the file and, where it can be found, the line.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/node_check.h"
#include "ir/program.h"

namespace gg::frontend {

inline constexpr int kJsonFormatVersion = 1;

// What one JSON file holds: one graph ("graph") or several ("graphs", with "process_groups").
// Graphs keep the rank the file gives them; the loader puts them in order and checks them.
struct JsonGraphs {
  std::vector<ir::Graph> graphs;
  GroupMap groups;
  // Per graph (parallel to `graphs`): the groups as that rank names them (a graph's own
  // "process_groups"), empty when it has none. The loader identifies groups by their members.
  std::vector<GroupMap> local_groups;
  bool is_program = false;  // the file used the "graphs" form
};

// Parses JSON text; `file` names it in errors. `default_group_size` is used for collectives whose
// group the file does not define (0: unknown).
JsonGraphs ParseJson(std::string_view text, const std::string& file,
                     int32_t default_group_size = 0);
JsonGraphs ReadJsonFile(const std::string& path, int32_t default_group_size = 0);

// Writes the program form (all ranks and the process groups).
void WriteJson(const ir::Program& program, std::ostream& out);
// Writes the single-graph form.
void WriteJson(const ir::Graph& graph, std::ostream& out);
std::string ToJson(const ir::Program& program);
std::string ToJson(const ir::Graph& graph);

}  // namespace gg::frontend
