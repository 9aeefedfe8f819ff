"""Defaults shared by the programs: the TP group is the whole world, data is replicated."""
import contextlib

import torch

from .. import tp as tpmod


class Program:
    name = "program"
    plan = "hand-written Megatron-style modules (scripts/capture/gg_capture/tp.py)"
    config = {}

    def make_tp(self, world, rank, world_group):
        return tpmod.TP(world, rank, world_group)

    def data_placement(self, name):
        return ("replicate",)

    def output_placements(self):
        return [("replicate",)]

    def loss_context(self, tp):
        """The context a DTensor program's forward and backward run in (DTensor's loss_parallel
        for some); none by default."""
        return contextlib.nullcontext()

    def describe(self):
        return {"model": self.name, "config": self.config, "parallel_plan": self.plan}


def full(*shape, scale=0.02):
    """A sequential parameter (deterministic: callers seed torch first)."""
    return torch.randn(*shape) * scale
