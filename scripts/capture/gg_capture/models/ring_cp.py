"""Ring attention (context parallelism) with a load-balanced zig-zag sequence split.

A faithful small program of torch's own ring attention
(torch/distributed/tensor/experimental/_context_parallel/_attention.py, torch 2.13): every rank
holds the queries of its part of the sequence, computes partial attention of them against one
key/value block per ring step with the CPU flash kernel
(`aten::_scaled_dot_product_flash_attention_for_cpu`, which returns the block's log-sum-exp),
and merges the partial results as `_SDPAMerger._merge_one` does (the online-softmax merge of
ring-flash-attention PR #34):

    out = out - sigmoid(lse_b - lse) * (out - out_b)
    lse = lse - logsigmoid(lse - lse_b)

The key/value blocks come from one all-gather of the whole keys and values, step i reading the
block of rank (r - i) mod W: the `_AllGatherRotater` form of torch's rotater (the permute form
sends the same blocks one step at a time). torch's own `context_parallel` hooks only the CUDA
kernels (`_scaled_dot_product_flash/efficient/cudnn_attention`), not the CPU flash kernel, so it
cannot be traced on CPU: this program repeats its merge code line by line.

The sequence split is torch's `_HeadTailLoadBalancer` (Megatron-LM's zig-zag): the sequence cut
into 2W chunks, rank r holds chunks r and 2W-1-r, so every rank gets an equal share of the causal
mask's work. Rank r takes the positions of its tokens (rotary table) and its block of the causal
mask (replicated, True above the diagonal) from its chunk indices; the block is made additive
(-10000 where a key is after the query, as Megatron's masked_fill), so a key block wholly in a
query's future merges with weight ~0.

Bug "merge_no_rescale" accumulates every block's output weighted by its share of the new
log-sum-exp but leaves the accumulator unrescaled (the online-softmax rescale of the previous
partial result dropped); "zigzag_wrong_chunk" (as in megatron_cp.py) takes the rank's second
chunk as W + r for its positions and mask rows while the data is split zig-zag."""
import math

import torch
import torch.nn.functional as F

from .. import tp as tpmod
from .base import Program, full
from .megatron_cp import (TPxCPMesh, residual_projection, rotate_half, zigzag_chunks,
                          zigzag_shard)


def _positions(position_ids, chunks, n):
    """The positions of the tokens of `chunks` (each n tokens long)."""
    return torch.cat([position_ids.narrow(0, c * n, n) for c in chunks])


class _MergerLikeSDPA:
    """torch's `_SDPAMerger`: the first block taken as is, later ones merged by their lse."""

    def __init__(self, bug):
        self.bug, self.out, self.lse = bug, None, None

    def step(self, block_out, block_lse):
        block_lse = block_lse.unsqueeze(-1)
        if self.lse is None:
            self.out, self.lse = block_out, block_lse
            return
        out, lse = self.out, self.lse
        if self.bug == "merge_no_rescale":
            new_lse = lse - F.logsigmoid(lse - block_lse)
            # the accumulator keeps its old normalization: out * exp(lse - new_lse) dropped
            self.out = out + torch.exp(block_lse - new_lse) * block_out
        else:
            self.out = out - F.sigmoid(block_lse - lse) * (out - block_out)
            new_lse = lse - F.logsigmoid(lse - block_lse)
        self.lse = new_lse


class RingLayer(torch.nn.Module):
    def __init__(self, cfg, cp, bug=None, tp=None):
        super().__init__()
        h, self.heads, self.cp, self.bug = cfg["hidden"], cfg["heads"], cp, bug
        # tensor parallelism over the heads (TP x CP), or none
        self.row_parallel, self.tp = tp is not None, tp or tpmod.TP()
        d, t = h // self.heads, self.tp.size
        # context parallelism splits the tokens, not the parameters; tensor parallelism splits
        # q/k/v by output rows (heads) and the output projection by input columns
        self.ln = torch.nn.LayerNorm(h)
        self.q, self.k, self.v = (torch.nn.Linear(h, h // t) for _ in range(3))
        self.proj = torch.nn.Linear(h // t, h)
        for lin in (self.q, self.k, self.v, self.proj):
            lin.weight.data, lin.bias.data = full(*lin.weight.shape), full(lin.bias.shape[0])
        self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, d, 2).float() / d)))

    def forward(self, x, position_ids, attention_mask):
        s, b, h = x.shape  # this rank's 2 chunks of the sequence, [tokens, batch, hidden]
        n, world, rank = self.heads // self.tp.size, self.cp.size, self.cp.rank  # n: local heads
        d, half = h // self.heads, s // 2
        chunks = zigzag_chunks(rank, world, self.bug)
        pos = _positions(position_ids, chunks, half)
        freqs = pos.float()[:, None] * self.inv_freq[None, :]
        emb = torch.cat((freqs, freqs), dim=-1)[:, None, None, :]
        cos, sin = emb.cos(), emb.sin()
        y = self.ln(x)
        q, k, v = (lin(y).reshape(s, b, n, d) for lin in (self.q, self.k, self.v))
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        # [s, b, n, d] -> [b, n, s, d], the layout of the sdpa kernels
        q, k, v = (t.permute(1, 2, 0, 3) for t in (q, k, v))
        if world > 1:  # the all-gather rotater: every rank's block at once, in rank order
            k_all, v_all = (tpmod._all_gather(t, 2, self.cp) for t in (k, v))
        else:
            k_all, v_all = k, v
        merger = _MergerLikeSDPA(self.bug)
        for i in range(world):
            src = (rank - i) % world  # step i: the block that started on rank src
            kb, vb = (t.narrow(2, src * s, s) for t in (k_all, v_all))
            # the causal mask's block: this rank's query rows, src's key columns, made additive
            rows = torch.cat([attention_mask.narrow(0, c * half, half) for c in chunks])
            cols = zigzag_chunks(src, world)
            block = torch.cat([rows.narrow(1, c * half, half) for c in cols], 1)
            mask = torch.zeros(s, s).masked_fill(block, -10000.0)
            out_b, lse_b = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(
                q, kb, vb, attn_mask=mask, scale=1.0 / math.sqrt(d))
            merger.step(out_b, lse_b)
        ctx = merger.out.permute(2, 0, 1, 3).reshape(s, b, n * d)
        return residual_projection(x, ctx, self.proj, self.tp if self.row_parallel else None)


class _Net(torch.nn.Module):
    def __init__(self, cfg, cp, bug, tp=None):
        super().__init__()
        self.layer = RingLayer(cfg, cp, bug, tp)

    def forward(self, hidden, position_ids, attention_mask):
        return (self.layer(hidden, position_ids, attention_mask),)


class RingCP(Program):
    """Ring attention over the whole world: hidden states split zig-zag along the sequence
    (relation: S's sequence is the concat of every rank's first half in rank order, then every
    rank's second half in reverse rank order), position ids and the causal mask replicated."""
    plan = ("context parallelism: ring attention (lse merge of torch's _SDPAMerger), zig-zag "
            "sequence split (scripts/capture/gg_capture/models/ring_cp.py)")

    def __init__(self, bug=None, name=None, seq=16):
        self.name = name or "ring_cp_zigzag"
        self.bug = bug
        self.config = {"hidden": 32, "heads": 4, "seq": seq, "batch": 2, "layers": 1}
        if bug:
            self.config["bug"] = bug

    def build(self, tp):
        return _Net(self.config, tp, self.bug)

    def data(self, tp):
        c = self.config
        g = torch.Generator().manual_seed(1)
        hidden = torch.randn(c["seq"], c["batch"], c["hidden"], generator=g)
        seq = c["seq"]
        return {"hidden": zigzag_shard(hidden, 0, tp.rank, tp.size),
                "position_ids": torch.arange(seq),
                "attention_mask": torch.ones(seq, seq, dtype=torch.bool).triu(1)}

    def data_placement(self, name):
        return {"hidden": ("zigzag", 0)}.get(name, ("replicate",))

    def output_placements(self):
        return [("zigzag", 0)]


class RingTPCP(TPxCPMesh, RingCP):
    """TP x CP with ring attention: the heads split over the TP group (column-parallel q/k/v,
    row-parallel output projection all-reduced over TP), the sequence split zig-zag over the CP
    group, each rank's ring over its CP group (its keys and values all-gathered over CP only);
    ranks on a cp x tp mesh (tp fastest): at 2 ranks TP 2 alone, at 4 CP 2 x TP 2."""
    plan = ("TP x CP: attention heads over TP (column-parallel q/k/v, row-parallel output), ring "
            "attention over CP (lse merge of torch's _SDPAMerger), zig-zag sequence split "
            "(scripts/capture/gg_capture/models/ring_cp.py)")
    degrees = (2, 4)

    def __init__(self, bug=None, name=None, tp_size=2, seq=8):
        super().__init__(bug=bug, name=name or f"ring_tp{tp_size}_cp_zigzag", seq=seq)
        self._init_mesh(tp_size)

    def _net(self, cp, tp):
        return _Net(self.config, cp, self.bug, tp)

    def sequence_splits(self):
        """The hidden states zig-zag along dim 0 (the causal mask is replicated)."""
        return {"hidden": ("zigzag", 0)}
