"""Real megatron-core (the library, not a reimplementation) in the corpus and the bug benchmark.

The program is the user's factory of examples/megatron_core/gpt.py (megatron-core's GPTModel with
the local layer spec and its vocabulary-parallel cross entropy), captured as `graphguard-capture`
captures it (api.UserProgram; gg_capture applies its megatron shims itself, shims/megatron.py).
A bug case runs the same factory with megatron's own code monkeypatched while its buggy variant is
traced (MegatronCoreBug.patches; make_bugs.py enters them around the traces)."""
import contextlib
import inspect
import os
import sys

import torch

from .. import api
from ..factory import load_factory

EXAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), *[os.pardir] * 4,
                       "examples", "megatron_core", "gpt.py")
EXAMPLE_REF = "examples/megatron_core/gpt.py:build"
PLAN = ("megatron-core GPTModel (get_gpt_layer_local_spec) with its own tensor-parallel layers "
        "and vocab-parallel cross entropy, set up by the user factory "
        "examples/megatron_core/gpt.py:build; megatron-core {version}")


def version():
    from importlib.metadata import version as v
    return v("megatron-core")


class MegatronCoreGPT(api.UserProgram):
    """examples/megatron_core/gpt.py:build with config overrides (sp, heads, hidden, ...), or
    another factory of this module around it (`factory`, e.g. build_policy)."""

    def __init__(self, name, degrees=(2, 4), factory=None, **config):
        if factory is None:
            factory, ref = load_factory(os.path.normpath(EXAMPLE) + ":build"), EXAMPLE_REF
        else:
            ref = f"{__name__}:{factory.__name__}"
        super().__init__(factory, config, mode=None, ref=ref)
        self.name, self.degrees = name, tuple(degrees)
        self.plan = PLAN.format(version=version())
        if ref != EXAMPLE_REF:
            self.plan += f", its GPTModel's logits under {ref}'s loss"

    def describe(self):
        """The factory's whole configuration: its defaults with this program's overrides."""
        params = list(inspect.signature(self.factory).parameters.values())[1:]
        config = {p.name: p.default for p in params if p.default is not p.empty}
        return {"model": self.name, "config": {**config, **self.config},
                "parallel_plan": self.plan}


class MegatronCoreBug(MegatronCoreGPT):
    """A bug case: `patch`, a function of (the megatron modules) that returns {(object, attribute):
    replacement}, is applied while the buggy variant is traced (patches())."""

    def __init__(self, name, patch=None, **config):
        super().__init__(name, **config)
        self.patch = patch

    @contextlib.contextmanager
    def patches(self):
        if self.patch is None:
            yield
            return
        replaced = self.patch()
        # a class's own attribute as stored (a staticmethod stays one when put back)
        saved = {(obj, attr): vars(obj)[attr] if isinstance(obj, type) else getattr(obj, attr)
                 for obj, attr in replaced}
        try:
            for (obj, attr), value in replaced.items():
                setattr(obj, attr, value)
            yield
        finally:
            for (obj, attr), value in saved.items():
                setattr(obj, attr, value)


# ---- bug patches: each returns {(object, attribute): replacement} for MegatronCoreBug ------------

def mlp_output_not_reduced():
    """The dense MLP's linear_fc2 (a RowParallelLinear) returns its partial sums unreduced: its
    explicit_expert_comm flag set, megatron's path for MoE experts whose token dispatcher does the
    reduction, on a layer that has none."""
    from megatron.core.transformer import mlp
    init = mlp.MLP.__init__

    def patched(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.linear_fc2.explicit_expert_comm = True

    return {(mlp.MLP, "__init__"): patched}


def sp_norm_weights_unmarked():
    """Megatron-LM #1446's pattern: the transformer layer's LayerNorm weights lose megatron's
    `sequence_parallel` mark, so finalize_model_grads leaves their per-sequence-shard partial
    gradients unreduced."""
    from megatron.core.transformer import transformer_layer
    init = transformer_layer.TransformerLayer.__init__

    def patched(self, *args, **kwargs):
        init(self, *args, **kwargs)
        for norm in (self.input_layernorm, self.pre_mlp_layernorm):
            for param in norm.parameters():
                param.sequence_parallel = False

    return {(transformer_layer.TransformerLayer, "__init__"): patched}


def cross_entropy_rank0_vocab_range():
    """The vocabulary-parallel cross entropy masks the targets with the first shard's range
    [0, V / TP) on every rank (its vocabulary offset not applied); the embedding, which reads the
    same VocabUtility, keeps the right one."""
    from megatron.core.tensor_parallel import cross_entropy

    class FirstShardRange(cross_entropy.VocabUtility):
        @staticmethod
        def vocab_range_from_per_partition_vocab_size(per_partition_vocab_size, rank,
                                                      world_size):
            return 0, per_partition_vocab_size

    return {(cross_entropy, "VocabUtility"): FirstShardRange}


# ---- a policy-gradient loss on megatron-core's logits (ms-swift's Megatron GRPO) ---------------

def token_logps(logits, labels):
    """log p(label) per token from vocabulary-parallel logits [b, s, V/TP], as ms-swift's
    Megatron GRPO computes them since its PR #9947: megatron's vocab_parallel_cross_entropy
    (whose hand-written backward gives every vocabulary shard its softmax gradient), negated."""
    from megatron.core import tensor_parallel
    return -tensor_parallel.vocab_parallel_cross_entropy(logits, labels)


class PolicyLoss(torch.nn.Module):
    """The policy term of a GRPO step with unit advantages: minus the mean log-probability of the
    labels under megatron-core's GPTModel, from its logits (labels=None: [b, s, V/TP], the
    vocabulary sharded over TP) by this module's token_logps (which a bug case replaces)."""

    def __init__(self, gpt):
        super().__init__()
        self.gpt = gpt

    def forward(self, input_ids, position_ids, labels):
        logits = self.gpt(input_ids, position_ids, None)
        return -token_logps(logits, labels).mean()


def build_policy(tp, **config):
    """A gg_capture factory: the example's GPTModel (examples/megatron_core/gpt.py:build, with
    its config) under PolicyLoss, with the example's inputs."""
    model, inputs = load_factory(os.path.normpath(EXAMPLE) + ":build")(tp, **config)
    return PolicyLoss(model.gpt), inputs


def logps_all_reduce_without_autograd():
    """ms-swift's vocabulary-parallel log-probabilities before its PR #9947 (own code, the same
    computation): a log-softmax over the sharded vocabulary whose max and sum of exps are
    reduced with torch.distributed.all_reduce, the label's entry gathered on the shard that
    owns it (zero elsewhere) and summed with another all_reduce. The values are right; the
    gradient is not: torch.distributed.all_reduce has no autograd formula (the gradient passes
    through it unreduced), so a shard that does not own a token's label gets no gradient from
    that token: its softmax term reaches the loss only through the owner's all_reduce."""
    import torch.distributed as dist
    from megatron.core import parallel_state

    def logps(logits, labels):
        if parallel_state.get_tensor_model_parallel_world_size() == 1:
            picked = torch.log_softmax(logits, dim=-1).gather(-1, labels.unsqueeze(-1))
            return picked.squeeze(-1)
        group = parallel_state.get_tensor_model_parallel_group()
        top = logits.max(dim=-1, keepdim=True)[0]
        dist.all_reduce(top, op=dist.ReduceOp.MAX, group=group)
        sum_exp = torch.exp(logits - top).sum(dim=-1, keepdim=True)
        dist.all_reduce(sum_exp, op=dist.ReduceOp.SUM, group=group)
        log_probs = logits - top - torch.log(sum_exp)
        per = logits.shape[-1]
        start = parallel_state.get_tensor_model_parallel_rank() * per
        owned = (labels >= start) & (labels < start + per)
        local = (labels - start).clamp(min=0, max=per - 1)
        picked = log_probs.gather(-1, local.unsqueeze(-1)).squeeze(-1) * owned.float()
        dist.all_reduce(picked, op=dist.ReduceOp.SUM, group=group)
        return picked

    return {(sys.modules[__name__], "token_logps"): logps}


# ---- megatron-core's CrossAttention over an explicit tensor-parallel group (Megatron-LM #7452) --

class CrossAttentionOutput(torch.nn.Module):
    """megatron-core's CrossAttention: the queries from `hidden`, keys and values from `context`
    (both [s, b, h], on sequence shards under sequence parallelism), the output with its bias."""

    def __init__(self, attention):
        super().__init__()
        self.attention = attention

    def forward(self, hidden, context, attention_mask):
        out, bias = self.attention(hidden, attention_mask, key_value_states=context)
        return out if bias is None else out + bias


def build_cross_attention(tp, module_tp=2, hidden=32, heads=4, seq=8, batch=1):
    """A gg_capture factory: megatron-core's CrossAttention (the local spec's column- and
    row-parallel linears, DotProductAttention) with sequence parallelism, given its own
    ProcessGroupCollection, as a model whose modules use process groups of their own does (a
    multimodal or encoder-decoder model in which this module's parallelism differs from the
    global one): over W = tp.size ranks, megatron's global (MPU) tensor-parallel groups are
    consecutive ranks ([0, 1], [2, 3] at W = 4), the module's are strided ([0, 2], [1, 3]). Rank r
    is the module's tensor-parallel rank r // (W / module_tp) and holds that sequence chunk of the
    inputs (replicas of one another over the other axis). Parameters are placed over the mesh
    tp x dp of those two kinds of group by the group their own layer uses (mesh_placements)."""
    import torch.distributed as dist
    from megatron.core import parallel_state
    from megatron.core.process_groups_config import ProcessGroupCollection
    from megatron.core.tensor_parallel import (ColumnParallelLinear, RowParallelLinear,
                                               model_parallel_cuda_manual_seed)
    from megatron.core.transformer import TransformerConfig
    from megatron.core.transformer.attention import CrossAttention, CrossAttentionSubmodules
    from megatron.core.transformer.dot_product_attention import DotProductAttention
    from megatron.core.transformer.enums import AttnMaskType
    world = tp.size
    mtp = module_tp if world > 1 else 1
    replicas = world // mtp
    parallel_state.initialize_model_parallel(tensor_model_parallel_size=mtp)
    model_parallel_cuda_manual_seed(0)
    rank = tp.rank
    if world > 1:  # every rank creates every group, in the same order
        strided = [dist.new_group(list(range(i, world, replicas))) for i in range(replicas)]
        group = strided[rank % replicas]
    else:
        group = parallel_state.get_tensor_model_parallel_group()
    pg = ProcessGroupCollection(tp=group, cp=parallel_state.get_context_parallel_group())
    config = TransformerConfig(num_layers=1, hidden_size=hidden, num_attention_heads=heads,
                               tensor_model_parallel_size=mtp, sequence_parallel=mtp > 1,
                               use_cpu_initialization=True)
    submodules = CrossAttentionSubmodules(
        linear_q=ColumnParallelLinear, linear_kv=ColumnParallelLinear,
        core_attention=DotProductAttention, linear_proj=RowParallelLinear)
    model = CrossAttentionOutput(CrossAttention(config, submodules, layer_number=1,
                                                attn_mask_type=AttnMaskType.padding,
                                                pg_collection=pg))
    if world > 1:
        mesh_placements(model, (("tp", mtp), ("dp", replicas)))
    g = torch.Generator().manual_seed(1)
    full_hidden, full_context = (torch.randn(seq, batch, hidden, generator=g) for _ in range(2))
    mask = torch.zeros(batch, 1, seq, seq, dtype=torch.bool)
    n, chunk = seq // mtp, rank // replicas
    return model, {"hidden": full_hidden.narrow(0, chunk * n, n).clone(),
                   "context": full_context.narrow(0, chunk * n, n).clone(),
                   "attention_mask": mask}


def mesh_placements(model, mesh):
    """Place every parameter over `mesh` (((axis, size), ...), ranks row-major): a parameter of
    a megatron tensor-parallel layer is sharded (its partition_dim) over the mesh axis whose
    groups are its layer's tp_group, replicated over the others; the others are replicated."""
    import torch.distributed as dist
    from .. import tp as tpmod
    sizes = [size for _, size in mesh]
    rank = dist.get_rank()

    def axis_of(group):
        """The mesh axis along which this rank's group varies."""
        members = sorted(dist.get_process_group_ranks(group))
        for k in range(len(mesh)):
            stride = 1
            for size in sizes[k + 1:]:
                stride *= size
            base = rank - (rank // stride % sizes[k]) * stride
            if members == [base + i * stride for i in range(sizes[k])]:
                return k
        raise ValueError(f"mesh_placements: group {members} is no axis of the mesh {mesh}")

    for module in model.modules():
        for param in module.parameters(recurse=False):
            per_axis = [("replicate",)] * len(mesh)
            if getattr(param, "tensor_model_parallel", False):
                per_axis[axis_of(module.tp_group)] = ("shard", param.partition_dim)
            tpmod.place(param, "mesh", mesh, tuple(per_axis))


def cross_attention_tp_group():
    """The fix of Megatron-LM #7452's cross-attention finding (as in PR #7190): CrossAttention
    builds linear_q and linear_kv with its pg_collection's tensor-parallel group, as
    SelfAttention builds linear_qkv (megatron-core 0.19.2 passes none: they take the global
    one)."""
    import dataclasses
    import functools
    from megatron.core.transformer import attention
    init = attention.CrossAttention.__init__

    def patched(self, config, submodules, *args, pg_collection=None, **kwargs):
        if pg_collection is not None:
            submodules = dataclasses.replace(
                submodules,
                linear_q=functools.partial(submodules.linear_q, tp_group=pg_collection.tp),
                linear_kv=functools.partial(submodules.linear_kv, tp_group=pg_collection.tp))
        init(self, config, submodules, *args, pg_collection=pg_collection, **kwargs)

    return {(attention.CrossAttention, "__init__"): patched}


class MegatronCoreCrossAttention(MegatronCoreBug):
    """build_cross_attention as a bug-benchmark program: its inputs [s, b, h] on sequence shards
    over the module's tensor-parallel axis of the mesh, replicated over the other; its output
    compared on the first replica (the module's tensor-parallel group [0, W / module_tp, ...]):
    the other replicas compute the same from the same inputs. (With a batch split over the
    replicas instead, S's [s * b, h] rows interleave the replicas' pieces, which no lemma relates
    to their products yet.)"""

    def __init__(self, name, patch=None, **config):
        super().__init__(name, patch=patch, factory=build_cross_attention, **config)
        self.module_tp = config.get("module_tp", 2)
        self.plan = (f"megatron-core {version()} CrossAttention (the local spec's linears, "
                     "DotProductAttention) with sequence parallelism over a ProcessGroupCollection "
                     "of its own, strided groups against megatron's consecutive global ones "
                     "(scripts/capture/gg_capture/models/megatron_core.py:build_cross_attention)")
        self._world = 1

    def build(self, tp):
        self._world = tp.size
        replicas = tp.size // self.module_tp
        self.output_group = list(range(0, tp.size, replicas)) if tp.size > 1 else None
        return super().build(tp)

    def data_placement(self, name):
        if self._world == 1:
            return ("replicate",)
        mesh = (("tp", self.module_tp), ("dp", self._world // self.module_tp))
        first = ("replicate",) if name == "attention_mask" else ("shard", 0)
        return ("mesh", mesh, (first, ("replicate",)))

    def output_placements(self):
        return [("shard", 0)]  # over output_group


# ---- megatron-core's MoE layer with its load-balancing loss (Megatron-LM PR #3768 / #5047) -----

class PerTokenLoss(torch.nn.Module):
    """GPTModel under megatron's --calculate-per-token-loss: the loss is the sum of the per-token
    losses (what a per-token loss function returns with its token count; finalize_model_grads
    later divides every gradient by the global token count, a factor common to S and D that the
    capture leaves out). After the forward, as megatron's forward_step does, the MoE aux-loss
    scaler gets the loss scale: 1 (no grad scaler), not divided by the number of micro-batches
    in per-token mode."""

    def __init__(self, gpt):
        super().__init__()
        self.gpt = gpt

    def forward(self, input_ids, position_ids, labels):
        from megatron.core.transformer.moe.moe_utils import MoEAuxLossAutoScaler
        loss = self.gpt(input_ids, position_ids, None, labels=labels).sum()
        MoEAuxLossAutoScaler.set_loss_scale(torch.ones((), dtype=loss.dtype))
        return loss


def build_moe(tp, hidden=16, heads=4, vocab=32, seq=8, batch=2, experts=4, topk=2,
              aux_loss_coeff=0.01):
    """A gg_capture factory: megatron-core's GPTModel whose layer's MLP is its MoELayer (the local
    spec with num_experts: TopKRouter with the Switch load-balancing loss, SequentialMLP experts,
    the allgather token dispatcher; expert tensor parallelism = TP, expert parallelism 1) with
    sequence parallelism and --calculate-per-token-loss, under PerTokenLoss. The router's
    load-balancing loss reaches the gradients through MoEAuxLossAutoScaler, whose backward
    scale PerTokenLoss sets."""
    from megatron.core import parallel_state
    from megatron.core.models.gpt import GPTModel
    from megatron.core.models.gpt.gpt_layer_specs import get_gpt_layer_local_spec
    from megatron.core.tensor_parallel import model_parallel_cuda_manual_seed
    from megatron.core.transformer import TransformerConfig
    parallel_state.initialize_model_parallel(tensor_model_parallel_size=tp.size)
    model_parallel_cuda_manual_seed(0)
    config = TransformerConfig(
        num_layers=1, hidden_size=hidden, num_attention_heads=heads,
        tensor_model_parallel_size=tp.size, sequence_parallel=tp.size > 1,
        use_cpu_initialization=True, num_moe_experts=experts, moe_router_topk=topk,
        moe_router_load_balancing_type="aux_loss", moe_aux_loss_coeff=aux_loss_coeff,
        moe_token_dispatcher_type="allgather", calculate_per_token_loss=True,
        add_bias_linear=False, hidden_dropout=0.0, attention_dropout=0.0)
    gpt = GPTModel(config, get_gpt_layer_local_spec(num_experts=experts, moe_grouped_gemm=False),
                   vocab_size=vocab, max_sequence_length=seq)
    g = torch.Generator().manual_seed(2)
    inputs = {"input_ids": torch.randint(0, vocab, (batch, seq), generator=g),
              "position_ids": torch.arange(seq).unsqueeze(0).expand(batch, seq),
              "labels": torch.randint(0, vocab, (batch, seq), generator=g)}
    return PerTokenLoss(gpt), inputs


class MegatronCoreMoE(MegatronCoreBug):
    """build_moe as a bug-benchmark program. The allgather dispatcher sizes its permutation by
    the tokens each expert got (`.item()` of the routing map's counts, gathered over TP), so the
    graphs hold the traced routing's shapes: traced with live collectives and checked on S's
    traced inputs (values.json; "Data-dependent shapes" in docs/architecture.md)."""
    live_collectives = True
    training = True  # the router attaches its load-balancing loss in training only (no dropout)
    values_read = "the allgather dispatcher's expert token counts (.item())"

    def __init__(self, name, patch=None, **config):
        super().__init__(name, patch=patch, factory=build_moe, **config)
        self.plan = (f"megatron-core {version()} GPTModel with its MoELayer (TopKRouter with the "
                     "aux_loss load-balancing loss, SequentialMLP experts, allgather token "
                     "dispatcher), sequence parallelism, --calculate-per-token-loss "
                     "(scripts/capture/gg_capture/models/megatron_core.py:build_moe)")


def aux_loss_scale_before_5047():
    """Megatron-LM PR #3768's TP/CP finding as megatron-core had it before PR #5047 (its fix,
    released in 0.19.2): with --calculate-per-token-loss the router attached
    `aux_loss * num_local_tokens` to the activations, num_local_tokens being this rank's
    sequence shard, while finalize_model_grads divides the router's gradient (summed over TP,
    the weight being sequence-parallel) by the global token count: the load-balancing gradient
    shrinks by tp_cp_group.size(). 0.19.2 attaches `aux_loss * num_local_tokens *
    tp_cp_group.size()`; the patch hands its attach_and_log_load_balancing_loss the loss
    divided by tp_cp_group.size(), so it attaches the pre-fix product (the metric it logs,
    which no graph reads, is divided too)."""
    from megatron.core.transformer.moe import router
    attach = router.TopKRouter.attach_and_log_load_balancing_loss

    def patched(self, activation, aux_loss_coeff, aux_loss, *args, **kwargs):
        if self.calculate_per_token_loss:
            aux_loss = aux_loss / self.tp_cp_group.size()
        return attach(self, activation, aux_loss_coeff, aux_loss, *args, **kwargs)

    return {(router.TopKRouter, "attach_and_log_load_balancing_loss"): patched}
