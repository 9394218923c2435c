#!/usr/bin/env bash
# gtb diagnose's output pinned on every shared trace: the text and JSON diagnosis of each
# TRACES_DIR/*.json.gz must equal EXPECTED_DIR/<trace>.txt and .json byte for byte, so a change of the
# trace reader (how the bytes are inflated and parsed) cannot change a diagnosis unnoticed. The JSON is
# kept gzipped (gzip -n: no name or time in the header), the text plain.
# usage: diagnose_identity.sh GTB TRACES_DIR EXPECTED_DIR WORK_DIR
#        GTB_DIAGNOSE_IDENTITY_UPDATE=1 writes EXPECTED_DIR from the current gtb instead (after a
#        change of the rules that is meant to change the diagnosis).
set -u
gtb=$1 traces=$2 expected=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
n=0 bad=0
for t in "$traces"/*.json.gz; do
  name=$(basename "$t" .json.gz)
  "$gtb" diagnose "$t" --format json > "$work/$name.json" || { echo "FAIL: $name: json exit $?"; bad=1; continue; }
  "$gtb" diagnose "$t" > "$work/$name.txt" || { echo "FAIL: $name: text exit $?"; bad=1; continue; }
  if [ "${GTB_DIAGNOSE_IDENTITY_UPDATE:-0}" = 1 ]; then
    gzip -n -9 -c "$work/$name.json" > "$expected/$name.json.gz"
    cp "$work/$name.txt" "$expected/$name.txt"
  fi
  gzip -dc "$expected/$name.json.gz" > "$work/$name.expected.json" || { echo "FAIL: $name: no expected JSON"; bad=1; continue; }
  cp "$expected/$name.txt" "$work/$name.expected.txt" || { echo "FAIL: $name: no expected text"; bad=1; continue; }
  for ext in json txt; do
    if ! cmp -s "$work/$name.$ext" "$work/$name.expected.$ext"; then
      echo "FAIL: $name.$ext differs from the expected one in $expected:"
      diff "$work/$name.expected.$ext" "$work/$name.$ext" | head -20
      bad=1
    fi
  done
  n=$((n + 1))
done
[ $n -gt 0 ] || { echo "FAIL: no traces in $traces"; exit 1; }
[ $bad -eq 0 ] || exit 1
echo "PASS: $n traces, text and JSON identical"
