#!/usr/bin/env python3
"""Counts schema violations in the pipeline's output (protected).

    check_schema.py SCHEMA.json INPUT.csv OUTPUT.jsonl

A small JSON Schema checker (the keywords schema.json uses: type, required,
properties, additionalProperties, enum, const, pattern, minLength,
maxLength, minimum, maximum, format "date"). Every input row must come out
as exactly one record with its id: a missing, duplicated or unreadable
record is a violation too (a missing one counts as an empty record: every
required field missing), so dropping rows never lowers the count.
Prints the violations grouped (for the next proposal), then:

    ---
    violations: 3
    records: 12
    bad_records: 2
"""
import collections
import csv
import datetime
import json
import re
import sys

TYPES = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "null": lambda v: v is None,
}


def is_date(v):
    try:
        datetime.date.fromisoformat(v)
        return re.fullmatch(r"\d{4}-\d{2}-\d{2}", v) is not None
    except ValueError:
        return False


def check(value, schema, where):
    """Yields (where, message) for each way `value` breaks `schema`."""
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(TYPES[t](value) for t in types):
            yield where, f"expected {' or '.join(types)}, got {type(value).__name__}"
            return
    if "enum" in schema and value not in schema["enum"]:
        yield where, f"not one of {schema['enum']}"
    if "const" in schema and value != schema["const"]:
        yield where, f"must be {schema['const']!r}"
    if isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:
            yield where, f"shorter than {schema['minLength']}"
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            yield where, f"longer than {schema['maxLength']}"
        if "pattern" in schema and not re.search(schema["pattern"], value):
            yield where, f"does not match {schema['pattern']}"
        if schema.get("format") == "date" and not is_date(value):
            yield where, "not a date YYYY-MM-DD"
    if TYPES["number"](value):
        if "minimum" in schema and value < schema["minimum"]:
            yield where, f"below {schema['minimum']}"
        if "maximum" in schema and value > schema["maximum"]:
            yield where, f"above {schema['maximum']}"
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                yield f"{where}.{key}", "missing"
        for key, v in value.items():
            if key in props:
                yield from check(v, props[key], f"{where}.{key}")
            elif schema.get("additionalProperties", True) is False:
                yield f"{where}.{key}", "not in the schema"


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    schema_path, input_path, output_path = sys.argv[1:]
    with open(schema_path) as f:
        schema = json.load(f)
    with open(input_path, newline="") as f:
        ids = [row["id"].strip() for row in csv.DictReader(f)]
    try:
        with open(output_path) as f:
            lines = f.read().splitlines()
    except OSError as e:
        print(f"check_schema: no output at {output_path}: {e}", file=sys.stderr)
        return 1
    problems = []  # (field, message, record id)
    seen = collections.Counter()
    bad = set()
    for n, line in enumerate(lines, 1):
        try:
            record = json.loads(line)
        except ValueError:
            problems.append(("line", "not JSON", f"line {n}"))
            bad.add(f"line {n}")
            continue
        rid = str(record.get("id", "")).strip() if isinstance(record, dict) else ""
        seen[rid] += 1
        for where, message in check(record, schema, "record"):
            problems.append((where.removeprefix("record."), message, rid or f"line {n}"))
            bad.add(rid or f"line {n}")
    for rid in ids:
        if seen[rid] == 0:
            # As bad as writing an empty record: every required field is missing.
            for key in schema.get("required", []) or ["id"]:
                problems.append((key, "missing (the input row is not in the output)", rid))
            bad.add(rid)
        elif seen[rid] > 1:
            problems.append(("id", "input row written more than once", rid))
            bad.add(rid)
    groups = collections.defaultdict(list)
    for field, message, rid in problems:
        groups[(field, message)].append(rid)
    for (field, message), rids in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        print(f"{len(rids):3d} x {field}: {message} (records {', '.join(rids[:6])}{', ...' if len(rids) > 6 else ''})")
    print("---")
    print(f"violations: {len(problems)}")
    print(f"records: {len(lines)}")
    print(f"bad_records: {len(bad)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
