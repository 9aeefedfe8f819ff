#!/usr/bin/env python3
"""Capture a program as GraphGuard inputs: seq.json (S), dist.json (every rank of D with its
process groups) and spec.rel (the relation spec derived from the sharding).

  capture.py MODEL --tp N [--mode fwd|joint] [--bug NAME] -o DIR
  capture.py pipeline.CASE [--mode fwd|joint] -o DIR
  capture.py dp.CASE [--mode fwd|joint] -o DIR
  capture.py --list

The bundled programs (registry.py: the corpus, the bug benchmark, the pipeline and the
data-parallel cases; a pipeline's or a data-parallel program's plan fixes its ranks, a mesh, so it
takes no --tp). A program of your own needs
no edit here: graphguard-capture MODULE:FACTORY (gg_capture/__main__.py).
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from gg_capture import api, registry  # noqa: E402


def capture(program, world, mode, out_dir):
    if hasattr(program, "texts"):  # a pipeline or data-parallel program writes its own files
        os.makedirs(out_dir, exist_ok=True)
        for name, text in program.texts(mode).items():
            with open(os.path.join(out_dir, name), "w") as f:
                f.write(text)
        return
    api.write(program, world, mode, out_dir)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", nargs="?")
    ap.add_argument("--tp", type=int, help="TP degree (default 2; not for pipeline.*, dp.*)")
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
    program = registry.make(a.model, a.mode)
    if hasattr(program, "texts"):
        if a.tp is not None:
            ap.error(f"{a.model}'s plan fixes its {program.world} ranks ({program.plan}); "
                     "leave out --tp")
        world = program.world
    else:
        world = 2 if a.tp is None else a.tp
    capture(program, world, a.mode, a.out)
    ranks = "ranks" if hasattr(program, "texts") else "tp"
    print(f"capture: {a.model} {ranks}={world} {a.mode} -> {a.out} "
          f"({time.time() - start:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
