#!/usr/bin/env bash
# A short libFuzzer run over the results loader (compare/report/plot read what it accepts).
# test.d: beside
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
seconds=${GTB_FUZZ_SECONDS:-30}
log="$root/build-fuzz.log"
echo "fuzzing the results loader: builds build-fuzz/ with clang + ASan/UBSan (minutes on 2 cores when" \
     "ccache lacks it, seconds when it has it), then feeds it mutated results files for $seconds s; log: $log"
bash "$root/ci/fuzz.sh" "$seconds" >"$log" 2>&1 &
pid=$!
# A line every 30 s, so a long step is never silent.
waited=0
while kill -0 "$pid" 2>/dev/null; do
  sleep 1
  waited=$((waited + 1))
  if [ $((waited % 30)) -eq 0 ]; then
    phase=building
    grep -q "INFO: Seed" "$log" 2>/dev/null && phase=fuzzing
    echo "  fuzz: ${waited} s ($phase)"
  fi
done
wait "$pid" || { tail -40 "$log"; exit 1; }
grep -E "Done [0-9]+ runs|stat::number_of_executed_units" "$log" | tail -2
