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

// Which graph kind to read from directories holding several per rank (`fw.g0.r0.py`,
// `bw.g0.r0.py`, ...: the kind is the file name without `.r<N>` and the extension, "fw.g0").
// A pattern (fnmatch glob, `--graph`) matching the kind or the file name; empty: every file,
// and a directory with more than one kind for a rank is an error listing them. Per thread, set
// for the lifetime of the object (the commands that read graphs).
class GraphSelection {
 public:
  explicit GraphSelection(std::string pattern);
  ~GraphSelection();
  GraphSelection(const GraphSelection&) = delete;
  GraphSelection& operator=(const GraphSelection&) = delete;
  static const std::string& pattern();

 private:
  std::string previous_;
};

// The graph kind of a file name: "fw.g0" for ".../fw.g0.r0.py", "" for "r1.py".
std::string GraphKindOf(const std::string& path);

// Loads exactly one graph (the sequential model) from a file.
ir::Graph LoadGraph(const std::string& path);

}  // namespace gg::frontend
