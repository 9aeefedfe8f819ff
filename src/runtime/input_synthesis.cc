#include "runtime/input_synthesis.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <deque>
#include <map>
#include <set>
#include <type_traits>
#include <variant>

#include "ir/op_registry.h"
#include "runtime/compare.h"
#include "runtime/op_kernels.h"
#include "runtime/relation_eval.h"
#include "util/diagnostic.h"

namespace gg::runtime {
namespace {

std::vector<int64_t> StaticSizes(const ir::TensorType& type, const std::string& what) {
  std::vector<int64_t> sizes;
  for (const ir::Dim& d : type.shape) {
    if (!d.is_static()) {
      throw std::invalid_argument(what + " has a symbolic shape " + type.ToString() +
                                  "; inputs need static shapes (see --resize)");
    }
    sizes.push_back(d.value());
  }
  return sizes;
}

bool IsFloating(ir::DType dtype) {
  return at::isFloatingType(ToAten(dtype)) || at::isComplexType(ToAten(dtype));
}

// ---- integer ranges ----------------------------------------------------------------------------

// Ops through which an integer tensor keeps meaning "an index": views, copies, elementwise
// arithmetic with scalars (Megatron subtracts the vocabulary start), selections.
bool PassesIndices(const ir::OpName& op) {
  static const std::set<std::string> kOps = {
      "view",        "_unsafe_view", "reshape", "unsqueeze",       "squeeze",   "clone",
      "flatten",     "expand",       "select",  "slice",           "permute",   "transpose",
      "t",           "contiguous",   "alias",   "_to_copy",        "sub",       "add",
      "masked_fill", "where",        "mul",     "lift_fresh_copy", "copy",      "detach",
      "index_put",   "remainder",    "clamp",   "_reshape_alias",  "as_strided"};
  return op.ns == "aten" && kOps.count(op.name) != 0;
}

// The size a tensor of `graph` has along `dim` (negative counts from the end), if static.
std::optional<int64_t> SizeOf(const ir::Graph& graph, const ir::Value& tensor, int64_t dim) {
  if (!tensor.is_tensor()) return std::nullopt;
  const ir::TensorType& type = graph.type(tensor.as_tensor());
  std::optional<int64_t> d = ir::WrapDim(dim, static_cast<int64_t>(type.shape.size()));
  if (!d || !type.shape[*d].is_static()) return std::nullopt;
  return type.shape[*d].value();
}

// When `node` uses `index` as indices, the size they index.
std::optional<int64_t> IndexedSize(const ir::Graph& graph, const ir::Node& node,
                                   ir::TensorRef index, std::string* why) {
  const ir::OpInfo* info = ir::OpRegistry::Default().Find(node.op);
  if (info == nullptr) return std::nullopt;
  std::optional<ir::BoundArgs> bound;
  try {
    bound.emplace(info->schema, node);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  const ir::BoundArgs& args = *bound;
  auto is_index = [&](const std::string& arg) {
    return args.has(arg) && args[arg].is_tensor() && args[arg].as_tensor() == index;
  };
  auto says = [&](const std::string& what, std::optional<int64_t> size) {
    if (size && why)
      *why = what + " in '" + node.name + "' (line " + std::to_string(node.def_line) + ")";
    return size;
  };
  const std::string& name = node.op.name;
  if (name == "embedding" && is_index("indices")) {
    return says("the rows of the embedding table", SizeOf(graph, args["weight"], 0));
  }
  if ((name == "gather" || name == "index_select") && is_index("index")) {
    return says("the dimension it indexes", SizeOf(graph, args["self"], args["dim"].as_int()));
  }
  if (name == "nll_loss_forward" && is_index("target")) {
    return says("the classes of nll_loss", SizeOf(graph, args["self"], -1));
  }
  if (name == "rotary_embedding" && is_index("positions")) {
    return says("the rows of the rotary cache", SizeOf(graph, args["cos_sin_cache"], 0));
  }
  if ((name == "index" || name == "index_put") && args.has("indices") &&
      args["indices"].is_list()) {
    const ir::Value::List& list = args["indices"].as_list();
    for (size_t k = 0; k < list.size(); ++k) {
      if (list[k].is_tensor() && list[k].as_tensor() == index) {
        return says("the dimension it indexes",
                    SizeOf(graph, args["self"], static_cast<int64_t>(k)));
      }
    }
  }
  return std::nullopt;
}

// ---- running relations backwards ---------------------------------------------------------------

struct Origin {
  std::string file;
  int line = 0;
};

Origin OriginOf(const symbolic::Relation& relation) {
  // "file:line: text" (relation_spec.cc) or "inferred".
  Origin origin;
  size_t colon = relation.origin.find(':');
  while (colon != std::string::npos) {
    size_t end = colon + 1;
    while (end < relation.origin.size() && std::isdigit(relation.origin[end])) ++end;
    if (end > colon + 1 && end < relation.origin.size() && relation.origin[end] == ':') {
      origin.file = relation.origin.substr(0, colon);
      origin.line = std::stoi(relation.origin.substr(colon + 1, end - colon - 1));
      return origin;
    }
    colon = relation.origin.find(':', colon + 1);
  }
  origin.file = relation.origin;
  return origin;
}

class Deriver {
 public:
  Deriver(const ir::Program& d, std::vector<GraphInputs>& inputs, at::Generator& generator)
      : d_(d), inputs_(inputs), generator_(generator) {
    for (int32_t r = 0; r < d.world_size(); ++r) {
      const ir::Graph& g = d.rank(r);
      for (size_t i = 0; i < g.inputs.size(); ++i) slot_[{r, g.inputs[i]}] = i;
    }
  }

  // Makes `expr` evaluate to `value`.
  void Assign(const symbolic::RelExpr& expr, const at::Tensor& value) {
    if (std::optional<at::Tensor> view = Writable(expr)) {
      view->copy_(value);
      return;
    }
    std::visit([&](const auto& node) { AssignNode(node, value); }, expr.node().kind);
  }

  bool IsInput(int32_t rank, ir::TensorRef ref) const {
    return ref.output == 0 && slot_.count({rank, ref.node}) != 0;
  }

 private:
  at::Tensor& Leaf(int32_t rank, ir::TensorRef ref) {
    auto it = slot_.find({rank, ref.node});
    if (ref.output != 0 || it == slot_.end()) {
      throw std::invalid_argument(d_.rank(rank).ValueName(ref) + "@" + std::to_string(rank) +
                                  " is not an input of rank " + std::to_string(rank) +
                                  ": input relations can only name D inputs");
    }
    return inputs_[rank].inputs[it->second];
  }

  // A view of the D input buffers that `expr` denotes, when it denotes one (a leaf, a slice,
  // transpose, permute or reshape of one).
  std::optional<at::Tensor> Writable(const symbolic::RelExpr& expr) {
    return std::visit(
        [&](const auto& node) -> std::optional<at::Tensor> {
          using T = std::decay_t<decltype(node)>;
          if constexpr (std::is_same_v<T, symbolic::DTensor>) {
            return Leaf(node.rank, node.tensor);
          } else if constexpr (std::is_same_v<T, symbolic::Slice>) {
            auto child = Writable(node.child);
            if (!child) return std::nullopt;
            return child->narrow(node.dim, node.start, node.end - node.start);
          } else if constexpr (std::is_same_v<T, symbolic::Transpose>) {
            auto child = Writable(node.child);
            if (!child) return std::nullopt;
            return child->transpose(node.d0, node.d1);
          } else if constexpr (std::is_same_v<T, symbolic::Permute>) {
            auto child = Writable(node.child);
            if (!child) return std::nullopt;
            return child->permute(node.perm);
          } else if constexpr (std::is_same_v<T, symbolic::Reshape>) {
            auto child = Writable(node.child);
            if (!child || !child->is_contiguous()) return std::nullopt;
            return child->view(node.shape);
          } else {
            return std::nullopt;
          }
        },
        expr.node().kind);
  }

  std::vector<int64_t> SizesOf(const symbolic::RelExpr& expr) {
    std::string why;
    std::optional<ir::TensorType> type = symbolic::InferRelType(expr, d_, &why);
    if (!type) throw std::invalid_argument(why);
    return StaticSizes(*type, expr.ToString());
  }

  at::Tensor RandomLike(const at::Tensor& value) {
    at::ScalarType type = CompareType(value.scalar_type());
    at::Tensor noise = at::randn(value.sizes(), generator_, at::TensorOptions().dtype(type));
    double scale = value.numel() > 0 ? value.abs().max().to(at::kDouble).item<double>() : 1.0;
    return (noise * (scale > 0 ? scale : 1.0)).to(value.scalar_type());
  }

  void AssignNode(const symbolic::DTensor&, const at::Tensor&) {}  // Writable handles leaves
  void AssignNode(const symbolic::Concat& node, const at::Tensor& value) {
    int64_t start = 0;
    for (const symbolic::RelExpr& child : node.children) {
      int64_t size =
          SizesOf(child).at(static_cast<size_t>(node.dim < 0 ? node.dim + value.dim() : node.dim));
      Assign(child, value.narrow(node.dim, start, size));
      start += size;
    }
  }
  void AssignNode(const symbolic::Slice& node, const at::Tensor&) {
    throw std::invalid_argument("a slice of a computed value (" + node.child.ToString() +
                                ") cannot be written");
  }
  // A sum over ranks: every part but the last is random, the last makes up the difference (so a
  // program that drops one part's contribution differs from S).
  void AssignNode(const symbolic::Sum& node, const at::Tensor& value) {
    if (!IsFloating(FromAten(value.scalar_type()))) {
      for (size_t k = 0; k < node.children.size(); ++k) {
        Assign(node.children[k], k == 0 ? value : at::zeros_like(value));
      }
      return;
    }
    at::Tensor rest = value.to(at::kDouble);  // the parts add up in double
    for (size_t k = 0; k + 1 < node.children.size(); ++k) {
      at::Tensor part = RandomLike(value);
      Assign(node.children[k], part);
      rest = rest - part.to(at::kDouble);
    }
    Assign(node.children.back(), rest.to(value.scalar_type()));
  }
  void AssignNode(const symbolic::Max& node, const at::Tensor& value) {
    Extreme(node.children, value, -1);
  }
  void AssignNode(const symbolic::Min& node, const at::Tensor& value) {
    Extreme(node.children, value, 1);
  }
  void Extreme(const std::vector<symbolic::RelExpr>& children, const at::Tensor& value, int sign) {
    for (size_t k = 0; k < children.size(); ++k) {
      if (k == 0 || !IsFloating(FromAten(value.scalar_type()))) {
        Assign(children[k], value);
      } else {
        Assign(children[k], (value + sign * RandomLike(value).abs()).to(value.scalar_type()));
      }
    }
  }
  void AssignNode(const symbolic::Scale& node, const at::Tensor& value) {
    if (node.factor == 0) throw std::invalid_argument("scale(0, ...) cannot be inverted");
    Assign(node.child, value / node.factor);
  }
  void AssignNode(const symbolic::Reshape& node, const at::Tensor& value) {
    Assign(node.child, value.reshape(SizesOf(node.child)));
  }
  // A broadcast D input would need S's value to repeat along the broadcast dims, which a random
  // S input does not: refused like a slice.
  void AssignNode(const symbolic::Expand& node, const at::Tensor&) {
    throw std::invalid_argument("an expand of a D tensor (" + node.child.ToString() +
                                ") cannot be written");
  }
  void AssignNode(const symbolic::Transpose& node, const at::Tensor& value) {
    Assign(node.child, value.transpose(node.d0, node.d1));
  }
  void AssignNode(const symbolic::Permute& node, const at::Tensor& value) {
    std::vector<int64_t> inverse(node.perm.size());
    for (size_t i = 0; i < node.perm.size(); ++i) {
      int64_t p =
          node.perm[i] < 0 ? node.perm[i] + static_cast<int64_t>(node.perm.size()) : node.perm[i];
      inverse[static_cast<size_t>(p)] = static_cast<int64_t>(i);
    }
    Assign(node.child, value.permute(inverse));
  }

  const ir::Program& d_;
  std::vector<GraphInputs>& inputs_;
  at::Generator& generator_;
  std::map<std::pair<int32_t, ir::NodeId>, size_t> slot_;
};

// A random value for an S input.
at::Tensor DrawInput(const ir::Graph& graph, ir::NodeId id, at::Generator& generator,
                     std::vector<std::string>* notes) {
  const ir::Node& node = graph.node(id);
  const ir::TensorType& type = node.type();
  std::vector<int64_t> sizes = StaticSizes(type, "S input '" + node.name + "'");
  at::ScalarType dtype = ToAten(type.dtype);
  auto draw = at::TensorOptions().dtype(CompareType(dtype));  // float32 for 16-bit types
  if (type.dtype == ir::DType::kBool) {
    if (sizes.size() >= 2 && sizes[sizes.size() - 1] == sizes[sizes.size() - 2]) {
      int64_t n = sizes.back();
      notes->push_back(node.name + ": causal mask (true above the diagonal)");
      return at::ones({n, n}, at::kBool).triu(1).expand(sizes).contiguous();
    }
    notes->push_back(node.name + ": random booleans");
    return at::rand(sizes, generator, draw).lt(0.5);
  }
  if (at::isIntegralType(dtype, /*includeBool=*/false)) {
    std::string why;
    std::optional<int64_t> bound = IndexBound(graph, id, &why);
    int64_t high = bound.value_or(2);
    notes->push_back(node.name + ": integers in [0, " + std::to_string(high) + ")" +
                     (bound ? ", " + why : ", indexes nothing"));
    return at::randint(high, sizes, generator, at::TensorOptions().dtype(dtype));
  }
  // Gaussian, scaled by 1/sqrt(last dim) for matrices so that products stay O(1).
  double scale = sizes.size() >= 2 && sizes.back() > 0
                     ? 1.0 / std::sqrt(static_cast<double>(sizes.back()))
                     : 1.0;
  return (at::randn(sizes, generator, draw) * scale).to(dtype);
}

}  // namespace

std::optional<int64_t> IndexBound(const ir::Graph& graph, ir::NodeId input, std::string* why) {
  // Breadth-first over the values the input flows into through index-preserving ops.
  std::map<ir::TensorRef, std::vector<ir::NodeId>> users;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    for (const ir::TensorRef& ref : graph.nodes[i].TensorInputs()) {
      users[ref].push_back(static_cast<ir::NodeId>(i));
    }
  }
  std::optional<int64_t> bound;
  std::set<ir::TensorRef> seen;
  std::deque<ir::TensorRef> queue = {ir::TensorRef{input, 0}};
  while (!queue.empty()) {
    ir::TensorRef value = queue.front();
    queue.pop_front();
    if (!seen.insert(value).second) continue;
    for (ir::NodeId user : users[value]) {
      const ir::Node& node = graph.node(user);
      std::string reason;
      if (std::optional<int64_t> size = IndexedSize(graph, node, value, &reason)) {
        if (!bound || *size < *bound) {
          bound = size;
          if (why) *why = reason;
        }
      } else if (PassesIndices(node.op)) {
        for (size_t o = 0; o < node.outputs.size(); ++o) {
          const std::optional<ir::TensorType>& t = node.outputs[o].type;
          if (t && !IsFloating(t->dtype) && t->dtype != ir::DType::kBool) {
            queue.push_back({user, static_cast<int32_t>(o)});
          }
        }
      }
    }
  }
  return bound;
}

ProgramInputs SynthesizeInputs(const ir::Graph& s_graph, const ir::Program& d_program,
                               const symbolic::SpecResult& relations, uint64_t seed,
                               const std::vector<at::Tensor>* s_inputs) {
  ProgramInputs result;
  at::Generator generator = at::detail::createCPUGenerator(seed);
  if (s_inputs != nullptr) {
    if (s_inputs->size() != s_graph.inputs.size()) {
      throw std::invalid_argument("SynthesizeInputs: " + std::to_string(s_inputs->size()) +
                                  " S input values for " + std::to_string(s_graph.inputs.size()) +
                                  " inputs");
    }
    result.s.inputs = *s_inputs;
  } else {
    for (ir::NodeId id : s_graph.inputs) {
      result.s.inputs.push_back(DrawInput(s_graph, id, generator, &result.notes));
    }
  }
  // D inputs start random (parts no relation covers, such as padding rows, stay random), then
  // every input relation writes its part.
  for (int32_t r = 0; r < d_program.world_size(); ++r) {
    GraphInputs inputs;
    std::vector<std::string> ignored;
    for (ir::NodeId id : d_program.rank(r).inputs) {
      inputs.inputs.push_back(DrawInput(d_program.rank(r), id, generator, &ignored));
    }
    result.d.push_back(std::move(inputs));
  }
  Deriver deriver(d_program, result.d, generator);
  std::set<std::pair<int32_t, ir::NodeId>> covered;
  auto s_value = [&](ir::TensorRef ref) -> const at::Tensor& {
    for (size_t i = 0; i < s_graph.inputs.size(); ++i) {
      if (s_graph.inputs[i] == ref.node) return result.s.inputs[i];
    }
    throw std::invalid_argument("not an S input: " + s_graph.ValueName(ref));
  };
  for (const symbolic::Relation& relation : relations.inputs) {
    try {
      deriver.Assign(relation.expr, s_value(relation.s_tensor));
    } catch (const std::exception& e) {
      Origin origin = OriginOf(relation);
      throw InputError(origin.file, origin.line,
                       "cannot derive D inputs from " + s_graph.ValueName(relation.s_tensor) +
                           " == " + relation.expr.ToString() + ": " + ErrorText(e));
    }
  }
  // Forwards: every input relation must hold on the derived values (exactly for copies; sums of
  // random parts up to rounding).
  DValueLookup lookup = [&](int32_t rank, ir::TensorRef ref) -> at::Tensor {
    if (!deriver.IsInput(rank, ref)) return at::Tensor();
    const ir::Graph& g = d_program.rank(rank);
    for (size_t i = 0; i < g.inputs.size(); ++i) {
      if (g.inputs[i] == ref.node) return result.d[rank].inputs[i];
    }
    return at::Tensor();
  };
  for (const symbolic::Relation& relation : relations.inputs) {
    at::Tensor want = s_value(relation.s_tensor);
    at::Tensor got = EvalRelExpr(relation.expr, lookup);
    bool holds = false;
    if (got.sizes() != want.sizes()) {
      holds = false;
    } else if (IsFloating(FromAten(want.scalar_type()))) {
      // Parts of a sum are rounded to the input dtype: allow that rounding, relative to the whole.
      at::ScalarType type = CompareType(want.scalar_type());
      at::Tensor w = want.to(type);
      double scale = w.numel() ? w.abs().max().to(at::kDouble).item<double>() : 0.0;
      double error =
          w.numel() ? (got.to(type) - w).abs().max().to(at::kDouble).item<double>() : 0.0;
      holds = error <= 1e-2 * scale + 1e-300;
    } else {
      holds = at::equal(got.to(want.scalar_type()), want);
    }
    if (!holds) {
      Origin origin = OriginOf(relation);
      throw InputError(origin.file, origin.line,
                       "the input relations contradict one another: after deriving D's inputs, " +
                           s_graph.ValueName(relation.s_tensor) +
                           " == " + relation.expr.ToString() +
                           " does not hold (another relation writes the same D input)");
    }
  }
  // Graph constants the spec gives a value.
  auto constants = [&](const ir::Graph& g, GraphInputs* inputs) {
    for (const ir::Node& node : g.nodes) {
      if (node.kind != ir::NodeKind::kConstant || node.outputs.empty() || !node.outputs[0].type) {
        continue;
      }
      auto it = relations.constants.find(node.name);
      if (it == relations.constants.end()) continue;
      at::Tensor value = ZerosOf(*node.outputs[0].type);
      value.fill_(it->second);
      inputs->constants[node.name] = value;
    }
  };
  constants(s_graph, &result.s);
  for (int32_t r = 0; r < d_program.world_size(); ++r) constants(d_program.rank(r), &result.d[r]);
  return result;
}

}  // namespace gg::runtime
