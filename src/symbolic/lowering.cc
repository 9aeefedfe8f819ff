#include "symbolic/lowering.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "ir/op_registry.h"
#include "symbolic/index_domain.h"

namespace gg::symbolic {
namespace {

using ir::BoundArgs;
using ir::TensorType;
using ir::Value;

// Thrown by a lowering entry when the node's arguments are outside what the entry covers
// (alpha != 1, a step, a symbolic shape...): the node becomes opaque.
struct NotCovered {};

std::string ValueText(const Value& v) {
  std::ostringstream out;
  if (v.is_none()) {
    out << "None";
  } else if (v.is_bool()) {
    out << (v.as_bool() ? "True" : "False");
  } else if (v.is_int()) {
    out << v.as_int();
  } else if (v.is_double()) {
    out.precision(17);
    out << v.as_double() << "f";
  } else if (v.is_string()) {
    out << "'" << v.as_string() << "'";
  } else if (v.is_dtype()) {
    out << ir::ShortName(v.as_dtype());
  } else if (v.is_device()) {
    out << "device";  // placement does not change values
  } else if (v.is_enum()) {
    out << v.as_enum().name;
  } else if (v.is_op_ref()) {
    out << v.as_op_ref().qualified_name;
  } else if (v.is_tensor()) {
    out << "T";
  } else if (v.is_list()) {
    out << "[";
    for (const Value& item : v.as_list()) out << ValueText(item) << ",";
    out << "]";
  }
  return out.str();
}

// What a lowering entry works with: the bound arguments and helpers that add terms.
class LowerContext {
 public:
  LowerContext(EGraph& egraph, const ir::Graph& graph,
               const ir::Node& node, const BoundArgs& args, const TensorClassFn& tensor_class,
               const ConstantValues* constants = nullptr, bool rng_positional = false)
      : rng_positional_(rng_positional),
        constants_(constants),
        egraph_(egraph),
        graph_(graph),
        node_(node),
        args_(args),
        tensor_class_(tensor_class),
        lang_(TensorLanguage::Get()) {}

  // The spec's `rng positional`: an entry of a random operator may lower a draw only then
  // (docs/relations.md); otherwise it throws NotCovered and the node is opaque and unique.
  bool rng_positional() const { return rng_positional_; }

  const Value& Arg(const char* name) const {
    if (!args_.has(name)) throw NotCovered{};
    return args_[name];
  }
  bool IsNone(const char* name) const { return !args_.has(name) || args_[name].is_none(); }
  // The schema's first argument (self, input, x: schemas name it differently).
  const char* FirstArg() const {
    if (args_.schema().args.empty()) throw NotCovered{};
    return args_.schema().args.front().name.c_str();
  }
  ClassId T(const char* name) const {
    const Value& v = Arg(name);
    if (v.is_tensor()) return tensor_class_(v.as_tensor());
    if (v.is_number()) return Fl(v.as_double());
    throw NotCovered{};
  }
  const TensorType& InType(const char* name) const {
    const Value& v = Arg(name);
    if (!v.is_tensor()) throw NotCovered{};
    return graph_.type(v.as_tensor());
  }
  int64_t I(const char* name) const {
    const Value& v = Arg(name);
    if (v.is_bool()) return v.as_bool() ? 1 : 0;
    if (!v.is_int()) throw NotCovered{};
    return v.as_int();
  }
  double F(const char* name) const {
    const Value& v = Arg(name);
    if (!v.is_number()) throw NotCovered{};
    return v.as_double();
  }
  std::vector<ClassId> TensorList(const char* name) const {
    const Value& v = Arg(name);
    if (!v.is_list() || v.as_list().empty()) throw NotCovered{};
    std::vector<ClassId> out;
    for (const Value& item : v.as_list()) {
      if (!item.is_tensor()) throw NotCovered{};
      out.push_back(tensor_class_(item.as_tensor()));
    }
    return out;
  }
  std::vector<int64_t> Ints(const char* name) const {
    const Value& v = Arg(name);
    if (!v.is_int_list()) throw NotCovered{};
    return v.as_int_list();
  }
  // A dimension argument normalized against the rank of tensor argument `of`.
  int64_t Dim(int64_t dim, const char* of = "self") const {
    auto d = ir::WrapDim(dim, static_cast<int64_t>(InType(of).shape.size()));
    if (!d) throw NotCovered{};
    return *d;
  }
  int64_t Size(const char* of, int64_t dim) const {
    const ir::Dim& d = InType(of).shape.at(dim);
    if (!d.is_static()) throw NotCovered{};
    return d.value();
  }
  const TensorType& OutType(size_t i = 0) const {
    if (i >= node_.outputs.size() || !node_.outputs[i].type) throw NotCovered{};
    return *node_.outputs[i].type;
  }

  ClassId N(int64_t v) const { return egraph_.Add(lang_.Num(v)); }
  ClassId Fl(double v) const { return egraph_.Add(lang_.Flt(v)); }
  ClassId Op(const char* op, std::vector<ClassId> children) const {
    return egraph_.Add(ENode{*lang_.ops().Find(op), 0, std::move(children)});
  }
  ClassId Slice(ClassId x, int64_t dim, int64_t start, int64_t end) const {
    return Op("slice", {x, N(dim), N(start), N(end)});
  }
  // (reshape x sizes...) to the annotated shape of output i.
  ClassId ReshapeTo(ClassId x, size_t output) const {
    std::vector<ClassId> children{x};
    for (const ir::Dim& d : OutType(output).shape) {
      if (!d.is_static()) throw NotCovered{};
      children.push_back(N(d.value()));
    }
    return egraph_.Add(ENode{lang_.reshape, 0, std::move(children)});
  }

  const ir::Node& node() const { return node_; }

  // A scalar argument as `(flt v)`: a number, or a tensor read (through lift_fresh_copy / clone)
  // from a graph constant whose value the spec states (`constant` statements) or from
  // aten::scalar_tensor(v) (the capture writes 0-dim tensor constants so: their value is known
  // in every graph, S included, where a spec `constant` would name a node S lacks).
  // With `through_broadcast`, also through expand, reshape and view of a one-element tensor
  // (XLA's broadcast of a constant) and from aten::full: for an argument that broadcasts to the
  // result anyway.
  ClassId Scalar(const char* name, bool through_broadcast = false) const {
    const Value& v = Arg(name);
    if (v.is_number()) return Fl(v.as_double());
    if (!v.is_tensor()) throw NotCovered{};
    ir::TensorRef ref = v.as_tensor();
    for (int steps = 0; steps < 8; ++steps) {
      const ir::Node& producer = graph_.node(ref.node);
      if (producer.kind == ir::NodeKind::kOperator && producer.op.ns == "aten" &&
          producer.op.name == "scalar_tensor" && !producer.args.empty() &&
          producer.args[0].is_number()) {
        return Fl(producer.args[0].as_double());
      }
      if (producer.kind == ir::NodeKind::kConstant) {
        if (constants_ == nullptr) throw NotCovered{};
        auto it = constants_->find(producer.name);
        if (it == constants_->end()) throw NotCovered{};
        return Fl(it->second);
      }
      const std::string& op = producer.op.name;
      if (through_broadcast && producer.kind == ir::NodeKind::kOperator &&
          producer.op.ns == "aten" && op == "full" && producer.args.size() >= 2 &&
          producer.args[1].is_number()) {
        return Fl(producer.args[1].as_double());
      }
      auto one_element = [&](ir::TensorRef r) {
        ir::Dim n = ir::NumElements(graph_.type(r).shape);
        return n.is_static() && n.value() == 1;
      };
      // a one-element floating zeros / ones (autograd's zeros([]) for the positions an
      // index_put_ of a number overwrote: Megatron's vocabulary-parallel embedding backward);
      // a boolean one stays a mask (torchtitan's new_ones(b8[]) & causal). Not for a where
      // branch (through_broadcast): a where of two tensors stays the sum of its two branches,
      // the form the loss-parallel backward lemmas relate.
      if (!through_broadcast && producer.kind == ir::NodeKind::kOperator &&
          producer.op.ns == "aten" && one_element(ref) &&
          ir::IsFloatingPoint(graph_.type(ref).dtype)) {
        if (op == "zeros" || op == "zeros_like" || op == "new_zeros") return Fl(0.0);
        if (op == "ones" || op == "ones_like" || op == "new_ones") return Fl(1.0);
      }
      const bool broadcast = through_broadcast && producer.kind == ir::NodeKind::kOperator &&
                             (op == "expand" || op == "reshape" || op == "view") &&
                             !producer.TensorInputs().empty() &&
                             one_element(producer.TensorInputs()[0]);
      if (producer.kind != ir::NodeKind::kOperator ||
          (op != "lift_fresh_copy" && op != "clone" && op != "detach" && op != "alias" &&
           !broadcast)) {
        throw NotCovered{};
      }
      std::vector<ir::TensorRef> ins = producer.TensorInputs();
      if (ins.size() != 1) throw NotCovered{};
      ref = ins[0];
    }
    throw NotCovered{};
  }
  // The tensors of a list argument that may hold None entries (index, index_put).
  std::vector<std::optional<ir::TensorRef>> OptionalTensors(const char* name) const {
    const Value& v = Arg(name);
    if (!v.is_list()) throw NotCovered{};
    std::vector<std::optional<ir::TensorRef>> out;
    for (const Value& item : v.as_list()) {
      if (item.is_none()) {
        out.push_back(std::nullopt);
      } else if (item.is_tensor()) {
        out.push_back(item.as_tensor());
      } else {
        throw NotCovered{};
      }
    }
    return out;
  }
  const ir::Graph& graph() const { return graph_; }
  ClassId TensorClass(ir::TensorRef ref) const { return tensor_class_(ref); }
  const ConstantValues* constants() const { return constants_; }

 private:
  bool rng_positional_;
  const ConstantValues* constants_;
  EGraph& egraph_;
  const ir::Graph& graph_;
  const ir::Node& node_;
  const BoundArgs& args_;
  const TensorClassFn& tensor_class_;
  const TensorLanguage& lang_;
};

using Outputs = std::vector<std::optional<ClassId>>;
using LowerFn = Outputs (*)(const LowerContext&);

Outputs One(ClassId c) { return {c}; }

// ---- entries -----------------------------------------------------------------------------------

Outputs Identity(const LowerContext& l) { return One(l.T(l.FirstArg())); }

// conj_physical: the conjugate materialized, the same value as aten::_conj's (conj x).
Outputs ConjPhysical(const LowerContext& l) { return One(l.Op("conj", {l.T("self")})); }

// _to_copy keeps values, or converts them: (cast x dtype). A cast of integers or bools to f32
// is written x / 1.0 instead, the form nll_loss_forward's count and the vocabulary-parallel
// appliers (lemma_conditions.cc) use, so the three stay congruent. Complex casts stay opaque.
Outputs ToCopy(const LowerContext& l) {
  const ir::DType from = l.InType("self").dtype;
  if (l.IsNone("dtype") || l.Arg("dtype").as_dtype() == from) return One(l.T("self"));
  const ir::DType to = l.Arg("dtype").as_dtype();
  if (ir::IsComplex(from) || ir::IsComplex(to)) throw NotCovered{};
  if (!ir::IsFloatingPoint(from) && to == ir::DType::kFloat32) {
    return One(l.Op("div", {l.T("self"), l.Fl(1.0)}));
  }
  return One(l.Op("cast", {l.T("self"), l.N(static_cast<int64_t>(to))}));
}

Outputs Copy(const LowerContext& l) {
  // copy(self, src) returns src's values in self's shape and dtype.
  if (l.InType("src") != l.InType("self")) throw NotCovered{};
  return One(l.T("src"));
}

template <const char* kOp>
Outputs Binary(const LowerContext& l) {
  if (l.node().op.name == "add" || l.node().op.name == "sub") {
    if (!l.IsNone("alpha") && l.F("alpha") != 1.0) throw NotCovered{};
  }
  return One(l.Op(kOp, {l.T("self"), l.T("other")}));
}

// rsub(self, other, alpha) = other - alpha * self: (sub other self) at alpha 1 (1 - float(mask),
// Megatron's cross-entropy backward).
Outputs Rsub(const LowerContext& l) {
  if (!l.IsNone("alpha") && l.F("alpha") != 1.0) throw NotCovered{};
  return One(l.Op("sub", {l.T("other"), l.T("self")}));
}

Outputs Div(const LowerContext& l) {
  if (!l.IsNone("rounding_mode")) throw NotCovered{};
  return One(l.Op("div", {l.T("self"), l.T("other")}));
}

// div(x, y, rounding_mode): None is true division (div), 'floor' the quotient rounded down
// (floor_div, Python's //), 'trunc' rounded toward zero (trunc_div), in the promoted dtype.
Outputs DivMode(const LowerContext& l) {
  if (l.IsNone("rounding_mode")) return Div(l);
  const std::string& mode = l.Arg("rounding_mode").as_string();
  if (mode != "floor" && mode != "trunc") throw NotCovered{};
  return One(l.Op(mode == "floor" ? "floor_div" : "trunc_div", {l.T("self"), l.T("other")}));
}

// floor_divide(x, y) is x // y, rounded down (torch >= 1.13).
Outputs FloorDivide(const LowerContext& l) {
  return One(l.Op("floor_div", {l.T("self"), l.T("other")}));
}

// remainder(x, y): Python's x % y, x - floor(x / y) * y, with the sign of y.
Outputs Remainder(const LowerContext& l) {
  return One(l.Op("remainder", {l.T("self"), l.T("other")}));
}

// gelu_backward(g, x) with the exact (erf) gelu: g times gelu's derivative at x.
Outputs GeluBackward(const LowerContext& l) {
  if (!l.IsNone("approximate") && l.Arg("approximate").as_string() != "none") throw NotCovered{};
  return One(l.Op("mul", {l.T("grad_output"), l.Op("gelu_grad", {l.T("self")})}));
}

Outputs Mm(const LowerContext& l) { return One(l.Op("mm", {l.T("self"), l.T("mat2")})); }
Outputs Bmm(const LowerContext& l) { return One(l.Op("bmm", {l.T("self"), l.T("mat2")})); }

// torch._grouped_mm without bias or out_dtype: 2-d x 3-d is (grouped_mm self mat2 offs), the
// inner-dim grouping 2-d x 2-d (its weight gradient) (grouped_mm_k self mat2 offs), 3-d x 3-d
// without offs a bmm; 3-d x 2-d stays opaque.
Outputs GroupedMm(const LowerContext& l) {
  if (!l.IsNone("bias") || !l.IsNone("out_dtype")) throw NotCovered{};
  const size_t a = l.InType("self").shape.size(), b = l.InType("mat2").shape.size();
  if (l.IsNone("offs")) {
    if (a != 3 || b != 3) throw NotCovered{};
    return One(l.Op("bmm", {l.T("self"), l.T("mat2")}));
  }
  if (a != 2) throw NotCovered{};
  return One(l.Op(b == 3 ? "grouped_mm" : "grouped_mm_k", {l.T("self"), l.T("mat2"), l.T("offs")}));
}

Outputs Addmm(const LowerContext& l) {
  if (l.F("beta") != 1.0 || l.F("alpha") != 1.0) throw NotCovered{};
  return One(l.Op("add", {l.T("self"), l.Op("mm", {l.T("mat1"), l.T("mat2")})}));
}

Outputs Baddbmm(const LowerContext& l) {
  ClassId product = l.Op("bmm", {l.T("batch1"), l.T("batch2")});
  double alpha = l.F("alpha");
  if (alpha != 1.0) product = l.Op("scale", {product, l.Fl(alpha)});
  double beta = l.F("beta");
  if (beta == 0.0) return One(product);  // self is ignored (Megatron passes an empty buffer)
  if (beta != 1.0) throw NotCovered{};
  return One(l.Op("add", {l.T("self"), product}));
}

Outputs T2(const LowerContext& l) {
  if (l.InType("self").shape.size() < 2) return One(l.T("self"));
  return One(l.Op("transpose", {l.T("self"), l.N(0), l.N(1)}));
}

Outputs Transpose(const LowerContext& l) {
  return One(l.Op("transpose", {l.T("self"), l.N(l.Dim(l.I("dim0"))), l.N(l.Dim(l.I("dim1")))}));
}

Outputs Permute(const LowerContext& l) {
  std::vector<ClassId> children{l.T("self")};
  for (int64_t d : l.Ints("dims")) children.push_back(l.N(l.Dim(d)));
  return One(l.Op("permute", std::move(children)));
}

Outputs Reshape(const LowerContext& l) {
  if (l.InType("self").shape == l.OutType().shape) return One(l.T("self"));
  return One(l.ReshapeTo(l.T("self"), 0));
}

Outputs Slice(const LowerContext& l) {
  if (l.I("step") != 1) throw NotCovered{};
  int64_t dim = l.Dim(l.I("dim"));
  int64_t size = l.Size("self", dim);
  auto clamp = [&](const char* name, int64_t fallback) {
    if (l.IsNone(name)) return fallback;
    int64_t v = l.I(name);
    if (v < 0) v += size;
    return std::clamp<int64_t>(v, 0, size);
  };
  int64_t start = clamp("start", 0);
  int64_t end = std::max(start, clamp("end", size));
  if (start == 0 && end == size) return One(l.T("self"));
  return One(l.Slice(l.T("self"), dim, start, end));
}

Outputs SplitWithSizes(const LowerContext& l) {
  int64_t dim = l.Dim(l.I("dim"));
  Outputs out;
  int64_t offset = 0;
  for (int64_t size : l.Ints("split_sizes")) {
    out.push_back(l.Slice(l.T("self"), dim, offset, offset + size));
    offset += size;
  }
  return out;
}

// split(self, n, dim): slices of n along dim, the last one shorter when n does not divide.
Outputs SplitEqual(const LowerContext& l) {
  int64_t dim = l.Dim(l.I("dim"));
  int64_t size = l.Size("self", dim);
  int64_t step = l.I("split_size");
  if (step <= 0) throw NotCovered{};
  Outputs out;
  for (int64_t offset = 0; offset < size; offset += step) {
    int64_t end = std::min(size, offset + step);
    out.push_back(offset == 0 && end == size ? l.T("self") : l.Slice(l.T("self"), dim, offset, end));
  }
  return out;
}

// x broadcast to `out` (x's dims right-aligned, as in PyTorch): the language's expand, one node
// however wide (a 50k-vocabulary gradient); the expand-as-copies lemma unfolds narrow ones into
// concats of copies for the lemmas that split a concat. Every dim is checked before a node is
// added.
ClassId BroadcastTerm(const LowerContext& l, ClassId x, const TensorType& in,
                      const ir::Shape& out) {
  if (out.size() < in.shape.size()) throw NotCovered{};
  const size_t added = out.size() - in.shape.size();
  std::vector<ClassId> children{x};
  for (size_t d = 0; d < out.size(); ++d) {
    if (!out[d].is_static()) throw NotCovered{};
    if (d >= added) {
      const ir::Dim& from = in.shape[d - added];
      if (!from.is_static() || (from.value() != 1 && from != out[d])) throw NotCovered{};
    }
    children.push_back(l.N(out[d].value()));
  }
  if (added == 0 && in.shape == out) return x;
  return l.Op("expand", std::move(children));
}

// The ne(t, c) mask of integer t as NeScalar writes it: (t < c) | (t >= c + 1).
ClassId NotEqualMask(const LowerContext& l, ClassId t, double c) {
  return l.Op("or", {l.Op("lt", {t, l.Fl(c)}), l.Op("ge", {t, l.Fl(c + 1.0)})});
}

Outputs Expand(const LowerContext& l) {
  const TensorType& in = l.InType("self");
  const TensorType& out = l.OutType();
  if (in.shape == out.shape) return One(l.T("self"));
  return One(BroadcastTerm(l, l.T("self"), in, out.shape));
}

Outputs Cat(const LowerContext& l) {
  int64_t rank = static_cast<int64_t>(l.OutType().shape.size());
  auto dim = ir::WrapDim(l.I("dim"), rank);
  if (!dim) throw NotCovered{};
  std::vector<ClassId> children{l.N(*dim)};
  for (ClassId piece : l.TensorList("tensors")) children.push_back(piece);
  return One(l.Op("concat", std::move(children)));
}

Outputs Softmax(const LowerContext& l) {
  return One(l.Op("softmax", {l.T("self"), l.N(l.Dim(l.I("dim")))}));
}

// _softmax_backward_data(g, y, d) = y * (g - sum(g * y, d, keepdim)), y = softmax(x, d) being
// the forward's output (the Jacobian-vector product of softmax). input_dtype only names the
// forward's dtype.
Outputs SoftmaxBackwardData(const LowerContext& l) {
  ClassId g = l.T("grad_output");
  ClassId y = l.T("output");
  ClassId dot = l.Op("sum_dim", {l.Op("mul", {g, y}), l.N(l.Dim(l.I("dim"), "output")), l.N(1)});
  return One(l.Op("mul", {y, l.Op("sub", {g, dot})}));
}

// log_softmax(x, d) = log(softmax(x, d)): the softmax lemmas (rows whole on a rank) carry over.
Outputs LogSoftmax(const LowerContext& l) {
  if (l.I("half_to_float") != 0) throw NotCovered{};
  return One(l.Op("log", {l.Op("softmax", {l.T("self"), l.N(l.Dim(l.I("dim")))})}));
}

// nll_loss_forward(x [N, C], t [N], None, reduction, ignore): the picked log-probabilities
// -x[i, t[i]] with ignored targets masked to 0 (and read at column 0), summed, or averaged over
// the targets kept. total_weight is that count (as a float). t == ignore is written
// not(t < ignore or t >= ignore + 1), exact for integer targets. Domain: nll_loss raises on a
// kept target outside [0, C), so pick's (and nll_loss_backward's onehot's) ids are in range.
Outputs NllLossForward(const LowerContext& l) {
  if (!l.IsNone("weight")) throw NotCovered{};
  const TensorType& x = l.InType("self");
  const TensorType& t = l.InType("target");
  if (x.shape.size() != 2 || t.shape.size() != 1) throw NotCovered{};
  if (t.dtype != ir::DType::kInt64 && t.dtype != ir::DType::kInt32) throw NotCovered{};
  int64_t ignore = l.I("ignore_index");
  ClassId target = l.T("target");
  ClassId kept = NotEqualMask(l, target, static_cast<double>(ignore));
  ClassId ignored = l.Op("not", {kept});
  ClassId safe = l.Op("masked_fill", {target, ignored, l.Fl(0.0)});
  ClassId picked = l.Op("masked_fill", {l.Op("pick", {l.T("self"), safe}), ignored, l.Fl(0.0)});
  // The count in x's dtype (f32: x / 1.0, the form ToCopy writes).
  ClassId count = l.Op("sum_all", {x.dtype == ir::DType::kFloat32
                                       ? l.Op("div", {kept, l.Fl(1.0)})
                                       : l.Op("cast", {kept, l.N(static_cast<int64_t>(x.dtype))})});
  switch (l.I("reduction")) {
    case 0:
      return {l.Op("neg", {picked}), std::nullopt};
    case 1:
      return {l.Op("neg", {l.Op("div", {l.Op("sum_all", {picked}), count})}), count};
    case 2:
      return {l.Op("neg", {l.Op("sum_all", {picked})}), count};
    default:
      throw NotCovered{};
  }
}

// pow(x, n) = x * ... * x for n = 1, 2, 3, 4 (RMSNorm's variance as Hugging Face models write it;
// the cube of GPT-2's gelu_new); other exponents stay opaque.
Outputs PowScalar(const LowerContext& l) {
  double exponent = l.F("exponent");
  // pow(x, 1.0) = x: what autograd of pow(x, 2) writes (2 * pow(x, 1.0)), same dtype for a
  // floating x
  if (exponent == 1.0 && ir::IsFloatingPoint(l.InType("self").dtype)) return One(l.T("self"));
  if (exponent != 2.0 && exponent != 3.0 && exponent != 4.0) throw NotCovered{};
  ClassId x = l.T("self");
  ClassId product = l.Op("mul", {x, x});
  for (int k = 2; k < static_cast<int>(exponent); ++k) product = l.Op("mul", {product, x});
  return One(product);
}

// tanh_backward(g, y) = g * (1 - y * y), y = tanh(x) being the forward's output.
Outputs TanhBackward(const LowerContext& l) {
  ClassId y = l.T("output");
  return One(
      l.Op("mul", {l.T("grad_output"), l.Op("sub", {l.Fl(1.0), l.Op("mul", {y, y})})}));
}

// silu_backward(g, x) = g * s * (1 + x * (1 - s)), s = sigmoid(x): d/dx x s(x) = s + x s (1 - s).
Outputs SiluBackward(const LowerContext& l) {
  ClassId x = l.T("self");
  ClassId s = l.Op("sigmoid", {x});
  ClassId slope = l.Op("add", {l.Fl(1.0), l.Op("mul", {x, l.Op("sub", {l.Fl(1.0), s})})});
  return One(l.Op("mul", {l.T("grad_output"), l.Op("mul", {s, slope})}));
}

// Reductions over a list of dims become nested single-dim reductions, innermost dim last so the
// remaining indices stay valid when keepdim is false.
Outputs ReduceDims(const LowerContext& l, const char* op) {
  if (!l.IsNone("dtype")) throw NotCovered{};
  bool keepdim = l.I("keepdim") != 0;
  std::vector<int64_t> dims;
  if (!l.IsNone("dim")) {
    for (int64_t d : l.Ints("dim")) dims.push_back(l.Dim(d));
  }
  if (dims.empty()) {
    if (keepdim || std::string(op) != "sum_dim") throw NotCovered{};
    return One(l.Op("sum_all", {l.T("self")}));
  }
  std::sort(dims.rbegin(), dims.rend());
  ClassId x = l.T("self");
  for (int64_t d : dims) x = l.Op(op, {x, l.N(d), l.N(keepdim ? 1 : 0)});
  return One(x);
}

Outputs SumDims(const LowerContext& l) { return ReduceDims(l, "sum_dim"); }
Outputs MeanDims(const LowerContext& l) { return ReduceDims(l, "mean_dim"); }

Outputs SumAll(const LowerContext& l) {
  if (!l.IsNone("dtype")) throw NotCovered{};
  return One(l.Op("sum_all", {l.T("self")}));
}

// mean(x) of a floating tensor: its sum over every element divided by their (static) count, the
// form a mean of pieces is related in (a pipeline's mean of micro-batch means).
Outputs MeanAll(const LowerContext& l) {
  if (!l.IsNone("dtype")) throw NotCovered{};
  const TensorType& x = l.InType("self");
  const ir::Dim n = ir::NumElements(x.shape);
  if (!ir::IsFloatingPoint(x.dtype) || !n.is_static() || n.value() == 0) throw NotCovered{};
  return One(l.Op("div", {l.Op("sum_all", {l.T("self")}), l.Fl(static_cast<double>(n.value()))}));
}

// amax(x, dims, keepdim): the largest value over each of dims (values only, no indices), a max_dim
// per dim; amax over every dim (dims empty) stays opaque.
Outputs Amax(const LowerContext& l) { return ReduceDims(l, "max_dim"); }

// topk(x, k, dim, largest=True, sorted=True): its values and indices (the router of a top-k
// MoE); the smallest k, or an unsorted topk (an order the kernel chooses), stay opaque.
Outputs Topk(const LowerContext& l) {
  if (l.I("largest") == 0 || l.I("sorted") == 0) throw NotCovered{};
  ClassId x = l.T("self");
  ClassId k = l.N(l.I("k"));
  ClassId dim = l.N(l.Dim(l.I("dim")));
  return {l.Op("topk_values", {x, k, dim}), l.Op("topk_indices", {x, k, dim})};
}

// sort(x, stable=True, dim, descending): the sorted values and their positions, equal keys in
// their order in x (a stable sort: ties broken by position, so it is one function of x and a D
// that sorts equal keys sorts them alike). A sort without stable=True orders equal keys as its
// kernel chooses: opaque.
Outputs Sort(const LowerContext& l) {
  if (l.IsNone("stable") || l.I("stable") == 0) throw NotCovered{};
  if (l.InType("self").shape.empty()) throw NotCovered{};
  ClassId x = l.T("self");
  ClassId dim = l.N(l.Dim(l.I("dim")));
  ClassId descending = l.N(l.I("descending"));
  return {l.Op("sort_values", {x, dim, descending}), l.Op("sort_indices", {x, dim, descending})};
}

Outputs MaxDim(const LowerContext& l) {
  ClassId values = l.Op("max_dim", {l.T("self"), l.N(l.Dim(l.I("dim"))), l.N(l.I("keepdim"))});
  return {values, std::nullopt};  // indices stay opaque
}

Outputs Unsqueeze(const LowerContext& l) { return One(l.ReshapeTo(l.T("self"), 0)); }

// Domain: aten::embedding raises on ids outside [0, V), so on every run that executes its ids
// are in the range the embedding lemmas assume; no wrap and no proof needed.
Outputs Embedding(const LowerContext& l) {
  if (l.I("padding_idx") != -1) throw NotCovered{};
  return One(l.Op("embedding", {l.T("weight"), l.T("indices")}));
}

// index_select(x, 0, ids) with 1-d ids: the rows of x at ids, (embedding x ids) (an MoE
// dispatcher's tokens in sorted order). Domain: index_select raises on ids outside [0, rows)
// (negative ones too), so embedding's holds on any run. Other dims stay opaque.
Outputs IndexSelect(const LowerContext& l) {
  if (l.InType("self").shape.empty() || l.Dim(l.I("dim")) != 0) throw NotCovered{};
  const TensorType& ids = l.InType("index");
  if (ids.shape.size() != 1) throw NotCovered{};
  if (ids.dtype != ir::DType::kInt64 && ids.dtype != ir::DType::kInt32) throw NotCovered{};
  return One(l.Op("embedding", {l.T("self"), l.T("index")}));
}

// Whether `ref` holds a permutation of 0 .. n-1: the indices output of a sort of a 1-d tensor of
// n entries, or of a topk of all n of them (each position once, in some order).
bool IsPermutation(const ir::Graph& graph, ir::TensorRef ref, int64_t n) {
  const ir::Node& producer = graph.node(ref.node);
  if (producer.kind != ir::NodeKind::kOperator || producer.op.ns != "aten" || ref.output != 1 ||
      (producer.op.name != "sort" && producer.op.name != "topk")) {
    return false;
  }
  std::vector<ir::TensorRef> ins = producer.TensorInputs();
  if (ins.size() != 1 || graph.type(ins[0]).shape != ir::Shape{ir::Dim(n)}) return false;
  if (producer.op.name == "sort") return true;
  const auto& a = producer.args;  // topk(self, k, ...)
  return a.size() > 1 && a[1].is_int() && a[1].as_int() == n;
}

// index_copy(self, 0, ids, src) with ids a permutation of self's n rows (a sort's indices): every
// row is written once, out[ids[i]] = src[i], so self is overwritten whole and out is src's rows
// in the inverse order, (embedding src (sort_indices ids 0 0)) (an MoE combine putting expert
// outputs back in slot order). Other ids (a row written twice or not at all) stay opaque.
Outputs IndexCopy(const LowerContext& l) {
  const TensorType& self = l.InType("self");
  if (self.shape.empty() || l.Dim(l.I("dim")) != 0 || l.InType("source") != self) {
    throw NotCovered{};
  }
  const ir::Value& ids = l.Arg("index");
  if (!self.shape[0].is_static() || !ids.is_tensor() ||
      !IsPermutation(l.graph(), ids.as_tensor(), self.shape[0].value())) {
    throw NotCovered{};
  }
  ClassId inverse = l.Op("sort_indices", {l.T("index"), l.N(0), l.N(0)});
  return One(l.Op("embedding", {l.T("source"), inverse}));
}

Outputs MaskedFill(const LowerContext& l) {
  return One(l.Op("masked_fill", {l.T("self"), l.T("mask"), l.T("value")}));
}

// clamp(x, lo, hi) with both bounds numbers, lo <= hi, integral ones on integer x (a missing or
// fractional bound, which ATen's type promotion would make float, stays opaque).
Outputs Clamp(const LowerContext& l) {
  if (l.IsNone("min") || l.IsNone("max")) throw NotCovered{};
  const double lo = l.F("min"), hi = l.F("max");
  if (lo > hi) throw NotCovered{};
  if (!ir::IsFloatingPoint(l.InType("self").dtype) &&
      (lo != std::floor(lo) || hi != std::floor(hi))) {
    throw NotCovered{};
  }
  return One(l.Op("clamp", {l.T("self"), l.Fl(lo), l.Fl(hi)}));
}

Outputs Lt(const LowerContext& l) { return One(l.Op("lt", {l.T("self"), l.T("other")})); }
Outputs Eq(const LowerContext& l) { return One(l.Op("eq", {l.T("self"), l.T("other")})); }
Outputs Ge(const LowerContext& l) { return One(l.Op("ge", {l.T("self"), l.T("other")})); }
// x > y is y < x and x <= y is y >= x, NaN included (both false): the language keeps two
// comparisons, so the lemmas about them see every comparison a program writes.
Outputs Gt(const LowerContext& l) { return One(l.Op("lt", {l.T("other"), l.T("self")})); }
Outputs Le(const LowerContext& l) { return One(l.Op("ge", {l.T("other"), l.T("self")})); }

// ne(x, c) for integer x and an integral c: (x < c) | (x >= c + 1), exact on integers and the
// form nll_loss_forward's ignore mask is written in (the same term when both test one id).
Outputs NeScalar(const LowerContext& l) {
  ir::DType dtype = l.InType("self").dtype;
  if (dtype != ir::DType::kInt64 && dtype != ir::DType::kInt32) throw NotCovered{};
  double c = l.F("other");
  if (c != std::floor(c)) throw NotCovered{};
  return One(NotEqualMask(l, l.T("self"), c));
}

// where(x < 0, x + n, x) for integer x and an integer n: the wrap of negative ids that
// aten::index applies, written by hand (a D that wraps as its S's index does): (wrap_index x n).
std::optional<ClassId> WhereWrap(const LowerContext& l) {
  const ir::Value& cond = l.Arg("condition");
  const ir::Value& up = l.Arg("self");
  const ir::Value& x = l.Arg("other");
  if (!cond.is_tensor() || !up.is_tensor() || !x.is_tensor()) return std::nullopt;
  const TensorType& type = l.graph().type(x.as_tensor());
  if ((type.dtype != ir::DType::kInt64 && type.dtype != ir::DType::kInt32) ||
      l.graph().type(up.as_tensor()) != type ||
      l.graph().type(cond.as_tensor()).shape != type.shape) {
    return std::nullopt;
  }
  auto is_op = [&](const ir::Node& n, const char* name) {
    return n.kind == ir::NodeKind::kOperator && n.op.ns == "aten" && n.op.name == name;
  };
  const ir::Node& lt = l.graph().node(cond.as_tensor().node);
  const ir::Node& add = l.graph().node(up.as_tensor().node);
  if (!is_op(lt, "lt") || lt.args.size() != 2 || !lt.args[0].is_tensor() ||
      lt.args[0].as_tensor() != x.as_tensor() || !lt.args[1].is_number() ||
      lt.args[1].as_double() != 0.0) {
    return std::nullopt;
  }
  if (!is_op(add, "add") || add.args.size() != 2 || !add.kwargs.empty() ||
      !add.args[0].is_tensor() || add.args[0].as_tensor() != x.as_tensor() ||
      !add.args[1].is_int() || add.args[1].as_int() <= 0) {
    return std::nullopt;
  }
  return l.Op("wrap_index", {l.TensorClass(x.as_tensor()), l.N(add.args[1].as_int())});
}

// where(cond, x, v) with v a known scalar: masked_fill(x, not(cond), v), x broadcast to cond's
// shape first when it is smaller (the decomposed nll_loss_backward's where(t != ignore, g / w, 0)
// with a 0-d g / w).
// where(c, x, v) for a scalar v (a number, or a broadcast one-element constant): x where c
// holds, v elsewhere, (masked_fill x (not c) v); where(c, v, y) is (masked_fill y c v); two
// constants fill c's own values cast, (masked_fill (masked_fill (cast c) c v) (not c) w). For
// tensors x, y of the result's floating dtype, where(c, x, y) is the sum of the two branches,
// each zeroed where the other is taken: (add (masked_fill x (not c) 0) (masked_fill y c 0)).
// Exact: every element adds 0 to one branch's value (a masked NaN or inf is replaced, not added).
Outputs Where(const LowerContext& l) {
  if (std::optional<ClassId> wrap = WhereWrap(l)) return One(*wrap);
  const TensorType& x = l.InType("self");
  const TensorType& cond = l.InType("condition");
  const TensorType& out = l.OutType();
  // The mask broadcasts into the result (the type rule); the branches are brought to its shape.
  if (cond.dtype != ir::DType::kBool || x.dtype != out.dtype) throw NotCovered{};
  auto broadcast = [&](const char* name, const TensorType& type) {
    return type.shape == out.shape ? l.T(name) : BroadcastTerm(l, l.T(name), type, out.shape);
  };
  auto scalar = [&](const char* name) -> std::optional<ClassId> {
    try {
      return l.Scalar(name, /*through_broadcast=*/true);
    } catch (const NotCovered&) {
      return std::nullopt;
    }
  };
  std::optional<ClassId> v_self = scalar("self"), v_other = scalar("other");
  if (v_self && v_other) {
    // Two constants (jax's select(c, 1, 0)): fill a tensor shaped like the mask, which
    // distributes over a sharded mask as the mask does: c's values cast, then each constant.
    ClassId c = cond.shape == out.shape ? l.T("condition")
                                        : BroadcastTerm(l, l.T("condition"), cond, out.shape);
    ClassId shaped = l.Op("cast", {c, l.N(static_cast<int64_t>(out.dtype))});
    return One(l.Op("masked_fill",
                    {l.Op("masked_fill", {shaped, c, *v_self}), l.Op("not", {c}), *v_other}));
  }
  if (v_other) {
    return One(
        l.Op("masked_fill", {broadcast("self", x), l.Op("not", {l.T("condition")}), *v_other}));
  }
  const TensorType& y = l.InType("other");
  if (y.dtype != out.dtype || !ir::IsFloatingPoint(out.dtype)) throw NotCovered{};
  if (v_self) {  // where(c, v, y) = y with v where c holds
    return One(l.Op("masked_fill", {broadcast("other", y), l.T("condition"), *v_self}));
  }
  return One(
      l.Op("add",
           {l.Op("masked_fill", {broadcast("self", x), l.Op("not", {l.T("condition")}), l.Fl(0.0)}),
            l.Op("masked_fill", {broadcast("other", y), l.T("condition"), l.Fl(0.0)})}));
}

// nll_loss_backward(g, x [N, C], t [N], None, reduction, ignore, total_weight) for mean and sum,
// as torch._decomp writes it (and DTensor's loss_parallel runs it per class shard):
// -onehot(safe t) * where(t[:, None] != ignore, g / total_weight (mean) or g, 0), where safe t
// reads 0 for ignored targets (nll_loss_forward's safe ids).
Outputs NllLossBackward(const LowerContext& l) {
  if (!l.IsNone("weight")) throw NotCovered{};
  const TensorType& x = l.InType("self");
  const TensorType& t = l.InType("target");
  if (x.shape.size() != 2 || t.shape.size() != 1 || !x.shape[0].is_static() ||
      !x.shape[1].is_static() || l.InType("grad_output").shape.size() != 0) {
    throw NotCovered{};
  }
  if (t.dtype != ir::DType::kInt64 && t.dtype != ir::DType::kInt32) throw NotCovered{};
  const int64_t rows = x.shape[0].value();
  const double ignore = static_cast<double>(l.I("ignore_index"));
  ClassId target = l.T("target");
  ClassId safe =
      l.Op("masked_fill", {target, l.Op("not", {NotEqualMask(l, target, ignore)}), l.Fl(0.0)});
  ClassId g = l.T("grad_output");
  switch (l.I("reduction")) {
    case 1:
      g = l.Op("div", {g, l.T("total_weight")});
      break;
    case 2:
      break;
    default:
      throw NotCovered{};
  }
  ClassId column = l.Op("reshape", {target, l.N(rows), l.N(1)});
  ir::Shape weight_shape{ir::Dim(rows), ir::Dim(1)};
  ClassId weight = l.Op("masked_fill", {BroadcastTerm(l, g, l.InType("grad_output"), weight_shape),
                                        l.Op("not", {NotEqualMask(l, column, ignore)}), l.Fl(0.0)});
  ClassId onehot =
      l.Op("onehot", {safe, l.N(x.shape[1].value()), l.N(static_cast<int64_t>(x.dtype))});
  return One(l.Op("mul", {l.Op("neg", {onehot}), weight}));
}

// _log_softmax_backward_data(g, y, d) = g - exp(y) * sum(g, d, keepdim), y = log_softmax(x, d)
// the forward's output.
Outputs LogSoftmaxBackwardData(const LowerContext& l) {
  ClassId g = l.T("grad_output");
  ClassId total = l.Op("sum_dim", {g, l.N(l.Dim(l.I("dim"), "output")), l.N(1)});
  return One(l.Op("sub", {g, l.Op("mul", {l.Op("exp", {l.T("output")}), total})}));
}

// gather(x, d, ids) along x's last dim d with ids [L..., 1] for x [L..., V]: one element per row,
// out[..., 0] = x[..., ids[..., 0]], i.e. pick(x, ids without its last dim) with the 1 put back.
// Domain: gather raises on ids outside [0, V) (negative ones too), so pick's holds on any run.
Outputs Gather(const LowerContext& l) {
  if (!l.IsNone("sparse_grad") && l.I("sparse_grad") != 0) throw NotCovered{};
  const TensorType& x = l.InType("self");
  const TensorType& ids = l.InType("index");
  if (x.shape.size() < 2 || l.Dim(l.I("dim")) != static_cast<int64_t>(x.shape.size()) - 1) {
    throw NotCovered{};
  }
  if (ids.dtype != ir::DType::kInt64 && ids.dtype != ir::DType::kInt32) throw NotCovered{};
  if (ids.shape.size() != x.shape.size() || ids.shape.back() != ir::Dim(1)) throw NotCovered{};
  std::vector<ClassId> lead{l.T("index")};
  for (size_t i = 0; i + 1 < x.shape.size(); ++i) {
    if (!x.shape[i].is_static() || ids.shape[i] != x.shape[i]) throw NotCovered{};
    lead.push_back(l.N(x.shape[i].value()));
  }
  return One(l.ReshapeTo(l.Op("pick", {l.T("self"), l.Op("reshape", std::move(lead))}), 0));
}

// log_sigmoid_forward: output 0 is (log_sigmoid x); the buffer (the CPU kernel's scratch for the
// backward) stays opaque.
Outputs LogSigmoidForward(const LowerContext& l) {
  return {l.Op("log_sigmoid", {l.T("self")}), std::nullopt};
}

Outputs NativeDropout(const LowerContext& l) {
  double p = l.F("p");
  // No draw (eval mode, or p = 0): the output is the input (the all-true mask stays opaque).
  if (!l.IsNone("train") && (l.I("train") == 0 || p == 0.0)) return {l.T("input"), std::nullopt};
  if (l.IsNone("train") || p >= 1.0 || !l.rng_positional()) throw NotCovered{};
  ClassId x = l.T("input");
  ClassId mask = l.Op("dropout_mask", {x, l.Fl(p)});
  ClassId out = l.Op("mul", {l.Op("scale", {x, l.Fl(1.0 / (1.0 - p))}), mask});
  return {out, mask};
}

// The normalized dims of a normalization: the last `ndims` of `input` (NotCovered otherwise).
struct NormDims {
  int64_t rank, ndims;
};
NormDims NormalizedDims(const LowerContext& l, const char* input) {
  const int64_t ndims = static_cast<int64_t>(l.Ints("normalized_shape").size());
  const int64_t rank = static_cast<int64_t>(l.InType(input).shape.size());
  if (ndims < 1 || ndims > rank) throw NotCovered{};
  return {rank, ndims};
}

// The mean over the normalized dims, kept as dims of size 1.
ClassId MeanNormalized(const LowerContext& l, NormDims n, ClassId x) {
  for (int64_t d = n.rank - 1; d >= n.rank - n.ndims; --d)
    x = l.Op("mean_dim", {x, l.N(d), l.N(1)});
  return x;
}

// The sum over the leading (not normalized) dims, last first so the dims still to sum keep their
// numbers: a weight's gradient.
ClassId SumLeading(const LowerContext& l, NormDims n, ClassId x) {
  for (int64_t d = n.rank - n.ndims - 1; d >= 0; --d) x = l.Op("sum_dim", {x, l.N(d), l.N(0)});
  return x;
}

// apex's saved statistics are flat, one entry per row: `stats` [rows] as [leading..., 1, ...] (the
// kept-dims form the formulas read), or a kept-dims statistic flattened (`to_flat`).
ClassId ApexRows(const LowerContext& l, NormDims n, ClassId stats, const char* input,
                 bool to_flat) {
  const TensorType& x = l.InType(input);
  std::vector<ClassId> children{stats};
  int64_t rows = 1;
  for (int64_t d = 0; d < n.rank - n.ndims; ++d) {
    if (!x.shape[d].is_static()) throw NotCovered{};
    rows *= x.shape[d].value();
    if (!to_flat) children.push_back(l.N(x.shape[d].value()));
  }
  if (to_flat) {
    children.push_back(l.N(rows));
  } else {
    for (int64_t d = 0; d < n.ndims; ++d) children.push_back(l.N(1));
  }
  return l.Op("reshape", std::move(children));
}

// apex keeps its statistics in f32 for f16/bf16 inputs (StatsDType); the language computes in the
// input's dtype, so only f32/f64 inputs have their statistics lowered.
bool StatsInInputDType(const TensorType& t) {
  return t.dtype == ir::DType::kFloat32 || t.dtype == ir::DType::kFloat64;
}

// Layer norm's statistics over the normalized dims, kept dims of size 1: mean = mean(x) and
// rstd = 1 / sqrt(mean((x - mean)^2) + eps) (biased variance, as ATen and apex compute it).
std::pair<ClassId, ClassId> LayerNormStats(const LowerContext& l, NormDims n, ClassId x,
                                           double eps) {
  ClassId mean = MeanNormalized(l, n, x);
  ClassId centered = l.Op("sub", {x, mean});
  ClassId var = MeanNormalized(l, n, l.Op("mul", {centered, centered}));
  return {mean, l.Op("rsqrt", {l.Op("add", {var, l.Fl(eps)})})};
}

// Layer norm's backward from the forward's saved statistics (kept dims): with xhat = (x - mean)
// * rstd and dxhat = g * w (g without a weight), over the normalized dims, grad_input = rstd *
// (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)); grad_weight = sum of g * xhat and
// grad_bias = sum of g over the leading dims. `weight` nullopt: no affine weight.
Outputs LayerNormGrads(const LowerContext& l, NormDims n, ClassId g, ClassId x, ClassId mean,
                       ClassId rstd, std::optional<ClassId> weight, const bool want[3]) {
  ClassId xhat = l.Op("mul", {l.Op("sub", {x, mean}), rstd});
  Outputs out(3);
  if (want[0]) {
    ClassId dxhat = weight ? l.Op("mul", {g, *weight}) : g;
    ClassId centered = l.Op("sub", {dxhat, MeanNormalized(l, n, dxhat)});
    ClassId proj = l.Op("mul", {xhat, MeanNormalized(l, n, l.Op("mul", {dxhat, xhat}))});
    out[0] = l.Op("mul", {rstd, l.Op("sub", {centered, proj})});
  }
  if (want[1]) out[1] = SumLeading(l, n, l.Op("mul", {g, xhat}));
  if (want[2]) out[2] = SumLeading(l, n, g);
  return out;
}

Outputs NativeLayerNorm(const LowerContext& l) {
  if (l.IsNone("weight") || l.IsNone("bias")) throw NotCovered{};
  NormDims n = NormalizedDims(l, "input");
  ClassId out =
      l.Op("layernorm", {l.T("input"), l.T("weight"), l.T("bias"), l.N(n.ndims), l.Fl(l.F("eps"))});
  // The saved statistics, what the backward reads.
  auto [mean, rstd] = LayerNormStats(l, n, l.T("input"), l.F("eps"));
  return {out, mean, rstd};
}

// native_layer_norm_backward(g, x, shape, mean, rstd, w, b, mask): LayerNormGrads. Outputs the
// mask leaves out are not computed (ATen returns undefined tensors there).
Outputs NativeLayerNormBackward(const LowerContext& l) {
  NormDims n = NormalizedDims(l, "input");
  const ir::Value& mask_arg = l.Arg("output_mask");
  if (!mask_arg.is_list() || mask_arg.as_list().size() != 3) throw NotCovered{};
  bool want[3];
  for (size_t i = 0; i < 3; ++i) {
    const ir::Value& v = mask_arg.as_list()[i];
    if (!v.is_bool()) throw NotCovered{};
    want[i] = v.as_bool();
  }
  if ((want[1] && l.IsNone("weight")) || (want[2] && l.IsNone("bias"))) throw NotCovered{};
  std::optional<ClassId> weight;
  if (!l.IsNone("weight")) weight = l.T("weight");
  return LayerNormGrads(l, n, l.T("grad_out"), l.T("input"), l.T("mean"), l.T("rstd"), weight,
                        want);
}

// memory_efficient: apex saves the forward's output instead of its input and rebuilds the
// normalized value from it (dividing by the weight); not lowered.
bool ApexMemoryEfficient(const LowerContext& l) {
  return !l.IsNone("memory_efficient") && l.I("memory_efficient") != 0;
}

// apex::fused_layer_norm_affine_fwd: (layernorm x w b), and mean and invvar (= rstd) flattened.
Outputs ApexLayerNorm(const LowerContext& l) {
  NormDims n = NormalizedDims(l, "input");
  ClassId out =
      l.Op("layernorm", {l.T("input"), l.T("weight"), l.T("bias"), l.N(n.ndims), l.Fl(l.F("eps"))});
  if (!StatsInInputDType(l.InType("input"))) return {out, std::nullopt, std::nullopt};
  auto [mean, rstd] = LayerNormStats(l, n, l.T("input"), l.F("eps"));
  return {out, ApexRows(l, n, mean, "input", true), ApexRows(l, n, rstd, "input", true)};
}

// apex::fused_layer_norm_affine_bwd: native_layer_norm_backward's formulas (LayerNormGrads) with
// the flat statistics read per row.
Outputs ApexLayerNormBackward(const LowerContext& l) {
  if (ApexMemoryEfficient(l)) throw NotCovered{};
  NormDims n = NormalizedDims(l, "input_or_output");
  const bool want[3] = {true, true, true};
  return LayerNormGrads(l, n, l.T("grad_output"), l.T("input_or_output"),
                        ApexRows(l, n, l.T("mean"), "input_or_output", false),
                        ApexRows(l, n, l.T("invvar"), "input_or_output", false), l.T("weight"),
                        want);
}

// apex::fused_rms_norm_affine_fwd over the last dim: (rmsnorm x w eps), and invvar = 1 /
// sqrt(mean(x^2) + eps) flattened.
Outputs ApexRmsNorm(const LowerContext& l) {
  NormDims n = NormalizedDims(l, "input");
  if (n.ndims != 1) throw NotCovered{};  // rmsnorm normalizes the last dim only
  ClassId x = l.T("input");
  ClassId out = l.Op("rmsnorm", {x, l.T("weight"), l.Fl(l.F("eps"))});
  if (!StatsInInputDType(l.InType("input"))) return {out, std::nullopt};
  ClassId ms = MeanNormalized(l, n, l.Op("mul", {x, x}));
  ClassId invvar = l.Op("rsqrt", {l.Op("add", {ms, l.Fl(l.F("eps"))})});
  return {out, ApexRows(l, n, invvar, "input", true)};
}

// apex::fused_rms_norm_affine_bwd: with r = invvar per row, xhat = x * r and dxhat = g * w over
// the normalized dims, grad_input = r * (dxhat - xhat * mean(dxhat * xhat)) (y = w * x * r and
// dr/dx_i = -r^3 x_i / N) and grad_weight = the sum of g * xhat over the leading dims.
Outputs ApexRmsNormBackward(const LowerContext& l) {
  if (ApexMemoryEfficient(l)) throw NotCovered{};
  NormDims n = NormalizedDims(l, "input_or_output");
  ClassId g = l.T("grad_output");
  ClassId r = ApexRows(l, n, l.T("invvar"), "input_or_output", false);
  ClassId xhat = l.Op("mul", {l.T("input_or_output"), r});
  ClassId dxhat = l.Op("mul", {g, l.T("weight")});
  ClassId proj = l.Op("mul", {xhat, MeanNormalized(l, n, l.Op("mul", {dxhat, xhat}))});
  return {l.Op("mul", {r, l.Op("sub", {dxhat, proj})}), SumLeading(l, n, l.Op("mul", {g, xhat}))};
}

// Functionalized vLLM ops: output 0 is the (void) return, then the mutated arguments.
Outputs RmsNorm(const LowerContext& l) {
  return {std::nullopt, l.Op("rmsnorm", {l.T("input"), l.T("weight"), l.Fl(l.F("epsilon"))})};
}

Outputs FusedAddRmsNorm(const LowerContext& l) {
  ClassId sum = l.Op("add", {l.T("input"), l.T("residual")});
  return {std::nullopt, l.Op("rmsnorm", {sum, l.T("weight"), l.Fl(l.F("epsilon"))}), sum};
}

Outputs SiluAndMul(const LowerContext& l) {
  const TensorType& in = l.InType("input");
  int64_t last = static_cast<int64_t>(in.shape.size()) - 1;
  if (last < 0) throw NotCovered{};
  int64_t width = l.Size("input", last);
  if (width % 2 != 0) throw NotCovered{};
  int64_t d = width / 2;
  ClassId gate = l.Slice(l.T("input"), last, 0, d);
  ClassId up = l.Slice(l.T("input"), last, d, width);
  return {std::nullopt, l.Op("mul", {l.Op("silu", {gate}), up})};
}

Outputs RotaryEmbedding(const LowerContext& l) {
  ClassId positions = l.T("positions");
  ClassId cache = l.T("cos_sin_cache");
  ClassId head_size = l.N(l.I("head_size"));
  ClassId neox = l.N(l.I("is_neox"));
  auto rope = [&](const char* arg) -> std::optional<ClassId> {
    if (l.IsNone(arg)) return std::nullopt;
    if (l.InType(arg).shape.size() != 2) throw NotCovered{};  // [tokens, heads * head_size]
    return l.Op("rope", {l.T(arg), positions, cache, head_size, neox});
  };
  return {std::nullopt, rope("query"), rope("key")};
}

// The kernel reads the KV cache of the layer `layer_name` names: which layer is part of what it
// computes, so the term carries it, (attention q k v (num L)) with L the interned name, and
// attention of different layers (another layer's cache) is never congruent.
Outputs UnifiedAttention(const LowerContext& l) {
  if (!l.IsNone("output_scale")) throw NotCovered{};
  const Value& layer = l.Arg("layer_name");
  if (!layer.is_string()) throw NotCovered{};
  int64_t code = OpaqueSignatures::Get().Intern(
      "vllm::unified_attention_with_output layer_name=" + layer.as_string(), ir::TensorType{});
  return {std::nullopt,
          l.Op("attention", {l.T("query"), l.T("key"), l.T("value"), l.N(code)})};
}

// _safe_softmax(x, dim, dtype): x converted to dtype first when one is given.
Outputs SafeSoftmax(const LowerContext& l) {
  ClassId x = l.T("self");
  const ir::DType from = l.InType("self").dtype;
  if (!l.IsNone("dtype") && l.Arg("dtype").as_dtype() != from) {
    const ir::DType to = l.Arg("dtype").as_dtype();
    if (ir::IsComplex(from) || ir::IsComplex(to)) throw NotCovered{};
    x = l.Op("cast", {x, l.N(static_cast<int64_t>(to))});
  }
  return One(l.Op("safe_softmax", {x, l.N(l.Dim(l.I("dim")))}));
}

// scaled_dot_product_attention and the flash / efficient kernels: output 0 is (sdpa q k v causal
// scale), or (sdpa_mask q k v mask scale) with a mask (with is_causal as well torch raises: not
// covered); the scale defaults to 1/sqrt(E). Under dropout the result is a draw: opaque. Fewer kv
// heads than query heads (GQA) only where the operator takes them (enable_gqa; the CPU kernel
// broadcasts kv heads itself). The CPU flash kernel's logsumexp (output 1) is (sdpa_lse ...) /
// (sdpa_lse_mask ...) over the same children where it has the query's dtype (f32, f64; a bf16 or
// f16 kernel returns it in f32, left opaque); the other kernels' logsumexp (padded, or of another
// layout) and their philox seeds stay opaque.
Outputs Sdpa(const LowerContext& l) {
  if (l.F("dropout_p") != 0.0) throw NotCovered{};
  const int64_t hq = l.Size("query", 1), hkv = l.Size("key", 1);
  const std::string& name = l.node().op.name;
  if (hq != hkv) {
    const bool gqa = name == "_scaled_dot_product_flash_attention_for_cpu" ||
                     (name == "scaled_dot_product_attention" && !l.IsNone("enable_gqa") &&
                      l.I("enable_gqa") != 0);
    if (!gqa || hkv == 0 || hq % hkv != 0) throw NotCovered{};
  }
  // The efficient kernel calls its additive mask attn_bias.
  const char* mask = name == "_scaled_dot_product_efficient_attention" ? "attn_bias" : "attn_mask";
  const double scale =
      l.IsNone("scale") ? 1.0 / std::sqrt(static_cast<double>(l.Size("query", 3))) : l.F("scale");
  const bool causal = l.I("is_causal") != 0;
  Outputs out(l.node().outputs.size(), std::nullopt);
  if (out.empty()) throw NotCovered{};
  const bool lse = name == "_scaled_dot_product_flash_attention_for_cpu" && out.size() > 1 &&
                   l.OutType(1).dtype == l.InType("query").dtype;
  if (!l.IsNone(mask)) {
    if (causal) throw NotCovered{};
    std::vector<ClassId> args{l.T("query"), l.T("key"), l.T("value"), l.T(mask), l.Fl(scale)};
    out[0] = l.Op("sdpa_mask", args);
    if (lse) out[1] = l.Op("sdpa_lse_mask", args);
  } else {
    std::vector<ClassId> args{l.T("query"), l.T("key"), l.T("value"), l.N(causal ? 1 : 0),
                              l.Fl(scale)};
    out[0] = l.Op("sdpa", args);
    if (lse) out[1] = l.Op("sdpa_lse", args);
  }
  return out;
}

// Whether `ref` is arange(0, n) (aten::arange.default(n) or arange.start(0, n[, 1])).
bool IsArangeTo(const ir::Graph& graph, ir::TensorRef ref, int64_t n) {
  const ir::Node& producer = graph.node(ref.node);
  if (producer.kind != ir::NodeKind::kOperator || producer.op.ns != "aten" ||
      producer.op.name != "arange") {
    return false;
  }
  const auto& a = producer.args;
  auto int_is = [&](size_t i, int64_t v) {
    return a.size() > i && a[i].is_int() && a[i].as_int() == v;
  };
  if (producer.op.overload == "default") return a.size() == 1 && int_is(0, n);
  if (producer.op.overload == "start") return a.size() == 2 && int_is(0, 0) && int_is(1, n);
  if (producer.op.overload == "start_step") {
    return a.size() == 3 && int_is(0, 0) && int_is(1, n) && int_is(2, 1);
  }
  return false;
}

// The ids an op that wraps negative ids reads (aten::index, index_put: [-n, n) valid, ATen raises
// outside): the ids themselves when IndexDomain proves them non-negative ("ids-nonneg": a mask,
// clamp, arange, topk / argmax / sort indices upstream), else (wrap_index ids n), in [0, n) by
// construction. Either way the lookup op's ids are in [0, n), as its lemmas assume, and a D that
// looks unwrapped ids up is not congruent with a wrapped S.
ClassId IndexIds(const LowerContext& l, ir::TensorRef ids, int64_t n) {
  ClassId c = l.TensorClass(ids);
  IndexDomain domain(l.graph(), l.constants());
  if (domain.IdsNonNegative(ids)) return c;
  return l.Op("wrap_index", {c, l.N(n)});
}

// index(self, [arange(n), cols]) on a 2-d self [n, V]: self[i, cols[i]] for every row i, the
// target-logit gather of a cross entropy, which is (pick self cols), cols wrapped unless proved
// non-negative (IndexIds).
Outputs IndexRowsCols(const LowerContext& l, const std::vector<std::optional<ir::TensorRef>>& ix) {
  if (!ix[0] || !ix[1]) throw NotCovered{};
  const TensorType& self = l.InType("self");
  const TensorType& cols = l.graph().type(*ix[1]);
  if (self.shape.size() != 2 || !self.shape[0].is_static() || cols.shape.size() != 1 ||
      cols.shape[0] != self.shape[0]) {
    throw NotCovered{};
  }
  if (cols.dtype != ir::DType::kInt64 && cols.dtype != ir::DType::kInt32) throw NotCovered{};
  if (!IsArangeTo(l.graph(), *ix[0], self.shape[0].value())) throw NotCovered{};
  if (!self.shape[1].is_static()) throw NotCovered{};
  return One(l.Op("pick", {l.T("self"), IndexIds(l, *ix[1], self.shape[1].value())}));
}

// index(self, [ids]): rows of self picked by integer ids (one index tensor on dim 0), which is
// an embedding lookup; self may be n-d (Mixtral's per-token gather of expert weights [E, n, k],
// its ids topk's indices, so in range); ids wrapped unless proved non-negative (IndexIds).
Outputs Index(const LowerContext& l) {
  auto indices = l.OptionalTensors("indices");
  if (indices.size() == 2) return IndexRowsCols(l, indices);
  if (indices.size() != 1 || !indices[0]) throw NotCovered{};
  ir::DType dtype = l.graph().type(*indices[0]).dtype;
  if (dtype != ir::DType::kInt64 && dtype != ir::DType::kInt32) throw NotCovered{};
  if (l.InType("self").shape.empty()) throw NotCovered{};
  const int64_t rows = l.Size("self", 0);
  return One(l.Op("embedding", {l.T("self"), IndexIds(l, *indices[0], rows)}));
}

// index_put(self, [mask], v) with one bool mask over self's leading dims and a known scalar v:
// masked_fill with the mask extended by trailing 1s to self's rank.
// Whether `ref` is a zeros constant (zeros, zeros_like, new_zeros, or a full of 0).
bool IsZeros(const ir::Graph& graph, ir::TensorRef ref) {
  const ir::Node& producer = graph.node(ref.node);
  if (producer.kind != ir::NodeKind::kOperator || producer.op.ns != "aten") return false;
  const std::string& name = producer.op.name;
  if (name == "zeros" || name == "zeros_like" || name == "new_zeros") return true;
  // zeros converted, copied, viewed or split are zeros
  if (name == "_to_copy" || name == "clone" || name == "view" || name == "_unsafe_view" ||
      name == "reshape" || name == "split" || name == "split_with_sizes" || name == "slice") {
    std::vector<ir::TensorRef> ins = producer.TensorInputs();
    return ins.size() == 1 && IsZeros(graph, ins[0]);
  }
  if (name == "full" || name == "full_like") {  // fill_value is argument 1 of both
    return producer.args.size() > 1 && producer.args[1].is_number() &&
           producer.args[1].as_double() == 0.0;
  }
  return false;
}

// index_put(zeros [N, C], [arange(N), cols], v [N]): v[i] at (i, cols[i]), 0 elsewhere — a
// one-hot of cols scaled by v (each row written once; DTensor's loss_parallel backward).
Outputs IndexPutRowsCols(const LowerContext& l,
                         const std::vector<std::optional<ir::TensorRef>>& ix) {
  if (!ix[0] || !ix[1]) throw NotCovered{};
  const TensorType& self = l.InType("self");
  const TensorType& cols = l.graph().type(*ix[1]);
  const TensorType& values = l.InType("values");
  if (self.shape.size() != 2 || !self.shape[0].is_static() || !self.shape[1].is_static() ||
      cols.shape.size() != 1 || cols.shape[0] != self.shape[0] || values.shape != cols.shape ||
      values.dtype != self.dtype) {
    throw NotCovered{};
  }
  if (cols.dtype != ir::DType::kInt64 && cols.dtype != ir::DType::kInt32) throw NotCovered{};
  const ir::Value& self_arg = l.Arg("self");
  if (!self_arg.is_tensor() || !IsZeros(l.graph(), self_arg.as_tensor())) throw NotCovered{};
  if (!IsArangeTo(l.graph(), *ix[0], self.shape[0].value())) throw NotCovered{};
  const int64_t rows = self.shape[0].value();
  // index_put wraps negative cols like index (IndexIds); onehot's ids must be in [0, C). Exact
  // for finite values only (0 * inf is NaN where index_put writes 0).
  ClassId cols_ids = IndexIds(l, *ix[1], self.shape[1].value());
  ClassId onehot =
      l.Op("onehot", {cols_ids, l.N(self.shape[1].value()), l.N(static_cast<int64_t>(self.dtype))});
  return One(l.Op("mul", {onehot, l.Op("reshape", {l.T("values"), l.N(rows), l.N(1)})}));
}

// index_put(x, [arange(N), cols], index(x, [arange(N), cols]) -/+ u): `x[arange(N), cols] -= u`
// once functionalized (Megatron's hand-written cross-entropy backward subtracts the kept target's
// weight, `grad_2d[arange_1d, masked_target_1d] -= softmax_update`). The rows are distinct, so
// each row's entry at cols is read and written once: x -/+ onehot(cols, C) * u, with u [N] one
// value per row (reshaped to [N, 1]) or a number. At (i, cols[i]) that is the one rounding ATen
// does (1 * u is exact), elsewhere x -/+ 0 * u = x for finite u (the one-hot lowerings' known
// limit). cols wrapped unless proved non-negative (IndexIds), the read and the write alike.
Outputs IndexPutRowsColsUpdate(const LowerContext& l,
                               const std::vector<std::optional<ir::TensorRef>>& ix) {
  if (!ix[0] || !ix[1]) throw NotCovered{};
  const ir::Graph& graph = l.graph();
  const TensorType& self = l.InType("self");
  const TensorType& cols = graph.type(*ix[1]);
  if (self.shape.size() != 2 || !self.shape[0].is_static() || !self.shape[1].is_static() ||
      cols.shape.size() != 1 || cols.shape[0] != self.shape[0] ||
      l.InType("values").shape != cols.shape || l.InType("values").dtype != self.dtype) {
    throw NotCovered{};
  }
  if (cols.dtype != ir::DType::kInt64 && cols.dtype != ir::DType::kInt32) throw NotCovered{};
  const int64_t rows = self.shape[0].value();
  if (!IsArangeTo(graph, *ix[0], rows)) throw NotCovered{};
  const ir::TensorRef self_ref = l.Arg("self").as_tensor();
  auto is_aten = [](const ir::Node& n, const char* name, const char* overload) {
    return n.kind == ir::NodeKind::kOperator && n.op.ns == "aten" && n.op.name == name &&
           n.op.overload == overload;
  };
  // the update: (index(x, [arange, cols])) sub|add u, alpha 1
  const ir::Node& update = graph.node(l.Arg("values").as_tensor().node);
  const bool sub = is_aten(update, "sub", "Tensor");
  if ((!sub && !is_aten(update, "add", "Tensor")) || update.args.size() < 2 ||
      update.args.size() > 3 || !update.kwargs.empty() || !update.args[0].is_tensor() ||
      (update.args.size() == 3 &&
       !(update.args[2].is_number() && update.args[2].as_double() == 1.0))) {
    throw NotCovered{};
  }
  const ir::Node& read = graph.node(update.args[0].as_tensor().node);
  if (!is_aten(read, "index", "Tensor") || read.args.size() != 2 || !read.args[0].is_tensor() ||
      read.args[0].as_tensor() != self_ref || !read.args[1].is_list()) {
    throw NotCovered{};
  }
  const auto& read_ix = read.args[1].as_list();
  if (read_ix.size() != 2 || !read_ix[0].is_tensor() || !read_ix[1].is_tensor() ||
      read_ix[0].as_tensor() != *ix[0] || read_ix[1].as_tensor() != *ix[1]) {
    throw NotCovered{};
  }
  const ir::Value& u = update.args[1];
  ClassId weight;
  if (u.is_number()) {
    weight = l.Fl(u.as_double());
  } else if (u.is_tensor() && graph.type(u.as_tensor()) == TensorType{self.dtype, cols.shape}) {
    weight = l.Op("reshape", {l.TensorClass(u.as_tensor()), l.N(rows), l.N(1)});
  } else {
    throw NotCovered{};
  }
  ClassId onehot = l.Op("onehot", {IndexIds(l, *ix[1], self.shape[1].value()),
                                   l.N(self.shape[1].value()),
                                   l.N(static_cast<int64_t>(self.dtype))});
  return One(l.Op(sub ? "sub" : "add", {l.T("self"), l.Op("mul", {onehot, weight})}));
}

// index_put(self, [ids], v, accumulate=True) with integer ids on dim 0 and v of shape
// ids.shape + self.shape[1:] (no broadcast): v's rows summed into self's rows at ids, i.e.
// embedding_bwd(v, ids, rows), added to self unless self is zeros (the backward of an index
// gather, Mixtral's per-token expert weights); for a 1-d self through a trailing dim of 1.
Outputs IndexPutAccumulate(const LowerContext& l, const ir::TensorRef& ids) {
  const TensorType& self = l.InType("self");
  const TensorType& ids_type = l.graph().type(ids);
  const TensorType& values = l.InType("values");
  if (ids_type.dtype != ir::DType::kInt64 && ids_type.dtype != ir::DType::kInt32) {
    throw NotCovered{};
  }
  if (self.shape.empty() || !self.shape[0].is_static() || values.dtype != self.dtype) {
    throw NotCovered{};
  }
  ir::Shape expected = ids_type.shape;
  expected.insert(expected.end(), self.shape.begin() + 1, self.shape.end());
  if (values.shape != expected) throw NotCovered{};
  // index_put wraps negative ids (a row -1 is the last one); embedding_bwd drops ids outside
  // [0, rows), so the wrap is written unless the ids are proved non-negative (IndexIds)
  const int64_t rows = self.shape[0].value();
  // A 1-d self has scalar rows: v gets a trailing dim of 1 for embedding_bwd (whose rows are
  // [m...]) and the sum loses it again (the backward of a 1-d gather, x[perm], torchtitan's
  // routing scores).
  const bool scalar_rows = self.shape.size() == 1;
  ClassId v = l.T("values");
  if (scalar_rows) {
    std::vector<ClassId> sizes{v};
    for (const ir::Dim& d : ids_type.shape) {
      if (!d.is_static()) throw NotCovered{};
      sizes.push_back(l.N(d.value()));
    }
    sizes.push_back(l.N(1));
    v = l.Op("reshape", std::move(sizes));
  }
  ClassId summed = l.Op("embedding_bwd", {v, IndexIds(l, ids, rows), l.N(rows)});
  if (scalar_rows) summed = l.Op("reshape", {summed, l.N(rows)});
  const ir::Value& self_arg = l.Arg("self");
  if (self_arg.is_tensor() && IsZeros(l.graph(), self_arg.as_tensor())) return One(summed);
  return One(l.Op("add", {l.T("self"), summed}));
}

// Whether `ref` is the indices output of topk along the last of `rank` dims: distinct within
// every row, so a scatter of them writes no position twice. Views of it to its own shape count
// (DTensor's local_map hands its region a view of each local tensor).
bool IsTopkIndicesAlongLast(const ir::Graph& graph, ir::TensorRef ref, int64_t rank) {
  for (;;) {
    const ir::Node& n = graph.node(ref.node);
    if (n.kind != ir::NodeKind::kOperator || n.op.ns != "aten") break;
    const std::string& op = n.op.name;
    std::vector<ir::TensorRef> ins = n.TensorInputs();
    if (ins.size() != 1) break;
    if (op == "view" || op == "_unsafe_view" || op == "reshape" || op == "alias" || op == "clone") {
      if (graph.type(ins[0]).shape != graph.type(ref).shape) return false;
    } else if (op == "split" || op == "split_with_sizes" || op == "slice") {
      // whole rows of the last dim kept (a DTensor sharded backward splits the tokens)
      const size_t at = op == "slice" ? 1 : 2;
      const int64_t dim = n.args.size() > at && n.args[at].is_int() ? n.args[at].as_int() : 0;
      if (n.args.size() > at && !n.args[at].is_int()) return false;
      if (ir::WrapDim(dim, rank) == rank - 1) return false;
    } else {
      break;
    }
    ref = ins[0];
  }
  const ir::Node& producer = graph.node(ref.node);
  if (producer.kind != ir::NodeKind::kOperator || producer.op.ns != "aten" ||
      producer.op.name != "topk" || ref.output != 1) {
    return false;
  }
  const auto& a = producer.args;  // (self, k, dim=-1, largest=True, sorted=True)
  int64_t dim = a.size() > 2 && a[2].is_int() ? a[2].as_int() : -1;
  if (a.size() > 2 && !a[2].is_int()) return false;
  return ir::WrapDim(dim, rank) == rank - 1;
}

// scatter(zeros, -1, ids, ...) with ids the indices of a topk along that last dim (C columns):
// the ids of a row are distinct, so no position is written twice. Returns (onehot ids C dtype)
// [..., k, C], what both scatters below sum over k; NotCovered for any other scatter (repeated
// ids: one write wins). Domain: scatter raises on ids outside [0, C) (topk's are in range
// anyway), as onehot assumes.
ClassId TopkScatterOnehot(const LowerContext& l) {
  const TensorType& self = l.InType("self");
  const TensorType& ids = l.InType("index");
  const int64_t rank = static_cast<int64_t>(self.shape.size());
  if (rank == 0 || l.Dim(l.I("dim")) != rank - 1 || ids.shape.size() != self.shape.size()) {
    throw NotCovered{};
  }
  if (ids.dtype != ir::DType::kInt64 && ids.dtype != ir::DType::kInt32) throw NotCovered{};
  for (int64_t i = 0; i < rank; ++i) {
    if (!self.shape[i].is_static() || !ids.shape[i].is_static()) throw NotCovered{};
    if (i < rank - 1 && self.shape[i] != ids.shape[i]) throw NotCovered{};
  }
  const ir::Value& self_arg = l.Arg("self");
  const ir::Value& ids_arg = l.Arg("index");
  if (!self_arg.is_tensor() || !IsZeros(l.graph(), self_arg.as_tensor())) throw NotCovered{};
  if (!ids_arg.is_tensor() || !IsTopkIndicesAlongLast(l.graph(), ids_arg.as_tensor(), rank)) {
    throw NotCovered{};
  }
  return l.Op("onehot", {l.T("index"), l.N(self.shape[rank - 1].value()),
                         l.N(static_cast<int64_t>(self.dtype))});
}

// The sum over the k one-hots [..., k, C] of a topk scatter, in self's dtype (a sum of integers
// is int64, as torch.sum's: cast back, exactly, since no position is written twice).
ClassId SumOverK(const LowerContext& l, ClassId onehots) {
  const TensorType& self = l.InType("self");
  ClassId sum =
      l.Op("sum_dim", {onehots, l.N(static_cast<int64_t>(self.shape.size()) - 1), l.N(0)});
  if (ir::IsFloatingPoint(self.dtype) || self.dtype == ir::DType::kInt64) return sum;
  return l.Op("cast", {sum, l.N(static_cast<int64_t>(self.dtype))});
}

// scatter(zeros, -1, ids, src), ids a topk's (a top-k MoE router's gradient): the sum of the
// rows' one-hots scaled by src, sum_j onehot(ids[..., j], C) * src[..., j], i.e.
// sum_dim(mul(onehot(ids, C), reshape(src, [..., k, 1])), -2) (linear in src, which a sum over
// ranks of partial gradients needs). Exact for finite src only (0 * inf is NaN where scatter
// writes 0).
Outputs ScatterSrc(const LowerContext& l) {
  const TensorType& src = l.InType("src");
  if (src.shape != l.InType("index").shape || src.dtype != l.InType("self").dtype) {
    throw NotCovered{};
  }
  ClassId onehot = TopkScatterOnehot(l);
  std::vector<ClassId> column{l.T("src")};
  for (const ir::Dim& d : src.shape) column.push_back(l.N(d.value()));
  column.push_back(l.N(1));
  return One(SumOverK(l, l.Op("mul", {onehot, l.Op("reshape", std::move(column))})));
}

// scatter(zeros, -1, ids, v), ids a topk's (megatron-core's MoE routing map: a multi-hot of each
// token's top-k experts): v at the k chosen columns of a row, 0 elsewhere, v * sum_j
// onehot(ids[..., j], C), i.e. mul(sum_dim(onehot(ids, C), -2), v) (no mul for v = 1). A
// fractional v into an integer tensor (which scatter truncates) stays opaque.
Outputs ScatterValue(const LowerContext& l) {
  const TensorType& self = l.InType("self");
  const double v = l.F("value");
  if (!ir::IsFloatingPoint(self.dtype) && v != std::floor(v)) throw NotCovered{};
  ClassId hot = SumOverK(l, TopkScatterOnehot(l));
  return One(v == 1.0 ? hot : l.Op("mul", {hot, l.Fl(v)}));
}

Outputs IndexPut(const LowerContext& l) {
  if (!l.IsNone("accumulate") && l.I("accumulate") != 0) {
    auto ids = l.OptionalTensors("indices");
    // [arange(N), cols] into zeros: the rows are distinct, so each position is written at most
    // once and accumulating into zeros is the plain write (Megatron's cross-entropy backward).
    if (ids.size() == 2) return IndexPutRowsCols(l, ids);
    if (ids.size() != 1 || !ids[0]) throw NotCovered{};
    return IndexPutAccumulate(l, *ids[0]);
  }
  auto indices = l.OptionalTensors("indices");
  if (indices.size() == 2) {
    const ir::Value& self_arg = l.Arg("self");
    if (self_arg.is_tensor() && IsZeros(l.graph(), self_arg.as_tensor())) {
      return IndexPutRowsCols(l, indices);
    }
    return IndexPutRowsColsUpdate(l, indices);
  }
  if (indices.size() != 1 || !indices[0]) throw NotCovered{};
  const TensorType& mask_type = l.graph().type(*indices[0]);
  const TensorType& self_type = l.InType("self");
  if (mask_type.dtype != ir::DType::kBool || mask_type.shape.size() > self_type.shape.size()) {
    throw NotCovered{};
  }
  std::vector<ClassId> reshape{l.TensorClass(*indices[0])};
  for (size_t i = 0; i < self_type.shape.size(); ++i) {
    if (i < mask_type.shape.size()) {
      if (mask_type.shape[i] != self_type.shape[i] || !mask_type.shape[i].is_static()) {
        throw NotCovered{};
      }
      reshape.push_back(l.N(mask_type.shape[i].value()));
    } else {
      reshape.push_back(l.N(1));
    }
  }
  ClassId mask = reshape[0];
  if (mask_type.shape.size() < self_type.shape.size()) mask = l.Op("reshape", std::move(reshape));
  return One(l.Op("masked_fill", {l.T("self"), mask, l.Scalar("values")}));
}

Outputs BitwiseOr(const LowerContext& l) {
  if (l.InType("self").dtype != ir::DType::kBool || l.InType("other").dtype != ir::DType::kBool) {
    throw NotCovered{};
  }
  return One(l.Op("or", {l.T("self"), l.T("other")}));
}

Outputs BitwiseAnd(const LowerContext& l) {
  if (l.InType("self").dtype != ir::DType::kBool || l.InType("other").dtype != ir::DType::kBool) {
    throw NotCovered{};
  }
  return One(l.Op("and", {l.T("self"), l.T("other")}));
}

// logical_and / logical_or of any dtypes (nonzero is true): the language's and / or, whose
// evaluation is ATen's logical_and / logical_or and whose type is bool.
Outputs LogicalAnd(const LowerContext& l) { return One(l.Op("and", {l.T("self"), l.T("other")})); }
Outputs LogicalOr(const LowerContext& l) { return One(l.Op("or", {l.T("self"), l.T("other")})); }

Outputs BitwiseNot(const LowerContext& l) {
  if (l.InType("self").dtype != ir::DType::kBool) throw NotCovered{};
  return One(l.Op("not", {l.T("self")}));
}

// slice_scatter(self, src, dim, start, end): src in place of self[start:end] along dim, i.e.
// cat(dim, self[:start], src, self[end:]) (the whole of src when it covers the dimension).
Outputs SliceScatter(const LowerContext& l) {
  if (l.I("step") != 1) throw NotCovered{};
  int64_t dim = l.Dim(l.I("dim"));
  int64_t size = l.Size("self", dim);
  int64_t start = l.IsNone("start") ? 0 : l.I("start");
  int64_t end = l.IsNone("end") ? size : l.I("end");
  if (start < 0) start += size;
  if (end < 0) end += size;
  start = std::clamp<int64_t>(start, 0, size);
  end = std::clamp<int64_t>(end, start, size);
  if (l.Size("src", dim) != end - start) throw NotCovered{};
  if (start == 0 && end == size) {
    if (l.InType("src") != l.InType("self")) throw NotCovered{};
    return One(l.T("src"));
  }
  std::vector<ClassId> pieces{l.N(dim)};
  if (start > 0) pieces.push_back(l.Slice(l.T("self"), dim, 0, start));
  pieces.push_back(l.T("src"));
  if (end < size) pieces.push_back(l.Slice(l.T("self"), dim, end, size));
  return One(l.Op("concat", std::move(pieces)));
}

// Constant tensors (new_zeros, zeros_like, ones_like, full, ...): (full v dtype sizes...) of the
// annotated output type. Their value reads no tensor, so S's and each rank's are clean alike.
Outputs FullOf(const LowerContext& l, double value) {
  const TensorType& out = l.OutType();
  std::vector<ClassId> children{l.Fl(value), l.N(static_cast<int64_t>(out.dtype))};
  for (const ir::Dim& d : out.shape) {
    if (!d.is_static()) throw NotCovered{};
    children.push_back(l.N(d.value()));
  }
  return One(l.Op("full", std::move(children)));
}
// embedding_dense_backward(g, ids, rows, padding_idx, scale_grad_by_freq) with no padding index
// and no frequency scaling: (embedding_bwd g ids rows). Domain: every id; ATen (CPU) adds nothing
// for ids outside [0, rows), and embedding_bwd means the same (its lemmas hold for such ids).
Outputs EmbeddingDenseBackward(const LowerContext& l) {
  if (l.I("padding_idx") != -1 || l.I("scale_grad_by_freq") != 0) throw NotCovered{};
  return One(l.Op("embedding_bwd", {l.T("grad_output"), l.T("indices"), l.N(l.I("num_weights"))}));
}

// The 1-d ids [M] that `index` [M, H] repeats along its columns: expand(unsqueeze(ids, 1), [M or
// -1, H]), or expand(ids.view(-1, 1), ...) (an MoE unpermute's row index broadcast over the hidden
// dim); nullopt otherwise.
std::optional<ir::TensorRef> RowIdsExpandedOverColumns(const ir::Graph& graph,
                                                       ir::TensorRef index) {
  auto producer = [&](ir::TensorRef ref, const char* name) -> const ir::Node* {
    const ir::Node& n = graph.node(ref.node);
    if (n.kind != ir::NodeKind::kOperator || n.op.ns != "aten" || n.op.name != name) return nullptr;
    std::vector<ir::TensorRef> ins = n.TensorInputs();
    return ins.size() == 1 ? &n : nullptr;
  };
  const ir::Node* expand = producer(index, "expand");
  if (expand == nullptr) return std::nullopt;
  ir::TensorRef column = expand->TensorInputs()[0];
  const ir::Shape& c = graph.type(column).shape;
  if (c.size() != 2 || c[1] != ir::Dim(1)) return std::nullopt;
  // the column [M, 1]: unsqueeze(ids, 1), or a view / reshape of the 1-d ids (ids.view(-1, 1),
  // torchtitan's combine), which is the same column whatever the sizes were written as
  const ir::Node* column_op = producer(column, "unsqueeze");
  for (const char* view : {"view", "reshape", "_unsafe_view"}) {
    if (column_op == nullptr) column_op = producer(column, view);
  }
  if (column_op == nullptr) return std::nullopt;
  ir::TensorRef ids = column_op->TensorInputs()[0];
  if (graph.type(ids).shape.size() != 1 || graph.type(ids).shape[0] != c[0]) return std::nullopt;
  return ids;
}

// scatter_add(zeros [N, H], 0, expand(unsqueeze(ids, 1), [M, H]), src [M, H]): row k sums the
// rows of src whose id is k, (embedding_bwd src ids N) (an MoE unpermute adding each token's
// expert outputs back; what an embedding's weight gradient is). Domain: scatter_add raises on ids
// outside [0, N), as embedding_bwd's lemmas assume. Other indices stay opaque. `self` names the
// argument scattered into (aten: self; torchtitan's custom op: out), `dim` the scatter dim.
Outputs ScatterRowsIntoZeros(const LowerContext& l, const char* self_name, int64_t dim) {
  const TensorType& self = l.InType(self_name);
  const TensorType& src = l.InType("src");
  if (self.shape.size() != 2 || dim != 0 || src.dtype != self.dtype || src.shape.size() != 2 ||
      src.shape[1] != self.shape[1] || !self.shape[0].is_static()) {
    throw NotCovered{};
  }
  const ir::Value& self_arg = l.Arg(self_name);
  const ir::Value& index = l.Arg("index");
  if (!self_arg.is_tensor() || !IsZeros(l.graph(), self_arg.as_tensor()) || !index.is_tensor() ||
      l.InType("index").shape != src.shape) {
    throw NotCovered{};
  }
  std::optional<ir::TensorRef> ids = RowIdsExpandedOverColumns(l.graph(), index.as_tensor());
  if (!ids) throw NotCovered{};
  const ir::DType id_type = l.graph().type(*ids).dtype;
  if (id_type != ir::DType::kInt64 && id_type != ir::DType::kInt32) throw NotCovered{};
  return One(l.Op("embedding_bwd", {l.T("src"), l.TensorClass(*ids), l.N(self.shape[0].value())}));
}

// scatter_add along the last dim (of a tensor of 2 or more dims) into zeros with a topk's ids: as
// scatter.src (ScatterSrc; the ids of a row are distinct, and a sum into zeros either way): the
// backward of gathering a router's top-k scores (torchtitan's MoE). Along dim 0: rows.
Outputs ScatterAdd(const LowerContext& l) {
  const int64_t dim = l.Dim(l.I("dim"));
  if (dim > 0 && dim == static_cast<int64_t>(l.InType("self").shape.size()) - 1) {
    return ScatterSrc(l);
  }
  return ScatterRowsIntoZeros(l, "self", dim);
}

// torchtitan::deterministic_scatter_add(out, index, src) = out.scatter_add(0, index, src)
// (torchtitan/ops/scatter_add.py, its MoE combine): as ScatterAdd along dim 0.
Outputs TorchtitanScatterAdd(const LowerContext& l) { return ScatterRowsIntoZeros(l, "out", 0); }

Outputs Zeros(const LowerContext& l) { return FullOf(l, 0.0); }
Outputs Ones(const LowerContext& l) { return FullOf(l, 1.0); }
Outputs Full(const LowerContext& l) { return FullOf(l, l.F("fill_value")); }

constexpr char kAdd[] = "add";
constexpr char kSub[] = "sub";
constexpr char kMul[] = "mul";

// A mirrored operator (ir::OpLowering::kMirror): the language op of its name over its tensor
// arguments, when every other argument is at its default (what the language op means).
Outputs Mirror(const LowerContext& l, const ir::OpInfo& info) {
  std::vector<ClassId> children;
  for (const ir::ArgSchema& arg : info.schema.args) {
    if (!arg.default_value) {
      children.push_back(l.T(arg.name.c_str()));
    } else if (!(l.Arg(arg.name.c_str()) == *arg.default_value)) {
      throw NotCovered{};
    }
  }
  return One(l.Op(info.traits.lowering.name.c_str(), std::move(children)));
}

// The C++ lowerings, by the name the registry entries give them (ir::OpLowering::kNamed): what
// a rule line cannot say (argument conditions, several outputs, constants).
const std::map<std::string, LowerFn>& Table() {
  static const std::map<std::string, LowerFn> table = {
      {"add", Binary<kAdd>},
      {"addmm", Addmm},
      {"amax", Amax},
      {"apex_layer_norm", ApexLayerNorm},
      {"apex_layer_norm_backward", ApexLayerNormBackward},
      {"apex_rms_norm", ApexRmsNorm},
      {"apex_rms_norm_backward", ApexRmsNormBackward},
      {"baddbmm", Baddbmm},
      {"bitwise_and", BitwiseAnd},
      {"bitwise_not", BitwiseNot},
      {"bitwise_or", BitwiseOr},
      {"bmm", Bmm},
      {"grouped_mm", GroupedMm},
      {"cat", Cat},
      {"clamp", Clamp},
      {"conj_physical", ConjPhysical},
      {"copy", Copy},
      {"div", Div},
      {"div_mode", DivMode},
      {"floor_divide", FloorDivide},
      {"embedding", Embedding},
      {"embedding_dense_backward", EmbeddingDenseBackward},
      {"expand", Expand},
      {"full", Full},
      {"fused_add_rms_norm", FusedAddRmsNorm},
      {"gather", Gather},
      {"ge", Ge},
      {"gelu_backward", GeluBackward},
      {"gt", Gt},
      {"identity", Identity},
      {"index", Index},
      {"index_copy", IndexCopy},
      {"index_put", IndexPut},
      {"index_select", IndexSelect},
      {"log_sigmoid_forward", LogSigmoidForward},
      {"log_softmax", LogSoftmax},
      {"log_softmax_backward_data", LogSoftmaxBackwardData},
      {"logical_and", LogicalAnd},
      {"logical_or", LogicalOr},
      {"eq", Eq},
      {"le", Le},
      {"lt", Lt},
      {"masked_fill", MaskedFill},
      {"max_dim", MaxDim},
      {"topk", Topk},
      {"mean_dims", MeanDims},
      {"mm", Mm},
      {"mul", Binary<kMul>},
      {"native_dropout", NativeDropout},
      {"native_layer_norm", NativeLayerNorm},
      {"native_layer_norm_backward", NativeLayerNormBackward},
      {"ne_scalar", NeScalar},
      {"nll_loss_backward", NllLossBackward},
      {"nll_loss_forward", NllLossForward},
      {"ones", Ones},
      {"permute", Permute},
      {"pow_scalar", PowScalar},
      {"remainder", Remainder},
      {"reshape", Reshape},
      {"rms_norm", RmsNorm},
      {"rotary_embedding", RotaryEmbedding},
      {"rsub", Rsub},
      {"safe_softmax", SafeSoftmax},
      {"scatter_add", ScatterAdd},
      {"torchtitan_scatter_add", TorchtitanScatterAdd},
      {"scatter_src", ScatterSrc},
      {"scatter_value", ScatterValue},
      {"sdpa", Sdpa},
      {"silu_and_mul", SiluAndMul},
      {"silu_backward", SiluBackward},
      {"slice", Slice},
      {"slice_scatter", SliceScatter},
      {"softmax", Softmax},
      {"sort", Sort},
      {"softmax_backward_data", SoftmaxBackwardData},
      {"split_equal", SplitEqual},
      {"split_with_sizes", SplitWithSizes},
      {"sub", Binary<kSub>},
      {"sum_all", SumAll},
      {"mean_all", MeanAll},
      {"sum_dims", SumDims},
      {"t", T2},
      {"tanh_backward", TanhBackward},
      {"to_copy", ToCopy},
      {"transpose", Transpose},
      {"unified_attention", UnifiedAttention},
      {"unsqueeze", Unsqueeze},
      {"where", Where},
      {"zeros", Zeros},
  };
  return table;
}

}  // namespace

std::vector<std::string> LoweredOperatorNames() {
  std::vector<std::string> names;
  for (const ir::OpName& op : ir::OpRegistry::Default().Names()) {
    const ir::OpInfo* info = ir::OpRegistry::Default().Find(op);
    if (info->traits.lowering.kind != ir::OpLowering::Kind::kNone) names.push_back(op.ToString());
  }
  return names;
}

std::vector<std::string> NamedLoweringNames() {
  std::vector<std::string> names;
  for (const auto& [name, fn] : Table()) names.push_back(name);
  return names;
}

bool HasNamedLowering(const std::string& name) { return Table().count(name) != 0; }

bool IsCollective(const ir::Node& node) {
  if (node.kind != ir::NodeKind::kOperator) return false;
  const ir::OpInfo* info = ir::OpRegistry::Default().Find(node.op);
  return info != nullptr && info->traits.collective != ir::CollectiveKind::kNone;
}

LoweredNode LowerNode(EGraph& egraph, const TensorAnalysis& analysis, const ir::Graph& graph,
                      ir::NodeId node_id, const TensorClassFn& tensor_class,
                      const std::string& salt, const ConstantValues* constants,
                      bool rng_positional) {
  const ir::Node& node = graph.node(node_id);
  const TensorLanguage& lang = TensorLanguage::Get();
  LoweredNode result;
  result.outputs.assign(node.outputs.size(), std::nullopt);
  result.opaque.assign(node.outputs.size(), false);

  const ir::OpInfo* info =
      node.kind == ir::NodeKind::kOperator ? ir::OpRegistry::Default().Find(node.op) : nullptr;
  std::string key = info ? info->schema.name.ToString() : node.op.ToString();
  std::optional<Outputs> lowered;
  // The inputs' classes are asked for only when an output falls back to an opaque term (which
  // reads every input), so the callback sees exactly the inputs the lowering reads.
  std::optional<std::vector<ClassId>> tensor_inputs;
  auto all_inputs = [&]() -> const std::vector<ClassId>& {
    if (!tensor_inputs) {
      tensor_inputs.emplace();
      for (ir::TensorRef ref : node.TensorInputs()) tensor_inputs->push_back(tensor_class(ref));
    }
    return *tensor_inputs;
  };

  // A random operator's entry lowers a draw only under a stated RNG model (rng_positional);
  // without one the node stays an opaque term, unique to it (below), so no two draws are ever
  // equated.
  const ir::OpLowering* meaning = info ? &info->traits.lowering : nullptr;
  if (meaning != nullptr && meaning->kind != ir::OpLowering::Kind::kNone) {
    auto it = Table().find(meaning->name);
    const bool mirror = meaning->kind == ir::OpLowering::Kind::kMirror;
    if (mirror || it != Table().end()) {
      try {
        BoundArgs args(info->schema, node);
        LowerContext context(egraph, graph, node, args, tensor_class, constants, rng_positional);
        Outputs outs = mirror ? Mirror(context, *info) : it->second(context);
        // Functionalized entries already list the void return first.
        if (outs.size() == node.outputs.size()) lowered = std::move(outs);
      } catch (const NotCovered&) {
      } catch (const ir::ShapeError&) {
      }
    }
  }

  // Opaque signature: the operator and its non-tensor arguments (tensor positions marked).
  std::string signature = key;
  if (node.functionalized) signature += "[functionalized]";
  signature += "(";
  for (const Value& v : node.args) signature += ValueText(v) + ",";
  for (const ir::NamedArg& kw : node.kwargs) signature += kw.name + "=" + ValueText(kw.value) + ",";
  signature += ")";
  // An operator unknown to the registry (an opaque node loaded from its annotation) is taken to
  // be a deterministic function of its arguments: equal by congruence only.
  bool unique = info != nullptr && (info->traits.nondeterministic_init || info->traits.random);
  if (unique || node.kind != ir::NodeKind::kOperator) signature += " @" + salt;

  for (size_t i = 0; i < node.outputs.size(); ++i) {
    const auto& type = node.outputs[i].type;
    if (!type) continue;
    if (lowered && (*lowered)[i]) {
      ClassId c = *(*lowered)[i];
      const TensorFacts& facts = analysis[c];
      if (facts.type && *facts.type == *type && !facts.conflict) {
        result.outputs[i] = c;
        continue;
      }
    }
    int64_t code = OpaqueSignatures::Get().Intern(signature + "#" + std::to_string(i), *type);
    std::vector<ClassId> children{egraph.Add(lang.Num(code))};
    // Buffers with unspecified contents (empty_like) read only their input's shape, which the
    // signature already fixes: keep them free of their input so nothing has to relate it.
    if (!(info && info->traits.nondeterministic_init)) {
      const std::vector<ClassId>& inputs = all_inputs();
      children.insert(children.end(), inputs.begin(), inputs.end());
    }
    result.outputs[i] = egraph.Add(ENode{lang.opaque, 0, std::move(children)});
    result.opaque[i] = true;
  }
  return result;
}

std::vector<ir::TensorRef> ReadInputs(const ir::Graph& graph, ir::NodeId node_id,
                                      const ConstantValues* constants) {
  LeafTable leaves;
  EGraph scratch(TensorLanguage::Get().ops());
  const TensorAnalysis& analysis = scratch.AddAnalysis(std::make_unique<TensorAnalysis>(leaves));
  std::set<ir::TensorRef> read;
  TensorClassFn record = [&](ir::TensorRef ref) {
    read.insert(ref);
    TensorLeaf leaf{TensorLeaf::Side::kDist, 0, ref, graph.type(ref), graph.ValueName(ref)};
    return scratch.Add(TensorLanguage::Get().Tensor(leaves.Intern(leaf)));
  };
  LowerNode(scratch, analysis, graph, node_id, record, "read-inputs", constants);
  return std::vector<ir::TensorRef>(read.begin(), read.end());
}

bool LowersToRelationOps(const ir::Graph& graph, ir::NodeId node_id,
                         const ConstantValues* constants) {
  const TensorLanguage& lang = TensorLanguage::Get();
  LeafTable leaves;
  EGraph scratch(lang.ops());
  const TensorAnalysis& analysis = scratch.AddAnalysis(std::make_unique<TensorAnalysis>(leaves));
  std::set<ClassId> inputs;
  TensorClassFn leaf_of = [&](ir::TensorRef ref) {
    TensorLeaf leaf{TensorLeaf::Side::kDist, 0, ref, graph.type(ref), graph.ValueName(ref)};
    ClassId c = scratch.Add(lang.Tensor(leaves.Intern(leaf)));
    inputs.insert(c);
    return c;
  };
  LoweredNode lowered = LowerNode(scratch, analysis, graph, node_id, leaf_of, "trial", constants);
  return IsRelationOnly(scratch, lowered, inputs);
}

bool IsRelationOnly(const EGraph& egraph, const LoweredNode& lowered,
                    const std::set<ClassId>& input_classes) {
  const TensorLanguage& lang = TensorLanguage::Get();
  for (size_t i = 0; i < lowered.outputs.size(); ++i) {
    if (!lowered.outputs[i]) continue;
    if (lowered.opaque[i]) return false;
    if (input_classes.count(egraph.Find(*lowered.outputs[i]))) continue;  // an identity
    for (const ENode& n : egraph.Nodes(*lowered.outputs[i])) {
      if (!lang.is_relation(n.op)) return false;
    }
  }
  return true;
}

namespace {

// The split sizes of an all_to_all_single argument when they are literals; nullopt for None.
std::optional<std::vector<int64_t>> SplitSizes(const ir::Node& node, const char* name) {
  const ir::OpInfo* info = ir::OpRegistry::Default().Find(node.op);
  ir::BoundArgs args(info->schema, node);
  const ir::Value& v = args[name];
  if (!v.is_int_list()) return std::nullopt;
  return v.as_int_list();
}

// all_to_all_single with uneven literal split sizes: member g cuts its input into row chunks of
// its own input_split_sizes, chunk j to member j, so member p receives, in member order, rows
// [sum(in_g[:p]), sum(in_g[:p+1])) of every member g's input. Every member's input sizes must be
// literals and agree with p's output sizes and output rows, else nullopt.
std::optional<ClassId> AllToAllUneven(EGraph& egraph, const std::vector<ClassId>& member_inputs,
                                      const std::vector<const ir::Node*>& member_nodes,
                                      size_t position, const ir::TensorType& out_type) {
  const TensorLanguage& lang = TensorLanguage::Get();
  const size_t n = member_inputs.size();
  if (member_nodes.size() != n || out_type.shape.empty() || !out_type.shape[0].is_static()) {
    return std::nullopt;
  }
  std::optional<std::vector<int64_t>> received =
      SplitSizes(*member_nodes[position], "output_split_sizes");
  if (received && received->size() != n) return std::nullopt;
  std::vector<ClassId> children{egraph.Add(lang.Num(0))};
  int64_t rows = 0;
  for (size_t g = 0; g < n; ++g) {
    std::optional<std::vector<int64_t>> sent = SplitSizes(*member_nodes[g], "input_split_sizes");
    if (!sent || sent->size() != n) return std::nullopt;
    int64_t start = 0;
    for (size_t j = 0; j < position; ++j) start += (*sent)[j];
    const int64_t size = (*sent)[position];
    if (size < 0 || (received && (*received)[g] != size)) return std::nullopt;
    rows += size;
    if (size == 0) continue;
    children.push_back(
        egraph.Add(ENode{lang.slice,
                         0,
                         {member_inputs[g], egraph.Add(lang.Num(0)), egraph.Add(lang.Num(start)),
                          egraph.Add(lang.Num(start + size))}}));
  }
  if (rows != out_type.shape[0].value() || children.size() < 2) return std::nullopt;
  if (children.size() == 2) return children[1];
  return egraph.Add(ENode{lang.concat, 0, std::move(children)});
}

}  // namespace

std::optional<ClassId> LowerCollective(EGraph& egraph, const ir::Node& node,
                                       const std::vector<ClassId>& member_inputs, size_t position,
                                       const ir::TensorType& out_type,
                                       const std::vector<const ir::Node*>& member_nodes) {
  const TensorLanguage& lang = TensorLanguage::Get();
  const ir::OpInfo* info =
      node.kind == ir::NodeKind::kOperator ? ir::OpRegistry::Default().Find(node.op) : nullptr;
  if (!info || member_inputs.empty()) return std::nullopt;
  ir::BoundArgs args(info->schema, node);
  std::string reduce = "sum";
  if (!info->traits.reduce_op_arg.empty()) {
    const ir::Value& v = args[info->traits.reduce_op_arg];
    if (v.is_string()) reduce = v.as_string();
  }
  std::transform(reduce.begin(), reduce.end(), reduce.begin(), ::tolower);
  auto reduced = [&]() -> std::optional<ClassId> {
    if (member_inputs.size() == 1) return member_inputs[0];
    OpId op = reduce == "sum" || reduce == "avg" ? lang.sumr
              : reduce == "max"                  ? lang.maxr
              : reduce == "min"                  ? lang.minr
                                                 : lang.opaque;
    if (op == lang.opaque) return std::nullopt;
    ClassId out = egraph.Add(ENode{op, 0, member_inputs});
    if (reduce == "avg") {
      out =
          egraph.Add(ENode{lang.scale, 0, {out, egraph.Add(lang.Flt(1.0 / member_inputs.size()))}});
    }
    return out;
  };
  switch (info->traits.collective) {
    case ir::CollectiveKind::kAllReduce:
      return reduced();
    case ir::CollectiveKind::kAllGather: {
      if (member_inputs.size() == 1) return member_inputs[0];
      std::vector<ClassId> children{egraph.Add(lang.Num(0))};
      children.insert(children.end(), member_inputs.begin(), member_inputs.end());
      return egraph.Add(ENode{lang.concat, 0, std::move(children)});
    }
    case ir::CollectiveKind::kReduceScatter: {
      auto sum = reduced();
      if (!sum || member_inputs.size() == 1) return sum;
      if (out_type.shape.empty() || !out_type.shape[0].is_static()) return std::nullopt;
      int64_t rows = out_type.shape[0].value();
      int64_t start = rows * static_cast<int64_t>(position);
      return egraph.Add(ENode{lang.slice,
                              0,
                              {*sum, egraph.Add(lang.Num(0)), egraph.Add(lang.Num(start)),
                               egraph.Add(lang.Num(start + rows))}});
    }
    case ir::CollectiveKind::kBroadcast: {
      int64_t src = args["src"].is_int() ? args["src"].as_int() : 0;
      if (src < 0 || src >= static_cast<int64_t>(member_inputs.size())) return std::nullopt;
      return member_inputs[src];
    }
    case ir::CollectiveKind::kAllToAll: {
      // Equal splits: member g's input is cut into n row chunks, chunk j goes to member j, so
      // this member receives concat(0, chunk_position(input_g) for every g). Uneven literal
      // splits need every member's input sizes (member_nodes): AllToAllUneven.
      int64_t n = static_cast<int64_t>(member_inputs.size());
      if (n == 1) return member_inputs[0];
      if (out_type.shape.empty() || !out_type.shape[0].is_static()) return std::nullopt;
      int64_t rows = out_type.shape[0].value();
      auto uneven = [&]() {
        return AllToAllUneven(egraph, member_inputs, member_nodes, position, out_type);
      };
      if (rows % n != 0) return uneven();
      int64_t chunk = rows / n;
      for (const char* splits : {"output_split_sizes", "input_split_sizes"}) {
        const ir::Value& v = args[splits];
        if (v.is_none()) continue;
        if (!v.is_int_list()) return std::nullopt;
        for (int64_t size : v.as_int_list()) {
          if (size != chunk) return uneven();
        }
      }
      int64_t start = chunk * static_cast<int64_t>(position);
      std::vector<ClassId> children{egraph.Add(lang.Num(0))};
      for (ClassId input : member_inputs) {
        children.push_back(
            egraph.Add(ENode{lang.slice,
                             0,
                             {input, egraph.Add(lang.Num(0)), egraph.Add(lang.Num(start)),
                              egraph.Add(lang.Num(start + chunk))}}));
      }
      return egraph.Add(ENode{lang.concat, 0, std::move(children)});
    }
    default:
      return std::nullopt;
  }
}

}  // namespace gg::symbolic
