"""torchtitan's own Llama3 (PyPI torchtitan 0.3.0), parallelized by torchtitan itself.

The model is torchtitan.models.llama3.Llama3Model built from its config with torchtitan's layer
builder (_build_llama3_layers: fused QKV laid out per KV-head group, RMSNorm, SwiGLU FFN, flex
attention, complex or cos/sin RoPE), at a tiny size. A distributed rank declares the sharding with
torchtitan's set_llama3_sharding_config (sp: SequenceParallel norms and Shard(1) activations
between the blocks) and calls the model's own Module.parallelize(ParallelDims) under the
"spmd_types" (torchtitan's default) or "partial_dtensor" backend. The loss is torchtitan's CrossEntropyLoss
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


# The bug benchmark's changes (tests/bugs, registry.BUGS), each made to torchtitan's own config or
# module instances, never to its classes (a capture process builds correct and buggy programs):
#   patch: the model computes f(wo(x)) after every attention output projection (a scalar bias, a
#          shift by the row max); in D the row-parallel wo's output is f'd after its all-reduce;
#   bug "before_reduction": D applies f to each rank's partial sums before the all-reduce (what
#          DTensor did for a Partial tensor and a scalar, or a max, before PyTorch fixed it);
#   bug "rowwise_output_partial": feed_forward.w2 (rowwise) keeps its Partial output (the
#          config's out_dst_shardings dropped): no all-reduce;
#   bug "attention_input_grad_not_reduced": the attention block takes its input as it comes
#          (Invariant) instead of converting it to Replicate, whose backward all-reduces the partial
#          input gradient of the column-parallel q/k/v projections: the gradient is never reduced.
PATCHES = {"scalar_bias": lambda y: y + 0.5,
           "max_shift": lambda y: y - y.amax(dim=-1, keepdim=True)}
BUGS = ("before_reduction", "rowwise_output_partial", "attention_input_grad_not_reduced")


def _seed_config_bug(cfg, bug):
    for layer in cfg.layers:
        if bug == "rowwise_output_partial":
            layer.feed_forward.w2.sharding_config.out_dst_shardings = None
        elif bug == "attention_input_grad_not_reduced":
            layer.attention.sharding_config.in_dst_shardings = None


def _patch_outputs(model, f):
    """Every attention.wo computes f(its forward) (an instance attribute, not the class's)."""
    for layer in model.layers.values():
        wo, inner = layer.attention.wo, layer.attention.wo.forward
        wo.forward = lambda x, inner=inner: f(inner(x))


def build(tp, sp=False, backend="spmd_types", rope="complex", layers=1, dim=32, heads=4,
          kv_heads=None, ffn=64, vocab=64, seq=8, batch=1, patch=None, bug=None):
    """A gg_capture factory: torchtitan's Llama3 training step (model + loss) of rank tp.rank;
    `patch` and `bug` are the bug benchmark's (above)."""
    from torchtitan.components.loss import CrossEntropyLoss
    from torchtitan.models.llama3.sharding import set_llama3_sharding_config
    if patch is not None and patch not in PATCHES or bug is not None and bug not in BUGS:
        raise ValueError(f"patch {patch!r} / bug {bug!r}: patches {list(PATCHES)}, bugs {BUGS}")
    shim.apply()
    cfg = config(dim, heads, kv_heads, ffn, vocab, seq, layers, rope)
    set_llama3_sharding_config(cfg, enable_sp=sp)
    if bug is not None and tp.size > 1:
        _seed_config_bug(cfg, bug)
    torch.manual_seed(0)
    model = cfg.build()
    model.init_states()
    dims = None
    if patch is not None and (tp.size == 1 or bug == "before_reduction"):
        _patch_outputs(model, PATCHES[patch])  # S, or D's local (partial) computation
    if tp.size > 1:
        dims = shim.parallel_dims(tp, backend)
        model.parallelize(dims)
        if patch is not None and bug != "before_reduction":
            _patch_outputs(model, PATCHES[patch])  # after parallelize's all-reduce
    loss = CrossEntropyLoss(CrossEntropyLoss.Config(global_vocab_size=vocab))
    g = torch.Generator().manual_seed(1)
    inputs = {"tokens": torch.randint(0, vocab, (batch, seq), generator=g),
              "labels": torch.randint(0, vocab, (batch, seq), generator=g)}
    return shim.TrainStep(model, loss, dims), inputs


class TorchtitanLlama(Program):
    """build() as a corpus or bug-benchmark program (registry.py): torchtitan's Llama3 at the
    degrees `degrees` with build()'s options."""

    def __init__(self, name, degrees=(2, 4), **options):
        self.name, self.degrees, self.options = name, tuple(degrees), options
        # the configuration as the manifest records it (patch and bug only when set)
        self.config = {k: v for k, v in {**_defaults(), **options}.items()
                       if k not in ("patch", "bug") or v is not None}
        import torchtitan
        c = self.config
        changes = "".join(f", {k} {c[k]}" for k in ("patch", "bug") if k in c)
        self.plan = (f"torchtitan {torchtitan.__version__} Llama3 (its model code, "
                     "set_llama3_sharding_config"
                     f"{' with sequence parallelism' if c['sp'] else ''}, Module.parallelize "
                     f"under the {c['backend']} backend, {c['rope']} RoPE, flex attention as SDPA "
                     f"on a dense mask, CrossEntropyLoss{changes}; "
                     "scripts/capture/gg_capture/models/torchtitan_llama.py)")
        self._inputs = None

    def build(self, tp):
        model, self._inputs = build(tp, **self.options)
        model.register_forward_hook(lambda module, args, loss: (loss,))
        return model

    def data(self, tp):
        return dict(self._inputs)
