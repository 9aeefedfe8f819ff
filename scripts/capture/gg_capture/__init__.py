"""gg_capture: capture PyTorch programs (sequential and tensor-parallel) as GraphGuard JSON v1.

Modules: fakedist (one fake process group per captured rank), fxjson (ATen FX graph -> JSON),
tp (Megatron-style tensor-parallel layers that record their sharding), trace (make_fx of the
forward or joint forward+backward function), spec (relation spec derived from the sharding),
api (a user's own program: capture(), `graphguard-capture MODULE:FACTORY`; the factory contract
is in its docstring), models (the programs the corpus and the bug benchmark capture; registry
names them).

    import gg_capture
    gg_capture.capture("mypkg.model:build", tp=2, mode="fwd", out_dir="/tmp/mine", layers=2)
"""
from .api import CaptureError, Model, capture  # noqa: F401
from .tp import (TP, ColumnParallelLinear, RowParallelLinear, VocabParallelEmbedding,  # noqa: F401
                 copy_to_tp, gather_from_sp, place, reduce_from_tp, reduce_scatter_to_sp,
                 scatter_to_sp, sequence_parallel, shard, vocab_parallel_cross_entropy)
