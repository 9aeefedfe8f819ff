"""FSDP2's own `torch.distributed.fsdp.fully_shard`, captured as a value graph GraphGuard reads.

What make_fx records for a fully_shard model on the fake process group (torch 2.13), and what
this module does with it:

  - Parameters. FSDP2 keeps each parameter's padded local shard in `FSDPParam._sharded_param_data`
    (a flat tensor made at fully_shard time) and reads it as the all-gather input; traced as is
    it would be a graph constant. `hold` sets it, inside the traced step, to the traced input (the
    rank's Shard(0) rows, padded with zero rows to FSDP2's padded shard size when dim 0 does not
    divide by the DP size, as fully_shard pads), so every parameter is a graph input. FSDP2's
    lazy initialization, which would reset it, is run before tracing (`lazy_init`).
  - Unsharded parameters. After the all-gather FSDP2 copies each parameter's rows out of the flat
    buffer into a per-parameter buffer (`fsdp.split_with_sizes_copy(..., out=[...])`) and sets on
    the module an `nn.Parameter` that aliases that buffer's storage, made once and refilled by
    later all-gathers. make_fx cannot follow an nn.Parameter made from a traced tensor: it would
    be a graph constant, cut from the all-gather. `traceable_unsharded_params` makes it the
    detached, grad-requiring `as_strided` view of the buffer (the same storage, the same leaf
    for autograd and for FSDP2's post-backward, which reads its `.grad`): a traced tensor.
  - The flat buffers and in-place collectives. `value_graph` rewrites what FSDP2's
    _fsdp_collectives records into values, each write's later readers reading the new value:
    `fsdp.all_gather_copy_in` (the rank's flat input: the concatenated shards),
    `c10d._allgather_base_` (an in-place all-gather into the flat output buffer: funcol
    `all_gather_into_tensor` + `wait_tensor`), `fsdp.split_with_sizes_copy(out=)` (each
    parameter's columns of the gathered [world, numel] buffer), `fsdp.chunk_cat(out=)` (each
    gradient cut into `world` row chunks, zero-padded, chunk i of every gradient in row i) and
    `c10d._reduce_scatter_base_` (funcol `reduce_scatter_tensor` + `wait_tensor` with FSDP2's
    reduce op: AVG by default, SUM, or PREMUL_SUM(f) as a multiplication by f then SUM; f = 1,
    torchtitan's disable_fsdp_gradient_division, is SUM: x * 1.0 is x exactly). An
    operator reading a view of a buffer taken before a later write reads the view taken again
    over the new value, as the shared storage gives it (the backward reads the parameter that
    the backward's all-gather refilled). A buffer read before the collective or copy that
    writes it, an asynchronous collective (async_op=True) or a Work that is read are refused:
    the value graph would hold what a real machine does not compute there.
"""
import contextlib
import operator

import torch
import torch.distributed as dist

from . import pipeline

aten = torch.ops.aten
funcol = torch.ops._c10d_functional


def fsdp_params(model):
    """The FSDPParam of every parameter of a fully_shard model, in named_parameters() order."""
    by_id = {id(fp.sharded_param): fp for g in _param_groups(model) for fp in g.fsdp_params}
    named = list(model.named_parameters())
    missing = [n for n, p in named if id(p) not in by_id]
    if missing:
        raise ValueError(f"fsdp2: parameters no fully_shard manages: {', '.join(missing)}")
    return [by_id[id(p)] for _, p in named]


def lazy_init(model):
    """FSDP2's lazy initialization (root state, sharded parameter data), run before tracing so
    that it does not reset what `hold` sets inside the traced step."""
    model._get_fsdp_state()._lazy_init()


def local_shard(fp):
    """The rank's rows of the parameter (its DTensor's local tensor, unpadded), a fresh tensor."""
    return fp.sharded_param.to_local().detach().clone()


def hold(params, locals_):
    """Make each FSDPParam's all-gather input the traced local shard (padded with zero rows to
    FSDP2's padded shard size where dim 0 does not divide by the DP size)."""
    for fp, x in zip(params, locals_):
        if fp.fsdp_placement.dim != 0:
            raise ValueError(f"fsdp2: {fp._module_info.param_name}: fully_shard on dim "
                             f"{fp.fsdp_placement.dim}; only Shard(0) is captured")
        padded = fp.padded_sharded_param_size
        if x.shape[0] != padded[0]:
            x = torch.cat([x, x.new_zeros([padded[0] - x.shape[0], *x.shape[1:]])])
        fp._sharded_param_data = x.reshape(-1)


@contextlib.contextmanager
def traceable_unsharded_params():
    """FSDPParam.init_unsharded_param making the unsharded parameter a traced tensor (above)."""
    from torch.distributed.fsdp._fully_shard._fsdp_param import FSDPParam
    original = FSDPParam.init_unsharded_param

    def init_unsharded_param(self):
        if hasattr(self, "_unsharded_param"):  # refilled in place by a later all-gather
            return original(self)
        if (hasattr(self._sharded_local_tensor, "fsdp_post_all_gather")
                or len(self.all_gather_outputs) != 1):
            raise ValueError("fsdp2: a tensor subclass with fsdp_pre/post_all_gather "
                             "(float8, NF4) is not captured")
        unsharded = torch.as_strided(self.all_gather_outputs[0], self._orig_size,
                                     self._contiguous_orig_stride, storage_offset=0)
        unsharded = unsharded.detach()
        if self._unsharded_dtensor_spec is not None:  # a TP (DTensor) parameter
            from torch.distributed.tensor import DTensor
            spec = self._get_unsharded_dtensor_spec(unsharded)
            unsharded = DTensor.from_local(unsharded, spec.mesh, spec.placements,
                                           run_check=False, shape=spec.shape,
                                           stride=spec.stride)
        self._unsharded_param = unsharded.requires_grad_(self.sharded_param.requires_grad)

    FSDPParam.init_unsharded_param = init_unsharded_param
    try:
        yield
    finally:
        FSDPParam.init_unsharded_param = original


_VIEWS = (aten.view.default, aten._unsafe_view.default, aten.as_strided.default,
          aten.detach.default, aten.alias.default)


def _base(node):
    """The tensor a chain of views starts from."""
    while node.op == "call_function" and node.target in _VIEWS:
        node = node.args[0]
    return node


def _group(gm, node):
    pg = dist.ProcessGroup.unbox(getattr(gm, node.target))
    return pg.group_name, pg.size()


def _reduce(gm, node, divide_factors):
    """(funcol reduce op, premultiplier or None) of a c10d ReduceOp torchbind argument. The
    torchbind ReduceOp shows its kind only; PREMUL_SUM's factor is FSDP2's 1 / gradient divide
    factor (set_gradient_divide_factor), read from the param groups (`divide_factors`)."""
    kinds = {int(v): k for k, v in dist.ReduceOp.RedOpType.__members__.items()}
    name = kinds.get(int(getattr(gm, node.target).op()), "?")
    if name in ("SUM", "AVG"):
        return name.lower(), None
    if name == "PREMUL_SUM" and len(divide_factors) == 1:
        return "sum", 1.0 / next(iter(divide_factors))
    raise ValueError(f"fsdp2: reduce-scatter with reduce op {name} (divide factors "
                     f"{sorted(divide_factors)}) is not captured")


def divide_factors(model):
    """The gradient divide factors set on the fully_shard modules of model (none: FSDP2's
    default, the DP size through ReduceOp.AVG)."""
    return {g.gradient_divide_factor for g in _param_groups(model)
            if g.gradient_divide_factor is not None}


def _param_groups(model):
    from torch.distributed.fsdp import FSDPModule
    groups = [m._get_fsdp_state()._fsdp_param_group for m in model.modules()
              if isinstance(m, FSDPModule)]
    return [g for g in groups if g is not None]


class _Builder:
    """New nodes before `at`, each with its value (meta "val", on the meta device) for fxjson."""

    def __init__(self, gm, at):
        self.gm, self.at = gm, at

    def __call__(self, op, *args, **kwargs):
        with self.gm.graph.inserting_before(self.at):
            node = self.gm.graph.call_function(op, args, kwargs)
        node.meta["stack_trace"] = self.at.meta.get("stack_trace")
        meta = [_meta(a) for a in args]
        node.meta["val"] = op(*meta, **{k: _meta(v) for k, v in kwargs.items()})
        return node


def _meta(a):
    if isinstance(a, torch.fx.Node):
        v = a.meta["val"]
        return torch.empty_strided(v.shape, v.stride(), dtype=v.dtype, device="meta")
    if isinstance(a, (list, tuple)):
        return type(a)(_meta(x) for x in a)
    return a


def _getitems(node):
    return {u.args[1]: u for u in node.users if u.target is operator.getitem}


def value_graph(gm, factors=frozenset()):
    """Rewrite FSDP2's flat buffers and in-place collectives as values (the module docstring)."""
    c10d, fsdp = torch.ops.c10d, torch.ops.fsdp
    current = {}  # buffer (a fresh aten.empty) -> the node holding its value now
    dead = []

    def fresh(node, what):
        base = _base(node)
        if base.op != "call_function" or base.target is not aten.empty.memory_format:
            raise ValueError(f"fsdp2: {what} writes into {base.name}, not a buffer of its own")
        if (node is not base and node.target is not aten.view.default) or \
                node.meta["val"].numel() != base.meta["val"].numel():
            raise ValueError(f"fsdp2: {what} writes through {node.name}, not a whole-buffer view")
        return base

    writers = (fsdp.all_gather_copy_in.default, c10d._allgather_base_.default,
               fsdp.split_with_sizes_copy.default, fsdp.chunk_cat.default,
               c10d._reduce_scatter_base_.default)

    def out_args(node):
        if node.target in (fsdp.split_with_sizes_copy.default, fsdp.chunk_cat.default):
            out = node.kwargs["out"]
            return list(out) if isinstance(out, (list, tuple)) else [out]
        if node.target in (c10d._allgather_base_.default, c10d._reduce_scatter_base_.default):
            return [node.args[0]]
        return []

    # all_gather_copy_in's second result is its flat output buffer (the rank's slot filled),
    # which only the all-gather that overwrites it may read: read as the buffer itself
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target is fsdp.all_gather_copy_in.default:
            slot = _getitems(node).get(1)
            if slot is None:
                continue
            for user in slot.users:
                if user.target is not c10d._allgather_base_.default or user.args[0] is not slot:
                    raise ValueError(f"fsdp2: {user.name} reads the all-gather buffer before "
                                     "the all-gather writes it")
            slot.replace_all_uses_with(node.args[1])

    # the buffers FSDP2's ops write, and the views that only name a write's destination
    destinations = {a for n in gm.graph.nodes if n.op == "call_function" and n.target in writers
                    for a in out_args(n)}
    buffers = {_base(a) for a in destinations}

    generation = {}  # buffer -> how many writes it has had
    views = {}  # a view (chain) of a buffer -> (the buffer, its generation when taken)

    def rebuilt(view, build):
        """The view chain `view` taken again over its buffer's current value."""
        if view not in views:
            return None
        source = rebuilt(view.args[0], build)
        if source is None:
            source = current[views[view][0]]
        return build(view.target, source, *view.args[1:], **view.kwargs)

    for node in list(gm.graph.nodes):
        if node.op != "call_function" or node in destinations:
            continue
        if node.target not in writers and node.target is not operator.getitem:
            # a reader of a buffer reads the value its last write left (a read before any write
            # is refused); a view of it is a view of that value, and an operator reading a view
            # taken before a later write reads it taken again over the new value, as the
            # shared storage gives it on a real machine (FSDP2's parameter refilled by the
            # backward's all-gather)
            is_view = node.target in _VIEWS
            for inp in node.all_input_nodes:
                if inp in buffers:
                    if inp not in current:
                        raise ValueError(f"fsdp2: {node.name} reads the buffer {inp.name} "
                                         "before the collective or copy that writes it")
                    node.replace_input_with(inp, current[inp])
                    if is_view:
                        views[node] = (inp, generation[inp])
                elif inp in views:
                    base, gen = views[inp]
                    if is_view:
                        views[node] = (base, gen)
                    elif gen != generation[base]:
                        node.replace_input_with(inp, rebuilt(inp, _Builder(gm, node)))
            continue
        build = _Builder(gm, node)
        if node.target is fsdp.all_gather_copy_in.default:
            inputs, buffer = node.args[0], node.args[1]
            items = _getitems(node)
            flat = build(aten.cat.default, [build(aten.view.default, x, [-1]) for x in inputs])
            if 0 in items:
                items[0].replace_all_uses_with(flat)
            dead += [node] + list(items.values())
        elif node.target in (c10d._allgather_base_.default, c10d._reduce_scatter_base_.default):
            gather = node.target is c10d._allgather_base_.default
            out, inp, pg = node.args[:3]
            at = 3 if gather else 4  # async_op (schema default True)
            if len(node.args) <= at or node.args[at]:
                raise ValueError(f"fsdp2: {node.name}: an asynchronous in-place collective "
                                 "(async_op=True); its Work's wait is not read")
            items = _getitems(node)
            if 1 in items and items[1].users:
                raise ValueError(f"fsdp2: {node.name}'s Work is read")
            group, size = _group(gm, pg)
            base = _base(inp)
            if base in buffers:
                if base not in current or inp is not base:
                    raise ValueError(f"fsdp2: {node.name} reads the buffer {base.name} before "
                                     "the copy that writes it, or through an older view")
                inp = current[base]
            if gather:
                result = build(funcol.all_gather_into_tensor.default, inp, size, group)
            else:
                reduce, factor = _reduce(gm, node.args[3], factors)
                if factor is not None and factor != 1.0:  # x * 1.0 is x, exactly
                    inp = build(aten.mul.Tensor, inp, factor)
                result = build(funcol.reduce_scatter_tensor.default, inp, reduce, size, group)
            value = build(funcol.wait_tensor.default, result)
            if 0 in items:
                items[0].replace_all_uses_with(value)
            written = fresh(out, node.name)
            current[written], generation[written] = value, generation.get(written, 0) + 1
            dead += [node] + list(items.values())
        elif node.target is fsdp.split_with_sizes_copy.default:
            gathered, sizes = node.args[0], node.args[1]
            dim = node.args[2] if len(node.args) > 2 else node.kwargs.get("dim", 0)
            start = 0
            for size, out in zip(sizes, node.kwargs["out"]):
                piece = build(aten.slice.Tensor, gathered, dim, start, start + size)
                start += size
                base = fresh(out, node.name)
                copy = build(aten.clone.default, piece, memory_format=torch.contiguous_format)
                current[base] = build(aten.view.default, copy, list(base.meta["val"].shape))
                generation[base] = generation.get(base, 0) + 1
            dead.append(node)
        elif node.target is fsdp.chunk_cat.default:
            tensors, dim, chunks = node.args
            if dim != 0:
                raise ValueError(f"fsdp2: {node.name}: chunk_cat on dim {dim}; only dim 0 "
                                 "(Shard(0)) is captured")
            rows = []
            for t in tensors:
                shape = list(t.meta["val"].shape)
                pad = -shape[0] % chunks
                if pad:
                    t = build(aten.cat.default, [t, build(aten.new_zeros.default, t,
                                                          [pad, *shape[1:]])])
                rows.append(build(aten.view.default, t, [chunks, -1]))
            value = build(aten.cat.default, rows, 1)
            base = fresh(node.kwargs["out"], node.name)
            current[base] = build(aten.view.default, value, list(base.meta["val"].shape))
            generation[base] = generation.get(base, 0) + 1
            dead.append(node)
    for node in reversed(dead):
        gm.graph.erase_node(node)
    pipeline.drop_profiler_markers(gm)
    gm.graph.eliminate_dead_code()
    for node in list(gm.graph.nodes):
        if node.op == "get_attr" and not node.users:
            gm.graph.erase_node(node)
    gm.graph.lint()
    gm.recompile()
    return gm
