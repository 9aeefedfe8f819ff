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

namespace {
thread_local bool strict_ops = false;
}  // namespace

StrictOps::StrictOps(bool strict) : previous_(strict_ops) { strict_ops = strict; }
StrictOps::~StrictOps() { strict_ops = previous_; }
bool StrictOps::enabled() { return strict_ops; }

const ir::OpInfo* FindOperatorOrOpaque(const ir::Node& node, const std::string& file, int line) {
  if (strict_ops) return &FindOperator(node, file, line);
  return ir::OpRegistry::Default().Find(node.op);
}

bool IsOpaqueNode(const ir::Node& node) {
  return node.kind == ir::NodeKind::kOperator && ir::OpRegistry::Default().Find(node.op) == nullptr;
}

void ThrowOpaqueNeedsType(const ir::Node& node, const std::string& file, int line,
                          const std::string& what) {
  throw InputError(file, line,
                   "operator '" + node.op.ToString() + "' of '" + node.name +
                       "' is unknown to GraphGuard and " + what +
                       ": an unknown operator loads as an opaque node typed from the file, so "
                       "its output types are needed; re-capture with type annotations (FX "
                       "print_readable prints `name: \"f32[...]\" = ...` and annotated getitems) "
                       "or give each output's \"type\" in the JSON, or add the operator to the "
                       "registry in src/ir/ops_*.cc (--strict-ops makes unknown operators errors)");
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
  const ir::OpInfo* found = FindOperatorOrOpaque(node, file, line);
  // Every tensor an operator reads must have a type: an untyped value would leave the node
  // unchecked and every later stage (lowering, execution) without the shapes it relies on.
  for (const ir::TensorRef& ref : node.TensorInputs()) {
    if (ref.node < 0 || static_cast<size_t>(ref.node) >= graph.nodes.size()) {
      throw InputError(file, line, DescribeNode(node) + " reads a value that is not defined");
    }
    const ir::Node& producer = graph.nodes[ref.node];
    if (ref.output < 0 || ref.output >= static_cast<int32_t>(producer.outputs.size())) {
      throw InputError(file, line,
                       DescribeNode(node) + " reads output " + std::to_string(ref.output) +
                           " of '" + producer.name + "', which has " +
                           std::to_string(producer.outputs.size()) + " output(s)");
    }
    if (producer.outputs[ref.output].type) continue;
    const std::string at =
        producer.def_line > 0 ? " (line " + std::to_string(producer.def_line) + ")" : "";
    if (producer.kind == ir::NodeKind::kConstant) {
      throw InputError(file, line,
                       DescribeNode(node) + " reads the constant '" + producer.name + "'" + at +
                           ", which the capture left without a type or a value; give it a type "
                           "(FX text: " + producer.name + ": \"f32[...]\" = self." +
                           producer.name + "; JSON: its output's \"type\") or read it through "
                           "aten.lift_fresh_copy, whose annotation gives it one");
    }
    throw InputError(file, line,
                     DescribeNode(node) + " reads '" + graph.ValueName(ref) + "'" + at +
                         ", which has no tensor type (an output the operator does not return "
                         "as a tensor, or one the file leaves untyped)");
  }
  if (found == nullptr) return std::nullopt;  // opaque: typed from the file
  const ir::OpInfo& info = *found;
  int32_t group_size = default_group_size;
  if (std::optional<std::string> group = GroupNameOf(info, node)) {
    auto it = groups.find(*group);
    if (it != groups.end()) group_size = static_cast<int32_t>(it->second.size());
  }
  try {
    std::vector<std::optional<ir::TensorType>> types =
        ir::OpRegistry::Default().Infer(graph, node, group_size);
    for (const std::optional<ir::TensorType>& type : types) {
      if (!type) continue;
      int64_t elements = 1;
      for (const ir::Dim& d : type->shape) {
        if (d.is_static() && d.value() < 0) {
          throw ir::ShapeError("the result " + type->ToString() + " has a negative extent");
        }
        if (d.is_static() && d.value() != 0 &&
            __builtin_mul_overflow(elements, d.value(), &elements)) {
          throw ir::DimOverflow("the result " + type->ToString() +
                                " has more elements than a 64-bit integer counts");
        }
      }
    }
    return types;
  } catch (const ir::DTypeError& e) {
    throw InputError(file, line, "type error in " + DescribeNode(node) + ": " + e.what());
  } catch (const ir::ShapeError& e) {
    throw InputError(file, line, "shape error in " + DescribeNode(node) + ": " + e.what());
  } catch (const ir::DimOverflow& e) {
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
