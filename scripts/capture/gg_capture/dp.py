"""Data-parallel programs: DDP-style gradient all-reduce, FSDP-style sharded parameters, and a
TP x DP device mesh, captured on the fake process group, one graph per rank.

S is the model on the whole batch: blocks x + fc2(gelu(fc1(ln(x)))), a linear head, and a
per-token squared error (mean over the output features) averaged over the valid tokens of the
whole batch (a boolean loss mask, as padding or ignored labels give).

D runs it on `dp` data-parallel replicas, each on its batch shard, the ranks laid out as a
dp x tp mesh (rank = replica * tp + tp rank; the TP group of a replica its `tp` consecutive
ranks, the DP group of a TP index the ranks holding it on every replica). Inside a replica the
blocks are tp.py's column- and row-parallel layers over its TP group. Two ways of holding the
parameters on the DP axis:

  - "ddp": every replica holds every parameter (Replicate on dp); each rank's loss is its valid
    tokens' summed loss divided by the global token count (the sum of every replica's count,
    all-reduced over DP first: Megatron-LM's and torchtitan's normalization), the replica's batch
    shard is cut into `m` micro-batches whose gradients accumulate, and the accumulated gradients
    are all-reduced (summed) over DP, as DDP's reducer or a training loop's explicit all_reduce
    does. The loss reported is the all-reduced sum of the ranks' losses.
  - "fsdp": each rank holds the rows of every parameter its DP index owns (Shard(0) on dp, as
    FSDP2's fully_shard does); before use the shards are all-gathered over DP, whose backward
    reduce-scatters the gradient (summed) to the shard; the loss is the rank's mean over its
    tokens (no mask) and the gradients are divided by the DP size (FSDP2's default gradient
    divide factor), written with funcol collectives (`all_gather_into_tensor`,
    `reduce_scatter_tensor`) on each parameter.

With impl="fsdp2" the "fsdp" style is torch's own FSDP2: `torch.distributed.fsdp.fully_shard`
on mesh["dp"] applied to every block and then to the root, as torchtitan applies it, after
parallelize_module on mesh["tp"] with TP. The loss is divided by the global token count and
FSDP2's own gradient division is turned off with torchtitan's `disable_fsdp_gradient_division`
(set_gradient_divide_factor(1.0): a PREMUL_SUM(1) reduce-scatter), as torchtitan does; the bug
"fsdp2_division_left_on" leaves FSDP2's default (ReduceOp.AVG over DP) on. With average=True
the program is FSDP2's default use instead: each rank's loss its own token mean (no mask) and
FSDP2's averaging left on, which gives the global mean's gradients. What fully_shard
records (parameters as constants, flat buffers, in-place c10d collectives) is made a value graph
by gg_capture/fsdp2.py; a dim 0 that DP does not divide is padded by FSDP2, and so here.

With impl="simple_fsdp" the same two styles are torchtitan's own (0.3.0, PyPI):
`torchtitan.experiments.graph_trainer.simple_fsdp.data_parallel(model, mesh["dp"], mode)` with
mode "replicate" (DDP) or "fully_shard" (FSDP), SimpleFSDP's parametrization that makes each
parameter a DTensor on the DP mesh (Replicate or Shard(0)), redistributes it to Replicate before
use (FSDP: funcol all-gather) and hands autograd a Partial gradient, which DTensor reduces to the
parameter's placement (DDP: all-reduce, FSDP: reduce-scatter; a sum in both, so the loss is
divided by the global token count in both). With TP the model is first parallelized on
mesh["tp"] by PyTorch's parallelize_module (fc1 ColwiseParallel, fc2 RowwiseParallel), as
torchtitan does; under FSDP a TP-sharded dim 0 is then split over DP inside each TP shard
(SimpleFSDP's _StridedShard), which the spec states as an explicit concatenation. The model is
plain nn.Linear layers (PlainModel), S and D alike; the traced step wraps the local shards with
DTensor.from_local, as trace.py's DTensor captures do.

What each rank returns: fwd: the loss and its batch shard's output; joint: the loss and every
parameter's gradient (the DP-reduced one: replicated on dp for "ddp", the rank's shard for
"fsdp"). The spec (written here from the plan) states this with `mesh dp = D, tp = T` and a
placement per mesh axis.
"""
import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as fc
import torch.nn.functional as F

from . import fakedist, fxjson, trace
from . import tp as tpmod
from .models.base import full
from .pipeline import Block  # x + fc2(gelu(fc1(ln(x)))), tp.py's layers: the pipelines' block
from .pipeline import _rule, program_texts, trace_sequential  # TP placements; S and the files

STYLES = ("ddp", "fsdp")
IMPLS = ("funcol", "simple_fsdp", "fsdp2")
SIMPLE_MODES = {"ddp": "replicate", "fsdp": "fully_shard"}  # SimpleFSDP's data_parallel modes

BUGS = {
    # the gradients' all-reduce issued on the TP group instead of the DP group (a mesh axis
    # mixed up): TP-sharded gradients summed across different shards, DP replicas never reduced
    "grad_reduce_tp_axis",
    # each rank (and micro-batch) divides its summed loss by its own token count and the
    # gradients are averaged over DP and micro-batches: the mean of means, not the global mean
    "local_token_mean",
    # FSDP: the loss divided by the DP size before the backward on top of FSDP's own gradient
    # division by the DP size
    "grad_divided_twice",
    # fsdp2: the loss divided by the global token count but FSDP2's own gradient division (by
    # the DP size, ReduceOp.AVG) left on: torchtitan turns it off (disable_fsdp_gradient_division)
    "fsdp2_division_left_on",
}


class Model(torch.nn.Module):
    """Blocks, then a replicated linear head; forward gives (masked mean loss, output)."""

    def __init__(self, cfg, tp):
        super().__init__()
        self.layers = torch.nn.ModuleList(Block(cfg["hidden"], cfg["ffn"], tp)
                                          for _ in range(cfg["layers"]))
        self.head = torch.nn.Linear(cfg["hidden"], cfg["out"])
        self.head.weight.data = full(cfg["out"], cfg["hidden"])
        self.head.bias.data = full(cfg["out"])

    def output(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.head(x)

    def forward(self, x, target, mask=None, count=None):
        """`count`: the number of valid tokens to divide by (the global count, all-reduced by
        the caller), else this batch's."""
        out = self.output(x)
        total, local = token_loss(out, target, mask)
        return total / (local if count is None else count), out


class PlainBlock(torch.nn.Module):
    """Block with nn.Linear layers (what parallelize_module's styles take)."""

    def __init__(self, hidden, ffn, bias=True):
        super().__init__()
        self.ln = torch.nn.LayerNorm(hidden)
        self.fc1 = _linear(full(ffn, hidden), full(ffn) if bias else None)
        self.fc2 = _linear(full(hidden, ffn), full(hidden) if bias else None)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(self.ln(x))))


class PlainModel(Model):
    """Model with PlainBlocks: the same parameters and FQNs (without the blocks' biases when
    cfg["bias"] is false, as torchtitan's models have none)."""

    def __init__(self, cfg):
        torch.nn.Module.__init__(self)
        self.layers = torch.nn.ModuleList(PlainBlock(cfg["hidden"], cfg["ffn"], cfg["bias"])
                                          for _ in range(cfg["layers"]))
        self.head = _linear(full(cfg["out"], cfg["hidden"]), full(cfg["out"]))


def _linear(weight, bias):
    layer = torch.nn.Linear(weight.shape[1], weight.shape[0], bias=bias is not None)
    layer.weight.data = weight
    if bias is not None:
        layer.bias.data = bias
    return layer


def token_loss(out, target, mask):
    """(the summed loss of the valid tokens, their number as a float): each token's loss is the
    mean squared error over its output features; without a mask every token counts."""
    per_token = ((out - target) ** 2).mean(-1)
    if mask is None:
        return per_token.sum(), float(per_token.numel())
    return torch.where(mask, per_token, 0.0).sum(), mask.sum().to(per_token.dtype)


class DataParallelProgram:
    """A dp (x tp) data-parallel program of Model; see the module docstring."""

    def __init__(self, dp, tp=1, style="ddp", impl="funcol", m=1, layers=1, hidden=16, ffn=32,
                 out=8, batch=8, seq=4, bias=True, average=False, bug=None, name=None):
        if style not in STYLES or impl not in IMPLS:
            raise ValueError(f"dp: style {style!r}, impl {impl!r} (known: {', '.join(STYLES)}; "
                             f"{', '.join(IMPLS)})")
        if bug is not None and bug not in BUGS:
            raise ValueError(f"dp: bug {bug!r} (known: {', '.join(sorted(BUGS))})")
        if batch % (dp * m) or (style == "fsdp" and impl == "funcol" and (tp > 1 or m > 1)):
            raise ValueError("dp: the batch must split over the replicas and micro-batches; "
                             "funcol fsdp is written for TP 1 and one micro-batch")
        self.dp, self.tp, self.style, self.m, self.bug = dp, tp, style, m, bug
        self.impl, self.average = impl, average
        if average and (impl != "fsdp2" or bug is not None):
            raise ValueError("dp: average (FSDP2's default gradient averaging) is an option of "
                             "the correct fsdp2 programs")
        if not bias and impl == "funcol":
            raise ValueError("dp: bias=False is an option of the simple_fsdp and fsdp2 programs")
        if impl == "fsdp2" and (style != "fsdp" or m > 1):
            raise ValueError("dp: fsdp2 (fully_shard) is written for style fsdp, one micro-batch")
        self.cfg = {"layers": layers, "hidden": hidden, "ffn": ffn, "out": out, "batch": batch,
                    "seq": seq, "bias": bias}
        self.name = name or f"{style}{dp}" + (f"_tp{tp}" if tp > 1 else "")
        self.masked = style == "ddp" or (impl != "funcol" and not average)
        what = ("DDP-style gradient all-reduce over DP, loss / global token count"
                if style == "ddp" else
                "FSDP-style Shard(0) parameters all-gathered over DP, gradients reduce-scattered "
                "and divided by DP")
        if impl == "fsdp2" and average:
            what = ("torch.distributed.fsdp.fully_shard (FSDP2) per block and the root on "
                    "mesh['dp'], each rank's loss its own token mean, FSDP2's default gradient "
                    "averaging (ReduceOp.AVG over DP)")
        elif impl == "fsdp2":
            what = ("torch.distributed.fsdp.fully_shard (FSDP2) per block and the root on "
                    "mesh['dp'], loss / global token count, FSDP2's gradient division "
                    + ("left on (divides by DP again)" if bug == "fsdp2_division_left_on" else
                       "disabled (torchtitan's disable_fsdp_gradient_division)")
                    + (", parallelize_module on mesh['tp']" if tp > 1 else ""))
        elif impl == "simple_fsdp":
            what = (f"torchtitan SimpleFSDP data_parallel(mode={SIMPLE_MODES[style]!r}) on "
                    "mesh['dp'], loss / global token count"
                    + (", parallelize_module on mesh['tp']" if tp > 1 else ""))
        elif tp > 1:
            what += f", TP {tp} inside each replica (tp.py)"
        self.plan = f"{what}, {m} micro-batch(es) (scripts/capture/gg_capture/dp.py)"

    @property
    def world(self):
        return self.dp * self.tp

    def data(self):
        torch.manual_seed(1)
        c = self.cfg
        data = {"x": torch.randn(c["batch"], c["seq"], c["hidden"]),
                "target": torch.randn(c["batch"], c["seq"], c["out"])}
        if self.masked:
            data["mask"] = torch.rand(c["batch"], c["seq"]) < 0.7
        return data

    def describe(self):
        return {"model": self.name, "config": dict(self.cfg, dp=self.dp, tp=self.tp, m=self.m,
                                                   style=self.style),
                "parallel_plan": self.plan, **({"bug": self.bug} if self.bug else {})}

    def model(self, tp):
        """The model (S's, or a rank's before the DP style is applied)."""
        return PlainModel(self.cfg) if self.impl != "funcol" else Model(self.cfg, tp)

    # ---- S ------------------------------------------------------------------------------------

    def sequential(self, mode):
        """The whole model on the whole batch (trace.trace_rank)."""
        return trace_sequential(self, self.model, mode)

    # ---- D ------------------------------------------------------------------------------------

    def trace_rank(self, rank, mode):
        """Rank `rank` as one GraphGuard graph: (graph, output names, process groups); the
        outputs are the loss, then the output (fwd) or every parameter's gradient (joint)."""
        if self.impl == "simple_fsdp":
            return self._trace_simple_fsdp(rank, mode)
        if self.impl == "fsdp2":
            return self._trace_fsdp2(rank, mode)
        joint = mode == "joint"
        replica, t = divmod(rank, self.tp)
        with fakedist.fake_world(self.world, rank):
            tp_groups = [dist.new_group(list(range(r * self.tp, (r + 1) * self.tp)))
                         for r in range(self.dp)]
            dp_groups = [dist.new_group(list(range(i, self.world, self.tp)))
                         for i in range(self.tp)]
            tp = tpmod.TP(self.tp, t, tp_groups[replica])
            dp = tpmod.TP(self.dp, replica, dp_groups[t])
            torch.manual_seed(0)
            model = Model(self.cfg, tp)  # every rank draws the same full weights, then its shard
            named = list(model.named_parameters())
            names = [n for n, _ in named]
            fsdp = self.style == "fsdp"
            data = {k: v.chunk(self.dp)[replica] for k, v in self.data().items()}
            data_names = list(data)
            grad_group = tp if self.bug == "grad_reduce_tp_axis" else dp

            def step(*flat):
                held = flat[:len(names)]
                # FSDP: the full parameter all-gathered from the shards (reduce-scatter backward)
                params = [tpmod.gather_from_sp(p, 0, dp) for p in held] if fsdp else list(held)
                batch = dict(zip(data_names, flat[len(names):]))
                mask = batch.get("mask")
                micro = {k: v.chunk(self.m) for k, v in batch.items()}
                count = None
                if self.masked and self.bug != "local_token_mean":
                    count = fc.all_reduce(mask.sum().to(batch["x"].dtype), "sum", dp.group)
                losses, outs, grads = [], [], None
                for k in range(self.m):
                    with torch.nn.utils.stateless._reparametrize_module(
                            model, dict(zip(names, params))):
                        out = model.output(micro["x"][k])
                    total, local = token_loss(out, micro["target"][k],
                                              micro["mask"][k] if self.masked else None)
                    loss = total / (local if count is None else count)
                    if self.bug == "local_token_mean":
                        loss = loss / self.m  # HF-style: each micro-batch's mean, averaged
                    if self.bug == "grad_divided_twice":
                        loss = loss / self.dp
                    losses.append(loss)
                    outs.append(out)
                    if joint:  # the micro-batch's backward, accumulated as .grad accumulates
                        g = torch.autograd.grad(loss, held)
                        grads = list(g) if grads is None else [a + b for a, b in zip(grads, g)]
                loss = losses[0]
                for other in losses[1:]:
                    loss = loss + other
                averaged = self.style == "fsdp" or self.bug == "local_token_mean"
                loss = fc.all_reduce(loss, "sum", dp.group)
                if averaged:
                    loss = loss / self.dp
                if not joint:
                    return (loss, torch.cat(outs) if self.m > 1 else outs[0])
                if fsdp:  # the reduce-scatter happened in the backward; FSDP2 divides by DP
                    grads = [g / self.dp for g in grads]
                else:  # DDP: all-reduce (sum) over DP; averaged in the local-mean variant
                    grads = [fc.all_reduce(g, "sum", grad_group.group) for g in grads]
                    if averaged:
                        grads = [g / self.dp for g in grads]
                return (loss, *grads)

            def local(p):
                p = p.detach()
                return p.chunk(self.dp)[replica].clone() if fsdp else p.clone()

            args = [local(p).requires_grad_(joint) for _, p in named]
            args += [data[k] for k in data_names]
            gm = trace._make_fx(step, args)
            gm = trace.value_graph(gm, args)
            input_names = [trace.sanitize(n) for n in names] + data_names
            graph = fxjson.graph_to_json(gm, rank, input_names)
            groups = {g.group_name: fakedist.group_ranks(g.group_name)
                      for g in tp_groups + dp_groups if isinstance(g, dist.ProcessGroup)}
        outputs = ["loss"] + (["output"] if not joint else [trace.sanitize(n) for n in names])
        return graph, outputs, groups

    def _trace_simple_fsdp(self, rank, mode):
        """trace_rank for impl="simple_fsdp": torchtitan's data_parallel on a (dp, tp) mesh."""
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.tensor import DTensor
        from torch.distributed.tensor.parallel import (ColwiseParallel, RowwiseParallel,
                                                       parallelize_module)
        from torchtitan.experiments.graph_trainer import simple_fsdp
        joint = mode == "joint"
        replica = rank // self.tp
        with fakedist.fake_world(self.world, rank):
            trace._clear_dtensor_caches()
            mesh = init_device_mesh("cpu", (self.dp, self.tp), mesh_dim_names=("dp", "tp"))
            torch.manual_seed(0)
            model = PlainModel(self.cfg)
            if self.tp > 1:
                for block in model.layers:
                    parallelize_module(block, mesh["tp"], {"fc1": ColwiseParallel(),
                                                           "fc2": RowwiseParallel()})
            # SimpleFSDP caches its wrapper classes, whose properties call the parametrization
            # (holding the mesh) of the first model wrapped: a later rank's model would run the
            # first rank's mesh (another, destroyed world here)
            simple_fsdp._wrap_class_cache.clear()
            model = simple_fsdp.data_parallel(model, mesh["dp"], mode=SIMPLE_MODES[self.style])
            dp_group = mesh["dp"].get_group()
            named = list(model.named_parameters())
            names = [n for n, _ in named]
            specs = [(t.device_mesh, t.placements, t.shape, t.stride()) for _, t in named]
            data = {k: v.chunk(self.dp)[replica] for k, v in self.data().items()}
            data_names = list(data)

            def step(*flat):
                held = [DTensor.from_local(x, s[0], s[1], run_check=False, shape=s[2],
                                           stride=s[3]) for s, x in zip(specs, flat)]
                batch = dict(zip(data_names, flat[len(names):]))
                count = fc.all_reduce(batch["mask"].sum().to(batch["x"].dtype), "sum", dp_group)
                with torch.nn.utils.stateless._reparametrize_module(model,
                                                                     dict(zip(names, held))):
                    out = model.output(batch["x"])
                total, _ = token_loss(out, batch["target"], batch["mask"])
                loss = total / count
                reported = fc.all_reduce(loss, "sum", dp_group)
                if not joint:
                    return (reported, out)
                grads = torch.autograd.grad(loss, held)
                return (reported, *[g.to_local() for g in grads])

            args = [t.to_local().detach().clone().requires_grad_(joint) for _, t in named]
            args += [data[k] for k in data_names]
            gm = trace._make_fx(step, args)
            gm = trace.value_graph(gm, args)
            input_names = [trace.sanitize(n) for n in names] + data_names
            graph = fxjson.graph_to_json(gm, rank, input_names)
            groups = trace._process_groups(gm)
        outputs = ["loss"] + (["output"] if not joint else [trace.sanitize(n) for n in names])
        return graph, outputs, groups

    def _trace_fsdp2(self, rank, mode):
        """trace_rank for impl="fsdp2": torch's fully_shard on mesh["dp"] of a (dp, tp) mesh,
        per block and then the root, as torchtitan applies it; the capture of gg_capture/fsdp2.py
        (parameters lifted to inputs, FSDP2's flat buffers and in-place collectives as values).
        The loss is the rank's token mean; the gradients are what FSDP2's reduce-scatter leaves
        in each sharded parameter's .grad."""
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.fsdp import fully_shard
        from torch.distributed.tensor.parallel import (ColwiseParallel, RowwiseParallel,
                                                       parallelize_module)
        from torchtitan.distributed.fsdp import disable_fsdp_gradient_division

        from . import fsdp2
        joint = mode == "joint"
        replica = rank // self.tp
        with fakedist.fake_world(self.world, rank):
            trace._clear_dtensor_caches()
            mesh = init_device_mesh("cpu", (self.dp, self.tp), mesh_dim_names=("dp", "tp"))
            torch.manual_seed(0)
            model = PlainModel(self.cfg)
            if self.tp > 1:
                for block in model.layers:
                    parallelize_module(block, mesh["tp"], {"fc1": ColwiseParallel(),
                                                           "fc2": RowwiseParallel()})
            for block in model.layers:
                fully_shard(block, mesh=mesh["dp"])
            fully_shard(model, mesh=mesh["dp"])
            if not self.average and self.bug != "fsdp2_division_left_on":
                disable_fsdp_gradient_division(model)  # the loss is already a global mean
            fsdp2.lazy_init(model)
            params = fsdp2.fsdp_params(model)
            names = [n for n, _ in model.named_parameters()]
            dp_group = mesh["dp"].get_group()
            data = {k: v.chunk(self.dp)[replica] for k, v in self.data().items()}
            data_names = list(data)

            def step(*flat):
                fsdp2.hold(params, flat[:len(names)])
                batch = dict(zip(data_names, flat[len(names):]))
                if self.average:  # the rank's mean; the ranks' average is the global mean
                    loss, out = model(batch["x"], batch["target"])
                    reported = fc.all_reduce(loss, "sum", dp_group) / self.dp
                else:
                    count = fc.all_reduce(batch["mask"].sum().to(batch["x"].dtype), "sum",
                                          dp_group)
                    loss, out = model(batch["x"], batch["target"], batch["mask"], count)
                    reported = fc.all_reduce(loss, "sum", dp_group)
                if not joint:
                    return (reported, out)
                loss.backward()
                return (reported, *[fp.sharded_param.grad.to_local() for fp in params])

            args = [fsdp2.local_shard(fp) for fp in params] + [data[k] for k in data_names]
            with fsdp2.traceable_unsharded_params():
                gm = trace._make_fx(step, args)
            gm = fsdp2.value_graph(gm, fsdp2.divide_factors(model))
            gm = trace.value_graph(gm, args)
            input_names = [trace.sanitize(n) for n in names] + data_names
            graph = fxjson.graph_to_json(gm, rank, input_names)
            groups = trace._process_groups(gm)
        outputs = ["loss"] + (["output"] if not joint else [trace.sanitize(n) for n in names])
        return graph, outputs, groups

    def texts(self, mode):
        """{"seq.json", "dist.json", "spec.rel"}: S, every rank of D, and the spec."""
        return program_texts(self, mode, lambda seq, ranks: self.spec_text(ranks, mode))

    # ---- spec ---------------------------------------------------------------------------------

    def _placement(self, fqn, tensor):
        """The rule of a parameter (or of its gradient, `tensor` its D name; "D": the input of
        the same name) over the dp x tp mesh: Replicate (ddp) or Shard(0) (fsdp) on dp, tp.py's
        or parallelize_module's placement on tp. SimpleFSDP splits a TP-sharded dim 0 over DP
        inside each TP shard (_StridedShard): the pieces in TP-major order."""
        on_dp = "shard(0)" if self.style == "fsdp" else "replicate"
        rule = _rule(self.tp, fqn)
        if on_dp == rule == "shard(0)" and self.impl != "funcol":
            pieces = [f"{tensor}@{d * self.tp + t}" for t in range(self.tp) for d in range(self.dp)]
            return f"concat(0, {', '.join(pieces)})"
        return f"placements({on_dp}, {rule}" + ("" if tensor == "D" else f", {tensor}") + ")"

    def spec_text(self, ranks, mode):
        """The relation spec from the plan: parameters Replicate (ddp) or Shard(0) (fsdp) on dp
        and placed by TP on tp, the batch Shard(0) on dp; the loss replicated, the output
        sharded like the batch, the gradients placed like the parameters."""
        lines = [f"// {self.name}: {self.plan}",
                 "// Generated by scripts/capture/gg_capture/dp.py from the plan; do not edit.", "",
                 f"// ranks: a dp x tp mesh, rank = replica * {self.tp} + tp rank",
                 f"mesh dp = {self.dp}, tp = {self.tp}"]
        fqns = [n for n, _ in self.model(tpmod.TP()).named_parameters()]
        for fqn in fqns:
            lines.append(f"input {trace.sanitize(fqn)} = {self._placement(fqn, 'D')}")
        for name in ["x", "target"] + (["mask"] if self.masked else []):
            lines.append(f"input {name} = placements(shard(0), replicate)   // the batch")

        def name_of(key, position):
            refs = {g["outputs"][outputs.index(key)]["ref"] for g, outputs, _ in ranks}
            if len(refs) != 1:
                raise ValueError(f"dp: output {key} has different names on the ranks: {refs}")
            return f"D.{refs.pop()}"

        lines += ["", "// the loss: the sum over DP of the ranks' shares (all-reduced)",
                  f"output #0 = placements(replicate, replicate, {name_of('loss', 0)})"]
        if mode == "fwd":
            lines.append("// the output: each replica's batch shard")
            lines.append(f"output #1 = placements(shard(0), replicate, {name_of('output', 1)})")
            return "\n".join(lines) + "\n"
        lines.append("// the gradients, reduced over DP, placed like the parameters")
        for k, fqn in enumerate(fqns, 1):
            lines.append(f"output #{k} = {self._placement(fqn, name_of(trace.sanitize(fqn), k))}")
        return "\n".join(lines) + "\n"
