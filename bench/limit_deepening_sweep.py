"""Total e-nodes, wall time and verdicts of every verify case under tests/ (corpus, dp,
pipeline, bugs) at `--limit-deepenings` 0 and 2; prints the runs whose verdict changes or whose
e-nodes grow by more than 30 %. Run from the repository root:
python3 bench/limit_deepening_sweep.py build/graphguard (docs/benchmarks.md)."""
import glob, json, os, subprocess, sys, tempfile, time
GG = sys.argv[1]
cases = []
for seq in sorted(glob.glob("tests/*/*/*/seq.json") + glob.glob("tests/bugs/*/*/seq.json")):
    d = os.path.dirname(seq)
    for dist in sorted(glob.glob(d + "/tp*.json") + glob.glob(d + "/dist.json")):
        if os.path.exists(d + "/spec.rel"):
            cases.append((d, dist))
cases = sorted(set(cases))
tot = {}
for deep in (0, 2):
    n = t = 0; verdicts = {}
    for d, dist in cases:
        start = time.time()
        r = subprocess.run([GG, "verify", "--seq", d + "/seq.json", "--dist", dist, "--relations",
                            d + "/spec.rel", "--no-numeric", "--threads", "1", "--limit-deepenings",
                            str(deep), "--json", os.path.join(tempfile.gettempdir(), "gg_deepen.json")], capture_output=True, text=True)
        t += time.time() - start
        try:
            j = json.load(open(os.path.join(tempfile.gettempdir(), "gg_deepen.json")))
            n += j["stats"]["total_egraph_nodes"]
            verdicts[(d, dist)] = (j["verdict"], j["stats"]["total_egraph_nodes"], time.time() - start)
        except (OSError, ValueError, KeyError):
            verdicts[(d, dist)] = ("ERR", 0, 0)
    tot[deep] = (n, t, verdicts)
    print(f"deepenings {deep}: {len(cases)} cases, total e-nodes {n}, wall {t:.1f} s", flush=True)
a, b = tot[0][2], tot[2][2]
for k in cases:
    if a[k][0] != b[k][0] or b[k][1] > 1.3 * a[k][1] + 2000:
        print(k, a[k], b[k])
