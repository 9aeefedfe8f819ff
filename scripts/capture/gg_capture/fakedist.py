"""One fake torch.distributed world per captured rank (or a live one, live_world).

The "fake" backend (torch.testing._internal.distributed.fake_pg) accepts every collective without
communicating, which is all tracing needs: make_fx records the _c10d_functional calls and their
group names. Each rank is captured in its own init/destroy cycle, so group names are the same on
every rank ("0" for the world, then "1", "2", ... in creation order).
"""
import contextlib
import datetime

import torch.distributed as dist
from torch.distributed.distributed_c10d import _resolve_process_group
from torch.testing._internal.distributed.fake_pg import FakeStore


@contextlib.contextmanager
def fake_world(world_size: int, rank: int):
    if dist.is_initialized():  # a world a user factory opened itself and left open
        dist.destroy_process_group()
    dist.init_process_group("fake", store=FakeStore(), rank=rank, world_size=world_size)
    try:
        yield dist.group.WORLD
    finally:
        dist.destroy_process_group()


@contextlib.contextmanager
def live_world(world_size: int, rank: int, store_path: str):
    """A real gloo world of `world_size` processes (this one rank `rank`), meeting at the file
    store `store_path`: its collectives communicate, so a rank traced in it sees the values the
    other ranks send (the split sizes of expert parallelism's all-to-all). Group names are the
    fake world's ("0" for the world, then "1", ... in creation order)."""
    if dist.is_initialized():
        dist.destroy_process_group()
    # a rank that fails leaves the others waiting in a collective: give up after a minute
    # rather than gloo's default half hour
    dist.init_process_group("gloo", init_method=f"file://{store_path}", rank=rank,
                            world_size=world_size, timeout=datetime.timedelta(seconds=60))
    try:
        yield dist.group.WORLD
    finally:
        dist.destroy_process_group()


def group_ranks(group_name: str) -> list:
    """Member ranks (global) of the process group with this name."""
    return list(dist.get_process_group_ranks(_resolve_process_group(group_name)))


def new_subgroups(world_size: int, size: int):
    """Split the world into consecutive groups of `size` ranks; returns (my group, all groups).

    Every rank must create every group (torch.distributed's rule), in the same order."""
    groups = [dist.new_group(list(range(s, s + size))) for s in range(0, world_size, size)]
    me = dist.get_rank()
    return groups[me // size], groups
