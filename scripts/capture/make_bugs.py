#!/usr/bin/env python3
"""Regenerate tests/bugs: every bug-benchmark case captured correct and buggy.

  make_bugs.py [--out DIR] [--only CASE ...]             capture (and write the manifest)
  make_bugs.py --verdicts GRAPHGUARD [--check]           verify every committed case; record the
                                                         verdicts, or (--check) fail on a change
  make_bugs.py --checks GRAPHGUARD [--check]             the same with `graphguard check` (numeric;
                                                         a LibTorch build): HOLDS / FAILS per case,
                                                         and `graphguard verify` with its numeric
                                                         evidence (key verify_numeric)
  (--only CASE ... limits either mode to those cases)

Layout: DIR/<case>/<correct|buggy>/{seq.json, tp<N>.json, spec.rel}. The cases, their public
reports and patterns are in gg_capture/registry.py (BUGS); DIR/manifest.json holds them with the
verdicts of graphguard verify --no-numeric (the symbolic engine alone: correct REFINES, buggy
UNKNOWN at the operator where the proof stops, since a VIOLATION needs evidence), of graphguard
verify with its numeric evidence (buggy: VIOLATION) and of graphguard check (correct: HOLDS,
buggy: FAILS).
"""
import argparse
import contextlib
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import make_corpus  # noqa: E402

ROOT = make_corpus.ROOT
VARIANTS = ("correct", "buggy")


def capture_case(case, out):
    from gg_capture import fxjson, registry, spec, trace
    source, pattern, mode, degree, _ = registry.BUGS[case]
    for variant in VARIANTS:
        program = registry.make(f"bug.{case}.{variant}")
        d = os.path.join(out, case, variant)
        os.makedirs(d, exist_ok=True)
        if hasattr(program, "texts"):  # a pipeline program (gg_capture/pipeline.py) writes its own
            files = program.texts(mode)
            for name, text in (("seq.json", files["seq.json"]),
                               (f"tp{degree}.json", files["dist.json"]),
                               ("spec.rel", files["spec.rel"])):
                with open(os.path.join(d, name), "w") as f:
                    f.write(text)
            continue
        # a real library's code monkeypatched while this variant is traced (models/megatron_core.py)
        with getattr(program, "patches", contextlib.nullcontext)():
            seq = trace.trace_rank(program, 1, 0, mode)
            ranks = trace.trace_ranks(program, degree, mode)
        # value-dependent shapes (expert parallelism): the traced values of S's inputs, which
        # check runs on (numeric_check)
        traced = None
        if hasattr(seq, "values"):
            traced = trace.traced_values_note(program)
            with open(os.path.join(d, "values.json"), "w") as f:
                f.write(fxjson.values_text(seq.values))
        with open(os.path.join(d, "seq.json"), "w") as f:
            f.write(fxjson.program_text([seq.graph], traced_values=traced))
        groups = {}
        for r in ranks:
            groups.update(r.groups)
        with open(os.path.join(d, f"tp{degree}.json"), "w") as f:
            f.write(fxjson.program_text([r.graph for r in ranks], groups, traced))
        with open(os.path.join(d, "spec.rel"), "w") as f:
            f.write(spec.spec_text(f"{program.name}: {program.plan}", ranks[0]))
    return {"case": case, "source": source, "pattern": pattern, "mode": mode, "degree": degree,
            "command": f"scripts/capture/make_bugs.py --only {case}"}


def numeric_check(graphguard, case_dir, degree):
    """`graphguard check` of one case: (HOLDS | FAILS | ..., its first line); on the case's
    values.json where it has one."""
    cmd = [graphguard, "check", "--seq", os.path.join(case_dir, "seq.json"), "--dist",
           os.path.join(case_dir, f"tp{degree}.json"), "--relations",
           os.path.join(case_dir, "spec.rel"), "--no-timing"]
    values = os.path.join(case_dir, "values.json")
    if os.path.exists(values):  # graphs that replay only on their traced values
        cmd += ["--inputs", values]
    run = subprocess.run(cmd, capture_output=True, text=True)
    first = (run.stdout.splitlines() or [run.stderr.strip()])[0]
    # "check: HOLDS (...)" -> HOLDS
    word = first.split(":", 1)[1].split()[0] if first.startswith("check:") else first.split(":")[0]
    return word, first


def numeric_verify(graphguard, case_dir, degree):
    return make_corpus.verify(graphguard, case_dir, degree, numeric=True)


RUNNERS = {"verify": make_corpus.verify, "verify_numeric": numeric_verify, "check": numeric_check}


def verdicts(graphguard, out, check, only=None, key="verify"):
    """Runs verify --no-numeric (key "verify"), verify with numeric evidence ("verify_numeric") or
    check ("check") on every case (or those in `only`) and records the verdicts in the manifest,
    or with `check` compares them with it."""
    run = RUNNERS[key]
    path = os.path.join(out, "manifest.json")
    with open(path) as f:
        manifest = json.load(f)
    failures = 0
    for case in manifest["cases"]:
        if only and case["case"] not in only:
            continue
        case.setdefault(key, {})
        for variant in VARIANTS:
            case_dir = os.path.join(out, case["case"], variant)
            verdict, line = run(graphguard, case_dir, case["degree"])
            want = case[key].get(variant, {}).get("verdict")
            if check:
                status = "ok" if verdict == want else f"CHANGED (manifest: {want})"
                print(f"{case['case']} {variant} ({key}): {verdict} {status}")
                failures += verdict != want
            # paths inside the checkout are recorded relative to it (the same on every machine)
            line = line.replace(ROOT + os.sep, "")
            case[key][variant] = {"verdict": verdict, "first_line": line}
    if not check:
        with open(path, "w") as f:
            f.write(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return 1 if failures else 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "bugs"))
    ap.add_argument("--only", action="append")
    ap.add_argument("--verdicts", metavar="GRAPHGUARD")
    ap.add_argument("--checks", metavar="GRAPHGUARD")
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args(argv)
    if a.verdicts:
        return verdicts(a.verdicts, a.out, a.check, a.only)
    if a.checks:
        return (verdicts(a.checks, a.out, a.check, a.only, key="check") |
                verdicts(a.checks, a.out, a.check, a.only, key="verify_numeric"))
    from gg_capture import registry
    cases = a.only or list(registry.BUGS)
    path = os.path.join(a.out, "manifest.json")
    old = {}
    if os.path.exists(path):
        with open(path) as f:
            old = {c["case"]: c for c in json.load(f)["cases"]}
    for case in cases:
        entry = capture_case(case, a.out)
        entry["verify"] = old.get(case, {}).get("verify", {})
        entry["check"] = old.get(case, {}).get("check", {})
        entry["verify_numeric"] = old.get(case, {}).get("verify_numeric", {})
        old[case] = entry
        print(f"make_bugs: {case}", file=sys.stderr)
    if a.only and a.out != os.path.join(ROOT, "tests", "bugs"):
        return 0
    manifest = {"generator": "scripts/capture/make_bugs.py", "versions": make_corpus.versions(),
                "cases": [old[k] for k in sorted(old)]}
    with open(path, "w") as f:
        f.write(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
