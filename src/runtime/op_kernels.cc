#include "runtime/op_kernels.h"

#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

#include <ATen/core/dispatch/Dispatcher.h>

#include "util/diagnostic.h"

namespace gg::runtime {

at::ScalarType ToAten(ir::DType dtype) {
  switch (dtype) {
    case ir::DType::kBool: return at::kBool;
    case ir::DType::kUInt8: return at::kByte;
    case ir::DType::kInt8: return at::kChar;
    case ir::DType::kInt16: return at::kShort;
    case ir::DType::kInt32: return at::kInt;
    case ir::DType::kInt64: return at::kLong;
    case ir::DType::kFloat16: return at::kHalf;
    case ir::DType::kBFloat16: return at::kBFloat16;
    case ir::DType::kFloat32: return at::kFloat;
    case ir::DType::kFloat64: return at::kDouble;
    case ir::DType::kComplex64: return at::kComplexFloat;
    case ir::DType::kComplex128: return at::kComplexDouble;
  }
  throw std::invalid_argument("unknown dtype");
}

ir::DType FromAten(at::ScalarType type) {
  switch (type) {
    case at::kBool: return ir::DType::kBool;
    case at::kByte: return ir::DType::kUInt8;
    case at::kChar: return ir::DType::kInt8;
    case at::kShort: return ir::DType::kInt16;
    case at::kInt: return ir::DType::kInt32;
    case at::kLong: return ir::DType::kInt64;
    case at::kHalf: return ir::DType::kFloat16;
    case at::kBFloat16: return ir::DType::kBFloat16;
    case at::kFloat: return ir::DType::kFloat32;
    case at::kDouble: return ir::DType::kFloat64;
    case at::kComplexFloat: return ir::DType::kComplex64;
    case at::kComplexDouble: return ir::DType::kComplex128;
    default: break;
  }
  throw std::invalid_argument(std::string("ATen dtype without a GraphGuard equivalent: ") +
                              c10::toString(type));
}

// ---- KernelCall --------------------------------------------------------------------------------

KernelCall::KernelCall(const ir::Node& node, const ir::BoundArgs& args, TensorLookup lookup,
                       const std::map<std::string, at::Tensor>& overrides, RandomMode random,
                       at::Device device)
    : node_(node), args_(args), lookup_(std::move(lookup)), overrides_(overrides),
      random_(random), device_(device) {}

void KernelCall::Fail(const std::string& arg, const std::string& problem) const {
  throw std::invalid_argument("argument '" + arg + "' " + problem);
}

const ir::Value& KernelCall::Arg(const std::string& arg) const {
  if (!args_.has(arg)) Fail(arg, "is missing");
  return args_[arg];
}

std::string KernelCall::EnumName(const std::string& arg) const {
  if (!args_.has(arg) || !args_[arg].is_enum()) return "";
  return args_[arg].as_enum().name;
}

bool KernelCall::IsNone(const std::string& arg) const {
  return !args_.has(arg) || args_[arg].is_none();
}

bool KernelCall::IsNumber(const std::string& arg) const {
  return args_.has(arg) && args_[arg].is_number();
}

at::Tensor KernelCall::Tensor(const std::string& arg) const {
  if (auto it = overrides_.find(arg); it != overrides_.end()) return it->second;
  const ir::Value& value = Arg(arg);
  if (value.is_tensor()) return lookup_(value.as_tensor());
  if (value.is_number()) {
    // A Python number passed where a Tensor is expected: a "wrapped number", which takes part in
    // type promotion like a scalar (mul.Tensor(int64 tensor, 0) stays int64).
    at::Tensor t = c10::scalar_to_tensor(Scalar(arg));
    t.unsafeGetTensorImpl()->set_wrapped_number(true);
    return t;
  }
  Fail(arg, "is not a tensor");
}

std::optional<at::Tensor> KernelCall::OptionalTensor(const std::string& arg) const {
  if (overrides_.count(arg) == 0 && IsNone(arg)) return std::nullopt;
  return Tensor(arg);
}

std::vector<at::Tensor> KernelCall::TensorList(const std::string& arg) const {
  const ir::Value& value = Arg(arg);
  if (!value.is_list()) Fail(arg, "is not a list of tensors");
  std::vector<at::Tensor> out;
  for (const ir::Value& item : value.as_list()) {
    if (!item.is_tensor()) Fail(arg, "holds a non-tensor element");
    out.push_back(lookup_(item.as_tensor()));
  }
  return out;
}

c10::List<std::optional<at::Tensor>> KernelCall::OptionalTensorList(const std::string& arg) const {
  const ir::Value& value = Arg(arg);
  if (!value.is_list()) Fail(arg, "is not a list of optional tensors");
  c10::List<std::optional<at::Tensor>> out;
  for (const ir::Value& item : value.as_list()) {
    if (item.is_none()) {
      out.push_back(std::nullopt);
    } else if (item.is_tensor()) {
      out.push_back(lookup_(item.as_tensor()));
    } else {
      Fail(arg, "holds an element that is neither a tensor nor None");
    }
  }
  return out;
}

int64_t KernelCall::Int(const std::string& arg) const {
  const ir::Value& value = Arg(arg);
  if (value.is_int()) return value.as_int();
  if (value.is_bool()) return value.as_bool() ? 1 : 0;
  Fail(arg, "is not an int");
}

std::optional<int64_t> KernelCall::OptionalInt(const std::string& arg) const {
  if (IsNone(arg)) return std::nullopt;
  return Int(arg);
}

double KernelCall::Double(const std::string& arg) const {
  const ir::Value& value = Arg(arg);
  if (!value.is_number()) Fail(arg, "is not a number");
  return value.as_double();
}

bool KernelCall::Bool(const std::string& arg) const {
  const ir::Value& value = Arg(arg);
  if (value.is_bool()) return value.as_bool();
  if (value.is_int()) return value.as_int() != 0;
  Fail(arg, "is not a bool");
}

std::optional<bool> KernelCall::OptionalBool(const std::string& arg) const {
  if (IsNone(arg)) return std::nullopt;
  return Bool(arg);
}

std::string KernelCall::String(const std::string& arg) const {
  const ir::Value& value = Arg(arg);
  if (!value.is_string()) Fail(arg, "is not a string");
  return value.as_string();
}

std::vector<int64_t> KernelCall::IntList(const std::string& arg) const {
  const ir::Value& value = Arg(arg);
  if (!value.is_int_list()) Fail(arg, "is not a list of ints");
  return value.as_int_list();
}

std::vector<bool> KernelCall::BoolList(const std::string& arg) const {
  const ir::Value& value = Arg(arg);
  if (!value.is_list()) Fail(arg, "is not a list of bools");
  std::vector<bool> out;
  for (const ir::Value& item : value.as_list()) {
    if (item.is_bool()) {
      out.push_back(item.as_bool());
    } else if (item.is_int()) {
      out.push_back(item.as_int() != 0);
    } else {
      Fail(arg, "holds a non-bool element");
    }
  }
  return out;
}

at::Scalar KernelCall::Scalar(const std::string& arg) const {
  const ir::Value& value = Arg(arg);
  if (value.is_bool()) return at::Scalar(value.as_bool());
  if (value.is_int()) return at::Scalar(value.as_int());
  if (value.is_double()) return at::Scalar(value.as_double());
  Fail(arg, "is not a number");
}

std::optional<at::ScalarType> KernelCall::DType(const std::string& arg) const {
  if (IsNone(arg)) return std::nullopt;
  const ir::Value& value = Arg(arg);
  if (!value.is_dtype()) Fail(arg, "is not a dtype");
  return ToAten(value.as_dtype());
}

at::Tensor GroupedMm(const at::Tensor& a, const at::Tensor& b,
                     const std::optional<at::Tensor>& offs) {
  if (!offs) return at::bmm(a, b);
  const int64_t groups = offs->size(0);
  // The grouped dim's length and each index's group, #{j : offs[j] <= i}.
  const int64_t length = a.dim() == 3 ? b.size(1) : b.dim() == 3 ? a.size(0) : a.size(1);
  at::Tensor positions = at::arange(length, offs->options().dtype(at::kLong));
  at::Tensor group =
      (offs->to(at::kLong).reshape({1, groups}) <= positions.reshape({length, 1})).sum(1);
  if (a.dim() == 2 && b.dim() == 3) {  // [M, K] x [G, K, N] -> [M, N]
    at::Tensor out = at::zeros({a.size(0), b.size(2)}, a.options());
    for (int64_t g = 0; g < groups; ++g) {
      at::Tensor rows = (group == g).nonzero().reshape({-1});
      out.index_copy_(0, rows, at::mm(a.index_select(0, rows), b[g]));
    }
    return out;
  }
  if (a.dim() == 3) {  // [G, M, K] x [K, N] -> [M, N]
    at::Tensor out = at::zeros({a.size(1), b.size(1)}, a.options());
    for (int64_t g = 0; g < groups; ++g) {
      at::Tensor cols = (group == g).nonzero().reshape({-1});
      out.index_copy_(1, cols, at::mm(a[g], b.index_select(1, cols)));
    }
    return out;
  }
  // [M, K] x [K, N] -> [G, M, N]
  if (groups == 0) return at::zeros({0, a.size(0), b.size(1)}, a.options());
  std::vector<at::Tensor> products;
  for (int64_t g = 0; g < groups; ++g) {
    at::Tensor inner = (group == g).nonzero().reshape({-1});
    products.push_back(at::mm(a.index_select(1, inner), b.index_select(0, inner)));
  }
  return at::stack(products);
}

// ---- kernels by family -------------------------------------------------------------------------

namespace {

using Table = std::map<std::string, Kernel>;
using Out = std::vector<at::Tensor>;

// Dtype of a factory op: the dtype argument, else torch's default (float32).
at::ScalarType FactoryDType(const KernelCall& c) {
  return c.DType("dtype").value_or(at::kFloat);
}

void AddElementwise(Table& t) {
  t["aten::add.Tensor"] = [](const KernelCall& c) -> Out {
    return {at::add(c.Tensor("self"), c.Tensor("other"), c.Scalar("alpha"))};
  };
  t["aten::sub.Tensor"] = [](const KernelCall& c) -> Out {
    return {at::sub(c.Tensor("self"), c.Tensor("other"), c.Scalar("alpha"))};
  };
  t["aten::mul.Tensor"] = [](const KernelCall& c) -> Out {
    return {at::mul(c.Tensor("self"), c.Tensor("other"))};
  };
  t["aten::div.Tensor"] = [](const KernelCall& c) -> Out {
    return {at::div(c.Tensor("self"), c.Tensor("other"))};
  };
  t["aten::floor_divide.default"] = [](const KernelCall& c) -> Out {  // `x // 2`: a wrapped int
    return {at::floor_divide(c.Tensor("self"), c.Tensor("other"))};
  };
  t["aten::gelu.default"] = [](const KernelCall& c) -> Out {
    std::string approximate = c.IsNone("approximate") ? "none" : c.String("approximate");
    return {at::gelu(c.Tensor("self"), approximate)};
  };
  t["aten::ge.Scalar"] = [](const KernelCall& c) -> Out {
    return {at::ge(c.Tensor("self"), c.Scalar("other"))};
  };
  t["aten::lt.Scalar"] = [](const KernelCall& c) -> Out {
    return {at::lt(c.Tensor("self"), c.Scalar("other"))};
  };
  t["aten::bitwise_and.Tensor"] = [](const KernelCall& c) -> Out {
    return {at::bitwise_and(c.Tensor("self"), c.Tensor("other"))};
  };
  t["aten::bitwise_or.Tensor"] = [](const KernelCall& c) -> Out {
    return {at::bitwise_or(c.Tensor("self"), c.Tensor("other"))};
  };
  t["aten::bitwise_not.default"] = [](const KernelCall& c) -> Out {
    return {at::bitwise_not(c.Tensor("self"))};
  };
  t["aten::masked_fill.Scalar"] = [](const KernelCall& c) -> Out {
    return {at::masked_fill(c.Tensor("self"), c.Tensor("mask"), c.Scalar("value"))};
  };
  t["aten::native_dropout.default"] = [](const KernelCall& c) -> Out {
    at::Tensor input = c.Tensor("input");
    double p = c.Double("p");
    std::optional<bool> train = c.OptionalBool("train");
    if (c.random().dropout_off || !train.value_or(true) || p == 0.0) {
      return {input.clone(), at::ones_like(input, input.options().dtype(at::kBool))};
    }
    if (c.random().generator == nullptr) {
      throw std::invalid_argument("native_dropout needs a seeded generator (or dropout off)");
    }
    // As ATen's CPU native_dropout: keep with probability 1-p, scale kept values by 1/(1-p).
    at::Tensor mask;
    if (p >= 1.0) {
      mask = at::zeros_like(input, input.options().dtype(at::kBool));
      return {at::zeros_like(input), mask};
    }
    // Drawn on the CPU (RandomMode), so CPU and CUDA runs share their masks.
    at::Tensor noise = at::empty(input.sizes(), input.options().device(at::kCPU))
                           .bernoulli_(1.0 - p, *c.random().generator);
    mask = noise.to(input.device()).to(at::kBool);
    return {input.mul(mask).mul_(1.0 / (1.0 - p)), mask};
  };
}

void AddLinalg(Table& t) {
  t["aten::mm.default"] = [](const KernelCall& c) -> Out {
    return {at::mm(c.Tensor("self"), c.Tensor("mat2"))};
  };
  t["aten::bmm.default"] = [](const KernelCall& c) -> Out {
    return {at::bmm(c.Tensor("self"), c.Tensor("mat2"))};
  };
  t["aten::addmm.default"] = [](const KernelCall& c) -> Out {
    return {at::addmm(c.Tensor("self"), c.Tensor("mat1"), c.Tensor("mat2"), c.Scalar("beta"),
                      c.Scalar("alpha"))};
  };
  t["aten::_grouped_mm.default"] = [](const KernelCall& c) -> Out {
    at::Tensor out = GroupedMm(c.Tensor("self"), c.Tensor("mat2"), c.OptionalTensor("offs"));
    std::optional<at::ScalarType> dtype = c.DType("out_dtype");
    return {dtype ? out.to(*dtype) : out};
  };
  t["aten::baddbmm.default"] = [](const KernelCall& c) -> Out {
    return {at::baddbmm(c.Tensor("self"), c.Tensor("batch1"), c.Tensor("batch2"),
                        c.Scalar("beta"), c.Scalar("alpha"))};
  };
}

void AddShape(Table& t) {
  // Values, not storage, are what the executor checks, so view and reshape are interchangeable;
  // reshape also accepts non-contiguous inputs that a captured `view` met as contiguous on GPU.
  t["aten::view.default"] = [](const KernelCall& c) -> Out {
    return {c.Tensor("self").reshape(c.IntList("size"))};
  };
  t["aten::t.default"] = [](const KernelCall& c) -> Out { return {c.Tensor("self").t()}; };
  t["aten::transpose.int"] = [](const KernelCall& c) -> Out {
    return {c.Tensor("self").transpose(c.Int("dim0"), c.Int("dim1"))};
  };
  t["aten::permute.default"] = [](const KernelCall& c) -> Out {
    return {c.Tensor("self").permute(c.IntList("dims"))};
  };
  t["aten::unsqueeze.default"] = [](const KernelCall& c) -> Out {
    return {c.Tensor("self").unsqueeze(c.Int("dim"))};
  };
  t["aten::slice.Tensor"] = [](const KernelCall& c) -> Out {
    return {at::slice(c.Tensor("self"), c.Int("dim"), c.OptionalInt("start"),
                      c.OptionalInt("end"), c.Int("step"))};
  };
  t["aten::slice_scatter.default"] = [](const KernelCall& c) -> Out {
    return {at::slice_scatter(c.Tensor("self"), c.Tensor("src"), c.Int("dim"),
                              c.OptionalInt("start"), c.OptionalInt("end"), c.Int("step"))};
  };
  t["aten::split_with_sizes.default"] = [](const KernelCall& c) -> Out {
    return at::split_with_sizes(c.Tensor("self"), c.IntList("split_sizes"), c.Int("dim"));
  };
  t["aten::clone.default"] = [](const KernelCall& c) -> Out {
    // memory_format=torch.contiguous_format (autograd's .contiguous() before view_as_complex)
    // makes the copy contiguous; otherwise the input's layout is preserved
    if (c.EnumName("memory_format").find("contiguous_format") != std::string::npos) {
      return {c.Tensor("self").clone(at::MemoryFormat::Contiguous)};
    }
    return {c.Tensor("self").clone()};
  };
  t["aten::detach.default"] = [](const KernelCall& c) -> Out {
    return {c.Tensor("self").detach()};
  };
  t["aten::lift_fresh_copy.default"] = [](const KernelCall& c) -> Out {
    return {c.Tensor("self").clone()};
  };
  t["aten::_to_copy.default"] = [](const KernelCall& c) -> Out {
    at::Tensor self = c.Tensor("self");
    return {self.to(c.DType("dtype").value_or(self.scalar_type()), /*non_blocking=*/false,
                    /*copy=*/true)};
  };
  t["aten::copy.default"] = [](const KernelCall& c) -> Out {
    // Functional copy_: self's shape and dtype, src's values (broadcast).
    at::Tensor out = c.Tensor("self").clone();
    out.copy_(c.Tensor("src"));
    return {out};
  };
}

void AddReduction(Table& t) {
  t["aten::sum.default"] = [](const KernelCall& c) -> Out {
    return {at::sum(c.Tensor("self"), c.DType("dtype"))};
  };
  t["aten::sum.dim_IntList"] = [](const KernelCall& c) -> Out {
    std::optional<std::vector<int64_t>> dim;
    if (!c.IsNone("dim")) dim = c.IntList("dim");
    return {at::sum(c.Tensor("self"), dim.has_value() ? at::OptionalIntArrayRef(*dim)
                                                      : at::OptionalIntArrayRef(),
                    c.Bool("keepdim"), c.DType("dtype"))};
  };
  t["aten::max.dim"] = [](const KernelCall& c) -> Out {
    auto [values, indices] = at::max(c.Tensor("self"), c.Int("dim"), c.Bool("keepdim"));
    return {values, indices};
  };
  t["aten::_softmax.default"] = [](const KernelCall& c) -> Out {
    return {at::_softmax(c.Tensor("self"), c.Int("dim"), c.Bool("half_to_float"))};
  };
}

void AddIndexing(Table& t) {
  t["aten::embedding.default"] = [](const KernelCall& c) -> Out {
    return {at::embedding(c.Tensor("weight"), c.Tensor("indices"), c.Int("padding_idx"),
                          c.Bool("scale_grad_by_freq"), c.Bool("sparse"))};
  };
  t["aten::index.Tensor"] = [](const KernelCall& c) -> Out {
    return {at::index(c.Tensor("self"), c.OptionalTensorList("indices"))};
  };
  t["aten::index_put.default"] = [](const KernelCall& c) -> Out {
    return {at::index_put(c.Tensor("self"), c.OptionalTensorList("indices"), c.Tensor("values"),
                          c.Bool("accumulate"))};
  };
}

void AddFactory(Table& t) {
  // empty* contents are unspecified; zeros make runs deterministic.
  t["aten::empty.memory_format"] = [](const KernelCall& c) -> Out {
    return {at::zeros(c.IntList("size"), c.FactoryOptions().dtype(FactoryDType(c)))};
  };
  t["aten::empty_like.default"] = [](const KernelCall& c) -> Out {
    at::Tensor self = c.Tensor("self");
    return {at::zeros_like(self, self.options().dtype(c.DType("dtype").value_or(
                                     self.scalar_type())))};
  };
  t["aten::zeros.default"] = [](const KernelCall& c) -> Out {
    return {at::zeros(c.IntList("size"), c.FactoryOptions().dtype(FactoryDType(c)))};
  };
  t["aten::arange.start"] = [](const KernelCall& c) -> Out {
    at::TensorOptions options = c.FactoryOptions();
    if (auto dtype = c.DType("dtype")) options = options.dtype(*dtype);
    return {at::arange(c.Scalar("start"), c.Scalar("end"), options)};
  };
}

// ---- custom operators (apex, vLLM, capture markers) ----

// apex's fused norms accumulate in f32 (f64 inputs in f64) and save flat per-row statistics.
at::ScalarType ApexAccType(const at::Tensor& input) {
  return input.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
}

std::vector<int64_t> ApexNormalizedDims(const at::Tensor& input, const KernelCall& c) {
  std::vector<int64_t> reduce;
  const int64_t dims = static_cast<int64_t>(c.IntList("normalized_shape").size());
  for (int64_t d = input.dim() - dims; d < input.dim(); ++d) reduce.push_back(d);
  return reduce;
}

// A flat statistic [rows] as [leading..., 1, ...] against `input`.
at::Tensor ApexRows(const at::Tensor& stats, const at::Tensor& input, size_t ndims) {
  std::vector<int64_t> shape(input.sizes().begin(), input.sizes().end() - ndims);
  shape.insert(shape.end(), ndims, 1);
  return stats.reshape(shape);
}

// memory_efficient saves the forward's output, from which apex rebuilds the normalized value;
// the reference kernels take the input only.
void RefuseMemoryEfficient(const KernelCall& c) {
  if (c.OptionalBool("memory_efficient").value_or(false)) {
    throw std::invalid_argument(
        "memory_efficient=True (the saved forward output) is not supported");
  }
}

// apex's LayerNorm forward: out, and per-row mean and 1/sqrt(var+eps), flattened.
Out FusedLayerNormAffineFwd(const KernelCall& c) {
  at::Tensor input = c.Tensor("input");
  std::vector<int64_t> reduce = ApexNormalizedDims(input, c);
  at::Tensor x = input.to(ApexAccType(input));
  at::Tensor mean = x.mean(reduce, /*keepdim=*/true);
  at::Tensor var = (x - mean).pow(2).mean(reduce, /*keepdim=*/true);
  at::Tensor invvar = at::rsqrt(var + c.Double("eps"));
  at::Tensor out = ((x - mean) * invvar * c.Tensor("weight").to(x.scalar_type()) +
                    c.Tensor("bias").to(x.scalar_type()))
                       .to(input.scalar_type());
  return {out, mean.flatten(), invvar.flatten()};
}

// apex's LayerNorm backward: ATen's, from the flat statistics read per row.
Out FusedLayerNormAffineBwd(const KernelCall& c) {
  RefuseMemoryEfficient(c);
  at::Tensor input = c.Tensor("input_or_output");
  const at::ScalarType acc = ApexAccType(input);
  std::vector<int64_t> normalized = c.IntList("normalized_shape");
  at::Tensor x = input.to(acc);
  auto [gi, gw, gb] = at::native_layer_norm_backward(
      c.Tensor("grad_output").to(acc), x, normalized,
      ApexRows(c.Tensor("mean").to(acc), x, normalized.size()),
      ApexRows(c.Tensor("invvar").to(acc), x, normalized.size()), c.Tensor("weight").to(acc),
      c.Tensor("bias").to(acc), {true, true, true});
  return {gi.to(input.scalar_type()), gw.to(c.Tensor("weight").scalar_type()),
          gb.to(c.Tensor("bias").scalar_type())};
}

// apex's RMSNorm forward: out = w * x / sqrt(mean(x^2) + eps), and the flat invvar.
Out FusedRmsNormAffineFwd(const KernelCall& c) {
  at::Tensor input = c.Tensor("input");
  at::Tensor x = input.to(ApexAccType(input));
  at::Tensor invvar =
      at::rsqrt((x * x).mean(ApexNormalizedDims(input, c), /*keepdim=*/true) + c.Double("eps"));
  at::Tensor out = (x * invvar * c.Tensor("weight").to(x.scalar_type())).to(input.scalar_type());
  return {out, invvar.flatten()};
}

// apex's RMSNorm backward: with r = invvar, xhat = x * r, dxhat = g * w: grad_input = r * (dxhat
// - xhat * mean(dxhat * xhat)), grad_weight = sum over the leading dims of g * xhat.
Out FusedRmsNormAffineBwd(const KernelCall& c) {
  RefuseMemoryEfficient(c);
  at::Tensor input = c.Tensor("input_or_output");
  const at::ScalarType acc = ApexAccType(input);
  std::vector<int64_t> reduce = ApexNormalizedDims(input, c);
  at::Tensor x = input.to(acc);
  at::Tensor g = c.Tensor("grad_output").to(acc);
  at::Tensor r = ApexRows(c.Tensor("invvar").to(acc), x, reduce.size());
  at::Tensor xhat = x * r;
  at::Tensor dxhat = g * c.Tensor("weight").to(acc);
  at::Tensor gi = r * (dxhat - xhat * (dxhat * xhat).mean(reduce, /*keepdim=*/true));
  std::vector<int64_t> leading;
  for (int64_t d = 0; d < x.dim() - static_cast<int64_t>(reduce.size()); ++d) leading.push_back(d);
  at::Tensor gw = leading.empty() ? g * xhat : (g * xhat).sum(leading);
  return {gi.to(input.scalar_type()), gw.to(c.Tensor("weight").scalar_type())};
}

// vLLM rms_norm: variance in f32; the normalized value is rounded to the input dtype before the
// weight multiplies it (as vLLM's kernel does).
at::Tensor RmsNormValue(const at::Tensor& x_f32, const at::Tensor& weight, at::ScalarType dtype,
                        double eps) {
  at::Tensor inv_rms = at::rsqrt(x_f32.pow(2).mean(-1, /*keepdim=*/true) + eps);
  return (x_f32 * inv_rms).to(dtype) * weight;
}

Out RmsNorm(const KernelCall& c) {
  at::Tensor result = c.Tensor("result");
  at::Tensor input = c.Tensor("input");
  result.copy_(RmsNormValue(input.to(at::kFloat), c.Tensor("weight"), input.scalar_type(),
                            c.Double("epsilon")));
  return {};
}

Out FusedAddRmsNorm(const KernelCall& c) {
  at::Tensor input = c.Tensor("input");
  at::Tensor residual = c.Tensor("residual");
  residual.copy_(input.to(at::kFloat) + residual.to(at::kFloat));
  input.copy_(RmsNormValue(residual.to(at::kFloat), c.Tensor("weight"), input.scalar_type(),
                           c.Double("epsilon")));
  return {};
}

Out SiluAndMul(const KernelCall& c) {
  at::Tensor input = c.Tensor("input");
  int64_t d = input.size(-1) / 2;
  at::Tensor x = input.narrow(-1, 0, d).to(at::kFloat);
  at::Tensor y = input.narrow(-1, d, d).to(at::kFloat);
  c.Tensor("out").copy_(at::silu(x) * y);
  return {};
}

// Rotates the first rot_dim features of every head of x ([tokens, heads * head_size] or
// [tokens, heads, head_size]) in place. cos, sin: [tokens, rot_dim / 2] in f32.
void ApplyRotary(at::Tensor x, int64_t head_size, const at::Tensor& cos, const at::Tensor& sin,
                 bool is_neox) {
  int64_t tokens = x.size(0);
  at::Tensor heads = x.reshape({tokens, -1, head_size});
  int64_t half = cos.size(-1);
  at::Tensor c = cos.unsqueeze(1);
  at::Tensor s = sin.unsqueeze(1);
  at::Tensor rot = heads.narrow(-1, 0, 2 * half).to(at::kFloat);
  at::Tensor x1, x2;
  if (is_neox) {  // halves: (x[:h], x[h:2h])
    x1 = rot.narrow(-1, 0, half);
    x2 = rot.narrow(-1, half, half);
  } else {  // GPT-J style: interleaved pairs (x[2i], x[2i+1])
    x1 = rot.slice(-1, 0, 2 * half, 2);
    x2 = rot.slice(-1, 1, 2 * half, 2);
  }
  at::Tensor o1 = x1 * c - x2 * s;
  at::Tensor o2 = x2 * c + x1 * s;
  at::Tensor rotated = is_neox ? at::cat({o1, o2}, -1)
                               : at::stack({o1, o2}, -1).reshape({tokens, -1, 2 * half});
  at::Tensor updated = heads.clone();
  updated.narrow(-1, 0, 2 * half).copy_(rotated);
  x.copy_(updated.reshape(x.sizes()));
}

Out RotaryEmbedding(const KernelCall& c) {
  at::Tensor positions = c.Tensor("positions").reshape({-1});
  at::Tensor cache = c.Tensor("cos_sin_cache").index_select(0, positions).to(at::kFloat);
  int64_t half = cache.size(-1) / 2;
  at::Tensor cos = cache.narrow(-1, 0, half);
  at::Tensor sin = cache.narrow(-1, half, half);
  int64_t head_size = c.Int("head_size");
  bool is_neox = c.Bool("is_neox");
  ApplyRotary(c.Tensor("query"), head_size, cos, sin, is_neox);
  if (std::optional<at::Tensor> key = c.OptionalTensor("key")) {
    ApplyRotary(*key, head_size, cos, sin, is_neox);
  }
  return {};
}

// vLLM's attention layer over one causal sequence of all tokens; query heads are grouped over the
// kv heads (query head h reads kv head h / (Hq / Hkv)); scale 1/sqrt(head_size).
Out UnifiedAttentionWithOutput(const KernelCall& c) {
  at::Tensor query = c.Tensor("query");
  at::Tensor key = c.Tensor("key");
  at::Tensor value = c.Tensor("value");
  at::Tensor output = c.Tensor("output");
  int64_t tokens = query.size(0);
  int64_t head_size = query.size(-1);
  at::Tensor q = query.reshape({tokens, -1, head_size});
  at::Tensor k = key.reshape({tokens, -1, head_size});
  at::Tensor v = value.reshape({tokens, -1, head_size});
  int64_t q_heads = q.size(1);
  int64_t kv_heads = k.size(1);
  if (kv_heads == 0 || q_heads % kv_heads != 0) {
    throw std::invalid_argument("query heads (" + std::to_string(q_heads) +
                                ") are not a multiple of kv heads (" + std::to_string(kv_heads) +
                                ")");
  }
  int64_t group = q_heads / kv_heads;
  k = k.repeat_interleave(group, 1);
  v = v.repeat_interleave(group, 1);
  // [1, heads, tokens, head_size]; ATen's CPU flash attention keeps memory linear in tokens.
  at::Tensor out = at::scaled_dot_product_attention(
      q.transpose(0, 1).unsqueeze(0), k.transpose(0, 1).unsqueeze(0),
      v.transpose(0, 1).unsqueeze(0), /*attn_mask=*/std::nullopt, /*dropout_p=*/0.0,
      /*is_causal=*/true, /*scale=*/1.0 / std::sqrt(static_cast<double>(head_size)));
  output.copy_(out.squeeze(0).transpose(0, 1).reshape(output.sizes()));
  return {};
}

void AddCustom(Table& t) {
  t["apex::fused_layer_norm_affine_fwd.default"] = FusedLayerNormAffineFwd;
  t["apex::fused_layer_norm_affine_bwd.default"] = FusedLayerNormAffineBwd;
  t["apex::fused_rms_norm_affine_fwd.default"] = FusedRmsNormAffineFwd;
  t["apex::fused_rms_norm_affine_bwd.default"] = FusedRmsNormAffineBwd;
  t["_C::rms_norm.default"] = RmsNorm;
  t["_C::fused_add_rms_norm.default"] = FusedAddRmsNorm;
  t["_C::silu_and_mul.default"] = SiluAndMul;
  t["torchtitan::deterministic_scatter_add.default"] = [](const KernelCall& c) -> Out {
    return {c.Tensor("out").scatter_add(0, c.Tensor("index"), c.Tensor("src"))};
  };
  t["_C::rotary_embedding.default"] = RotaryEmbedding;
  t["vllm::unified_attention_with_output.default"] = UnifiedAttentionWithOutput;
}

// ---- the registry's other operators (backward passes, factories, reductions, views) ----

std::optional<at::Scalar> OptionalScalar(const KernelCall& c, const std::string& arg) {
  if (c.IsNone(arg)) return std::nullopt;
  return c.Scalar(arg);
}

std::optional<std::vector<int64_t>> OptionalIntList(const KernelCall& c, const std::string& arg) {
  if (c.IsNone(arg)) return std::nullopt;
  return c.IntList(arg);
}

at::OptionalIntArrayRef Ref(const std::optional<std::vector<int64_t>>& dims) {
  return dims.has_value() ? at::OptionalIntArrayRef(*dims) : at::OptionalIntArrayRef();
}

at::Generator& RequireGenerator(const KernelCall& c) {
  if (c.random().generator == nullptr) {
    throw std::invalid_argument("a random operator needs a seeded generator");
  }
  return *c.random().generator;
}

// A unary elementwise kernel from an ATen function.
template <at::Tensor (*F)(const at::Tensor&)>
Out Unary(const KernelCall& c) {
  return {F(c.Tensor("self"))};
}

void AddElementwiseMore(Table& t) {
  t["aten::add.Scalar"] = [](const KernelCall& c) -> Out {
    return {at::add(c.Tensor("self"), c.Scalar("other"), c.Scalar("alpha"))};
  };
  t["aten::sub.Scalar"] = [](const KernelCall& c) -> Out {
    return {at::sub(c.Tensor("self"), c.Scalar("other"), c.Scalar("alpha"))};
  };
  t["aten::rsub.Scalar"] = [](const KernelCall& c) -> Out {
    return {at::rsub(c.Tensor("self"), c.Scalar("other"), c.Scalar("alpha"))};
  };
  t["aten::mul.Scalar"] = [](const KernelCall& c) -> Out {
    return {at::mul(c.Tensor("self"), c.Scalar("other"))};
  };
  t["aten::div.Scalar"] = [](const KernelCall& c) -> Out {
    return {at::div(c.Tensor("self"), c.Scalar("other"))};
  };
  t["aten::div.Tensor_mode"] = [](const KernelCall& c) -> Out {
    std::optional<std::string_view> mode;
    std::string mode_text;
    if (!c.IsNone("rounding_mode")) mode = mode_text = c.String("rounding_mode");
    return {at::div(c.Tensor("self"), c.Tensor("other"), mode)};
  };
  t["aten::pow.Tensor_Scalar"] = [](const KernelCall& c) -> Out {
    return {at::pow(c.Tensor("self"), c.Scalar("exponent"))};
  };
  t["aten::pow.Tensor_Tensor"] = [](const KernelCall& c) -> Out {
    return {at::pow(c.Tensor("self"), c.Tensor("exponent"))};
  };
  t["aten::maximum.default"] = [](const KernelCall& c) -> Out {
    return {at::maximum(c.Tensor("self"), c.Tensor("other"))};
  };
  t["aten::minimum.default"] = [](const KernelCall& c) -> Out {
    return {at::minimum(c.Tensor("self"), c.Tensor("other"))};
  };
  t["aten::where.self"] = [](const KernelCall& c) -> Out {
    return {at::where(c.Tensor("condition"), c.Tensor("self"), c.Tensor("other"))};
  };
  t["aten::clamp.default"] = [](const KernelCall& c) -> Out {
    return {at::clamp(c.Tensor("self"), OptionalScalar(c, "min"), OptionalScalar(c, "max"))};
  };
  t["aten::eq.Scalar"] = [](const KernelCall& c) -> Out {
    return {at::eq(c.Tensor("self"), c.Scalar("other"))};
  };
  t["aten::ne.Scalar"] = [](const KernelCall& c) -> Out {
    return {at::ne(c.Tensor("self"), c.Scalar("other"))};
  };
  t["aten::le.Scalar"] = [](const KernelCall& c) -> Out {
    return {at::le(c.Tensor("self"), c.Scalar("other"))};
  };
  t["aten::gt.Scalar"] = [](const KernelCall& c) -> Out {
    return {at::gt(c.Tensor("self"), c.Scalar("other"))};
  };
  t["aten::eq.Tensor"] = [](const KernelCall& c) -> Out {
    return {at::eq(c.Tensor("self"), c.Tensor("other"))};
  };
  t["aten::ne.Tensor"] = [](const KernelCall& c) -> Out {
    return {at::ne(c.Tensor("self"), c.Tensor("other"))};
  };
  t["aten::lt.Tensor"] = [](const KernelCall& c) -> Out {
    return {at::lt(c.Tensor("self"), c.Tensor("other"))};
  };
  t["aten::gt.Tensor"] = [](const KernelCall& c) -> Out {
    return {at::gt(c.Tensor("self"), c.Tensor("other"))};
  };
  t["aten::masked_fill.Tensor"] = [](const KernelCall& c) -> Out {
    return {at::masked_fill(c.Tensor("self"), c.Tensor("mask"), c.Tensor("value"))};
  };
  t["aten::logical_not.default"] = Unary<at::logical_not>;
  t["aten::alias.default"] = Unary<at::alias>;
  t["aten::gelu_backward.default"] = [](const KernelCall& c) -> Out {
    std::string approximate = c.IsNone("approximate") ? "none" : c.String("approximate");
    return {at::gelu_backward(c.Tensor("grad_output"), c.Tensor("self"), approximate)};
  };
  t["aten::silu_backward.default"] = [](const KernelCall& c) -> Out {
    return {at::silu_backward(c.Tensor("grad_output"), c.Tensor("self"))};
  };
  t["aten::threshold_backward.default"] = [](const KernelCall& c) -> Out {
    return {at::threshold_backward(c.Tensor("grad_output"), c.Tensor("self"),
                                   c.Scalar("threshold"))};
  };
  t["aten::sigmoid_backward.default"] = [](const KernelCall& c) -> Out {
    return {at::sigmoid_backward(c.Tensor("grad_output"), c.Tensor("output"))};
  };
  t["aten::tanh_backward.default"] = [](const KernelCall& c) -> Out {
    return {at::tanh_backward(c.Tensor("grad_output"), c.Tensor("output"))};
  };
  t["aten::native_dropout_backward.default"] = [](const KernelCall& c) -> Out {
    return {at::native_dropout_backward(c.Tensor("grad_output"), c.Tensor("mask"),
                                        c.Double("scale"))};
  };
  t["aten::fill.Scalar"] = [](const KernelCall& c) -> Out {
    return {at::full_like(c.Tensor("self"), c.Scalar("value"))};
  };
}

void AddFactoryMore(Table& t) {
  t["aten::empty_strided.default"] = [](const KernelCall& c) -> Out {
    return {at::zeros(c.IntList("size"), c.FactoryOptions().dtype(FactoryDType(c)))};
  };
  auto like = [](const KernelCall& c) {
    at::Tensor self = c.Tensor("self");
    return self.options().dtype(c.DType("dtype").value_or(self.scalar_type()));
  };
  t["aten::new_empty.default"] = [like](const KernelCall& c) -> Out {
    return {at::zeros(c.IntList("size"), like(c))};
  };
  t["aten::new_empty_strided.default"] = [like](const KernelCall& c) -> Out {
    return {at::zeros(c.IntList("size"), like(c))};
  };
  t["aten::new_zeros.default"] = [like](const KernelCall& c) -> Out {
    return {at::zeros(c.IntList("size"), like(c))};
  };
  t["aten::new_ones.default"] = [like](const KernelCall& c) -> Out {
    return {at::ones(c.IntList("size"), like(c))};
  };
  t["aten::zeros_like.default"] = [like](const KernelCall& c) -> Out {
    return {at::zeros(c.Tensor("self").sizes(), like(c))};
  };
  t["aten::ones_like.default"] = [like](const KernelCall& c) -> Out {
    return {at::ones(c.Tensor("self").sizes(), like(c))};
  };
  t["aten::full_like.default"] = [like](const KernelCall& c) -> Out {
    return {at::full(c.Tensor("self").sizes(), c.Scalar("fill_value"), like(c))};
  };
  t["aten::ones.default"] = [](const KernelCall& c) -> Out {
    return {at::ones(c.IntList("size"), c.FactoryOptions().dtype(FactoryDType(c)))};
  };
  t["aten::full.default"] = [](const KernelCall& c) -> Out {
    // No dtype: inferred from the fill value, as torch.full does.
    at::TensorOptions options = c.FactoryOptions();
    if (auto dtype = c.DType("dtype")) options = options.dtype(*dtype);
    return {at::full(c.IntList("size"), c.Scalar("fill_value"), options)};
  };
  t["aten::scalar_tensor.default"] = [](const KernelCall& c) -> Out {
    return {at::scalar_tensor(c.Scalar("s"), c.FactoryOptions().dtype(FactoryDType(c)))};
  };
  t["aten::arange.default"] = [](const KernelCall& c) -> Out {
    at::TensorOptions options = c.FactoryOptions();
    if (auto dtype = c.DType("dtype")) options = options.dtype(*dtype);
    return {at::arange(c.Scalar("end"), options)};
  };
  t["aten::arange.start_step"] = [](const KernelCall& c) -> Out {
    at::TensorOptions options = c.FactoryOptions();
    if (auto dtype = c.DType("dtype")) options = options.dtype(*dtype);
    return {at::arange(c.Scalar("start"), c.Scalar("end"), c.Scalar("step"), options)};
  };
  // Random factories draw on the CPU from the executor's seeded generator, then move to the
  // device (RandomMode: CPU and CUDA runs draw the same numbers).
  t["aten::rand_like.default"] = [like](const KernelCall& c) -> Out {
    at::TensorOptions options = like(c);
    return {at::empty(c.Tensor("self").sizes(), options.device(at::kCPU))
                .uniform_(0.0, 1.0, RequireGenerator(c))
                .to(options.device())};
  };
  t["aten::randn_like.default"] = [like](const KernelCall& c) -> Out {
    at::TensorOptions options = like(c);
    return {at::empty(c.Tensor("self").sizes(), options.device(at::kCPU))
                .normal_(0.0, 1.0, RequireGenerator(c))
                .to(options.device())};
  };
  t["aten::rand.default"] = [](const KernelCall& c) -> Out {
    return {at::empty(c.IntList("size"), at::TensorOptions().dtype(FactoryDType(c)))
                .uniform_(0.0, 1.0, RequireGenerator(c))
                .to(c.device())};
  };
  t["aten::bernoulli.p"] = [](const KernelCall& c) -> Out {
    at::Tensor self = c.Tensor("self");
    return {at::bernoulli(self.to(at::kCPU), c.Double("p"), RequireGenerator(c)).to(self.device())};
  };
}

void AddIndexingMore(Table& t) {
  t["aten::embedding_dense_backward.default"] = [](const KernelCall& c) -> Out {
    return {at::embedding_dense_backward(c.Tensor("grad_output"), c.Tensor("indices"),
                                         c.Int("num_weights"), c.Int("padding_idx"),
                                         c.Bool("scale_grad_by_freq"))};
  };
  t["aten::gather.default"] = [](const KernelCall& c) -> Out {
    return {at::gather(c.Tensor("self"), c.Int("dim"), c.Tensor("index"), c.Bool("sparse_grad"))};
  };
  t["aten::scatter.src"] = [](const KernelCall& c) -> Out {
    return {at::scatter(c.Tensor("self"), c.Int("dim"), c.Tensor("index"), c.Tensor("src"))};
  };
  t["aten::scatter.value"] = [](const KernelCall& c) -> Out {
    return {at::scatter(c.Tensor("self"), c.Int("dim"), c.Tensor("index"), c.Scalar("value"))};
  };
  t["aten::scatter_add.default"] = [](const KernelCall& c) -> Out {
    return {at::scatter_add(c.Tensor("self"), c.Int("dim"), c.Tensor("index"), c.Tensor("src"))};
  };
  t["aten::index_select.default"] = [](const KernelCall& c) -> Out {
    return {at::index_select(c.Tensor("self"), c.Int("dim"), c.Tensor("index"))};
  };
}

// Attention with an optional bias and causal mask; also the per-row log-sum-exp of the scores.
std::pair<at::Tensor, at::Tensor> AttentionWithLse(const at::Tensor& q, const at::Tensor& k,
                                                   const at::Tensor& v,
                                                   const std::optional<at::Tensor>& bias,
                                                   bool is_causal, std::optional<double> scale) {
  double s = scale.value_or(1.0 / std::sqrt(static_cast<double>(q.size(-1))));
  at::Tensor scores = at::matmul(q.to(at::kFloat), k.to(at::kFloat).transpose(-2, -1)) * s;
  if (bias) scores = scores + bias->to(at::kFloat);
  if (is_causal) {
    at::Tensor keep = at::ones({q.size(-2), k.size(-2)}, q.options().dtype(at::kBool)).tril();
    scores = scores.masked_fill(keep.logical_not(), -std::numeric_limits<float>::infinity());
  }
  at::Tensor lse = at::logsumexp(scores, -1);
  at::Tensor out = at::matmul(at::softmax(scores, -1), v.to(at::kFloat)).to(q.scalar_type());
  return {out, lse};
}

void AddLinalgMore(Table& t) {
  t["aten::matmul.default"] = [](const KernelCall& c) -> Out {
    return {at::matmul(c.Tensor("self"), c.Tensor("other"))};
  };
  t["aten::linear.default"] = [](const KernelCall& c) -> Out {
    return {at::linear(c.Tensor("input"), c.Tensor("weight"), c.OptionalTensor("bias"))};
  };
  // The CUDA attention kernels' outputs: attention and log-sum-exp are computed; the RNG state and
  // sequence bookkeeping of the CUDA kernels have no CPU meaning and come back empty.
  t["aten::_scaled_dot_product_flash_attention.default"] = [](const KernelCall& c) -> Out {
    if (c.Double("dropout_p") != 0.0 && !c.random().dropout_off) {
      throw std::invalid_argument("attention dropout is not supported (run with dropout off)");
    }
    std::optional<double> scale;
    if (!c.IsNone("scale")) scale = c.Double("scale");
    auto [out, lse] = AttentionWithLse(c.Tensor("query"), c.Tensor("key"), c.Tensor("value"),
                                       std::nullopt, c.Bool("is_causal"), scale);
    // Typed as the registry's rule (ir/shape_rules.cc): no cumulative lengths, scalar i64 RNG
    // seed and offset, an empty debug mask.
    at::Tensor none = at::empty({0}, out.options().dtype(at::kLong));
    at::Tensor seed = at::zeros({}, out.options().dtype(at::kLong));
    return {out, lse, none, none, at::Tensor(), at::Tensor(), seed, seed,
            at::empty({0}, out.options())};
  };
  t["aten::_scaled_dot_product_efficient_attention.default"] = [](const KernelCall& c) -> Out {
    if (c.Double("dropout_p") != 0.0 && !c.random().dropout_off) {
      throw std::invalid_argument("attention dropout is not supported (run with dropout off)");
    }
    std::optional<double> scale;
    if (!c.IsNone("scale")) scale = c.Double("scale");
    auto [out, lse] = AttentionWithLse(c.Tensor("query"), c.Tensor("key"), c.Tensor("value"),
                                       c.OptionalTensor("attn_bias"), c.Bool("is_causal"), scale);
    // The CUDA kernel's log-sum-exp [B, H, ceil(L / 32) * 32] (rows past L are padding, 0 here),
    // or [B, H, 0] without compute_log_sumexp, as the registry's rule types it.
    const int64_t rows = c.Bool("compute_log_sumexp") ? (lse.size(-1) + 31) / 32 * 32 : 0;
    lse = at::constant_pad_nd(lse.to(at::kFloat).slice(-1, 0, rows),
                              {0, rows - std::min(rows, lse.size(-1))});
    at::TensorOptions index = out.options().dtype(at::kLong);
    return {out, lse, at::zeros({}, index), at::zeros({}, index)};
  };
  // ATen's own kernels (random only through dropout, which a deterministic run turns off).
  t["aten::_scaled_dot_product_flash_attention_for_cpu.default"] = [](const KernelCall& c) -> Out {
    if (c.Double("dropout_p") != 0.0 && !c.random().dropout_off) {
      throw std::invalid_argument("attention dropout is not supported (run with dropout off)");
    }
    std::optional<double> scale;
    if (!c.IsNone("scale")) scale = c.Double("scale");
    auto [out, lse] = at::_scaled_dot_product_flash_attention_for_cpu(
        c.Tensor("query"), c.Tensor("key"), c.Tensor("value"), 0.0, c.Bool("is_causal"),
        c.OptionalTensor("attn_mask"), scale);
    return {out, lse};
  };
  t["aten::scaled_dot_product_attention.default"] = [](const KernelCall& c) -> Out {
    if (c.Double("dropout_p") != 0.0 && !c.random().dropout_off) {
      throw std::invalid_argument("attention dropout is not supported (run with dropout off)");
    }
    std::optional<double> scale;
    if (!c.IsNone("scale")) scale = c.Double("scale");
    return {at::scaled_dot_product_attention(c.Tensor("query"), c.Tensor("key"), c.Tensor("value"),
                                             c.OptionalTensor("attn_mask"), 0.0,
                                             c.Bool("is_causal"), scale, c.Bool("enable_gqa"))};
  };
}

void AddReductionMore(Table& t) {
  t["aten::mean.default"] = [](const KernelCall& c) -> Out {
    return {at::mean(c.Tensor("self"), c.DType("dtype"))};
  };
  t["aten::mean.dim"] = [](const KernelCall& c) -> Out {
    auto dim = OptionalIntList(c, "dim");
    return {at::mean(c.Tensor("self"), Ref(dim), c.Bool("keepdim"), c.DType("dtype"))};
  };
  t["aten::amax.default"] = [](const KernelCall& c) -> Out {
    return {at::amax(c.Tensor("self"), c.IntList("dim"), c.Bool("keepdim"))};
  };
  t["aten::amin.default"] = [](const KernelCall& c) -> Out {
    return {at::amin(c.Tensor("self"), c.IntList("dim"), c.Bool("keepdim"))};
  };
  t["aten::max.default"] = [](const KernelCall& c) -> Out { return {at::max(c.Tensor("self"))}; };
  t["aten::min.dim"] = [](const KernelCall& c) -> Out {
    auto [values, indices] = at::min(c.Tensor("self"), c.Int("dim"), c.Bool("keepdim"));
    return {values, indices};
  };
  t["aten::argmax.default"] = [](const KernelCall& c) -> Out {
    return {at::argmax(c.Tensor("self"), c.OptionalInt("dim"), c.Bool("keepdim"))};
  };
  t["aten::logsumexp.default"] = [](const KernelCall& c) -> Out {
    return {at::logsumexp(c.Tensor("self"), c.IntList("dim"), c.Bool("keepdim"))};
  };
  t["aten::var.correction"] = [](const KernelCall& c) -> Out {
    auto dim = OptionalIntList(c, "dim");
    return {at::var(c.Tensor("self"), Ref(dim), OptionalScalar(c, "correction"),
                    c.Bool("keepdim"))};
  };
  t["aten::var_mean.correction"] = [](const KernelCall& c) -> Out {
    auto dim = OptionalIntList(c, "dim");
    auto [var, mean] = at::var_mean(c.Tensor("self"), Ref(dim), OptionalScalar(c, "correction"),
                                    c.Bool("keepdim"));
    return {var, mean};
  };
  t["aten::linalg_vector_norm.default"] = [](const KernelCall& c) -> Out {
    auto dim = OptionalIntList(c, "dim");
    return {at::linalg_vector_norm(c.Tensor("self"), c.Scalar("ord"), Ref(dim),
                                   c.Bool("keepdim"), c.DType("dtype"))};
  };
  t["aten::cumsum.default"] = [](const KernelCall& c) -> Out {
    return {at::cumsum(c.Tensor("self"), c.Int("dim"), c.DType("dtype"))};
  };
  t["aten::topk.default"] = [](const KernelCall& c) -> Out {
    auto [values, indices] = at::topk(c.Tensor("self"), c.Int("k"), c.Int("dim"),
                                      c.Bool("largest"), c.Bool("sorted"));
    return {values, indices};
  };
  t["aten::sort.default"] = [](const KernelCall& c) -> Out {
    auto [values, indices] = at::sort(c.Tensor("self"), c.Int("dim"), c.Bool("descending"));
    return {values, indices};
  };
  t["aten::_log_softmax.default"] = [](const KernelCall& c) -> Out {
    return {at::_log_softmax(c.Tensor("self"), c.Int("dim"), c.Bool("half_to_float"))};
  };
  t["aten::_softmax_backward_data.default"] = [](const KernelCall& c) -> Out {
    return {at::_softmax_backward_data(c.Tensor("grad_output"), c.Tensor("output"), c.Int("dim"),
                                       c.DType("input_dtype").value())};
  };
  t["aten::_log_softmax_backward_data.default"] = [](const KernelCall& c) -> Out {
    return {at::_log_softmax_backward_data(c.Tensor("grad_output"), c.Tensor("output"),
                                           c.Int("dim"), c.DType("input_dtype").value())};
  };
  t["aten::native_layer_norm.default"] = [](const KernelCall& c) -> Out {
    auto [out, mean, rstd] =
        at::native_layer_norm(c.Tensor("input"), c.IntList("normalized_shape"),
                              c.OptionalTensor("weight"), c.OptionalTensor("bias"), c.Double("eps"));
    return {out, mean, rstd};
  };
  t["aten::native_layer_norm_backward.default"] = [](const KernelCall& c) -> Out {
    std::array<bool, 3> mask = {true, true, true};
    std::vector<bool> bits = c.BoolList("output_mask");
    for (size_t i = 0; i < 3 && i < bits.size(); ++i) mask[i] = bits[i];
    auto [gi, gw, gb] = at::native_layer_norm_backward(
        c.Tensor("grad_out"), c.Tensor("input"), c.IntList("normalized_shape"), c.Tensor("mean"),
        c.Tensor("rstd"), c.OptionalTensor("weight"), c.OptionalTensor("bias"), mask);
    return {gi, gw, gb};
  };
  t["aten::nll_loss_forward.default"] = [](const KernelCall& c) -> Out {
    auto [out, total] = at::nll_loss_forward(c.Tensor("self"), c.Tensor("target"),
                                             c.OptionalTensor("weight"), c.Int("reduction"),
                                             c.Int("ignore_index"));
    return {out, total};
  };
  t["aten::nll_loss_backward.default"] = [](const KernelCall& c) -> Out {
    return {at::nll_loss_backward(c.Tensor("grad_output"), c.Tensor("self"), c.Tensor("target"),
                                  c.OptionalTensor("weight"), c.Int("reduction"),
                                  c.Int("ignore_index"), c.Tensor("total_weight"))};
  };
}

void AddShapeMore(Table& t) {
  // The conjugate, materialized (a lazy conj bit would follow the value into every consumer);
  // the identity on real tensors, where ATen's _conj asserts a complex input.
  t["aten::_conj.default"] = [](const KernelCall& c) -> Out {
    at::Tensor x = c.Tensor("self");
    return {x.is_complex() ? at::conj_physical(x) : x};
  };
  t["aten::conj_physical.default"] = [](const KernelCall& c) -> Out {
    at::Tensor x = c.Tensor("self");
    return {x.is_complex() ? at::conj_physical(x) : x.clone()};
  };
  t["aten::resolve_conj.default"] = [](const KernelCall& c) -> Out {
    return {c.Tensor("self").resolve_conj()};
  };
  t["aten::reshape.default"] = [](const KernelCall& c) -> Out {
    return {c.Tensor("self").reshape(c.IntList("shape"))};
  };
  t["aten::_unsafe_view.default"] = [](const KernelCall& c) -> Out {
    return {c.Tensor("self").reshape(c.IntList("size"))};
  };
  t["aten::expand.default"] = [](const KernelCall& c) -> Out {
    return {c.Tensor("self").expand(c.IntList("size"))};
  };
  t["aten::squeeze.default"] = [](const KernelCall& c) -> Out {
    return {c.Tensor("self").squeeze()};
  };
  t["aten::squeeze.dim"] = [](const KernelCall& c) -> Out {
    return {c.Tensor("self").squeeze(c.Int("dim"))};
  };
  t["aten::squeeze.dims"] = [](const KernelCall& c) -> Out {
    return {c.Tensor("self").squeeze(c.IntList("dim"))};
  };
  t["aten::select.int"] = [](const KernelCall& c) -> Out {
    return {c.Tensor("self").select(c.Int("dim"), c.Int("index"))};
  };
  t["aten::select_scatter.default"] = [](const KernelCall& c) -> Out {
    return {at::select_scatter(c.Tensor("self"), c.Tensor("src"), c.Int("dim"), c.Int("index"))};
  };
  t["aten::cat.default"] = [](const KernelCall& c) -> Out {
    return {at::cat(c.TensorList("tensors"), c.Int("dim"))};
  };
  t["aten::stack.default"] = [](const KernelCall& c) -> Out {
    return {at::stack(c.TensorList("tensors"), c.Int("dim"))};
  };
  t["aten::split.Tensor"] = [](const KernelCall& c) -> Out {
    return at::split(c.Tensor("self"), c.Int("split_size"), c.Int("dim"));
  };
}

void AddCaptureMarkers(Table& t) {
  // The capture tool's markers name a tensor and leave it unchanged.
  t["tg::log_tensor.default"] = [](const KernelCall& c) -> Out { return {c.Tensor("x")}; };
  t["tg::inplace_log_tensor.default"] = [](const KernelCall&) -> Out { return {}; };
}

Table BuildTable() {
  Table t;
  AddElementwise(t);
  AddLinalg(t);
  AddShape(t);
  AddReduction(t);
  AddIndexing(t);
  AddFactory(t);
  AddCustom(t);
  AddElementwiseMore(t);
  AddFactoryMore(t);
  AddIndexingMore(t);
  AddLinalgMore(t);
  AddReductionMore(t);
  AddShapeMore(t);
  AddCaptureMarkers(t);
  return t;
}

}  // namespace

const std::map<std::string, Kernel>& KernelTable() {
  static const Table* table = new Table(BuildTable());
  return *table;
}

const Kernel* FindKernel(const ir::OpName& op) {
  const Table& table = KernelTable();
  ir::OpName key = op;
  if (key.overload.empty()) key.overload = "default";
  auto it = table.find(key.ToString());
  return it == table.end() ? nullptr : &it->second;
}

std::vector<at::Tensor> CallKernel(const Kernel& kernel, const ir::Node& node,
                                   const ir::OpInfo& info, const ir::BoundArgs& args,
                                   const KernelCall::TensorLookup& lookup, RandomMode random,
                                   at::Device device) {
  std::map<std::string, at::Tensor> clones;
  std::vector<std::string> mutated;
  if (node.functionalized) {
    for (const ir::ArgSchema& a : info.schema.args) {
      if (!a.mutated) continue;
      mutated.push_back(a.name);
      if (args.has(a.name) && args[a.name].is_tensor()) {
        clones[a.name] = lookup(args[a.name].as_tensor()).clone();
      }
    }
  }
  KernelCall call(node, args, lookup, clones, random, device);
  std::vector<at::Tensor> outputs = kernel(call);
  if (node.functionalized) {
    if (info.schema.returns.empty()) outputs.push_back(at::Tensor());
    for (const std::string& name : mutated) {
      auto it = clones.find(name);
      outputs.push_back(it == clones.end() ? at::Tensor() : it->second);
    }
  }
  return outputs;
}

std::vector<at::Tensor> CallOperator(const ir::Node& node, const ir::OpInfo& info,
                                     const ir::BoundArgs& args,
                                     const KernelCall::TensorLookup& lookup, RandomMode random,
                                     at::Device device) {
  if (const Kernel* kernel = FindKernel(node.op)) {
    return CallKernel(*kernel, node, info, args, lookup, random, device);
  }
  // An ATen operator needs no kernel of its own: the dispatcher runs it by its schema. A
  // functionalized, random or custom one must say how (a kernel).
  if (info.traits.custom || info.traits.random || node.functionalized) {
    throw std::invalid_argument("no kernel for " + node.op.ToString());
  }
  return CallByName(node, lookup);
}

namespace {

// One argument of a node as the dispatcher's boxed calling convention wants it; `schema_type` is
// the dispatcher's type of the argument ("Tensor[]", "int[]", ...), which decides empty lists.
c10::IValue ToIValue(const ir::Value& value, const std::string& schema_type,
                     const KernelCall::TensorLookup& lookup) {
  if (value.is_none()) return c10::IValue();
  if (value.is_tensor()) return c10::IValue(lookup(value.as_tensor()));
  if (value.is_bool()) return c10::IValue(value.as_bool());
  if (value.is_int()) return c10::IValue(value.as_int());
  if (value.is_double()) return c10::IValue(value.as_double());
  if (value.is_string()) return c10::IValue(value.as_string());
  if (value.is_dtype()) return c10::IValue(ToAten(value.as_dtype()));
  if (value.is_list()) {
    const ir::Value::List& items = value.as_list();
    const bool tensor_list = schema_type.find("Tensor") != std::string::npos;
    if (tensor_list) {
      bool optional = schema_type.find("Tensor?") != std::string::npos;
      if (optional) {
        c10::List<std::optional<at::Tensor>> list;
        for (const ir::Value& item : items) {
          if (item.is_none()) {
            list.push_back(std::nullopt);
          } else if (item.is_tensor()) {
            list.push_back(lookup(item.as_tensor()));
          } else {
            throw std::invalid_argument("a Tensor?[] holds a non-tensor");
          }
        }
        return c10::IValue(list);
      }
      c10::List<at::Tensor> list;
      for (const ir::Value& item : items) {
        if (!item.is_tensor()) throw std::invalid_argument("a Tensor[] holds a non-tensor");
        list.push_back(lookup(item.as_tensor()));
      }
      return c10::IValue(list);
    }
    if (value.is_int_list()) return c10::IValue(value.as_int_list());
    bool all_bool = true, all_number = true;
    for (const ir::Value& item : items) {
      all_bool = all_bool && item.is_bool();
      all_number = all_number && (item.is_int() || item.is_double());
    }
    if (all_bool) {
      c10::List<bool> list;
      for (const ir::Value& item : items) list.push_back(item.as_bool());
      return c10::IValue(list);
    }
    if (all_number) {
      std::vector<double> list;
      for (const ir::Value& item : items) list.push_back(item.as_double());
      return c10::IValue(list);
    }
  }
  throw std::invalid_argument("an argument of a kind the by-name call does not convert");
}

}  // namespace

std::vector<at::Tensor> CallByName(const ir::Node& node, const KernelCall::TensorLookup& lookup) {
  const std::string name = node.op.ns + "::" + node.op.name;
  // The dispatcher names the default overload "".
  const std::string overload = node.op.overload == "default" ? "" : node.op.overload;
  std::optional<c10::OperatorHandle> handle =
      c10::Dispatcher::singleton().findSchema({name, overload});
  if (!handle) {
    throw NotExecutableError(
        "", 0,
        "operator " + node.op.ToString() +
        " is unknown to GraphGuard (loaded opaque from its annotation) and LibTorch has no "
        "operator of that name in this process, so the numeric run cannot execute it; load "
        "the library that defines it into LibTorch, or add it to the registry "
        "(src/ir/ops_*.cc) and a kernel (src/runtime/op_kernels.cc)");
  }
  if (node.functionalized) {
    throw NotExecutableError("", 0,
                             "operator " + node.op.ToString() +
                             " is unknown to GraphGuard and called through auto_functionalized; "
                             "the by-name call does not run mutating operators");
  }
  const c10::FunctionSchema& schema = handle->schema();
  const std::vector<c10::Argument>& params = schema.arguments();
  if (node.args.size() > params.size()) {
    throw std::runtime_error("operator " + node.op.ToString() + " takes " +
                             std::to_string(params.size()) + " arguments in LibTorch (" +
                             schema.name() + "), the node gives " +
                             std::to_string(node.args.size()) + " positional ones");
  }
  std::vector<c10::IValue> stack;
  for (size_t i = 0; i < params.size(); ++i) {
    const c10::Argument& param = params[i];
    const ir::Value* given = i < node.args.size() ? &node.args[i] : node.Kwarg(param.name());
    try {
      if (given != nullptr) {
        stack.push_back(ToIValue(*given, param.type()->str(), lookup));
      } else if (param.default_value()) {
        stack.push_back(*param.default_value());
      } else {
        throw std::invalid_argument("it is not given and has no default");
      }
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error("operator " + node.op.ToString() + ": argument '" +
                               param.name() + "': " + e.what());
    }
  }
  for (const ir::NamedArg& kw : node.kwargs) {
    bool known = false;
    for (const c10::Argument& param : params) known = known || param.name() == kw.name;
    if (!known) {
      throw std::runtime_error("operator " + node.op.ToString() + " has no argument '" + kw.name +
                               "' in LibTorch's schema");
    }
  }
  handle->callBoxed(&stack);
  std::vector<at::Tensor> outputs;
  for (const c10::IValue& result : stack) {
    if (result.isTensor()) {
      outputs.push_back(result.toTensor());
    } else if (result.isTensorList()) {
      for (const at::Tensor& t : result.toTensorVector()) outputs.push_back(t);
    } else {
      outputs.push_back(at::Tensor());
    }
  }
  return outputs;
}

}  // namespace gg::runtime
