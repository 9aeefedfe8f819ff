#include "ir/graph_edit.h"

#include <functional>
#include <string>
#include <utility>

#include "util/diagnostic.h"

namespace gg::ir {
namespace {

// Calls `fn` on every tensor reference inside `value` (depth first), allowing it to change them.
void VisitRefs(Value* value, const std::function<void(TensorRef*)>& fn) {
  if (value->is_tensor()) {
    fn(&value->as_tensor());
  } else if (value->is_list()) {
    for (Value& item : value->as_list()) VisitRefs(&item, fn);
  }
}

void VisitNodeRefs(Node* node, const std::function<void(TensorRef*)>& fn) {
  for (Value& arg : node->args) VisitRefs(&arg, fn);
  for (NamedArg& kw : node->kwargs) VisitRefs(&kw.value, fn);
}

void VisitAllRefs(Graph* graph, const std::function<void(NodeId user, TensorRef*)>& fn) {
  for (size_t id = 0; id < graph->nodes.size(); ++id) {
    VisitNodeRefs(&graph->nodes[id], [&](TensorRef* ref) { fn(static_cast<NodeId>(id), ref); });
  }
  for (Value& out : graph->outputs) {
    VisitRefs(&out, [&](TensorRef* ref) { fn(static_cast<NodeId>(graph->nodes.size()), ref); });
  }
}

int LineOf(const Graph& graph, NodeId id) {
  return id < static_cast<NodeId>(graph.nodes.size()) ? graph.nodes[id].def_line
                                                      : graph.return_line;
}

void CheckNodeId(const Graph& graph, NodeId id, const std::string& what) {
  if (id < 0 || id >= static_cast<NodeId>(graph.nodes.size())) {
    throw InputError(graph.file, 0, what + ": no node with id " + std::to_string(id));
  }
}

}  // namespace

std::optional<NodeId> FindNode(const Graph& graph, const std::string& name) {
  for (size_t id = 0; id < graph.nodes.size(); ++id) {
    if (graph.nodes[id].name == name) return static_cast<NodeId>(id);
  }
  return std::nullopt;
}

int ReplaceAllUses(Graph* graph, TensorRef from, TensorRef to, NodeId after) {
  CheckNodeId(*graph, from.node, "replace uses");
  CheckNodeId(*graph, to.node, "replace uses");
  // Users are visited in id order and every rejected one precedes every accepted one, so a
  // rejection happens before anything was changed.
  int replaced = 0;
  VisitAllRefs(graph, [&](NodeId user, TensorRef* ref) {
    if (user <= after || !(*ref == from)) return;
    if (to.node >= user) {
      throw InputError(graph->file, LineOf(*graph, user),
                       "cannot make '" + (user < static_cast<NodeId>(graph->nodes.size())
                                              ? graph->nodes[user].name
                                              : std::string("return")) +
                           "' read " + graph->ValueName(to) + ": it is defined later");
    }
    *ref = to;
    ++replaced;
  });
  return replaced;
}

void RemoveNode(Graph* graph, NodeId id) {
  CheckNodeId(*graph, id, "remove node");
  VisitAllRefs(graph, [&](NodeId user, TensorRef* ref) {
    if (ref->node == id) {
      throw InputError(graph->file, LineOf(*graph, user),
                       "cannot remove '" + graph->nodes[id].name + "': " +
                           graph->ValueName(*ref) + " is still used here");
    }
  });
  graph->nodes.erase(graph->nodes.begin() + id);
  VisitAllRefs(graph, [&](NodeId, TensorRef* ref) {
    if (ref->node > id) --ref->node;
  });
  graph->Reindex();
}

NodeId InsertNode(Graph* graph, NodeId at, Node node) {
  if (at < 0 || at > static_cast<NodeId>(graph->nodes.size())) {
    throw InputError(graph->file, 0, "insert node: position " + std::to_string(at) +
                                         " is outside the graph");
  }
  VisitNodeRefs(&node, [&](TensorRef* ref) {
    if (ref->node < 0 || ref->node >= at) {
      throw InputError(graph->file, node.def_line,
                       "insert node '" + node.name + "': its argument refers to node " +
                           std::to_string(ref->node) + ", which is not before position " +
                           std::to_string(at));
    }
  });
  VisitAllRefs(graph, [&](NodeId, TensorRef* ref) {
    if (ref->node >= at) ++ref->node;
  });
  graph->nodes.insert(graph->nodes.begin() + at, std::move(node));
  graph->Reindex();
  return at;
}

void RenameValue(Graph* graph, TensorRef ref, const std::string& new_name) {
  CheckNodeId(*graph, ref.node, "rename");
  Node& node = graph->nodes[ref.node];
  if (ref.output < 0 || ref.output >= static_cast<int32_t>(node.outputs.size())) {
    throw InputError(graph->file, node.def_line,
                     "rename: '" + node.name + "' has no output " + std::to_string(ref.output));
  }
  auto existing = graph->Find(new_name);
  if (existing && !(*existing == ref)) {
    throw InputError(graph->file, node.def_line,
                     "rename: the name '" + new_name + "' is already taken");
  }
  node.outputs[ref.output].name = new_name;
  // A single-output node carries its output's name (FX prints one name for both).
  if (node.outputs.size() == 1) node.name = new_name;
  graph->Reindex();
}

}  // namespace gg::ir
