"""torchtitan's own Llama3 (PyPI torchtitan 0.3.0), parallelized by torchtitan itself.

The model is torchtitan.models.llama3.Llama3Model built from its config with torchtitan's layer
builder (_build_llama3_layers: fused QKV laid out per KV-head group, RMSNorm, SwiGLU FFN, flex
attention, complex or cos/sin RoPE), at a tiny size. A distributed rank declares the sharding with
torchtitan's set_llama3_sharding_config (sp: SequenceParallel norms and Shard(1) activations
between the blocks) and calls the model's own Module.parallelize(ParallelDims) under the "spmd_types"
(torchtitan's default) or "partial_dtensor" backend. The loss is torchtitan's CrossEntropyLoss
(sum over tokens): its vocabulary-parallel _LossParallelCrossEntropy on the lm_head's vocabulary
shards at TP > 1. The embedding is torchtitan's vocabulary-parallel Embedding (out-of-shard
tokens clamped and their rows multiplied by a 0/1 mask). What runs it on the CPU is
shims/torchtitan.py.

build() is a gg_capture factory (graphguard-capture gg_capture.models.torchtitan_llama:build).
Weights: the full model is built and initialized with torchtitan's initializers (init_states) on
every rank from the same seed, then parallelized: each rank keeps its shard of the same weights.
"""
import inspect

import torch

from ..shims import torchtitan as shim
from .base import Program


def config(dim, heads, kv_heads, ffn, vocab, seq, layers, rope):
    """A Llama3Model.Config of torchtitan's debugmodel layout, shrunk."""
    from torch import nn
    from torchtitan.models.common import ComplexRoPE, CosSinRoPE, Embedding, Linear, RMSNorm
    from torchtitan.models.llama3 import Llama3Model, _build_llama3_layers
    ropes = {"complex": ComplexRoPE, "cos_sin": CosSinRoPE}
    if rope not in ropes:
        raise ValueError(f"rope {rope!r}: use 'complex' or 'cos_sin'")
    normal = {"weight": nn.init.normal_}
    return Llama3Model.Config(
        dim=dim, vocab_size=vocab,
        tok_embeddings=Embedding.Config(num_embeddings=vocab, embedding_dim=dim,
                                        param_init=normal),
        norm=RMSNorm.Config(normalized_shape=dim, param_init={"weight": nn.init.ones_}),
        lm_head=Linear.Config(in_features=dim, out_features=vocab, param_init=normal),
        layers=_build_llama3_layers(
            n_layers=layers, dim=dim, n_heads=heads, n_kv_heads=kv_heads, hidden_dim=ffn,
            rope=ropes[rope].Config(dim=dim // heads, max_seq_len=seq, theta=10000.0),
            attn_backend="flex", fuse_qkv=True))


def _defaults():
    """build()'s keyword arguments and their defaults (the corpus manifest's configuration)."""
    return {k: p.default for k, p in inspect.signature(build).parameters.items() if k != "tp"}


def build(tp, sp=False, backend="spmd_types", rope="complex", layers=1, dim=32, heads=4,
          kv_heads=None, ffn=64, vocab=64, seq=8, batch=1):
    """A gg_capture factory: torchtitan's Llama3 training step (model + loss) of rank tp.rank."""
    from torchtitan.components.loss import CrossEntropyLoss
    from torchtitan.models.llama3.sharding import set_llama3_sharding_config
    shim.apply()
    cfg = config(dim, heads, kv_heads, ffn, vocab, seq, layers, rope)
    set_llama3_sharding_config(cfg, enable_sp=sp)
    torch.manual_seed(0)
    model = cfg.build()
    model.init_states()
    dims = None
    if tp.size > 1:
        dims = shim.parallel_dims(tp, backend)
        model.parallelize(dims)
    loss = CrossEntropyLoss(CrossEntropyLoss.Config(global_vocab_size=vocab))
    g = torch.Generator().manual_seed(1)
    inputs = {"tokens": torch.randint(0, vocab, (batch, seq), generator=g),
              "labels": torch.randint(0, vocab, (batch, seq), generator=g),
              "positions": torch.arange(seq).expand(batch, seq).contiguous()}
    return shim.TrainStep(model, loss, dims), inputs


class TorchtitanLlama(Program):
    """build() as a corpus program (registry.py): torchtitan's Llama3 at the degrees `degrees`."""

    def __init__(self, name, degrees=(2, 4), **options):
        self.name, self.degrees, self.options = name, tuple(degrees), options
        self.config = {**_defaults(), **options}
        import torchtitan
        self.plan = (f"torchtitan {torchtitan.__version__} Llama3 (its model code, "
                     f"set_llama3_sharding_config{' with sequence parallelism' if self.config['sp'] else ''}, "
                     f"Module.parallelize under the {self.config['backend']} backend, "
                     f"{self.config['rope']} RoPE, flex attention as SDPA on a dense mask, "
                     "CrossEntropyLoss; scripts/capture/gg_capture/models/torchtitan_llama.py)")
        self._inputs = None

    def build(self, tp):
        model, self._inputs = build(tp, **self.options)
        model.register_forward_hook(lambda module, args, loss: (loss,))
        return model

    def data(self, tp):
        return dict(self._inputs)
