// OpRegistry: loading the tables, lookup, and inference of a node's output types.
#include "ir/op_registry.h"

#include "ir/op_tables.h"

namespace gg::ir {

const OpRegistry& OpRegistry::Default() {
  static const OpRegistry* registry = [] {
    auto* r = new OpRegistry();
    for (auto table : {ElementwiseOps, LinalgOps, ShapeOps, ReductionOps, IndexingOps,
                       FactoryOps, CollectiveOps, CustomOps}) {
      for (OpEntry& entry : table()) r->Add(entry.schema, std::move(entry.rule), entry.traits);
    }
    return r;
  }();
  return *registry;
}

void OpRegistry::Add(const std::string& schema_text, ShapeRule rule, OpTraits traits) {
  OpSchema schema = OpSchema::Parse(schema_text);
  std::string key = schema.name.ToString();
  if (!rule) throw std::invalid_argument("operator " + key + " has no shape rule");
  for (const std::string* arg_name : {&traits.group_arg, &traits.reduce_op_arg}) {
    if (!arg_name->empty() && schema.ArgIndex(*arg_name) < 0) {
      throw std::invalid_argument("operator " + key + ": trait names argument '" + *arg_name +
                                  "' that the schema does not have");
    }
  }
  if ((traits.collective == CollectiveKind::kNone) != traits.group_arg.empty() &&
      traits.collective != CollectiveKind::kWait) {
    throw std::invalid_argument("operator " + key +
                                ": a collective needs a group argument, and only a collective");
  }
  if (ops_.count(key)) throw std::invalid_argument("operator " + key + " registered twice");
  ops_.emplace(key, OpInfo{std::move(schema), std::move(rule), std::move(traits)});
}

const OpInfo* OpRegistry::Find(const OpName& op) const {
  OpName key = op;
  if (key.overload.empty()) key.overload = "default";
  auto it = ops_.find(key.ToString());
  return it == ops_.end() ? nullptr : &it->second;
}

std::vector<OpName> OpRegistry::Names() const {
  std::vector<OpName> names;
  for (const auto& [key, info] : ops_) names.push_back(info.schema.name);
  return names;  // std::map keys are OpName::ToString(), so this is sorted by that spelling
}

std::vector<std::optional<TensorType>> OpRegistry::Infer(const Graph& graph, const Node& node,
                                                         int32_t group_size) const {
  const OpInfo* info = Find(node.op);
  if (!info) throw std::out_of_range("unknown operator " + node.op.ToString());
  BoundArgs args(info->schema, node);
  ShapeContext ctx{info->schema, args, graph, group_size};
  std::vector<std::optional<TensorType>> outputs = info->rule(ctx);
  const bool list_return =
      info->schema.returns.size() == 1 && info->schema.returns[0].find('[') != std::string::npos;
  if (!list_return && outputs.size() != info->schema.returns.size()) {
    throw std::logic_error("shape rule of " + node.op.ToString() + " returned " +
                           std::to_string(outputs.size()) + " outputs, schema declares " +
                           std::to_string(info->schema.returns.size()));
  }
  // A call that returns nothing still has one (None) value.
  if (info->schema.returns.empty()) outputs.push_back(std::nullopt);
  if (node.functionalized) {
    for (const ArgSchema& arg : info->schema.args) {
      if (!arg.mutated) continue;
      if (args[arg.name].is_none()) {
        outputs.push_back(std::nullopt);
      } else {
        outputs.push_back(ctx.TensorArg(arg.name));
      }
    }
  }
  return outputs;
}

}  // namespace gg::ir
