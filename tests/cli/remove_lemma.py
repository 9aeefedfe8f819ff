#!/usr/bin/env python3
"""remove_lemma.py DIR ID: removes lemma ID (its math comment, rule and `#   test` lines) from
the *.rules file in DIR that holds it; exit 1 when no file does. The catalogue-deletion tests
(user_lemmas.sh, lemma_proposals.sh) run GraphGuard on such a copy through GG_LEMMA_DIR."""
import glob
import sys

directory, lemma = sys.argv[1], sys.argv[2]
for path in sorted(glob.glob(directory + "/*.rules")):
    lines = open(path).read().split("\n")
    hits = [k for k, l in enumerate(lines) if l.startswith(lemma + ":")]
    if not hits:
        continue
    start, end = hits[0], hits[0] + 1
    while start > 0 and lines[start - 1].startswith("#") and not lines[start - 1].startswith("#   test"):
        start -= 1
    while end < len(lines) and lines[end].startswith("#   test"):
        end += 1
    open(path, "w").write("\n".join(lines[:start] + lines[end:]))
    sys.exit(0)
sys.exit("no lemma " + lemma)
