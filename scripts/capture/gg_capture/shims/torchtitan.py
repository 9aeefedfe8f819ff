"""Run torchtitan's own models and tensor parallelism on the CPU over gg_capture's fake group.

torchtitan (tested with 0.3.0, the PyPI release, and torch 2.13) builds a model from its config
(e.g. Llama3Model.Config), declares each module's sharding in its config
(torchtitan.models.llama3.sharding.set_llama3_sharding_config: ShardingConfig per module, with
spmd_types layouts) and parallelizes it with `Module.parallelize(ParallelDims)`, under one of two
backends for the tensor-parallel axis:
  "partial_dtensor"  parameters and the RoPE cache become DTensors on the TP mesh; inputs and
                     outputs of each module are redistributed with DTensor (funcol collectives);
  "spmd_types"       (torchtitan's default) parameters are this rank's plain local shards tagged
                     with spmd_types types (V + PartitionSpec, R, I); redistributions are spmd_types
                     collectives, autograd Functions calling torch.distributed in place.
Both are captured. What stands between them and a CPU trace, and what is done about each
(apply() installs 1-3, process-wide and idempotently: a capture process only):
  1. the device: torchtitan.tools.utils picks the accelerator, or "cuda" when there is none,
     and ParallelDims builds its DeviceMesh on it (distribute_tensor then moves every parameter
     there). The capture runs on the CPU wherever it runs: the modules that bound the name at
     import see "cpu" instead.
  2. in-place collectives: spmd_types calls torch.distributed.all_reduce(t) /
     all_gather_into_tensor(out, t) / reduce_scatter_tensor(out, t) through its documented hook
     spmd_types.set_dist(module). It is given torch.distributed with those calls replaced by the
     functional collectives plus a copy_ into the destination (functional_dist.py), which
     trace.out_of_place turns into values.
  3. flex attention: torchtitan's language models attend with FlexAttention (a BlockMask built
     by a torch.compile'd create_block_mask; flex_attention itself compiled): make_fx can trace
     neither on the CPU. create_attention_mask returns a DenseMask (the same mask_mod and sizes)
     instead, and FlexAttention.forward is F.scaled_dot_product_attention with the boolean mask
     the mask_mod gives on broadcast index tensors (the mask is computed inside the graph from
     the positions), on SDPA's math backend: PyTorch's reference composite (matmul, softmax,
     matmul), whose backward is that of those operators, where the CPU's fused flash kernel
     would put an opaque _scaled_dot_product_flash_attention_for_cpu_backward in the joint graph.
     A score_mod or an out_transform (lse epilogue) is refused.
Not shimmed but handled by the capture: DTensor buffers (the RoPE cache under partial_dtensor)
are graph inputs wrapped with DTensor.from_local like the parameters (trace.dtensor_trace), and
spmd_types-tagged parameters get their placement from their type (trace.spmd_placement).

What is not captured: torchtitan's parallelize_llama also applies FSDP (fully_shard, even at
data-parallel degree 1), activation checkpointing and torch.compile; they are not tensor
parallelism, so a factory calls the model's own Module.parallelize(parallel_dims), which is what
parallelize_llama calls for TP. Decoder.Config.update_from_config imports torchtitan's trainer
(tensorboard, wandb, torchdata): set_llama3_sharding_config, which it calls, is used instead.
"""
import torch
import torch.nn.functional as F

from . import functional_dist


def _set_cpu_device():
    """Shim 1: torchtitan's device name is "cpu"."""
    import importlib
    for name in ("torchtitan.tools.utils", "torchtitan.distributed.parallel_dims",
                 "torchtitan.distributed.utils", "torchtitan.models.common.token_dispatcher"):
        module = importlib.import_module(name)
        module.device_type = "cpu"


class DenseMask:
    """What create_attention_mask returns after apply(): a BlockMask's mask_mod and sizes.

    dense() evaluates the mask_mod once on broadcast index tensors (b [B,1,1,1], h [H,1,1]
    (1 when H is None), q [Q,1], kv [KV]): a mask_mod is an elementwise function of its indices
    (flex_attention vmaps it), so broadcasting gives the same [B, H, Q, KV] boolean mask."""

    def __init__(self, mask_mod, B, H, Q_LEN, KV_LEN, device=None, **unused):
        self.mask_mod, self.shape, self.device = mask_mod, (B or 1, H or 1, Q_LEN, KV_LEN), device

    def dense(self):
        b, h, q, kv = (torch.arange(n, device=self.device) for n in self.shape)
        mask = self.mask_mod(b.view(-1, 1, 1, 1), h.view(-1, 1, 1), q.view(-1, 1), kv)
        return mask.expand(self.shape)


def create_attention_mask(mask_mod, B, H, Q_LEN, KV_LEN, device=None, **options):
    """torchtitan.models.common.attention.create_attention_mask after apply() (shim 3)."""
    return DenseMask(mask_mod, B, H, Q_LEN, KV_LEN, device, **options)


def flex_as_sdpa(self, q_BLNH, k_BLNH, v_BLNH, *, attention_masks, score_mod=None, scale=None,
                 enable_gqa=False, out_transform=None, **kwargs):
    """FlexAttention.forward after apply() (shim 3): SDPA with the mask's dense boolean form."""
    if not isinstance(attention_masks, DenseMask):
        raise TypeError("shims.torchtitan: FlexAttention needs the attention masks of "
                        "model.get_attention_masks(positions) built after shims.torchtitan.apply() "
                        f"(got {type(attention_masks).__name__})")
    if score_mod is not None or out_transform is not None:
        raise NotImplementedError("shims.torchtitan: flex attention with a score_mod or an "
                                  "out_transform has no SDPA form")
    from torch.nn.attention import SDPBackend, sdpa_kernel
    q, k, v = (t.transpose(1, 2) for t in (q_BLNH, k_BLNH, v_BLNH))
    with sdpa_kernel([SDPBackend.MATH]):
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=attention_masks.dense(),
                                             scale=scale, enable_gqa=enable_gqa)
    return out.transpose(1, 2)


_APPLIED = []


def apply():
    """Install shims 1-3 (idempotent)."""
    _set_cpu_device()
    if _APPLIED:
        return
    import spmd_types
    from torchtitan.models.common import attention, decoder
    spmd_types.set_dist(functional_dist.module())
    attention.create_attention_mask = create_attention_mask
    decoder.create_attention_mask = create_attention_mask  # bound by name at import
    attention.FlexAttention.forward = flex_as_sdpa
    _APPLIED.append(True)


def parallel_dims(tp, backend="spmd_types"):
    """torchtitan's ParallelDims for a TP-only world of tp.size ranks (the fake group), its
    meshes built, and `backend` made torchtitan's active SPMD backend."""
    from torchtitan.distributed import ParallelDims
    from torchtitan.distributed import utils as dist_utils
    if backend not in ("spmd_types", "partial_dtensor"):
        raise ValueError(f"shims.torchtitan: backend {backend!r}: use 'spmd_types' or "
                         "'partial_dtensor' (full_dtensor needs a data-parallel mesh axis)")
    apply()
    dist_utils.set_spmd_backend(backend)
    dims = ParallelDims(dp_replicate=1, dp_shard=1, cp=1, tp=tp.size, pp=1, ep=1,
                        world_size=tp.size, spmd_backend=backend)
    dims.build_mesh()
    return dims


class TrainStep(torch.nn.Module):
    """One rank's torchtitan training step up to the loss, as a module the capture can call:
    forward(tokens, labels, positions=None) builds the attention masks from the positions
    (model.get_attention_masks: flex attention's causal packed-document mask), runs the model and
    torchtitan's loss (e.g. components.loss.CrossEntropyLoss: its vocabulary-parallel cross entropy
    when the logits are sharded) inside torchtitan's SPMD context (the spmd_types mesh), as
    Trainer does. Without positions the sequence is one document, arange(seq) per sample (what
    torchtitan's data loaders give an unpacked sample), computed in the graph: given as an input,
    positions are drawn at random by `graphguard check` (mostly masking whole rows) and the RoPE
    cache lookup needs the premise positions >= 0."""

    def __init__(self, model, loss_fn, dims=None):
        super().__init__()
        self.model, self.loss_fn, self.dims = model, loss_fn, dims

    def forward(self, tokens, labels, positions=None):
        from torchtitan.distributed import utils as dist_utils
        if positions is None:
            positions = torch.arange(tokens.shape[1]).expand(tokens.shape)
        with dist_utils.get_spmd_context(parallel_dims=self.dims)():
            pred = self.model(tokens, positions, self.model.get_attention_masks(positions))
            loss, _ = self.loss_fn(pred, labels)
        return loss
