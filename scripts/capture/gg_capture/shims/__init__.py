"""Shims that let real tensor-parallel libraries run, and be traced, on the CPU over the fake
process group. gg_capture applies them itself (trace.trace_rank, api.UserProgram), never the
user's factory, and only for a library the captured program has imported:

  rank(world)      around one captured rank (the factory call and the trace; world 1 is S):
                   applies each loaded library's shims and enters its per-rank context
  annotate(model)  on the module built for a rank: placements from the library's own parameter
                   attributes

One module per library, each with MODULE (the module whose import loaded() looks for),
loaded(), apply(), rank(world), layers(model) and mark_placements(model):
megatron.py (megatron-core; its docstring lists every obstacle and what is done about it);
transformers.py (transformers' TP layers' in-place all-reduce of their no_grad fast path).
"""
import contextlib

from . import megatron, transformers

_LIBRARIES = (megatron, transformers)


def loaded():
    """The libraries the program has imported (their shims apply)."""
    return [lib for lib in _LIBRARIES if lib.loaded()]


def modules():
    """The module names by which the loaded libraries are recognized: a rank traced in a process
    of its own (trace.trace_ranks) imports them before its factory call, so their shims apply
    there as in this process."""
    return [lib.MODULE for lib in loaded()]


@contextlib.contextmanager
def rank(world):
    with contextlib.ExitStack() as stack:
        for lib in loaded():
            lib.apply()
            stack.enter_context(lib.rank(world))
        yield


def layers(model):
    """What the model's tensor-parallel layers are, when a library built them ("megatron-core
    0.19.2's tensor-parallel layers"); None otherwise."""
    for lib in loaded():
        named = lib.layers(model)
        if named:
            return named
    return None


def annotate(model):
    for lib in loaded():
        lib.mark_placements(model)
    return model
