"""A megatron-core GPT as a user captures it: graphguard-capture examples/megatron_core/gpt.py:build

megatron-core's own GPTModel (the local layer spec: torch LayerNorm, megatron's column- and
row-parallel linears, its dot-product attention and its vocabulary-parallel cross entropy), set up
as in a real run. Nothing here knows about GraphGuard's CPU capture: gg_capture applies its
megatron shims (scripts/capture/gg_capture/shims/megatron.py) by itself. Config (--set k=v): sp
(sequence parallelism), the sizes, and parallel_output=false, with which megatron-core 0.19.2
computes a wrong loss at TP > 1 (Megatron-LM #7452: the gathered logits go through the
vocabulary-parallel cross entropy; tests/bugs/mcore_7452_gathered_logits_loss).
"""
import torch
from megatron.core import parallel_state
from megatron.core.models.gpt import GPTModel
from megatron.core.models.gpt.gpt_layer_specs import get_gpt_layer_local_spec
from megatron.core.tensor_parallel import model_parallel_cuda_manual_seed
from megatron.core.transformer import TransformerConfig


class GPTLoss(torch.nn.Module):
    """GPTModel with labels returns megatron's per-token losses ([batch, sequence], from its
    vocabulary-parallel cross entropy); the training loss is their mean."""

    def __init__(self, gpt):
        super().__init__()
        self.gpt = gpt

    def forward(self, input_ids, position_ids, labels):
        return self.gpt(input_ids, position_ids, None, labels=labels).mean()


def build(tp, sp=False, layers=1, hidden=32, heads=4, ffn=None, vocab=64, seq=8, batch=1,
          parallel_output=True):
    parallel_state.initialize_model_parallel(tensor_model_parallel_size=tp.size)
    model_parallel_cuda_manual_seed(0)
    config = TransformerConfig(
        num_layers=layers, hidden_size=hidden, num_attention_heads=heads,
        ffn_hidden_size=ffn, tensor_model_parallel_size=tp.size,
        sequence_parallel=sp and tp.size > 1, use_cpu_initialization=True)
    gpt = GPTModel(config, get_gpt_layer_local_spec(), vocab_size=vocab, max_sequence_length=seq,
                   parallel_output=parallel_output)
    inputs = {"input_ids": torch.randint(0, vocab, (batch, seq)),
              "position_ids": torch.arange(seq).unsqueeze(0).expand(batch, seq),
              "labels": torch.randint(0, vocab, (batch, seq))}
    return GPTLoss(gpt), inputs
