// Matrix products and fused attention kernels.
#include "ir/op_tables.h"
#include "ir/shape_rules.h"

namespace gg::ir {

std::vector<OpEntry> LinalgOps() {
  using namespace rules;  // NOLINT: the tables read as data
  return {
      {"aten::mm(Tensor self, Tensor mat2) -> Tensor", Mm,
       traits::SumsLastDim() | traits::Fresh() | traits::Lower("mm")},
      {"aten::addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> "
       "Tensor",
       Addmm, traits::SumsLastDim(1) | traits::Fresh() | traits::Lower("addmm")},
      {"aten::bmm(Tensor self, Tensor mat2) -> Tensor", Bmm,
       traits::SumsLastDim() | traits::Fresh() | traits::Lower("bmm")},
      {"aten::baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) "
       "-> Tensor",
       Baddbmm, traits::SumsLastDim(1) | traits::Fresh() | traits::Lower("baddbmm")},
      // MoE experts: rows of self grouped by offs (cumulative ends) against one matrix per group,
      // and the inner-dim grouping of its weight gradient. Rows past offs[-1] are unspecified in
      // ATen; the kernel (runtime/op_kernels.cc) and the language ops define them as zeros.
      {"aten::_grouped_mm(Tensor self, Tensor mat2, Tensor? offs=None, Tensor? bias=None, "
       "ScalarType? out_dtype=None) -> Tensor",
       GroupedMm, traits::SumsLastDim() | traits::Fresh() | traits::Lower("grouped_mm")},
      {"aten::matmul(Tensor self, Tensor other) -> Tensor", Matmul,
       traits::SumsLastDim() | traits::Fresh()},
      {"aten::linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor", Linear,
       traits::SumsLastDim() | traits::Fresh()},
      {"aten::_scaled_dot_product_flash_attention(Tensor query, Tensor key, Tensor value, float "
       "dropout_p=0.0, bool is_causal=False, bool return_debug_mask=False, *, float? scale=None) "
       "-> (Tensor output, Tensor logsumexp, Tensor cum_seq_q, Tensor cum_seq_k, SymInt max_q, "
       "SymInt max_k, Tensor rng_state, Tensor unused, Tensor debug_attn_mask)",
       FlashAttention, traits::Random() | traits::SumsLastDim() | traits::Lower("sdpa")},
      {"aten::_scaled_dot_product_efficient_attention(Tensor query, Tensor key, Tensor value, "
       "Tensor? attn_bias, bool compute_log_sumexp, float dropout_p=0.0, bool is_causal=False, *, "
       "float? scale=None) -> (Tensor output, Tensor log_sumexp, Tensor philox_seed, Tensor "
       "philox_offset)",
       EfficientAttention, traits::Random() | traits::SumsLastDim() | traits::Lower("sdpa")},
      // All four lower their output (not under dropout) to (sdpa ...) / (sdpa_mask ...); the CPU
      // kernel's logsumexp to (sdpa_lse ...) / (sdpa_lse_mask ...) (f32, f64); the other
      // kernels' logsumexp, RNG state and bookkeeping outputs stay opaque.
      {"aten::_scaled_dot_product_flash_attention_for_cpu(Tensor query, Tensor key, Tensor value, "
       "float dropout_p=0.0, bool is_causal=False, *, Tensor? attn_mask=None, float? scale=None) "
       "-> (Tensor output, Tensor logsumexp)",
       SdpaForCpu,
       traits::Random() | traits::SumsLastDim() | traits::Fresh() | traits::Lower("sdpa")},
      {"aten::scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? "
       "attn_mask=None, float dropout_p=0.0, bool is_causal=False, *, float? scale=None, bool "
       "enable_gqa=False) -> Tensor",
       Sdpa, traits::Random() | traits::SumsLastDim() | traits::Fresh() | traits::Lower("sdpa")},
  };
}

}  // namespace gg::ir
