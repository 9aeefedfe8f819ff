"""transformers' tensor-parallel layers (transformers.distributed.tensor_parallel) on the fake
process group.

With gradients enabled their forward runs on DTensors, whose redistributions are functional
collectives: nothing to do. Under torch.no_grad() (inference, e.g. generate()) the colwise and
rowwise Linear layers take a local fast path instead: local weights, and the rowwise partial sums
reduced by torch.distributed.all_reduce(output, group=...) in place, which make_fx records as
c10d.allreduce_ holding a ProcessGroup object (no value semantics; the captured graph cannot even
be copied). apply() points the `dist` those modules call (tensor_parallel.dist and
parallel_utils.dist, the latter's _AllReduceForward/_AllReduceBackward) at
functional_dist.module(): torch.distributed with its in-place collectives written as functional
ones. The placements come from the DTensor parameters as usual (trace._trace_dtensor_model).
"""
import contextlib
import sys

from . import functional_dist

_MODULES = ("transformers.distributed.tensor_parallel", "transformers.distributed.parallel_utils")


MODULE = _MODULES[0]  # what loaded() looks for


def loaded():
    """Whether the running program has imported transformers' tensor-parallel layers."""
    return MODULE in sys.modules


def apply():
    """Install the functional collectives into transformers' TP modules (idempotent; a capture
    process only)."""
    for name in _MODULES:
        module = sys.modules.get(name)
        installed = getattr(getattr(module, "dist", None), "__name__", "")
        if module is not None and installed != "gg_capture.functional_dist":
            module.dist = functional_dist.module()


def rank(world):
    """Nothing per rank: the DTensor mesh is the capture's."""
    return contextlib.nullcontext()


def layers(model):
    """None: the DTensor parameters say what is sharded."""
    return None


def mark_placements(model):
    return model
