"""gg_capture: capture PyTorch programs (sequential and tensor-parallel) as GraphGuard JSON v1.

Modules: fakedist (one fake process group per captured rank), fxjson (ATen FX graph -> JSON),
tp (Megatron-style tensor-parallel layers that record their sharding), trace (make_fx of the
forward or joint forward+backward function), spec (relation spec derived from the sharding),
models (the programs the corpus and the bug benchmark capture).
"""
