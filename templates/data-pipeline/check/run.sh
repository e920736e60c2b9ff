#!/bin/sh
# The run: the pipeline (transform.py, editable) writes out/orders.jsonl from
# a clean out/, then the protected schema check counts the violations.
set -eu
rm -rf out
python3 transform.py
python3 check/check_schema.py schema.json data/orders.csv out/orders.jsonl
