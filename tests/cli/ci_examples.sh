#!/usr/bin/env bash
# The adopters' CI examples (examples/ci): both YAML files parse (PyYAML when python3 has it,
# else a structural check of the raw text), they carry the pieces the README promises (the
# laptop-mode build, the SARIF upload, the JUnit report, the gate on every exit code of
# src/report/exit_codes.h), and every flag they pass to `graphguard verify` is one that the
# built binary's `verify --help` lists, so a renamed flag breaks this test, not an adopter's CI.
# Usage: ci_examples.sh <graphguard> <repo root>
set -euo pipefail
GG=$(realpath "$1") ROOT=$2
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$ROOT"
GH=examples/ci/github-actions.yml
GL=examples/ci/gitlab-ci.yml
[[ -f $GH && -f $GL && -f examples/ci/README.md ]] || fail "examples/ci is incomplete"

# Parse, and write every shell command the files run (run: and script lines) to $TMP/commands.
if python3 -c 'import yaml' 2>/dev/null; then
  python3 - "$GH" "$GL" "$TMP/commands" <<'PY'
import sys, yaml
gh_path, gl_path, out_path = sys.argv[1:]
def load(path):
    with open(path) as f:
        return yaml.safe_load(f)
def fail(msg):
    sys.exit("FAIL: " + msg)
gh, gl = load(gh_path), load(gl_path)
commands = []
# GitHub: YAML 1.1 reads the key `on` as True.
if not ("on" in gh or True in gh) or "jobs" not in gh:
    fail(gh_path + ": no on/jobs")
uses = []
for name, job in gh["jobs"].items():
    for step in job.get("steps", []):
        if "run" in step:
            commands.append(step["run"])
        if "uses" in step:
            uses.append(step["uses"].split("@")[0])
for needed in ("actions/checkout", "actions/cache", "github/codeql-action/upload-sarif"):
    if needed not in uses:
        fail(f"{gh_path}: no step uses {needed}")
if gh.get("permissions", {}).get("security-events") != "write":
    fail(gh_path + ": upload-sarif needs permissions: security-events: write")
# GitLab: one job with a script, a cache and a JUnit report.
jobs = {k: v for k, v in gl.items() if isinstance(v, dict) and "script" in v}
if not jobs:
    fail(gl_path + ": no job with a script")
for name, job in jobs.items():
    for key in ("before_script", "script"):
        commands.extend(job.get(key, []))
    if not job.get("artifacts", {}).get("reports", {}).get("junit"):
        fail(f"{gl_path}: job {name} has no artifacts:reports:junit")
    if job.get("artifacts", {}).get("when") != "always":
        fail(f"{gl_path}: job {name} must keep its reports when it fails (artifacts:when: always)")
    if "cache" not in job:
        fail(f"{gl_path}: job {name} caches nothing")
with open(out_path, "w") as f:
    f.write("\n".join(commands) + "\n")
PY
else
  echo "note: python3 has no yaml module; structural check only"
  for file in "$GH" "$GL"; do
    ! grep -q $'\t' "$file" || fail "$file: a tab (YAML indents with spaces)"
  done
  grep -q '^on:' "$GH" && grep -q '^jobs:' "$GH" || fail "$GH: no on/jobs"
  grep -q 'github/codeql-action/upload-sarif@' "$GH" || fail "$GH: no SARIF upload"
  grep -q '^ *junit: ' "$GL" || fail "$GL: no artifacts:reports:junit"
  grep -hv '^ *#' "$GH" "$GL" >"$TMP/commands"  # comments mention verify without flags
fi

# The laptop-mode build of only the binary, as scripts/setup.sh documents it.
for file in "$GH" "$GL"; do
  grep -q 'GG_SKIP_TORCH=1 GG_BUILD_TARGETS=graphguard' "$file" ||
    fail "$file: no laptop-mode build of the graphguard target"
done
grep -q 'GG_SKIP_TORCH' scripts/setup.sh && grep -q 'GG_BUILD_TARGETS' scripts/setup.sh ||
  fail "scripts/setup.sh no longer reads GG_SKIP_TORCH/GG_BUILD_TARGETS"

# The gate handles each exit code, with the values exit_codes.h defines.
for pair in kExitOk=0 kExitViolation=1 kExitBadInput=2 kExitUnknown=3; do
  grep -Eq "${pair%=*} = ${pair#*=}," src/report/exit_codes.h ||
    fail "exit_codes.h: ${pair%=*} is no longer ${pair#*=}; update examples/ci"
  code=${pair#*=}
  for file in "$GH" "$GL"; do
    grep -Eq "^ *$code\)" "$file" || fail "$file: the gate has no case for exit code $code"
  done
done

# Every `graphguard verify` command (backslash continuations joined) and its flags.
sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$TMP/commands" | grep 'graphguard verify --' \
  >"$TMP/verify_lines" || fail "no graphguard verify command in examples/ci"
[[ $(wc -l <"$TMP/verify_lines") -ge 2 ]] || fail "expected a verify command in each file"
"$GG" verify --help >"$TMP/help"
for flag in --sarif --junit; do
  while read -r line; do
    [[ $line == *" $flag "* ]] || fail "a verify command lacks $flag: $line"
  done <"$TMP/verify_lines"
done
grep -oE -- '--[a-z][a-z-]*' "$TMP/verify_lines" | sort -u >"$TMP/flags"
while read -r flag; do
  grep -Eq -- "^  $flag( |$)" "$TMP/help" || fail "verify --help does not list $flag"
done <"$TMP/flags"
echo "ok: examples/ci parse; verify flags $(tr '\n' ' ' <"$TMP/flags")are in verify --help"
