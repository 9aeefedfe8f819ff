"""Hugging Face transformers causal LMs (tiny random configs built from config objects, no
downloads) made tensor-parallel by replacing their Linear/Embedding modules with tp.py's
Megatron-style layers: q/k/v and gate/up column-parallel, o/down row-parallel, the token embedding
vocabulary-parallel, lm_head column-parallel with its output gathered (transformers' own
"colwise_rep"). Their attention reshapes with -1 heads, so local heads need no other change."""
import torch

from .. import tp as tpmod
from .base import Program

SEQ = 8
_COLUMN = ("q_proj", "k_proj", "v_proj", "gate_proj", "up_proj", "c_fc")
_ROW = ("o_proj", "down_proj")


def _configs():
    import transformers as T
    common = dict(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                  max_position_embeddings=16, tie_word_embeddings=False)
    return {
        "hf_llama": lambda: T.LlamaConfig(num_attention_heads=4, num_key_value_heads=4, **common),
        "hf_qwen2": lambda: T.Qwen2Config(num_attention_heads=8, num_key_value_heads=4, **common),
    }


class HFCausalLM(Program):
    plan = ("transformers model, Linear/Embedding replaced by tp.py's Megatron-style layers "
            "(scripts/capture/gg_capture/models/hf.py)")

    def __init__(self, name):
        self.name = name
        cfg = _configs()[name]()
        cfg._attn_implementation = "eager"
        self.hf_config = cfg
        self.config = {"model_type": cfg.model_type, "vocab": cfg.vocab_size,
                       "hidden": cfg.hidden_size, "heads": cfg.num_attention_heads,
                       "kv_heads": cfg.num_key_value_heads, "ffn": cfg.intermediate_size,
                       "layers": cfg.num_hidden_layers, "seq": SEQ, "batch": 1}

    def build(self, tp):
        import transformers as T
        torch.manual_seed(0)
        model = T.AutoModelForCausalLM.from_config(self.hf_config)
        for name, module in list(model.named_modules()):
            for child_name, child in list(module.named_children()):
                new = None
                if isinstance(child, torch.nn.Linear) and child_name in _COLUMN:
                    new = tpmod.ColumnParallelLinear(child.weight.data, _bias(child), tp)
                elif isinstance(child, torch.nn.Linear) and child_name in _ROW:
                    new = tpmod.RowParallelLinear(child.weight.data, _bias(child), tp)
                elif isinstance(child, torch.nn.Linear) and child_name == "lm_head":
                    new = tpmod.ColumnParallelLinear(child.weight.data, _bias(child), tp,
                                                     gather_output=True)
                elif isinstance(child, torch.nn.Embedding) and child_name == "embed_tokens":
                    new = tpmod.VocabParallelEmbedding(child.weight.data, tp)
                if new is not None:
                    setattr(module, child_name, new)
        return _Wrapped(model)

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
