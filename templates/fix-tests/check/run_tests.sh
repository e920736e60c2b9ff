#!/bin/sh
# The run: the suite under CTest, which writes its own JUnit report; then the
# protected counter reads the report and prints the metric. A failing test
# is the metric's business, not this script's: it exits 0 whenever a report
# was written.
set -u
report_dir=$(mktemp -d)
trap 'rm -rf "$report_dir"' EXIT
[ -d build ] || { echo "run_tests: no build/ (the build gate makes it)" >&2; exit 1; }
(cd build && ctest --output-junit "$report_dir/report.xml" --timeout 10 -j 2 >"$report_dir/ctest.log" 2>&1)
grep "tests passed" "$report_dir/ctest.log" || tail -n 5 "$report_dir/ctest.log"
python3 check/count_failures.py "$report_dir/report.xml" check/expected_tests.txt
