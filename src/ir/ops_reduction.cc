// Reductions, softmax and normalizations, losses, sorting and scans.
#include "ir/op_tables.h"
#include "ir/shape_rules.h"

namespace gg::ir {

std::vector<OpEntry> ReductionOps() {
  using namespace rules;  // NOLINT: the tables read as data
  return {
      {"aten::sum(Tensor self, *, ScalarType? dtype=None) -> Tensor", SumAll},
      {"aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
       SumDims},
      {"aten::mean(Tensor self, *, ScalarType? dtype=None) -> Tensor", MeanAll},
      {"aten::mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
       MeanDims},
      {"aten::amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor", AmaxDims},
      {"aten::amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor", AmaxDims},
      {"aten::max(Tensor self) -> Tensor", MaxAll},
      {"aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
       MaxDim},
      {"aten::min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
       MaxDim},
      {"aten::argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor", Argmax},
      {"aten::logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor", Logsumexp},
      {"aten::var.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor",
       Var},
      {"aten::var_mean.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> (Tensor, Tensor)",
       VarMean},
      {"aten::linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
       VectorNorm},
      {"aten::cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor", Cumsum},
      {"aten::topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices)",
       Topk},
      {"aten::sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)",
       Sort},
      {"aten::_softmax(Tensor self, int dim, bool half_to_float) -> Tensor", Softmax},
      {"aten::_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor", Softmax},
      {"aten::_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) -> Tensor",
       SoftmaxBackward},
      {"aten::_log_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) -> Tensor",
       SoftmaxBackward},
      {"aten::native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps) -> (Tensor, Tensor, Tensor)",
       LayerNorm},
      {"aten::native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] normalized_shape, Tensor mean, Tensor rstd, Tensor? weight, Tensor? bias, bool[3] output_mask) -> (Tensor, Tensor, Tensor)",
       LayerNormBackward},
      {"aten::nll_loss_forward(Tensor self, Tensor target, Tensor? weight, int reduction, SymInt ignore_index) -> (Tensor output, Tensor total_weight)",
       NllLossForward},
      {"aten::nll_loss_backward(Tensor grad_output, Tensor self, Tensor target, Tensor? weight, int reduction, SymInt ignore_index, Tensor total_weight) -> Tensor",
       NllLossBackward},
  };
}

}  // namespace gg::ir
