// Graph and Node: one rank's captured program (or the sequential model) as a list of nodes in
// topological order, as torch.fx prints it.
//
// A node is a graph input, a graph constant (a `self._tensor_constantN` attribute whose value the
// capture did not record), or an operator call. An operator call keeps its arguments as written
// (positional and keyword) and has one or more outputs; FX's tuple-then-getitem pattern is folded
// into the multi-output node (output i is `node[i]`). `auto_functionalized(op, ...)` becomes a call
// of `op` with `functionalized` set: output 0 is op's return (a None slot for void ops) and the
// outputs after it are the new values of op's mutated arguments, in schema order.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/shape.h"
#include "ir/value.h"

namespace gg::ir {

// Where the captured framework code that produced a node lives (FX's "# File:" comment).
struct SourceLocation {
  std::string file;
  int32_t line = 0;
  std::string function;
  std::string code;
  bool empty() const { return file.empty(); }
  std::string ToString() const;  // "megatron/core/x.py:12 in f"
  friend bool operator==(const SourceLocation& a, const SourceLocation& b) {
    return a.file == b.file && a.line == b.line && a.function == b.function && a.code == b.code;
  }
};

// Operator identity: namespace::name.overload, e.g. aten::add.Tensor, _c10d_functional::
// all_reduce.default. The overload may be empty (torch.ops.vllm.all_reduce called bare).
struct OpName {
  std::string ns;
  std::string name;
  std::string overload;
  std::string ToString() const;  // "aten::add.Tensor"
  // Parses "aten::add.Tensor" or the Python spelling "torch.ops.aten.add.Tensor".
  static std::optional<OpName> Parse(const std::string& text);
  friend bool operator==(const OpName& a, const OpName& b) {
    return a.ns == b.ns && a.name == b.name && a.overload == b.overload;
  }
  friend bool operator<(const OpName& a, const OpName& b) { return a.ToString() < b.ToString(); }
};

enum class NodeKind { kInput, kConstant, kOperator };

struct NodeOutput {
  std::string name;                 // FX name of the value ("getitem_3"); empty if never named
  std::optional<TensorType> type;   // nullopt: not a tensor (a None slot of a void op)
};

struct NamedArg {
  std::string name;
  Value value;
  friend bool operator==(const NamedArg& a, const NamedArg& b) {
    return a.name == b.name && a.value == b.value;
  }
};

struct Node {
  NodeKind kind = NodeKind::kOperator;
  std::string name;           // FX node name (for inputs: the parameter name)
  OpName op;                  // empty for inputs and constants
  bool functionalized = false;
  std::vector<Value> args;
  std::vector<NamedArg> kwargs;
  std::vector<NodeOutput> outputs;
  SourceLocation source;      // captured framework location (may be empty)
  // Inputs: the module FQN of the parameter or buffer it is ("decoder.layers.0.mlp.fc2.weight"),
  // when the dump says it; empty otherwise. Specs may name inputs by it.
  std::string fqn;
  int32_t def_line = 0;       // line of the definition in the graph file, for diagnostics

  // Tensor inputs in argument order (positional, then keyword), including those inside lists.
  std::vector<TensorRef> TensorInputs() const;
  // The keyword argument `name`, or nullptr.
  const Value* Kwarg(const std::string& name) const;
  const TensorType& type(int output = 0) const { return *outputs.at(output).type; }
};

class Graph {
 public:
  std::string name;   // e.g. the FX class name
  int32_t rank = 0;   // rank this graph runs on (0 for a sequential model)
  std::string file;   // where it was read from, for diagnostics
  std::vector<Node> nodes;            // topological order
  std::vector<NodeId> inputs;         // nodes of kind kInput, in signature order
  std::vector<Value> outputs;         // the returned values (tensor refs, or None)
  int32_t return_line = 0;

  // Appends a node and indexes its output names; returns its id.
  NodeId AddNode(Node node);
  // Finds an output by its FX name ("getitem_3", "primals_1"), or an unnamed output by the name
  // ValueName gives it ("split_with_sizes#2").
  std::optional<TensorRef> Find(const std::string& value_name) const;
  const Node& node(NodeId id) const { return nodes.at(id); }
  const TensorType& type(TensorRef ref) const { return nodes.at(ref.node).type(ref.output); }
  // The FX name of an output; for unnamed outputs "node#i".
  std::string ValueName(TensorRef ref) const;
  // Re-indexes names after nodes were edited in place.
  void Reindex();

 private:
  std::map<std::string, TensorRef> by_name_;
};

}  // namespace gg::ir
