"""DeepSpeed-Ulysses sequence parallelism ([sequence, batch, hidden], Megatron-DeepSpeed's layout)
on a small transformer layer: every rank holds one contiguous chunk of the sequence; around the
attention core two all-to-alls trade it for a group of heads (DeepSpeed's DistributedAttention:
queries, keys and values go from [s/p, b, n, d] to [s, b, n/p, d], heads scattered and the
sequence gathered; the context comes back the other way), so each rank attends over the whole
sequence with its heads. Every weight is replicated; its gradient is each rank's partial sum over
its tokens, all-reduced over the sequence-parallel group.

The loss is each rank's share of the whole sequence's mean cross entropy: the sum over its
tokens divided by the number of tokens of the whole sequence (the mean of its chunk divided by the
SP size, as DeepSpeed issue #5248 says a rank must back-propagate it), so the loss is partial over
the ranks and each rank's gradient its share of the gradient. Not on DeepSpeed itself: DeepSpeed
is not installed here, and neither megatron-core 0.19.2 (its all-to-all context parallelism needs
Transformer Engine) nor torchtitan 0.3.0 has Ulysses attention on the CPU; all_to_all below is
written after deepspeed/sequence/layer.py's single_all_to_all (DeepSpeed 0.14), reshapes and all.

Bugs (tests/bugs):
  a2a_heads_batch_mixed  DeepSpeed PR #5664: the all-to-all that scatters the sequence moves its
                         rank axis next to the sequence only ([p, s/p, b, ...] -> [s/p, p, b,
                         ...]) before merging it into the heads: with a batch of two or more the
                         reshape interleaves batch rows and head groups (the fix moves it next to
                         the heads: [s/p, b, p, ...]);
  chunk_mean_loss        DeepSpeed issue #5248: each rank back-propagates the mean loss of its
                         chunk (not divided by the SP size) and the gradients are summed over the
                         sequence ranks: the SP size times the gradient (and the ranks' losses
                         add up to SP times the loss).
"""

import torch
import torch.distributed._functional_collectives as fc
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from .. import tp as tpmod
from .base import Program, full

BUGS = ("a2a_heads_batch_mixed", "chunk_mean_loss")


def all_to_all(x, scatter_dim, gather_dim, sp, bug=None):
    """x [s, b, n, d] scattered along scatter_dim over the ranks of sp and gathered along
    gather_dim (2 and 0: heads out, sequence in; 0 and 2 the reverse), as DeepSpeed's
    single_all_to_all for the sequence-first layout: the chunks to send stacked on a leading rank
    axis, one equal-split all_to_all_single, the received rank axis merged into gather_dim."""
    p = sp.size
    shape = list(x.shape)
    shape[scatter_dim] //= p
    if scatter_dim < 2:  # [s, b, n/p, d] -> [p, s/p, b, n/p, d]: sequence chunks first
        send = x.reshape([p, shape[scatter_dim]] + shape[scatter_dim + 1:])
    else:  # [s/p, b, n, d] -> [s/p * b, p, n/p, d] -> [p, s/p * b, n/p, d]: head groups first
        send = x.reshape([-1, p, shape[scatter_dim]] + shape[scatter_dim + 1:]).transpose(0, 1)
    received = fc.all_to_all_single(send.contiguous(), None, None, sp.group)
    if scatter_dim < 2:  # [p, s/p, b, n/p, d]: chunk j holds head group j of my sequence chunk
        received = received.transpose(0, 1)  # [s/p, p, b, n/p, d]
        if bug != "a2a_heads_batch_mixed":
            received = received.transpose(1, 2)  # [s/p, b, p, n/p, d] (PR #5664)
    shape[gather_dim] *= p
    return received.contiguous().reshape(shape)


class _SeqAllToAll(torch.autograd.Function):
    """all_to_all forward; backward the all_to_all the other way (DeepSpeed's _SeqAllToAll)."""

    @staticmethod
    def forward(ctx, x, scatter_dim, gather_dim, sp, bug):
        ctx.dims, ctx.sp, ctx.bug = (scatter_dim, gather_dim), sp, bug
        return all_to_all(x, scatter_dim, gather_dim, sp, bug)

    @staticmethod
    def backward(ctx, g):
        scatter_dim, gather_dim = ctx.dims
        return all_to_all(g, gather_dim, scatter_dim, ctx.sp, ctx.bug), None, None, None, None


def seq_all_to_all(x, scatter_dim, gather_dim, sp, bug=None):
    return x if sp.size == 1 else _SeqAllToAll.apply(x, scatter_dim, gather_dim, sp, bug)


class UlyssesLayer(torch.nn.Module):
    """LayerNorm, Ulysses attention (q, k, v projections on the sequence chunk, all-to-all to
    heads, causal attention over the whole sequence, all-to-all back, output projection), a
    residual, then a GELU MLP with its residual; all weights replicated."""

    def __init__(self, cfg, sp, bug=None):
        super().__init__()
        h, self.heads, self.sp, self.bug = cfg["hidden"], cfg["heads"], sp, bug
        self.ln1, self.ln2 = torch.nn.LayerNorm(h), torch.nn.LayerNorm(h)
        self.q, self.k, self.v, self.proj = (torch.nn.Linear(h, h) for _ in range(4))
        self.fc1, self.fc2 = torch.nn.Linear(h, cfg["ffn"]), torch.nn.Linear(cfg["ffn"], h)
        for lin in (self.q, self.k, self.v, self.proj, self.fc1, self.fc2):
            lin.weight.data, lin.bias.data = full(*lin.weight.shape), full(lin.out_features)

    def attention(self, x):
        s, b, h = x.shape
        n, d = self.heads, h // self.heads
        y = self.ln1(x)
        q, k, v = (seq_all_to_all(lin(y).reshape(s, b, n, d), 2, 0, self.sp, self.bug)
                   for lin in (self.q, self.k, self.v))  # [S, b, n/p, d]
        # the local attention DistributedAttention wraps: causal SDPA over the whole sequence,
        # [b, n/p, S, d], on its math backend (matmul, softmax, matmul, and their backward; the
        # CPU's fused kernel has an opaque backward)
        with sdpa_kernel([SDPBackend.MATH]):
            ctx = F.scaled_dot_product_attention(*(t.permute(1, 2, 0, 3) for t in (q, k, v)),
                                                 is_causal=True)
        ctx = seq_all_to_all(ctx.permute(2, 0, 1, 3).contiguous(), 0, 2, self.sp, self.bug)
        return self.proj(ctx.reshape(s, b, h))  # ctx [s, b, n, d]

    def forward(self, x):
        x = x + self.attention(x)
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class _Net(torch.nn.Module):
    def __init__(self, cfg, sp, bug):
        super().__init__()
        self.sp, self.bug = sp, bug
        self.layer = UlyssesLayer(cfg, sp, bug)
        self.ln_f = torch.nn.LayerNorm(cfg["hidden"])
        self.head = torch.nn.Linear(cfg["hidden"], cfg["vocab"], bias=False)
        self.head.weight.data = full(cfg["vocab"], cfg["hidden"])

    def forward(self, hidden, labels):
        logits = self.head(self.ln_f(self.layer(hidden)))  # [s, b, V]
        # the sum over this rank's tokens divided by the whole sequence's token count (at SP 1:
        # the mean); the bug divides by this rank's own count (its chunk's mean)
        tokens = labels.numel() * (1 if self.bug == "chunk_mean_loss" else self.sp.size)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1),
                               reduction="sum") / tokens
        return (loss,)


class Ulysses(Program):
    """Ulysses sequence parallelism over the whole world: hidden states and labels sharded along
    the sequence (each rank attends over the whole sequence, causally, with its heads); the
    weights replicated, their gradients all-reduced (the sequence_parallel mark); the loss
    partial."""
    plan = ("DeepSpeed-Ulysses sequence parallelism: sequence chunks per rank, all-to-all to heads "
            "around attention (scripts/capture/gg_capture/models/ulysses.py)")

    def __init__(self, bug=None, name=None, batch=2):
        if bug is not None and bug not in BUGS:
            raise ValueError(f"ulysses: bug {bug!r}: bugs {BUGS}")
        self.name = name or "ulysses"
        self.bug = bug
        self.config = {"hidden": 32, "heads": 4, "ffn": 64, "vocab": 64, "seq": 8,
                       "batch": batch, "layers": 1}
        if bug:
            self.config["bug"] = bug

    def build(self, tp):
        net = _Net(self.config, tp, self.bug)
        for p in net.parameters():  # a partial gradient per sequence chunk
            tpmod.sequence_parallel(p)
        return net

    def data(self, tp):
        c = self.config
        g = torch.Generator().manual_seed(1)
        seq, local = c["seq"], c["seq"] // tp.size
        hidden = torch.randn(seq, c["batch"], c["hidden"], generator=g)
        labels = torch.randint(0, c["vocab"], (seq, c["batch"]), generator=g)
        return {"hidden": tpmod.shard(hidden, 0, tp) if tp.size > 1 else hidden,
                "labels": tpmod.shard(labels, 0, tp) if tp.size > 1 else labels}

    def data_placement(self, name):
        return {"hidden": ("shard", 0), "labels": ("shard", 0)}.get(name, ("replicate",))

    def output_placements(self):
        return [("partial",)]
