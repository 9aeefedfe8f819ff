// Reductions, softmax and normalizations, losses, sorting and scans.
#include "ir/op_tables.h"
#include "ir/shape_rules.h"

namespace gg::ir {

std::vector<OpEntry> ReductionOps() {
  using namespace rules;  // NOLINT: the tables read as data
  return {
      {"aten::sum(Tensor self, *, ScalarType? dtype=None) -> Tensor", SumAll,
       traits::SumsLastDim() | traits::Fresh() | traits::Lower("sum_all")},
      {"aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? "
       "dtype=None) -> Tensor",
       SumDims, traits::SumsLastDim() | traits::Fresh() | traits::Lower("sum_dims")},
      {"aten::mean(Tensor self, *, ScalarType? dtype=None) -> Tensor", MeanAll,
       traits::SumsLastDim() | traits::Fresh() | traits::Lower("mean_all")},
      {"aten::mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> "
       "Tensor",
       MeanDims, traits::SumsLastDim() | traits::Fresh() | traits::Lower("mean_dims")},
      {"aten::amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor", AmaxDims,
       traits::Exact() | traits::Fresh() | traits::Lower("amax")},
      {"aten::amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor", AmaxDims,
       traits::Exact() | traits::Fresh()},
      {"aten::max(Tensor self) -> Tensor", MaxAll, traits::Exact() | traits::Fresh()},
      {"aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
       MaxDim, traits::Exact() | traits::Fresh() | traits::Lower("max_dim")},
      {"aten::min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
       MaxDim, traits::Exact() | traits::Fresh()},
      {"aten::all.dim(Tensor self, int dim, bool keepdim=False) -> Tensor", AllAnyDim,
       traits::Exact() | traits::Fresh()},
      {"aten::any.dim(Tensor self, int dim, bool keepdim=False) -> Tensor", AllAnyDim,
       traits::Exact() | traits::Fresh()},
      {"aten::argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor", Argmax,
       traits::Exact() | traits::Fresh()},
      {"aten::logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor", Logsumexp,
       traits::SumsLastDim() | traits::Fresh()},
      {"aten::var.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool "
       "keepdim=False) -> Tensor",
       Var, traits::SumsLastDim() | traits::Fresh()},
      {"aten::var_mean.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool "
       "keepdim=False) -> (Tensor, Tensor)",
       VarMean, traits::SumsLastDim() | traits::Fresh()},
      {"aten::linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, "
       "*, ScalarType? dtype=None) -> Tensor",
       VectorNorm, traits::SumsLastDim() | traits::Fresh()},
      {"aten::cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor", Cumsum,
       traits::SumsLastDim() | traits::Fresh()},
      {"aten::topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> "
       "(Tensor values, Tensor indices)",
       Topk, traits::Fresh() | traits::Lower("topk")},
      {"aten::sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor "
       "indices)",
       Sort, traits::Fresh()},
      // argsort(stable=True) (an MoE token dispatcher's permutation): sort_values / sort_indices
      // when stable is True, so equal keys keep their order (ties broken by position, the same on
      // S and D). Without stable (and aten::sort above) the order of equal keys is the kernel's:
      // opaque.
      {"aten::sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) -> "
       "(Tensor values, Tensor indices)",
       Sort, traits::Fresh() | traits::Lower("sort")},
      {"aten::_softmax(Tensor self, int dim, bool half_to_float) -> Tensor", Softmax,
       traits::SumsLastDim() | traits::Fresh() | traits::Lower("softmax")},
      {"aten::_safe_softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor", SafeSoftmax,
       traits::SumsLastDim() | traits::Fresh() | traits::Lower("safe_softmax")},
      {"aten::_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor", Softmax,
       traits::SumsLastDim() | traits::Fresh() | traits::Lower("log_softmax")},
      {"aten::_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType "
       "input_dtype) -> Tensor",
       SoftmaxBackward, traits::Fresh() | traits::Lower("softmax_backward_data")},
      {"aten::_log_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType "
       "input_dtype) -> Tensor",
       SoftmaxBackward, traits::Fresh() | traits::Lower("log_softmax_backward_data")},
      {"aten::native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? "
       "bias, float eps) -> (Tensor, Tensor, Tensor)",
       LayerNorm, traits::SumsLastDim() | traits::Fresh() | traits::Lower("native_layer_norm")},
      {"aten::native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] normalized_shape, "
       "Tensor mean, Tensor rstd, Tensor? weight, Tensor? bias, bool[3] output_mask) -> (Tensor, "
       "Tensor, Tensor)",
       LayerNormBackward, traits::Fresh() | traits::Lower("native_layer_norm_backward")},
      {"aten::nll_loss_forward(Tensor self, Tensor target, Tensor? weight, int reduction, SymInt "
       "ignore_index) -> (Tensor output, Tensor total_weight)",
       NllLossForward, traits::SumsLastDim() | traits::Fresh() | traits::Lower("nll_loss_forward")},
      {"aten::nll_loss_backward(Tensor grad_output, Tensor self, Tensor target, Tensor? weight, "
       "int reduction, SymInt ignore_index, Tensor total_weight) -> Tensor",
       NllLossBackward, traits::Fresh() | traits::Lower("nll_loss_backward")},
  };
}

}  // namespace gg::ir
