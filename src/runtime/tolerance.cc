#include "runtime/tolerance.h"

#include <cmath>
#include <set>
#include <string>

#include "runtime/op_kernels.h"

namespace gg::runtime {

double UnitRoundoff(ir::DType dtype) {
  switch (ToAten(dtype)) {
    case at::kBFloat16:
      return std::ldexp(1.0, -8);
    case at::kHalf:
      return std::ldexp(1.0, -11);
    case at::kFloat:
      return std::ldexp(1.0, -24);
    case at::kDouble:
      return std::ldexp(1.0, -53);
    default:
      return 0.0;
  }
}

bool IsExactOperator(const ir::Node& node) {
  static const std::set<std::string> kExact = {"view",
                                               "_unsafe_view",
                                               "reshape",
                                               "permute",
                                               "transpose",
                                               "t",
                                               "slice",
                                               "select",
                                               "expand",
                                               "unsqueeze",
                                               "squeeze",
                                               "cat",
                                               "split",
                                               "split_with_sizes",
                                               "chunk",
                                               "clone",
                                               "contiguous",
                                               "alias",
                                               "detach",
                                               "lift_fresh_copy",
                                               "copy",
                                               "index",
                                               "gather",
                                               "index_select",
                                               "embedding",
                                               "slice_scatter",
                                               "select_scatter",
                                               "index_put",
                                               "scatter",
                                               "zeros",
                                               "zeros_like",
                                               "ones",
                                               "ones_like",
                                               "full",
                                               "empty",
                                               "arange",
                                               "new_zeros",
                                               "new_ones",
                                               "new_empty",
                                               "full_like",
                                               "empty_like",
                                               "masked_fill",
                                               "where",
                                               "flatten",
                                               "_reshape_alias",
                                               "as_strided",
                                               "split_tensor",
                                               "unbind",
                                               "stack",
                                               "repeat",
                                               "wait_tensor",
                                               "all_gather_into_tensor",
                                               "broadcast",
                                               "all_to_all_single",
                                               "eq",
                                               "ne",
                                               "lt",
                                               "le",
                                               "gt",
                                               "ge",
                                               "logical_and",
                                               "logical_or",
                                               "logical_not",
                                               "bitwise_not",
                                               "bitwise_and",
                                               "bitwise_or",
                                               "native_dropout",
                                               "neg",
                                               "abs",
                                               "relu",
                                               "max",
                                               "min",
                                               "amax",
                                               "amin",
                                               "argmax",
                                               "argmin",
                                               "maximum",
                                               "minimum"};
  return kExact.count(node.op.name) != 0;
}

int64_t ReductionLength(const ir::Graph& graph, const ir::Node& node) {
  static const std::set<std::string> kInnerOfSecond = {"mm",      "bmm",    "addmm",
                                                       "baddbmm", "matmul", "linear"};
  std::vector<ir::TensorRef> inputs = node.TensorInputs();
  auto last_dim = [&](size_t k) -> int64_t {
    if (k >= inputs.size()) return 1;
    const std::optional<ir::TensorType>& t =
        graph.node(inputs[k].node).outputs.at(inputs[k].output).type;
    if (!t || t->shape.empty() || !t->shape.back().is_static()) return 1;
    return t->shape.back().value();
  };
  const std::string& name = node.op.name;
  if (kInnerOfSecond.count(name)) {
    // mm(a, b), bmm(a, b): K is a's last dim; addmm(bias, a, b), baddbmm(c, a, b): the second.
    bool has_bias = name == "addmm" || name == "baddbmm";
    return std::max<int64_t>(1, last_dim(has_bias ? 1 : 0));
  }
  static const std::set<std::string> kLastDim = {"sum",
                                                 "mean",
                                                 "var",
                                                 "var_mean",
                                                 "std",
                                                 "norm",
                                                 "_softmax",
                                                 "softmax",
                                                 "_log_softmax",
                                                 "log_softmax",
                                                 "native_layer_norm",
                                                 "layer_norm",
                                                 "rms_norm",
                                                 "fused_add_rms_norm",
                                                 "fused_layer_norm_affine_fwd",
                                                 "fused_rms_norm_affine_fwd",
                                                 "logsumexp",
                                                 "nll_loss_forward",
                                                 "unified_attention_with_output",
                                                 "scaled_dot_product_attention",
                                                 "_scaled_dot_product_flash_attention",
                                                 "_scaled_dot_product_efficient_attention",
                                                 "linalg_vector_norm",
                                                 "prod",
                                                 "cumsum"};
  if (kLastDim.count(name)) return std::max<int64_t>(1, last_dim(0));
  return 1;
}

double PerturbationAmplitude(const ir::Graph& graph, const ir::Node& node, ir::DType dtype) {
  double u = UnitRoundoff(dtype);
  if (u == 0 || IsExactOperator(node)) return 0;
  double k = static_cast<double>(ReductionLength(graph, node));
  return u * std::sqrt(1.0 + std::log2(k));
}

at::Tensor Perturb(const at::Tensor& value, double amplitude, at::Generator& generator) {
  if (amplitude == 0 || !value.defined() || !at::isFloatingType(value.scalar_type())) return value;
  // In float32 for 16-bit and 32-bit values (the multiplication's own rounding is of the size
  // being simulated), float64 for float64.
  at::ScalarType type = value.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
  at::Tensor e = at::rand(value.sizes(), generator, at::TensorOptions().dtype(type));
  return (value.to(type) * e.mul_(2 * amplitude).add_(1 - amplitude)).to(value.scalar_type());
}

double TailFactor(int64_t elements) {
  constexpr double kDelta = 1e-6;
  double n = static_cast<double>(std::max<int64_t>(1, elements));
  return std::sqrt(2.0 * std::log(2.0 * n / kDelta));
}

}  // namespace gg::runtime
