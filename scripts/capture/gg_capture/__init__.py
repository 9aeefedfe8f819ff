"""gg_capture: capture PyTorch programs (sequential and tensor-parallel) as GraphGuard JSON v1.

Modules: fakedist (one fake process group per captured rank), fxjson (ATen FX graph -> JSON),
tp (Megatron-style tensor-parallel layers that record their sharding), trace (make_fx of the
forward or joint forward+backward function), spec (relation spec derived from the sharding),
api (a user's own program: capture(), `graphguard-capture MODULE:FACTORY`; the factory contract
is in its docstring), models (the programs the corpus and the bug benchmark capture; registry
names them), shims (what real libraries need to run on the CPU over the fake group: torchtitan,
megatron-core).

    import gg_capture
    gg_capture.capture("mypkg.model:build", tp=2, mode="fwd", out_dir="/tmp/mine", layers=2)

jax_capture (`graphguard-capture jax`) needs jax, not torch: the names below load their torch
modules on first use (PEP 562), so `import gg_capture` itself imports no framework.
"""
import importlib

from .factory import CaptureError  # noqa: F401

_LAZY = {"Model": "api", "capture": "api"}
_LAZY.update((name, "tp") for name in (
    "TP", "ColumnParallelLinear", "RowParallelLinear", "VocabParallelEmbedding", "copy_to_tp",
    "gather_from_sp", "place", "reduce_from_tp", "reduce_scatter_to_sp", "scatter_to_sp",
    "sequence_parallel", "shard", "vocab_parallel_cross_entropy"))


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module 'gg_capture' has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
