// GraphEdit: small in-memory edits of a loaded graph that keep it well formed (topological order,
// node ids in every TensorRef, the name index) — for building mutated programs in tests, e.g.
// seeded bugs: "consumers read the all_reduce's input instead", "insert a transpose here".
// Type checking of the edited nodes is the caller's business (frontend::InferNodeTypes).
#pragma once

#include <optional>
#include <string>

#include "ir/graph.h"

namespace gg::ir {

// The operator, input or constant node named `name` (the FX node name, not an output name).
std::optional<NodeId> FindNode(const Graph& graph, const std::string& name);

// Replaces every use of `from` by `to` in the arguments (positional, keyword, inside lists) of the
// nodes after node `after` (-1: all nodes) and in the graph's outputs. `to` must be defined before
// every node whose use is replaced (InputError naming the graph file and that node's line; nothing
// is changed then). Returns the number of uses replaced. With `after` = the id of `to`, a node
// inserted to wrap `from` keeps reading it while everything downstream reads the wrapper.
int ReplaceAllUses(Graph* graph, TensorRef from, TensorRef to, NodeId after = -1);

// Removes node `id`, which nothing may use any more (InputError otherwise), and renumbers the
// references of later nodes, the graph outputs and the input list.
void RemoveNode(Graph* graph, NodeId id);

// Inserts `node` so that it gets id `at` (0 <= at <= size); nodes from `at` on move one up. The
// new node's arguments refer to ids as they are before the insertion and must be < `at`
// (InputError otherwise). Returns `at`.
NodeId InsertNode(Graph* graph, NodeId at, Node node);

// Renames output `ref` (its FX value name); InputError when another value already has the name.
void RenameValue(Graph* graph, TensorRef ref, const std::string& new_name);

}  // namespace gg::ir
