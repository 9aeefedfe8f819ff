#!/usr/bin/env python3
"""Regenerate tests/dp: data-parallel programs (DDP-style gradient all-reduce with the loss
normalized by the global token count and gradient accumulation, FSDP-style sharded parameters,
and a TP x DP device mesh), forward and joint.

  make_dp.py [--out DIR] [--only CASE/MODE ...]     capture (and write the manifest)
  make_dp.py --verdicts GRAPHGUARD [--check] [--only CASE/MODE ...]
                     verify --no-numeric every committed case (or those named); record the
                     verdicts in the manifest, or (--check) fail on a change
  make_dp.py --checks GRAPHGUARD [--check] [--only CASE/MODE ...]
                     the same with `graphguard check` (numeric, a LibTorch build)

Layout: DIR/<case>/<mode>/{seq.json, dist.json, spec.rel}: S is the model on the whole batch,
dist.json every rank of the dp x tp mesh, spec.rel written by gg_capture/dp.py from the plan. The
cases are gg_capture/registry.py's DP; DIR/manifest.json holds how each was made and the verdicts
(tests/cli/capture_dp.sh checks them). make_pipeline.py's command line, run for these cases.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import make_pipeline  # noqa: E402

if __name__ == "__main__":
    sys.exit(make_pipeline.main(kind="dp", cases="DP", doc=__doc__))
