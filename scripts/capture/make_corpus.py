#!/usr/bin/env python3
"""Regenerate tests/corpus: every corpus model at TP 1, 2, 4 (or the degrees it names), forward and
joint.

  make_corpus.py [--out DIR] [--only MODEL/MODE ...]     capture (and write the manifest)
  make_corpus.py --verdicts GRAPHGUARD [--check]          run verify on every committed case (or
                                                          the --only ones);
                                                          record the verdicts in the manifest, or
                                                          (--check) fail when one differs

Layout: DIR/<model>/<mode>/{seq.json, tp2.json, tp4.json, spec.rel} (a tp<N>.json per degree); the
TP 1 case verifies seq.json against itself (a single graph is rank 0). The spec does not depend on
the degree (it is written with `world`). DIR/manifest.json says how each case was made and the
verdict `graphguard verify` gives today (tests/cli/capture_corpus.sh checks both).
"""
import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEGREES = (2, 4)  # a program's `degrees` attribute may name others
MODES = ("fwd", "joint")


def versions():
    """torch and the packages corpus programs run (None: not installed)."""
    from importlib import metadata
    import torch
    found = {"torch": torch.__version__.split("+")[0]}
    for package in ("transformers", "megatron-core", "torchtitan", "spmd-types"):
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            found[package] = None
    return found


def degrees(program):
    """The TP degrees a program is captured at besides 1 (DEGREES unless it says otherwise)."""
    return tuple(getattr(program, "degrees", DEGREES))


def make_case(model, mode, out_dir):
    from gg_capture import fxjson, registry, spec, trace  # torch is needed from here on
    program = registry.make(model, mode)
    os.makedirs(out_dir, exist_ok=True)
    seq = trace.trace_rank(program, 1, 0, mode)
    with open(os.path.join(out_dir, "seq.json"), "w") as f:
        f.write(fxjson.program_text([seq.graph]))
    rank0 = None
    for world in degrees(program):
        ranks = [trace.trace_rank(program, world, r, mode) for r in range(world)]
        groups = {}
        for r in ranks:
            groups.update(r.groups)
        with open(os.path.join(out_dir, f"tp{world}.json"), "w") as f:
            f.write(fxjson.program_text([r.graph for r in ranks], groups))
        rank0 = rank0 or ranks[0]
    with open(os.path.join(out_dir, "spec.rel"), "w") as f:
        f.write(spec.spec_text(f"{program.name}: {program.plan}", rank0))
    return program


def degrees(program):
    """The TP degrees D is captured at (besides TP 1): the program's own, else DEGREES."""
    return tuple(getattr(program, "degrees", DEGREES))


# The recorded verdicts should be decided by the node and iteration limits, which are the same on
# every machine, not by the per-operator time limit: CI's sanitizer build runs 5-20x slower, and a
# search near the default 5 s (ring attention's at CP 2: 2 s here, 6 s under ASan) would end
# UNKNOWN there. 30 s per operator (6x the default) leaves that margin while bounding the searches
# that end UNKNOWN anyway (ring_merge_no_rescale's buggy variant: 7 min under ASan unbounded).
DETERMINISTIC_LIMITS = ("--timeout-ms", "30000")


def verify(graphguard, case_dir, degree, numeric=False, options=()):
    """`graphguard verify` of one case: (verdict, first line). Without `numeric` the symbolic
    engine alone (--no-numeric: the same in every build); with it, an UNKNOWN is decided by the
    numeric run of a LibTorch build (a counterexample makes it a VIOLATION), on the case's
    values.json where it has one (graphs that replay only on their traced values). `options`:
    the case's own search options (the manifest's verify_options), after the default ones."""
    dist = "seq.json" if degree == 1 else f"tp{degree}.json"
    cmd = [graphguard, "verify", "--seq", os.path.join(case_dir, "seq.json"), "--dist",
           os.path.join(case_dir, dist), "--relations", os.path.join(case_dir, "spec.rel"),
           *DETERMINISTIC_LIMITS, *options]
    values = os.path.join(case_dir, "values.json")
    if not numeric:
        cmd.append("--no-numeric")
    elif os.path.exists(values):
        cmd += ["--inputs", values]
    run = subprocess.run(cmd, capture_output=True, text=True)
    first = (run.stdout.splitlines() or [run.stderr.strip()])[0]
    # the verdict word: "REFINES under 3 premises (...): ..." is REFINES (first_line keeps the rest)
    return (first.split(":")[0].split() or [""])[0], first


def verdicts(graphguard, corpus, check, only=None):
    """verify every case of the manifest (or those named MODEL/MODE in `only`)."""
    path = os.path.join(corpus, "manifest.json")
    with open(path) as f:
        manifest = json.load(f)
    failures = 0
    for case in manifest["cases"]:
        if only and f"{case['model']}/{case['mode']}" not in only:
            continue
        case_dir = os.path.join(corpus, case["model"], case["mode"])
        for degree in case["degrees"]:
            verdict, line = verify(graphguard, case_dir, degree,
                                   options=case.get("verify_options", ()))
            key = f"tp{degree}"
            want = case["verify"].get(key, {}).get("verdict")
            status = "ok" if verdict == want else f"CHANGED (manifest: {want})"
            if check:
                print(f"{case['model']}/{case['mode']} {key}: {verdict} {status}")
                failures += verdict != want
            case["verify"][key] = {"verdict": verdict, "first_line": line}
    if not check:
        with open(path, "w") as f:
            f.write(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return 1 if failures else 0


def select(ap, cases, only):
    """The (name, mode) cases named NAME/MODE in `only`, or every case without it; a name that is
    not a case is a usage error of `ap`."""
    if not only:
        return cases
    chosen = [c for c in cases if f"{c[0]}/{c[1]}" in only]
    if len(chosen) != len(only):
        ap.error(f"unknown case in {only}")
    return chosen


def read_entries(path, name_key):
    """The cases of the manifest at `path` by (case[name_key], case["mode"]); {} without one."""
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return {(c[name_key], c["mode"]): c for c in json.load(f)["cases"]}


def write_manifest(path, generator, entries):
    """The manifest of `generator` (a script under scripts/capture): the versions captured with
    and the entries, sorted by key."""
    manifest = {"generator": generator, "versions": versions(),
                "cases": [entries[k] for k in sorted(entries)]}
    with open(path, "w") as f:
        f.write(json.dumps(manifest, indent=1, sort_keys=True) + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "corpus"))
    ap.add_argument("--only", action="append", help="MODEL/MODE (repeatable)")
    ap.add_argument("--verdicts", metavar="GRAPHGUARD")
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args(argv)
    if a.verdicts:
        return verdicts(a.verdicts, a.out, a.check, a.only)
    from gg_capture import registry
    # a model registry.CORPUS_MODES names (a forward-only layer without a loss) has only those
    cases = select(ap, [(m, mode) for m in registry.CORPUS
                        for mode in registry.CORPUS_MODES.get(m, MODES)], a.only)
    manifest_path = os.path.join(a.out, "manifest.json")
    old = read_entries(manifest_path, "model")
    entries = dict(old)
    for model, mode in cases:
        start = time.time()
        program = make_case(model, mode, os.path.join(a.out, model, mode))
        prev = old.get((model, mode), {})
        options = list(getattr(program, "verify_options", ()))
        entries[(model, mode)] = {
            **program.describe(), "model": model, "mode": mode,
            # search options the case is verified with besides the defaults (a program that
            # names them says why); none for most
            **({"verify_options": options} if options else {}),
            "degrees": [1, *degrees(program)],
            "command": f"scripts/capture/make_corpus.py --only {model}/{mode}",
            # what graphguard verify gives today, per degree; kept from the previous manifest
            # (tests/cli/capture_corpus.sh fails when a verdict changes, so this stays true)
            "verify": prev.get("verify", {}),
        }
        print(f"make_corpus: {model}/{mode} ({time.time() - start:.1f} s)", file=sys.stderr)
    if a.out != os.path.join(ROOT, "tests", "corpus") and a.only:
        return 0  # a partial regeneration elsewhere (the test) writes no manifest
    write_manifest(manifest_path, "scripts/capture/make_corpus.py", entries)
    return 0


if __name__ == "__main__":
    sys.exit(main())
