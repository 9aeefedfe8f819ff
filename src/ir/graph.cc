#include "ir/graph.h"

#include <cctype>

namespace gg::ir {

std::string SourceLocation::ToString() const {
  if (file.empty()) return "";
  std::string out = file + ":" + std::to_string(line);
  if (!function.empty()) out += " in " + function;
  return out;
}

std::string OpName::ToString() const {
  std::string out = ns + "::" + name;
  if (!overload.empty()) out += "." + overload;
  return out;
}

std::optional<OpName> OpName::Parse(const std::string& text) {
  auto valid_ident = [](const std::string& s) {
    if (s.empty()) return false;
    for (char c : s) {
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
    }
    return true;
  };
  OpName op;
  std::string rest;
  if (text.rfind("torch.ops.", 0) == 0) {
    // torch.ops.<ns>.<name>[.<overload>]
    std::string body = text.substr(10);
    size_t d1 = body.find('.');
    if (d1 == std::string::npos) return std::nullopt;
    op.ns = body.substr(0, d1);
    rest = body.substr(d1 + 1);
  } else {
    size_t colons = text.find("::");
    if (colons == std::string::npos) return std::nullopt;
    op.ns = text.substr(0, colons);
    rest = text.substr(colons + 2);
  }
  size_t dot = rest.find('.');
  op.name = rest.substr(0, dot);
  if (dot != std::string::npos) op.overload = rest.substr(dot + 1);
  if (!valid_ident(op.ns) || !valid_ident(op.name)) return std::nullopt;
  if (dot != std::string::npos && !valid_ident(op.overload)) return std::nullopt;
  return op;
}

std::vector<TensorRef> Node::TensorInputs() const {
  std::vector<TensorRef> refs;
  for (const Value& v : args) v.CollectTensors(&refs);
  for (const NamedArg& kw : kwargs) kw.value.CollectTensors(&refs);
  return refs;
}

const Value* Node::Kwarg(const std::string& kw_name) const {
  for (const NamedArg& kw : kwargs) {
    if (kw.name == kw_name) return &kw.value;
  }
  return nullptr;
}

NodeId Graph::AddNode(Node node) {
  NodeId id = static_cast<NodeId>(nodes.size());
  if (node.kind == NodeKind::kInput) inputs.push_back(id);
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (!node.outputs[i].name.empty()) {
      by_name_[node.outputs[i].name] = TensorRef{id, static_cast<int32_t>(i)};
    }
  }
  nodes.push_back(std::move(node));
  return id;
}

std::optional<TensorRef> Graph::Find(const std::string& value_name) const {
  auto it = by_name_.find(value_name);
  if (it != by_name_.end()) return it->second;
  // "node#i": an unnamed output, as ValueName spells it.
  size_t hash = value_name.rfind('#');
  if (hash == std::string::npos || hash + 1 >= value_name.size()) return std::nullopt;
  int32_t output = 0;
  for (size_t i = hash + 1; i < value_name.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(value_name[i])) || output > 1000000) {
      return std::nullopt;
    }
    output = output * 10 + (value_name[i] - '0');
  }
  std::string node_name = value_name.substr(0, hash);
  for (size_t id = 0; id < nodes.size(); ++id) {
    if (nodes[id].name != node_name || static_cast<size_t>(output) >= nodes[id].outputs.size()) {
      continue;
    }
    TensorRef ref{static_cast<NodeId>(id), output};
    if (ValueName(ref) == value_name) return ref;
  }
  return std::nullopt;
}

std::string Graph::ValueName(TensorRef ref) const {
  const Node& n = nodes.at(ref.node);
  const std::string& name = n.outputs.at(ref.output).name;
  if (!name.empty()) return name;
  return n.name + "#" + std::to_string(ref.output);
}

void Graph::Reindex() {
  by_name_.clear();
  inputs.clear();
  for (size_t id = 0; id < nodes.size(); ++id) {
    if (nodes[id].kind == NodeKind::kInput) inputs.push_back(static_cast<NodeId>(id));
    for (size_t i = 0; i < nodes[id].outputs.size(); ++i) {
      if (!nodes[id].outputs[i].name.empty()) {
        by_name_[nodes[id].outputs[i].name] =
            TensorRef{static_cast<NodeId>(id), static_cast<int32_t>(i)};
      }
    }
  }
}

}  // namespace gg::ir
