"""Trace one rank of a program with make_fx: forward, or joint forward+backward.

A program (see models/) builds its module for a TP group, gives its data, and returns from
forward() a tuple (loss, extra outputs...). The joint function returns (loss, gradient of every
parameter in named_parameters() order); gradients of parameters marked sequence-parallel are
all-reduced first, as Megatron-LM's finalize_model_grads does (unless the program overrides
finalize_grads, which the bug benchmark does). Programs with `dtensor = True` (a plain module
given to parallelize_module) are traced by dtensor_trace, with placements read from DTensor.
"""
import contextlib
import copy
import importlib
import math
import multiprocessing
import os
import sys
import tempfile

import torch
from torch._decomp import get_decompositions
from torch.fx.experimental.proxy_tensor import make_fx

from . import fakedist, fxjson, shims, tp as tpmod


# Backward operators GraphGuard's registry lacks, written with ones it has: slice_backward (the
# gradient of a slice, e.g. transformers' rotate_half) is new_zeros + slice_scatter.
_DECOMPOSITIONS = get_decompositions([torch.ops.aten.slice_backward])


def default_finalize_grads(names, params, grads, tp):
    return [tpmod.all_reduce_grad(g, tp) if getattr(p, "gg_sequence_parallel", False) else g
            for p, g in zip(params, grads)]


def out_of_place(gm, unread_views=False):
    """Rewrite in-place operators on graph-internal tensors (transformers' Mixtral router divides
    its top-k weights in place) as their out-of-place overloads: GraphGuard's graphs are value graphs.
    Later readers of the mutated tensor read the new node, views taken after the write included
    (spmd_types views the buffer it all-gathers into). A mutated input, or a tensor with a view
    taken before the write and read after it (it would observe the mutation), is refused rather
    than rewritten wrongly, and so is a write into a view (its base, and the base's other views,
    would have to see it: value_graph functionalizes such a graph instead). With unread_views, a
    write into a view is rewritten too when nothing else of its storage (the base, the base's
    other views) is read after the write, for callers that cannot functionalize: a pipeline
    schedule's graph holds c10d transfers, and autograd accumulates a micro-batch's gradient into
    the detached gradient of the one before (gg_capture/pipeline.py)."""
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
        aliased = _views_read_across(target, node, order)
        if (not base_name.endswith("_") or target.op != "call_function" or aliased
                or (_is_view(target)
                    and (not unread_views or _storage_read_after(target, node, order)))):
            raise ValueError(f"trace: cannot rewrite in-place {schema.name} on {target.name} "
                             f"(an input, a view, or a tensor with a view read after the write)")
        try:
            packet = getattr(getattr(torch.ops, namespace), base_name[:-1])
            functional = getattr(packet, node.target._overloadname)
        except AttributeError:
            raise ValueError(
                f"trace: in-place {schema.name} has no out-of-place overload") from None
        _replace_write(gm, order, node, target, functional, node.kwargs)
    gm.graph.lint()
    gm.recompile()


def _is_view(node):
    """Whether node's value aliases one of its inputs (a view operator's result)."""
    return (node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload)
            and any(r.alias_info is not None for r in node.target._schema.returns))


def _replace_write(gm, order, node, target, functional, kwargs):
    """Replace node, which writes target, by a call of functional with node's arguments (and
    kwargs); readers of target after node (in the original order) read the new node."""
    with gm.graph.inserting_before(node):
        new = gm.graph.call_function(functional, node.args, kwargs)
    new.meta = dict(node.meta)
    for user in list(target.users):
        if order.get(user, -1) > order[node]:  # readers after the write
            user.replace_input_with(target, new)
    node.replace_all_uses_with(new)
    gm.graph.erase_node(node)
    order[new] = order[node]


def functionalize(gm, args):
    """gm re-traced under torch.func.functionalize: every in-place write becomes a value, also one
    through a view or into an input (megatron-core's vocab-parallel cross entropy backward writes
    `grad_2d[arange, target] -= ...` into a view of the saved softmax, then `grad_input.mul_`),
    which out_of_place refuses. gm is already an ATen graph, so functionalization sees only ATen
    operators (torch.func.functionalize of the program itself refuses autograd.Functions without
    setup_context, as megatron's are); a write through a view becomes the functional operator on
    the view and the base regenerated from it (view_scatter-style ops: slice_scatter,
    select_scatter, as_strided_scatter, or the inverse view), a write into an input a copy_ at the
    end, which out_of_place then refuses like any other write into an input. Each node keeps the
    stack trace of the node it was made from (preserve_node_meta)."""
    from torch.fx import traceback as fx_traceback

    def run(*flat):
        with fx_traceback.preserve_node_meta():
            return torch.fx.Interpreter(gm).run(*flat)

    plain = [a.detach() if isinstance(a, torch.Tensor) else a for a in args]
    return make_fx(torch.func.functionalize(run, remove="mutations"),
                   decomposition_table=_DECOMPOSITIONS)(*plain)


def _views(base, skip):
    """Every node that aliases base through a chain of view operators (except skip)."""
    found, todo = [], [base]
    while todo:
        for u in todo.pop().users:
            if (u is not skip and u not in found and isinstance(u.target, torch._ops.OpOverload)
                    and any(r.alias_info is not None for r in u.target._schema.returns)):
                found.append(u)
                todo.append(u)
    return found


_ASSERTIONS = (torch.ops.aten._assert_async.msg, torch.ops.aten._assert_async.default,
               torch.ops.aten._assert_scalar.default)


def drop_assertions(gm):
    """Remove runtime assertions (torch._assert_async: torchtitan checks the RoPE positions
    against its cache length) and what only they read: they yield no value, and GraphGuard
    relates values. A graph whose outputs are the same without them refines the same way."""
    asserts = [n for n in gm.graph.nodes if n.op == "call_function" and n.target in _ASSERTIONS]
    if not asserts:
        return
    for node in asserts:
        gm.graph.erase_node(node)
    gm.graph.eliminate_dead_code()
    gm.graph.lint()
    gm.recompile()


def drop_traced_reads(gm):
    """Remove `aten._local_scalar_dense` nodes nothing reads: a tensor's value read in Python
    with `.item()` while tracing a program whose graphs hold traced values (_make_fx's
    `values`); the number is already a literal in what followed (a shape, a split size)."""
    reads = [n for n in gm.graph.nodes if n.op == "call_function" and not n.users
             and n.target is torch.ops.aten._local_scalar_dense.default]
    for node in reads:
        gm.graph.erase_node(node)
    if reads:
        gm.graph.lint()
        gm.recompile()


def value_graph(gm, args=None):
    """The traced graph as GraphGuard reads it (returned; gm itself is rewritten unless it had to
    be functionalized): 0-dim tensor constants as scalar_tensor (scalar_constants), in-place and
    out= writes into graph-internal tensors that no view observes as values (out_of_place,
    out_variants); a graph with any other write (through a view, into an input) functionalized
    from its example `args` instead (functionalize; without args such a write is an error);
    as_strided views of a known plain layout as views (plain_strided_views); no runtime
    assertions, no value reads nothing uses (drop_traced_reads)."""
    drop_traced_reads(gm)
    writes = args is not None and any(_writes(n) for n in gm.graph.nodes)
    original = copy.deepcopy(gm) if writes else None
    _scalar_constants(gm)
    try:
        out_of_place(gm)
        if any(getattr(n.target, "_overloadname", None) == "out" for n in gm.graph.nodes):
            out_variants(gm)
    except ValueError:
        if original is None:
            raise
        gm = functionalize(original, args)
        _scalar_constants(gm)
    if any(n.target in (torch.ops.aten.as_strided.default,
                        torch.ops.aten.as_strided_scatter.default) for n in gm.graph.nodes):
        plain_strided_views(gm)
    drop_assertions(gm)
    return gm


def _storage_read_after(view, node, order):
    """Whether node, which writes the view `view`, writes an input's storage, or another alias of
    view's storage than view and its own views (its base, the base's other views) is read after
    node: then the write is not a value of its own."""
    root = view
    while _is_view(root):
        root = root.args[0]
    if root.op != "call_function":
        return True
    own = {view, *_views(view, node)}
    at = order[node]
    return any(order.get(u, -1) > at for alias in [root, *_views(root, node)] if alias not in own
               for u in alias.users if u is not node)


def _views_read_across(target, node, order):
    """Views of target taken before node (which writes target) and read after it."""
    at = order[node]
    return [v for v in _views(target, node) if order.get(v, -1) < at
            and any(order.get(w, -1) > at for w in v.users)]


def out_variants(gm):
    """Rewrite `op(..., out=t)` (an .out overload writing a graph-internal tensor, as megatron-core's
    `torch.exp(x, out=x)`) as the functional overload; later readers of t read the new node. An
    input is refused, and so is a destination with a view read after the write (it would see it).
    """
    order = {node: i for i, node in enumerate(gm.graph.nodes)}
    for node in list(gm.graph.nodes):
        if (node.op != "call_function" or not isinstance(node.target, torch._ops.OpOverload)
                or node.target._overloadname != "out" or "out" not in node.kwargs):
            continue
        target = node.kwargs["out"]
        name = node.target._schema.name
        aliased = _views_read_across(target, node, order)
        if target.op != "call_function" or aliased or _is_view(target):
            raise ValueError(f"trace: cannot rewrite {name}.out into {target.name} "
                             "(an input, a view, or a tensor with a view read after the write)")
        functional = getattr(node.target.overloadpacket, "default", None)
        if functional is None:
            raise ValueError(f"trace: {name}.out has no functional overload")
        _replace_write(gm, order, node, target, functional,
                       {k: v for k, v in node.kwargs.items() if k != "out"})
    gm.graph.lint()
    gm.recompile()


class _ForwardFrames:
    """Stands in for torch.fx.proxy's CapturedTraceback while make_fx records stack traces.

    make_fx (torch 2.13, record_stack_traces with _record_forward_stack_traces_only) captures the
    whole Python stack for every node, symbolizes every frame, then keeps only the frames named
    `forward`, those of torch/__init__.py and registered anchors (_filter_traceback_frames). This
    walks the live frames once and symbolizes only those: the same FrameSummary entries
    (filename, line number, name; the source line read lazily as before), in the same order, so
    node.meta["stack_trace"] is unchanged and tracing no longer spends most of its time there."""

    @staticmethod
    def extract(*args, **kwargs):
        return _ForwardFrames()

    def summary(self):
        import sys
        import traceback
        from torch.fx import proxy
        anchors = getattr(proxy, "_STACK_TRACE_ANCHORS", ())
        frames = []
        f = sys._getframe(1)
        while f is not None:
            code = f.f_code
            if (code.co_name == "forward" or code.co_filename.endswith("torch/__init__.py")
                    or (code.co_filename, code.co_name) in anchors):
                frames.append(traceback.FrameSummary(code.co_filename, f.f_lineno, code.co_name))
            f = f.f_back
        frames.reverse()
        return traceback.StackSummary.from_list(frames)


def _make_fx(step, args, values=False):
    """make_fx with stack traces, their frames found by _ForwardFrames when torch's tracer is the
    one it was written against (else torch's own CapturedTraceback).

    With `values` (a program with live_collectives, whose graphs hold the traced values' shapes:
    "Data-dependent shapes" in docs/architecture.md), a tensor's value read in Python by
    `.item()` is taken as traced, as `.tolist()` always is (megatron-core's token dispatchers
    size their permutations with `tokens_per_expert.sum().item()`); otherwise make_fx refuses
    it."""
    from torch.fx import proxy
    fast = (getattr(proxy, "CapturedTraceback", None) is not None
            and hasattr(proxy.TracerBase, "_filter_traceback_frames"))
    saved = proxy.CapturedTraceback if fast else None
    if fast:
        proxy.CapturedTraceback = _ForwardFrames
    try:
        return make_fx(step, decomposition_table=_DECOMPOSITIONS, record_stack_traces=True,
                       _error_on_data_dependent_ops=not values)(*args)
    finally:
        if fast:
            proxy.CapturedTraceback = saved


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
    trace = dtensor_trace if getattr(program, "dtensor", False) else _trace
    if world == 1:
        with shims.rank(1):  # a library's CPU shims (shims/), where the program imported one
            return trace(program, tpmod.TP(), mode, {})
    with fakedist.fake_world(world, rank) as world_group, shims.rank(world):
        if "torch.distributed.tensor" in sys.modules:
            _clear_dtensor_caches()
        tp = program.make_tp(world, rank, world_group)
        return trace(program, tp, mode, None, rank)


def trace_ranks(program, world, mode):
    """trace_rank for every rank of D, in rank order.

    A program whose graphs depend on values other ranks send (`live_collectives`: expert
    parallelism's split sizes come from an all-to-all of token counts) is traced with live
    collectives: one spawned process per rank, all in one gloo world (fakedist.live_world), so
    each rank's make_fx records the values its collectives really returned. Every other program
    is traced rank by rank over the fake group, which does not communicate."""
    if world == 1 or not getattr(program, "live_collectives", False):
        return [trace_rank(program, world, r, mode) for r in range(world)]
    context = multiprocessing.get_context("spawn")
    with tempfile.TemporaryDirectory() as tmp, context.Pool(world) as pool:
        store = os.path.join(tmp, "store")
        libraries = shims.modules()
        return pool.starmap(_trace_live_rank,
                            [(program, world, r, mode, store, libraries) for r in range(world)],
                            chunksize=1)


def traced_values_note(program):
    """The graphs' `traced_values` entry (docs/graph-format.md) for a program with
    live_collectives: its values file and why the graphs replay only on those values (the
    program's `values_read`, what its shapes follow from)."""
    read = getattr(program, "values_read", "the all-to-all split sizes")
    return {"file": "values.json",
            "why": f"shapes follow from values read at trace time ({read} of {program.name})"}


def _trace_live_rank(program, world, rank, mode, store, libraries):
    for name in libraries:  # their shims apply here as in the parent (shims.modules)
        importlib.import_module(name)
    # a library's code monkeypatched while the program is traced (models/megatron_core.py's
    # bug cases) is patched in this spawned process too
    patches = getattr(program, "patches", contextlib.nullcontext)
    with patches(), fakedist.live_world(world, rank, store) as world_group, shims.rank(world):
        tp = program.make_tp(world, rank, world_group)
        return _trace(program, tp, mode, None, rank)


def _process_groups(gm):
    """The member ranks of every process group the graph's collectives name."""
    groups = {}
    for node in gm.graph.nodes:
        if node.op == "call_function" and getattr(node.target, "namespace", "") == "_c10d_functional":
            group = node.args[-1]
            if isinstance(group, str) and group not in groups:
                groups[group] = fakedist.group_ranks(group)
    return groups


def scalar_constants(gm):
    """Replace lift_fresh_copy of a 0-dim tensor constant by aten.scalar_tensor of its value.

    `t[mask] = 0.0` (DTensor's _MaskPartial, masking what lies outside this rank's vocabulary
    shard) traces as index_put_ of a lifted 0-dim tensor constant. GraphGuard's JSON holds no
    constant values; a spec `constant` line could state them, but S (the plain model) has no such
    constant and the spec is shared with the TP 1 case (S against itself), where a `constant`
    naming a node S lacks is an error. scalar_tensor carries the value in the call, with the
    constant's dtype: the same tensor, and lowering reads it as that number."""
    for node in list(gm.graph.nodes):
        if (node.op != "call_function" or node.target is not torch.ops.aten.lift_fresh_copy.default
                or node.args[0].op != "get_attr"):
            continue
        const = getattr(gm, node.args[0].target)
        if const.dim() != 0 or const.dtype.is_complex or not math.isfinite(const.item()):
            raise ValueError(f"trace: tensor constant {node.args[0].target} "
                             f"{tuple(const.shape)} has no GraphGuard form")
        with gm.graph.inserting_before(node):
            new = gm.graph.call_function(
                torch.ops.aten.scalar_tensor.default, (const.item(),),
                {"dtype": const.dtype, "layout": torch.strided, "device": const.device})
        new.meta = dict(node.meta)
        node.replace_all_uses_with(new)
        gm.graph.erase_node(node)
    for node in list(gm.graph.nodes):
        if node.op == "get_attr" and not node.users:
            gm.graph.erase_node(node)
    gm.graph.lint()
    gm.recompile()


def state_placement(t, what):
    """A parameter's or buffer's placement: gg_capture's mark (tp.py layers, tpmod.place), else
    its spmd_types type, else replicated."""
    if hasattr(t, "gg_placement"):
        return tpmod.placement(t)
    return spmd_placement(t, what) or ("replicate",)


def grad_placement(p, what):
    """The placement of a parameter's gradient as the joint capture returns it: the dual of its
    spmd_types type (spmd_placement) for a typed parameter, else tp.gradient_placement (all-reduced
    for a sequence-parallel mark, partial over the replicas of a grouped one, else the
    parameter's own)."""
    if not hasattr(p, "gg_placement") and not getattr(p, "gg_sequence_parallel", False):
        typed = spmd_placement(p, what, gradient=True)
        if typed:
            return typed
    return tpmod.gradient_placement(p)


def spmd_placement(t, what, gradient=False):
    """GraphGuard placement of a tensor typed by spmd_types (torchtitan's default SPMD backend
    tags each local parameter shard), or None for an untyped tensor.

    Per mesh axis spmd_types says R (replicated; its gradient is partial), I (invariant:
    replicated, gradient replicated too), P (partial; gradient replicated), V (varying) with a
    PartitionSpec naming the tensor dim the axis shards, or S(d). A tensor typed on more than one
    axis that is not R or I is refused: the capture is over one tensor-parallel group.
    With gradient, the placement of the gradient (spmd_types' duality: R <-> P, I -> I,
    a shard -> the same shard)."""
    runtime = sys.modules.get("spmd_types.runtime")
    if runtime is None or not runtime.has_local_type(t):
        return None
    import spmd_types as spmd
    spec = runtime.get_partition_spec(t)
    found = []
    for axis, kind in runtime.get_local_type(t).items():
        if kind is spmd.R:
            found.append(("partial",) if gradient else ("replicate",))
        elif kind is spmd.P:
            found.append(("replicate",) if gradient else ("partial",))
        elif isinstance(kind, spmd.Shard):
            found.append(("shard", kind.dim % t.dim()))
        elif kind is spmd.V:
            dims = [d for d, entry in enumerate(spec or ())
                    if entry == axis or (isinstance(entry, tuple) and axis in entry)]
            if len(dims) != 1 or isinstance(spec[dims[0]], tuple):
                raise ValueError(f"trace: {what}: spmd_types type V on {axis} with partition spec "
                                 f"{spec} is not a shard of one tensor dim by this axis alone")
            found.append(("shard", dims[0]))
    varied = [f for f in found if f != ("replicate",)]
    if len(varied) > 1:
        raise ValueError(f"trace: {what}: spmd_types types it on several mesh axes "
                         f"({runtime.get_local_type(t)}); only a 1-D tensor-parallel group is "
                         "captured")
    return varied[0] if varied else ("replicate",)


def _dense_order(size, stride):
    """For a view geometry (size, stride): (dims, sizes) with the view equal to
    permute(view(range, sizes), inverse of dims) over a contiguous range of prod(size) elements:
    the strides, taken in the order dims, are the row-major strides of sizes. None when the view
    overlaps or has gaps. A dim of size 1 reads one element whatever its stride: it keeps its
    place when the others are in order already, else it goes last."""
    moving = [d for d in range(len(size)) if size[d] != 1]
    ordered = sorted(moving, key=lambda d: -stride[d])
    dims = (list(range(len(size))) if ordered == moving else
            ordered + [d for d in range(len(size)) if size[d] == 1])
    expected = 1
    for d in reversed(ordered):
        if stride[d] != expected:
            return None
        expected *= size[d]
    return dims, [size[d] for d in dims]


def _on_meta(val):
    return torch.empty_strided(val.shape, val.stride(), dtype=val.dtype, device="meta")


def _contiguous_at_zero(val):
    return (isinstance(val, torch.Tensor) and val.is_contiguous()
            and val.storage_offset() == 0)


def plain_strided_views(gm):
    """Rewrite as_strided and as_strided_scatter whose geometry is a plain view of a contiguous
    tensor (a range of its elements, row-major in some order of the dims) with view, permute,
    slice and slice_scatter. Autograd's backward of an in-place write into a view (CopySlices:
    megatron's attention masks its scores with masked_fill_ on a view) and functionalization
    address the base through as_strided, whose value depends on the input's memory layout, which
    a value graph does not carry; the layout is known here (each node's FakeTensor), so the
    same elements are written as layout-free views. Other geometries are left as they are."""
    aten = torch.ops.aten
    for node in list(gm.graph.nodes):
        if node.op != "call_function" or node.target not in (aten.as_strided.default,
                                                             aten.as_strided_scatter.default):
            continue
        scatter = node.target is aten.as_strided_scatter.default
        base = node.args[0]
        rest = list(node.args[2 if scatter else 1:])
        size, stride = list(rest[0]), list(rest[1])
        offset = rest[2] if len(rest) > 2 else node.kwargs.get("storage_offset")
        val = base.meta.get("val")
        order = _dense_order(size, stride)
        if not _contiguous_at_zero(val) or order is None:
            continue
        start, count = offset or 0, math.prod(size)
        if start < 0 or start + count > val.numel():
            continue
        dims, sizes = order

        def call(op, *op_args):  # a new node, its value's type on the meta device (for fxjson)
            made = gm.graph.call_function(op, op_args)
            made.meta["stack_trace"] = node.meta.get("stack_trace")
            made.meta["val"] = op(*[_on_meta(a.meta["val"]) if isinstance(a, torch.fx.Node)
                                    else a for a in op_args])
            return made

        with gm.graph.inserting_before(node):
            flat = call(aten.view.default, base, [val.numel()])
            if not scatter:
                if count != val.numel():
                    flat = call(aten.slice.Tensor, flat, 0, start, start + count)
                new = call(aten.view.default, flat, sizes)
                if dims != sorted(dims):
                    new = call(aten.permute.default, new, [dims.index(d) for d in range(len(dims))])
            else:
                src = node.args[1]
                if dims != sorted(dims):
                    src = call(aten.permute.default, src, dims)
                src = call(aten.reshape.default, src, [count])
                if count != val.numel():
                    src = call(aten.slice_scatter.default, flat, src, 0, start, start + count)
                new = call(aten.view.default, src, list(val.shape))
        node.replace_all_uses_with(new)
        gm.graph.erase_node(node)
    gm.graph.eliminate_dead_code()
    gm.graph.lint()
    gm.recompile()


def _scalar_constants(gm):
    if any(n.target is torch.ops.aten.lift_fresh_copy.default for n in gm.graph.nodes):
        scalar_constants(gm)  # `t[mask] = 0` (megatron-core's vocab-parallel cross entropy)


def _writes(node):
    """Whether node is an ATen operator that writes its first argument or an out= tensor."""
    if node.op != "call_function" or not isinstance(node.target, torch._ops.OpOverload):
        return False
    schema = node.target._schema
    return any(a.alias_info is not None and a.alias_info.is_write for a in schema.arguments)


def _trace(program, tp, mode, groups, rank=0):
    torch.manual_seed(0)
    model = shims.annotate(program.build(tp))  # placements a library records its own way
    # eval mode (dropout off), unless the program computes something in training only (the
    # load-balancing loss megatron-core's MoE router attaches): it says `training` and turns its
    # dropout off itself
    model.train(getattr(program, "training", False))
    if _holds_dtensor(model):
        return _trace_dtensor_model(program, model, tp, mode, groups, rank)
    data = program.data(tp)
    named = list(model.named_parameters())
    names = [n for n, _ in named]
    params = [p for _, p in named]
    # buffers (rotary inv_freq) are inputs too, replicated unless spmd_types typed them otherwise:
    # as graph constants they would be opaque and differ between S and D
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
    gm = _make_fx(step, args, values=getattr(program, "live_collectives", False))
    gm = value_graph(gm, args)
    if groups is None:
        groups = _process_groups(gm)
    input_names = [sanitize(n) for n in names] + [sanitize(n) for n, _ in buffers] + data_names
    graph = fxjson.graph_to_json(gm, rank, input_names)
    param_placements = {sanitize(n): state_placement(t, n) for n, t in named + buffers}
    data_placements = {k: program.data_placement(k) for k in data_names}
    if mode == "fwd":
        out_places = program.output_placements()
    else:
        # the loss as the program places its first output (replicated, or a rank's share of
        # it: partial), then the gradients
        out_places = [program.output_placements()[0]] + [grad_placement(p, n) for n, p in named]
    traced = Traced(graph, input_names, param_placements, data_placements, out_places, groups)
    traced.spec_group = getattr(program, "spec_group", None)
    traced.output_group = getattr(program, "output_group", None)
    if getattr(program, "live_collectives", False):  # the values the graph's shapes follow from
        traced.values = {n: a.detach() for n, a in zip(input_names, args)}
    return traced


# ---- DTensor programs (parallelize_module) ---------------------------------------------------
#
# How a parallelize_module'd model is traced into per-rank ATen graphs (torch 2.13):
#  - the DeviceMesh is built over the fake process group (init_device_mesh("cpu", (world,)) reuses
#    the default group, "0"); parallelize_module then holds DTensor parameters whose local shards
#    distribute_tensor cut without communicating (Shard) or broadcast (Replicate; a no-op here);
#  - make_fx is given the parameters' *local* tensors as plain placeholders, and step() wraps them
#    with DTensor.from_local(placements, global shape and stride) before functional_call. Given a
#    DTensor placeholder, make_fx (torch 2.13) records the wrapper's own op (aten.t of the
#    DTensor) and bakes its local shard into the graph as a _tensor_constant: the parameter
#    would not be an input. Wrapping inside the traced function makes DTensor's dispatch run
#    under the proxy mode on proxied local tensors, so what is recorded is the local ATen ops
#    DTensor's sharding propagation issues plus its redistributions, which call
#    torch.distributed's functional collectives (funcol): _c10d_functional.all_reduce /
#    all_gather_into_tensor / reduce_scatter_tensor + wait_tensor, naming the mesh's group;
#  - loss_parallel() is entered around the forward and the autograd.grad call (its custom
#    cross-entropy handlers run in both), so the vocabulary-parallel loss is DTensor's own;
#  - gradients are taken with respect to the from_local DTensors, so each gradient keeps the
#    placement DTensor computed (Shard like the parameter, Partial for a Replicate parameter used
#    on sequence shards, Replicate for the vocabulary-parallel embedding's dense gradient): the
#    relation spec states what the program holds, not what an optimizer would make of it.
# The sequential program (world 1) is the same model without parallelize_module.


def dtensor_placement(placements, ndim, what):
    """GraphGuard placement of a 1-D-mesh DTensor placement list (spec.rule's form) of a tensor
    with ndim dimensions."""
    from torch.distributed.tensor import Partial, Replicate, Shard
    if len(placements) != 1:
        raise ValueError(f"trace: {what}: {len(placements)}-D mesh placements {placements} "
                         "(only a 1-D tensor-parallel mesh is captured)")
    p = placements[0]
    if isinstance(p, Replicate):
        return ("replicate",)
    if type(p) is Shard:
        return ("shard", p.dim % ndim if ndim else p.dim)
    if isinstance(p, Partial) and p.reduce_op == "sum":
        return ("partial",)
    raise ValueError(f"trace: {what}: placement {p} has no relation rule")


def _clear_dtensor_caches():
    """Forget DTensor's sharding decisions from an earlier rank's capture in this process.

    DeviceMesh equality ignores the current rank, so the sharding-propagation caches (C++ fast
    path and Python LRU) hand rank r an output spec whose mesh is the one of the rank traced
    first: loss_parallel's nll_loss then masks targets with rank 0's vocabulary offset on every
    rank (seen on torch 2.13: rank 1 compared its targets with [0, 32) instead of [32, 64))."""
    from torch.distributed.tensor import _redistribute
    from torch.distributed.tensor.debug import _clear_sharding_prop_cache
    _clear_sharding_prop_cache()
    _redistribute._gen_transform_infos.cache_clear()


def dtensor_trace(program, tp, mode, groups, rank=0):
    """Capture a program whose build(tp) applies parallelize_module on tp.mesh (made here)."""
    if tp.size > 1:
        from torch.distributed.device_mesh import init_device_mesh
        tp.mesh = init_device_mesh("cpu", (tp.size,))
    torch.manual_seed(0)
    model = program.build(tp)
    model.train(False)
    return _trace_dtensor_model(program, model, tp, mode, groups, rank)


def _holds_dtensor(model):
    """Whether a parameter or buffer of model is a DTensor (a program that parallelized itself,
    e.g. torchtitan's Module.parallelize under its partial_dtensor backend)."""
    if "torch.distributed.tensor" not in sys.modules:
        return False
    from torch.distributed.tensor import DTensor
    return any(isinstance(t, DTensor) for t in (*model.parameters(), *model.buffers()))


def _trace_dtensor_model(program, model, tp, mode, groups, rank):
    """Trace a built model holding DTensor parameters and buffers (the comment above)."""
    from torch.distributed.tensor import DTensor
    data = program.data(tp)
    named = list(model.named_parameters())
    names = [n for n, _ in named]
    buffers = list(model.named_buffers())
    buffer_names = [n for n, _ in buffers]
    # (mesh, placements, global shape, global stride) of a DTensor parameter or buffer (the RoPE
    # cache of a parallelized torchtitan model: a typed input, not a baked-in constant); None: a
    # plain tensor
    states = [t for _, t in named] + [t for _, t in buffers]
    specs = [(t.device_mesh, t.placements, t.shape, t.stride()) if isinstance(t, DTensor)
             else None for t in states]
    meshes = [s[0] for s in specs if s is not None]
    mesh = getattr(tp, "mesh", None) or (meshes[0] if meshes else None)
    data_names = list(data)
    out_places = []

    def local(value, what):
        if isinstance(value, DTensor):
            if value.device_mesh.get_coordinate() != mesh.get_coordinate():
                raise ValueError(f"trace: {what} is on the mesh of another rank (a stale DTensor "
                                 "sharding cache)")
            out_places.append(dtensor_placement(value.placements, value.dim(), what))
            return value.to_local()
        out_places.append(("replicate",))  # a plain tensor: every rank's own (replicated) value
        return value

    def step(*flat):
        nb = len(states)
        wrapped = [x if s is None else
                   DTensor.from_local(x, s[0], s[1], run_check=False, shape=s[2], stride=s[3])
                   for s, x in zip(specs, flat[:nb])]
        p = dict(zip(names + buffer_names, wrapped))
        d = dict(zip(data_names, flat[nb:]))
        out_places.clear()
        with program.loss_context(tp):
            outs = torch.func.functional_call(model, p, (), d, tie_weights=True, strict=True)
            results = [local(outs[0], "loss")]
            if mode == "fwd":
                results += [local(o, f"output #{k}") for k, o in enumerate(outs[1:], 1)]
            else:
                grads = torch.autograd.grad(outs[0], wrapped[:len(names)])
                results += [local(g, f"gradient of {n}") for n, g in zip(names, grads)]
        return tuple(results)

    args = [(t.to_local() if isinstance(t, DTensor) else t).detach().clone() for t in states]
    for a in args[:len(names)]:
        a.requires_grad_(mode == "joint")
    args += [data[k] for k in data_names]
    gm = _make_fx(step, args)
    gm = value_graph(gm, args)
    if groups is None:
        groups = _process_groups(gm)
    input_names = [sanitize(n) for n in names + buffer_names] + data_names
    graph = fxjson.graph_to_json(gm, rank, input_names)
    param_placements = {sanitize(n): ("replicate",) if s is None else
                        dtensor_placement(s[1], len(s[2]), n)
                        for n, s in zip(names + buffer_names, specs)}
    data_placements = {k: program.data_placement(k) for k in data_names}
    return Traced(graph, input_names, param_placements, data_placements, list(out_places), groups)
