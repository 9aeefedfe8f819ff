#include "symbolic/index_domain.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "ir/op_registry.h"

namespace gg::symbolic {
namespace {

using ir::TensorRef;
using ir::Value;

constexpr int kMaxDepth = 64;  // producer chains longer than this are not followed (Any)

bool IsInteger(ir::DType t) {
  return t == ir::DType::kInt64 || t == ir::DType::kInt32 || t == ir::DType::kInt16 ||
         t == ir::DType::kInt8 || t == ir::DType::kUInt8;
}

// a op b on bounds, nullopt when either side is unbounded or the result leaves int64.
std::optional<int64_t> Checked(std::optional<int64_t> a, std::optional<int64_t> b, char op) {
  if (!a || !b) return std::nullopt;
  __int128 r = op == '+' ? __int128(*a) + *b : op == '-' ? __int128(*a) - *b : __int128(*a) * *b;
  if (r > std::numeric_limits<int64_t>::max() || r < std::numeric_limits<int64_t>::min()) {
    return std::nullopt;
  }
  return static_cast<int64_t>(r);
}

IntRange Add(const IntRange& a, const IntRange& b) {
  return {Checked(a.lo, b.lo, '+'), Checked(a.hi, b.hi, '+')};
}
IntRange Neg(const IntRange& a) {
  return {Checked(0, a.hi, '-'), Checked(0, a.lo, '-')};
}
IntRange Mul(const IntRange& a, const IntRange& b) {
  if (!a.lo || !a.hi || !b.lo || !b.hi) {
    // a non-negative range times a non-negative one stays non-negative
    if (a.NonNegative() && b.NonNegative()) return {Checked(a.lo, b.lo, '*'), std::nullopt};
    return IntRange::Any();
  }
  std::vector<std::optional<int64_t>> c{Checked(a.lo, b.lo, '*'), Checked(a.lo, b.hi, '*'),
                                        Checked(a.hi, b.lo, '*'), Checked(a.hi, b.hi, '*')};
  for (const auto& v : c) {
    if (!v) return IntRange::Any();
  }
  auto [lo, hi] = std::minmax({*c[0], *c[1], *c[2], *c[3]});
  return {lo, hi};
}

// A number as an integer bound (nullopt when not integral).
std::optional<int64_t> Integral(double v) {
  if (!std::isfinite(v) || v != std::floor(v) || std::fabs(v) > 9.0e18) return std::nullopt;
  return static_cast<int64_t>(v);
}

bool Is(const ir::Node& n, const char* name) {
  return n.kind == ir::NodeKind::kOperator && n.op.ns == "aten" && n.op.name == name;
}

}  // namespace

IntRange Union(const IntRange& a, const IntRange& b) {
  IntRange r;
  if (a.lo && b.lo) r.lo = std::min(*a.lo, *b.lo);
  if (a.hi && b.hi) r.hi = std::max(*a.hi, *b.hi);
  return r;
}

IntRange Intersect(const IntRange& a, const IntRange& b) {
  IntRange r = a;
  if (b.lo) r.lo = r.lo ? std::max(*r.lo, *b.lo) : *b.lo;
  if (b.hi) r.hi = r.hi ? std::min(*r.hi, *b.hi) : *b.hi;
  return r;
}

IndexDomain::IndexDomain(const ir::Graph& graph, const ConstantValues* constants,
                         bool assume_inputs_nonneg)
    : graph_(graph), constants_(constants), assume_inputs_nonneg_(assume_inputs_nonneg) {}

IntRange IndexDomain::Range(TensorRef ref) { return RangeUnder(ref, {}, 0); }

// A scalar argument's value: a number, or a 0-d tensor whose range is one value.
std::optional<double> IndexDomain::ScalarOf(const Value& v, int depth) {
  if (v.is_bool()) return v.as_bool() ? 1.0 : 0.0;
  if (v.is_number()) return v.as_double();
  if (v.is_tensor()) {
    const ir::TensorType& t = graph_.type(v.as_tensor());
    if (!t.shape.empty()) return std::nullopt;
    IntRange r = RangeUnder(v.as_tensor(), {}, depth + 1);
    if (r.lo && r.hi && *r.lo == *r.hi) return static_cast<double>(*r.lo);
  }
  return std::nullopt;
}

IntRange IndexDomain::RangeUnder(TensorRef ref, const Facts& facts, int depth) {
  if (depth > kMaxDepth) return IntRange::Any();
  const ir::Node& node = graph_.node(ref.node);
  if (ref.output < 0 || static_cast<size_t>(ref.output) >= node.outputs.size() ||
      !node.outputs[ref.output].type || !IsInteger(node.outputs[ref.output].type->dtype)) {
    return IntRange::Any();
  }
  IntRange known = IntRange::Any();
  if (auto it = facts.find(ref); it != facts.end()) known = it->second;
  if (facts.empty()) {
    if (auto it = memo_.find(ref); it != memo_.end()) return it->second;
    IntRange r = Compute(ref, depth);
    memo_[ref] = r;
    return r;
  }
  // Under facts, only producers that keep positions (elementwise, same shape) carry them over;
  // anything else is its unconditioned range.
  const ir::TensorType& type = *node.outputs[ref.output].type;
  auto same_shape = [&](const Value& v) {
    return v.is_tensor() && graph_.type(v.as_tensor()).shape == type.shape;
  };
  auto sub = [&](const Value& v) -> std::optional<IntRange> {
    if (same_shape(v)) return RangeUnder(v.as_tensor(), facts, depth + 1);
    if (auto s = ScalarOf(v, depth)) {
      if (auto k = Integral(*s)) return IntRange::Exactly(*k);
    }
    return std::nullopt;
  };
  IntRange base = Range(ref);
  if (node.kind == ir::NodeKind::kOperator && node.op.ns == "aten" && !node.args.empty()) {
    const std::string& op = node.op.name;
    const bool alpha_one = node.args.size() < 3 && node.Kwarg("alpha") == nullptr;
    if ((op == "clone" || op == "alias" || op == "detach" || op == "lift_fresh_copy" ||
         op == "contiguous" || op == "_to_copy") &&
        same_shape(node.args[0])) {
      base = Intersect(base, RangeUnder(node.args[0].as_tensor(), facts, depth + 1));
    } else if ((op == "add" || op == "sub" || op == "mul") && node.args.size() >= 2 &&
               alpha_one) {
      auto a = sub(node.args[0]);
      auto b = sub(node.args[1]);
      if (a && b) {
        IntRange r = op == "add" ? Add(*a, *b) : op == "sub" ? Add(*a, Neg(*b)) : Mul(*a, *b);
        base = Intersect(base, r);
      }
    } else if (op == "neg" && same_shape(node.args[0])) {
      base = Intersect(base, Neg(RangeUnder(node.args[0].as_tensor(), facts, depth + 1)));
    }
  }
  return Intersect(base, known);
}

void IndexDomain::LearnFrom(TensorRef cond, bool value, Facts* facts, int depth) {
  if (depth > kMaxDepth) return;
  const ir::Node& n = graph_.node(cond.node);
  if (n.kind != ir::NodeKind::kOperator || n.op.ns != "aten" || n.args.empty()) return;
  const std::string& op = n.op.name;
  const ir::TensorType& type = graph_.type(cond);
  auto same_shape_tensor = [&](const Value& v) {
    return v.is_tensor() && graph_.type(v.as_tensor()).shape == type.shape;
  };
  if ((op == "bitwise_or" || op == "logical_or" || op == "bitwise_and" || op == "logical_and") &&
      n.args.size() == 2 && same_shape_tensor(n.args[0]) && same_shape_tensor(n.args[1])) {
    // a | b false: both false; a & b true: both true (nothing is learnt the other way)
    const bool is_or = op == "bitwise_or" || op == "logical_or";
    if (is_or == value) return;
    LearnFrom(n.args[0].as_tensor(), value, facts, depth + 1);
    LearnFrom(n.args[1].as_tensor(), value, facts, depth + 1);
    return;
  }
  if ((op == "bitwise_not" || op == "logical_not") && same_shape_tensor(n.args[0])) {
    LearnFrom(n.args[0].as_tensor(), !value, facts, depth + 1);
    return;
  }
  if (op == "clone" || op == "alias" || op == "detach") {
    if (same_shape_tensor(n.args[0])) LearnFrom(n.args[0].as_tensor(), value, facts, depth + 1);
    return;
  }
  // x < c, x >= c, x > c, x <= c with x an integer tensor of the mask's shape, c a number
  if ((op != "lt" && op != "ge" && op != "gt" && op != "le") || n.args.size() != 2 ||
      !same_shape_tensor(n.args[0])) {
    return;
  }
  TensorRef x = n.args[0].as_tensor();
  if (!IsInteger(graph_.type(x).dtype)) return;
  std::optional<double> c = ScalarOf(n.args[1], depth);
  if (!c || !std::isfinite(*c)) return;
  // Normalize to x >= lo (integer x: x < c is x <= ceil(c) - 1, x > c is x >= floor(c) + 1).
  bool less = op == "lt" || op == "le";
  bool strict = op == "lt" || op == "gt";
  if (!value) {  // not (x < c) is x >= c, and so on
    less = !less;
    strict = !strict;
  }
  IntRange r;
  if (less) {
    double bound = strict ? std::ceil(*c) - 1 : std::floor(*c);
    r.hi = Integral(bound);
  } else {
    double bound = strict ? std::floor(*c) + 1 : std::ceil(*c);
    r.lo = Integral(bound);
  }
  auto it = facts->find(x);
  (*facts)[x] = it == facts->end() ? r : Intersect(it->second, r);
  // a copy of x (clone, alias) is bounded alike at the same positions
  const ir::Node& xn = graph_.node(x.node);
  if ((Is(xn, "clone") || Is(xn, "alias") || Is(xn, "detach")) && !xn.args.empty() &&
      same_shape_tensor(xn.args[0])) {
    TensorRef y = xn.args[0].as_tensor();
    auto jt = facts->find(y);
    (*facts)[y] = jt == facts->end() ? r : Intersect(jt->second, r);
  }
}

IntRange IndexDomain::Compute(TensorRef ref, int depth) {
  const ir::Node& node = graph_.node(ref.node);
  const ir::TensorType& type = *node.outputs[ref.output].type;
  if (node.kind == ir::NodeKind::kInput) {
    if (!assume_inputs_nonneg_) return IntRange::Any();
    assumed_inputs_.insert(node.name);
    return {0, std::nullopt};
  }
  if (node.kind == ir::NodeKind::kConstant) {
    if (constants_ != nullptr) {
      auto it = constants_->find(node.name);
      if (it != constants_->end()) {
        if (auto k = Integral(it->second)) return IntRange::Exactly(*k);
      }
    }
    return IntRange::Any();
  }
  if (node.op.ns != "aten") return IntRange::Any();
  const ir::OpInfo* info = ir::OpRegistry::Default().Find(node.op);
  if (info == nullptr) return IntRange::Any();
  std::optional<ir::BoundArgs> bound;
  try {
    bound.emplace(info->schema, node);
  } catch (const std::exception&) {
    return IntRange::Any();
  }
  const ir::BoundArgs& a = *bound;
  auto arg = [&](const char* name) -> const Value* { return a.has(name) ? &a[name] : nullptr; };
  auto tensor_range = [&](const char* name) -> IntRange {
    const Value* v = arg(name);
    if (v == nullptr || !v->is_tensor()) return IntRange::Any();
    return RangeUnder(v->as_tensor(), {}, depth + 1);
  };
  // A number, or a tensor operand's range.
  auto operand = [&](const char* name) -> IntRange {
    const Value* v = arg(name);
    if (v == nullptr) return IntRange::Any();
    if (v->is_tensor()) return RangeUnder(v->as_tensor(), {}, depth + 1);
    if (auto s = ScalarOf(*v, depth)) {
      if (auto k = Integral(*s)) return IntRange::Exactly(*k);
    }
    return IntRange::Any();
  };
  auto int_arg = [&](const char* name) -> std::optional<int64_t> {
    const Value* v = arg(name);
    if (v == nullptr || !v->is_number()) return std::nullopt;
    return Integral(v->as_double());
  };
  // [0, size(dim) - 1] for the indices output of a reduction / selection along dim.
  auto index_along = [&](std::optional<int64_t> dim) -> IntRange {
    const Value* self = arg("self");
    if (self == nullptr || !self->is_tensor()) return IntRange::Any();
    const ir::TensorType& in = graph_.type(self->as_tensor());
    int64_t extent = 1;
    if (dim) {
      auto d = ir::WrapDim(*dim, static_cast<int64_t>(in.shape.size()));
      if (!d) return IntRange::Any();
      if (in.shape.empty()) return IntRange::Exactly(0);
      if (!in.shape[*d].is_static()) return {0, std::nullopt};
      extent = in.shape[*d].value();
    } else {
      for (const ir::Dim& s : in.shape) {
        if (!s.is_static()) return {0, std::nullopt};
        extent *= s.value();
      }
    }
    return {0, extent - 1};
  };
  const std::string& op = node.op.name;
  const std::string& overload = node.op.overload;

  // Values that keep their input's values (views, copies, selections, concatenations).
  static const std::set<std::string> kKeep = {
      "clone", "alias", "detach", "lift_fresh_copy", "contiguous", "_to_copy", "view", "reshape",
      "_unsafe_view", "unsqueeze", "squeeze", "t", "transpose", "permute", "expand", "slice",
      "select", "flatten", "split", "split_with_sizes", "unbind", "repeat", "narrow"};
  if (kKeep.count(op)) {
    if (op == "_to_copy") {
      const Value* self = arg("self");
      if (self == nullptr || !self->is_tensor() ||
          !IsInteger(graph_.type(self->as_tensor()).dtype)) {
        return IntRange::Any();
      }
    }
    return tensor_range("self");
  }
  if (op == "cat") {
    const Value* list = arg("tensors");
    if (list == nullptr || !list->is_list() || list->as_list().empty()) return IntRange::Any();
    std::optional<IntRange> r;
    for (const Value& item : list->as_list()) {
      if (!item.is_tensor()) return IntRange::Any();
      IntRange piece = RangeUnder(item.as_tensor(), {}, depth + 1);
      r = r ? Union(*r, piece) : piece;
    }
    return *r;
  }
  if (op == "scalar_tensor") return operand("s");
  if (op == "full" || op == "full_like" || op == "new_full") return operand("fill_value");
  if (op == "zeros" || op == "zeros_like" || op == "new_zeros") return IntRange::Exactly(0);
  if (op == "ones" || op == "ones_like" || op == "new_ones") return IntRange::Exactly(1);
  if (op == "arange") {
    std::optional<int64_t> start = overload == "default" ? 0 : int_arg("start");
    std::optional<int64_t> end = int_arg("end");
    std::optional<int64_t> step = overload == "start_step" ? int_arg("step") : 1;
    if (!start || !end || !step || *step <= 0 || *end <= *start) return IntRange::Any();
    return {*start, *start + (*end - *start - 1) / *step * *step};
  }
  // Indices outputs: topk / sort / max.dim / min.dim along a dim, argmax / argmin.
  if ((op == "topk" || op == "sort") && ref.output == 1) {
    std::optional<int64_t> dim = arg("dim") ? int_arg("dim") : std::optional<int64_t>(-1);
    return dim ? index_along(dim) : IntRange::Any();
  }
  if ((op == "max" || op == "min") && overload == "dim" && ref.output == 1) {
    std::optional<int64_t> dim = int_arg("dim");
    return dim ? index_along(dim) : IntRange::Any();
  }
  if (op == "argmax" || op == "argmin") {
    const Value* dim = arg("dim");
    if (dim == nullptr || dim->is_none()) return index_along(std::nullopt);
    std::optional<int64_t> d = int_arg("dim");
    return d ? index_along(d) : IntRange::Any();
  }
  if (op == "clamp" || op == "clamp_min" || op == "clamp_max") {
    // clamp(x, lo, hi) = min(max(x, lo), hi): at least max(lo, x's least) and at most
    // min(hi, x's greatest), a missing bound leaving x's side as it is
    IntRange r = tensor_range("self");
    std::optional<int64_t> lo = op == "clamp_max" ? std::nullopt : operand("min").lo;
    std::optional<int64_t> hi = op == "clamp_min" ? std::nullopt : operand("max").hi;
    if (op != "clamp_max" && operand("min").lo != operand("min").hi) lo.reset();
    if (op != "clamp_min" && operand("max").lo != operand("max").hi) hi.reset();
    IntRange out;
    out.lo = lo && r.lo ? std::max(*lo, *r.lo) : (lo ? lo : r.lo);
    out.hi = hi && r.hi ? std::min(*hi, *r.hi) : (hi ? hi : r.hi);
    if (hi && out.lo) out.lo = std::min(*out.lo, *hi);
    if (lo && out.hi) out.hi = std::max(*out.hi, *lo);
    return out;
  }
  if (op == "remainder") {
    // Python's x % n lies in [0, n - 1] for n > 0, whatever the sign of x
    IntRange n = operand("other");
    if (n.lo && n.hi && *n.lo > 0) return {0, *n.hi - 1};
    return IntRange::Any();
  }
  if (op == "floor_divide" || (op == "div" && overload == "Tensor_mode")) {
    // x // n for a number n > 0 (floor) is monotone in x: [lo // n, hi // n]; trunc rounds
    // toward zero, the same on non-negative x
    const Value* mode = arg("rounding_mode");
    const bool floor = op == "floor_divide" ||
                       (mode != nullptr && mode->is_string() && mode->as_string() == "floor");
    const bool trunc = mode != nullptr && mode->is_string() && mode->as_string() == "trunc";
    IntRange x = operand("self"), n = operand("other");
    if (!n.lo || n.lo != n.hi || *n.lo <= 0 || !(floor || (trunc && x.NonNegative()))) {
      return IntRange::Any();
    }
    auto fdiv = [&](int64_t v) { return v / *n.lo - (v % *n.lo < 0 ? 1 : 0); };
    IntRange out;
    if (x.lo) out.lo = fdiv(*x.lo);
    if (x.hi) out.hi = fdiv(*x.hi);
    return out;
  }
  if (op == "abs") {
    IntRange r = tensor_range("self");
    if (r.NonNegative()) return r;
    return {0, r.lo && r.hi ? std::optional<int64_t>(std::max(-*r.lo, *r.hi)) : std::nullopt};
  }
  if (op == "neg") return Neg(tensor_range("self"));
  if (op == "add" || op == "sub") {
    const Value* alpha = arg("alpha");
    IntRange b = operand("other");
    if (alpha != nullptr && !alpha->is_none()) {
      auto k = alpha->is_number() ? Integral(alpha->as_double()) : std::nullopt;
      if (!k) return IntRange::Any();
      b = Mul(b, IntRange::Exactly(*k));
    }
    IntRange s = operand("self");
    return op == "add" ? Add(s, b) : Add(s, Neg(b));
  }
  if (op == "mul") return Mul(operand("self"), operand("other"));
  if (op == "maximum" || op == "minimum") {
    IntRange x = operand("self"), y = operand("other");
    IntRange r;
    if (op == "maximum") {  // at least either operand's least; at most the greater greatest
      if (x.lo && y.lo) r.lo = std::max(*x.lo, *y.lo);
      else r.lo = x.lo ? x.lo : y.lo;
      if (x.hi && y.hi) r.hi = std::max(*x.hi, *y.hi);
    } else {
      if (x.lo && y.lo) r.lo = std::min(*x.lo, *y.lo);
      if (x.hi && y.hi) r.hi = std::min(*x.hi, *y.hi);
      else r.hi = x.hi ? x.hi : y.hi;
    }
    return r;
  }
  // Guarded values: where the mask holds, the fill value; elsewhere the input, under what the
  // mask being false says (a range test of the input's own tensor bounds it there).
  auto guarded = [&](const Value* kept, const Value* mask, bool kept_when,
                     IntRange replaced) -> IntRange {
    if (kept == nullptr || !kept->is_tensor()) return IntRange::Any();
    IntRange under = RangeUnder(kept->as_tensor(), {}, depth + 1);
    if (mask != nullptr && mask->is_tensor() &&
        graph_.type(mask->as_tensor()).shape == graph_.type(kept->as_tensor()).shape &&
        graph_.type(kept->as_tensor()).shape == type.shape) {
      Facts facts;
      LearnFrom(mask->as_tensor(), kept_when, &facts, depth + 1);
      if (!facts.empty()) under = RangeUnder(kept->as_tensor(), facts, depth + 1);
    }
    return Union(under, replaced);
  };
  if (op == "masked_fill") return guarded(arg("self"), arg("mask"), false, operand("value"));
  if (op == "index_put") {
    const Value* indices = arg("indices");
    const Value* accumulate = arg("accumulate");
    if (accumulate != nullptr && accumulate->is_bool() && accumulate->as_bool()) {
      return IntRange::Any();
    }
    if (indices == nullptr || !indices->is_list() || indices->as_list().size() != 1 ||
        !indices->as_list()[0].is_tensor() ||
        graph_.type(indices->as_list()[0].as_tensor()).dtype != ir::DType::kBool) {
      // rows written at integer positions: the union of both value sets
      return Union(tensor_range("self"), operand("values"));
    }
    return guarded(arg("self"), &indices->as_list()[0], false, operand("values"));
  }
  if (op == "where" && overload == "self") {
    const Value* cond = arg("condition");
    // where(c, x, y): x where c holds, y elsewhere
    auto side = [&](const char* name, bool when) -> IntRange {
      const Value* v = arg(name);
      if (v == nullptr) return IntRange::Any();
      if (!v->is_tensor()) return operand(name);
      if (cond != nullptr && cond->is_tensor() &&
          graph_.type(v->as_tensor()).shape == type.shape &&
          graph_.type(cond->as_tensor()).shape == type.shape) {
        Facts facts;
        LearnFrom(cond->as_tensor(), when, &facts, depth + 1);
        if (!facts.empty()) return RangeUnder(v->as_tensor(), facts, depth + 1);
      }
      return RangeUnder(v->as_tensor(), {}, depth + 1);
    };
    return Union(side("self", true), side("other", false));
  }
  return IntRange::Any();
}

std::vector<Premise> IndexDomainPremises(const ir::Graph& graph, const std::string& where,
                                         const ConstantValues* constants) {
  std::vector<Premise> out;
  for (ir::NodeId id = 0; id < static_cast<ir::NodeId>(graph.nodes.size()); ++id) {
    const ir::Node& node = graph.node(id);
    if (!Is(node, "index") && !Is(node, "index_put")) continue;
    if (node.args.size() < 2 || !node.args[1].is_list()) continue;
    for (const Value& item : node.args[1].as_list()) {
      if (!item.is_tensor() || !IsInteger(graph.type(item.as_tensor()).dtype)) continue;
      // The lowering writes no wrap when these ids are proved non-negative; a proof that needs
      // the inputs' assumed non-negativity is a premise.
      IndexDomain proved(graph, constants, /*assume_inputs_nonneg=*/false);
      if (proved.IdsNonNegative(item.as_tensor())) continue;
      IndexDomain assumed(graph, constants, /*assume_inputs_nonneg=*/true);
      if (!assumed.IdsNonNegative(item.as_tensor())) continue;
      std::string names;
      for (const std::string& n : assumed.assumed_inputs()) {
        names += (names.empty() ? "" : ", ") + n;
      }
      const bool one = assumed.assumed_inputs().size() == 1;
      out.push_back({"domain",
                     names + " >= 0 (integer input" + (one ? "" : "s") + "; aten::" +
                         node.op.name + " reads " + graph.ValueName(item.as_tensor()) +
                         " and would wrap negative ids)",
                     where + ":" + node.name});
    }
  }
  return out;
}

}  // namespace gg::symbolic
