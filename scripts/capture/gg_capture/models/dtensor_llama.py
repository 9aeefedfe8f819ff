"""A Llama-like model parallelized with PyTorch DTensor's parallelize_module (torchtitan's plan).

The model is plain torch.nn (torchtitan's layout: tok_embeddings, layers.N.{attention_norm,
attention.{wq,wk,wv,wo}, ffn_norm, feed_forward.{w1,w2,w3}}, norm, output; batch-first
[batch, seq, dim]). The sequential program runs it as written; a distributed rank runs it after
torch.distributed.tensor.parallel.parallelize_module with torchtitan's plan (apply_tp in
torchtitan/models/llama3/infra/parallelize.py):

  tok_embeddings      RowwiseParallel(input_layouts=Replicate())   vocabulary-parallel embedding
  attention.wq/wk/wv  ColwiseParallel()                            heads sharded
  attention.wo        RowwiseParallel()                            partial sums all-reduced
  feed_forward.w1/w3  ColwiseParallel(),  w2 RowwiseParallel()
  output              ColwiseParallel(output_layouts=Shard(-1), use_local_output=False)
                      + loss_parallel(): vocabulary-parallel cross entropy
and, with sequence parallelism (sp=True), SequenceParallel() norms on sequence shards, the
embedding and the row-parallel layers' outputs reduce-scattered to Shard(1), and
PrepareModuleInput all-gathering the sequence before attention and the MLP.

Nothing here records a sharding by hand: trace.py reads every parameter's DTensor placements.
"""
import contextlib
import math

import torch
import torch.nn.functional as F

from .base import Program


class RMSNorm(torch.nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = torch.nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class Attention(torch.nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.head_dim = dim // heads
        self.wq = torch.nn.Linear(dim, dim, bias=False)
        self.wk = torch.nn.Linear(dim, dim, bias=False)
        self.wv = torch.nn.Linear(dim, dim, bias=False)
        self.wo = torch.nn.Linear(dim, dim, bias=False)

    def forward(self, x, cos, sin, mask):
        b, s, _ = x.shape
        # -1 heads: under ColwiseParallel each rank holds heads / world of them (as torchtitan's
        # Attention views its projections)
        q, k, v = (w(x).view(b, s, -1, self.head_dim).transpose(1, 2)
                   for w in (self.wq, self.wk, self.wv))
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.head_dim)
        probs = F.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)
        out = torch.matmul(probs, v).transpose(1, 2).reshape(b, s, -1)
        return self.wo(out)


class FeedForward(torch.nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.w1 = torch.nn.Linear(dim, hidden, bias=False)
        self.w2 = torch.nn.Linear(hidden, dim, bias=False)
        self.w3 = torch.nn.Linear(dim, hidden, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(torch.nn.Module):
    def __init__(self, dim, heads, hidden):
        super().__init__()
        self.attention_norm = RMSNorm(dim)
        self.attention = Attention(dim, heads)
        self.ffn_norm = RMSNorm(dim)
        self.feed_forward = FeedForward(dim, hidden)

    def forward(self, x, cos, sin, mask):
        h = x + self.attention(self.attention_norm(x), cos, sin, mask)
        return h + self.feed_forward(self.ffn_norm(h))


class Llama(torch.nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.tok_embeddings = torch.nn.Embedding(cfg["vocab"], cfg["dim"])
        self.layers = torch.nn.ModuleList(
            Block(cfg["dim"], cfg["heads"], cfg["ffn"]) for _ in range(cfg["layers"]))
        self.norm = RMSNorm(cfg["dim"])
        self.output = torch.nn.Linear(cfg["dim"], cfg["vocab"], bias=False)
        # rotary tables as buffers (replicated inputs of the captured graph)
        head_dim = cfg["dim"] // cfg["heads"]
        inv_freq = 1.0 / (10000.0 ** (torch.arange(0, head_dim, 2).float() / head_dim))
        angles = torch.outer(torch.arange(cfg["seq"]).float(), inv_freq)
        angles = torch.cat((angles, angles), dim=-1)
        self.register_buffer("rope_cos", angles.cos(), persistent=False)
        self.register_buffer("rope_sin", angles.sin(), persistent=False)

    def forward(self, tokens, attention_mask, labels):
        # attention_mask: True above the diagonal (causal), an input as in the other corpus models
        mask = attention_mask
        h = self.tok_embeddings(tokens)
        for layer in self.layers:
            h = layer(h, self.rope_cos, self.rope_sin, mask)
        logits = self.output(self.norm(h))
        # a DTensor Shard(-1) under the plan: cross_entropy inside loss_parallel() (the caller's
        # context) is the vocabulary-parallel cross entropy
        return (F.cross_entropy(logits.flatten(0, 1), labels.flatten(0, 1)),)


def tp_plan(model, sp):
    """torchtitan's apply_tp plan for this model (module FQN -> ParallelStyle)."""
    from torch.distributed.tensor import Replicate, Shard
    from torch.distributed.tensor.parallel import (ColwiseParallel, PrepareModuleInput,
                                                   RowwiseParallel, SequenceParallel)
    seq = Shard(1)
    plan = {
        "tok_embeddings": RowwiseParallel(input_layouts=Replicate(),
                                          output_layouts=seq if sp else Replicate()),
        "output": ColwiseParallel(input_layouts=seq if sp else Replicate(),
                                  output_layouts=Shard(-1), use_local_output=False),
    }
    if sp:
        plan["norm"] = SequenceParallel()
    for i in range(len(model.layers)):
        p = f"layers.{i}."
        plan.update({
            p + "attention.wq": ColwiseParallel(),
            p + "attention.wk": ColwiseParallel(),
            p + "attention.wv": ColwiseParallel(),
            p + "attention.wo": RowwiseParallel(output_layouts=seq if sp else Replicate()),
            p + "feed_forward.w1": ColwiseParallel(),
            p + "feed_forward.w2": RowwiseParallel(output_layouts=seq if sp else Replicate()),
            p + "feed_forward.w3": ColwiseParallel(),
        })
        if sp:
            plan.update({
                p + "attention_norm": SequenceParallel(),
                p + "attention": PrepareModuleInput(
                    input_layouts=(seq, None, None, None),
                    desired_input_layouts=(Replicate(), None, None, None)),
                p + "ffn_norm": SequenceParallel(),
                p + "feed_forward": PrepareModuleInput(input_layouts=(seq,),
                                                       desired_input_layouts=(Replicate(),)),
            })
    return plan


class DTensorLlama(Program):
    """The program: build(tp) gives the plain model (tp.size == 1) or the parallelized one."""
    dtensor = True  # trace.py captures it with DTensor parameters (see trace._trace_dtensor)

    def __init__(self, sp=False, layers=1):
        self.sp = sp
        self.name = "dtensor_llama" + ("_sp" if sp else "")
        self.plan = ("torch.distributed.tensor.parallel.parallelize_module, torchtitan's Llama plan"
                     + (" with SequenceParallel norms" if sp else "")
                     + ", loss_parallel cross entropy (scripts/capture/gg_capture/models/"
                     "dtensor_llama.py)")
        self.config = {"vocab": 64, "dim": 32, "heads": 4, "ffn": 64, "seq": 8, "batch": 1,
                       "layers": layers}

    def build(self, tp):
        model = Llama(self.config)
        if tp.size == 1:
            return model
        from torch.distributed.tensor.parallel import parallelize_module
        return parallelize_module(model, tp.mesh, tp_plan(model, self.sp))

    def loss_context(self, tp):
        """The context the forward and the backward run in: DTensor's vocabulary-parallel cross
        entropy for the Shard(-1) logits (loss_parallel must also cover the backward)."""
        if tp.size == 1:
            return contextlib.nullcontext()
        from torch.distributed.tensor.parallel import loss_parallel
        return loss_parallel()

    def data(self, tp):
        c = self.config
        g = torch.Generator().manual_seed(1)
        tokens = torch.randint(0, c["vocab"], (c["batch"], c["seq"]), generator=g)
        labels = torch.randint(0, c["vocab"], (c["batch"], c["seq"]), generator=g)
        mask = torch.ones(c["seq"], c["seq"], dtype=torch.bool).triu(1)
        return {"tokens": tokens, "attention_mask": mask, "labels": labels}
