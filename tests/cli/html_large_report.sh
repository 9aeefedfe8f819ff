#!/usr/bin/env bash
# `verify --html` at 2,000 operators (issue 16: "readable at 2,000 operators"): a generated model
# of 20 layers x 100 elementwise operators whose distributed copy (TP2, everything replicated)
# computes tanh where S computes sigmoid at layer 13, operator 50. The page folds the S graph into
# one group per layer, opens only the group holding the stopped operator, names it in the
# stopped-operator section, stays under 2 MB, and (where chromium is on PATH) renders in headless
# chromium with every operator row in the DOM.
# Usage: html_large_report.sh <graphguard> <repo root>
set -euo pipefail
GG=$(realpath "$1") ROOT=$(realpath "$2")
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
LAYERS=20 PER=100 BUG_LAYER=13 BUG_OP=50

python3 - "$TMP" "$LAYERS" "$PER" "$BUG_LAYER" "$BUG_OP" <<'PY'
import os, sys
out, layers, per, bug_layer, bug_op = sys.argv[1], *map(int, sys.argv[2:])
ops = ["sin", "cos", "tanh", "sigmoid"]

def graph(rank, buggy):
    params = ", ".join(f'layers_{k}_w: "f32[8]"' for k in range(layers))
    lines = ["import torch", "", "f32: type", "", "", f"# Graph[rank={rank}](fw, gid=0)",
             "class GraphModule(torch.nn.Module):",
             f'    def forward(self, x: "f32[4, 8]", {params}):']
    prev = "x"
    for k in range(layers):
        for i in range(per):
            name = f"layers_{k}_op_{i}"
            lines.append(f"        # File: /src/model.py:{10 + i} in forward, code: h = f{i % 4}(h)")
            if i == 0:
                call = f"torch.ops.aten.mul.Tensor({prev}, layers_{k}_w)"
            else:
                op = ops[(i + 1) % 4 if buggy and (k, i) == (bug_layer, bug_op) else i % 4]
                call = f"torch.ops.aten.{op}.default({prev})"
            lines.append(f'        {name}: "f32[4, 8]" = {call}')
            prev = name
    lines.append(f"        return ({prev},)")
    return "\n".join(lines) + "\n"

os.makedirs(os.path.join(out, "dist"))
open(os.path.join(out, "seq.py"), "w").write(graph(0, False))
for r in range(2):
    open(os.path.join(out, "dist", f"fw.g0.r{r}.py"), "w").write(graph(r, True))
spec = ["input x = replicate"] + [f"input layers_{k}_w = replicate" for k in range(layers)]
spec.append(f"output layers_{layers - 1}_op_{per - 1} = replicate")
open(os.path.join(out, "spec.rel"), "w").write("\n".join(spec) + "\n")
PY

page=$TMP/report.html
code=0
"$GG" verify --seq "$TMP/seq.py" --dist "$TMP/dist" --relations "$TMP/spec.rel" --no-numeric \
  --no-timing --quiet --html "$page" >"$TMP/report.txt" || code=$?
[[ $code -eq 3 ]] || fail "verify: exit $code, expected 3 (UNKNOWN)"
stop="layers_${BUG_LAYER}_op_${BUG_OP}"
head -1 "$TMP/report.txt" | grep -qF "S operator $stop " || fail "stopped elsewhere: $(head -1 "$TMP/report.txt")"
size=$(stat -c %s "$page")
((size < 2000000)) || fail "the page is $size bytes (over 2 MB)"
groups=$(grep -c '<details class="group"' "$page")
((groups == LAYERS + 1)) || fail "$groups groups, expected $((LAYERS + 1)) (the inputs and one per layer)"
open=$(grep -o '<details class="group" open><summary>[^<]*' "$page")
[[ $(wc -l <<<"$open") -eq 1 && $open == *">layers.$BUG_LAYER "* ]] ||
  fail "open groups: '$open', expected only layers.$BUG_LAYER"
grep -q '<section id="stopped">' "$page" || fail "no stopped-operator section"
grep -q 'id="search"' "$page" || fail "no search box"
echo "page: $size bytes, $groups groups, open: layers.$BUG_LAYER"

source "$ROOT/tests/cli/chromium.bash"
find_browser
if [[ -z $browser ]]; then
  echo "SKIP: no chromium on PATH (the page's structure was checked above)"
  exit 0
fi
dump_dom "$page" "$TMP/dom.html"
grep -q '<h1 id="verdict" class="unknown">' "$TMP/dom.html" || fail "no verdict in the rendered DOM"
# Every S node (the 21 inputs and the 2,000 operators) has its row in the rendered graph.
rows=$(grep -oE '<tr id="n-[0-9]+"' "$TMP/dom.html" | sort -u | wc -l)
((rows == LAYERS + 1 + LAYERS * PER)) || fail "$rows node rows rendered, expected $((LAYERS + 1 + LAYERS * PER))"
echo "OK: $browser rendered all $rows nodes"
