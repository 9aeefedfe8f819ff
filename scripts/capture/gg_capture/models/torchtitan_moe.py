"""torchtitan's own Qwen3 mixture-of-experts model (PyPI torchtitan 0.3.0), parallelized by
torchtitan itself.

The model is torchtitan.models.qwen3.Qwen3Model built from its config with torchtitan's MoE layer
builder (_build_qwen3_moe_layers: fused QKV with per-head q/k RMSNorm, cos/sin RoPE, a softmax
top-k router with normalized scores, GroupedExperts whose SwiGLU experts run torch._grouped_mm in
bfloat16 and cast back with .type_as(x)), at a tiny size. A distributed rank declares the
sharding with torchtitan's set_qwen3_sharding_config (no expert parallelism: the experts' ffn dim
is split over TP, w1/w3 column- and w2 row-parallel, their partial outputs all-reduced, or with
`sp` reduce-scattered along the sequence) and calls
the model's own Module.parallelize(ParallelDims) under the spmd_types backend (torchtitan's
default) or the partial_dtensor one (`backend`). The loss is torchtitan's CrossEntropyLoss (vocabulary-parallel at TP > 1). What runs it
on the CPU is shims/torchtitan.py; the routing (topk, histc, argsort) runs in the graph on every
rank alike.

bf16: S rounds each expert's whole output sum to bf16 once, D rounds each rank's partial sum
before the all-reduce, so D equals S only up to rounding; graphguard's rounding lemmas
(src/symbolic/lemmas/rounding.rules) relate them and the verdict names that premise.

build() is a gg_capture factory (graphguard-capture gg_capture.models.torchtitan_moe:build).
Weights: the full model is built and initialized with torchtitan's initializers on every rank from
the same seed, then parallelized: each rank keeps its shard of the same weights.
"""
import inspect

import torch

from ..shims import torchtitan as shim
from .base import Program


def config(dim, heads, kv_heads, head_dim, experts, top_k, moe_ffn, vocab, seq, layers):
    """A Qwen3Model.Config with torchtitan's MoE layers (_build_qwen3_moe_layers), shrunk."""
    from torchtitan.models.common import CosSinRoPE, Embedding, Linear
    import torchtitan.models.qwen3 as qwen3  # its private builders and initializers
    from torchtitan.models.qwen3 import Qwen3Model
    return Qwen3Model.Config(
        vocab_size=vocab, dim=dim, norm=qwen3._qwen3_norm(dim),
        tok_embeddings=Embedding.Config(num_embeddings=vocab, embedding_dim=dim,
                                        param_init=qwen3._EMBEDDING_INIT),
        lm_head=Linear.Config(in_features=dim, out_features=vocab,
                              param_init=qwen3._LINEAR_INIT),
        layers=qwen3._build_qwen3_moe_layers(
            n_layers=layers, dim=dim, n_heads=heads, n_kv_heads=kv_heads, head_dim=head_dim,
            moe_hidden_dim=moe_ffn, num_experts=experts, top_k=top_k, attn_backend="flex",
            moe_comm_backend="standard",
            rope=CosSinRoPE.Config(dim=head_dim, max_seq_len=seq, theta=1000000.0)))


def _defaults():
    """build()'s keyword arguments and their defaults (the corpus manifest's configuration)."""
    return {k: p.default for k, p in inspect.signature(build).parameters.items() if k != "tp"}


# The bug benchmark's change (tests/bugs, registry.BUGS), made to torchtitan's config, never to
# its classes:
#   bug "router_grad_replicate" (torchtitan PR #2416, issue #2387): the gradient that flows back
#       from the routed experts into the router's top-k scores is each rank's partial sum (the
#       experts' ffn dim is split over TP), but it is declared Replicate instead of Partial (the
#       routed experts' local_map in_grad_placements for topk_scores_BLK), so it is never
#       all-reduced and the router gate's weight gradient keeps one rank's share. Only the
#       "partial_dtensor" backend reads in_grad_placements (DTensor's local_map); spmd_types infers
#       the gradient types from the forward types, so there the change captures identically.
BUGS = ("router_grad_replicate",)


def _seed_config_bug(cfg, bug):
    from torchtitan.models.common.decoder_sharding import dense_activation_placement
    import spmd_types as spmd
    for layer in cfg.layers:
        routed = layer.moe.routed_experts.sharding_config
        grads = list(routed.local_map.in_grad_placements)
        grads[1] = dense_activation_placement(tp=spmd.R)  # topk_scores_BLK: Partial -> Replicate
        routed.local_map.in_grad_placements = tuple(grads)


def build(tp, backend="spmd_types", sp=False, layers=1, dim=32, heads=8, kv_heads=4, head_dim=8, experts=4,
          top_k=2, moe_ffn=32, vocab=64, seq=8, batch=1, bug=None):
    """A gg_capture factory: torchtitan's Qwen3 MoE training step (model + loss) of rank tp.rank;
    `bug` is the bug benchmark's (above). torch._grouped_mm needs 16-byte strides: moe_ffn / tp
    a multiple of 8 (bf16), and the KV heads divisible by tp (torchtitan's fused QKV)."""
    from torchtitan.components.loss import CrossEntropyLoss
    from torchtitan.models.qwen3.sharding import set_qwen3_sharding_config
    if bug is not None and bug not in BUGS:
        raise ValueError(f"bug {bug!r}: bugs {BUGS}")
    shim.apply()
    cfg = config(dim, heads, kv_heads, head_dim, experts, top_k, moe_ffn, vocab, seq, layers)
    set_qwen3_sharding_config(cfg, enable_sp=sp, enable_ep=False)
    if bug is not None and tp.size > 1:
        _seed_config_bug(cfg, bug)
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
              "labels": torch.randint(0, vocab, (batch, seq), generator=g)}
    return shim.TrainStep(model, loss, dims), inputs


class TorchtitanMoe(Program):
    """build() as a corpus or bug-benchmark program (registry.py): torchtitan's Qwen3 MoE at the
    degrees `degrees` with build()'s options."""

    def __init__(self, name, degrees=(2, 4), **options):
        self.name, self.degrees, self.options = name, tuple(degrees), options
        # the configuration as the manifest records it (bug only when set)
        self.config = {k: v for k, v in {**_defaults(), **options}.items()
                       if k != "bug" or v is not None}
        import torchtitan
        bug = f", bug {self.config['bug']}" if "bug" in self.config else ""
        self.plan = (f"torchtitan {torchtitan.__version__} Qwen3 MoE (its model code, "
                     "_build_qwen3_moe_layers with GroupedExperts' bf16 torch._grouped_mm, "
                     "set_qwen3_sharding_config without EP"
                     f"{' with sequence parallelism' if self.config['sp'] else ''}, "
                     "Module.parallelize under the "
                     f"{self.config['backend']} backend, flex attention as SDPA on a dense mask, "
                     f"CrossEntropyLoss{bug}; scripts/capture/gg_capture/models/torchtitan_moe.py)")
        self._inputs = None

    def build(self, tp):
        model, self._inputs = build(tp, **self.options)
        model.register_forward_hook(lambda module, args, loss: (loss,))
        return model

    def data(self, tp):
        return dict(self._inputs)
