"""Hugging Face transformers causal LMs (tiny random configs built from config objects, no
downloads) made tensor-parallel by replacing their Linear/Embedding modules with tp.py's
Megatron-style layers: q/k/v and gate/up column-parallel, o/down row-parallel, the token embedding
vocabulary-parallel, lm_head column-parallel with its output gathered (transformers' own
"colwise_rep"). Their attention reshapes with -1 heads, so local heads need no other change but
repeat_kv's factor. With more ranks than kv heads (GQA) k/v keep whole heads: rank r holds kv head
r * kv / tp, the one its query heads read ("grouped" placement), replicated on tp / kv ranks; the
gradients of those weights are then partial over the replicas.

GPT-2's projections are transformers' Conv1D (y = x W + b with W stored [in, out], a transposed
Linear): each becomes the tp.py Linear of W^T, so the S graph holds [out, in] weights like the
other models. Its fused c_attn is column-parallel by sections (q, k, v) and its split width is
set to the local width; wpe (positions) stays replicated.

Mixtral (the mixture-of-experts model): its experts are transformers' 3D parameters (gate_up_proj
[E, 2F, H], down_proj [E, H, F]) run by transformers' "batched_mm" experts implementation (every
token's top-k experts gathered by index: no data-dependent shapes, unlike the eager loop over
nonzero()). Each expert is tensor-parallel like the dense MLP: gate_up column-parallel by sections
(gate, up), down row-parallel. The router stays replicated; the MoE block's input enters the TP
region (copy_to_tp) and its output, a sum of partial expert outputs weighted by the router, is
all-reduced once. The router's weight gradient is then partial per rank (each rank sees only its
slice of the expert outputs the routing weights multiply), so it is all-reduced like a
sequence-parallel parameter's (Megatron-LM's TopKRouter does the same).

HFTpPlan (the hf_*_tp_plan cases) replaces nothing: transformers parallelizes the model itself with
its own tp_plan, as from_pretrained(tp_plan="auto") does (see the class)."""
import torch

from .. import tp as tpmod
from .base import Program

SEQ = 8
_COLUMN = ("q_proj", "gate_proj", "up_proj", "c_fc")
_KV = ("k_proj", "v_proj")
_ROW = ("o_proj", "down_proj", "c_proj")
_EMBEDDING = ("embed_tokens", "wte")


def _configs():
    import transformers as T
    common = dict(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                  max_position_embeddings=16, tie_word_embeddings=False)
    return {
        # grouped-query attention with 2 kv heads: at TP 4 and 8 more ranks than kv heads
        "hf_llama": lambda: T.LlamaConfig(num_attention_heads=8, num_key_value_heads=2, **common),
        "hf_qwen2": lambda: T.Qwen2Config(num_attention_heads=8, num_key_value_heads=4, **common),
        # bos/eos inside the tiny vocabulary (GPT-2's defaults, 50256, would only warn)
        "hf_gpt2": lambda: T.GPT2Config(vocab_size=64, n_embd=32, n_head=4, n_inner=64, n_layer=1,
                                        n_positions=16, tie_word_embeddings=False,
                                        bos_token_id=0, eos_token_id=0),
        "hf_mixtral": lambda: T.MixtralConfig(num_attention_heads=4, num_key_value_heads=4,
                                              num_local_experts=4, num_experts_per_tok=2,
                                              **common),
    }


_PLANS = {
    "hf_gpt2": ("transformers GPT-2, Conv1D (as the Linear of its transposed weight) and "
                "Embedding replaced by tp.py's Megatron-style layers "
                "(scripts/capture/gg_capture/models/hf.py)"),
    "hf_mixtral": ("transformers Mixtral (batched_mm experts), Linear/Embedding replaced by "
                   "tp.py's Megatron-style layers, experts sharded like the dense MLP, router "
                   "replicated (scripts/capture/gg_capture/models/hf.py)"),
}


class HFCausalLM(Program):
    plan = ("transformers model, Linear/Embedding replaced by tp.py's Megatron-style layers "
            "(scripts/capture/gg_capture/models/hf.py)")

    def __init__(self, name):
        self.name = name
        self.plan = _PLANS.get(name, self.plan)
        cfg = _configs()[name]()
        cfg._attn_implementation = "eager"
        if name == "hf_mixtral":
            cfg._experts_implementation = "batched_mm"
        self.hf_config = cfg
        if name in ("hf_llama", "hf_qwen2"):
            self.degrees = (2, 4, 8)  # 8 query heads
        self.config = {"model_type": cfg.model_type, "vocab": cfg.vocab_size,
                       "hidden": cfg.hidden_size, "heads": cfg.num_attention_heads,
                       "kv_heads": getattr(cfg, "num_key_value_heads", cfg.num_attention_heads),
                       "ffn": getattr(cfg, "intermediate_size", None) or cfg.n_inner,
                       "layers": cfg.num_hidden_layers, "seq": SEQ, "batch": 1}
        if hasattr(cfg, "num_local_experts"):
            self.config.update(experts=cfg.num_local_experts, top_k=cfg.num_experts_per_tok)

    def build(self, tp):
        import transformers as T
        from transformers.pytorch_utils import Conv1D
        torch.manual_seed(0)
        model = T.AutoModelForCausalLM.from_config(self.hf_config)
        for name, module in list(model.named_modules()):
            for child_name, child in list(module.named_children()):
                new = None
                if isinstance(child, Conv1D):
                    new = _conv1d(child_name, child, tp)
                    if child_name == "c_attn":
                        module.split_size //= tp.size  # q, k, v of the local heads
                elif isinstance(child, torch.nn.Linear) and child_name in _KV:
                    # kv heads are indivisible: with more ranks than kv heads each rank holds
                    # the one its query heads read (vLLM's and Megatron's replicated kv heads)
                    new = tpmod.ColumnParallelLinear(child.weight.data, _bias(child), tp,
                                                     pieces=self._kv_heads())
                elif isinstance(child, torch.nn.Linear) and child_name in _COLUMN:
                    new = tpmod.ColumnParallelLinear(child.weight.data, _bias(child), tp)
                elif isinstance(child, torch.nn.Linear) and child_name in _ROW:
                    new = tpmod.RowParallelLinear(child.weight.data, _bias(child), tp)
                elif isinstance(child, torch.nn.Linear) and child_name == "lm_head":
                    new = tpmod.ColumnParallelLinear(child.weight.data, _bias(child), tp,
                                                     gather_output=True)
                elif isinstance(child, torch.nn.Embedding) and child_name in _EMBEDDING:
                    new = tpmod.VocabParallelEmbedding(child.weight.data, tp)
                if new is not None:
                    setattr(module, child_name, new)
            if hasattr(module, "experts") and hasattr(module.experts, "gate_up_proj"):
                _parallel_moe(module, tp)
            if hasattr(module, "num_key_value_groups"):
                # the local query heads per local kv head (repeat_kv's factor)
                heads = self.hf_config.num_attention_heads // tp.size
                module.num_key_value_groups = heads // max(self._kv_heads() // tp.size, 1)
        return _Wrapped(model)

    def _kv_heads(self):
        cfg = self.hf_config
        return getattr(cfg, "num_key_value_heads", None) or cfg.num_attention_heads

    def data(self, tp):
        g = torch.Generator().manual_seed(1)
        ids = torch.randint(0, self.hf_config.vocab_size, (1, SEQ), generator=g)
        labels = torch.randint(0, self.hf_config.vocab_size, (1, SEQ), generator=g)
        # an explicit additive causal mask: transformers' own mask builder inspects position ids
        # with data-dependent control flow that make_fx cannot trace
        mask = torch.full((SEQ, SEQ), -10000.0).triu(1).reshape(1, 1, SEQ, SEQ)
        positions = torch.arange(SEQ).reshape(1, SEQ)
        return {"input_ids": ids, "position_ids": positions, "attention_mask": mask,
                "labels": labels}


def _conv1d(name, conv, tp):
    weight = conv.weight.data.t().contiguous()  # Conv1D stores [in, out]
    if name == "c_attn":
        third = weight.shape[0] // 3
        return tpmod.ColumnParallelLinear(weight, _bias(conv), tp, fused=[third] * 3)
    if name in _COLUMN:
        return tpmod.ColumnParallelLinear(weight, _bias(conv), tp)
    if name in _ROW:
        return tpmod.RowParallelLinear(weight, _bias(conv), tp)
    raise ValueError(f"hf: no tensor-parallel plan for Conv1D {name!r}")


def _parallel_moe(block, tp):
    experts = block.experts
    ffn = experts.gate_up_proj.shape[1] // 2
    experts.gate_up_proj = tpmod.place(
        torch.nn.Parameter(tpmod.fused_shard(experts.gate_up_proj.data, 1, [ffn, ffn], tp)),
        "fused", 1, [ffn, ffn])
    experts.down_proj = tpmod.place(
        torch.nn.Parameter(tpmod.shard(experts.down_proj.data, 2, tp)), "shard", 2)
    if tp.size > 1:
        tpmod.sequence_parallel(block.gate.weight)  # partial gradient: all-reduced (see above)
    block.register_forward_pre_hook(lambda _, args: (tpmod.copy_to_tp(args[0], tp), *args[1:]))
    block.register_forward_hook(lambda _, args, out: tpmod.reduce_from_tp(out, tp))


def _bias(linear):
    return None if linear.bias is None else linear.bias.data


class _Wrapped(torch.nn.Module):
    """forward(input_ids, position_ids, attention_mask, labels) -> (loss,); labels are already the next tokens
    (shift_labels), so the loss reads them as they are."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, position_ids, attention_mask, labels):
        out = self.model(input_ids=input_ids, position_ids=position_ids,
                         attention_mask=attention_mask, labels=labels,
                         shift_labels=labels, use_cache=False)
        return (out.loss,)


# the tiny config of the tp_plan cases: 8 query heads in 4 kv groups. transformers' plan shards
# k_proj/v_proj "colwise" with no kv-head replication, so TP must divide the kv heads: with 2 kv
# heads at TP 4 LlamaAttention's own view(..., -1, head_dim) fails on half a head.
TP_PLAN_CONFIG = dict(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                      num_attention_heads=8, num_key_value_heads=4, max_position_embeddings=16,
                      tie_word_embeddings=False)


class HFTpPlan(HFCausalLM):
    """A transformers causal LM parallelized by transformers itself: the model's own tensor-parallel
    plan (its class's `_tp_plan` merged with the config's `base_model_tp_plan`, the input embedding
    added as "embedding_rowwise") resolved for `DistributedConfig(tp_size=N)` and applied by
    `transformers.distributed.tensor_parallel.apply_tensor_parallelism` on the TP mesh, the two
    steps `from_pretrained(tp_plan="auto")` runs (`maybe_distribute_model`) after building the
    model and before loading weights. Every parameter the plan names becomes a DTensor (colwise
    Shard(0), rowwise Shard(1), the embedding "embedding_rowwise": vocabulary-parallel, lm_head
    "colwise_gather_output") and each planned module's forward redistributes its input and output,
    so the capture reads the placements from the DTensors (trace.dtensor_trace) and nothing here
    states a sharding. Nothing needs CUDA or a real process group (the fake group carries the
    collectives); the capture runs with gradients enabled, so the layers take their DTensor path
    (their no_grad fast path needs shims/transformers.py). `family` names the _configs() model class; its config is
    TP_PLAN_CONFIG."""
    dtensor = True  # trace.py captures it with DTensor parameters (see trace.dtensor_trace)

    def __init__(self, name, family):
        super().__init__(family)
        self.name = name
        cfg = type(self.hf_config)(**TP_PLAN_CONFIG)
        cfg._attn_implementation = "eager"
        self.hf_config = cfg
        self.degrees = (2, 4)
        self.config.update(vocab=cfg.vocab_size, hidden=cfg.hidden_size,
                           heads=cfg.num_attention_heads, kv_heads=cfg.num_key_value_heads,
                           ffn=cfg.intermediate_size, layers=cfg.num_hidden_layers)
        self.plan = (f"transformers {type(self.hf_config).__name__[:-6]}, its own tp_plan "
                     "(_resolve_parallel_plans + apply_tensor_parallelism, as "
                     "from_pretrained(tp_plan=\"auto\")) (scripts/capture/gg_capture/models/hf.py)")

    def build(self, tp):
        import transformers as T
        torch.manual_seed(0)
        model = T.AutoModelForCausalLM.from_config(self.hf_config)
        if tp.size > 1:
            from transformers.distributed import DistributedConfig
            from transformers.distributed.tensor_parallel import apply_tensor_parallelism
            tp_plan, _, _ = model._resolve_parallel_plans(DistributedConfig(tp_size=tp.size))
            model = apply_tensor_parallelism(model, tp.mesh, tp_plan)
        return _Wrapped(model)
