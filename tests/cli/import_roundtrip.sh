#!/usr/bin/env bash
# import -> GraphGuard JSON -> stats gives the same text as stats on the FX files; importing the
# JSON again reproduces the same JSON; `-o -` writes the same JSON to standard output.
# Usage: import_roundtrip.sh <graphguard> <repo root>
set -euo pipefail
GG=$1 ROOT=$2
source "$ROOT/tests/cli/expected_stats.bash"
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
DIR="$ROOT/examples/corpus/gpt/paral2_layer1"

"$GG" import "$DIR" -o "$TMP/prog.json" || fail "import exited $?"
[[ -s "$TMP/prog.json" ]] || fail "import wrote nothing"
"$GG" stats "$DIR" >"$TMP/fx.txt"
"$GG" stats "$TMP/prog.json" >"$TMP/json.txt" || fail "stats on the JSON exited $?"
diff -u "$TMP/fx.txt" "$TMP/json.txt" >&2 || fail "stats differ between FX and JSON"
grep -q '^rank 1 ' "$TMP/json.txt" || fail "JSON stats lack rank 1"

"$GG" import "$TMP/prog.json" --output "$TMP/again.json" || fail "re-import exited $?"
cmp "$TMP/prog.json" "$TMP/again.json" || fail "JSON -> JSON is not a fixed point"
"$GG" import "$DIR" -o - >"$TMP/stdout.json" || fail "import -o - exited $?"
cmp "$TMP/prog.json" "$TMP/stdout.json" || fail "-o - differs from -o FILE"

# Importing each rank file on its own and both files by name give the same program as the dir.
"$GG" import "$DIR/fw.g0.r1.py" "$DIR/fw.g0.r0.py" -o "$TMP/files.json"
cmp "$TMP/prog.json" "$TMP/files.json" || fail "files given by name differ from the directory"
echo "ok"
