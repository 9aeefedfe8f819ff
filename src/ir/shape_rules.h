// Shape rules: the reusable shape/dtype computations the operator tables (ops_*.cc) point at.
//
// A rule reads a node's bound arguments through ShapeContext and returns the output types with
// torch's semantics (broadcasting, type promotion with wrapped Python numbers, keepdim, -1 in
// view). Rules only move symbolic dims around or combine them with Dim arithmetic, so graphs with
// symbolic sizes keep working. Inconsistent arguments throw ShapeError("mm: inner dimensions ...").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/op_registry.h"

namespace gg::ir {

using Outputs = std::vector<std::optional<TensorType>>;

// ---- argument access (errors name the operator and the argument) ----------------------------
// "mm" for aten operators, "ns::name" otherwise: the prefix of every ShapeError message.
std::string RuleLabel(const ShapeContext& ctx);
[[noreturn]] void RuleError(const ShapeContext& ctx, const std::string& message);
// The same for a dtype problem (throws DTypeError, reported as a type error).
[[noreturn]] void DTypeRuleError(const ShapeContext& ctx, const std::string& message);

int64_t IntArg(const ShapeContext& ctx, const std::string& name);
std::optional<int64_t> OptionalIntArg(const ShapeContext& ctx, const std::string& name);
double DoubleArg(const ShapeContext& ctx, const std::string& name);
bool BoolArg(const ShapeContext& ctx, const std::string& name);
// int[] argument; None gives an empty list, a single int a one-element list.
std::vector<int64_t> IntListArg(const ShapeContext& ctx, const std::string& name);
// A SymInt: an int, or a string naming a symbolic size ("s0").
Dim DimArg(const ShapeContext& ctx, const std::string& name);
std::optional<Dim> OptionalDimArg(const ShapeContext& ctx, const std::string& name);
// SymInt[] argument: ints and symbol strings.
Shape SizeArg(const ShapeContext& ctx, const std::string& name);
// ScalarType argument (a DType, or torch's integer code); nullopt for None.
std::optional<DType> DTypeArg(const ShapeContext& ctx, const std::string& name);
// Tensor?[] argument: nullopt for None entries.
std::vector<std::optional<TensorType>> OptionalTensorListArg(const ShapeContext& ctx,
                                                             const std::string& name);
// The type of the schema's first argument (the "self"/"input" of most operators).
const TensorType& FirstTensorArg(const ShapeContext& ctx);

// ---- shape helpers ---------------------------------------------------------------------------
int64_t NormalizeDim(const ShapeContext& ctx, int64_t dim, int64_t rank);
Shape BroadcastShapes(const ShapeContext& ctx, const Shape& a, const Shape& b);
// The same without a node to blame: nullopt when a and b do not broadcast (the tensor
// language's type analysis shares this rule).
std::optional<Shape> BroadcastShapes(const Shape& a, const Shape& b);
// True when `from` broadcasts to exactly `to`.
bool BroadcastsTo(const Shape& from, const Shape& to);
// Shape of a reduction over `dims` (all dims when empty).
Shape ReducedShape(const ShapeContext& ctx, const Shape& shape, const std::vector<int64_t>& dims,
                   bool keepdim);

// ---- dtype helpers ---------------------------------------------------------------------------
// One operand of torch.result_type: a tensor with dims, a zero-dim tensor, or a Python number.
struct Operand {
  enum Kind { kDimTensor, kZeroDimTensor, kWrappedNumber };
  DType dtype;
  Kind kind;
};
// A Tensor or Scalar argument as an operand; nullopt when it is None.
std::optional<Operand> OperandArg(const ShapeContext& ctx, const std::string& name);
// torch.result_type: dim tensors win over zero-dim tensors over numbers, unless a lower
// priority operand is of a higher category (bool < integral < floating < complex).
DType ResultType(const std::vector<Operand>& operands);
// The float dtype an integral/bool input computes in (the default dtype, f32).
DType ToFloating(DType dtype);

// ---- rules -----------------------------------------------------------------------------------
namespace rules {

// Pointwise.
Outputs Identity(const ShapeContext& ctx);           // type of the first argument
Outputs UnaryFloat(const ShapeContext& ctx);         // integral inputs compute in f32
Outputs UnaryFloatOnly(const ShapeContext& ctx);     // floating inputs only (gelu, silu)
Outputs Broadcast(const ShapeContext& ctx);          // args 0 and 1, promoted
Outputs BroadcastTrueDiv(const ShapeContext& ctx);   // div: integral results become f32
Outputs DivMode(const ShapeContext& ctx);            // div.Tensor_mode
Outputs BroadcastIntegral(const ShapeContext& ctx);  // bitwise ops: bool/integral only
Outputs Compare(const ShapeContext& ctx);            // args 0 and 1 broadcast, bool result
Outputs Where(const ShapeContext& ctx);
Outputs MaskedFill(const ShapeContext& ctx);
Outputs BackwardLikeSelf(const ShapeContext& ctx);  // gelu_backward etc.: broadcast of 0 and 1
Outputs ToCopy(const ShapeContext& ctx);
Outputs Copy(const ShapeContext& ctx);     // copy(self, src): self's type
Outputs Dropout(const ShapeContext& ctx);  // (output, bool mask)
// (output, buffer), both like the floating input (the CPU kernel's buffer; CUDA's is empty)
Outputs LogSigmoidForward(const ShapeContext& ctx);
Outputs Softmax(const ShapeContext& ctx);  // _softmax/_log_softmax(self, dim, half_to_float)
Outputs SoftmaxBackward(const ShapeContext& ctx);  // grad_output's shape, input_dtype
Outputs Void(const ShapeContext& ctx);             // returns nothing

// Linear algebra.
Outputs Mm(const ShapeContext& ctx);
Outputs Addmm(const ShapeContext& ctx);
Outputs Bmm(const ShapeContext& ctx);
Outputs Baddbmm(const ShapeContext& ctx);
Outputs Matmul(const ShapeContext& ctx);
Outputs Linear(const ShapeContext& ctx);
// torch._grouped_mm(self, mat2, offs): 2-d x 3-d, self's rows grouped by offs, [M, K] x [G, K, N]
// -> [M, N]; 2-d x 2-d, the inner dim grouped, [M, K] x [K, N] -> [G, M, N]; 3-d x 2-d, mat2's
// columns grouped, [G, M, K] x [K, N] -> [M, N]; 3-d x 3-d without offs, bmm. offs: integer [G].
Outputs GroupedMm(const ShapeContext& ctx);
// The same rule on shapes alone (the tensor language's grouped_mm ops): the result, or nullopt
// with the reason in `why`. `offs` is null when there is none.
std::optional<Shape> GroupedMmShape(const Shape& a, const Shape& b, const Shape* offs,
                                    std::string* why);
Outputs FlashAttention(const ShapeContext& ctx);
Outputs EfficientAttention(const ShapeContext& ctx);
Outputs Sdpa(const ShapeContext& ctx);           // scaled_dot_product_attention: [B, Hq, L, Ev]
Outputs SdpaForCpu(const ShapeContext& ctx);     // output, logsumexp [B, Hq, L]
Outputs SafeSoftmax(const ShapeContext& ctx);    // _safe_softmax(self, dim, dtype)
Outputs AllAnyDim(const ShapeContext& ctx);      // all.dim/any.dim: bool (uint8 stays uint8)
Outputs ViewAsComplex(const ShapeContext& ctx);  // f32[..., 2] -> c64[...], f64 -> c128
Outputs ViewAsReal(const ShapeContext& ctx);     // c64[...] -> f32[..., 2], c128 -> f64

// Shape and views.
Outputs View(const ShapeContext& ctx);  // view/reshape/_unsafe_view: size with one -1
Outputs Expand(const ShapeContext& ctx);
Outputs Permute(const ShapeContext& ctx);
Outputs Transpose(const ShapeContext& ctx);
Outputs T(const ShapeContext& ctx);
Outputs Unsqueeze(const ShapeContext& ctx);
Outputs SqueezeDims(const ShapeContext& ctx);  // squeeze.dim / squeeze.dims
Outputs Squeeze(const ShapeContext& ctx);      // every size-1 dim
Outputs Select(const ShapeContext& ctx);
Outputs Slice(const ShapeContext& ctx);
Outputs SliceScatter(const ShapeContext& ctx);
Outputs SelectScatter(const ShapeContext& ctx);
Outputs Cat(const ShapeContext& ctx);
Outputs Stack(const ShapeContext& ctx);
Outputs SplitWithSizes(const ShapeContext& ctx);
Outputs Split(const ShapeContext& ctx);

// Reductions and normalizations.
Outputs SumAll(const ShapeContext& ctx);   // sum(self, *, dtype): integral -> i64
Outputs SumDims(const ShapeContext& ctx);  // sum.dim_IntList
Outputs MeanAll(const ShapeContext& ctx);
Outputs MeanDims(const ShapeContext& ctx);
Outputs AmaxDims(const ShapeContext& ctx);  // amax/amin(self, dim=[], keepdim)
Outputs MaxAll(const ShapeContext& ctx);    // max/min(self) -> scalar
Outputs MaxDim(const ShapeContext& ctx);    // (values, i64 indices)
Outputs Argmax(const ShapeContext& ctx);
Outputs Logsumexp(const ShapeContext& ctx);
Outputs Var(const ShapeContext& ctx);      // var.correction
Outputs VarMean(const ShapeContext& ctx);  // var_mean.correction
Outputs VectorNorm(const ShapeContext& ctx);
Outputs Cumsum(const ShapeContext& ctx);
Outputs Topk(const ShapeContext& ctx);
Outputs Sort(const ShapeContext& ctx);
Outputs LayerNorm(const ShapeContext& ctx);          // native_layer_norm
Outputs LayerNormBackward(const ShapeContext& ctx);  // native_layer_norm_backward
Outputs NllLossForward(const ShapeContext& ctx);
Outputs NllLossBackward(const ShapeContext& ctx);

// Indexing.
Outputs Index(const ShapeContext& ctx);  // advanced indexing with Tensor?[] indices
Outputs IndexPut(const ShapeContext& ctx);
Outputs Embedding(const ShapeContext& ctx);
Outputs EmbeddingDenseBackward(const ShapeContext& ctx);
Outputs Gather(const ShapeContext& ctx);
Outputs ScatterLike(const ShapeContext& ctx);  // scatter/scatter_add: self's type
Outputs IndexSelect(const ShapeContext& ctx);
Outputs IndexCopy(const ShapeContext& ctx);  // index_copy: self's type

// Factories.
Outputs FromSize(const ShapeContext& ctx);     // empty/zeros/ones/rand(size, *, dtype=f32)
Outputs Full(const ShapeContext& ctx);         // dtype from fill_value unless given
Outputs Like(const ShapeContext& ctx);         // *_like(self, *, dtype)
Outputs NewFromSize(const ShapeContext& ctx);  // new_*(self, size, *, dtype=self's)
Outputs ScalarTensor(const ShapeContext& ctx);
Outputs Arange(const ShapeContext& ctx);

// Collectives (group size from the argument, or the program's when the schema has none).
Outputs AllGather(const ShapeContext& ctx);      // dim 0 * group_size
Outputs ReduceScatter(const ShapeContext& ctx);  // dim 0 / group_size
Outputs AllToAllSingle(const ShapeContext& ctx);
// Point-to-point transfers: c10d's send/recv_ take a list of exactly one tensor (what
// ProcessGroup::send/recv accept per call) and return a Work (no tensor);
// _c10d_functional::isend returns an empty tensor of the sent dtype (irecv: Identity).
Outputs SendOrRecvList(const ShapeContext& ctx);
Outputs FunctionalSend(const ShapeContext& ctx);

// Custom kernels (apex, vLLM).
Outputs ApexLayerNorm(const ShapeContext& ctx);  // (out, mean, invvar)
Outputs ApexLayerNormBackward(const ShapeContext& ctx);  // (grad_input, grad_weight, grad_bias)
Outputs ApexRmsNorm(const ShapeContext& ctx);            // (out, invvar)
Outputs ApexRmsNormBackward(const ShapeContext& ctx);    // (grad_input, grad_weight)
Outputs RmsNorm(const ShapeContext& ctx);        // _C::rms_norm: checks, returns nothing
Outputs FusedAddRmsNorm(const ShapeContext& ctx);
Outputs SiluAndMul(const ShapeContext& ctx);
Outputs RotaryEmbedding(const ShapeContext& ctx);
Outputs UnifiedAttention(const ShapeContext& ctx);
// torchtitan::deterministic_scatter_add(out, index, src): out.scatter_add(0, index, src)'s type
Outputs TorchtitanScatterAdd(const ShapeContext& ctx);

}  // namespace rules
}  // namespace gg::ir
