"""SGLang's data-parallel attention with an expert-parallel MoE: one decoder layer and the LM head
of a DeepSeek-style model served on W = dp x attn_tp ranks (SGLang's --enable-dp-attention).

The ranks are laid out as SGLang lays them: rank r is attention-TP rank r % attn_tp of
attention-DP group r // attn_tp. Each DP group serves its own request (S serves all of them as a
batch): attention with its heads split over the group's attn_tp ranks (column-parallel q, k, v,
row-parallel output all-reduced over the attention-TP group), so the hidden states leave
attention replicated within the group. The MoE layer then runs over all W ranks on the tokens of
every group: dp_gather_replicate (each rank contributes its attention-TP slice of its group's
tokens, all-gathered over the whole TP group), the router on every token, each rank's experts
(expert parallelism over the W ranks) on every token: each rank holds a partial sum, which a
reduce-scatter over the TP group sums per token slice (SGLang's reduce-scatter path, which skips
the MoE's own all-reduce). The shared expert (SGLANG_SHARED_EXPERT_TP1: replicated, not sharded)
is added to the slice after that reduction, and an all-gather over the attention-TP group gives
the group its tokens back. The LM head is vocabulary-parallel over the attention-TP group
(enable_dp_lm_head): its logits all-gathered over that group and cut to the vocabulary size, as
SGLang's LogitsProcessor does.

Not on a real library: SGLang is an inference server (not installed here), and neither
megatron-core 0.19.2 nor torchtitan 0.3.0 has data-parallel attention; their MoE layers route
tokens with data-dependent shapes (megatron's token dispatchers, torchtitan's grouped_mm), which
a captured graph cannot replay on other inputs. The experts here are dense: every expert runs on
every token and the top-1 gate zeroes the others (the same result).

Bugs (tests/bugs):
  dp_gather_partial      SGLang issue #31699: the attention output, already all-reduced over the
                         attention-TP group, gathered with dp_gather_partial (a reduce-scatter
                         over the attention-TP group, for partial sums, then the all-gather):
                         attn_tp times the hidden states;
  shared_before_reduce   SGLang issue #31475: the replicated shared expert's output added to each
                         rank's routed partial sum before the reduce-scatter: R + W * S;
  lm_head_tp_gather      SGLang PR #20492: the logits all-gathered over the whole TP group instead
                         of the attention-TP group (then cut to the vocabulary size): every DP
                         group gets the first group's logits.
"""
import dataclasses

import torch
import torch.nn.functional as F

from .. import fakedist, tp as tpmod
from .base import Program, full

BUGS = ("dp_gather_partial", "shared_before_reduce", "lm_head_tp_gather")


@dataclasses.dataclass
class Groups:
    """The groups of one rank: the whole TP group (world), its attention-TP group, its DP index."""
    world: tpmod.TP
    attn: tpmod.TP
    dp_rank: int = 0

    @property
    def size(self):  # trace.py reads tp.size of the program's group
        return self.world.size


def _gather(x, dim, group):
    return x if group.size == 1 else tpmod._all_gather(x, dim, group)


def _reduce_scatter(x, dim, group):
    return x if group.size == 1 else tpmod._reduce_scatter(x, dim, group)


def _all_reduce(x, group):
    return x if group.size == 1 else tpmod._all_reduce(x, group)


class DPAttentionLayer(torch.nn.Module):
    def __init__(self, cfg, g, bug=None):
        super().__init__()
        h, self.heads, self.g, self.bug = cfg["hidden"], cfg["heads"], g, bug
        a = g.attn
        self.ln1, self.ln2 = torch.nn.LayerNorm(h), torch.nn.LayerNorm(h)
        # attention: heads split over the attention-TP group, replicated over the DP groups
        self.wq, self.wk, self.wv = (torch.nn.Parameter(tpmod.shard(full(h, h), 0, a))
                                     for _ in range(3))
        self.wo = torch.nn.Parameter(tpmod.shard(full(h, h), 1, a))
        self.bo = torch.nn.Parameter(full(h))
        # MoE: a replicated router, experts split over all W ranks, a replicated shared expert
        e, f = cfg["experts"], cfg["ffn"]
        self.router = torch.nn.Parameter(full(e, h))
        self.w1 = torch.nn.Parameter(tpmod.shard(full(e, f, h), 0, g.world))
        self.w2 = torch.nn.Parameter(tpmod.shard(full(e, h, f), 0, g.world))
        self.shared1, self.shared2 = torch.nn.Parameter(full(f, h)), torch.nn.Parameter(full(h, f))

    def attention(self, x):
        b, s, h = x.shape
        local = self.wq.shape[0]
        heads, d = self.heads * local // h, h // self.heads
        q, k, v = (F.linear(x, w).view(b, s, heads, d).transpose(1, 2)
                   for w in (self.wq, self.wk, self.wv))
        ctx = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        out = F.linear(ctx.transpose(1, 2).reshape(b, s, local), self.wo)
        return _all_reduce(out, self.g.attn) + self.bo  # replicated within the group

    def experts(self, x):
        """This rank's experts on the tokens x [T, h], weighted by their top-1 gates: a partial
        sum over the ranks (every expert's at W = 1)."""
        probs = F.softmax(F.linear(x, self.router), dim=-1)  # [T, E]
        top = probs.max(dim=-1, keepdim=True)[0]
        gate = probs.masked_fill(probs < top, 0.0)
        mine = self.w1.shape[0]
        gate = gate.narrow(1, self.g.world.rank * mine, mine)  # this rank's experts' columns
        xe = x.unsqueeze(0).expand(mine, *x.shape)
        y = torch.bmm(F.gelu(torch.bmm(xe, self.w1.transpose(1, 2))), self.w2.transpose(1, 2))
        return (y * gate.t().unsqueeze(-1)).sum(0)  # [T, h]

    def shared(self, x):
        return F.linear(F.gelu(F.linear(x, self.shared1)), self.shared2)

    def dp_gather(self, x):
        """(the tokens of every DP group [dp * T, h], this rank's slice of its group's) from this
        group's tokens x [T, h] (replicated within the attention-TP group):
        dp_gather_replicate keeps this rank's slice of them and all-gathers the slices over the
        TP group; dp_gather_partial (for partial sums) reduce-scatters them over the
        attention-TP group instead, which sums the replicas."""
        a = self.g.attn
        n = x.shape[0] // a.size
        mine = x.narrow(0, a.rank * n, n)
        sent = _reduce_scatter(x, 0, a) if self.bug == "dp_gather_partial" else mine
        return _gather(sent, 0, self.g.world), mine

    def forward(self, x):
        b, s, h = x.shape
        x = x + self.attention(self.ln1(x))
        tokens, mine = self.dp_gather(self.ln2(x).reshape(b * s, h))
        routed = self.experts(tokens)
        if self.bug == "shared_before_reduce":  # every rank adds S before the sum over ranks
            routed = routed + self.shared(tokens)
        # the sum over the ranks of this rank's token slice (SGLang's reduce-scatter path)
        out = _reduce_scatter(routed, 0, self.g.world)
        if self.bug != "shared_before_reduce":  # the shared expert after the sum (its fix)
            out = out + self.shared(mine)
        return x + _gather(out, 0, self.g.attn).view(b, s, h)  # the group's tokens again


class _Net(torch.nn.Module):
    def __init__(self, cfg, g, bug):
        super().__init__()
        self.g, self.bug, self.vocab = g, bug, cfg["vocab"]
        self.layer = DPAttentionLayer(cfg, g, bug)
        self.norm = torch.nn.LayerNorm(cfg["hidden"])
        # vocabulary-parallel over the attention-TP group
        self.lm_head = torch.nn.Parameter(tpmod.shard(full(cfg["vocab"], cfg["hidden"]), 0, g.attn))

    def forward(self, hidden):
        logits = F.linear(self.norm(self.layer(hidden)), self.lm_head)  # [b, s, V / attn_tp]
        group = self.g.world if self.bug == "lm_head_tp_gather" else self.g.attn
        return (_gather(logits, 2, group)[..., :self.vocab],)


class DPAttention(Program):
    """W = dp x attn_tp ranks (dp = attn_tp = 2 at W = 4), one request per DP group."""
    plan = ("SGLang-style data-parallel attention: attention TP within each DP group, an "
            "expert-parallel MoE over all ranks "
            "(scripts/capture/gg_capture/models/dp_attention.py)")

    def __init__(self, bug=None, name=None, attn_tp=2):
        if bug is not None and bug not in BUGS:
            raise ValueError(f"dp_attention: bug {bug!r}: bugs {BUGS}")
        self.name, self.bug, self.attn_tp = name or "dp_attention", bug, attn_tp
        # 2 requests: one per DP group at W = 4
        self.config = {"hidden": 32, "heads": 4, "ffn": 32, "experts": 4, "vocab": 64,
                       "seq": 8, "requests": 2, "attn_tp": attn_tp, "layers": 1}
        self._world = 1
        if bug:
            self.config["bug"] = bug

    def make_tp(self, world, rank, world_group):
        mine, _ = fakedist.new_subgroups(world, self.attn_tp)
        return Groups(tpmod.TP(world, rank, world_group),
                      tpmod.TP(self.attn_tp, rank % self.attn_tp, mine), rank // self.attn_tp)

    def build(self, tp):
        g = tp if isinstance(tp, Groups) else Groups(tp, tpmod.TP())
        self._world = g.size
        net = _Net(self.config, g, self.bug)
        if g.size > 1:
            self._place(net, g.size)
        return net

    def _mesh(self, world):
        return (("dp", world // self.attn_tp), ("tp", self.attn_tp))

    def _place(self, net, world):
        """Each parameter's placement over the dp x tp mesh."""
        rep, mesh = ("replicate",), self._mesh(world)
        layer = net.layer
        over = {**{w: (rep, ("shard", 0)) for w in (layer.wq, layer.wk, layer.wv, net.lm_head)},
                layer.wo: (rep, ("shard", 1)),
                layer.w1: (("shard", 0), ("shard", 0)), layer.w2: (("shard", 0), ("shard", 0))}
        for p in net.parameters():
            tpmod.place(p, "mesh", mesh, over.get(p, (rep, rep)))

    def data(self, tp):
        """S serves the requests as one batch; DP group i serves request i."""
        c = self.config
        g = torch.Generator().manual_seed(1)
        requests = torch.randn(c["requests"], c["seq"], c["hidden"], generator=g)
        if tp.size == 1:
            return {"hidden": requests}
        return {"hidden": requests.narrow(0, tp.dp_rank, 1).clone()}

    def _per_request(self):
        """Split over the DP groups along the batch, replicated within each."""
        if self._world == 1:
            return ("replicate",)
        return ("mesh", self._mesh(self._world), (("shard", 0), ("replicate",)))

    def data_placement(self, name):
        return self._per_request()

    def output_placements(self):
        return [self._per_request()]
