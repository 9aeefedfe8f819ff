#!/usr/bin/env python3
"""Regenerate tests/pipeline: pipeline-parallel programs (torch.distributed.pipelining's GPipe
and 1F1B schedules, alone and with tensor parallelism inside the stages), forward and joint.

  make_pipeline.py [--out DIR] [--only CASE/MODE ...]     capture (and write the manifest)
  make_pipeline.py --verdicts GRAPHGUARD [--check] [--only CASE/MODE ...]
                     verify --no-numeric every committed case (or those named); record the
                     verdicts in the manifest, or (--check) fail on a change
  make_pipeline.py --checks GRAPHGUARD [--check] [--only CASE/MODE ...]
                     the same with `graphguard check` (numeric, a LibTorch build)

Layout: DIR/<case>/<mode>/{seq.json, dist.json, spec.rel}: S is the whole model on the whole
batch, dist.json every rank's whole schedule (every micro-batch, forward and backward for joint),
spec.rel written by gg_capture/pipeline.py from the plan. The cases are gg_capture/registry.py's
PIPELINE; DIR/manifest.json holds how each was made and the verdicts
(tests/cli/capture_pipeline.sh checks them).
"""
import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import make_corpus  # noqa: E402

ROOT = make_corpus.ROOT
MODES = ("fwd", "joint")


def make_case(case, mode, out_dir, prefix="pipeline"):
    """Captures registry program `prefix.case` in `mode` into out_dir (seq, dist, spec)."""
    from gg_capture import registry
    program = registry.make(f"{prefix}.{case}")
    os.makedirs(out_dir, exist_ok=True)
    for name, text in program.texts(mode).items():
        with open(os.path.join(out_dir, name), "w") as f:
            f.write(text)
    return program


def run(graphguard, case_dir, command):
    """(verdict word, first line) of `graphguard verify --no-numeric` or `graphguard check`."""
    cmd = [graphguard, command, "--seq", os.path.join(case_dir, "seq.json"), "--dist",
           os.path.join(case_dir, "dist.json"), "--relations", os.path.join(case_dir, "spec.rel"),
           "--no-timing"]
    if command == "verify":
        cmd += ["--no-numeric", *make_corpus.DETERMINISTIC_LIMITS]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    first = (proc.stdout.splitlines() or [proc.stderr.strip()])[0]
    if first.startswith("check:"):
        return first.split(":", 1)[1].split()[0], first
    return first.split(":")[0], first


def verdicts(graphguard, out, check, command, only=None):
    """Runs `command` (verify or check) on every case of the manifest (or those named CASE/MODE
    in `only`) and records the verdicts in it, or with `check` compares them with it."""
    path = os.path.join(out, "manifest.json")
    with open(path) as f:
        manifest = json.load(f)
    failures = 0
    for case in manifest["cases"]:
        if only and f"{case['case']}/{case['mode']}" not in only:
            continue
        case_dir = os.path.join(out, case["case"], case["mode"])
        verdict, line = run(graphguard, case_dir, command)
        want = case.get(command, {}).get("verdict")
        if check:
            status = "ok" if verdict == want else f"CHANGED (manifest: {want})"
            print(f"{case['case']}/{case['mode']} ({command}): {verdict} {status}")
            failures += verdict != want
        case[command] = {"verdict": verdict, "first_line": line}
    if not check:
        with open(path, "w") as f:
            f.write(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return 1 if failures else 0


def main(argv=None, kind="pipeline", cases="PIPELINE", doc=__doc__):
    """The command line of make_pipeline.py; make_dp.py runs it for registry.DP (kind "dp":
    programs dp.CASE, cases under tests/dp)."""
    ap = argparse.ArgumentParser(description=doc,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    default_out = os.path.join(ROOT, "tests", kind)
    ap.add_argument("--out", default=default_out)
    ap.add_argument("--only", action="append", help="CASE/MODE (repeatable)")
    ap.add_argument("--verdicts", metavar="GRAPHGUARD")
    ap.add_argument("--checks", metavar="GRAPHGUARD")
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args(argv)
    if a.verdicts:
        return verdicts(a.verdicts, a.out, a.check, "verify", a.only)
    if a.checks:
        return verdicts(a.checks, a.out, a.check, "check", a.only)
    from gg_capture import registry
    selected = make_corpus.select(ap, [(c, mode) for c in getattr(registry, cases)
                                       for mode in MODES], a.only)
    manifest_path = os.path.join(a.out, "manifest.json")
    old = make_corpus.read_entries(manifest_path, "case")
    entries = dict(old)
    script = f"scripts/capture/make_{kind}.py"
    for case, mode in selected:
        start = time.time()
        program = make_case(case, mode, os.path.join(a.out, case, mode), kind)
        prev = old.get((case, mode), {})
        entries[(case, mode)] = {
            **program.describe(), "case": case, "mode": mode, "ranks": program.world,
            "command": f"{script} --only {case}/{mode}",
            # kept from the previous manifest; tests/cli/capture_pipeline.sh fails on a change
            "verify": prev.get("verify", {}), "check": prev.get("check", {}),
        }
        print(f"make_{kind}: {case}/{mode} ({time.time() - start:.1f} s)", file=sys.stderr)
    if a.out != default_out and a.only:
        return 0  # a partial regeneration elsewhere (the test) writes no manifest
    make_corpus.write_manifest(manifest_path, script, entries)
    return 0


if __name__ == "__main__":
    sys.exit(main())
