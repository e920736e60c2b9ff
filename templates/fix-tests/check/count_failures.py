#!/usr/bin/env python3
"""Counts failing tests from CTest's own JUnit report (protected).

    count_failures.py REPORT.xml EXPECTED.txt

EXPECTED.txt lists every test the suite must run, one name a line. A test
that the report shows as failed, skipped or not run at all counts as
failing, so deleting or skipping tests never lowers the count. Prints what
failed (with the test's own output, for the next proposal), then the
summary ratchet reads:

    ---
    failing_tests: 2
    tests: 6
    passed: 4
"""
import sys
import xml.etree.ElementTree as ET


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    report, expected_path = sys.argv[1], sys.argv[2]
    with open(expected_path) as f:
        expected = [line.strip() for line in f if line.strip()]
    try:
        root = ET.parse(report).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"count_failures: no usable JUnit report at {report}: {e}", file=sys.stderr)
        return 1
    cases = {}
    for case in root.iter("testcase"):
        name = case.get("name", "")
        bad = case.find("failure") is not None or case.find("error") is not None
        skipped = case.find("skipped") is not None or case.get("status") not in (None, "run")
        output = case.findtext("system-out") or ""
        cases[name] = (not bad and not skipped, output)
    passed = 0
    for name in expected:
        ok, output = cases.get(name, (False, "(not run)"))
        if ok:
            passed += 1
            continue
        print(f"FAIL {name}")
        for line in output.strip().splitlines()[:10]:
            print(f"    {line}")
    print("---")
    print(f"failing_tests: {len(expected) - passed}")
    print(f"tests: {len(expected)}")
    print(f"passed: {passed}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
