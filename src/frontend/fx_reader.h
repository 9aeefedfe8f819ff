// FxReader: imports one rank's graph from torch.fx `print_readable` text (the Python subset that
// the capture prints: a forward() of one node per line, see the corpus README for the grammar).
//
// A small tokenizer and recursive-descent parser; every node is checked against the operator
// registry as it is read (inferred type vs annotation). Every problem is a gg::InputError with
// the file and line.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "ir/graph.h"

namespace gg::frontend {

struct FxOptions {
  // Size of the process groups collectives name (in FX captures every group is the whole world);
  // 0 when unknown. Passed to the registry's shape rules.
  int32_t group_size = 0;
  // Unbacked symbols (u0: a size computed from data) are values of one graph: with a suffix set
  // they are renamed u0<suffix> so that S and the ranks of D never share one ("_r" means
  // "_r<rank>"; the loader gives D's ranks "_r" and S "_s"). Empty: kept as written.
  std::string unbacked_suffix;
};

// Parses FX text; `file` names the source in errors and, when the text has no
// `# Graph[rank=R]` header, gives the rank through a `.r<R>.` in its name.
ir::Graph ParseFx(std::string_view text, const std::string& file, const FxOptions& options = {});

// Reads and parses a file.
ir::Graph ReadFxFile(const std::string& path, const FxOptions& options = {});

// Reads a whole file into a string; InputError(path, 0) when it cannot be read.
std::string ReadTextFile(const std::string& path);

}  // namespace gg::frontend
