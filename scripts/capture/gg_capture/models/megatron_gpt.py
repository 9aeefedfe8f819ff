"""A GPT in Megatron-LM's layout ([sequence, batch, hidden]) written with tp.py's layers:
vocabulary-parallel embedding and cross entropy, column-parallel Q, K, V, row-parallel
attention output and MLP, optional sequence parallelism (LayerNorms on sequence shards)."""
import math

import torch
import torch.nn.functional as F

from .. import fakedist, tp as tpmod
from .base import Program, full


class SwitchMLP(torch.nn.Module):
    """Megatron-LM's SwitchMLP (top-1 mixture of experts): a replicated router (torch.nn.Linear)
    and experts that are tensor-parallel MLPs. Every expert runs on every token and the top-1 mask
    picks one (dense, so the graph has no data-dependent shapes; the result is the same). Under
    sequence parallelism each rank's router sees its sequence shard only, so its weight gradient
    is partial and must be all-reduced over the TP group (the sequence_parallel mark, PR #619);
    issue #599: it was not, and the routers of one TP group drifted apart."""

    def __init__(self, hidden, ffn, experts, tp, sp, bug=None):
        super().__init__()
        self.tp, self.sp = tp, sp
        self.router = torch.nn.Linear(hidden, experts)
        self.router.weight.data, self.router.bias.data = full(experts, hidden), full(experts)
        if sp and bug != "moe_router_not_synced":
            for p in self.router.parameters():
                tpmod.sequence_parallel(p)
        self.fc1 = torch.nn.ModuleList(
            tpmod.ColumnParallelLinear(full(ffn, hidden), full(ffn), tp, sequence_parallel=sp)
            for _ in range(experts))
        self.fc2 = torch.nn.ModuleList(
            tpmod.RowParallelLinear(full(hidden, ffn), full(hidden), tp, sequence_parallel=sp)
            for _ in range(experts))

    def forward(self, x):
        probs = F.softmax(self.router(x), dim=-1)  # [s, b, experts]
        top = probs.max(dim=-1, keepdim=True)[0]
        gate = probs.masked_fill(probs < top, 0.0)  # top-1 probability, 0 for the other experts
        out = 0.0
        for g, fc1, fc2 in zip(gate.split(1, dim=-1), self.fc1, self.fc2):
            out = out + g * fc2(F.gelu(fc1(x)))
        return out


class Block(torch.nn.Module):
    def __init__(self, hidden, heads, ffn, tp, sp, bug=None, qk_norm=False, moe=0):
        super().__init__()
        self.tp, self.sp, self.heads, self.hidden, self.bug = tp, sp, heads, hidden, bug
        # QK-norm over the whole query width (as OLMo-2 / some Qwen variants); vLLM #3775
        self.q_norm = torch.nn.LayerNorm(hidden) if qk_norm else None
        self.ln1 = torch.nn.LayerNorm(hidden)
        self.q, self.k, self.v = (
            tpmod.ColumnParallelLinear(full(hidden, hidden), full(hidden), tp, sequence_parallel=sp)
            for _ in range(3))
        self.proj = tpmod.RowParallelLinear(full(hidden, hidden), full(hidden), tp,
                                            sequence_parallel=sp)
        self.ln2 = torch.nn.LayerNorm(hidden)
        self.moe = SwitchMLP(hidden, ffn, moe, tp, sp, bug) if moe else None
        if not moe:
            self.fc1 = tpmod.ColumnParallelLinear(full(ffn, hidden), full(ffn), tp,
                                                  sequence_parallel=sp)
            self.fc2 = tpmod.RowParallelLinear(full(hidden, ffn), full(hidden), tp,
                                               sequence_parallel=sp,
                                               skip_reduce=bug == "no_row_allreduce")
        if sp:
            for p in (*self.ln1.parameters(), *self.ln2.parameters()):
                tpmod.sequence_parallel(p)

    def attention(self, x, mask):
        s, b, _ = x.shape
        seq = s * self.tp.size if self.sp else s
        local = self.hidden // self.tp.size
        heads = self.heads // self.tp.size
        q, k, v = self.q(x), self.k(x), self.v(x)
        if self.q_norm is not None:
            if self.tp.size == 1:
                q = self.q_norm(q)
            elif self.bug == "qk_norm_local":
                # the bug: LayerNorm statistics over this rank's heads only (its slice of the width)
                nw = self.q_norm.weight.narrow(0, self.tp.rank * local, local)
                nb = self.q_norm.bias.narrow(0, self.tp.rank * local, local)
                q = F.layer_norm(q, (local,), nw, nb)
            else:  # gather the full query width, normalize, keep this rank's heads
                full_q = tpmod._all_gather(q, q.dim() - 1, self.tp)
                q = self.q_norm(full_q).narrow(-1, self.tp.rank * local, local)
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
        if self.moe is not None:
            return x + self.moe(self.ln2(x))
        y = self.fc2(F.gelu(self.fc1(self.ln2(x))))
        if self.bug == "double_allreduce":  # vLLM #49122: the MLP output reduced a second time
            y = tpmod.reduce_from_tp(y, self.tp)
        return x + y


class GPT(torch.nn.Module):
    def __init__(self, cfg, tp, sp, bug=None, qk_norm=False, label_smoothing=0.0, micro_batches=1,
                 moe=0, tie_embeddings=False):
        super().__init__()
        self.tp, self.sp, self.bug = tp, sp, bug
        self.label_smoothing, self.micro_batches = label_smoothing, micro_batches
        # tied input/output embeddings: a replicated table whose rows the head reads per vocab
        # shard (the head's gradient must be all-reduced over TP, see head_weight)
        self.tie = tie_embeddings
        if tie_embeddings:
            self.embed = torch.nn.Embedding(cfg["vocab"], cfg["hidden"])
            self.embed.weight.data = full(cfg["vocab"], cfg["hidden"])
        else:
            self.embed = tpmod.VocabParallelEmbedding(full(cfg["vocab"], cfg["hidden"]), tp)
        self.pos = torch.nn.Embedding(cfg["seq"], cfg["hidden"])
        self.layers = torch.nn.ModuleList(
            Block(cfg["hidden"], cfg["heads"], cfg["ffn"], tp, sp, bug, qk_norm, moe)
            for _ in range(cfg["layers"]))
        self.ln_f = torch.nn.LayerNorm(cfg["hidden"])
        if sp:
            tpmod.sequence_parallel(self.ln_f.weight)
            tpmod.sequence_parallel(self.ln_f.bias)
        self.head = None if tie_embeddings else tpmod.ColumnParallelLinear(
            full(cfg["vocab"], cfg["hidden"]), None, tp, sequence_parallel=sp)

    def forward(self, input_ids, position_ids, attention_mask, labels):
        if self.micro_batches == 1:
            return (self.loss(input_ids, position_ids, attention_mask, labels),)
        # gradient accumulation: the mean of the micro-batch losses, each scaled by 1/n once
        n, total = self.micro_batches, 0.0
        for ids, pos, lab in zip(input_ids.chunk(n), position_ids.chunk(n), labels.chunk(n)):
            loss = self.loss(ids, pos, attention_mask, lab) / n
            if self.bug == "grad_accum_double_scale" and self.tp.size > 1:
                loss = loss / n  # DeepSpeed #8152 / torchtitan #1733: scaled a second time
            total = total + loss
        return (total,)

    def loss(self, input_ids, position_ids, attention_mask, labels):
        x = self.embed(input_ids.t()) + self.pos(position_ids.t())  # [s, b, h]
        if self.sp:
            x = tpmod.scatter_to_sp(x, 0, self.tp)
        for layer in self.layers:
            x = layer(x, attention_mask)
        logits = self.head(self.ln_f(x)) if self.head else self.tied_head(self.ln_f(x))  # [s, b, v / tp]
        return tpmod.vocab_parallel_cross_entropy(
            logits, labels.t(), self.tp, label_smoothing=self.label_smoothing,
            local_vocab_bug=self.bug == "label_smoothing_local_vocab",
            local_softmax_bug=self.bug == "local_softmax")


    def tied_head(self, x):
        """Logits of this rank's vocabulary shard from the shared embedding table. Only the shard's
        rows get a gradient here, so that gradient is all-reduced over TP (copy_to_tp's backward)
        before it joins the lookup's, keeping the replicated table identical on every rank; the bug
        (Megatron-LM #299/#844 pattern: the tied copy's gradient not synchronised) leaves it out."""
        w = self.embed.weight
        if self.bug != "tied_embedding_grad_not_synced":
            w = tpmod.copy_to_tp(w, self.tp)
        per = w.shape[0] // self.tp.size
        # the input as a column-parallel layer takes it (its gradient is partial per vocab shard)
        return F.linear(tpmod.copy_to_tp(x, self.tp), w.split(per, 0)[self.tp.rank])


class MegatronGPT(Program):
    def __init__(self, layers=1, sp=False, bug=None, name=None, **options):
        self.name = name or "megatron_gpt" + ("_sp" if sp else "")
        self.sp, self.bug, self.options = sp, bug, options
        self.spec_group = list(range(options["tp_size"])) if options.get("tp_size") else None
        self.config = {"vocab": 64, "hidden": 32, "heads": 4, "ffn": 64, "seq": 8,
                       "batch": options.get("micro_batches", 1), "layers": layers, **options}
        if bug:
            self.config["bug"] = bug

    def build(self, tp):
        opts = {k: v for k, v in self.options.items() if k != "tp_size"}
        return GPT(self.config, tp, self.sp, self.bug, **opts)

    def make_tp(self, world, rank, world_group):
        tp_size = self.options.get("tp_size")
        if not tp_size:
            return tpmod.TP(world, rank, world_group)
        # TP groups of tp_size consecutive ranks inside a TP x DP world
        mine, _ = fakedist.new_subgroups(world, tp_size)
        t = tpmod.TP(tp_size, rank % tp_size, mine)
        if self.bug == "wrong_group":  # reductions over the whole TP x DP world instead of TP
            t.group = world_group
        return t

    def finalize_grads(self, names, params, grads, tp):
        if self.bug == "sp_grads_not_reduced":  # Megatron-LM #1446: partial LayerNorm gradients
            return grads
        from ..trace import default_finalize_grads
        return default_finalize_grads(names, params, grads, tp)

    def data(self, tp):
        c = self.config
        g = torch.Generator().manual_seed(1)
        ids = torch.randint(0, c["vocab"], (c["batch"], c["seq"]), generator=g)
        pos = torch.arange(c["seq"]).expand(c["batch"], c["seq"]).contiguous()
        mask = torch.ones(c["seq"], c["seq"], dtype=torch.bool).triu(1)
        labels = torch.randint(0, c["vocab"], (c["batch"], c["seq"]), generator=g)
        return {"input_ids": ids, "position_ids": pos, "attention_mask": mask, "labels": labels}
