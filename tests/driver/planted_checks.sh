#!/usr/bin/env bash
# Planted twin of lib.sh's json_check: a document that breaks the check must fail it even with
# Python's asserts compiled out (PYTHONOPTIMIZE=1), which an assert-based check would pass.
# usage: planted_checks.sh PYTHON WORKDIR   (exit 1 with "FAIL [planted_json_check]": the check works)
set -u
case_name=planted_json_check py=$1 work=$2 validate=
source "$(dirname "$0")/lib.sh"
echo '{"records": [{"status": "failed"}]}' >"$work/wrong.json"
PYTHONOPTIMIZE=1 json_check "$work/wrong.json" "d['records'][0]['status'] == 'ok'"
echo "ok [$case_name]: the planted document passed"
