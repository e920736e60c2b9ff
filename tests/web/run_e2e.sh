#!/usr/bin/env bash
# The dashboard's browser end-to-end tests (Playwright + Debian's chromium):
# the dashboard of a recorded loop, and the /demo page.
#   tests/web/run_e2e.sh BUILD/ratchet BUILD/src/web/ratchet_web_fixture
# Needs `scripts/install-deps build web web-test` and, the first time, the npm
# registry for ./setup (`npm ci`; node_modules is kept in tests/web/). The screenshots
# go to test-artifacts/dashboard.png and demo.png (or $RATCHET_ARTIFACTS).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
[ $# -eq 2 ] || { echo "usage: $0 RATCHET_BIN FIXTURE_BIN" >&2; exit 2; }
export RATCHET=$(realpath "$1")
export RATCHET_WEB_FIXTURE=$(realpath "$2")
export RATCHET_ARTIFACTS=${RATCHET_ARTIFACTS:-$root/test-artifacts}
for tool in node npm /usr/bin/chromium; do
  command -v "$tool" >/dev/null ||
    { echo "run_e2e: $tool is missing (scripts/install-deps web-test)" >&2; exit 1; }
done
cd "$here"
./setup
exec node --test --test-reporter=spec dashboard.test.mjs demo.test.mjs
