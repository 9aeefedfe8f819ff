"""A GPT in Megatron-LM's layout ([sequence, batch, hidden]) written with tp.py's layers:
vocabulary-parallel embedding and cross entropy, column-parallel Q, K, V, row-parallel
attention output and MLP, optional sequence parallelism (LayerNorms on sequence shards)."""
import math

import torch
import torch.nn.functional as F

from .. import tp as tpmod
from .base import Program, full


class Block(torch.nn.Module):
    def __init__(self, hidden, heads, ffn, tp, sp):
        super().__init__()
        self.tp, self.sp, self.heads, self.hidden = tp, sp, heads, hidden
        self.ln1 = torch.nn.LayerNorm(hidden)
        self.q, self.k, self.v = (
            tpmod.ColumnParallelLinear(full(hidden, hidden), full(hidden), tp, sequence_parallel=sp)
            for _ in range(3))
        self.proj = tpmod.RowParallelLinear(full(hidden, hidden), full(hidden), tp,
                                            sequence_parallel=sp)
        self.ln2 = torch.nn.LayerNorm(hidden)
        self.fc1 = tpmod.ColumnParallelLinear(full(ffn, hidden), full(ffn), tp, sequence_parallel=sp)
        self.fc2 = tpmod.RowParallelLinear(full(hidden, ffn), full(hidden), tp, sequence_parallel=sp)
        if sp:
            for p in (*self.ln1.parameters(), *self.ln2.parameters()):
                tpmod.sequence_parallel(p)

    def attention(self, x, mask):
        s, b, _ = x.shape
        seq = s * self.tp.size if self.sp else s
        local = self.hidden // self.tp.size
        heads = self.heads // self.tp.size
        q, k, v = self.q(x), self.k(x), self.v(x)
        d = local // heads
        # [s, b, n, d] -> [s, b * n, d] -> [b * n, s, d]: batched products as Megatron-LM's
        # CoreAttention writes them (bmm over merged batch*heads, not a broadcasting matmul)
        q, k, v = (t.reshape(seq, b * heads, d).transpose(0, 1) for t in (q, k, v))
        scores = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(d)
        probs = F.softmax(scores.masked_fill(mask, -10000.0), dim=-1)
        ctx = torch.bmm(probs, v).reshape(b, heads, seq, d).permute(2, 0, 1, 3).reshape(seq, b, local)
        return self.proj(ctx)

    def forward(self, x, mask):
        x = x + self.attention(self.ln1(x), mask)
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class GPT(torch.nn.Module):
    def __init__(self, cfg, tp, sp):
        super().__init__()
        self.tp, self.sp = tp, sp
        self.embed = tpmod.VocabParallelEmbedding(full(cfg["vocab"], cfg["hidden"]), tp)
        self.pos = torch.nn.Embedding(cfg["seq"], cfg["hidden"])
        self.layers = torch.nn.ModuleList(
            Block(cfg["hidden"], cfg["heads"], cfg["ffn"], tp, sp) for _ in range(cfg["layers"]))
        self.ln_f = torch.nn.LayerNorm(cfg["hidden"])
        if sp:
            tpmod.sequence_parallel(self.ln_f.weight)
            tpmod.sequence_parallel(self.ln_f.bias)
        self.head = tpmod.ColumnParallelLinear(full(cfg["vocab"], cfg["hidden"]), None, tp,
                                               sequence_parallel=sp)

    def forward(self, input_ids, position_ids, attention_mask, labels):
        x = self.embed(input_ids.t()) + self.pos(position_ids.t())  # [s, b, h]
        if self.sp:
            x = tpmod.scatter_to_sp(x, 0, self.tp)
        for layer in self.layers:
            x = layer(x, attention_mask)
        logits = self.head(self.ln_f(x))  # [s, b, v / tp]
        loss = tpmod.vocab_parallel_cross_entropy(logits, labels.t(), self.tp)
        return (loss,)


class MegatronGPT(Program):
    def __init__(self, layers=1, sp=False):
        self.name = "megatron_gpt" + ("_sp" if sp else "")
        self.sp = sp
        self.config = {"vocab": 64, "hidden": 32, "heads": 4, "ffn": 64, "seq": 8, "batch": 1,
                       "layers": layers}

    def build(self, tp):
        return GPT(self.config, tp, self.sp)

    def data(self, tp):
        c = self.config
        g = torch.Generator().manual_seed(1)
        ids = torch.randint(0, c["vocab"], (c["batch"], c["seq"]), generator=g)
        pos = torch.arange(c["seq"]).expand(c["batch"], c["seq"]).contiguous()
        mask = torch.ones(c["seq"], c["seq"], dtype=torch.bool).triu(1)
        labels = torch.randint(0, c["vocab"], (c["batch"], c["seq"]), generator=g)
        return {"input_ids": ids, "position_ids": pos, "attention_mask": mask, "labels": labels}
