"""Check transformers' own tensor-parallel plan with GraphGuard (README "Check your own model").

    graphguard-capture examples/transformers/llama_tp_plan.py:build --tp 2 --mode joint \
        -o /tmp/hf_tp
    build/graphguard verify --seq /tmp/hf_tp/seq.json --dist /tmp/hf_tp/dist.json \
        --relations /tmp/hf_tp/spec.rel

A tiny Llama built from its config (no download), parallelized by transformers itself: the plan
the model carries (`model.tp_plan`: its class's `_tp_plan` and the config's `base_model_tp_plan`)
resolved for the TP size and applied on a CPU DeviceMesh over the fake process group, the two
steps `from_pretrained(tp_plan="auto")` runs before loading weights. Its parameters become
DTensors, so the capture reads their placements; no plan is returned. transformers shards
k_proj/v_proj without replicating KV heads: TP must divide `kv_heads`. `--set inference=true`
runs the forward under torch.no_grad(), where transformers' colwise/rowwise layers take their local
fast path (local weights, an in-place dist.all_reduce: gg_capture.shims.transformers makes it
functional); use it with --mode fwd.
"""
import contextlib

import torch
import transformers
from torch.distributed.device_mesh import init_device_mesh
from transformers.distributed import DistributedConfig
from transformers.distributed.tensor_parallel import apply_tensor_parallelism


class CausalLMLoss(torch.nn.Module):
    """forward(...) -> (loss,): the model's own loss, labels already shifted (shift_labels); with
    `inference` under torch.no_grad()."""

    def __init__(self, model, inference=False):
        super().__init__()
        self.model = model
        self.inference = inference

    def forward(self, input_ids, position_ids, attention_mask, labels):
        with torch.no_grad() if self.inference else contextlib.nullcontext():
            out = self.model(input_ids=input_ids, position_ids=position_ids,
                             attention_mask=attention_mask, labels=labels, shift_labels=labels,
                             use_cache=False)
        return (out.loss,)


def build(tp, layers=2, hidden=64, heads=8, kv_heads=4, vocab=128, seq=8, inference=False):
    cfg = transformers.LlamaConfig(vocab_size=vocab, hidden_size=hidden,
                                   intermediate_size=2 * hidden, num_hidden_layers=layers,
                                   num_attention_heads=heads, num_key_value_heads=kv_heads,
                                   max_position_embeddings=2 * seq, tie_word_embeddings=False)
    cfg._attn_implementation = "eager"
    model = transformers.AutoModelForCausalLM.from_config(cfg)  # same weights on every rank
    if tp.size > 1:
        mesh = init_device_mesh("cpu", (tp.size,))
        plan, _, _ = model._resolve_parallel_plans(DistributedConfig(tp_size=tp.size))
        model = apply_tensor_parallelism(model, mesh, plan)
    ids, labels = torch.randint(0, vocab, (2, 1, seq))
    # an explicit additive causal mask: transformers' own mask builder branches on the data
    mask = torch.full((seq, seq), -10000.0).triu(1).reshape(1, 1, seq, seq)
    inputs = {"input_ids": ids, "position_ids": torch.arange(seq)[None], "attention_mask": mask,
              "labels": labels}
    return CausalLMLoss(model, inference), inputs
