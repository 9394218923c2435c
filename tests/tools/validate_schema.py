#!/usr/bin/env python3
"""Validates gtb results files against docs/gtb-results.schema.json (exit 0 valid, 1 invalid, 2 usage)."""
import json
import sys
from pathlib import Path

try:
    import jsonschema
except ImportError:  # the set-up script installs it; without it the check is skipped, never passed
    print("validate_schema: SKIPPED: python3 module 'jsonschema' is missing (run ci/setup.sh)", file=sys.stderr)
    sys.exit(77)

SCHEMA = Path(__file__).resolve().parents[2] / "docs" / "gtb-results.schema.json"


def main(argv):
    if len(argv) < 2:
        print("usage: validate_schema.py RESULTS.json [--expect-invalid]", file=sys.stderr)
        return 2
    expect_invalid = "--expect-invalid" in argv
    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    bad = 0
    for path in [a for a in argv[1:] if not a.startswith("--")]:
        # parse_constant rejects NaN/Infinity, which are not JSON and never written by gtb.
        def reject(c):
            raise ValueError(f"non-standard JSON constant {c}")
        doc = json.loads(Path(path).read_text(), parse_constant=reject)
        errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
        for e in errors[:10]:
            print(f"{path}: {'/'.join(map(str, e.path)) or '(top)'}: {e.message}", file=sys.stderr)
        if errors:
            bad += 1
        elif not expect_invalid:
            print(f"{path}: valid ({len(doc['records'])} records)")
    if expect_invalid:
        return 0 if bad else 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
