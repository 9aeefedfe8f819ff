// Pointwise operators: arithmetic with broadcasting and type promotion, comparisons, bitwise and
// unary math, activations and their backward forms, copies and dtype conversions, dropout.
#include "ir/op_tables.h"
#include "ir/shape_rules.h"

namespace gg::ir {

std::vector<OpEntry> ElementwiseOps() {
  using namespace rules;  // NOLINT: the tables read as data
  return {
      // Arithmetic. A Python number passed for a Tensor argument is a wrapped scalar.
      {"aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", Broadcast},
      {"aten::add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", Broadcast},
      {"aten::sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", Broadcast},
      {"aten::sub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", Broadcast},
      {"aten::rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", Broadcast},
      {"aten::mul.Tensor(Tensor self, Tensor other) -> Tensor", Broadcast},
      {"aten::mul.Scalar(Tensor self, Scalar other) -> Tensor", Broadcast},
      {"aten::div.Tensor(Tensor self, Tensor other) -> Tensor", BroadcastTrueDiv},
      {"aten::div.Scalar(Tensor self, Scalar other) -> Tensor", BroadcastTrueDiv},
      {"aten::div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor", DivMode},
      {"aten::pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor", Broadcast},
      {"aten::pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor", Broadcast},
      {"aten::maximum(Tensor self, Tensor other) -> Tensor", Broadcast},
      {"aten::minimum(Tensor self, Tensor other) -> Tensor", Broadcast},
      {"aten::where.self(Tensor condition, Tensor self, Tensor other) -> Tensor", Where},
      {"aten::clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor", Identity},
      // Comparisons and bitwise logic.
      {"aten::eq.Scalar(Tensor self, Scalar other) -> Tensor", Compare},
      {"aten::ne.Scalar(Tensor self, Scalar other) -> Tensor", Compare},
      {"aten::lt.Scalar(Tensor self, Scalar other) -> Tensor", Compare},
      {"aten::le.Scalar(Tensor self, Scalar other) -> Tensor", Compare},
      {"aten::gt.Scalar(Tensor self, Scalar other) -> Tensor", Compare},
      {"aten::ge.Scalar(Tensor self, Scalar other) -> Tensor", Compare},
      {"aten::eq.Tensor(Tensor self, Tensor other) -> Tensor", Compare},
      {"aten::ne.Tensor(Tensor self, Tensor other) -> Tensor", Compare},
      {"aten::lt.Tensor(Tensor self, Tensor other) -> Tensor", Compare},
      {"aten::gt.Tensor(Tensor self, Tensor other) -> Tensor", Compare},
      {"aten::bitwise_and.Tensor(Tensor self, Tensor other) -> Tensor", BroadcastIntegral},
      {"aten::bitwise_or.Tensor(Tensor self, Tensor other) -> Tensor", BroadcastIntegral},
      {"aten::bitwise_not(Tensor self) -> Tensor", Identity},
      {"aten::logical_not(Tensor self) -> Tensor", Compare},
      {"aten::masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor", MaskedFill},
      {"aten::masked_fill.Tensor(Tensor self, Tensor mask, Tensor value) -> Tensor", MaskedFill},
      // Unary math: integral inputs compute in the default float dtype.
      {"aten::neg(Tensor self) -> Tensor", Identity},
      {"aten::abs(Tensor self) -> Tensor", Identity},
      {"aten::exp(Tensor self) -> Tensor", UnaryFloat},
      {"aten::log(Tensor self) -> Tensor", UnaryFloat},
      {"aten::sqrt(Tensor self) -> Tensor", UnaryFloat},
      {"aten::rsqrt(Tensor self) -> Tensor", UnaryFloat},
      {"aten::reciprocal(Tensor self) -> Tensor", UnaryFloat},
      {"aten::sin(Tensor self) -> Tensor", UnaryFloat},
      {"aten::cos(Tensor self) -> Tensor", UnaryFloat},
      {"aten::erf(Tensor self) -> Tensor", UnaryFloat},
      {"aten::tanh(Tensor self) -> Tensor", UnaryFloat},
      {"aten::sigmoid(Tensor self) -> Tensor", UnaryFloat},
      // Activations and their gradients.
      {"aten::relu(Tensor self) -> Tensor", Identity},
      {"aten::silu(Tensor self) -> Tensor", UnaryFloatOnly},
      {"aten::gelu(Tensor self, *, str approximate='none') -> Tensor", UnaryFloatOnly},
      {"aten::gelu_backward(Tensor grad_output, Tensor self, *, str approximate='none') -> Tensor",
       BackwardLikeSelf},
      {"aten::silu_backward(Tensor grad_output, Tensor self) -> Tensor", BackwardLikeSelf},
      {"aten::threshold_backward(Tensor grad_output, Tensor self, Scalar threshold) -> Tensor",
       BackwardLikeSelf},
      {"aten::sigmoid_backward(Tensor grad_output, Tensor output) -> Tensor", BackwardLikeSelf},
      {"aten::tanh_backward(Tensor grad_output, Tensor output) -> Tensor", BackwardLikeSelf},
      // Dropout draws random masks.
      {"aten::native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)", Dropout,
       traits::Random()},
      {"aten::native_dropout_backward(Tensor grad_output, Tensor mask, float scale) -> Tensor",
       BackwardLikeSelf},
      // Copies, aliases and conversions.
      {"aten::clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor", Identity},
      {"aten::lift_fresh_copy(Tensor self) -> Tensor", Identity},
      {"aten::detach(Tensor(a) self) -> Tensor(a)", Identity},
      {"aten::alias(Tensor(a) self) -> Tensor(a)", Identity},
      {"aten::copy(Tensor self, Tensor src, bool non_blocking=False) -> Tensor", Copy},
      {"aten::fill.Scalar(Tensor self, Scalar value) -> Tensor", Identity},
      {"aten::_to_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, MemoryFormat? memory_format=None) -> Tensor",
       ToCopy},
  };
}

}  // namespace gg::ir
