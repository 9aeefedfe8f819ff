"""Trace one rank of a program with make_fx: forward, or joint forward+backward.

A program (see models/) builds its module for a TP group, gives its data, and returns from
forward() a tuple (loss, extra outputs...). The joint function returns (loss, gradient of every
parameter in named_parameters() order); gradients of parameters marked sequence-parallel are
all-reduced first, as Megatron-LM's finalize_model_grads does (unless the program overrides
finalize_grads, which the bug benchmark does).
"""
import torch
from torch._decomp import get_decompositions
from torch.fx.experimental.proxy_tensor import make_fx

from . import fakedist, fxjson, tp as tpmod


# Backward operators GraphGuard's registry lacks, written with ones it has: slice_backward (the
# gradient of a slice, e.g. transformers' rotate_half) is new_zeros + slice_scatter.
_DECOMPOSITIONS = get_decompositions([torch.ops.aten.slice_backward])


def default_finalize_grads(names, params, grads, tp):
    return [tpmod.all_reduce_grad(g, tp) if getattr(p, "gg_sequence_parallel", False) else g
            for p, g in zip(params, grads)]


def out_of_place(gm):
    """Rewrite in-place operators on graph-internal tensors (transformers' Mixtral router divides
    its top-k weights in place) as their out-of-place overloads: GraphGuard's graphs are value graphs.
    Later readers of the mutated tensor read the new node. A mutated input, or a tensor with
    aliases (views) that could observe the mutation, is refused rather than rewritten wrongly."""
    order = {node: i for i, node in enumerate(gm.graph.nodes)}
    for node in list(gm.graph.nodes):
        if node.op != "call_function" or not isinstance(node.target, torch._ops.OpOverload):
            continue
        schema = node.target._schema
        first = schema.arguments[0] if schema.arguments else None
        if (first is None or first.alias_info is None or not first.alias_info.is_write
                or first.kwarg_only):
            continue
        namespace, base_name = schema.name.split("::")
        target = node.args[0]
        aliased = [u for u in target.users
                   if u is not node and isinstance(u.target, torch._ops.OpOverload)
                   and any(r.alias_info is not None for r in u.target._schema.returns)]
        if not base_name.endswith("_") or target.op != "call_function" or aliased:
            raise ValueError(f"trace: cannot rewrite in-place {schema.name} on {target.name} "
                             f"(an input or an aliased tensor)")
        try:
            packet = getattr(getattr(torch.ops, namespace), base_name[:-1])
            functional = getattr(packet, node.target._overloadname)
        except AttributeError:
            raise ValueError(
                f"trace: in-place {schema.name} has no out-of-place overload") from None
        with gm.graph.inserting_before(node):
            new = gm.graph.call_function(functional, node.args, node.kwargs)
        new.meta = dict(node.meta)
        for user in list(target.users):
            if order.get(user, -1) > order[node]:  # readers after the mutation
                user.replace_input_with(target, new)
        node.replace_all_uses_with(new)
        gm.graph.erase_node(node)
        order[new] = order[node]
    gm.graph.lint()
    gm.recompile()


def sanitize(fqn):
    return fqn.replace(".", "_")


class Traced:
    """One captured rank: the JSON graph object plus what the spec needs."""

    def __init__(self, graph, input_names, param_placements, data_placements, output_placements,
                 groups):
        self.graph, self.input_names = graph, input_names
        self.param_placements, self.data_placements = param_placements, data_placements
        self.output_placements, self.groups = output_placements, groups


def trace_rank(program, world, rank, mode):
    """Capture rank `rank` of `program` with `world` ranks (world 1: the sequential program)."""
    assert mode in ("fwd", "joint")
    if world == 1:
        return _trace(program, tpmod.TP(), mode, {})
    with fakedist.fake_world(world, rank) as world_group:
        tp = program.make_tp(world, rank, world_group)
        return _trace(program, tp, mode, None, rank)


def _trace(program, tp, mode, groups, rank=0):
    torch.manual_seed(0)
    model = program.build(tp)
    model.train(False)
    data = program.data(tp)
    named = list(model.named_parameters())
    names = [n for n, _ in named]
    params = [p for _, p in named]
    # buffers (rotary inv_freq) are inputs too, replicated: as graph constants they would be
    # opaque and differ between S and D
    buffers = list(model.named_buffers())
    data_names = list(data)
    finalize = getattr(program, "finalize_grads", default_finalize_grads)

    def step(*flat):
        p = dict(zip(names, flat[:len(names)]))
        nb = len(names) + len(buffers)
        p.update(zip([n for n, _ in buffers], flat[len(names):nb]))
        d = dict(zip(data_names, flat[nb:]))
        outs = torch.func.functional_call(model, p, (), d, tie_weights=True, strict=True)
        if mode == "fwd":
            return tuple(outs)
        grads = torch.autograd.grad(outs[0], flat[:len(names)])
        return (outs[0], *finalize(names, params, list(grads), tp))

    args = [p.detach().clone().requires_grad_(mode == "joint") for p in params]
    args += [b.detach().clone() for _, b in buffers]
    args += [data[k] for k in data_names]
    gm = make_fx(step, decomposition_table=_DECOMPOSITIONS, record_stack_traces=True)(*args)
    out_of_place(gm)
    if groups is None:
        groups = {}
        for node in gm.graph.nodes:
            if node.op == "call_function" and getattr(node.target, "namespace", "") == "_c10d_functional":
                group = node.args[-1]
                if isinstance(group, str) and group not in groups:
                    groups[group] = fakedist.group_ranks(group)
    input_names = [sanitize(n) for n in names] + [sanitize(n) for n, _ in buffers] + data_names
    graph = fxjson.graph_to_json(gm, rank, input_names)
    param_placements = {sanitize(n): tpmod.placement(p) for n, p in named}
    param_placements.update({sanitize(n): ("replicate",) for n, _ in buffers})
    data_placements = {k: program.data_placement(k) for k in data_names}
    if mode == "fwd":
        out_places = program.output_placements()
    else:
        out_places = [("replicate",)] + [
            ("replicate",) if getattr(p, "gg_sequence_parallel", False) else tpmod.placement(p)
            for p in params]
    traced = Traced(graph, input_names, param_placements, data_placements, out_places, groups)
    traced.spec_group = getattr(program, "spec_group", None)
    return traced
