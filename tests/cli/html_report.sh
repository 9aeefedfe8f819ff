#!/usr/bin/env bash
# `graphguard verify --html FILE` end to end: the page of an UNKNOWN (the bug benchmark's
# missing_rowparallel_allreduce, whose capture records the model's source lines) is one
# self-contained file with the verdict, the stopped operator and its source; '-' writes it to
# stdout only, two reports on stdout are a usage error; and, where Debian's chromium (or
# chromium-browser) is on PATH, the page loads in headless chromium with the verdict in the
# rendered DOM. GG_UPDATE_SCREENSHOT=1 also writes docs/html-report.png (1280x900) from it.
# Without chromium the browser part prints "SKIP: no chromium on PATH" and the test passes.
# Usage: html_report.sh <graphguard> <repo root>
set -euo pipefail
GG=$(realpath "$1") ROOT=$2
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$ROOT"
BUG=tests/bugs/missing_rowparallel_allreduce/buggy
ARGS=(verify --seq "$BUG/seq.json" --dist "$BUG/tp2.json" --relations "$BUG/spec.rel" --no-timing
  --no-numeric --quiet)

code=0
"$GG" "${ARGS[@]}" --html "$TMP/report.html" >"$TMP/report.txt" || code=$?
[[ $code -eq 3 ]] || fail "verify --html: exit $code, expected 3 (UNKNOWN)"
verdict=$(head -1 "$TMP/report.txt")
[[ $verdict == UNKNOWN* ]] || fail "text report's first line: $verdict"
page=$TMP/report.html
grep -q '^<!DOCTYPE html>$' "$page" || fail "no doctype"
grep -q '<section id="stopped">' "$page" || fail "no stopped-operator section"
grep -qF 'class="st-no-relation stopped"' "$page" || fail "the stopped operator is not marked"
grep -q '<pre class="src">' "$page" || fail "no source line of the model"
# Self-contained: no URL the browser would fetch.
if grep -nE '(src|href)="(https?:|//)|<link |@import|url\(' "$page"; then
  fail "the page refers to an external asset (above)"
fi

# '-': the page on stdout, and nothing else there.
code=0
"$GG" "${ARGS[@]}" --html - >"$TMP/stdout.html" || code=$?
[[ $code -eq 3 ]] || fail "verify --html -: exit $code"
cmp -s "$TMP/stdout.html" "$page" || fail "--html - differs from --html FILE"
code=0
"$GG" "${ARGS[@]}" --html - --json - >/dev/null 2>"$TMP/usage.err" || code=$?
[[ $code -eq 2 ]] || fail "--html - --json -: exit $code, expected 2 (usage)"

# The rendered DOM, in a real browser.
source "$ROOT/tests/cli/chromium.bash"
find_browser
if [[ -z $browser ]]; then
  echo "SKIP: no chromium on PATH"
  exit 0
fi
dump_dom "$page" "$TMP/dom.html"
# The h1 as rendered: the verdict text, escaped as HTML would.
python3 - "$TMP/dom.html" "$verdict" <<'PY' || fail "the verdict is not in the rendered DOM"
import html, sys
dom = open(sys.argv[1], encoding="utf-8").read()
want = html.escape(sys.argv[2], quote=False)
sys.exit(0 if '<h1 id="verdict" class="unknown">' + want + "</h1>" in dom else 1)
PY
grep -q 'id="search"' "$TMP/dom.html" || fail "no search box in the rendered DOM"
shot=$TMP/html-report.png
[[ ${GG_UPDATE_SCREENSHOT:-} == 1 ]] && shot=$ROOT/docs/html-report.png
timeout 120 "$browser" "${browser_flags[@]}" --screenshot="$shot" --window-size=1280,900 \
  "file://$page" >/dev/null 2>>"$TMP/chromium.err" ||
  fail "$browser --screenshot failed: $(tail -5 "$TMP/chromium.err")"
[[ $(head -c 8 "$shot" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] || fail "no PNG at $shot"
echo "OK: $browser rendered the page (verdict in the DOM, screenshot $shot)"
