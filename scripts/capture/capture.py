#!/usr/bin/env python3
"""Capture a program as GraphGuard inputs: seq.json (S), dist.json (every rank of D with its
process groups) and spec.rel (the relation spec derived from the sharding).

  capture.py MODEL --tp N [--mode fwd|joint] [--bug NAME] -o DIR
  capture.py --list
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from gg_capture import fxjson, registry, spec, trace  # noqa: E402


def capture(program, world, mode, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    seq = trace.trace_rank(program, 1, 0, mode)
    with open(os.path.join(out_dir, "seq.json"), "w") as f:
        f.write(fxjson.program_text([seq.graph]))
    ranks = [trace.trace_rank(program, world, r, mode) for r in range(world)]
    groups = {}
    for r in ranks:
        groups.update(r.groups)
    if world > 1 and not groups:
        groups = {"0": list(range(world))}
    with open(os.path.join(out_dir, "dist.json"), "w") as f:
        f.write(fxjson.program_text([r.graph for r in ranks], groups))
    title = f"{program.name}: {program.plan}"
    with open(os.path.join(out_dir, "spec.rel"), "w") as f:
        f.write(spec.spec_text(title, ranks[0]))
    return seq, ranks


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", nargs="?")
    ap.add_argument("--tp", type=int, default=2)
    ap.add_argument("--mode", choices=["fwd", "joint"], default="joint")
    ap.add_argument("-o", "--out")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args(argv)
    if a.list:
        print("\n".join(registry.names()))
        return 0
    if not a.model or not a.out:
        ap.error("MODEL and -o DIR are required")
    start = time.time()
    program = registry.make(a.model)
    capture(program, a.tp, a.mode, a.out)
    print(f"capture: {a.model} tp={a.tp} {a.mode} -> {a.out} ({time.time() - start:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
