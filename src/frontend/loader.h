// Loader: turns what a user names on the command line into an ir::Program.
//
// Inputs are files in FX print_readable text (*.py, *.txt) or GraphGuard JSON (*.json), or
// directories of such files (one per rank). The rank of each graph comes from the file
// (`# Graph[rank=R]` or the JSON "rank" field). All errors are gg::InputError with file:line.
#pragma once

#include <string>
#include <vector>

#include "ir/program.h"

namespace gg::frontend {

// Loads one or more per-rank graphs (files and/or directories) into a Program; checks ranks are
// 0..N-1 without gaps or duplicates, infers process groups, checks the collective sequences of
// all ranks agree, and checks every node's inferred type against its annotation.
ir::Program LoadProgram(const std::vector<std::string>& paths);

// Loads exactly one graph (the sequential model) from a file.
ir::Graph LoadGraph(const std::string& path);

}  // namespace gg::frontend
