// Custom kernels met in captured graphs: apex's fused layer norm, vLLM's in-place kernels (seen
// through auto_functionalized) and the capture tool's tensor-naming markers.
#include "ir/op_tables.h"
#include "ir/shape_rules.h"

namespace gg::ir {

std::vector<OpEntry> CustomOps() {
  using namespace rules;  // NOLINT: the tables read as data
  const OpTraits custom = traits::Custom();
  return {
      // apex's fused norms as apex registers them (torch.library.custom_op, apex >= 24.04).
      // Outputs: out, mean, invvar; mean and invvar hold one entry per normalized row.
      {"apex::fused_layer_norm_affine_fwd(Tensor input, Tensor weight, Tensor bias, int[] "
       "normalized_shape, float eps, bool memory_efficient=False) -> (Tensor, Tensor, Tensor)",
       ApexLayerNorm, custom | traits::SumsLastDim() | traits::Lower("apex_layer_norm")},
      // Outputs: grad_input, grad_weight, grad_bias. input_or_output is the forward's input, or
      // its output when memory_efficient (then the normalized value is rebuilt from it).
      {"apex::fused_layer_norm_affine_bwd(Tensor grad_output, Tensor mean, Tensor invvar, Tensor "
       "input_or_output, int[] normalized_shape, Tensor weight, Tensor bias, float eps, bool "
       "memory_efficient=False) -> (Tensor, Tensor, Tensor)",
       ApexLayerNormBackward,
       custom | traits::SumsLastDim() | traits::Lower("apex_layer_norm_backward")},
      // Outputs: out, invvar (one entry per normalized row).
      {"apex::fused_rms_norm_affine_fwd(Tensor input, Tensor weight, int[] normalized_shape, "
       "float eps, bool memory_efficient=False) -> (Tensor, Tensor)",
       ApexRmsNorm, custom | traits::SumsLastDim() | traits::Lower("apex_rms_norm")},
      // Outputs: grad_input, grad_weight.
      {"apex::fused_rms_norm_affine_bwd(Tensor grad_output, Tensor invvar, Tensor "
       "input_or_output, int[] normalized_shape, Tensor weight, float eps, bool "
       "memory_efficient=False) -> (Tensor, Tensor)",
       ApexRmsNormBackward,
       custom | traits::SumsLastDim() | traits::Lower("apex_rms_norm_backward")},
      {"_C::rms_norm(Tensor(a!) result, Tensor input, Tensor weight, float epsilon) -> ()", RmsNorm,
       custom | traits::SumsLastDim() | traits::Lower("rms_norm")},
      {"_C::fused_add_rms_norm(Tensor(a!) input, Tensor(b!) residual, Tensor weight, float "
       "epsilon) -> ()",
       FusedAddRmsNorm, custom | traits::SumsLastDim() | traits::Lower("fused_add_rms_norm")},
      // torchtitan's MoE combine (torchtitan/ops/scatter_add.py): out.scatter_add(0, index, src)
      // with deterministic algorithms on; lowered as aten::scatter_add along dim 0
      {"torchtitan::deterministic_scatter_add(Tensor out, Tensor index, Tensor src) -> Tensor",
       TorchtitanScatterAdd, custom | traits::Fresh() | traits::Lower("torchtitan_scatter_add")},
      {"_C::silu_and_mul(Tensor(a!) out, Tensor input) -> ()", SiluAndMul,
       custom | traits::Lower("silu_and_mul")},
      {"_C::rotary_embedding(Tensor positions, Tensor(a!) query, Tensor(b!)? key, int head_size, "
       "Tensor cos_sin_cache, bool is_neox) -> ()",
       RotaryEmbedding, custom | traits::Lower("rotary_embedding")},
      {"vllm::unified_attention_with_output(Tensor query, Tensor key, Tensor value, Tensor(a!) "
       "output, str layer_name, Tensor? output_scale=None) -> ()",
       UnifiedAttention, custom | traits::SumsLastDim() | traits::Lower("unified_attention")},
      // Capture markers: identity operators that give a tensor a name. They do not occur in the
      // published corpus; these schemas are GraphGuard's declaration.
      {"tg::log_tensor(Tensor x, str name) -> Tensor", Identity,
       custom | traits::Lower("identity")},
      {"tg::inplace_log_tensor(Tensor(a!) x, str name) -> ()", Void, custom},
  };
}

}  // namespace gg::ir
