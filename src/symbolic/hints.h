// Hints: candidate relations of S tensors that relation inference (inference.h) tries first.
//
// A hint is data, not evidence: inference still proves every relation it keeps. A hint only
// chooses which D neighbourhood is searched first (the D operators between the related tensors
// and the hinted ones) and, when flat, which clean form that search aims for, so a wrong hint
// costs a small failed attempt and never a verdict. Hints
// come from numeric fingerprint matching (`graphguard infer-relations --hints-out FILE`,
// runtime/infer_relations.h) but the symbolic core reads them without LibTorch.
//
// File format: one hint per line in the canonical relation text of relation.h,
//   S_TENSOR == EXPR          e.g.  add_3 == concat(1, add_3@0, add_3@1)
// where S_TENSOR is an FX value name of S ('node#i' for unnamed outputs) and EXPR is over D
// tensors `name@rank`; `//` starts a comment; blank lines are ignored. Several hints for one S
// tensor are all tried, in file order.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/program.h"
#include "symbolic/relation.h"

namespace gg::symbolic {

struct Hints {
  // Candidate expressions per S tensor, in the order given.
  std::map<ir::TensorRef, std::vector<RelExpr>> by_tensor;
  size_t count() const;
  bool empty() const { return by_tensor.empty(); }
  // Adds `expr` for `s_tensor` unless it is there already.
  void Add(ir::TensorRef s_tensor, RelExpr expr);
};

// What a numeric run offers as hints (`verify --guided`): every fingerprint match S tensor ==
// D expression that held, how the run was made, or why it could not run.
struct NumericGuide {
  std::vector<std::pair<ir::TensorRef, RelExpr>> matches;
  std::string how;    // "graphguard check, seed 0, cpu"
  std::string error;  // non-empty: no run, no hints
};

// The matches typed against the graphs the search is over: one whose type is not the S tensor's
// (a match at reduced sizes: slice bounds, reshape sizes) is left out and counted in *dropped.
Hints HintsFromMatches(const NumericGuide& guide, const ir::Graph& s_graph,
                       const ir::Program& d_program, size_t* dropped);

// Parses hint text against the graphs. Errors are gg::InputError(file, line, ...): a line that is
// not `S_TENSOR == EXPR`, an unknown S tensor, a malformed expression or unknown D tensor, or an
// expression whose shape is not the S tensor's (a hint for other graphs or other sizes).
Hints ParseHints(const std::string& text, const std::string& file, const ir::Graph& s_graph,
                 const ir::Program& d_program);
// Reads and parses a hint file (an unreadable file is an InputError too).
Hints LoadHints(const std::string& path, const ir::Graph& s_graph, const ir::Program& d_program);

// The hint file text: `header` (each line written as a `//` comment), then one line per hint in
// S node order. ParseHints reads it back to the same hints.
std::string FormatHints(const Hints& hints, const ir::Graph& s_graph, const std::string& header);

}  // namespace gg::symbolic
