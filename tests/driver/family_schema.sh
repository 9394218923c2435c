#!/usr/bin/env bash
# One family's quick CPU records, findings and cost terms, as `gtb run` writes them, validate against
# docs/gtb-results.schema.json; a unit planted in one of its terms must not.
# usage: family_schema.sh FAMILY GTB PYTHON VALIDATE_SCRIPT WORKDIR [BUDGET]
set -u
[ $# -ge 5 ] || { echo "usage: family_schema.sh FAMILY GTB PYTHON VALIDATE_SCRIPT WORKDIR [BUDGET]"; exit 2; }
family=$1 gtb=$2 py=$3 validate=$4 work=$5 budget=${6:-0.01}
case_name=schema-$family
source "$(dirname "$0")/lib.sh"

# The quick suite's every CPU case (so every finding and term the family derives from them is made),
# at a small sampling budget: the figures do not matter here, their form does.
expect_rc 0 "$gtb" run --family "$family" --quick --backend cpu --budget "$budget" --out "$work/r.json"
tail -n 3 "$work/out.txt"
validate "$work/r.json"
json_check "$work/r.json" "[f['name'] for f in d['families']] == ['$family'] and d['families'][0]['status'] == 'ok'"
json_check "$work/r.json" "'$family' in d.get('findings', {})"
# Every record skipped (an environment fact, such as no PyTorch for the framework family): the file
# and its cannot-say terms validated, but no measured term did; said, not passed.
if ! "$py" -c "import json, sys; sys.exit(0 if any(r['status'] == 'ok' for r in json.load(open(sys.argv[1]))['records']) else 1)" "$work/r.json"; then
  "$py" -c "import json, sys; d = json.load(open(sys.argv[1])); sys.exit(0 if all(r['status'] == 'skipped' for r in d['records']) else 1)" \
    "$work/r.json" || fail "no record ok, and not every record skipped"
  echo "Skipped: every CPU record of $family was skipped ($("$py" -c "import json, sys; print(json.load(open(sys.argv[1]))['records'][0].get('status_detail', ''))" "$work/r.json")): no measured term to validate"
  exit 77
fi

# A term of the family with a unit no reader knows: the schema reaches the terms and refuses it.
"$py" - "$work/r.json" "$work/planted.json" <<'PY' || fail "planting a unit"
import json, sys
d = json.load(open(sys.argv[1]))
terms = [t for f in d.get("findings", {}).values() for t in f.get("terms", []) if t.get("form") in ("table", "constant")
         and "cannot_say" not in t]
if not terms:
    print("no measured table or constant term to plant a unit in")
    sys.exit(0)
t = terms[0]
t["y" if t["form"] == "table" else "unit"] = "parsecs"
json.dump(d, open(sys.argv[2], "w"))
print(f"planted: term {t['name']} in parsecs")
PY
if [ -f "$work/planted.json" ]; then
  "$py" "$validate" "$work/planted.json" --expect-invalid 2>/dev/null || fail "the schema accepted a term in parsecs"
fi
echo "PASS [$case_name]"
