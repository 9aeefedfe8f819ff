"""Expert parallelism: a top-k MoE layer whose experts are spread over the EP ranks, tokens
dispatched to their experts' ranks and combined back by all_to_all_single with uneven split sizes
that depend on the router's choices (torchtitan's and Megatron's dropless token dispatch).

Every rank holds its own tokens (the batch is sharded over the EP group) and E / EP experts
(rank r the contiguous block r * E/EP ... (r + 1) * E/EP - 1); the router is replicated. Per rank:

  1. router: softmax(x @ router^T), top-k experts per token, the k gates renormalized;
  2. permute: the T * k (token, choice) slots sorted by destination (rank, local expert), stable;
  3. counts: tokens per expert (a bincount), exchanged by an all_to_all of the counts, so each
     rank learns how many tokens every rank sends each of its experts;
  4. dispatch: all_to_all_single of the permuted tokens, input split sizes the tokens this rank
     sends each rank, output split sizes those it receives (both `.tolist()` of count tensors);
  5. experts: the received rows regrouped by local expert (they arrive source-rank major), each
     local expert's GELU MLP on its rows (a loop over local experts), rows put back in order;
  6. combine: the reverse all_to_all_single (split sizes swapped), the slots unpermuted, each
     token's k expert outputs summed with its gates.

At EP 1 (the sequential program S) the same code runs without the all_to_alls. There is no
capacity factor and nothing is dropped (dropless, as torchtitan's MoE and Megatron's default
alltoall dispatcher): every token reaches its k experts.

The split sizes are values: each rank's depend on its own and the other ranks' routing. The
fake process group does not communicate, so this program is captured with live collectives
(`live_collectives`: one process per rank over gloo, trace.trace_ranks) and the graphs hold the
split sizes, and every shape that follows from them, of the traced inputs. The graphs replay
exactly on those inputs only (see docs/architecture.md, "Data-dependent shapes").

Not on a real library: torchtitan 0.3.0's MoE runs its experts with torch._grouped_mm (another
lowering) and megatron-core's token dispatchers need Transformer Engine or CUDA; the dispatch
here follows torchtitan's ExpertParallel (counts all-to-all, split sizes from the counts,
all_to_all_single both ways) with a loop over local experts.

Bugs (tests/bugs):
  interleaved_placement  tokens routed as if expert e lived on rank e % EP (round-robin), while
                         the expert weights are sharded in contiguous blocks (rank r holds
                         r * E/EP ...): every split is consistent, so nothing fails at run time,
                         but tokens reach another rank's expert.
  transposed_splits      after the dispatch all-to-all, the received rows' chunk sizes (tokens
                         from source rank j for local expert l, a [W, local] matrix) read
                         transposed, as if the rows arrived expert-major ([local, W]; the
                         `num_global_tokens_per_local_expert.T` of Megatron's alltoall dispatcher
                         applied where it does not belong): the sizes still add up, so nothing
                         fails at run time, but rows are cut at the wrong boundaries and reach
                         the wrong local expert. (Swapping the all-to-all's own send and receive
                         split sizes in the combine cannot be captured: torch refuses it at run
                         time unless every rank receives as many rows as it sends.)
"""
import torch
import torch.distributed._functional_collectives as fc
import torch.nn.functional as F

from .. import tp as tpmod
from .base import Program, full

BUGS = ("interleaved_placement", "transposed_splits")


def _exchange(x, output_splits, input_splits, ep):
    """all_to_all_single over the EP group (the identity at EP 1)."""
    if ep.size == 1:
        return x
    return fc.all_to_all_single(x, output_splits, input_splits, ep.group)


class EPMoE(torch.nn.Module):
    """A top-k MoE layer with E experts, E / EP on each rank of the EP group `ep`."""

    def __init__(self, cfg, ep, bug=None):
        super().__init__()
        h, f, e = cfg["hidden"], cfg["ffn"], cfg["experts"]
        self.ep, self.bug, self.top_k, self.experts = ep, bug, cfg["top_k"], e
        self.local = e // ep.size
        self.router = torch.nn.Parameter(full(e, h, scale=1.0))
        self.w1 = tpmod.place(torch.nn.Parameter(tpmod.shard(full(e, f, h, scale=0.2), 0, ep)),
                              "shard", 0)
        self.w2 = tpmod.place(torch.nn.Parameter(tpmod.shard(full(e, h, f, scale=0.2), 0, ep)),
                              "shard", 0)

    def destination(self, expert):
        """(rank, local expert) of a global expert id: contiguous blocks; the bug routes as if
        the experts were placed round-robin."""
        def floor(e, n):  # aten::div.Tensor_mode (`//` records floor_divide with an int operand)
            return torch.div(e, n, rounding_mode="floor")
        if self.bug == "interleaved_placement":
            return expert % self.ep.size, floor(expert, self.ep.size)
        return floor(expert, self.local), expert % self.local

    def forward(self, x):
        t, h = x.shape
        k, w, local = self.top_k, self.ep.size, self.local
        probs = F.softmax(F.linear(x, self.router), dim=-1)  # [T, E]
        gates, chosen = probs.topk(k, dim=-1)  # [T, k]
        gates = gates / gates.sum(dim=-1, keepdim=True)
        rank, slot = self.destination(chosen.reshape(-1))  # per (token, choice) slot
        key = rank * local + slot  # the slot's destination, rank-major
        order = torch.argsort(key, stable=True)
        sent = x.index_select(0, torch.div(order, k, rounding_mode="floor"))  # [T * k, h]
        counts = torch.bincount(key, minlength=w * local)  # [W * local]: to rank j's expert l
        received_counts = _exchange(counts, None, None, self.ep)  # from rank j to my expert l
        input_splits = counts.view(w, local).sum(dim=1).tolist()
        output_splits = received_counts.view(w, local).sum(dim=1).tolist()
        rows = _exchange(sent, output_splits, input_splits, self.ep)  # source-rank major
        # regroup by local expert, run each, and put the rows back in source-rank order
        if self.bug == "transposed_splits":  # the chunks taken as expert-major: [l * w + j]
            sizes = received_counts.view(w, local).t().reshape(-1).tolist()

            def chunk(j, e):
                return e * w + j
        else:  # source-rank major: [j * local + l]
            sizes = received_counts.tolist()

            def chunk(j, e):
                return j * local + e
        blocks = list(rows.split(sizes, dim=0))
        out_blocks = [None] * len(blocks)
        for e in range(local):
            mine = [chunk(j, e) for j in range(w)]
            xe = torch.cat([blocks[i] for i in mine], dim=0)
            ye = F.linear(F.gelu(F.linear(xe, self.w1[e])), self.w2[e])
            for i, y in zip(mine, ye.split([blocks[i].shape[0] for i in mine], dim=0)):
                out_blocks[i] = y
        back = _exchange(torch.cat(out_blocks, dim=0), input_splits, output_splits, self.ep)
        unpermuted = torch.empty_like(back).index_copy(0, order, back)  # slot order again
        return (unpermuted.view(t, k, h) * gates.unsqueeze(-1)).sum(dim=1)


class _Net(torch.nn.Module):
    def __init__(self, cfg, ep, bug):
        super().__init__()
        self.moe = EPMoE(cfg, ep, bug)

    def forward(self, hidden):
        return (hidden + self.moe(hidden),)


class EPMoEProgram(Program):
    """Expert parallelism over the whole world: tokens sharded along dim 0, experts sharded
    along dim 0 of the stacked expert weights, the router replicated; the output sharded like
    the tokens."""
    plan = ("expert parallelism: top-k routing, token dispatch and combine by all_to_all_single "
            "with data-dependent split sizes (scripts/capture/gg_capture/models/ep_moe.py)")
    live_collectives = True  # the split sizes are values other ranks send (trace.trace_ranks)

    def __init__(self, bug=None, name=None, experts=4, top_k=2, tokens=16):
        if bug is not None and bug not in BUGS:
            raise ValueError(f"ep_moe: bug {bug!r}: bugs {BUGS}")
        self.name, self.bug = name or "ep_moe", bug
        self.config = {"hidden": 16, "ffn": 32, "experts": experts, "top_k": top_k,
                       "tokens": tokens, "layers": 1}
        if bug:
            self.config["bug"] = bug

    def build(self, tp):
        if self.config["experts"] % tp.size or self.config["tokens"] % tp.size:
            raise ValueError(f"ep_moe: {self.config['experts']} experts and "
                             f"{self.config['tokens']} tokens over {tp.size} EP ranks")
        return _Net(self.config, tp, self.bug)

    def data(self, tp):
        """S: every token; EP rank r: its contiguous block of tokens."""
        g = torch.Generator().manual_seed(1)
        tokens = torch.randn(self.config["tokens"], self.config["hidden"], generator=g)
        n = tokens.shape[0] // tp.size
        return {"hidden": tokens.narrow(0, tp.rank * n, n).clone()}

    def data_placement(self, name):
        return ("shard", 0)

    def output_placements(self):
        return [("shard", 0)]
