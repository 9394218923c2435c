#!/usr/bin/env bash
# A short libFuzzer run over the results loader (compare/report/plot read what it accepts).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bash "$root/ci/fuzz.sh" "${GTB_FUZZ_SECONDS:-45}" >"$root/build-fuzz.log" 2>&1 || { tail -40 "$root/build-fuzz.log"; exit 1; }
grep -E "Done [0-9]+ runs|stat::number_of_executed_units" "$root/build-fuzz.log" | tail -2
