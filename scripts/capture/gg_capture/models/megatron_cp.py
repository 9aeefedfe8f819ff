"""A Megatron-style transformer layer ([sequence, batch, hidden]) with rotary position embedding
under context parallelism: every rank holds one contiguous chunk of the sequence, applies RoPE to
its own queries and keys, and all-gathers keys and values along the sequence for attention (the
all-gather form of context parallelism; ring attention exchanges the same blocks in steps).

RoPE follows Megatron-LM: the rotary table is built for the whole sequence (from the position ids
and inv_freq, the same on every rank) and each rank keeps its chunk of it
(`get_pos_emb_on_this_cp_rank`). The bug of the benchmark keeps the first chunk on every rank:
positions not offset per sequence shard, so rank r > 0 rotates its tokens as if they were at the
start of the sequence (Megatron-LM issue #560, PR #5243 for the packed-sequence variant).

With `zigzag`, the sequence is split load-balanced as Megatron-LM's `get_batch_on_this_cp_rank`
does: cut into 2W chunks, rank r holds chunks r and 2W-1-r (it takes those chunks' rows of the
rotary table and of the causal mask, both whole on every rank); the all-gathered keys and values
come in rank order and are put back in sequence order by slicing and concatenating the chunks (as
Transformer Engine's all-gather CP does). Its bug "zigzag_wrong_chunk" takes the rank's second
chunk as W + r (the round-robin index) for its rotary positions and mask rows while the data is
split zig-zag.

With `loss` (the joint cases) a replicated output head and the cross entropy of each rank's tokens
over the whole sequence's token count follow the layer (the loss partial over CP); the backward
reduce-scatters the all-gathered keys' and values' gradients and every weight's gradient is
all-reduced over CP (Megatron-LM's finalize_model_grads over the data-parallel group with context
parallelism). Its bugs: "kv_grad_split" (the all-gather's backward keeps the rank's own slice of
its gathered gradient, no sum over the ranks) and "cp_grads_not_reduced" (no all-reduce of the
weights' gradients over CP)."""
import dataclasses
import math

import torch
import torch.distributed as dist
import torch.nn.functional as F

from .. import fakedist
from .. import tp as tpmod
from .base import Program, full


def rotate_half(x):
    """[x1, x2] -> [-x2, x1] along the last dim (GPT-NeoX / Llama style)."""
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def zigzag_chunks(rank, world, bug=None):
    """The two sequence chunks (of 2 * world) that `rank` holds under the zig-zag split; the bug
    "zigzag_wrong_chunk" names the round-robin second chunk W + r instead of 2W-1-r."""
    return rank, (world + rank if bug == "zigzag_wrong_chunk" else 2 * world - 1 - rank)


def zigzag_shard(full_tensor, dim, rank, world):
    """Rank's zig-zag part of `full_tensor` along dim: chunks rank and 2*world-1-rank."""
    chunks = full_tensor.chunk(2 * world, dim)
    first, second = zigzag_chunks(rank, world)
    return torch.cat((chunks[first], chunks[second]), dim).clone()


def unzigzag(gathered, world):
    """The all-gathered rank-order sequence [c0, c(2W-1), c1, c(2W-2), ...] (dim 0) back in
    sequence order c0, c1, ..., c(2W-1): each chunk sliced out of its rank's part."""
    half = gathered.shape[0] // (2 * world)
    order = [(r, 0) for r in range(world)] + [(r, 1) for r in reversed(range(world))]
    return torch.cat([gathered.narrow(0, (2 * r + j) * half, half) for r, j in order])


class _GatherSequence(torch.autograd.Function):
    """All-gather along the sequence forward, reduce-scatter backward (keys and values under CP):
    every rank's queries read every rank's keys and values, so the gradient of a rank's keys is
    the sum over the ranks of their parts of the gathered gradient. The bug "kv_grad_split" takes
    only this rank's part of its own gathered gradient (the backward of tensor parallelism's
    gather_from_tensor_model_parallel_region, right only when the gathered tensor's consumer is
    replicated): the other ranks' queries' contributions to its keys' and values' gradients are
    lost."""
    @staticmethod
    def forward(ctx, x, cp, bug):
        ctx.cp, ctx.bug = cp, bug
        return tpmod._all_gather(x, 0, cp)

    @staticmethod
    def backward(ctx, g):
        if ctx.bug == "kv_grad_split":
            return tpmod._split(g, 0, ctx.cp), None, None
        return tpmod._reduce_scatter(g, 0, ctx.cp), None, None


def gather_sequence(x, cp, bug=None):
    return x if cp.size == 1 else _GatherSequence.apply(x, cp, bug)


class CPLayer(torch.nn.Module):
    def __init__(self, cfg, cp, bug=None, tp=None):
        super().__init__()
        h, self.heads, self.cp, self.bug = cfg["hidden"], cfg["heads"], cp, bug
        # tensor parallelism over the heads (TP x CP; S too runs its row-parallel output
        # projection code, at TP 1), or none
        self.row_parallel, self.tp = tp is not None, tp or tpmod.TP()
        self.zigzag = cfg.get("zigzag", False)
        d, t = h // self.heads, self.tp.size
        # context parallelism splits the tokens, not the parameters; tensor parallelism splits
        # q/k/v by output rows (heads) and the output projection by input columns
        self.ln = torch.nn.LayerNorm(h)
        self.q, self.k, self.v = (torch.nn.Linear(h, h // t) for _ in range(3))
        self.proj = torch.nn.Linear(h // t, h)
        for lin in (self.q, self.k, self.v, self.proj):
            lin.weight.data, lin.bias.data = full(*lin.weight.shape), full(lin.bias.shape[0])
        self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, d, 2).float() / d)))

    def rotary(self, position_ids, local):
        """cos and sin [local, 1, 1, d] of this rank's tokens: the cache of the whole sequence
        (the same on every rank), then this rank's chunk of it."""
        freqs = position_ids.float()[:, None] * self.inv_freq[None, :]  # [S, d/2]
        emb = torch.cat((freqs, freqs), dim=-1)[:, None, None, :]
        if self.zigzag:  # chunks r and 2W-1-r of the 2W chunks (local / 2 tokens each)
            half = local // 2
            chunks = zigzag_chunks(self.cp.rank, self.cp.size, self.bug)
            cos, sin = emb.cos(), emb.sin()
            return (torch.cat([cos.narrow(0, c * half, half) for c in chunks]),
                    torch.cat([sin.narrow(0, c * half, half) for c in chunks]))
        start = 0 if self.bug == "rope_no_cp_offset" else self.cp.rank * local
        # get_pos_emb_on_this_cp_rank; the bug starts every rank's chunk at position 0
        return emb.cos().narrow(0, start, local), emb.sin().narrow(0, start, local)

    def forward(self, x, position_ids, attention_mask):
        s, b, h = x.shape
        n = self.heads // self.tp.size  # this rank's heads
        d = h // self.heads
        cos, sin = self.rotary(position_ids, s)
        # column-parallel q/k/v: the input's gradient all-reduced over TP (identity forward)
        y = tpmod.copy_to_tp(self.ln(x), self.tp)
        q, k, v = (lin(y).reshape(s, b, n, d) for lin in (self.q, self.k, self.v))
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k, v = (gather_sequence(t, self.cp, self.bug) for t in (k, v))  # [S, b, n, d]
        if self.zigzag and self.cp.size > 1:
            k, v = unzigzag(k, self.cp.size), unzigzag(v, self.cp.size)
        seq = k.shape[0]
        # [s, b, n, d] -> [b * n, s, d]: the batched products of Megatron-LM's CoreAttention
        q = q.reshape(s, b * n, d).transpose(0, 1)
        k = k.reshape(seq, b * n, d).transpose(0, 1)
        v = v.reshape(seq, b * n, d).transpose(0, 1)
        scores = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(d)  # [b * n, s, S]
        if self.zigzag:  # the whole causal mask (replicated): this rank's chunks' query rows
            half = s // 2
            chunks = zigzag_chunks(self.cp.rank, self.cp.size, self.bug)
            attention_mask = torch.cat([attention_mask.narrow(1, c * half, half)
                                        for c in chunks], 1)
        probs = F.softmax(scores.masked_fill(attention_mask, -10000.0), dim=-1)
        ctx = torch.bmm(probs, v).transpose(0, 1).reshape(s, b, n * d)
        return residual_projection(x, ctx, self.proj, self.tp if self.row_parallel else None)


class _Net(torch.nn.Module):
    """The CP layer; with a vocabulary in the configuration (the joint cases) a replicated output
    head and the cross entropy of this rank's tokens: their sum divided by the whole sequence's
    token count (Megatron-LM's per-token loss), so the loss is partial over CP and each rank's
    gradient its part of the gradient."""

    def __init__(self, cfg, cp, bug, tp=None):
        super().__init__()
        self.cp = cp
        self.layer = CPLayer(cfg, cp, bug, tp)
        if cfg.get("vocab"):
            self.head = torch.nn.Linear(cfg["hidden"], cfg["vocab"], bias=False)
            self.head.weight.data = full(cfg["vocab"], cfg["hidden"])

    def forward(self, hidden, position_ids, attention_mask, labels=None):
        out = self.layer(hidden, position_ids, attention_mask)
        if labels is None:
            return (out,)
        logits = self.head(out)  # [s, b, V]
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1),
                               reduction="sum") / (labels.numel() * self.cp.size)
        return (loss,)


def finalize_cp_grads(cp, bug):
    """Megatron-LM's finalize_model_grads under CP: parameters are replicated over the
    context-parallel ranks (its data-parallel group includes them, `with_context_parallel=True`),
    each rank's gradient is the part of its own tokens, all-reduced over CP. The bug
    "cp_grads_not_reduced" leaves them partial."""
    def finalize(names, params, grads, tp):
        if bug == "cp_grads_not_reduced":
            return grads
        return [tpmod.all_reduce_grad(g, cp) for g in grads]
    return finalize


class MegatronCP(Program):
    """Context parallelism over the whole world: hidden states and the causal mask's query rows
    sharded along the sequence, position ids replicated (RoPE's table is built for all of them)."""
    plan = ("context parallelism: sequence chunks per rank, keys/values all-gathered "
            "(scripts/capture/gg_capture/models/megatron_cp.py)")

    def __init__(self, bug=None, name=None, zigzag=False, seq=None, loss=False):
        self.name = name or ("megatron_cp_zigzag" if zigzag else "megatron_cp_rope")
        self.bug = bug
        # the zig-zag split needs 2W chunks: 16 tokens for CP 4 unless told
        self.config = {"hidden": 32, "heads": 4, "seq": seq or (16 if zigzag else 8),
                       "batch": 1, "layers": 1}
        if loss:  # the joint cases: an output head and the cross entropy of the labels
            self.config["vocab"] = 64
        if zigzag:
            self.config["zigzag"] = True
            self.plan = ("context parallelism: zig-zag sequence split (rank r: chunks r and "
                         "2W-1-r), keys/values all-gathered and put back in sequence order "
                         "(scripts/capture/gg_capture/models/megatron_cp.py)")
        if bug:
            self.config["bug"] = bug

    def build(self, tp):
        return _Net(self.config, tp, self.bug)

    def finalize_grads(self, names, params, grads, tp):
        """The gradients all-reduced over CP (finalize_cp_grads; here CP is the whole world)."""
        return finalize_cp_grads(tp, self.bug)(names, params, grads, tp)

    def data(self, tp):
        c = self.config
        g = torch.Generator().manual_seed(1)
        seq, local = c["seq"], c["seq"] // tp.size
        hidden = torch.randn(seq, c["batch"], c["hidden"], generator=g)
        mask = torch.ones(seq, seq, dtype=torch.bool).triu(1).reshape(1, seq, seq)
        # the labels, [seq, batch], split as the tokens are (after the hidden states: the
        # forward cases' data unchanged)
        labels = (torch.randint(0, c["vocab"], (seq, c["batch"]), generator=g)
                  if c.get("vocab") else None)
        if c.get("zigzag"):  # the rank's two chunks of the tokens and of the mask's query rows
            data = {"hidden": zigzag_shard(hidden, 0, tp.rank, tp.size),
                    "position_ids": torch.arange(seq),
                    "attention_mask": mask}
            if labels is not None:
                data["labels"] = zigzag_shard(labels, 0, tp.rank, tp.size)
            return data
        # rank r holds its chunk of the sequence; the mask's rows are its queries (global positions)
        data = {"hidden": tpmod.shard(hidden, 0, tp) if tp.size > 1 else hidden,
                "position_ids": torch.arange(seq),
                "attention_mask": mask.narrow(1, tp.rank * local, local).contiguous()}
        if labels is not None:
            data["labels"] = tpmod.shard(labels, 0, tp) if tp.size > 1 else labels
        return data

    def data_placement(self, name):
        if self.config.get("zigzag"):  # the mask replicated: each rank takes its chunks' rows
            return {"hidden": ("zigzag", 0), "labels": ("zigzag", 0)}.get(name, ("replicate",))
        return {"hidden": ("shard", 0), "labels": ("shard", 0),
                "attention_mask": ("shard", 1)}.get(name, ("replicate",))

    def output_placements(self):
        """The layer's output split as the tokens; with a loss, the loss: partial over CP."""
        if self.config.get("vocab"):
            return [("partial",)]
        return [("zigzag" if self.config.get("zigzag") else "shard", 0)]


@dataclasses.dataclass
class MeshGroups:
    """One rank's groups on a cp x tp mesh (rank = cp rank * tp + tp rank, TP fastest)."""
    world: tpmod.TP
    cp: tpmod.TP
    tp: tpmod.TP

    @property
    def size(self):  # trace.py reads tp.size of the program's group
        return self.world.size


class TPxCPMesh:
    """A cp x tp mesh for a context-parallel program (world = cp x tp ranks, tp fastest; at world
    = tp, CP 1): the TP group splits the attention heads (column-parallel q/k/v, row-parallel
    output projection), the CP group the sequence. The program's `_net(cp, tp)` builds the layer,
    `sequence_splits()` names its sequence-split inputs; the spec writes them as
    `placements(<split>, replicate)` on the mesh."""

    def _init_mesh(self, tp_size):
        self.tp_size = tp_size
        self.config["tp"] = tp_size
        self._world = 1

    def make_tp(self, world, rank, world_group):
        t = self.tp_size
        tp_group, _ = fakedist.new_subgroups(world, t)
        # the CP groups: ranks with the same TP rank (every rank creates every group, in order)
        cp_groups = [dist.new_group(list(range(j, world, t))) for j in range(t)]
        return MeshGroups(tpmod.TP(world, rank, world_group),
                          tpmod.TP(world // t, rank // t, cp_groups[rank % t]),
                          tpmod.TP(t, rank % t, tp_group))

    def build(self, tp):
        g = tp if isinstance(tp, MeshGroups) else MeshGroups(tp, tp, tpmod.TP(1, 0, tp.group))
        self._world = g.size
        net = self._net(g.cp, g.tp)
        if g.tp.size > 1:
            mesh, rep = self._mesh(), ("replicate",)
            layer = net.layer
            over = {**{w: (rep, ("shard", 0)) for w in (layer.q.weight, layer.k.weight,
                                                        layer.v.weight, layer.q.bias,
                                                        layer.k.bias, layer.v.bias)},
                    layer.proj.weight: (rep, ("shard", 1))}
            for p in net.parameters():
                tpmod.place(p, "mesh", mesh, over.get(p, (rep, rep)))
        return net

    def _mesh(self):
        """The mesh axes as the spec writes them, for every degree (1: S against itself)."""
        t = self.tp_size
        return (("cp", f"world / min(world, {t})"), ("tp", f"min(world, {t})"))

    def data(self, tp):
        return super().data(tp.cp if isinstance(tp, MeshGroups) else tp)

    def data_placement(self, name):
        """Sequence-split tensors over the CP axis, replicated over TP; the rest replicated."""
        split = self.sequence_splits()
        if self._world == 1 or name not in split:
            return ("replicate",)
        return ("mesh", self._mesh(), (split[name], ("replicate",)))

    def finalize_grads(self, names, params, grads, tp):
        """The gradients all-reduced over the CP group (finalize_cp_grads)."""
        cp = tp.cp if isinstance(tp, MeshGroups) else tp
        return finalize_cp_grads(cp, self.bug)(names, params, grads, tp)

    def output_placements(self):
        """The hidden states' placement; with a loss (`config["vocab"]`), the loss: partial over
        CP, replicated over TP (every TP rank computes its tokens' whole loss)."""
        if not self.config.get("vocab"):
            return [self.data_placement("hidden")]
        if self._world == 1:
            return [("partial",)]
        return [("mesh", self._mesh(), (("partial",), ("replicate",)))]


class MegatronTPCP(TPxCPMesh, MegatronCP):
    """TP x CP on one attention layer: heads split over the TP group, the sequence split over the
    CP group (contiguous chunks, or zig-zag), keys and values all-gathered over CP (world = cp x tp
    ranks, tp fastest; at world = tp, CP 1). The spec writes the hidden states as
    `placements(shard(0), replicate)` or `placements(zigzag(0), replicate)` on the cp x tp mesh."""
    plan = ("TP x CP: attention heads over TP (column-parallel q/k/v, row-parallel output), the "
            "sequence over CP with keys/values all-gathered "
            "(scripts/capture/gg_capture/models/megatron_cp.py)")
    degrees = (2, 4)

    def __init__(self, bug=None, name=None, tp_size=2, seq=8, zigzag=False, loss=False):
        super().__init__(bug=bug, name=name, zigzag=zigzag, seq=seq, loss=loss)
        self.name = name or f"megatron_tp{tp_size}_cp" + ("_zigzag" if zigzag else "")
        self.plan = MegatronTPCP.plan.replace("the sequence over CP", "the sequence split zig-zag "
                                              "over CP" if zigzag else "the sequence over CP")
        self._init_mesh(tp_size)
        if loss and zigzag:
            # The backward of the sequence-order un-permutation (narrow + cat) is every chunk's
            # gradient written into zeros (slice_scatter) and the 2W results added, before the
            # reduce-scatter: the S operator that first reads the keys' or values' gradient is
            # related to D through a chain of about 6W D operators. At cp 2 x tp 2 the v weight
            # gradient's search (deepened past the node limit, to 32 D operators) needs 30000
            # e-nodes, 3x the default (S's sums of 2W pieces regrouped every way; the CP-only
            # case needs no more than the default). make_corpus.py passes this option.
            self.verify_options = ("--max-nodes", "30000")

    def _net(self, cp, tp):
        return _Net(self.config, cp, self.bug, tp)

    def sequence_splits(self):
        """The hidden states along dim 0 (zig-zag or contiguous); a contiguous split's mask rows
        along dim 1 (the zig-zag one takes its rows of the replicated mask)."""
        if self.config.get("zigzag"):
            return {"hidden": ("zigzag", 0), "labels": ("zigzag", 0)}
        return {"hidden": ("shard", 0), "labels": ("shard", 0), "attention_mask": ("shard", 1)}


def residual_projection(x, ctx, proj, tp):
    """x + the attention output ctx projected: by the whole `proj` (tp None), or row-parallel
    over `tp` (Megatron-LM's RowParallelLinear: this rank's heads' partial sums all-reduced over
    TP, then the bias)."""
    if tp is None:
        return x + proj(ctx)
    out = tpmod.reduce_from_tp(F.linear(ctx, proj.weight), tp)  # identity backward
    return x + (out + proj.bias)
