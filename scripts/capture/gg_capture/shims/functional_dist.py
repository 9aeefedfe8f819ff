"""torch.distributed's in-place collectives written with the functional collectives.

Libraries call torch.distributed.all_reduce(t) / all_gather_into_tensor(out, t) /
reduce_scatter_tensor(out, t), which make_fx records as c10d.allreduce_ & co.: no value semantics,
and GraphGuard reads _c10d_functional. Each function here has the same signature and computes the
functional collective, then copy_'s it into the destination, which trace.out_of_place turns into
a value (aten.copy). async_op=True gets a handle whose wait() is a no-op (the value is in place
already). A group of one rank emits no collective (the sequential program S has none). As
c10d's does, all_reduce passes a gradient through unreduced (_ReducedValueOnly).
module() is torch.distributed with these in place of its own, for libraries that take a dist
module (spmd_types.set_dist); shims/megatron.py installs them into megatron-core.
"""
import types

import torch

_OPS = {"SUM": "sum", "MAX": "max", "MIN": "min", "AVG": "avg", "PRODUCT": "product"}


def _op_name(op):
    import torch.distributed as dist
    if op is None:
        return "sum"
    for name, value in _OPS.items():
        if op == getattr(dist.ReduceOp, name):
            return value
    raise ValueError(f"functional_dist: reduce op {op} has no functional collective")


def _group(group):
    """(the process group, its size)."""
    import torch.distributed as dist
    group = group or dist.group.WORLD
    return group, dist.get_world_size(group)


class _Done:
    """The work handle of an async_op=True call: the value is already in place (the functional
    collective and its copy_ are recorded where the call is), so wait() has nothing to do."""

    def wait(self):
        return True


def _handle(async_op):
    return _Done() if async_op else None


def _gather(x, dim, group):
    import torch.distributed._functional_collectives as fc
    group, size = _group(group)
    if size == 1:
        return x
    gather = getattr(fc, "all_gather_single", fc.all_gather_tensor)  # torch 2.13's name
    return gather(x.contiguous(), dim, group)


class _ReducedValueOnly(torch.autograd.Function):
    """The functional all_reduce with torch.distributed.all_reduce's gradient: c10d's in-place
    collective has no autograd formula, so autograd passes the gradient through it unchanged
    (the value is reduced, its gradient is not; torch warns "an autograd kernel was not
    registered"). The functional collective's own derivative all-reduces the gradient, which
    would trace a program that calls torch.distributed.all_reduce on a tensor that needs a
    gradient (ms-swift's vocabulary-parallel log-probabilities before its PR #9947) as one that
    it is not."""

    @staticmethod
    def forward(ctx, tensor, op, group):
        import torch.distributed._functional_collectives as fc
        return fc.all_reduce(tensor, op, group)

    @staticmethod
    def backward(ctx, grad):
        return grad, None, None


def all_reduce(tensor, op=None, group=None, async_op=False):
    import torch.distributed._functional_collectives as fc
    group, size = _group(group)
    if size > 1:
        if torch.is_grad_enabled() and tensor.requires_grad:
            tensor.copy_(_ReducedValueOnly.apply(tensor, _op_name(op), group))
        else:
            tensor.copy_(fc.all_reduce(tensor, _op_name(op), group))
    return _handle(async_op)


def all_gather_into_tensor(output, input_, group=None, async_op=False):
    output.copy_(_gather(input_, 0, group))
    return _handle(async_op)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """torch.distributed.all_gather: every rank's tensor into tensor_list (same shapes)."""
    gathered = _gather(tensor, 0, group)
    for k, piece in enumerate(torch.chunk(gathered, len(tensor_list), dim=0)):
        tensor_list[k].copy_(piece.view_as(tensor_list[k]))
    return _handle(async_op)


def reduce_scatter_tensor(output, input_, op=None, group=None, async_op=False):
    import torch.distributed._functional_collectives as fc
    group, size = _group(group)
    scatter = getattr(fc, "reduce_scatter_single", fc.reduce_scatter_tensor)
    output.copy_(scatter(input_.contiguous(), _op_name(op), 0, group) if size > 1 else input_)
    return _handle(async_op)


def all_to_all_single(output, input_, output_split_sizes=None, input_split_sizes=None,
                      group=None, async_op=False):
    import torch.distributed._functional_collectives as fc
    group, size = _group(group)
    output.copy_(fc.all_to_all_single(input_.contiguous(), output_split_sizes,
                                      input_split_sizes, group) if size > 1 else input_)
    return _handle(async_op)


# torch.distributed's names (and older aliases) of the collectives above
REPLACEMENTS = {"all_reduce": all_reduce, "all_gather": all_gather,
                "all_gather_into_tensor": all_gather_into_tensor,
                "_all_gather_base": all_gather_into_tensor,
                "reduce_scatter_tensor": reduce_scatter_tensor,
                "_reduce_scatter_base": reduce_scatter_tensor,
                "all_to_all_single": all_to_all_single}


def module():
    """A module that is torch.distributed except for the collectives above."""
    import torch.distributed as dist
    wrapped = types.ModuleType("gg_capture.functional_dist")
    wrapped.__dict__.update({k: v for k, v in vars(dist).items() if not k.startswith("__")})
    wrapped.__dict__.update(REPLACEMENTS)
    return wrapped
