#!/bin/sh
# A scripted stand-in for a reviewer, for the end-to-end tests: it reads the
# review request on stdin and the diff from $RATCHET_DIFF_FILE, rejects a
# diff that adds "BAD" and approves anything else, answering like
# `claude -p --output-format json` with the verdict inside "result".
# REVIEWER_MODE=garbage answers nothing usable; =edit also edits x.txt.
cat >/dev/null
if [ "${REVIEWER_MODE:-}" = garbage ]; then echo "Looks fine to me!"; exit 0; fi
if [ "${REVIEWER_MODE:-}" = edit ]; then echo 1 >x.txt; fi
if grep -q '^+.*BAD' "$RATCHET_DIFF_FILE"; then
  verdict='{\"decision\": \"reject\", \"reason\": \"the change adds BAD\"}'
else
  verdict='{\"decision\": \"approve\", \"reason\": \"a plain edit of x\"}'
fi
printf '{"type":"result","is_error":false,"result":"%s","total_cost_usd":0.01,' "$verdict"
printf '"usage":{"input_tokens":400,"output_tokens":20}}\n'
