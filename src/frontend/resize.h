// Resize: runs a captured program at smaller sizes. Captures have static shapes (batch 8, 1536
// tokens, ...), which makes a numeric check of the corpus graphs minutes long on a CPU; replacing
// chosen literal extents (8 -> 1, 12288 -> 1536, ...) in every type and shape argument gives the
// same program on smaller tensors. The result is type-checked node by node like a freshly loaded
// graph, so a map that misses a derived extent (12288 = 8 * 1536) is an error naming the node,
// never a silently different program.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "ir/graph.h"
#include "ir/program.h"

namespace gg::frontend {

// Old extent -> new extent.
using ResizeMap = std::map<int64_t, int64_t>;

// Parses "8=1,12288=1536" (positive integers, no key twice); InputError(origin, 0, ...) otherwise.
ResizeMap ParseResizeMap(const std::string& text, const std::string& origin = "--resize");

// "8=1,12288=1536"
std::string ResizeMapText(const ResizeMap& sizes);

// Replaces every static extent found in `sizes` in the annotated types of the graph's values and
// in the integer size arguments of its operators (SymInt / int[] / SymInt[] arguments, and
// integer Scalars such as range bounds and vocabulary offsets — so choose OLD values that are not
// also unrelated constants), then re-infers every node's types. A node whose inferred type differs
// from its resized annotation, or whose shape rule now fails, is an InputError(file, line) that
// says which extent is probably missing from the map.
ir::Graph ResizeGraph(const ir::Graph& graph, const ResizeMap& sizes,
                      const std::map<std::string, std::vector<int32_t>>& groups = {});

// The whole map a resize needs, from seeds: the extents chosen to shrink (8=1) plus every extent
// derived from them that the graph carries — an output dim its shape rule now computes otherwise
// (12288 = 8 x 1536 -> 1536 after a view of [8, 1536, 768]), a size literal that must scale by
// one of the map's ratios for its node to type-check (a view to [12288, 768]). The result holds
// for ResizeGraph; an extent that would need two different new sizes, or a node no derived size
// fits, is the InputError ResizeGraph gives.
// `reverted` (optional) receives the mapped extents some size literal had to keep (the node, by
// extent): there the extent also stands for another size (96 = batch x heads and 3 x head_dim).
ResizeMap DeriveResizeMap(const ir::Graph& graph, const ResizeMap& seeds,
                          const std::map<std::string, std::vector<int32_t>>& groups = {},
                          std::map<int64_t, std::string>* reverted = nullptr);
// DeriveResizeMap over every rank of a program until one map holds for all of them.
ResizeMap DeriveProgramResizeMap(const ir::Program& program, const ResizeMap& seeds,
                                 std::map<int64_t, std::string>* reverted = nullptr);

// ResizeGraph on every rank (with the program's groups).
ir::Program ResizeProgram(const ir::Program& program, const ResizeMap& sizes);

}  // namespace gg::frontend
