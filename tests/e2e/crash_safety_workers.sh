#!/usr/bin/env bash
# crash_safety.sh with four experiments in flight ([run] workers = 4): 20
# SIGKILLs of ratchet at random moments, each resumed; the same invariants
# hold, and no worker's run outlives ratchet.
export CRASH_WORKERS=4
exec bash "$(dirname "$0")/crash_safety.sh"
