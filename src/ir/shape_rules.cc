#include "ir/shape_rules.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

namespace gg::ir {
namespace {

std::string DimList(const std::vector<int64_t>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
  return out + "]";
}

std::string Str(const Shape& s) { return ShapeToString(s); }
std::string Str(DType d) { return std::string(ShortName(d)); }

// Two dims that are certainly different (both static and unequal). Symbolic dims are trusted:
// the capture guarded them.
bool KnownDifferent(const Dim& a, const Dim& b) {
  return a.is_static() && b.is_static() && a.value() != b.value();
}

bool IsStaticOne(const Dim& d) { return d.is_static() && d.value() == 1; }

std::optional<DType> DTypeFromCode(int64_t code) {
  switch (code) {
    case 0: return DType::kUInt8;
    case 1: return DType::kInt8;
    case 2: return DType::kInt16;
    case 3: return DType::kInt32;
    case 4: return DType::kInt64;
    case 5: return DType::kFloat16;
    case 6: return DType::kFloat32;
    case 7: return DType::kFloat64;
    case 9: return DType::kComplex64;
    case 10: return DType::kComplex128;
    case 11: return DType::kBool;
    case 15: return DType::kBFloat16;
    default: return std::nullopt;
  }
}

// Float statistics of normalizations: half-precision inputs accumulate in f32.
DType StatsDType(DType input) {
  return input == DType::kFloat16 || input == DType::kBFloat16 ? DType::kFloat32 : input;
}

DType SumDType(DType input) { return IsIntegral(input, true) ? DType::kInt64 : input; }

void RequireRank(const ShapeContext& ctx, const std::string& what, const TensorType& t,
                 size_t rank) {
  if (t.shape.size() != rank) {
    RuleError(ctx, "expected " + what + " to be " + std::to_string(rank) + "-D, got " +
                       Str(t.shape));
  }
}

void RequireSameDType(const ShapeContext& ctx, const TensorType& a, const TensorType& b) {
  if (a.dtype != b.dtype) {
    DTypeRuleError(ctx, "dtypes differ: " + Str(a.dtype) + " and " + Str(b.dtype));
  }
}

void RequireIntegral(const ShapeContext& ctx, const std::string& what, const TensorType& t) {
  if (!IsIntegral(t.dtype, false)) {
    DTypeRuleError(ctx, what + " must be an integer tensor, got " + Str(t.dtype));
  }
}

// Clamps a slice bound the way torch does; static sizes only.
int64_t ClampBound(int64_t v, int64_t size) {
  if (v < 0) v += size;
  return std::clamp<int64_t>(v, 0, size);
}

// Size of dim[start:end:step].
Dim SliceLength(const ShapeContext& ctx, const Dim& size, std::optional<Dim> start,
                std::optional<Dim> end, int64_t step) {
  if (step <= 0) RuleError(ctx, "slice step must be positive, got " + std::to_string(step));
  constexpr int64_t kHuge = std::numeric_limits<int64_t>::max() / 2;
  Dim s = start.value_or(Dim(0));
  Dim e = end.value_or(Dim(std::numeric_limits<int64_t>::max()));
  if (size.is_static() && s.is_static() && e.is_static()) {
    int64_t b = ClampBound(s.value(), size.value());
    int64_t f = ClampBound(e.value(), size.value());
    return f <= b ? Dim(0) : Dim((f - b + step - 1) / step);
  }
  // Symbolic: the common cases are "to the end" and in-range static bounds.
  if (e.is_static() && e.value() >= kHuge) e = size;
  if (s.is_static() && s.value() < 0) s = size + s;
  if (e.is_static() && e.value() < 0) e = size + e;
  Dim len = e - s;
  if (step != 1) len = (len + Dim(step - 1)) / Dim(step);
  return len;
}

Shape SliceShape(const ShapeContext& ctx, const Shape& shape) {
  int64_t dim = NormalizeDim(ctx, IntArg(ctx, "dim"), static_cast<int64_t>(shape.size()));
  if (shape.empty()) RuleError(ctx, "cannot slice a 0-D tensor");
  Shape out = shape;
  out[dim] = SliceLength(ctx, shape[dim], OptionalDimArg(ctx, "start"),
                         OptionalDimArg(ctx, "end"), IntArg(ctx, "step"));
  return out;
}

// Matrix product checks shared by mm, addmm, bmm, baddbmm.
Shape MatrixProduct(const ShapeContext& ctx, const TensorType& a, const TensorType& b,
                    size_t rank) {
  if (a.shape.size() != rank || b.shape.size() != rank) {
    RuleError(ctx, "expected " + std::to_string(rank) + "-D tensors, got " + Str(a.shape) +
                       " and " + Str(b.shape));
  }
  if (rank == 3 && KnownDifferent(a.shape[0], b.shape[0])) {
    RuleError(ctx, "batch sizes differ: " + Str(a.shape) + " x " + Str(b.shape));
  }
  if (KnownDifferent(a.shape[rank - 1], b.shape[rank - 2])) {
    RuleError(ctx, "inner dimensions differ: " + Str(a.shape) + " x " + Str(b.shape));
  }
  RequireSameDType(ctx, a, b);
  Shape out;
  if (rank == 3) out.push_back(a.shape[0]);
  out.push_back(a.shape[rank - 2]);
  out.push_back(b.shape[rank - 1]);
  return out;
}

// Sizes of a reduction's output with the dims argument read from `dim_arg` (None: all dims).
Outputs ReduceWith(const ShapeContext& ctx, DType dtype) {
  const TensorType& self = FirstTensorArg(ctx);
  std::vector<int64_t> dims = IntListArg(ctx, "dim");
  bool keepdim = ctx.args.has("keepdim") && BoolArg(ctx, "keepdim");
  return {TensorType{dtype, ReducedShape(ctx, self.shape, dims, keepdim)}};
}

DType MeanDType(const ShapeContext& ctx) {
  const TensorType& self = FirstTensorArg(ctx);
  DType dtype = DTypeArg(ctx, "dtype").value_or(self.dtype);
  if (!IsFloatingPoint(dtype) && !IsComplex(dtype)) {
    DTypeRuleError(ctx, "expected a floating point or complex input, got " + Str(dtype));
  }
  return dtype;
}

int64_t GroupSize(const ShapeContext& ctx) {
  int64_t size = ctx.group_size;
  if (ctx.schema.ArgIndex("group_size") >= 0) {
    int64_t arg = IntArg(ctx, "group_size");
    if (size > 0 && arg != size) {
      RuleError(ctx, "group_size argument " + std::to_string(arg) +
                         " differs from the process group's size " + std::to_string(size));
    }
    size = arg;
  }
  if (size <= 0) RuleError(ctx, "group size unknown or not positive");
  return size;
}

}  // namespace

// ---- argument access -------------------------------------------------------------------------

std::string RuleLabel(const ShapeContext& ctx) {
  const OpName& op = ctx.schema.name;
  return op.ns == "aten" ? op.name : op.ns + "::" + op.name;
}

void RuleError(const ShapeContext& ctx, const std::string& message) {
  throw ShapeError(RuleLabel(ctx) + ": " + message);
}

void DTypeRuleError(const ShapeContext& ctx, const std::string& message) {
  throw DTypeError(RuleLabel(ctx) + ": " + message);
}

int64_t IntArg(const ShapeContext& ctx, const std::string& name) {
  const Value& v = ctx.args[name];
  if (!v.is_int()) RuleError(ctx, "argument '" + name + "' must be an int");
  return v.as_int();
}

std::optional<int64_t> OptionalIntArg(const ShapeContext& ctx, const std::string& name) {
  if (ctx.args[name].is_none()) return std::nullopt;
  return IntArg(ctx, name);
}

double DoubleArg(const ShapeContext& ctx, const std::string& name) {
  const Value& v = ctx.args[name];
  if (!v.is_number()) RuleError(ctx, "argument '" + name + "' must be a number");
  return v.as_double();
}

bool BoolArg(const ShapeContext& ctx, const std::string& name) {
  const Value& v = ctx.args[name];
  if (v.is_bool()) return v.as_bool();
  if (v.is_int()) return v.as_int() != 0;
  RuleError(ctx, "argument '" + name + "' must be a bool");
}

std::vector<int64_t> IntListArg(const ShapeContext& ctx, const std::string& name) {
  const Value& v = ctx.args[name];
  if (v.is_none()) return {};
  if (!v.is_int_list()) RuleError(ctx, "argument '" + name + "' must be a list of ints");
  return v.as_int_list();
}

namespace {
std::optional<Dim> AsDim(const Value& v) {
  if (v.is_int()) return Dim(v.as_int());
  if (v.is_string() && !v.as_string().empty()) return Dim::Symbol(v.as_string());
  return std::nullopt;
}
}  // namespace

Dim DimArg(const ShapeContext& ctx, const std::string& name) {
  auto d = AsDim(ctx.args[name]);
  if (!d) RuleError(ctx, "argument '" + name + "' must be an int or a symbolic size");
  return *d;
}

std::optional<Dim> OptionalDimArg(const ShapeContext& ctx, const std::string& name) {
  if (ctx.args[name].is_none()) return std::nullopt;
  return DimArg(ctx, name);
}

Shape SizeArg(const ShapeContext& ctx, const std::string& name) {
  const Value& v = ctx.args[name];
  Shape out;
  if (auto d = AsDim(v)) return {*d};
  if (!v.is_list()) RuleError(ctx, "argument '" + name + "' must be a list of sizes");
  for (const Value& item : v.as_list()) {
    auto d = AsDim(item);
    if (!d) RuleError(ctx, "argument '" + name + "' must be a list of sizes");
    out.push_back(*d);
  }
  return out;
}

std::optional<DType> DTypeArg(const ShapeContext& ctx, const std::string& name) {
  if (!ctx.args.has(name)) return std::nullopt;
  const Value& v = ctx.args[name];
  if (v.is_none()) return std::nullopt;
  if (v.is_dtype()) return v.as_dtype();
  if (v.is_int()) {
    if (auto d = DTypeFromCode(v.as_int())) return d;
  }
  if (v.is_string() || v.is_enum()) {
    if (auto d = ParseDType(v.is_string() ? v.as_string() : v.as_enum().name)) return d;
  }
  RuleError(ctx, "argument '" + name + "' is not a dtype");
}

std::vector<std::optional<TensorType>> OptionalTensorListArg(const ShapeContext& ctx,
                                                             const std::string& name) {
  const Value& v = ctx.args[name];
  if (!v.is_list()) RuleError(ctx, "argument '" + name + "' must be a list of tensors");
  std::vector<std::optional<TensorType>> out;
  for (const Value& item : v.as_list()) {
    if (item.is_none()) {
      out.push_back(std::nullopt);
    } else if (item.is_tensor()) {
      const Node& producer = ctx.graph.node(item.as_tensor().node);
      const auto& slot = producer.outputs.at(item.as_tensor().output);
      if (!slot.type) RuleError(ctx, "argument '" + name + "' holds a non-tensor value");
      out.push_back(*slot.type);
    } else {
      RuleError(ctx, "argument '" + name + "' holds a non-tensor element");
    }
  }
  return out;
}

const TensorType& FirstTensorArg(const ShapeContext& ctx) {
  if (ctx.schema.args.empty()) RuleError(ctx, "operator has no arguments");
  return ctx.TensorArg(ctx.schema.args[0].name);
}

// ---- shape helpers ---------------------------------------------------------------------------

int64_t NormalizeDim(const ShapeContext& ctx, int64_t dim, int64_t rank) {
  auto wrapped = WrapDim(dim, rank);
  if (!wrapped) {
    RuleError(ctx, "dimension " + std::to_string(dim) + " out of range for a tensor of rank " +
                       std::to_string(rank));
  }
  return *wrapped;
}

Shape BroadcastShapes(const ShapeContext& ctx, const Shape& a, const Shape& b) {
  std::optional<Shape> out = BroadcastShapes(a, b);
  if (!out) RuleError(ctx, "shapes " + Str(a) + " and " + Str(b) + " are not broadcastable");
  return *out;
}

std::optional<Shape> BroadcastShapes(const Shape& a, const Shape& b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const Dim* da = i < rank - a.size() ? nullptr : &a[i - (rank - a.size())];
    const Dim* db = i < rank - b.size() ? nullptr : &b[i - (rank - b.size())];
    if (!da) {
      out[i] = *db;
    } else if (!db || *da == *db || IsStaticOne(*db)) {
      out[i] = *da;
    } else if (IsStaticOne(*da)) {
      out[i] = *db;
    } else if (KnownDifferent(*da, *db)) {
      return std::nullopt;
    } else {
      out[i] = da->is_static() ? *da : *db;  // a symbol meeting a size: the size
    }
  }
  return out;
}

bool BroadcastsTo(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) return false;
  size_t offset = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i) {
    if (!IsStaticOne(from[i]) && KnownDifferent(from[i], to[i + offset])) return false;
  }
  return true;
}

Shape ReducedShape(const ShapeContext& ctx, const Shape& shape, const std::vector<int64_t>& dims,
                   bool keepdim) {
  int64_t rank = static_cast<int64_t>(shape.size());
  std::set<int64_t> reduced;
  for (int64_t d : dims) {
    if (!reduced.insert(NormalizeDim(ctx, d, rank)).second) {
      RuleError(ctx, "dimension " + std::to_string(d) + " appears twice in " + DimList(dims));
    }
  }
  Shape out;
  for (int64_t i = 0; i < rank; ++i) {
    bool r = dims.empty() || reduced.count(i);
    if (!r) {
      out.push_back(shape[i]);
    } else if (keepdim) {
      out.push_back(Dim(1));
    }
  }
  return out;
}

// ---- dtype helpers ---------------------------------------------------------------------------

std::optional<Operand> OperandArg(const ShapeContext& ctx, const std::string& name) {
  const Value& v = ctx.args[name];
  if (v.is_none()) return std::nullopt;
  if (v.is_tensor()) {
    const TensorType& t = ctx.TensorArg(name);
    return Operand{t.dtype, t.shape.empty() ? Operand::kZeroDimTensor : Operand::kDimTensor};
  }
  if (v.is_bool()) return Operand{DType::kBool, Operand::kWrappedNumber};
  if (v.is_int()) return Operand{DType::kInt64, Operand::kWrappedNumber};
  if (v.is_double()) return Operand{DType::kFloat64, Operand::kWrappedNumber};
  if (v.is_string()) return Operand{DType::kInt64, Operand::kWrappedNumber};  // a SymInt
  RuleError(ctx, "argument '" + name + "' must be a tensor or a number");
}

namespace {

std::optional<DType> PromoteSkipUndefined(std::optional<DType> a, std::optional<DType> b) {
  if (!a) return b;
  if (!b) return a;
  return PromoteTypes(*a, *b);
}

// torch's combine_categories: the higher-priority result wins unless the lower-priority one is of
// a higher category.
std::optional<DType> CombineCategories(std::optional<DType> higher, std::optional<DType> lower) {
  if (!higher) return lower;
  if (!lower) return higher;
  if (IsComplex(*higher)) return higher;
  if (IsComplex(*lower)) {
    if (IsFloatingPoint(*higher)) {
      return *higher == DType::kFloat64 ? DType::kComplex128 : DType::kComplex64;
    }
    return lower;
  }
  if (IsFloatingPoint(*higher)) return higher;
  if (*higher == DType::kBool || IsFloatingPoint(*lower)) return PromoteTypes(*higher, *lower);
  return higher;
}

}  // namespace

DType ResultType(const std::vector<Operand>& operands) {
  std::optional<DType> dim_result, zero_result, wrapped_result;
  for (const Operand& op : operands) {
    switch (op.kind) {
      case Operand::kDimTensor:
        dim_result = PromoteSkipUndefined(dim_result, op.dtype);
        break;
      case Operand::kZeroDimTensor:
        zero_result = PromoteSkipUndefined(zero_result, op.dtype);
        break;
      case Operand::kWrappedNumber: {
        DType d = op.dtype;
        if (IsFloatingPoint(d)) d = DType::kFloat32;  // the default dtype
        if (IsComplex(d)) d = DType::kComplex64;
        wrapped_result = PromoteSkipUndefined(wrapped_result, d);
        break;
      }
    }
  }
  auto result = CombineCategories(dim_result, CombineCategories(zero_result, wrapped_result));
  return result.value_or(DType::kFloat32);
}

DType ToFloating(DType dtype) { return IsIntegral(dtype, true) ? DType::kFloat32 : dtype; }

namespace rules {
namespace {

// Broadcast shape and operands of the named Tensor/Scalar arguments.
struct Pointwise {
  Shape shape;
  std::vector<Operand> operands;
};

Pointwise ReadPointwise(const ShapeContext& ctx, const std::vector<std::string>& names) {
  Pointwise p;
  bool any_tensor = false;
  for (const std::string& name : names) {
    auto op = OperandArg(ctx, name);
    if (!op) RuleError(ctx, "argument '" + name + "' is None");
    p.operands.push_back(*op);
    if (ctx.args[name].is_tensor()) {
      p.shape = any_tensor ? BroadcastShapes(ctx, p.shape, ctx.TensorArg(name).shape)
                           : ctx.TensorArg(name).shape;
      any_tensor = true;
    }
  }
  if (!any_tensor) RuleError(ctx, "expected at least one tensor argument");
  return p;
}

// The first two schema arguments (the first only, for unary operators).
std::vector<std::string> FirstTwo(const ShapeContext& ctx) {
  if (ctx.schema.args.empty()) RuleError(ctx, "expected an operand");
  if (ctx.schema.args.size() == 1) return {ctx.schema.args[0].name};
  return {ctx.schema.args[0].name, ctx.schema.args[1].name};
}

}  // namespace

// ---- pointwise -------------------------------------------------------------------------------

Outputs Identity(const ShapeContext& ctx) { return {FirstTensorArg(ctx)}; }

Outputs UnaryFloat(const ShapeContext& ctx) {
  TensorType t = FirstTensorArg(ctx);
  t.dtype = ToFloating(t.dtype);
  return {t};
}

Outputs UnaryFloatOnly(const ShapeContext& ctx) {
  const TensorType& t = FirstTensorArg(ctx);
  if (!IsFloatingPoint(t.dtype) && !IsComplex(t.dtype)) {
    DTypeRuleError(ctx, "expected a floating-point tensor, got " + Str(t.dtype));
  }
  return {t};
}

Outputs Broadcast(const ShapeContext& ctx) {
  Pointwise p = ReadPointwise(ctx, FirstTwo(ctx));
  return {TensorType{ResultType(p.operands), p.shape}};
}

Outputs BroadcastTrueDiv(const ShapeContext& ctx) {
  Pointwise p = ReadPointwise(ctx, FirstTwo(ctx));
  return {TensorType{ToFloating(ResultType(p.operands)), p.shape}};
}

Outputs DivMode(const ShapeContext& ctx) {
  if (ctx.args["rounding_mode"].is_none()) return BroadcastTrueDiv(ctx);
  return Broadcast(ctx);
}

Outputs BroadcastIntegral(const ShapeContext& ctx) {
  Pointwise p = ReadPointwise(ctx, FirstTwo(ctx));
  DType dtype = ResultType(p.operands);
  if (!IsIntegral(dtype, true)) {
    DTypeRuleError(ctx, "expected integral or bool tensors, got " + Str(dtype));
  }
  return {TensorType{dtype, p.shape}};
}

Outputs Compare(const ShapeContext& ctx) {
  Pointwise p = ReadPointwise(ctx, FirstTwo(ctx));
  return {TensorType{DType::kBool, p.shape}};
}

Outputs Where(const ShapeContext& ctx) {
  const TensorType& cond = ctx.TensorArg("condition");
  if (cond.dtype != DType::kBool) {
    DTypeRuleError(ctx, "condition must be bool, got " + Str(cond.dtype));
  }
  Pointwise p = ReadPointwise(ctx, {"self", "other"});
  return {TensorType{ResultType(p.operands), BroadcastShapes(ctx, cond.shape, p.shape)}};
}

Outputs MaskedFill(const ShapeContext& ctx) {
  const TensorType& self = ctx.TensorArg("self");
  const TensorType& mask = ctx.TensorArg("mask");
  if (mask.dtype != DType::kBool) DTypeRuleError(ctx, "mask must be bool, got " + Str(mask.dtype));
  if (ctx.args["value"].is_tensor() && !ctx.TensorArg("value").shape.empty()) {
    RuleError(ctx, "value must be a 0-D tensor, got " + Str(ctx.TensorArg("value").shape));
  }
  return {TensorType{self.dtype, BroadcastShapes(ctx, self.shape, mask.shape)}};
}

Outputs BackwardLikeSelf(const ShapeContext& ctx) {
  Pointwise p = ReadPointwise(ctx, FirstTwo(ctx));
  return {TensorType{FirstTensorArg(ctx).dtype, p.shape}};
}

Outputs ToCopy(const ShapeContext& ctx) {
  TensorType t = FirstTensorArg(ctx);
  t.dtype = DTypeArg(ctx, "dtype").value_or(t.dtype);
  return {t};
}

Outputs Copy(const ShapeContext& ctx) {
  const TensorType& self = ctx.TensorArg("self");
  const TensorType& src = ctx.TensorArg("src");
  if (!BroadcastsTo(src.shape, self.shape)) {
    RuleError(ctx, "src " + Str(src.shape) + " does not broadcast to self " + Str(self.shape));
  }
  return {self};
}

Outputs Dropout(const ShapeContext& ctx) {
  const TensorType& input = FirstTensorArg(ctx);
  return {input, TensorType{DType::kBool, input.shape}};
}

Outputs LogSigmoidForward(const ShapeContext& ctx) {
  const TensorType t = *UnaryFloatOnly(ctx)[0];
  return {t, t};
}

Outputs Softmax(const ShapeContext& ctx) {
  TensorType t = ctx.TensorArg("self");
  NormalizeDim(ctx, IntArg(ctx, "dim"), static_cast<int64_t>(t.shape.size()));
  if (BoolArg(ctx, "half_to_float")) {
    if (t.dtype != DType::kFloat16 && t.dtype != DType::kBFloat16) {
      DTypeRuleError(ctx, "half_to_float needs a half-precision input, got " + Str(t.dtype));
    }
    t.dtype = DType::kFloat32;
  }
  return {t};
}

Outputs SoftmaxBackward(const ShapeContext& ctx) {
  const TensorType& grad = ctx.TensorArg("grad_output");
  const TensorType& output = ctx.TensorArg("output");
  if (grad.shape != output.shape) {
    RuleError(ctx, "grad_output " + Str(grad.shape) + " and output " + Str(output.shape) +
                       " differ");
  }
  NormalizeDim(ctx, IntArg(ctx, "dim"), static_cast<int64_t>(grad.shape.size()));
  auto dtype = DTypeArg(ctx, "input_dtype");
  return {TensorType{dtype.value_or(grad.dtype), grad.shape}};
}

Outputs Void(const ShapeContext&) { return {}; }

// ---- linear algebra --------------------------------------------------------------------------

Outputs Mm(const ShapeContext& ctx) {
  const TensorType& a = ctx.TensorArg("self");
  return {TensorType{a.dtype, MatrixProduct(ctx, a, ctx.TensorArg("mat2"), 2)}};
}

Outputs Addmm(const ShapeContext& ctx) {
  const TensorType& a = ctx.TensorArg("mat1");
  Shape out = MatrixProduct(ctx, a, ctx.TensorArg("mat2"), 2);
  const TensorType& self = ctx.TensorArg("self");
  if (!BroadcastsTo(self.shape, out)) {
    RuleError(ctx, "self " + Str(self.shape) + " does not broadcast to " + Str(out));
  }
  return {TensorType{a.dtype, out}};
}

Outputs Bmm(const ShapeContext& ctx) {
  const TensorType& a = ctx.TensorArg("self");
  return {TensorType{a.dtype, MatrixProduct(ctx, a, ctx.TensorArg("mat2"), 3)}};
}

Outputs Baddbmm(const ShapeContext& ctx) {
  const TensorType& a = ctx.TensorArg("batch1");
  Shape out = MatrixProduct(ctx, a, ctx.TensorArg("batch2"), 3);
  const TensorType& self = ctx.TensorArg("self");
  if (!BroadcastsTo(self.shape, out)) {
    RuleError(ctx, "self " + Str(self.shape) + " does not broadcast to " + Str(out));
  }
  return {TensorType{a.dtype, out}};
}

std::optional<Shape> GroupedMmShape(const Shape& a, const Shape& b, const Shape* offs,
                                    std::string* why) {
  auto fail = [&](const std::string& message) -> std::optional<Shape> {
    *why = message;
    return std::nullopt;
  };
  const std::string operands = Str(a) + " x " + Str(b);
  if (a.size() < 2 || a.size() > 3 || b.size() < 2 || b.size() > 3) {
    return fail("operands must be 2-D or 3-D, got " + operands);
  }
  if (a.back() != b[b.size() - 2]) return fail("inner dimensions differ: " + operands);
  if (a.size() == 3 && b.size() == 3) {
    if (offs) return fail("3-D x 3-D takes no offs");
    if (a[0] != b[0]) return fail("group counts differ: " + operands);
    return Shape{a[0], a[1], b[2]};
  }
  if (!offs) return fail("offs is required unless both operands are 3-D");
  if (offs->size() != 1) return fail("offs must be 1-D, got " + Str(*offs));
  const Dim& groups = (*offs)[0];
  if (a.size() == 2 && b.size() == 3) {
    if (b[0] != groups)
      return fail("mat2 has " + b[0].ToString() + " groups, offs " + groups.ToString());
    return Shape{a[0], b[2]};
  }
  if (a.size() == 3) {
    if (a[0] != groups)
      return fail("self has " + a[0].ToString() + " groups, offs " + groups.ToString());
    return Shape{a[1], b[1]};
  }
  return Shape{groups, a[0], b[1]};
}

Outputs GroupedMm(const ShapeContext& ctx) {
  const TensorType& a = ctx.TensorArg("self");
  const TensorType& b = ctx.TensorArg("mat2");
  RequireSameDType(ctx, a, b);
  std::optional<TensorType> offs;
  if (!ctx.args["offs"].is_none()) {
    offs = ctx.TensorArg("offs");
    RequireIntegral(ctx, "offs", *offs);
  }
  if (!ctx.args["bias"].is_none())
    RuleError(ctx, "bias is not supported (torch's CPU kernel has none)");
  std::string why;
  std::optional<Shape> out = GroupedMmShape(a.shape, b.shape, offs ? &offs->shape : nullptr, &why);
  if (!out) RuleError(ctx, why);
  return {TensorType{DTypeArg(ctx, "out_dtype").value_or(a.dtype), *out}};
}

Outputs Matmul(const ShapeContext& ctx) {
  const TensorType& a = ctx.TensorArg("self");
  const TensorType& b = ctx.TensorArg("other");
  RequireSameDType(ctx, a, b);
  if (a.shape.empty() || b.shape.empty()) RuleError(ctx, "both arguments need at least 1 dim");
  Shape sa = a.shape, sb = b.shape;
  bool vec_a = sa.size() == 1, vec_b = sb.size() == 1;
  if (vec_a) sa.insert(sa.begin(), Dim(1));
  if (vec_b) sb.push_back(Dim(1));
  if (KnownDifferent(sa.back(), sb[sb.size() - 2])) {
    RuleError(ctx, "inner dimensions differ: " + Str(a.shape) + " x " + Str(b.shape));
  }
  Shape batch = BroadcastShapes(ctx, Shape(sa.begin(), sa.end() - 2),
                                Shape(sb.begin(), sb.end() - 2));
  if (!vec_a) batch.push_back(sa[sa.size() - 2]);
  if (!vec_b) batch.push_back(sb.back());
  return {TensorType{a.dtype, batch}};
}

Outputs Linear(const ShapeContext& ctx) {
  const TensorType& input = ctx.TensorArg("input");
  const TensorType& weight = ctx.TensorArg("weight");
  RequireRank(ctx, "weight", weight, 2);
  if (input.shape.empty()) RuleError(ctx, "input must have at least 1 dim");
  if (KnownDifferent(input.shape.back(), weight.shape[1])) {
    RuleError(ctx, "inner dimensions differ: " + Str(input.shape) + " x " + Str(weight.shape) +
                       "^T");
  }
  RequireSameDType(ctx, input, weight);
  Shape out = input.shape;
  out.back() = weight.shape[0];
  if (ctx.args["bias"].is_tensor() && !BroadcastsTo(ctx.TensorArg("bias").shape, out)) {
    RuleError(ctx, "bias " + Str(ctx.TensorArg("bias").shape) + " does not broadcast to " +
                       Str(out));
  }
  return {TensorType{input.dtype, out}};
}

namespace {
void CheckAttentionInputs(const ShapeContext& ctx, const TensorType& q, const TensorType& k,
                          const TensorType& v) {
  RequireRank(ctx, "query", q, 4);
  RequireRank(ctx, "key", k, 4);
  RequireRank(ctx, "value", v, 4);
  if (KnownDifferent(q.shape[3], k.shape[3])) {
    RuleError(ctx, "query and key head sizes differ: " + Str(q.shape) + " vs " + Str(k.shape));
  }
  if (KnownDifferent(k.shape[2], v.shape[2])) {
    RuleError(ctx, "key and value lengths differ: " + Str(k.shape) + " vs " + Str(v.shape));
  }
}
}  // namespace

Outputs FlashAttention(const ShapeContext& ctx) {
  const TensorType& q = ctx.TensorArg("query");
  const TensorType& k = ctx.TensorArg("key");
  CheckAttentionInputs(ctx, q, k, ctx.TensorArg("value"));
  const Shape& s = q.shape;
  TensorType debug{q.dtype, {0}};
  if (BoolArg(ctx, "return_debug_mask")) debug.shape = {s[0], s[1], s[2], k.shape[2]};
  // As torch 2.1-2.4's meta kernel: output like query, f32 logsumexp, no cumulative sequence
  // lengths, SymInt max lengths (not tensors), i64 scalar philox seed and offset.
  return {q,
          TensorType{DType::kFloat32, {s[0], s[1], s[2]}},
          std::nullopt,
          std::nullopt,
          std::nullopt,
          std::nullopt,
          TensorType{DType::kInt64, {}},
          TensorType{DType::kInt64, {}},
          debug};
}

Outputs EfficientAttention(const ShapeContext& ctx) {
  const TensorType& q = ctx.TensorArg("query");
  const TensorType& v = ctx.TensorArg("value");
  CheckAttentionInputs(ctx, q, ctx.TensorArg("key"), v);
  const Shape& s = q.shape;
  Dim lse_len(0);
  if (BoolArg(ctx, "compute_log_sumexp")) lse_len = (s[2] + Dim(31)) / Dim(32) * Dim(32);
  return {TensorType{q.dtype, {s[0], s[1], s[2], v.shape[3]}},
          TensorType{DType::kFloat32, {s[0], s[1], lse_len}}, TensorType{DType::kInt64, {}},
          TensorType{DType::kInt64, {}}};
}

// scaled_dot_product_attention: q [B, Hq, L, E], k [B, Hkv, S, E], v [B, Hkv, S, Ev] ->
// [B, Hq, L, Ev] in q's dtype.
Outputs Sdpa(const ShapeContext& ctx) {
  const TensorType& q = ctx.TensorArg("query");
  const TensorType& v = ctx.TensorArg("value");
  CheckAttentionInputs(ctx, q, ctx.TensorArg("key"), v);
  return {TensorType{q.dtype, {q.shape[0], q.shape[1], q.shape[2], v.shape[3]}}};
}

// The CPU flash kernel: the output, and the logsumexp [B, Hq, L] in f32 for reduced floating
// inputs (bf16, f16), in the input's dtype otherwise (f32, f64), as the kernel returns it.
Outputs SdpaForCpu(const ShapeContext& ctx) {
  Outputs out = Sdpa(ctx);
  const TensorType& q = ctx.TensorArg("query");
  DType lse = q.dtype == DType::kBFloat16 || q.dtype == DType::kFloat16 ? DType::kFloat32 : q.dtype;
  out.push_back(TensorType{lse, {q.shape[0], q.shape[1], q.shape[2]}});
  return out;
}

Outputs SafeSoftmax(const ShapeContext& ctx) {
  TensorType t = ctx.TensorArg("self");
  NormalizeDim(ctx, IntArg(ctx, "dim"), static_cast<int64_t>(t.shape.size()));
  t.dtype = DTypeArg(ctx, "dtype").value_or(t.dtype);
  return {t};
}

Outputs AllAnyDim(const ShapeContext& ctx) {
  const TensorType& self = ctx.TensorArg("self");
  Shape shape = ReducedShape(ctx, self.shape, {IntArg(ctx, "dim")}, BoolArg(ctx, "keepdim"));
  return {TensorType{self.dtype == DType::kUInt8 ? DType::kUInt8 : DType::kBool, shape}};
}

// view_as_complex reads pairs of the last dim (size 2) as (real, imag).
Outputs ViewAsComplex(const ShapeContext& ctx) {
  const TensorType& self = ctx.TensorArg("self");
  if (self.shape.empty() || self.shape.back() != Dim(2)) {
    RuleError(ctx, "view_as_complex needs a last dim of size 2, got " + Str(self.shape));
  }
  if (self.dtype != DType::kFloat32 && self.dtype != DType::kFloat64) {
    DTypeRuleError(ctx, "view_as_complex of " + Str(self.dtype) + " (f32 or f64 only here)");
  }
  Shape shape(self.shape.begin(), self.shape.end() - 1);
  return {
      TensorType{self.dtype == DType::kFloat32 ? DType::kComplex64 : DType::kComplex128, shape}};
}

Outputs ViewAsReal(const ShapeContext& ctx) {
  const TensorType& self = ctx.TensorArg("self");
  if (self.dtype != DType::kComplex64 && self.dtype != DType::kComplex128) {
    DTypeRuleError(ctx, "view_as_real needs a complex tensor, got " + Str(self.dtype));
  }
  Shape shape = self.shape;
  shape.emplace_back(2);
  return {TensorType{self.dtype == DType::kComplex64 ? DType::kFloat32 : DType::kFloat64, shape}};
}

// ---- shape and views -------------------------------------------------------------------------

Outputs View(const ShapeContext& ctx) {
  const TensorType& self = FirstTensorArg(ctx);
  const std::string& size_name = ctx.schema.args.at(1).name;
  Shape size = SizeArg(ctx, size_name);
  int infer = -1;
  int64_t out_static = 1;
  std::multiset<std::string> out_symbols;
  for (size_t i = 0; i < size.size(); ++i) {
    if (size[i].is_static() && size[i].value() == -1) {
      if (infer >= 0) RuleError(ctx, "only one dimension can be inferred in " + Str(size));
      infer = static_cast<int>(i);
    } else if (size[i].is_static()) {
      if (size[i].value() < 0) RuleError(ctx, "invalid size " + Str(size));
      if (__builtin_mul_overflow(out_static, size[i].value(), &out_static)) {
        RuleError(ctx, "the element count of size " + Str(size) + " overflows a 64-bit integer");
      }
    } else {
      out_symbols.insert(size[i].symbol());
    }
  }
  int64_t in_static = 1;
  std::multiset<std::string> in_symbols;
  for (const Dim& d : self.shape) {
    if (d.is_static()) {
      if (__builtin_mul_overflow(in_static, d.value(), &in_static)) {
        RuleError(ctx, "the element count of " + Str(self.shape) + " overflows a 64-bit integer");
      }
    } else {
      in_symbols.insert(d.symbol());
    }
  }
  // Cancel the symbols both sides share.
  for (auto it = out_symbols.begin(); it != out_symbols.end();) {
    auto match = in_symbols.find(*it);
    if (match != in_symbols.end()) {
      in_symbols.erase(match);
      it = out_symbols.erase(it);
    } else {
      ++it;
    }
  }
  const std::string invalid =
      "shape " + Str(size) + " is invalid for input of shape " + Str(self.shape);
  if (infer >= 0) {
    if (out_symbols.empty()) {
      if (out_static == 0 || in_static % out_static != 0) RuleError(ctx, invalid);
      Dim d(in_static / out_static);
      for (const std::string& s : in_symbols) d = d * Dim::Symbol(s);
      size[infer] = d;
    } else {
      size[infer] = NumElements(self.shape) / (Dim(out_static) * [&] {
                      Dim p(1);
                      for (const std::string& s : out_symbols) p = p * Dim::Symbol(s);
                      return p;
                    }());
    }
  } else if (in_symbols.empty() && out_symbols.empty() && in_static != out_static) {
    RuleError(ctx, invalid);
  }
  return {TensorType{self.dtype, size}};
}

Outputs Expand(const ShapeContext& ctx) {
  const TensorType& self = ctx.TensorArg("self");
  Shape size = SizeArg(ctx, "size");
  if (size.size() < self.shape.size()) {
    RuleError(ctx, "size " + Str(size) + " has fewer dims than the tensor " + Str(self.shape));
  }
  size_t offset = size.size() - self.shape.size();
  for (size_t i = 0; i < size.size(); ++i) {
    bool keep = size[i].is_static() && size[i].value() == -1;
    if (i < offset) {
      if (keep) RuleError(ctx, "-1 is not allowed for a new leading dim in " + Str(size));
      continue;
    }
    const Dim& have = self.shape[i - offset];
    if (keep) {
      size[i] = have;
    } else if (!IsStaticOne(have) && KnownDifferent(have, size[i])) {
      RuleError(ctx, "cannot expand " + Str(self.shape) + " to " + Str(size));
    }
  }
  return {TensorType{self.dtype, size}};
}

Outputs Permute(const ShapeContext& ctx) {
  const TensorType& self = ctx.TensorArg("self");
  std::vector<int64_t> dims = IntListArg(ctx, "dims");
  int64_t rank = static_cast<int64_t>(self.shape.size());
  if (static_cast<int64_t>(dims.size()) != rank) {
    RuleError(ctx, "dims " + DimList(dims) + " do not match a tensor of rank " +
                       std::to_string(rank));
  }
  std::set<int64_t> seen;
  Shape out;
  for (int64_t d : dims) {
    int64_t w = NormalizeDim(ctx, d, rank);
    if (!seen.insert(w).second) RuleError(ctx, "dims " + DimList(dims) + " repeat a dim");
    out.push_back(self.shape[w]);
  }
  return {TensorType{self.dtype, out}};
}

Outputs Transpose(const ShapeContext& ctx) {
  TensorType t = ctx.TensorArg("self");
  int64_t rank = static_cast<int64_t>(t.shape.size());
  if (rank == 0) return {t};
  int64_t a = NormalizeDim(ctx, IntArg(ctx, "dim0"), rank);
  int64_t b = NormalizeDim(ctx, IntArg(ctx, "dim1"), rank);
  std::swap(t.shape[a], t.shape[b]);
  return {t};
}

Outputs T(const ShapeContext& ctx) {
  TensorType t = ctx.TensorArg("self");
  if (t.shape.size() > 2) RuleError(ctx, "expects a tensor with <= 2 dims, got " + Str(t.shape));
  if (t.shape.size() == 2) std::swap(t.shape[0], t.shape[1]);
  return {t};
}

Outputs Unsqueeze(const ShapeContext& ctx) {
  TensorType t = ctx.TensorArg("self");
  int64_t d = NormalizeDim(ctx, IntArg(ctx, "dim"), static_cast<int64_t>(t.shape.size()) + 1);
  t.shape.insert(t.shape.begin() + d, Dim(1));
  return {t};
}

Outputs SqueezeDims(const ShapeContext& ctx) {
  const TensorType& self = ctx.TensorArg("self");
  int64_t rank = static_cast<int64_t>(self.shape.size());
  std::set<int64_t> dims;
  for (int64_t d : IntListArg(ctx, "dim")) dims.insert(NormalizeDim(ctx, d, rank));
  TensorType out{self.dtype, {}};
  for (int64_t i = 0; i < rank; ++i) {
    if (dims.count(i) && IsStaticOne(self.shape[i])) continue;
    out.shape.push_back(self.shape[i]);
  }
  return {out};
}

Outputs Squeeze(const ShapeContext& ctx) {
  const TensorType& self = ctx.TensorArg("self");
  TensorType out{self.dtype, {}};
  for (const Dim& d : self.shape) {
    if (!IsStaticOne(d)) out.shape.push_back(d);
  }
  return {out};
}

Outputs Select(const ShapeContext& ctx) {
  TensorType t = ctx.TensorArg("self");
  if (t.shape.empty()) RuleError(ctx, "cannot select from a 0-D tensor");
  int64_t d = NormalizeDim(ctx, IntArg(ctx, "dim"), static_cast<int64_t>(t.shape.size()));
  Dim index = DimArg(ctx, "index");
  if (index.is_static() && t.shape[d].is_static()) {
    int64_t size = t.shape[d].value();
    if (index.value() < -size || index.value() >= size) {
      RuleError(ctx, "index " + std::to_string(index.value()) + " out of range for dim " +
                         std::to_string(d) + " of size " + std::to_string(size));
    }
  }
  t.shape.erase(t.shape.begin() + d);
  return {t};
}

Outputs Slice(const ShapeContext& ctx) {
  const TensorType& self = ctx.TensorArg("self");
  return {TensorType{self.dtype, SliceShape(ctx, self.shape)}};
}

Outputs SliceScatter(const ShapeContext& ctx) {
  const TensorType& self = ctx.TensorArg("self");
  const TensorType& src = ctx.TensorArg("src");
  Shape expected = SliceShape(ctx, self.shape);
  if (src.shape.size() != expected.size()) {
    RuleError(ctx, "src " + Str(src.shape) + " does not match the slice " + Str(expected));
  }
  for (size_t i = 0; i < expected.size(); ++i) {
    if (KnownDifferent(src.shape[i], expected[i])) {
      RuleError(ctx, "src " + Str(src.shape) + " does not match the slice " + Str(expected));
    }
  }
  return {self};
}

Outputs SelectScatter(const ShapeContext& ctx) {
  const TensorType& self = ctx.TensorArg("self");
  Shape expected = Select(ctx)[0]->shape;
  const TensorType& src = ctx.TensorArg("src");
  if (src.shape.size() != expected.size() || !BroadcastsTo(src.shape, expected)) {
    RuleError(ctx, "src " + Str(src.shape) + " does not match the selection " + Str(expected));
  }
  return {self};
}

Outputs Cat(const ShapeContext& ctx) {
  std::vector<TensorType> all = ctx.TensorListArg("tensors");
  if (all.empty()) RuleError(ctx, "expected a non-empty list of tensors");
  // Legacy behaviour: 1-D empty tensors are skipped.
  std::vector<TensorType> parts;
  DType dtype = all[0].dtype;
  for (const TensorType& t : all) {
    dtype = PromoteTypes(dtype, t.dtype);
    if (t.shape.size() == 1 && t.shape[0] == Dim(0)) continue;
    parts.push_back(t);
  }
  if (parts.empty()) return {TensorType{dtype, {0}}};
  Shape out = parts[0].shape;
  if (out.empty()) RuleError(ctx, "zero-dimensional tensors cannot be concatenated");
  int64_t d = NormalizeDim(ctx, IntArg(ctx, "dim"), static_cast<int64_t>(out.size()));
  for (size_t p = 1; p < parts.size(); ++p) {
    const Shape& s = parts[p].shape;
    bool mismatch = s.size() != out.size();
    for (size_t i = 0; !mismatch && i < s.size(); ++i) {
      if (static_cast<int64_t>(i) != d && KnownDifferent(s[i], out[i])) mismatch = true;
    }
    if (mismatch) {
      RuleError(ctx, "sizes " + Str(parts[0].shape) + " and " + Str(s) +
                         " differ outside dim " + std::to_string(d));
    }
    out[d] = out[d] + s[d];
  }
  return {TensorType{dtype, out}};
}

Outputs Stack(const ShapeContext& ctx) {
  std::vector<TensorType> all = ctx.TensorListArg("tensors");
  if (all.empty()) RuleError(ctx, "expected a non-empty list of tensors");
  DType dtype = all[0].dtype;
  for (const TensorType& t : all) {
    if (t.shape != all[0].shape) {
      RuleError(ctx, "stack expects equal shapes, got " + Str(all[0].shape) + " and " +
                         Str(t.shape));
    }
    dtype = PromoteTypes(dtype, t.dtype);
  }
  Shape out = all[0].shape;
  int64_t d = NormalizeDim(ctx, IntArg(ctx, "dim"), static_cast<int64_t>(out.size()) + 1);
  out.insert(out.begin() + d, Dim(static_cast<int64_t>(all.size())));
  return {TensorType{dtype, out}};
}

Outputs SplitWithSizes(const ShapeContext& ctx) {
  const TensorType& self = ctx.TensorArg("self");
  if (self.shape.empty()) RuleError(ctx, "cannot split a 0-D tensor");
  int64_t d = NormalizeDim(ctx, IntArg(ctx, "dim"), static_cast<int64_t>(self.shape.size()));
  Shape sizes = SizeArg(ctx, "split_sizes");
  Dim total(0);
  Outputs out;
  for (const Dim& s : sizes) {
    total = total + s;
    TensorType part = self;
    part.shape[d] = s;
    out.push_back(part);
  }
  if (KnownDifferent(total, self.shape[d])) {
    RuleError(ctx, "split sizes " + Str(sizes) + " sum to " + total.ToString() + " but dim " +
                       std::to_string(d) + " of " + Str(self.shape) + " has size " +
                       self.shape[d].ToString());
  }
  return out;
}

Outputs Split(const ShapeContext& ctx) {
  const TensorType& self = ctx.TensorArg("self");
  if (self.shape.empty()) RuleError(ctx, "cannot split a 0-D tensor");
  int64_t d = NormalizeDim(ctx, IntArg(ctx, "dim"), static_cast<int64_t>(self.shape.size()));
  int64_t chunk = IntArg(ctx, "split_size");
  if (chunk <= 0) RuleError(ctx, "split_size must be positive");
  if (!self.shape[d].is_static()) {
    RuleError(ctx, "cannot split symbolic dim " + self.shape[d].ToString());
  }
  int64_t size = self.shape[d].value();
  Outputs out;
  for (int64_t start = 0; start < size || (size == 0 && out.empty()); start += chunk) {
    TensorType part = self;
    part.shape[d] = Dim(std::min(chunk, size - start));
    out.push_back(part);
    if (size == 0) break;
  }
  return out;
}

// ---- reductions and normalizations -----------------------------------------------------------

Outputs SumAll(const ShapeContext& ctx) {
  const TensorType& self = FirstTensorArg(ctx);
  return {TensorType{DTypeArg(ctx, "dtype").value_or(SumDType(self.dtype)), {}}};
}

Outputs SumDims(const ShapeContext& ctx) {
  const TensorType& self = FirstTensorArg(ctx);
  return ReduceWith(ctx, DTypeArg(ctx, "dtype").value_or(SumDType(self.dtype)));
}

Outputs MeanAll(const ShapeContext& ctx) { return {TensorType{MeanDType(ctx), {}}}; }

Outputs MeanDims(const ShapeContext& ctx) { return ReduceWith(ctx, MeanDType(ctx)); }

Outputs AmaxDims(const ShapeContext& ctx) { return ReduceWith(ctx, FirstTensorArg(ctx).dtype); }

Outputs MaxAll(const ShapeContext& ctx) { return {TensorType{FirstTensorArg(ctx).dtype, {}}}; }

Outputs MaxDim(const ShapeContext& ctx) {
  const TensorType& self = ctx.TensorArg("self");
  Shape shape = ReducedShape(ctx, self.shape, {IntArg(ctx, "dim")}, BoolArg(ctx, "keepdim"));
  return {TensorType{self.dtype, shape}, TensorType{DType::kInt64, shape}};
}

Outputs Argmax(const ShapeContext& ctx) {
  const TensorType& self = ctx.TensorArg("self");
  auto dim = OptionalIntArg(ctx, "dim");
  bool keepdim = BoolArg(ctx, "keepdim");
  Shape shape;
  if (dim) {
    shape = ReducedShape(ctx, self.shape, {*dim}, keepdim);
  } else if (keepdim) {
    shape = Shape(self.shape.size(), Dim(1));
  }
  return {TensorType{DType::kInt64, shape}};
}

Outputs Logsumexp(const ShapeContext& ctx) {
  return ReduceWith(ctx, ToFloating(FirstTensorArg(ctx).dtype));
}

namespace {
DType VarDType(const ShapeContext& ctx) {
  DType d = FirstTensorArg(ctx).dtype;
  if (d == DType::kComplex64) return DType::kFloat32;
  if (d == DType::kComplex128) return DType::kFloat64;
  if (!IsFloatingPoint(d)) DTypeRuleError(ctx, "expected a floating point input, got " + Str(d));
  return d;
}
}  // namespace

Outputs Var(const ShapeContext& ctx) { return ReduceWith(ctx, VarDType(ctx)); }

Outputs VarMean(const ShapeContext& ctx) {
  Outputs var = ReduceWith(ctx, VarDType(ctx));
  TensorType mean = *var[0];
  mean.dtype = FirstTensorArg(ctx).dtype;
  return {var[0], mean};
}

Outputs VectorNorm(const ShapeContext& ctx) {
  DType d = DTypeArg(ctx, "dtype").value_or(FirstTensorArg(ctx).dtype);
  if (!IsFloatingPoint(d) && !IsComplex(d)) {
    DTypeRuleError(ctx, "expected a floating point or complex input, got " + Str(d));
  }
  if (d == DType::kComplex64) d = DType::kFloat32;
  if (d == DType::kComplex128) d = DType::kFloat64;
  return ReduceWith(ctx, d);
}

Outputs Cumsum(const ShapeContext& ctx) {
  TensorType t = ctx.TensorArg("self");
  NormalizeDim(ctx, IntArg(ctx, "dim"), static_cast<int64_t>(t.shape.size()));
  t.dtype = DTypeArg(ctx, "dtype").value_or(SumDType(t.dtype));
  return {t};
}

Outputs Topk(const ShapeContext& ctx) {
  TensorType t = ctx.TensorArg("self");
  Dim k = DimArg(ctx, "k");
  if (t.shape.empty()) return {t, TensorType{DType::kInt64, {}}};
  int64_t d = NormalizeDim(ctx, IntArg(ctx, "dim"), static_cast<int64_t>(t.shape.size()));
  if (k.is_static() && t.shape[d].is_static() &&
      (k.value() < 0 || k.value() > t.shape[d].value())) {
    RuleError(ctx, "k " + k.ToString() + " out of range for dim of size " +
                       t.shape[d].ToString());
  }
  t.shape[d] = k;
  return {t, TensorType{DType::kInt64, t.shape}};
}

Outputs Sort(const ShapeContext& ctx) {
  const TensorType& t = ctx.TensorArg("self");
  NormalizeDim(ctx, IntArg(ctx, "dim"), static_cast<int64_t>(t.shape.size()));
  return {t, TensorType{DType::kInt64, t.shape}};
}

namespace {
// Checks that `normalized` is the trailing part of the input shape; returns the split axis.
size_t NormalizedAxis(const ShapeContext& ctx, const Shape& input, const Shape& normalized) {
  if (normalized.empty() || normalized.size() > input.size()) {
    RuleError(ctx, "normalized_shape " + Str(normalized) + " does not fit input " + Str(input));
  }
  size_t axis = input.size() - normalized.size();
  for (size_t i = 0; i < normalized.size(); ++i) {
    if (KnownDifferent(input[axis + i], normalized[i])) {
      RuleError(ctx, "normalized_shape " + Str(normalized) + " is not the trailing shape of " +
                         Str(input));
    }
  }
  return axis;
}

void CheckAffine(const ShapeContext& ctx, const std::string& name, const Shape& normalized) {
  if (!ctx.args[name].is_tensor()) return;
  const TensorType& t = ctx.TensorArg(name);
  bool ok = t.shape.size() == normalized.size();
  for (size_t i = 0; ok && i < t.shape.size(); ++i) ok = !KnownDifferent(t.shape[i], normalized[i]);
  if (!ok) {
    RuleError(ctx, name + " " + Str(t.shape) + " does not match normalized_shape " +
                       Str(normalized));
  }
}
}  // namespace

Outputs LayerNorm(const ShapeContext& ctx) {
  const TensorType& input = ctx.TensorArg("input");
  Shape normalized = SizeArg(ctx, "normalized_shape");
  size_t axis = NormalizedAxis(ctx, input.shape, normalized);
  CheckAffine(ctx, "weight", normalized);
  CheckAffine(ctx, "bias", normalized);
  Shape stats(input.shape.begin(), input.shape.begin() + axis);
  stats.resize(input.shape.size(), Dim(1));
  DType stats_dtype = StatsDType(input.dtype);
  return {input, TensorType{stats_dtype, stats}, TensorType{stats_dtype, stats}};
}

Outputs LayerNormBackward(const ShapeContext& ctx) {
  const TensorType& grad = ctx.TensorArg("grad_out");
  const TensorType& input = ctx.TensorArg("input");
  if (grad.shape != input.shape) {
    RuleError(ctx, "grad_out " + Str(grad.shape) + " and input " + Str(input.shape) + " differ");
  }
  Shape normalized = SizeArg(ctx, "normalized_shape");
  NormalizedAxis(ctx, input.shape, normalized);
  const Value& mask = ctx.args["output_mask"];
  if (!mask.is_list() || mask.as_list().size() != 3) {
    RuleError(ctx, "output_mask must be a list of 3 bools");
  }
  auto wanted = [&](int i) {
    const Value& m = mask.as_list()[i];
    return m.is_bool() ? m.as_bool() : m.is_int() && m.as_int() != 0;
  };
  Outputs out;
  out.push_back(wanted(0) ? std::optional<TensorType>(input) : std::nullopt);
  for (const char* name : {"weight", "bias"}) {
    int i = std::string(name) == "weight" ? 1 : 2;
    if (wanted(i) && ctx.args[name].is_tensor()) {
      out.push_back(ctx.TensorArg(name));
    } else {
      out.push_back(std::nullopt);
    }
  }
  return out;
}

Outputs NllLossForward(const ShapeContext& ctx) {
  const TensorType& self = ctx.TensorArg("self");
  const TensorType& target = ctx.TensorArg("target");
  if (self.shape.empty() || self.shape.size() > 2) {
    RuleError(ctx, "input must be 1-D or 2-D, got " + Str(self.shape));
  }
  RequireIntegral(ctx, "target", target);
  Shape batch(self.shape.begin(), self.shape.end() - 1);
  if (target.shape.size() != batch.size() ||
      (!batch.empty() && KnownDifferent(batch[0], target.shape[0]))) {
    RuleError(ctx, "target " + Str(target.shape) + " does not match input " + Str(self.shape));
  }
  Shape out = IntArg(ctx, "reduction") == 0 ? batch : Shape{};
  return {TensorType{self.dtype, out}, TensorType{self.dtype, {}}};
}

Outputs NllLossBackward(const ShapeContext& ctx) { return {ctx.TensorArg("self")}; }

// ---- indexing --------------------------------------------------------------------------------

Outputs Index(const ShapeContext& ctx) {
  const TensorType& self = ctx.TensorArg("self");
  auto indices = OptionalTensorListArg(ctx, "indices");
  const Value::List& raw = ctx.args["indices"].as_list();
  // One entry per self dim the index list consumes. A bool mask of rank k consumes k dims and
  // contributes one (data-dependent) dim to the broadcast index shape.
  struct Consumed {
    bool indexed = false;
    bool contributes = false;
    Shape shape;
  };
  std::vector<Consumed> consumed;
  for (size_t i = 0; i < indices.size(); ++i) {
    const auto& idx = indices[i];
    if (!idx) {
      consumed.push_back({});
    } else if (idx->dtype == DType::kBool || idx->dtype == DType::kUInt8) {
      size_t base = consumed.size();
      bool fits = base + idx->shape.size() <= self.shape.size();
      for (size_t k = 0; fits && k < idx->shape.size(); ++k) {
        fits = !KnownDifferent(idx->shape[k], self.shape[base + k]);
      }
      if (!fits) {
        RuleError(ctx, "mask " + Str(idx->shape) + " does not match the indexed dims of " +
                           Str(self.shape));
      }
      Dim count = Dim::Symbol("nnz_" + ctx.graph.ValueName(raw[i].as_tensor()));
      consumed.push_back({true, true, {count}});
      for (size_t k = 1; k < idx->shape.size(); ++k) consumed.push_back({true, false, {}});
    } else {
      RequireIntegral(ctx, "index", *idx);
      consumed.push_back({true, true, idx->shape});
    }
  }
  if (consumed.size() > self.shape.size()) {
    RuleError(ctx, "too many indices (" + std::to_string(consumed.size()) + ") for " +
                       Str(self.shape));
  }
  Shape index_shape;
  bool any = false;
  int first_dim = -1, last_dim = -1;
  for (size_t i = 0; i < consumed.size(); ++i) {
    if (!consumed[i].indexed) continue;
    if (first_dim < 0) first_dim = static_cast<int>(i);
    last_dim = static_cast<int>(i);
    if (!consumed[i].contributes) continue;
    index_shape = any ? BroadcastShapes(ctx, index_shape, consumed[i].shape) : consumed[i].shape;
    any = true;
  }
  if (first_dim < 0) return {self};
  bool adjacent = true;
  for (int i = first_dim; i <= last_dim; ++i) adjacent = adjacent && consumed[i].indexed;
  Shape out;
  if (adjacent) {
    // The index shape replaces the indexed dims in place.
    out.assign(self.shape.begin(), self.shape.begin() + first_dim);
    out.insert(out.end(), index_shape.begin(), index_shape.end());
    out.insert(out.end(), self.shape.begin() + last_dim + 1, self.shape.end());
  } else {
    // Indexed dims separated by a slice: the index shape goes first.
    out = index_shape;
    for (size_t i = 0; i < self.shape.size(); ++i) {
      if (i >= consumed.size() || !consumed[i].indexed) out.push_back(self.shape[i]);
    }
  }
  return {TensorType{self.dtype, out}};
}

Outputs IndexPut(const ShapeContext& ctx) {
  const TensorType& self = ctx.TensorArg("self");
  const TensorType& values = ctx.TensorArg("values");
  if (values.dtype != self.dtype) {
    DTypeRuleError(ctx, "values dtype " + Str(values.dtype) + " differs from self dtype " +
                            Str(self.dtype));
  }
  OptionalTensorListArg(ctx, "indices");  // validates the list
  return {self};
}

Outputs Embedding(const ShapeContext& ctx) {
  const TensorType& weight = ctx.TensorArg("weight");
  const TensorType& indices = ctx.TensorArg("indices");
  RequireRank(ctx, "weight", weight, 2);
  RequireIntegral(ctx, "indices", indices);
  Shape out = indices.shape;
  out.push_back(weight.shape[1]);
  return {TensorType{weight.dtype, out}};
}

Outputs EmbeddingDenseBackward(const ShapeContext& ctx) {
  const TensorType& grad = ctx.TensorArg("grad_output");
  const TensorType& indices = ctx.TensorArg("indices");
  RequireIntegral(ctx, "indices", indices);
  if (grad.shape.size() != indices.shape.size() + 1) {
    RuleError(ctx, "grad_output " + Str(grad.shape) + " does not match indices " +
                       Str(indices.shape));
  }
  return {TensorType{grad.dtype, {DimArg(ctx, "num_weights"), grad.shape.back()}}};
}

Outputs Gather(const ShapeContext& ctx) {
  const TensorType& self = ctx.TensorArg("self");
  const TensorType& index = ctx.TensorArg("index");
  RequireIntegral(ctx, "index", index);
  NormalizeDim(ctx, IntArg(ctx, "dim"), static_cast<int64_t>(self.shape.size()));
  if (index.shape.size() != self.shape.size() && !(self.shape.empty() && index.shape.size() <= 1)) {
    RuleError(ctx, "index " + Str(index.shape) + " and self " + Str(self.shape) +
                       " differ in rank");
  }
  return {TensorType{self.dtype, index.shape}};
}

Outputs ScatterLike(const ShapeContext& ctx) {
  const TensorType& self = ctx.TensorArg("self");
  const TensorType& index = ctx.TensorArg("index");
  RequireIntegral(ctx, "index", index);
  NormalizeDim(ctx, IntArg(ctx, "dim"), static_cast<int64_t>(self.shape.size()));
  if (index.shape.size() != self.shape.size()) {
    RuleError(ctx, "index " + Str(index.shape) + " and self " + Str(self.shape) +
                       " differ in rank");
  }
  return {self};
}

Outputs TorchtitanScatterAdd(const ShapeContext& ctx) {
  const TensorType& out = ctx.TensorArg("out");
  const TensorType& index = ctx.TensorArg("index");
  const TensorType& src = ctx.TensorArg("src");
  RequireIntegral(ctx, "index", index);
  RequireSameDType(ctx, out, src);
  if (index.shape.size() != out.shape.size() || src.shape.size() != out.shape.size()) {
    RuleError(ctx, "out " + Str(out.shape) + ", index " + Str(index.shape) + " and src " +
                       Str(src.shape) + " differ in rank");
  }
  return {out};
}

Outputs IndexSelect(const ShapeContext& ctx) {
  TensorType t = ctx.TensorArg("self");
  const TensorType& index = ctx.TensorArg("index");
  RequireIntegral(ctx, "index", index);
  if (index.shape.size() > 1) RuleError(ctx, "index must be 0-D or 1-D, got " + Str(index.shape));
  if (t.shape.empty()) return {t};
  int64_t d = NormalizeDim(ctx, IntArg(ctx, "dim"), static_cast<int64_t>(t.shape.size()));
  t.shape[d] = index.shape.empty() ? Dim(1) : index.shape[0];
  return {t};
}

// index_copy(self, dim, index, source): self's type; source is self with index's length along dim.
Outputs IndexCopy(const ShapeContext& ctx) {
  const TensorType& self = ctx.TensorArg("self");
  const TensorType& index = ctx.TensorArg("index");
  const TensorType& source = ctx.TensorArg("source");
  RequireIntegral(ctx, "index", index);
  RequireSameDType(ctx, self, source);
  if (index.shape.size() > 1) RuleError(ctx, "index must be 0-D or 1-D, got " + Str(index.shape));
  if (self.shape.empty()) return {self};
  int64_t d = NormalizeDim(ctx, IntArg(ctx, "dim"), static_cast<int64_t>(self.shape.size()));
  Shape expected = self.shape;
  expected[d] = index.shape.empty() ? Dim(1) : index.shape[0];
  if (source.shape != expected) {
    RuleError(ctx, "source " + Str(source.shape) + " must be " + Str(expected) + " (self " +
                       Str(self.shape) + " with index's length along dim " + std::to_string(d) +
                       ")");
  }
  return {self};
}

// ---- factories -------------------------------------------------------------------------------

Outputs FromSize(const ShapeContext& ctx) {
  Shape size = SizeArg(ctx, "size");
  for (const Dim& d : size) {
    if (d.is_static() && d.value() < 0) RuleError(ctx, "negative size in " + Str(size));
  }
  return {TensorType{DTypeArg(ctx, "dtype").value_or(DType::kFloat32), size}};
}

Outputs Full(const ShapeContext& ctx) {
  const Value& fill = ctx.args["fill_value"];
  DType inferred = fill.is_bool() ? DType::kBool : fill.is_int() ? DType::kInt64 : DType::kFloat32;
  Outputs out = FromSize(ctx);
  out[0]->dtype = DTypeArg(ctx, "dtype").value_or(inferred);
  return out;
}

Outputs Like(const ShapeContext& ctx) {
  TensorType t = ctx.TensorArg("self");
  t.dtype = DTypeArg(ctx, "dtype").value_or(t.dtype);
  return {t};
}

Outputs NewFromSize(const ShapeContext& ctx) {
  Outputs out = FromSize(ctx);
  out[0]->dtype = DTypeArg(ctx, "dtype").value_or(ctx.TensorArg("self").dtype);
  return out;
}

Outputs ScalarTensor(const ShapeContext& ctx) {
  if (!ctx.args["s"].is_number()) RuleError(ctx, "argument 's' must be a number");
  return {TensorType{DTypeArg(ctx, "dtype").value_or(DType::kFloat32), {}}};
}

Outputs Arange(const ShapeContext& ctx) {
  const Value start = ctx.args.has("start") ? ctx.args["start"] : Value(int64_t{0});
  const Value end = ctx.args["end"];
  const Value step = ctx.args.has("step") ? ctx.args["step"] : Value(int64_t{1});
  bool floating = false;
  for (const Value* v : {&start, &end, &step}) {
    if (v->is_double()) floating = true;
    if (!v->is_number() && !v->is_string()) RuleError(ctx, "arange bounds must be numbers");
  }
  DType dtype = DTypeArg(ctx, "dtype").value_or(floating ? DType::kFloat32 : DType::kInt64);
  Dim length;
  if (start.is_number() && end.is_number() && step.is_number()) {
    double s = start.as_double(), e = end.as_double(), st = step.as_double();
    if (st == 0) RuleError(ctx, "step must be nonzero");
    double n = std::ceil((e - s) / st);
    if (n < 0) RuleError(ctx, "upper bound and step are inconsistent");
    length = Dim(static_cast<int64_t>(n));
  } else {
    if (!step.is_int() || step.as_int() != 1) RuleError(ctx, "symbolic arange needs step 1");
    Dim s = start.is_string() ? Dim::Symbol(start.as_string()) : Dim(start.as_int());
    Dim e = end.is_string() ? Dim::Symbol(end.as_string()) : Dim(end.as_int());
    length = e - s;
  }
  return {TensorType{dtype, {length}}};
}

// ---- collectives -----------------------------------------------------------------------------

Outputs AllGather(const ShapeContext& ctx) {
  TensorType t = FirstTensorArg(ctx);
  if (t.shape.empty()) RuleError(ctx, "cannot gather a 0-D tensor along dim 0");
  t.shape[0] = t.shape[0] * Dim(GroupSize(ctx));
  return {t};
}

Outputs ReduceScatter(const ShapeContext& ctx) {
  TensorType t = FirstTensorArg(ctx);
  if (t.shape.empty()) RuleError(ctx, "cannot scatter a 0-D tensor along dim 0");
  int64_t group = GroupSize(ctx);
  if (t.shape[0].is_static() && t.shape[0].value() % group != 0) {
    RuleError(ctx, "dim 0 of " + Str(t.shape) + " is not divisible by the group size " +
                       std::to_string(group));
  }
  t.shape[0] = t.shape[0] / Dim(group);
  return {t};
}

Outputs AllToAllSingle(const ShapeContext& ctx) {
  TensorType t = FirstTensorArg(ctx);
  if (t.shape.empty()) RuleError(ctx, "cannot exchange a 0-D tensor along dim 0");
  if (!ctx.args["output_split_sizes"].is_none()) {
    Dim total(0);
    for (const Dim& d : SizeArg(ctx, "output_split_sizes")) total = total + d;
    t.shape[0] = total;
  }
  if (!ctx.args["input_split_sizes"].is_none()) {
    Dim total(0);
    for (const Dim& d : SizeArg(ctx, "input_split_sizes")) total = total + d;
    if (KnownDifferent(total, FirstTensorArg(ctx).shape[0])) {
      RuleError(ctx, "input split sizes sum to " + total.ToString() + ", dim 0 is " +
                         FirstTensorArg(ctx).shape[0].ToString());
    }
  }
  return {t};
}

Outputs SendOrRecvList(const ShapeContext& ctx) {
  const size_t n = ctx.TensorListArg("tensors").size();
  if (n != 1) {
    RuleError(ctx, "transfers " + std::to_string(n) +
                       " tensors in one call; a process group sends or receives one tensor per "
                       "call (torch.distributed.send/recv)");
  }
  return {std::nullopt};
}

Outputs FunctionalSend(const ShapeContext& ctx) {
  return {TensorType{FirstTensorArg(ctx).dtype, {Dim(0)}}};
}

// ---- custom kernels --------------------------------------------------------------------------

namespace {
// The per-row statistics apex saves: flat, one entry per row of `input` (the dims before the
// normalized ones), in apex's accumulation type.
TensorType ApexStats(const ShapeContext& ctx, const TensorType& input, const Shape& normalized) {
  NormalizedAxis(ctx, input.shape, normalized);
  return {StatsDType(input.dtype),
          {NumElements(Shape(input.shape.begin(), input.shape.end() - normalized.size()))}};
}

// An apex backward: grad_output like input_or_output, the saved statistics `stats` (mean and
// invvar, or invvar) one entry per row, the affine parameters `affine` over the normalized
// shape. Returns input_or_output's type followed by the affine parameters' (the gradients).
Outputs ApexBackward(const ShapeContext& ctx, std::initializer_list<const char*> stats,
                     std::initializer_list<const char*> affine) {
  const TensorType& input = ctx.TensorArg("input_or_output");
  Shape normalized = SizeArg(ctx, "normalized_shape");
  TensorType expected = ApexStats(ctx, input, normalized);
  const TensorType& grad = ctx.TensorArg("grad_output");
  if (grad.shape != input.shape) {
    RuleError(ctx, "grad_output " + Str(grad.shape) + " and input_or_output " + Str(input.shape) +
                       " differ");
  }
  for (const char* name : stats) {
    const TensorType& t = ctx.TensorArg(name);
    if (t.shape.size() != 1 || KnownDifferent(t.shape[0], expected.shape[0])) {
      RuleError(ctx, std::string(name) + " " + Str(t.shape) + " is not one entry per row (" +
                         Str(expected.shape) + ")");
    }
  }
  Outputs out{input};
  for (const char* name : affine) {
    CheckAffine(ctx, name, normalized);
    out.push_back(ctx.TensorArg(name));
  }
  return out;
}
}  // namespace

Outputs ApexLayerNorm(const ShapeContext& ctx) {
  const TensorType& input = ctx.TensorArg("input");
  Shape normalized = SizeArg(ctx, "normalized_shape");
  TensorType stats = ApexStats(ctx, input, normalized);  // mean and invvar
  CheckAffine(ctx, "weight", normalized);
  CheckAffine(ctx, "bias", normalized);
  return {input, stats, stats};
}

Outputs ApexLayerNormBackward(const ShapeContext& ctx) {
  return ApexBackward(ctx, {"mean", "invvar"}, {"weight", "bias"});
}

Outputs ApexRmsNorm(const ShapeContext& ctx) {
  const TensorType& input = ctx.TensorArg("input");
  Shape normalized = SizeArg(ctx, "normalized_shape");
  TensorType stats = ApexStats(ctx, input, normalized);
  CheckAffine(ctx, "weight", normalized);
  return {input, stats};
}

Outputs ApexRmsNormBackward(const ShapeContext& ctx) {
  return ApexBackward(ctx, {"invvar"}, {"weight"});
}

namespace {
void RequireSameShape(const ShapeContext& ctx, const std::string& a, const std::string& b) {
  const TensorType& ta = ctx.TensorArg(a);
  const TensorType& tb = ctx.TensorArg(b);
  bool ok = ta.shape.size() == tb.shape.size();
  for (size_t i = 0; ok && i < ta.shape.size(); ++i) ok = !KnownDifferent(ta.shape[i], tb.shape[i]);
  if (!ok) RuleError(ctx, a + " " + Str(ta.shape) + " and " + b + " " + Str(tb.shape) + " differ");
}

void RequireHiddenWeight(const ShapeContext& ctx, const std::string& input) {
  const TensorType& x = ctx.TensorArg(input);
  const TensorType& w = ctx.TensorArg("weight");
  if (x.shape.empty() || w.shape.size() != 1 || KnownDifferent(w.shape[0], x.shape.back())) {
    RuleError(ctx, "weight " + Str(w.shape) + " does not match the hidden size of " +
                       Str(x.shape));
  }
}
}  // namespace

Outputs RmsNorm(const ShapeContext& ctx) {
  RequireSameShape(ctx, "result", "input");
  RequireHiddenWeight(ctx, "input");
  return {};
}

Outputs FusedAddRmsNorm(const ShapeContext& ctx) {
  RequireSameShape(ctx, "input", "residual");
  RequireHiddenWeight(ctx, "input");
  return {};
}

Outputs SiluAndMul(const ShapeContext& ctx) {
  const TensorType& out = ctx.TensorArg("out");
  const TensorType& input = ctx.TensorArg("input");
  bool ok = !out.shape.empty() && out.shape.size() == input.shape.size();
  for (size_t i = 0; ok && i + 1 < out.shape.size(); ++i) {
    ok = !KnownDifferent(out.shape[i], input.shape[i]);
  }
  if (ok) ok = !KnownDifferent(out.shape.back() * Dim(2), input.shape.back());
  if (!ok) {
    RuleError(ctx, "out " + Str(out.shape) + " must be input " + Str(input.shape) +
                       " with the last dim halved");
  }
  return {};
}

Outputs RotaryEmbedding(const ShapeContext& ctx) {
  const TensorType& positions = ctx.TensorArg("positions");
  const TensorType& query = ctx.TensorArg("query");
  RequireIntegral(ctx, "positions", positions);
  int64_t head = IntArg(ctx, "head_size");
  if (head <= 0) RuleError(ctx, "head_size must be positive");
  auto check = [&](const std::string& name, const TensorType& t) {
    if (t.shape.empty() || (t.shape.back().is_static() && t.shape.back().value() % head != 0)) {
      RuleError(ctx, name + " " + Str(t.shape) + " is not a multiple of head_size " +
                         std::to_string(head));
    }
    if (!positions.shape.empty() && KnownDifferent(t.shape[0], positions.shape[0])) {
      RuleError(ctx, name + " " + Str(t.shape) + " and positions " + Str(positions.shape) +
                         " differ in tokens");
    }
  };
  check("query", query);
  if (ctx.args["key"].is_tensor()) check("key", ctx.TensorArg("key"));
  return {};
}

Outputs UnifiedAttention(const ShapeContext& ctx) {
  const TensorType& query = ctx.TensorArg("query");
  const TensorType& output = ctx.TensorArg("output");
  if (query.shape.empty() || output.shape.empty() ||
      KnownDifferent(query.shape[0], output.shape[0])) {
    RuleError(ctx, "output " + Str(output.shape) + " and query " + Str(query.shape) +
                       " differ in tokens");
  }
  const TensorType& key = ctx.TensorArg("key");
  const TensorType& value = ctx.TensorArg("value");
  if (key.shape.empty() || value.shape.empty() || KnownDifferent(key.shape[0], value.shape[0])) {
    RuleError(ctx, "key " + Str(key.shape) + " and value " + Str(value.shape) + " differ");
  }
  return {};
}

}  // namespace rules
}  // namespace gg::ir
