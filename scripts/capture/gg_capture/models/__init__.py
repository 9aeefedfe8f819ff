"""Programs to capture. Each has build(tp) -> nn.Module (its forward returns (loss, ...)),
data(tp) -> dict of example inputs, make_tp(world, rank, world_group), data_placement(name),
output_placements() for forward captures, and optionally finalize_grads(names, params, grads, tp).
"""
