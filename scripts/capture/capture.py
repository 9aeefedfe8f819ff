#!/usr/bin/env python3
"""Capture a program as GraphGuard inputs: seq.json (S), dist.json (every rank of D with its
process groups) and spec.rel (the relation spec derived from the sharding).

  capture.py MODEL --tp N [--mode fwd|joint] [--bug NAME] -o DIR
  capture.py --list

The bundled programs (registry.py: the corpus and the bug benchmark). A program of your own needs
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
    return api.write(program, world, mode, out_dir)


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
