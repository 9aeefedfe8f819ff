"""Check torchtitan's own Llama3 with GraphGuard (README "Check your own model", torchtitan).

    graphguard-capture examples/torchtitan/llama3.py:build --tp 2 --mode joint --set sp=true \
        -o /tmp/titan
    build/graphguard verify --seq /tmp/titan/seq.json --dist /tmp/titan/dist.json \
        --relations /tmp/titan/spec.rel

torchtitan's debugmodel flavor, cut to `layers` layers, its RoPE cache sized to the sequence (what
torchtitan's Trainer does for training.seq_len). gg_capture.shims.torchtitan runs it on the CPU:
flex attention as SDPA on its mask, spmd_types' collectives as functional ones (see its docstring).
"""
import dataclasses

import torch
from torchtitan.components.loss import CrossEntropyLoss
from torchtitan.models.llama3 import llama3_configs
from torchtitan.models.llama3.sharding import set_llama3_sharding_config

from gg_capture.shims import torchtitan as titan


def build(tp, sp=False, backend="spmd_types", layers=1, seq=8):
    titan.apply()                                        # before torchtitan builds anything
    cfg = llama3_configs["debugmodel"](attn_backend="flex")
    cfg.layers = cfg.layers[:layers]
    for layer in cfg.layers:
        layer.attention.rope = dataclasses.replace(layer.attention.rope, max_seq_len=seq)
    set_llama3_sharding_config(cfg, enable_sp=sp)        # torchtitan's TP/SP plan
    model = cfg.build()
    model.init_states()                                  # the same full weights on every rank
    dims = None
    if tp.size > 1:
        dims = titan.parallel_dims(tp, backend)          # ParallelDims over the fake group
        model.parallelize(dims)                          # torchtitan's own tensor parallelism
    loss = CrossEntropyLoss(CrossEntropyLoss.Config(global_vocab_size=cfg.vocab_size))
    tokens, labels = torch.randint(0, cfg.vocab_size, (2, 1, seq))
    return titan.TrainStep(model, loss, dims), {"tokens": tokens, "labels": labels}
