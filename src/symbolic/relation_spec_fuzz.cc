// libFuzzer entry point for the relation spec language: any bytes, parsed and evaluated against a
// small S/D pair (tests/data/goals/matmul_colpar), must either give a result or raise
// gg::InputError; anything else escaping (or a crash, a hang, a sanitizer report) is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "frontend/loader.h"
#include "symbolic/relation_spec.h"
#include "util/diagnostic.h"

#ifndef GG_SOURCE_DIR
#define GG_SOURCE_DIR "."
#endif

namespace {

struct Graphs {
  gg::ir::Graph s;
  gg::ir::Program d;
};

const Graphs& TestGraphs() {
  static const Graphs graphs = [] {
    const std::string dir = std::string(GG_SOURCE_DIR) + "/tests/data/goals/matmul_colpar";
    return Graphs{gg::frontend::LoadGraph(dir + "/seq.py"),
                  gg::frontend::LoadProgram({dir + "/dist"})};
  }();
  return graphs;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Graphs& graphs = TestGraphs();
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    gg::symbolic::RelationSpec spec = gg::symbolic::RelationSpec::Parse(text, "fuzz.rel");
    gg::symbolic::EvaluateSpec(spec, graphs.s, graphs.d);
  } catch (const gg::InputError&) {
  }
  return 0;
}
