# Sourced by the HTML report tests: finds Debian's chromium and renders pages headless.
# Needs TMP (a scratch directory) and fail() from the caller.

# Sets `browser` to chromium or chromium-browser, or to "" when neither is on PATH.
find_browser() {
  browser=""
  for candidate in chromium chromium-browser; do
    if command -v "$candidate" >/dev/null 2>&1; then browser=$candidate; break; fi
  done
}

browser_flags=(--headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$TMP/profile")

# dump_dom PAGE OUT: the DOM of PAGE after load, written to OUT (fails the test on an error).
dump_dom() {
  timeout 120 "$browser" "${browser_flags[@]}" --dump-dom "file://$1" >"$2" 2>"$TMP/chromium.err" ||
    fail "$browser --dump-dom failed: $(tail -5 "$TMP/chromium.err")"
}
