// OpRegistry: loading the tables, lookup, and inference of a node's output types.
#include "ir/op_registry.h"

#include <cctype>

#include "ir/op_tables.h"

namespace gg::ir {

const OpRegistry& OpRegistry::Default() {
  static const OpRegistry* registry = [] {
    auto* r = new OpRegistry();
    for (auto table : {ElementwiseOps, LinalgOps, ShapeOps, ReductionOps, IndexingOps, FactoryOps,
                       CollectiveOps, CustomOps}) {
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
  for (const std::string* arg_name : {&traits.group_arg, &traits.reduce_op_arg, &traits.peer_arg}) {
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
  if (IsPointToPoint(traits.collective) == traits.peer_arg.empty()) {
    throw std::invalid_argument("operator " + key +
                                ": a point-to-point transfer needs a peer argument, and only one");
  }
  const OpLowering& lowering = traits.lowering;
  if (lowering.kind != OpLowering::Kind::kNone) {
    bool well_named = !lowering.name.empty();
    for (char c : lowering.name)
      well_named = well_named && (std::islower(c) || std::isdigit(c) || c == '_');
    if (!well_named) {
      throw std::invalid_argument("operator " + key + ": lowering name '" + lowering.name +
                                  "' is not [a-z0-9_]+");
    }
  }
  if (lowering.pointwise && lowering.kind != OpLowering::Kind::kMirror) {
    throw std::invalid_argument("operator " + key + ": only a mirror can be pointwise");
  }
  if (lowering.kind == OpLowering::Kind::kMirror) {
    // What a mirror can say: tensors as its children, everything else at its default.
    int tensors = 0;
    bool defaults_began = false;
    for (const ArgSchema& arg : schema.args) {
      if (arg.type == "Tensor" && !arg.default_value && !arg.mutated && !arg.kwarg_only &&
          !defaults_began) {
        ++tensors;
      } else if (arg.default_value) {
        defaults_began = true;
      } else if (!arg.default_value) {
        throw std::invalid_argument("operator " + key + ": a mirror needs a default for '" +
                                    arg.name + "' (or a named lowering)");
      }
    }
    if (tensors == 0 || schema.returns != std::vector<std::string>{"Tensor"}) {
      throw std::invalid_argument("operator " + key +
                                  ": a mirror reads tensors and returns one tensor");
    }
    if (lowering.pointwise && tensors != 1) {
      throw std::invalid_argument("operator " + key + ": a pointwise mirror reads one tensor");
    }
    for (const auto& [other_key, other] : ops_) {
      if (other.traits.lowering.kind == OpLowering::Kind::kMirror &&
          other.traits.lowering.name == lowering.name) {
        throw std::invalid_argument("operators " + other_key + " and " + key +
                                    " mirror the same language op '" + lowering.name + "'");
      }
    }
  }
  if (traits.rounding == Rounding::kExactOrAccumulates && schema.ArgIndex("accumulate") < 0) {
    throw std::invalid_argument("operator " + key + ": exact-or-accumulates needs 'accumulate'");
  }
  if (ops_.count(key)) throw std::invalid_argument("operator " + key + " registered twice");
  ops_.emplace(key, OpInfo{std::move(schema), std::move(rule), std::move(traits)});
}

std::vector<const OpInfo*> OpRegistry::Mirrors() const {
  std::vector<const OpInfo*> mirrors;
  for (const auto& [key, info] : ops_) {
    if (info.traits.lowering.kind == OpLowering::Kind::kMirror) mirrors.push_back(&info);
  }
  return mirrors;
}

OpTraits operator|(OpTraits a, const OpTraits& b) {
  const OpTraits none;
  auto merge = [&](auto& into, const auto& from, const auto& unset, const char* field) {
    if (from == unset) return;
    if (!(into == unset) && !(into == from)) {
      throw std::logic_error(std::string("operator table: trait '") + field + "' set twice");
    }
    into = from;
  };
  merge(a.collective, b.collective, none.collective, "collective");
  merge(a.group_arg, b.group_arg, none.group_arg, "group_arg");
  merge(a.reduce_op_arg, b.reduce_op_arg, none.reduce_op_arg, "reduce_op_arg");
  merge(a.peer_arg, b.peer_arg, none.peer_arg, "peer_arg");
  merge(a.peer_in_group, b.peer_in_group, none.peer_in_group, "peer_in_group");
  merge(a.random, b.random, none.random, "random");
  merge(a.custom, b.custom, none.custom, "custom");
  merge(a.nondeterministic_init, b.nondeterministic_init, none.nondeterministic_init,
        "nondeterministic_init");
  merge(a.metadata_only, b.metadata_only, none.metadata_only, "metadata_only");
  merge(a.async_result, b.async_result, none.async_result, "async_result");
  merge(a.rounding, b.rounding, none.rounding, "rounding");
  merge(a.summed_input, b.summed_input, none.summed_input, "summed_input");
  merge(a.layout, b.layout, none.layout, "layout");
  merge(a.lowering, b.lowering, none.lowering, "lowering");
  return a;
}

Node MirrorCall(const OpInfo& info) {
  Node node;
  node.op = info.schema.name;
  node.name = "mirror";
  size_t tensors = 0;
  for (const ArgSchema& arg : info.schema.args) {
    if (arg.default_value || arg.kwarg_only) break;  // the rest at their defaults (BoundArgs)
    ++tensors;
  }
  node.args.resize(tensors);
  for (size_t i = 0; i < tensors; ++i) {
    node.args[i] = TensorRef{static_cast<NodeId>(i), 0};
  }
  node.outputs.resize(1);
  return node;
}

TensorType InferMirror(const OpInfo& info, const std::vector<TensorType>& types) {
  Graph graph;
  for (size_t i = 0; i < types.size(); ++i) {
    Node input;
    input.kind = NodeKind::kInput;
    input.name = "t" + std::to_string(i);
    input.outputs.push_back(NodeOutput{input.name, types[i]});
    graph.AddNode(std::move(input));
  }
  Node call = MirrorCall(info);
  if (call.args.size() != types.size()) {
    throw ShapeError(info.schema.name.ToString() + ": mirror of " +
                     std::to_string(call.args.size()) + " tensors given " +
                     std::to_string(types.size()));
  }
  BoundArgs args(info.schema, call);
  ShapeContext ctx{info.schema, args, graph};
  std::vector<std::optional<TensorType>> outputs = info.rule(ctx);
  if (outputs.size() != 1 || !outputs[0]) {
    throw ShapeError(info.schema.name.ToString() + ": a mirror returns one tensor");
  }
  return *outputs[0];
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
      } else if (arg.type == "Tensor[]") {
        // a mutated list (c10d::recv_'s buffers): one output per element, in order
        for (const TensorType& t : ctx.TensorListArg(arg.name)) outputs.push_back(t);
      } else {
        outputs.push_back(ctx.TensorArg(arg.name));
      }
    }
  }
  return outputs;
}

}  // namespace gg::ir
