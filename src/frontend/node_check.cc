#include "frontend/node_check.h"

#include <exception>
#include <stdexcept>

#include "util/diagnostic.h"

namespace gg::frontend {

std::string DescribeNode(const ir::Node& node) {
  return "'" + node.name + "' (" + node.op.ToString() + ")";
}

const ir::OpInfo& FindOperator(const ir::Node& node, const std::string& file, int line) {
  const ir::OpInfo* info = ir::OpRegistry::Default().Find(node.op);
  if (info == nullptr) {
    throw InputError(file, line,
                     "unknown operator '" + node.op.ToString() +
                         "'; add an entry to the registry in src/ir/ops_*.cc (see "
                         "docs/architecture.md)");
  }
  return *info;
}

std::optional<ir::Value> BoundArg(const ir::OpInfo& info, const ir::Node& node,
                                  const std::string& arg_name) {
  try {
    ir::BoundArgs bound(info.schema, node);
    if (!bound.has(arg_name)) return std::nullopt;
    return bound[arg_name];
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<std::string> GroupNameOf(const ir::OpInfo& info, const ir::Node& node) {
  if (info.traits.group_arg.empty()) return std::nullopt;
  std::optional<ir::Value> group = BoundArg(info, node, info.traits.group_arg);
  if (!group || !group->is_string()) return std::nullopt;
  return group->as_string();
}

std::optional<std::vector<std::optional<ir::TensorType>>> InferNodeTypes(
    const ir::Graph& graph, const ir::Node& node, const GroupMap& groups,
    int32_t default_group_size, const std::string& file, int line) {
  const ir::OpInfo& info = FindOperator(node, file, line);
  for (const ir::TensorRef& ref : node.TensorInputs()) {
    const ir::Node& producer = graph.nodes.at(ref.node);
    if (ref.output < 0 || ref.output >= static_cast<int32_t>(producer.outputs.size()) ||
        !producer.outputs[ref.output].type) {
      return std::nullopt;
    }
  }
  int32_t group_size = default_group_size;
  if (std::optional<std::string> group = GroupNameOf(info, node)) {
    auto it = groups.find(*group);
    if (it != groups.end()) group_size = static_cast<int32_t>(it->second.size());
  }
  try {
    return ir::OpRegistry::Default().Infer(graph, node, group_size);
  } catch (const ir::ShapeError& e) {
    throw InputError(file, line, "shape error in " + DescribeNode(node) + ": " + e.what());
  } catch (const std::out_of_range& e) {
    // The registry reports unknown operators this way; anything else out of range is a
    // malformed argument (e.g. a dimension index) that the rule did not check.
    throw InputError(file, line,
                     "cannot infer the type of " + DescribeNode(node) + ": " + e.what());
  } catch (const std::exception& e) {
    throw InputError(file, line,
                     "operator " + DescribeNode(node) + " rejected its arguments: " + e.what());
  }
}

std::string TypeText(const std::optional<ir::TensorType>& type) {
  return type ? type->ToString() : std::string("None");
}

}  // namespace gg::frontend
