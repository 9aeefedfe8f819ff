#include "mutator.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <utility>

#include "frontend/json_format.h"
#include "frontend/loader.h"
#include "frontend/node_check.h"
#include "ir/graph_edit.h"
#include "ir/op_registry.h"
#include "util/diagnostic.h"

namespace gg::soundness {
namespace {

using ir::Graph;
using ir::Node;
using ir::NodeId;
using ir::Program;
using ir::TensorRef;
using ir::Value;

const ir::OpInfo* InfoOf(const Node& node) {
  if (node.kind != ir::NodeKind::kOperator) return nullptr;
  return ir::OpRegistry::Default().Find(node.op);
}

bool Registered(const std::string& op) {
  std::optional<ir::OpName> name = ir::OpName::Parse(op);
  return name && ir::OpRegistry::Default().Find(*name) != nullptr;
}

// The written argument `name` of `node` (positional or keyword); nullptr when it was left to its
// default (a default is not the capture's choice, so it is not perturbed).
Value* ArgSlot(const ir::OpSchema& schema, Node* node, const std::string& name) {
  int index = schema.ArgIndex(name);
  if (index >= 0 && !schema.args[index].kwarg_only &&
      index < static_cast<int>(node->args.size())) {
    return &node->args[index];
  }
  for (ir::NamedArg& kw : node->kwargs) {
    if (kw.name == name) return &kw.value;
  }
  return nullptr;
}

// Every explicitly written argument with its schema entry.
std::vector<std::pair<const ir::ArgSchema*, std::string>> WrittenArgs(const ir::OpSchema& schema,
                                                                      const Node& node) {
  std::vector<std::pair<const ir::ArgSchema*, std::string>> out;
  for (size_t i = 0; i < node.args.size() && i < schema.args.size(); ++i) {
    out.emplace_back(&schema.args[i], schema.args[i].name);
  }
  for (const ir::NamedArg& kw : node.kwargs) {
    int index = schema.ArgIndex(kw.name);
    if (index >= 0) out.emplace_back(&schema.args[index], kw.name);
  }
  return out;
}

// Nodes the graph's outputs and its point-to-point sends depend on: an edit elsewhere cannot
// change anything.
std::vector<bool> LiveNodes(const Graph& g) {
  std::vector<bool> live(g.nodes.size(), false);
  std::vector<TensorRef> work;
  for (const Value& v : g.outputs) v.CollectTensors(&work);
  for (size_t i = 0; i < g.nodes.size(); ++i) {  // a send's tensor reaches its peer's graph
    const ir::OpInfo* info = InfoOf(g.nodes[i]);
    if (info != nullptr && info->traits.collective == ir::CollectiveKind::kSend) {
      work.push_back(TensorRef{static_cast<NodeId>(i), 0});
    }
  }
  while (!work.empty()) {
    TensorRef ref = work.back();
    work.pop_back();
    if (ref.node < 0 || live[ref.node]) continue;
    live[ref.node] = true;
    for (const TensorRef& in : g.nodes[ref.node].TensorInputs()) work.push_back(in);
  }
  return live;
}

// The node named `name` whose operator is still `op` (an edit is made only where the node it
// was planned on is), or nullptr.
Node* NodeFor(Graph* g, const std::string& name, const std::string& op, NodeId* id_out = nullptr) {
  std::optional<NodeId> id = ir::FindNode(*g, name);
  if (!id) return nullptr;
  Node& node = g->nodes[*id];
  if (node.op.ToString() != op) return nullptr;
  if (id_out != nullptr) *id_out = *id;
  return &node;
}

std::optional<int64_t> StaticExtent(const ir::TensorType& type, int64_t dim) {
  const int64_t rank = static_cast<int64_t>(type.shape.size());
  if (dim < 0) dim += rank;
  if (dim < 0 || dim >= rank || !type.shape[dim].is_static()) return std::nullopt;
  return type.shape[dim].value();
}

std::string NumberText(const Value& v) {
  if (v.is_int()) return std::to_string(v.as_int());
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", v.as_double());
  return buffer;
}

// ---- the mutation families ------------------------------------------------------------------

// Operators and the ones they may become: same arguments, another meaning.
const std::map<std::string, std::vector<std::string>>& SwapTable() {
  static const auto* table = new std::map<std::string, std::vector<std::string>>{
      {"aten::add.Tensor", {"aten::sub.Tensor"}},
      {"aten::sub.Tensor", {"aten::add.Tensor"}},
      {"aten::mul.Tensor", {"aten::div.Tensor"}},
      {"aten::div.Tensor", {"aten::mul.Tensor"}},
      {"aten::mul.Scalar", {"aten::div.Scalar"}},
      {"aten::div.Scalar", {"aten::mul.Scalar"}},
      {"aten::add.Scalar", {"aten::sub.Scalar"}},
      {"aten::sum.dim_IntList", {"aten::mean.dim", "aten::amax.default"}},
      {"aten::mean.dim", {"aten::sum.dim_IntList"}},
      {"aten::sum.default", {"aten::mean.default"}},
      {"aten::mean.default", {"aten::sum.default"}},
      {"aten::amax.default", {"aten::amin.default", "aten::sum.dim_IntList"}},
      {"aten::amin.default", {"aten::amax.default"}},
      {"aten::max.dim", {"aten::min.dim"}},
      {"aten::exp.default", {"aten::log.default"}},
      {"aten::log.default", {"aten::exp.default"}},
      {"aten::sin.default", {"aten::cos.default"}},
      {"aten::cos.default", {"aten::sin.default"}},
      {"aten::tanh.default", {"aten::sigmoid.default"}},
      {"aten::sigmoid.default", {"aten::tanh.default"}},
      {"aten::silu.default", {"aten::gelu.default", "aten::relu.default"}},
      {"aten::gelu.default", {"aten::silu.default"}},
      {"aten::relu.default", {"aten::silu.default"}},
      {"aten::rsqrt.default", {"aten::sqrt.default"}},
      {"aten::sqrt.default", {"aten::rsqrt.default"}},
      {"aten::neg.default", {"aten::abs.default"}},
      {"aten::lt.Scalar", {"aten::le.Scalar", "aten::gt.Scalar"}},
      {"aten::ge.Scalar", {"aten::gt.Scalar", "aten::le.Scalar"}},
      {"aten::gt.Scalar", {"aten::ge.Scalar"}},
      {"aten::le.Scalar", {"aten::lt.Scalar"}},
      {"aten::ne.Scalar", {"aten::eq.Scalar"}},
      {"aten::eq.Scalar", {"aten::ne.Scalar"}},
      {"aten::_softmax.default", {"aten::_log_softmax.default"}},
      {"aten::_log_softmax.default", {"aten::_softmax.default"}},
      {"aten::maximum.default", {"aten::minimum.default"}},
      {"aten::minimum.default", {"aten::maximum.default"}},
      {"aten::bitwise_or.Tensor", {"aten::bitwise_and.Tensor"}},
      {"aten::bitwise_and.Tensor", {"aten::bitwise_or.Tensor"}},
      {"aten::ones_like.default", {"aten::zeros_like.default"}},
      {"aten::zeros_like.default", {"aten::ones_like.default"}},
      {"aten::new_zeros.default", {"aten::new_ones.default"}},
      {"aten::mm.default", {"aten::add.Tensor"}},  // square operands only (type check)
  };
  return *table;
}

// Non-commutative operators: the positional arguments whose exchange changes the result.
const std::map<std::string, std::pair<int, int>>& OperandTable() {
  static const auto* table = new std::map<std::string, std::pair<int, int>>{
      {"aten::sub.Tensor", {0, 1}},
      {"aten::div.Tensor", {0, 1}},
      {"aten::mm.default", {0, 1}},
      {"aten::bmm.default", {0, 1}},
      {"aten::matmul.default", {0, 1}},
      {"aten::addmm.default", {1, 2}},
      {"aten::baddbmm.default", {1, 2}},
      {"aten::where.self", {1, 2}},
      {"aten::lt.Tensor", {0, 1}},
      {"aten::gt.Tensor", {0, 1}},
      {"aten::pow.Tensor_Tensor", {0, 1}},
      {"aten::_softmax_backward_data.default", {0, 1}},
      {"aten::_log_softmax_backward_data.default", {0, 1}},
      {"aten::silu_backward.default", {0, 1}},
      {"aten::gelu_backward.default", {0, 1}},
      {"aten::tanh_backward.default", {0, 1}},
      {"aten::slice_scatter.default", {0, 1}},
  };
  return *table;
}

bool IsFactory(const std::string& op) {
  static const std::set<std::string> kFactories = {
      "aten::full.default",        "aten::scalar_tensor.default", "aten::full_like.default",
      "aten::new_full.default",    "aten::fill.Scalar",           "aten::arange.default",
      "aten::arange.start",        "aten::arange.start_step",
  };
  return kFactories.count(op) != 0;
}

bool IsDimArg(const std::string& name) { return name == "dim" || name == "dim0" || name == "dim1"; }

bool IsSliceBoundArg(const std::string& op, const std::string& name) {
  return (op == "aten::slice.Tensor" || op == "aten::slice_scatter.default" ||
          op == "aten::narrow.default") &&
         (name == "start" || name == "end" || name == "length");
}

// Whether two ranks run the same operators on the same arguments (exchanging them changes
// nothing then).
bool SameComputation(const Graph& a, const Graph& b) {
  if (a.nodes.size() != b.nodes.size()) return false;
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    const Node &x = a.nodes[i], &y = b.nodes[i];
    if (!(x.op == y.op) || x.args != y.args || !(x.kwargs == y.kwargs)) return false;
  }
  return true;
}

// Sites on one graph. `target`/`rank` say which; `d` is null for S.
class SiteFinder {
 public:
  SiteFinder(const Graph& g, const Program* d, Target target, int32_t rank,
             std::vector<Site>* out)
      : g_(g), d_(d), target_(target), rank_(rank), out_(out) {}

  void Run() {
    std::vector<bool> live = LiveNodes(g_);
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& node = g_.nodes[i];
      const ir::OpInfo* info = InfoOf(node);
      if (!live[i] || info == nullptr || node.functionalized) continue;
      const ir::CollectiveKind coll = info->traits.collective;
      const bool collective = coll != ir::CollectiveKind::kNone;
      // A collective must be issued alike by every member, so it is edited on every rank.
      if (collective && target_ != Target::kS) {
        if (coll == ir::CollectiveKind::kWait) {
          Add("wait-remove", node, "readers read the collective's result directly",
              RemoveWait(node));
        } else if (target_ == Target::kDAll) {
          CollectiveSites(node, *info);
        } else if (coll == ir::CollectiveKind::kSend) {
          TransferSites(node, i);
        }
        continue;
      }
      if (collective) continue;
      OpSwapSites(node);
      ArgumentSites(node, *info);
      OperandSites(node);
      TransposeSites(node);
      InsertedValueSites(node);
    }
    // Two ranks' programs exchanged (each keeps its rank and inputs): rank-dependent constants,
    // such as a vocabulary offset, then meet the other rank's shard.
    if (target_ == Target::kDAll && d_ != nullptr && d_->world_size() >= 2 &&
        !SameComputation(d_->ranks[0], d_->ranks[1])) {
      Site site;
      site.kind = "rank-swap";
      site.target = Target::kDProgram;
      site.node = "(program)";
      site.detail = "the graphs of ranks 0 and 1 exchanged";
      site.edit = [](Graph*, Program* d) {
        std::swap(d->ranks[0].nodes, d->ranks[1].nodes);
        std::swap(d->ranks[0].outputs, d->ranks[1].outputs);
        std::swap(d->ranks[0].inputs, d->ranks[1].inputs);
        d->ranks[0].Reindex();
        d->ranks[1].Reindex();
        return true;
      };
      out_->push_back(std::move(site));
    }
  }

 private:
  using Edit = std::function<bool(Graph*, Program*)>;

  void Add(const std::string& kind, const Node& node, std::string detail, Edit edit) {
    Site site;
    site.kind = kind;
    site.target = target_;
    site.rank = rank_;
    site.node = node.name;
    site.detail = std::move(detail);
    site.edit = std::move(edit);
    out_->push_back(std::move(site));
  }

  void OpSwapSites(const Node& node) {
    const std::string op = node.op.ToString();
    auto it = SwapTable().find(op);
    if (it == SwapTable().end()) return;
    for (const std::string& to : it->second) {
      if (!Registered(to)) continue;
      std::string name = node.name;
      Add("op-swap", node, op + " -> " + to, [name, op, to](Graph* g, Program*) {
        Node* n = NodeFor(g, name, op);
        if (n == nullptr) return false;
        n->op = *ir::OpName::Parse(to);
        return true;
      });
    }
  }

  // Scalars, constants, dims, slice bounds and other integer arguments.
  void ArgumentSites(const Node& node, const ir::OpInfo& info) {
    const std::string op = node.op.ToString();
    for (const auto& [schema_arg, arg_name] : WrittenArgs(info.schema, node)) {
      const std::string& type = schema_arg->type;
      Node copy = node;
      const Value* value = ArgSlot(info.schema, &copy, arg_name);
      if (value == nullptr) continue;
      const Value v = *value;
      if ((type == "Scalar" || type == "float" || type == "Scalar?" || type == "float?") &&
          (v.is_int() || (v.is_double() && std::isfinite(v.as_double()))) && !v.is_bool()) {
        // (-inf + 1 is -inf: no change.)
        const std::string kind = IsFactory(op) ? "constant" : "scalar";
        AddArgEdit(kind, node, arg_name, v, ArgChange::kPlusOne);
        AddArgEdit(kind, node, arg_name, v, ArgChange::kScale);
        // An epsilon changed by half is within the rounding tolerance, so the check could not
        // tell: made large enough to show.
        if (v.is_double() && v.as_double() != 0 && std::abs(v.as_double()) < 1e-3) {
          AddArgEdit(kind, node, arg_name, v, ArgChange::kAmplify);
        }
      } else if (IsSliceBoundArg(op, arg_name)) {
        continue;  // SliceSites moves start and end together
      } else if (IsDimArg(arg_name) && (v.is_int() || v.is_int_list())) {
        DimSites(node, info, arg_name, v);
      } else if (type == "bool" && v.is_bool()) {
        // keepdim changes the type (discarded unless the readers still fit); accumulate,
        // half_to_float, ... keep it.
        const std::string name = node.name;
        const ir::OpInfo* pinfo = &info;
        const std::string arg = arg_name;
        Add("bool-arg", node, arg + " flipped", [name, op, pinfo, arg](Graph* g, Program*) {
          Node* n = NodeFor(g, name, op);
          if (n == nullptr) return false;
          Value* slot = ArgSlot(pinfo->schema, n, arg);
          if (slot == nullptr || !slot->is_bool()) return false;
          *slot = Value(!slot->as_bool());
          return true;
        });
      } else if ((type == "int" || type == "SymInt") && v.is_int() && !v.is_bool()) {
        AddArgEdit("int-arg", node, arg_name, v, ArgChange::kPlusOne);
      }
    }
    SliceSites(node, info);
    GeluSites(node, info);
  }

  // gelu's approximation: exact <-> tanh (1e-3 apart, far beyond rounding).
  void GeluSites(const Node& node, const ir::OpInfo& info) {
    const std::string op = node.op.ToString();
    if (op != "aten::gelu.default" && op != "aten::gelu_backward.default") return;
    const std::string name = node.name;
    const ir::OpInfo* pinfo = &info;
    Add("string-arg", node, "approximate flipped (none <-> tanh)",
        [name, op, pinfo](Graph* g, Program*) {
          Node* n = NodeFor(g, name, op);
          if (n == nullptr) return false;
          Value* slot = ArgSlot(pinfo->schema, n, "approximate");
          if (slot == nullptr) {
            n->kwargs.push_back(ir::NamedArg{"approximate", Value("tanh")});
          } else if (slot->is_string()) {
            *slot = Value(slot->as_string() == "tanh" ? "none" : "tanh");
          } else {
            return false;
          }
          return true;
        });
  }

  // +1, or scaled (x1.5 for a float, x2 for an int; 0 becomes 0.5 or -1). Relative, so that the
  // same edit on every rank keeps per-rank values (vocabulary offsets) per rank.
  enum class ArgChange { kPlusOne, kScale, kAmplify };
  static Value Changed(const Value& v, ArgChange change) {
    if (change == ArgChange::kAmplify) return Value(v.as_double() * 1e4);
    if (v.is_int()) {
      const int64_t x = v.as_int();
      return Value(change == ArgChange::kPlusOne ? x + 1 : (x == 0 ? int64_t{-1} : 2 * x));
    }
    const double x = v.as_double();
    return Value(change == ArgChange::kPlusOne ? x + 1 : (x == 0 ? 0.5 : 1.5 * x));
  }

  void AddArgEdit(const std::string& kind, const Node& node, const std::string& arg_name,
                  const Value& from, ArgChange change) {
    std::string name = node.name, op = node.op.ToString();
    const ir::OpInfo* info = InfoOf(node);
    const bool is_int = from.is_int();
    Add(kind, node, arg_name + " " + NumberText(from) + " -> " + NumberText(Changed(from, change)),
        [name, op, info, arg_name, is_int, change](Graph* g, Program*) {
          Node* n = NodeFor(g, name, op);
          if (n == nullptr) return false;
          Value* slot = ArgSlot(info->schema, n, arg_name);
          if (slot == nullptr || slot->is_bool() || (is_int ? !slot->is_int() : !slot->is_double())) {
            return false;
          }
          *slot = Changed(*slot, change);
          return true;
        });
  }

  void DimSites(const Node& node, const ir::OpInfo& info, const std::string& arg_name,
                const Value& v) {
    std::vector<TensorRef> inputs = node.TensorInputs();
    if (inputs.empty() || !g_.nodes[inputs[0].node].outputs[inputs[0].output].type) return;
    int64_t rank = static_cast<int64_t>(g_.type(inputs[0]).shape.size());
    if (node.op.ToString() == "aten::unsqueeze.default") ++rank;
    if (rank < 2) return;
    const bool list = v.is_list();
    std::vector<int64_t> dims = v.as_int_list();
    if (dims.empty()) return;
    const int64_t d = ((dims[0] % rank) + rank) % rank;
    for (int64_t step = 1; step < std::min<int64_t>(rank, 3); ++step) {
      const int64_t to = (d + step) % rank;
      std::vector<int64_t> new_dims = dims;
      new_dims[0] = to;
      Value new_value = list ? Value(Value::List(new_dims.begin(), new_dims.end())) : Value(to);
      std::string name = node.name, op = node.op.ToString();
      const ir::OpInfo* pinfo = &info;
      Add("dim", node, arg_name + " " + std::to_string(dims[0]) + " -> " + std::to_string(to),
          [name, op, pinfo, arg_name, new_value](Graph* g, Program*) {
            Node* n = NodeFor(g, name, op);
            if (n == nullptr) return false;
            Value* slot = ArgSlot(pinfo->schema, n, arg_name);
            if (slot == nullptr) return false;
            *slot = new_value;
            return true;
          });
    }
  }

  // slice / slice_scatter start and end moved by one together (the same length, other
  // elements), or the end pulled in by one; narrow's start moved by one.
  void SliceSites(const Node& node, const ir::OpInfo& info) {
    const std::string op = node.op.ToString();
    if (op != "aten::slice.Tensor" && op != "aten::slice_scatter.default" &&
        op != "aten::narrow.default") {
      return;
    }
    struct Variant {
      const char* label;
      int64_t start_shift, end_shift;
    };
    const std::vector<Variant> variants =
        op == "aten::narrow.default"
            ? std::vector<Variant>{{"start +1", 1, 0}, {"start -1", -1, 0}}
            : std::vector<Variant>{{"window +1", 1, 1}, {"window -1", -1, -1}, {"end -1", 0, -1}};
    std::string name = node.name;
    const ir::OpInfo* pinfo = &info;
    for (const Variant& variant : variants) {
      const int64_t ds = variant.start_shift, de = variant.end_shift;
      Add("slice-bound", node, variant.label, [name, op, pinfo, ds, de](Graph* g, Program*) {
        Node* n = NodeFor(g, name, op);
        if (n == nullptr) return false;
        ir::BoundArgs args(pinfo->schema, *n);
        // The extent sliced: self's (slice, narrow) or self's along dim (slice_scatter: the
        // window lies in self).
        const ir::TensorType& self = g->type(args["self"].as_tensor());
        const int64_t dim = args["dim"].is_int() ? args["dim"].as_int() : 0;
        std::optional<int64_t> extent = StaticExtent(self, dim);
        if (!extent) return false;
        const int64_t n_ext = *extent;
        auto set = [&](const std::string& arg, int64_t value) {
          Value* slot = ArgSlot(pinfo->schema, n, arg);
          if (slot != nullptr) {
            *slot = Value(value);
            return;
          }
          // Left to its default: written out (start sits before end in every schema here).
          int index = pinfo->schema.ArgIndex(arg);
          while (static_cast<int>(n->args.size()) < index) {
            n->args.push_back(*pinfo->schema.args[n->args.size()].default_value);
          }
          if (static_cast<int>(n->args.size()) == index) n->args.push_back(Value(value));
        };
        if (op == "aten::narrow.default") {
          const int64_t start = args["start"].as_int(), length = args["length"].as_int();
          const int64_t s = (start < 0 ? start + n_ext : start) + ds;
          if (s < 0 || s + length > n_ext) return false;
          set("start", s);
          return true;
        }
        int64_t start = args["start"].is_int() ? args["start"].as_int() : 0;
        int64_t end = args["end"].is_int() ? args["end"].as_int() : n_ext;
        if (start < 0) start += n_ext;
        if (end < 0) end += n_ext;
        start = std::clamp<int64_t>(start, 0, n_ext);
        end = std::clamp<int64_t>(end, 0, n_ext);
        const int64_t s = start + ds, e = end + de;
        if (s < 0 || e > n_ext || e <= s) return false;
        set("start", s);
        set("end", e);
        return true;
      });
    }
  }

  void OperandSites(const Node& node) {
    const std::string op = node.op.ToString();
    auto it = OperandTable().find(op);
    if (it != OperandTable().end()) {
      const auto [i, j] = it->second;
      if (j < static_cast<int>(node.args.size()) && node.args[i].is_tensor() &&
          node.args[j].is_tensor() && !(node.args[i].as_tensor() == node.args[j].as_tensor())) {
        std::string name = node.name;
        Add("operand-swap", node, op + " arguments " + std::to_string(i) + " and " +
                                      std::to_string(j) + " exchanged",
            [name, op, i, j](Graph* g, Program*) {
              Node* n = NodeFor(g, name, op);
              if (n == nullptr || j >= static_cast<int>(n->args.size())) return false;
              std::swap(n->args[i], n->args[j]);
              return true;
            });
      }
    }
    // cat: two neighbouring pieces exchanged.
    if (op == "aten::cat.default" && !node.args.empty() && node.args[0].is_list()) {
      const Value::List& pieces = node.args[0].as_list();
      for (size_t k = 0; k + 1 < pieces.size() && k < 2; ++k) {
        if (pieces[k] == pieces[k + 1]) continue;
        std::string name = node.name;
        Add("operand-swap", node,
            "cat pieces " + std::to_string(k) + " and " + std::to_string(k + 1) + " exchanged",
            [name, op, k](Graph* g, Program*) {
              Node* n = NodeFor(g, name, op);
              if (n == nullptr || !n->args[0].is_list()) return false;
              Value::List& list = n->args[0].as_list();
              if (k + 1 >= list.size()) return false;
              std::swap(list[k], list[k + 1]);
              return true;
            });
      }
    }
  }

  // A transpose of two equal extents inserted before a reader (the types stay), or an existing
  // transpose / permute removed.
  void TransposeSites(const Node& node) {
    const std::string op = node.op.ToString();
    if (op == "aten::transpose.int" || op == "aten::t.default" || op == "aten::permute.default") {
      std::string name = node.name;
      Add("transpose-remove", node, op + " removed", [name, op](Graph* g, Program*) {
        NodeId id;
        Node* n = NodeFor(g, name, op, &id);
        if (n == nullptr || !n->args[0].is_tensor()) return false;
        const TensorRef input = n->args[0].as_tensor();
        if (ir::ReplaceAllUses(g, TensorRef{id, 0}, input) == 0) return false;
        ir::RemoveNode(g, id);
        return true;
      });
    }
    for (size_t a = 0; a < node.args.size(); ++a) {
      if (!node.args[a].is_tensor()) continue;
      const TensorRef ref = node.args[a].as_tensor();
      const std::optional<ir::TensorType>& type = g_.nodes[ref.node].outputs[ref.output].type;
      if (!type || !ir::IsFloatingPoint(type->dtype)) continue;
      const int64_t rank = static_cast<int64_t>(type->shape.size());
      std::optional<std::pair<int64_t, int64_t>> pair;
      for (int64_t d1 = rank - 1; d1 > 0 && !pair; --d1) {
        for (int64_t d0 = d1 - 1; d0 >= 0 && !pair; --d0) {
          if (type->shape[d0].is_static() && type->shape[d0] == type->shape[d1] &&
              type->shape[d0].value() > 1) {
            pair = std::make_pair(d0, d1);
          }
        }
      }
      if (!pair) continue;
      std::string name = node.name;
      const int64_t d0 = pair->first, d1 = pair->second;
      const size_t arg = a;
      Add("transpose-insert", node,
          "argument " + std::to_string(a) + " transposed (" + std::to_string(d0) + ", " +
              std::to_string(d1) + ")",
          [name, op, arg, d0, d1](Graph* g, Program*) {
            NodeId id;
            Node* n = NodeFor(g, name, op, &id);
            if (n == nullptr || arg >= n->args.size() || !n->args[arg].is_tensor()) return false;
            const TensorRef in = n->args[arg].as_tensor();
            Node t;
            t.kind = ir::NodeKind::kOperator;
            t.name = "mut_transpose";
            t.op = *ir::OpName::Parse("aten::transpose.int");
            t.args = {Value(in), Value(d0), Value(d1)};
            ir::TensorType type = g->type(in);
            std::swap(type.shape[d0], type.shape[d1]);
            t.outputs = {ir::NodeOutput{t.name, type}};
            t.def_line = n->def_line;
            t.source = n->source;
            NodeId at = ir::InsertNode(g, id, std::move(t));
            g->nodes[at + 1].args[arg] = Value(TensorRef{at, 0});
            return true;
          });
    }
  }

  // Inserted before argument `arg` of a reader, keeping its type: `x * 2` (value-scale), or
  // x's last two dims transposed and reshaped back to x's shape (reshape-scramble: the same
  // type, the elements in another order).
  void InsertedValueSites(const Node& node) {
    const std::string op = node.op.ToString();
    // A reader of shapes only (zeros_like, empty_like) would not see the change.
    const ir::OpInfo* info = InfoOf(node);
    if (info->traits.metadata_only || info->traits.nondeterministic_init) return;
    for (size_t a = 0; a < node.args.size(); ++a) {
      if (!node.args[a].is_tensor()) continue;
      const TensorRef ref = node.args[a].as_tensor();
      const std::optional<ir::TensorType>& type = g_.nodes[ref.node].outputs[ref.output].type;
      if (!type || !ir::IsFloatingPoint(type->dtype) || !ir::IsStatic(type->shape)) continue;
      const std::string name = node.name;
      const size_t arg = a;
      Add("value-scale", node, "argument " + std::to_string(a) + " multiplied by 2",
          [name, op, arg](Graph* g, Program*) {
            return InsertBefore(g, name, op, arg, [](const TensorRef& in, const Graph&) {
              Node m;
              m.name = "mut_scale";
              m.op = *ir::OpName::Parse("aten::mul.Scalar");
              m.args = {Value(in), Value(2.0)};
              return std::vector<Node>{m};
            });
          });
      const int64_t rank = static_cast<int64_t>(type->shape.size());
      if (rank < 2 || type->shape[rank - 1] == type->shape[rank - 2] ||
          type->shape[rank - 1].value() < 2 || type->shape[rank - 2].value() < 2) {
        continue;
      }
      Add("reshape-scramble", node,
          "argument " + std::to_string(a) + " transposed (last two dims) and reshaped back",
          [name, op, arg](Graph* g, Program*) {
            return InsertBefore(g, name, op, arg, [](const TensorRef& in, const Graph& graph) {
              const ir::TensorType& t = graph.type(in);
              const int64_t r = static_cast<int64_t>(t.shape.size());
              Node tr;
              tr.name = "mut_scramble_t";
              tr.op = *ir::OpName::Parse("aten::transpose.int");
              tr.args = {Value(in), Value(r - 2), Value(r - 1)};
              Node re;
              re.name = "mut_scramble";
              re.op = *ir::OpName::Parse("aten::reshape");
              Value::List sizes;
              for (const ir::Dim& d : t.shape) sizes.push_back(Value(d.value()));
              // Refers to the transpose, which InsertBefore places just before it.
              re.args = {Value(TensorRef{-1, 0}), Value(sizes)};
              return std::vector<Node>{tr, re};
            });
          });
    }
  }

  // Inserts the nodes `make` builds (each reading the previous one where it says TensorRef{-1})
  // before reader `name`, whose argument `arg` then reads the last of them.
  static bool InsertBefore(Graph* g, const std::string& name, const std::string& op, size_t arg,
                           const std::function<std::vector<Node>(const TensorRef&,
                                                                 const Graph&)>& make) {
    NodeId id;
    Node* n = NodeFor(g, name, op, &id);
    if (n == nullptr || arg >= n->args.size() || !n->args[arg].is_tensor()) return false;
    const TensorRef in = n->args[arg].as_tensor();
    const int32_t line = n->def_line;
    const ir::SourceLocation source = n->source;
    NodeId at = id;
    for (Node node : make(in, *g)) {
      node.kind = ir::NodeKind::kOperator;
      for (Value& v : node.args) {
        if (v.is_tensor() && v.as_tensor().node < 0) v = Value(TensorRef{at - 1, 0});
      }
      node.outputs = {ir::NodeOutput{node.name, std::nullopt}};
      node.def_line = line;
      node.source = source;
      auto types = frontend::InferNodeTypes(*g, node, {}, 1, g->file, line);
      if (!types || types->size() != 1) return false;
      node.outputs[0].type = (*types)[0];
      ir::InsertNode(g, at, std::move(node));
      ++at;
    }
    g->nodes[at].args[arg] = Value(TensorRef{at - 1, 0});
    return true;
  }

  static Edit RemoveWait(const Node& wait) {
    std::string name = wait.name, op = wait.op.ToString();
    return [name, op](Graph* g, Program*) {
      NodeId id;
      Node* n = NodeFor(g, name, op, &id);
      if (n == nullptr || n->args.empty() || !n->args[0].is_tensor()) return false;
      const TensorRef input = n->args[0].as_tensor();
      ir::ReplaceAllUses(g, TensorRef{id, 0}, input);
      ir::RemoveNode(g, id);
      return true;
    };
  }

  // A send moved after the next send of this rank to the same peer on the same group (every
  // argument but the tensor alike): the two tensors reach the peer in the other order, so the
  // receive of one micro-batch gets the other's (transfers pair by order).
  void TransferSites(const Node& node, size_t index) {
    for (size_t k = index + 1; k < g_.nodes.size(); ++k) {
      const Node& later = g_.nodes[k];
      if (!(later.op == node.op) || later.args.size() != node.args.size() || later.args.empty() ||
          later.args[0] == node.args[0] ||
          !std::equal(later.args.begin() + 1, later.args.end(), node.args.begin() + 1)) {
        continue;
      }
      const std::string first = node.name, second = later.name, op = node.op.ToString();
      Add("transfer-reorder", node, "moved after '" + second + "' (same peer and group)",
          [first, second, op](Graph* g, Program*) {
            NodeId a, b;
            if (NodeFor(g, first, op, &a) == nullptr || NodeFor(g, second, op, &b) == nullptr ||
                b <= a) {
              return false;
            }
            Node moved = g->nodes[a];
            ir::RemoveNode(g, a);  // InputError when its result is read: not applied
            ir::InsertNode(g, b, std::move(moved));  // b is now at b - 1: right after it
            return true;
          });
      return;
    }
  }

  void CollectiveSites(const Node& node, const ir::OpInfo& info) {
    const std::string op = node.op.ToString();
    const std::string name = node.name;
    // Dropped: its readers (the wait) read its input.
    Add("collective-drop", node, op + " removed", [name, op](Graph* g, Program*) {
      NodeId id;
      Node* n = NodeFor(g, name, op, &id);
      if (n == nullptr || n->args.empty() || !n->args[0].is_tensor()) return false;
      const TensorRef input = n->args[0].as_tensor();
      if (ir::ReplaceAllUses(g, TensorRef{id, 0}, input) == 0) return false;
      ir::RemoveNode(g, id);
      return true;
    });
    // Duplicated: issued again on the waited result, and everything after reads the second.
    Add("collective-dup", node, op + " issued twice", [name, op](Graph* g, Program*) {
      NodeId id;
      Node* n = NodeFor(g, name, op, &id);
      if (n == nullptr) return false;
      NodeId wait = -1;
      for (size_t k = id + 1; k < g->nodes.size() && wait < 0; ++k) {
        const ir::OpInfo* info = InfoOf(g->nodes[k]);
        if (info != nullptr && info->traits.collective == ir::CollectiveKind::kWait &&
            !g->nodes[k].args.empty() && g->nodes[k].args[0].is_tensor() &&
            g->nodes[k].args[0].as_tensor().node == id) {
          wait = static_cast<NodeId>(k);
        }
      }
      if (wait < 0) return false;
      Node again = g->nodes[id];
      again.name = "mut_dup_" + again.name;
      again.outputs = {ir::NodeOutput{again.name, g->nodes[id].outputs[0].type}};
      again.args[0] = Value(TensorRef{wait, 0});
      Node wait_again = g->nodes[wait];
      wait_again.name = "mut_dup_" + wait_again.name;
      wait_again.outputs = {ir::NodeOutput{wait_again.name, g->nodes[wait].outputs[0].type}};
      wait_again.args[0] = Value(TensorRef{wait + 1, 0});
      ir::InsertNode(g, wait + 1, std::move(again));
      ir::InsertNode(g, wait + 2, std::move(wait_again));
      return ir::ReplaceAllUses(g, TensorRef{wait, 0}, TensorRef{wait + 2, 0}, wait + 2) > 0;
    });
    // Another reduce op.
    if (!info.traits.reduce_op_arg.empty()) {
      Node copy = node;
      const Value* reduce = ArgSlot(info.schema, &copy, info.traits.reduce_op_arg);
      if (reduce != nullptr && reduce->is_string()) {
        const std::string from = reduce->as_string();
        const std::string arg = info.traits.reduce_op_arg;
        const ir::OpInfo* pinfo = &info;
        for (const char* to : {"sum", "avg", "max", "min"}) {
          if (from == to) continue;
          const std::string target = to;
          Add("reduce-op", node, "'" + from + "' -> '" + target + "'",
              [name, op, pinfo, arg, target](Graph* g, Program*) {
                Node* n = NodeFor(g, name, op);
                if (n == nullptr) return false;
                Value* slot = ArgSlot(pinfo->schema, n, arg);
                if (slot == nullptr || !slot->is_string()) return false;
                *slot = Value(target);
                return true;
              });
        }
      }
    }
    // Another process group: the members split in halves (pairs: each rank alone), or another
    // group of the program that holds the rank.
    if (!info.traits.group_arg.empty() && d_ != nullptr) {
      const ir::OpInfo* pinfo = &info;
      const std::string arg = info.traits.group_arg;
      Add("group", node, "group split in halves", [name, op, pinfo, arg](Graph* g, Program* d) {
        Node* n = NodeFor(g, name, op);
        if (n == nullptr) return false;
        Value* slot = ArgSlot(pinfo->schema, n, arg);
        if (slot == nullptr || !slot->is_string()) return false;
        auto it = d->groups.find(slot->as_string());
        if (it == d->groups.end() || it->second.size() < 2) return false;
        const std::vector<int32_t> members = it->second;
        const size_t half = members.size() / 2;
        const bool first = std::find(members.begin(), members.begin() + half, g->rank) !=
                           members.begin() + half;
        std::vector<int32_t> part = first ? std::vector<int32_t>(members.begin(),
                                                                 members.begin() + half)
                                          : std::vector<int32_t>(members.begin() + half,
                                                                 members.end());
        const std::string new_name = "mut_" + slot->as_string() + (first ? "_a" : "_b");
        d->groups.emplace(new_name, part);
        *slot = Value(new_name);
        if (Value* size = ArgSlot(pinfo->schema, n, "group_size"); size && size->is_int()) {
          *size = Value(static_cast<int64_t>(part.size()));
        }
        return true;
      });
      if (d_->groups.size() >= 2) {
        Add("group", node, "another group of the rank",
            [name, op, pinfo, arg](Graph* g, Program* d) {
              Node* n = NodeFor(g, name, op);
              if (n == nullptr) return false;
              Value* slot = ArgSlot(pinfo->schema, n, arg);
              if (slot == nullptr || !slot->is_string()) return false;
              auto current = d->groups.find(slot->as_string());
              if (current == d->groups.end()) return false;
              for (const auto& [group, members] : d->groups) {
                if (group == current->first || members == current->second ||
                    group.rfind("mut_", 0) == 0 ||
                    !std::binary_search(members.begin(), members.end(), g->rank)) {
                  continue;
                }
                *slot = Value(group);
                if (Value* size = ArgSlot(pinfo->schema, n, "group_size"); size && size->is_int()) {
                  *size = Value(static_cast<int64_t>(members.size()));
                }
                return true;
              }
              return false;
            });
      }
    }
  }

  const Graph& g_;
  const Program* d_;
  Target target_;
  int32_t rank_;
  std::vector<Site>* out_;
};

// Gives every operator node the types the registry infers from its (possibly edited) inputs,
// in order, so that a change of shape reaches its readers; a node that no longer type-checks
// is the reason the mutant is discarded.
void Retype(Graph* g, const frontend::GroupMap& groups, int32_t world) {
  for (Node& node : g->nodes) {
    if (node.kind != ir::NodeKind::kOperator) continue;
    auto types = frontend::InferNodeTypes(*g, node, groups, world, g->file, node.def_line);
    if (!types) continue;  // reads an unrecorded constant: nothing to infer, as on load
    if (types->size() != node.outputs.size()) {
      throw InputError(g->file, node.def_line,
                       frontend::DescribeNode(node) + " now has " +
                           std::to_string(types->size()) + " outputs");
    }
    for (size_t i = 0; i < types->size(); ++i) node.outputs[i].type = (*types)[i];
  }
}

}  // namespace

std::string Site::Where() const {
  switch (target) {
    case Target::kS:
      return "S";
    case Target::kDRank:
      return "D rank " + std::to_string(rank);
    case Target::kDAll:
      return "D every rank";
    case Target::kDProgram:
      return "D";
    case Target::kBoth:
      return "S and D every rank";
  }
  return "?";
}

std::string Site::ToString() const {
  return kind + " at " + node + " (" + Where() + "): " + detail;
}

const std::vector<std::string>& MutationKinds() {
  static const std::vector<std::string> kinds = {
      "op-swap",         "scalar",         "constant",  "int-arg",  "slice-bound",
      "dim",             "collective-drop", "collective-dup", "reduce-op", "group",
      "wait-remove",     "operand-swap",   "transpose-insert", "transpose-remove",
      "value-scale",     "reshape-scramble", "rank-swap", "bool-arg", "string-arg",
      "transfer-reorder"};
  return kinds;
}

std::vector<Site> EnumerateSites(const ir::Graph& s, const ir::Program& d) {
  std::vector<Site> sites;
  SiteFinder(s, nullptr, Target::kS, 0, &sites).Run();
  // The same edit on S and on every rank of D, where each has a node of that name and operator:
  // the pair may still refine (an elementwise change), or not (a reduction changed on both
  // sides of a collective that no longer fits it), which is where a lemma applied too widely
  // would show.
  const size_t s_sites = sites.size();
  for (size_t i = 0; i < s_sites; ++i) {
    const Site& site = sites[i];
    std::optional<NodeId> s_id = ir::FindNode(s, site.node);
    if (!s_id || site.kind == "transpose-insert" || site.kind == "value-scale" ||
        site.kind == "reshape-scramble") {
      continue;  // inserting the same node on both sides is no change of meaning
    }
    const std::string op = s.nodes[*s_id].op.ToString();
    bool everywhere = !d.ranks.empty();
    for (const Graph& g : d.ranks) {
      std::optional<NodeId> id = ir::FindNode(g, site.node);
      everywhere = everywhere && id && g.nodes[*id].op.ToString() == op;
    }
    if (!everywhere) continue;
    Site both = site;
    both.target = Target::kBoth;
    sites.push_back(std::move(both));
  }
  for (const Graph& g : d.ranks) SiteFinder(g, &d, Target::kDRank, g.rank, &sites).Run();
  if (!d.ranks.empty()) SiteFinder(d.ranks[0], &d, Target::kDAll, 0, &sites).Run();
  return sites;
}

MutantOutcome ApplySite(const Site& site, const ir::Graph& s, const ir::Program& d,
                        const std::string& scratch_dir) {
  MutantOutcome outcome;
  outcome.mutant.s = s;
  outcome.mutant.d = d;
  Graph& ms = outcome.mutant.s;
  Program& md = outcome.mutant.d;
  std::vector<Graph*> edited;
  bool applied = true;
  try {
    switch (site.target) {
      case Target::kS:
        applied = site.edit(&ms, nullptr);
        edited = {&ms};
        break;
      case Target::kDRank:
        applied = site.edit(&md.ranks.at(site.rank), &md);
        edited = {&md.ranks.at(site.rank)};
        break;
      case Target::kBoth:
        applied = site.edit(&ms, nullptr);
        edited = {&ms};
        for (Graph& g : md.ranks) {
          applied = applied && site.edit(&g, &md);
          edited.push_back(&g);
        }
        break;
      case Target::kDProgram:
        applied = site.edit(nullptr, &md);
        for (Graph& g : md.ranks) edited.push_back(&g);
        break;
      case Target::kDAll:
        for (Graph& g : md.ranks) {
          applied = applied && site.edit(&g, &md);
          edited.push_back(&g);
        }
        break;
    }
  } catch (const std::exception& e) {
    applied = false;
    outcome.reason = e.what();
  }
  if (!applied) {
    outcome.discarded = "no-op";
    if (outcome.reason.empty()) outcome.reason = "the edit does not apply to every graph it names";
    return outcome;
  }
  try {
    for (Graph* g : edited) {
      if (g == &ms) {
        Retype(g, {}, 1);
      } else {
        Retype(g, md.groups, md.world_size());
      }
    }
  } catch (const std::exception& e) {
    outcome.discarded = "type-check";
    outcome.reason = e.what();
    return outcome;
  }
  // Read back as files are: every check of the loader (annotations, collective sequences and
  // groups, waits before reads) applies to the mutant.
  const std::filesystem::path dir(scratch_dir);
  const std::string seq_path = (dir / "seq.json").string();
  const std::string dist_path = (dir / "dist.json").string();
  {
    std::ofstream seq(seq_path), dist(dist_path);
    frontend::WriteJson(ms, seq);
    frontend::WriteJson(md, dist);
  }
  try {
    outcome.mutant.s = frontend::LoadGraph(seq_path);
    outcome.mutant.d = frontend::LoadProgram({dist_path});
  } catch (const std::exception& e) {
    outcome.discarded = "load";
    outcome.reason = e.what();
  }
  return outcome;
}

uint64_t Rng::Next() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t Fnv1a(const std::string& text) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

}  // namespace gg::soundness
