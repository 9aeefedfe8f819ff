// libFuzzer entry point for the GraphGuard JSON reader: any bytes must either parse or raise
// gg::InputError. A graph that parses is written out and read back, which must succeed too.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "frontend/json_format.h"
#include "util/diagnostic.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  gg::frontend::JsonGraphs graphs;
  try {
    graphs = gg::frontend::ParseJson(text, "fuzz.json", 2);
  } catch (const gg::InputError&) {
    return 0;
  }
  // What was read must write and read back (a failure here is a writer/reader disagreement).
  for (const gg::ir::Graph& g : graphs.graphs) {
    try {
      gg::frontend::ParseJson(gg::frontend::ToJson(g), "again.json", 2);
    } catch (const gg::InputError&) {
      // Process groups are not part of the single-graph form, so a group_size check may differ.
      if (graphs.groups.empty()) std::abort();
    }
  }
  return 0;
}
