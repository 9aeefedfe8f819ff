"""Megatron-style tensor-parallel building blocks that record their sharding.

Every collective is a torch.distributed._functional_collectives call inside a custom
autograd.Function (forward and backward), as Megatron-LM's tensor_parallel/mappings.py does, so
make_fx records _c10d_functional nodes in the forward and the backward graph. With one rank
(`tp.size == 1`) every mapping is the identity: the sequential model has no collectives.

Parameters carry their placement in `param.gg_placement` (read by spec.py):
  ("replicate",)                   every rank holds the whole S parameter
  ("shard", d)                     S == concat(d, rank 0's, rank 1's, ...)
  ("fused", d, [n0, n1, ...])      S is the concatenation along d of sections of S-sizes n_k
                                   (fused QKV, gate+up), each section sharded over the ranks and
                                   every rank holding [its piece of section 0; of section 1; ...]
  ("grouped", d, n)                S is n equal pieces along d (kv heads) that may not be split:
                                   with at most n ranks a shard, with more (world a multiple of
                                   n) piece r * n / world on rank r, every piece replicated on
                                   world / n consecutive ranks (GQA with more ranks than kv heads)
  ("grouped-partial", d, n)        the gradient of a "grouped" parameter: the shards' sum over the
                                   replicas of each piece (each replica saw its own query heads)
"""
import dataclasses

import torch
import torch.distributed._functional_collectives as fc
import torch.nn.functional as F  # noqa: F401


@dataclasses.dataclass
class TP:
    """The tensor-parallel group of one captured rank (size 1: the sequential program)."""
    size: int = 1
    rank: int = 0
    group: object = None


def place(param, *placement):
    param.gg_placement = tuple(placement)
    return param


def placement(param):
    return getattr(param, "gg_placement", ("replicate",))


def gradient_placement(param):
    """The placement of a parameter's gradient as the joint capture returns it: a
    sequence-parallel parameter's is all-reduced (replicated), a grouped one's is partial over
    each piece's replicas, the others are placed like the parameter."""
    if getattr(param, "gg_sequence_parallel", False):
        return ("replicate",)
    place = placement(param)
    return ("grouped-partial", *place[1:]) if place[0] == "grouped" else place


# ---- mappings (Megatron-LM tensor_parallel/mappings.py, written with functional collectives) ---

def _all_reduce(x, tp):
    return fc.all_reduce(x, "sum", tp.group)


def _all_gather(x, dim, tp):  # torch 2.13's name (all_gather_tensor: a warning alias); same op
    return getattr(fc, "all_gather_single", fc.all_gather_tensor)(x.contiguous(), dim, tp.group)


def _reduce_scatter(x, dim, tp):  # as above: reduce_scatter_tensor before 2.13
    return getattr(fc, "reduce_scatter_single", fc.reduce_scatter_tensor)(x.contiguous(), "sum", dim, tp.group)


def _split(x, dim, tp):
    """This rank's chunk, as a slice (Megatron-LM's _split_along_first_dim), not split+getitem."""
    n = x.shape[dim] // tp.size
    return x.narrow(dim, tp.rank * n, n).contiguous()


class _CopyToTP(torch.autograd.Function):
    """Identity forward, all-reduce of the input gradient backward (column-parallel input)."""
    @staticmethod
    def forward(ctx, x, tp):
        ctx.tp = tp
        return x

    @staticmethod
    def backward(ctx, g):
        return _all_reduce(g, ctx.tp), None


class _ReduceFromTP(torch.autograd.Function):
    """All-reduce forward, identity backward (row-parallel output)."""
    @staticmethod
    def forward(ctx, x, tp):
        return _all_reduce(x, tp)

    @staticmethod
    def backward(ctx, g):
        return g, None


class _GatherFromSP(torch.autograd.Function):
    """All-gather along the sequence forward, reduce-scatter backward (SP -> column-parallel)."""
    @staticmethod
    def forward(ctx, x, dim, tp):
        ctx.dim, ctx.tp = dim, tp
        return _all_gather(x, dim, tp)

    @staticmethod
    def backward(ctx, g):
        return _reduce_scatter(g, ctx.dim, ctx.tp), None, None


class _ReduceScatterToSP(torch.autograd.Function):
    """Reduce-scatter along the sequence forward, all-gather backward (row-parallel -> SP)."""
    @staticmethod
    def forward(ctx, x, dim, tp):
        ctx.dim, ctx.tp = dim, tp
        return _reduce_scatter(x, dim, tp)

    @staticmethod
    def backward(ctx, g):
        return _all_gather(g, ctx.dim, ctx.tp), None, None


def copy_to_tp(x, tp):
    return x if tp.size == 1 else _CopyToTP.apply(x, tp)


def reduce_from_tp(x, tp):
    return x if tp.size == 1 else _ReduceFromTP.apply(x, tp)


def gather_from_sp(x, dim, tp):
    return x if tp.size == 1 else _GatherFromSP.apply(x, dim, tp)


def reduce_scatter_to_sp(x, dim, tp):
    return x if tp.size == 1 else _ReduceScatterToSP.apply(x, dim, tp)


def all_reduce_grad(g, tp):
    """All-reduce of a gradient (finalize_model_grads for sequence-parallel parameters)."""
    return g if tp.size == 1 else fc.all_reduce(g, "sum", tp.group)


# ---- sharding helpers: rank r's piece of a full (sequential) tensor --------------------------

def shard(full, dim, tp):
    return full.chunk(tp.size, dim)[tp.rank].clone()


def grouped_shard(full, dim, pieces, tp):
    """Rank r's part of `full` cut into `pieces` indivisible pieces along dim: a shard when there
    are at least as many pieces as ranks, else piece r * pieces / world (replicated)."""
    if tp.size <= pieces:
        if pieces % tp.size:
            raise ValueError(f"tp: {pieces} pieces do not split over {tp.size} ranks")
        return shard(full, dim, tp)
    if tp.size % pieces:
        raise ValueError(f"tp: {tp.size} ranks are not a multiple of {pieces} pieces")
    return full.chunk(pieces, dim)[tp.rank * pieces // tp.size].clone()


def fused_shard(full, dim, sizes, tp):
    sections = torch.split(full, sizes, dim)
    return torch.cat([shard(s, dim, tp) for s in sections], dim)


# ---- layers ---------------------------------------------------------------------------------

class ColumnParallelLinear(torch.nn.Module):
    """y = x W^T + b with W split along its output rows; input replicated or sequence-sharded.

    full_weight/full_bias: the S parameters; fused: S section sizes for fused projections;
    pieces: the output rows are that many indivisible pieces (kv heads: grouped_shard)."""

    def __init__(self, full_weight, full_bias, tp, sequence_parallel=False, seq_dim=0,
                 fused=None, gather_output=False, pieces=None):
        super().__init__()
        self.tp, self.sp, self.seq_dim, self.gather_output = tp, sequence_parallel, seq_dim, gather_output
        if fused:
            cut, how = (lambda t: fused_shard(t, 0, fused, tp)), ("fused", 0, list(fused))
        elif pieces:
            cut, how = (lambda t: grouped_shard(t, 0, pieces, tp)), ("grouped", 0, pieces)
        else:
            cut, how = (lambda t: shard(t, 0, tp)), ("shard", 0)
        self.weight = place(torch.nn.Parameter(cut(full_weight)), *how)
        self.bias = None if full_bias is None else place(torch.nn.Parameter(cut(full_bias)), *how)

    def forward(self, x):
        x = gather_from_sp(x, self.seq_dim, self.tp) if self.sp else copy_to_tp(x, self.tp)
        y = F.linear(x, self.weight, self.bias)
        if self.gather_output and self.tp.size > 1:
            y = _GatherFromTP.apply(y, self.tp)
        return y


class RowParallelLinear(torch.nn.Module):
    """y = x W^T + b with W split along its input columns; output all-reduced (or reduce-scattered
    along the sequence under SP); the bias is added once, after the reduction."""

    def __init__(self, full_weight, full_bias, tp, sequence_parallel=False, seq_dim=0,
                 skip_reduce=False):
        super().__init__()
        self.tp, self.sp, self.seq_dim, self.skip_reduce = tp, sequence_parallel, seq_dim, skip_reduce
        self.weight = place(torch.nn.Parameter(shard(full_weight, 1, tp)), "shard", 1)
        self.bias = None if full_bias is None else torch.nn.Parameter(full_bias.clone())
        if self.bias is not None and sequence_parallel:
            self.bias.gg_sequence_parallel = True

    def forward(self, x):
        y = F.linear(x, self.weight)
        if not self.skip_reduce:  # skip_reduce: the missing all-reduce bug
            y = reduce_scatter_to_sp(y, self.seq_dim, self.tp) if self.sp else reduce_from_tp(y, self.tp)
        return y if self.bias is None else y + self.bias


class VocabParallelEmbedding(torch.nn.Module):
    """Megatron's vocabulary-parallel embedding: rows [start, end) on each rank, out-of-range ids
    masked to 0 and their rows zeroed, partial results all-reduced."""

    def __init__(self, full_weight, tp):
        super().__init__()
        self.tp = tp
        self.weight = place(torch.nn.Parameter(shard(full_weight, 0, tp)), "shard", 0)

    def forward(self, ids):
        if self.tp.size == 1:
            return F.embedding(ids, self.weight)
        per = self.weight.shape[0]
        start = self.tp.rank * per
        outside = (ids < start) | (ids >= start + per)
        local = (ids - start).masked_fill(outside, 0)
        out = F.embedding(local, self.weight).masked_fill(outside.unsqueeze(-1), 0.0)
        return reduce_from_tp(out, self.tp)


def vocab_parallel_cross_entropy(logits, target, tp, label_smoothing=0.0, local_vocab_bug=False,
                                 local_softmax_bug=False):
    """Mean cross entropy of vocabulary-sharded logits [..., V/tp], written as Megatron-LM's
    tensor_parallel/cross_entropy.py computes it (max, shift, target logit picked with
    logits_2d[arange, target], sum of exps), differentiated by autograd. With one rank the same
    code runs without masks and collectives, as Megatron-LM does at TP 1."""
    logits = logits.float()
    per = logits.shape[-1]
    with torch.no_grad():
        top = logits.max(dim=-1)[0]
        if tp.size > 1 and not local_softmax_bug:
            top = fc.all_reduce(top, "max", tp.group)
    shifted = logits - top.unsqueeze(-1)
    start = tp.rank * per  # Megatron-LM masks the targets at TP 1 too (vocabulary [0, V))
    outside = (target < start) | (target >= start + per)
    local = (target - start).masked_fill(outside, 0)
    rows = shifted.reshape(-1, per)
    picked = rows[torch.arange(0, rows.shape[0]), local.reshape(-1)].reshape(target.shape)
    picked = reduce_from_tp(picked.masked_fill(outside, 0.0), tp)
    sum_exp = shifted.exp().sum(-1)
    if not local_softmax_bug:  # the bug: softmax normalized over the local vocabulary shard only
        sum_exp = reduce_from_tp(sum_exp, tp)
    loss = sum_exp.log() - picked
    if label_smoothing > 0:
        vocab = per if local_vocab_bug else per * tp.size  # Megatron-LM #737 used the local size
        log_probs = shifted - sum_exp.log().unsqueeze(-1)
        mean_log_prob = reduce_from_tp(log_probs.sum(-1), tp) / vocab
        loss = (1.0 - label_smoothing) * loss - label_smoothing * mean_log_prob
    return loss.mean()


class _ScatterToSP(torch.autograd.Function):
    """Keep this rank's sequence chunk forward, all-gather backward (enter the SP region)."""
    @staticmethod
    def forward(ctx, x, dim, tp):
        ctx.dim, ctx.tp = dim, tp
        return _split(x, dim, tp)

    @staticmethod
    def backward(ctx, g):
        return _all_gather(g, ctx.dim, ctx.tp), None, None


def scatter_to_sp(x, dim, tp):
    return x if tp.size == 1 else _ScatterToSP.apply(x, dim, tp)


def sequence_parallel(param):
    """Mark a replicated parameter used on sequence shards: its gradient is partial per rank."""
    param.gg_sequence_parallel = True
    return param


class _GatherFromTP(torch.autograd.Function):
    """All-gather along the last dim forward, this rank's chunk backward (Megatron-LM's
    gather_from_tensor_model_parallel_region). The functional all-gather's own derivative is a
    reduce-scatter, which sums the ranks' identical gradients of the gathered (replicated) output:
    world times the gradient. Defined last so the source lines of the layers above stay put."""
    @staticmethod
    def forward(ctx, x, tp):
        ctx.tp = tp
        return _all_gather(x, x.dim() - 1, tp)

    @staticmethod
    def backward(ctx, g):
        return _split(g, g.dim() - 1, ctx.tp), None
