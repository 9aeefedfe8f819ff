"""Pipeline-parallel programs: torch.distributed.pipelining's own schedules, captured on the fake
process group, each rank's whole schedule (every micro-batch, forward and backward) one graph.

S is the whole model on the whole batch: loss = mean((model(x) - target)^2). D runs it in
`pp` stages (consecutive layers per stage, the head on the last), each stage a
torch.distributed.pipelining.PipelineStage driven by ScheduleGPipe or Schedule1F1B with `m`
micro-batches; inside a stage the blocks may be tensor-parallel over `tp` ranks (tp.py's
column- and row-parallel layers), the ranks laid out as a pp x tp mesh (rank = stage * tp + t),
each stage's TP group its `tp` consecutive ranks and each pipeline group the ranks of one TP
index (the transfers of TP rank t go to TP rank t of the next stage).

What tracing torch's schedules on CPU with the fake group takes (torch 2.13), found by running
them under make_fx:
  - the schedule's first step runs a P2P warm-up vote (each stage sends the next a 0/1 tensor
    saying whether its metadata is static, and branches on `.item()` of what it received): with
    the fake group nothing is received, and under make_fx the branch is data-dependent. Every
    stage here is given its metadata statically (input/output example tensors and their
    gradients), so the vote's answer is STATIC on every stage; `_static_vote` sets it instead
    of exchanging it;
  - the stage is initialized (the vote, metadata, receive buffers) eagerly before tracing, so the
    trace holds the step only. The receive buffers are then graph constants written in place by
    c10d.recv_ and re-read after it; `p2p_values` rewrites each recv_ as a value (the
    functionalized c10d::recv_ GraphGuard reads: the Work, then the received tensor), the
    buffer an aten.empty of its shape, later reads of the buffer reading the received value;
  - make_fx records the transfers as c10d.send / c10d.recv_ naming the ProcessGroup (a
    torchbind object, written here as the group's name) and the peer's rank in the group;
  - the schedule accumulates each parameter's .grad over the micro-batches (add_ into the
    detached gradient of the first) and divides it by the number of micro-batches once all
    backwards ran (scale_grads); trace.out_of_place(unread_views=True) makes those in-place
    updates values (nothing else reads the detached gradient's storage after them);
  - profiler record_function markers (no data) are dropped.
Each micro-batch's loss is loss_fn on its chunk (a mean over the chunk); the schedule returns
them (losses=[...]). The spec (written here from the plan) relates S's loss to their mean, S's
output to the merged output (cat of the micro-batches) and every S parameter gradient to the
accumulated gradient of the stage holding the parameter (sharded over that stage's TP group
like the parameter).
"""
import operator

import torch
import torch.distributed as dist
import torch.nn.functional as F

from . import fakedist, fxjson, trace
from . import tp as tpmod
from .models.base import full

SCHEDULES = ("gpipe", "1f1b")

# Pipeline-specific bugs (registry.PIPELINE_BUGS): what each changes in the program.
BUGS = {
    # Megatron's convention (loss / m in loss_fn) combined with torch's (gradients / m after the
    # schedule, scale_grads=True): every micro-batch is scaled twice
    "loss_scaled_twice",
    # a mean loss per micro-batch with scale_grads=False: gradients m times too large
    "loss_not_scaled",
    # the stage keeps the last micro-batch's gradient only (zero_grad inside the micro-batch
    # loop: .grad set to None before each backward)
    "grad_not_accumulated",
    # the first stage's activation stash popped last-in first-out instead of by micro-batch: a
    # backward meets the activations of another micro-batch
    "stash_lifo",
}


class Block(torch.nn.Module):
    """x + fc2(gelu(fc1(ln(x)))): fc1 column-parallel, fc2 row-parallel over the stage's TP group
    (plain linears at TP 1)."""

    def __init__(self, hidden, ffn, tp):
        super().__init__()
        self.ln = torch.nn.LayerNorm(hidden)
        self.fc1 = tpmod.ColumnParallelLinear(full(ffn, hidden), full(ffn), tp)
        self.fc2 = tpmod.RowParallelLinear(full(hidden, ffn), full(hidden), tp)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(self.ln(x))))


class Model(torch.nn.Module):
    """The whole model (S): blocks, then a replicated linear head."""

    def __init__(self, cfg, tp):
        super().__init__()
        self.layers = torch.nn.ModuleList(Block(cfg["hidden"], cfg["ffn"], tp)
                                          for _ in range(cfg["layers"]))
        self.head = torch.nn.Linear(cfg["hidden"], cfg["out"])
        self.head.weight.data = full(cfg["out"], cfg["hidden"])
        self.head.bias.data = full(cfg["out"])

    def forward(self, x, target):
        for layer in self.layers:
            x = layer(x)
        out = self.head(x)
        return mse(out, target), out


class Stage(torch.nn.Module):
    """The layers of one stage, keyed by their index in the whole model (so parameter FQNs are
    S's: layers.2.fc1.weight), and the head on the last stage."""

    def __init__(self, layers, head=None):
        super().__init__()
        self.layers = torch.nn.ModuleDict(layers)
        self.head = head

    def forward(self, x):
        for layer in self.layers.values():
            x = layer(x)
        return x if self.head is None else self.head(x)


def mse(out, target):
    return ((out - target) ** 2).mean()


class PipelineProgram:
    """A pp-stage (x tp) pipeline of Model driven by torch.distributed.pipelining."""

    plan = ("torch.distributed.pipelining PipelineStage + {schedule} schedule, {m} micro-batches"
            " (scripts/capture/gg_capture/pipeline.py)")

    def __init__(self, pp, tp=1, schedule="gpipe", m=2, layers=None, hidden=16, ffn=32, out=8,
                 batch=8, dp=1, bug=None, name=None):
        if schedule not in SCHEDULES:
            raise ValueError(f"pipeline: schedule {schedule!r} (known: {', '.join(SCHEDULES)})")
        if bug is not None and bug not in BUGS:
            raise ValueError(f"pipeline: bug {bug!r} (known: {', '.join(sorted(BUGS))})")
        layers = layers or 2 * pp
        if layers % pp or batch % (dp * m):
            raise ValueError("pipeline: layers must split evenly over the stages and the batch "
                             "over the DP replicas and micro-batches")
        self.pp, self.tp, self.schedule, self.m, self.bug = pp, tp, schedule, m, bug
        self.dp = dp
        self.cfg = {"layers": layers, "hidden": hidden, "ffn": ffn, "out": out, "batch": batch}
        self.name = name or f"pipeline_pp{pp}" + (f"_tp{tp}" if tp > 1 else "") + f"_{schedule}"
        self.plan = PipelineProgram.plan.format(schedule=schedule, m=m)
        if dp > 1:
            self.plan += (f"; {dp} data-parallel replicas of the pipeline, each on its batch "
                          "shard, gradients all-reduced over DP and divided by DP")

    @property
    def world(self):
        return self.dp * self.pp * self.tp

    def replica_ranks(self, stage, d=0):
        """The ranks of one stage in DP replica d (its TP group), on a dp x pp x tp mesh."""
        first = d * self.pp * self.tp + stage * self.tp
        return list(range(first, first + self.tp))

    def stage_layers(self, stage):
        per = self.cfg["layers"] // self.pp
        return list(range(stage * per, (stage + 1) * per))

    def data(self):
        torch.manual_seed(1)
        b, c = self.cfg["batch"], self.cfg
        return {"x": torch.randn(b, c["hidden"]), "target": torch.randn(b, c["out"])}

    def describe(self):
        dp = {"dp": self.dp} if self.dp > 1 else {}
        return {"model": self.name, "config": dict(self.cfg, pp=self.pp, tp=self.tp, m=self.m,
                                                   schedule=self.schedule, **dp),
                "parallel_plan": self.plan, **({"bug": self.bug} if self.bug else {})}

    # ---- S ------------------------------------------------------------------------------------

    def sequential(self, mode):
        """The whole model on the whole batch, traced as every program's S (trace.trace_rank)."""
        return trace_sequential(self, lambda tp: Model(self.cfg, tp), mode)

    # ---- D ------------------------------------------------------------------------------------

    def trace_rank(self, rank, mode):
        """Rank `rank`'s whole schedule as one GraphGuard graph; returns (graph, outputs) where
        outputs names what the graph returns: ("loss", k) per micro-batch, ("output",) and
        ("grad", fqn) per stage parameter."""
        import torch.distributed._functional_collectives as fc
        from torch.distributed.pipelining import Schedule1F1B, ScheduleGPipe
        joint = mode == "joint"
        d, stage_rank = divmod(rank, self.pp * self.tp)
        stage, t = divmod(stage_rank, self.tp)
        first, last = stage == 0, stage == self.pp - 1
        with fakedist.fake_world(self.world, rank):
            # every rank creates every group in one order: TP groups (replica, stage), pipeline
            # groups (replica, TP index), then with DP the DP groups (stage, TP index)
            tp_groups = [dist.new_group(self.replica_ranks(s, r))
                         for r in range(self.dp) for s in range(self.pp)]
            pp_groups = [dist.new_group([self.replica_ranks(s, r)[i] for s in range(self.pp)])
                         for r in range(self.dp) for i in range(self.tp)]
            dp_groups = [dist.new_group([self.replica_ranks(s, r)[i] for r in range(self.dp)])
                         for s in range(self.pp) for i in range(self.tp)] if self.dp > 1 else []
            tp = tpmod.TP(self.tp, t, tp_groups[d * self.pp + stage])
            torch.manual_seed(0)
            model = Model(self.cfg, tp)  # every rank draws every layer: the same full weights
            module = Stage({str(i): model.layers[i] for i in self.stage_layers(stage)},
                           model.head if last else None)
            mb = self.cfg["batch"] // (self.dp * self.m)
            width = self.cfg["hidden"]

            def example(n, grad):
                return torch.zeros(mb, n).requires_grad_(grad)

            out_width = self.cfg["out"] if last else width
            stage_obj = _stage_class(self.bug)(
                module, stage, self.pp, torch.device("cpu"),
                input_args=(example(width, joint and not first),),
                output_args=(example(out_width, joint),),
                input_grads=(example(width, False),) if joint and not first else None,
                output_grads=(example(out_width, False),) if joint else None,
                group=pp_groups[d * self.tp + t])
            loss_fn = mse
            if self.bug == "loss_scaled_twice":
                loss_fn = lambda out, target: mse(out, target) / self.m  # noqa: E731
            schedule = {"gpipe": ScheduleGPipe, "1f1b": Schedule1F1B}[self.schedule](
                stage_obj, self.m, loss_fn=loss_fn, scale_grads=self.bug != "loss_not_scaled")
            schedule._warmup_p2p = _static_vote
            data = {k: v.chunk(self.dp)[d] for k, v in self.data().items()}  # the replica's
            chunk = {k: v.chunk(self.m)[0] for k, v in data.items()}
            schedule._has_backward = joint
            schedule._initialize_stage((chunk["x"],) if first else (), {},
                                       chunk["target"] if last else None)
            named = list(module.named_parameters())
            names = [n for n, _ in named]

            def step(*flat):
                params = dict(zip(names, flat[:len(names)]))
                x, target = flat[len(names):]
                losses = []
                run = schedule.step if joint else schedule.eval
                with torch.nn.utils.stateless._reparametrize_module(module, params):
                    merged = run(*((x,) if first else ()), target=target if last else None,
                                 losses=losses if last else None)
                results = list(losses)
                if last and not joint:
                    results.append(merged)
                if joint:
                    grads = [p.grad for p in flat[:len(names)]]
                    if self.dp > 1:  # DDP over the replicas: the mean of their gradients
                        group = dp_groups[stage * self.tp + t]
                        grads = [fc.all_reduce(g, "sum", group) / self.dp for g in grads]
                    results += grads
                return tuple(results)

            args = [p.detach().clone().requires_grad_(joint) for _, p in named]
            args += [data["x"], data["target"]]
            gm = trace._make_fx(step, args)
            drop_profiler_markers(gm)
            p2p_values(gm)
            trace.out_of_place(gm, unread_views=True)
            input_names = [trace.sanitize(n) for n in names] + ["x", "target"]
            graph = fxjson.graph_to_json(gm, rank, input_names)
            groups = {g.group_name: fakedist.group_ranks(g.group_name)  # this rank's groups
                      for g in tp_groups + pp_groups + dp_groups
                      if isinstance(g, dist.ProcessGroup)}
        outputs = ([("loss", k) for k in range(self.m)] if last else [])
        if last and not joint:
            outputs.append(("output",))
        if joint:
            outputs += [("grad", trace.sanitize(n)) for n in names]
        return graph, outputs, groups

    def texts(self, mode):
        """{"seq.json", "dist.json", "spec.rel"}: S, every rank of D, and the spec."""
        return program_texts(self, mode, lambda seq, ranks: self.spec_text(seq, ranks, mode))

    # ---- spec ---------------------------------------------------------------------------------

    def spec_text(self, seq, ranks, mode):
        """The relation spec, from the plan: S's parameters to their stage's ranks, the batch to
        the first stage, the targets to the last, S's outputs to the last stage's results."""
        if self.dp > 1:
            return self._mesh_spec_text(ranks, mode)
        lines = [f"// {self.name}: {self.plan}",
                 "// Generated by scripts/capture/gg_capture/pipeline.py from the pipeline plan;"
                 " do not edit.", "",
                 f"// ranks: a pp x tp mesh, rank = stage * {self.tp} + tp rank", ""]
        stage_ranks = [list(range(s * self.tp, (s + 1) * self.tp)) for s in range(self.pp)]
        placement = {}  # S input -> its rule within the stage's group
        model_params = dict(Model(self.cfg, tpmod.TP()).named_parameters())
        for fqn, _ in model_params.items():
            placement[trace.sanitize(fqn)] = _rule(self.tp, fqn)
        for s in range(self.pp):
            lines.append(f"group stage{s} = [{', '.join(map(str, stage_ranks[s]))}]")
            graph, _, _ = ranks[stage_ranks[s][0]]
            for node in graph["nodes"]:
                if node["kind"] == "input" and node["name"] in placement:
                    lines.append(f"input {node['name']} = {placement[node['name']]}")
            if s == 0:
                lines.append("input x = replicate                // the batch, on the first stage")
            if s == self.pp - 1:
                lines.append("input target = replicate           // the targets, on the last stage")
            lines.append("")

        def name_of(rank, key):
            graph, outputs, _ = ranks[rank]
            return graph["outputs"][outputs.index(key)]["ref"]

        last = stage_ranks[-1]
        lines.append("// the loss: the mean of the micro-batch losses (each a mean over its chunk)")
        lines.append("output #0 = mean(" + ", ".join(f"D.{name_of(last[0], ('loss', k))}@{last[0]}"
                                                     for k in range(self.m)) + ")")
        if mode == "fwd":
            lines.append("// the model's output: the micro-batches' outputs merged along the batch")
            lines.append(f"output #1 = D.{name_of(last[0], ('output',))}@{last[0]}")
            return "\n".join(lines) + "\n"
        # each gradient: the one its stage accumulated, on every rank of the stage's TP group
        # (a replicated parameter's gradient on each, a sharded one's shards concatenated)
        position = {trace.sanitize(n): k for k, n in enumerate(model_params, 1)}
        for s in range(self.pp):
            fqns = [key[1] for key in ranks[stage_ranks[s][0]][1] if key[0] == "grad"]
            lines += ["", f"// stage {s}'s gradients, accumulated over the micro-batches",
                      f"group grads{s} = stage{s}"]
            for fqn in fqns:
                names = {name_of(r, ("grad", fqn)) for r in stage_ranks[s]}
                rule = placement[fqn]
                if len(names) == 1:  # one name on every rank: the shorthand relates each
                    (name,) = names
                    rule = (f"replicate(D.{name})" if rule == "replicate"
                            else f"{rule[:-1]}, D.{name})")
                elif rule == "replicate":
                    rule = f"D.{name_of(stage_ranks[s][0], ('grad', fqn))}@{stage_ranks[s][0]}"
                else:
                    pieces = ", ".join(f"D.{name_of(r, ('grad', fqn))}@{r}"
                                       for r in stage_ranks[s])
                    rule = f"concat({rule[len('shard('):-1]}, {pieces})"
                lines.append(f"output #{position[fqn]} = {rule}")
        return "\n".join(lines) + "\n"


    def _mesh_spec_text(self, ranks, mode):
        """spec_text with DP replicas: each stage's ranks over every replica a dp x tp mesh
        (parameters Replicate on dp, the batch and targets Shard(0)); the loss the mean of every
        replica's micro-batch losses, the output the replicas' outputs concatenated, each
        gradient the DP-averaged one on every rank of its stage."""
        lines = [f"// {self.name}: {self.plan}",
                 "// Generated by scripts/capture/gg_capture/pipeline.py from the pipeline plan;"
                 " do not edit.", "",
                 f"// ranks: a dp x pp x tp mesh, rank = (replica * {self.pp} + stage) * {self.tp}"
                 " + tp rank", ""]
        mesh = f"mesh dp = {self.dp}, tp = {self.tp}"
        stage_ranks = [[r for d in range(self.dp) for r in self.replica_ranks(s, d)]
                       for s in range(self.pp)]
        model_params = dict(Model(self.cfg, tpmod.TP()).named_parameters())
        placement = {trace.sanitize(fqn): f"placements(replicate, {_rule(self.tp, fqn)}"
                     for fqn in model_params}
        for s in range(self.pp):
            lines += [f"group stage{s} = [{', '.join(map(str, stage_ranks[s]))}]", mesh]
            graph, _, _ = ranks[stage_ranks[s][0]]
            for node in graph["nodes"]:
                if node["kind"] == "input" and node["name"] in placement:
                    lines.append(f"input {node['name']} = {placement[node['name']]})")
            if s == 0:
                lines.append("input x = placements(shard(0), replicate)       // the batch")
            if s == self.pp - 1:
                lines.append("input target = placements(shard(0), replicate)  // the targets")
            lines.append("")

        def name_of(rank, key):
            graph, outputs, _ = ranks[rank]
            return graph["outputs"][outputs.index(key)]["ref"]

        heads = [self.replica_ranks(self.pp - 1, d)[0] for d in range(self.dp)]
        lines.append("// the loss: the mean of every replica's micro-batch losses")
        lines.append("output #0 = mean(" + ", ".join(f"D.{name_of(r, ('loss', k))}@{r}"
                                                     for r in heads for k in range(self.m)) + ")")
        if mode == "fwd":
            lines.append("// the model's output: the replicas' merged outputs along the batch")
            lines.append("output #1 = concat(0, " + ", ".join(
                f"D.{name_of(r, ('output',))}@{r}" for r in heads) + ")")
            return "\n".join(lines) + "\n"
        position = {trace.sanitize(n): k for k, n in enumerate(model_params, 1)}
        for s in range(self.pp):
            fqns = [key[1] for key in ranks[stage_ranks[s][0]][1] if key[0] == "grad"]
            lines += ["", f"// stage {s}'s gradients, accumulated and averaged over DP",
                      f"group grads{s} = stage{s}", mesh]
            for fqn in fqns:
                names = {name_of(r, ("grad", fqn)) for r in stage_ranks[s]}
                if len(names) != 1:
                    raise ValueError(f"pipeline: the gradient of {fqn} has different names on "
                                     f"the ranks of stage {s}: {sorted(names)}")
                lines.append(f"output #{position[fqn]} = {placement[fqn]}, D.{names.pop()})")
        return "\n".join(lines) + "\n"


def trace_sequential(program, build_model, mode):
    """S of a program traced rank by rank (a pipeline here, dp.py's data-parallel programs): the
    model `build_model(tp)` of one rank, torch seeded as on every rank, on `program.data()`, the
    whole batch; traced by trace.trace_rank with every input and output replicated."""

    class Sequential:
        name, plan = program.name, program.plan

        def build(self, tp):
            torch.manual_seed(0)
            return build_model(tp)

        def data(self, tp):
            return program.data()

        def data_placement(self, name):
            return ("replicate",)

        def output_placements(self):
            return [("replicate",), ("replicate",)]

    return trace.trace_rank(Sequential(), 1, 0, mode)


def program_texts(program, mode, spec_text):
    """{"seq.json", "dist.json", "spec.rel"} of such a program: S (program.sequential), every
    rank of D (program.trace_rank: graph, outputs, process groups) and `spec_text(seq, ranks)`."""
    seq = program.sequential(mode)
    ranks = [program.trace_rank(r, mode) for r in range(program.world)]
    groups = {}
    for _, _, g in ranks:
        groups.update(g)
    return {"seq.json": fxjson.program_text([seq.graph]),
            "dist.json": fxjson.program_text([g for g, _, _ in ranks], groups),
            "spec.rel": spec_text(seq, ranks)}


def _rule(tp_size, fqn):
    """The rule of an S parameter within its stage's TP group: tp.py's placements."""
    if tp_size == 1:
        return "replicate"
    if ".fc1." in fqn:
        return "shard(0)"
    if fqn.endswith("fc2.weight"):
        return "shard(1)"
    return "replicate"


def _static_vote(stages, has_backward, p2p_done):
    """The schedule's P2P warm-up vote as it ends when every stage's metadata is static."""
    from torch.distributed.pipelining.stage import InferenceMode
    for stage in stages:
        stage._inference_mode = InferenceMode.STATIC


def _stage_class(bug):
    from torch.distributed.pipelining import PipelineStage
    if bug == "grad_not_accumulated":
        class ZeroGradEachMicroBatch(PipelineStage):
            def backward_one_chunk(self, bwd_chunk_id, *args, **kwargs):
                for p in self.submod.parameters():
                    p.grad = None  # the bug: zero_grad inside the micro-batch loop
                return super().backward_one_chunk(bwd_chunk_id, *args, **kwargs)
        return ZeroGradEachMicroBatch
    if bug == "stash_lifo":
        class LifoStash(PipelineStage):
            def backward_one_chunk(self, bwd_chunk_id, *args, **kwargs):
                if self.is_first and len(self.fwd_cache) > 1:
                    # the bug: the newest stashed activations, whatever the micro-batch
                    newest = list(self.fwd_cache)[-1]
                    self.fwd_cache[bwd_chunk_id], self.fwd_cache[newest] = (
                        self.fwd_cache[newest], self.fwd_cache[bwd_chunk_id])
                return super().backward_one_chunk(bwd_chunk_id, *args, **kwargs)
        return LifoStash
    return PipelineStage


def drop_profiler_markers(gm):
    """Erase record_function markers (profiler ops: no data flows through them)."""
    for node in reversed(list(gm.graph.nodes)):
        if node.op == "call_function" and getattr(node.target, "namespace", "") == "profiler":
            if node.users:
                raise ValueError(f"pipeline: profiler node {node.name} has users")
            gm.graph.erase_node(node)
    gm.graph.lint()
    gm.recompile()


def p2p_values(gm):
    """c10d transfers as GraphGuard reads them: the ProcessGroup argument (a torchbind object)
    becomes the group's name, and each c10d.recv_ into a buffer a value: the node is marked
    functionalized (outputs: its Work, then the received tensor, read through a getitem), its
    buffer becomes an aten.empty of the buffer's shape and dtype, and every read of the buffer
    after the receive (and before another receive into it) reads the received value."""
    send, recv = torch.ops.c10d.send.default, torch.ops.c10d.recv_.default
    current = {}  # buffer attribute -> the value it holds (a getitem of its last receive)
    for node in list(gm.graph.nodes):
        if node.op == "get_attr" and node.target in current:
            node.replace_all_uses_with(current[node.target])
            gm.graph.erase_node(node)
            continue
        if node.op != "call_function" or node.target not in (send, recv):
            continue
        tensors, pg_node, peer, tag = node.args
        pg = dist.ProcessGroup.unbox(getattr(gm, pg_node.target))
        node.args = (tensors, pg.group_name, peer, tag)
        if not pg_node.users:
            gm.graph.erase_node(pg_node)
        if node.target is send:
            continue
        (buffer,) = tensors
        if buffer.op != "get_attr":
            raise ValueError(f"pipeline: recv_ into {buffer.name}, not a receive buffer")
        value = getattr(gm, buffer.target)
        with gm.graph.inserting_before(node):
            empty = gm.graph.call_function(
                torch.ops.aten.empty.memory_format, (list(value.shape),),
                {"dtype": value.dtype, "layout": torch.strided, "device": torch.device("cpu"),
                 "pin_memory": False})
        empty.meta["val"] = value.detach().clone()
        node.args = ([empty],) + node.args[1:]
        if not buffer.users:
            gm.graph.erase_node(buffer)
        with gm.graph.inserting_after(node):
            received = gm.graph.call_function(operator.getitem, (node, 1))
        received.meta["val"] = value.detach().clone()
        node.meta["val"] = (node.meta.get("val"), received.meta["val"])
        node.meta["gg_functionalized"] = True
        current[buffer.target] = received
    gm.graph.lint()
    gm.recompile()
