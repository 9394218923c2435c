#!/usr/bin/env bash
# gtb diagnose end to end: the formats, --out, and bad input (exit 2, the byte offset, nothing written).
# usage: diagnose_e2e.sh GTB TRACES_DIR WORK_DIR
set -u
gtb=$1 traces=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }

"$gtb" diagnose "$traces/a100-train-6steps.json.gz" > "$work/t.txt" || fail "text exit $?"
grep -q "GPU idle" "$work/t.txt" || fail "text has no GPU idle line"
grep -q "Not priced" "$work/t.txt" || fail "text without --results does not say what to run"
"$gtb" diagnose "$traces/a100-train-6steps.json.gz" --format markdown > "$work/t.md" || fail "markdown exit"
grep -q "^| symptom | numbers | from the events |" "$work/t.md" || fail "markdown has no symptom table"
"$gtb" diagnose "$traces/a100-train-6steps.json.gz" --format json --out "$work/d.json" 2> "$work/err" || fail "json --out exit"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert len(d['steps'])==6" "$work/d.json" || fail "json unreadable"
# The report's section, from that diagnosis; a file that is not a diagnosis is refused.
fixtures=$(dirname "$traces")
"$gtb" report "$fixtures/cpu_a.json" --diagnosis "$work/d.json" > "$work/r.md" || fail "report --diagnosis exit"
grep -q "^## Diagnosis of a100-train-6steps.json.gz" "$work/r.md" || fail "report has no diagnosis section"
"$gtb" report "$fixtures/cpu_a.json" --diagnosis "$fixtures/cpu_a.json" > /dev/null 2> "$work/r.err"
[ $? -eq 2 ] || fail "report --diagnosis of a results file: want exit 2"
grep -q "not a diagnosis" "$work/r.err" || fail "report --diagnosis message: $(cat "$work/r.err")"
# A plain (not gzipped) trace reads the same.
zcat "$traces/a100-event-sync.json.gz" > "$work/plain.json"
"$gtb" diagnose "$work/plain.json" --format json > "$work/plain.out" || fail "plain trace"
"$gtb" diagnose "$traces/a100-event-sync.json.gz" --format json > "$work/gz.out" || fail "gz trace"
diff <(grep -v '"file"' "$work/plain.out") <(grep -v '"file"' "$work/gz.out") > /dev/null || fail "plain and gzipped differ"

# Malformed: exit 2, the offset, no output file.
printf '{"traceEvents":[{"ph":"X","ts":1,,}]}' > "$work/bad.json"
"$gtb" diagnose "$work/bad.json" --out "$work/bad.out" 2> "$work/bad.err"; rc=$?
[ $rc -eq 2 ] || fail "malformed exit $rc, want 2"
grep -q "at byte 33 " "$work/bad.err" || fail "malformed message names no offset: $(cat "$work/bad.err")"
[ ! -e "$work/bad.out" ] || fail "malformed trace wrote output"
# A gzip stream cut short.
head -c 100000 "$traces/a100-nccl-3steps.json.gz" > "$work/cut.json.gz"
"$gtb" diagnose "$work/cut.json.gz" 2> "$work/cut.err" > /dev/null; rc=$?
[ $rc -eq 2 ] || fail "truncated gzip exit $rc, want 2"
grep -q "byte" "$work/cut.err" || fail "truncated gzip message names no offset: $(cat "$work/cut.err")"
# Usage errors.
"$gtb" diagnose 2> /dev/null; [ $? -eq 2 ] || fail "no trace: want exit 2"
"$gtb" diagnose "$work/plain.json" --format yaml 2> /dev/null; [ $? -eq 2 ] || fail "bad format: want exit 2"
"$gtb" diagnose "$work/plain.json" --results "$work/bad.json" 2> "$work/res.err"; [ $? -eq 2 ] || fail "bad results: want exit 2"
"$gtb" diagnose "$work/missing.json" 2> /dev/null; [ $? -eq 2 ] || fail "missing trace: want exit 2"
# The CPU-only trace (HTA fails on it): a diagnosis, exit 0.
"$gtb" diagnose "$traces/cpu-only.json.gz" > "$work/cpu.txt" || fail "cpu-only exit"
grep -q "CPU-only" "$work/cpu.txt" || fail "cpu-only does not say why GPU symptoms are missing"

# A whole job: a folder, or the files named; the straggler the DDP script planted (rank 1).
"$gtb" diagnose "$traces/ddp/job2-straggler" --format json --out "$work/job.json" 2> /dev/null || fail "job folder exit"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['kind']=='job' and d['straggler']['rank']==1, d['straggler']" "$work/job.json" || fail "job straggler"
"$gtb" diagnose "$traces/ddp/job2-straggler/rank-0.json.gz" "$traces/ddp/job2-straggler/rank-1.json.gz" --jobs 1 > "$work/job.txt" || fail "job files exit"
grep -q "came last to the collectives" "$work/job.txt" || fail "job text names no straggler"
"$gtb" diagnose "$traces/ddp/job4-straggler" --format markdown > "$work/job.md" || fail "job markdown"
grep -q "^# Diagnosis of a job of 4 ranks" "$work/job.md" || fail "job markdown title"
"$gtb" report "$fixtures/cpu_a.json" --diagnosis "$work/job.json" > "$work/rj.md" || fail "report --diagnosis of a job"
grep -q "^## Diagnosis of a job of 2 ranks" "$work/rj.md" || fail "report has no job section"
# A malformed rank: exit 2, its file and byte offset named, nothing written.
mkdir -p "$work/badjob" && cp "$traces/ddp/job2-straggler/rank-0.json.gz" "$work/badjob/"
printf '{"traceEvents":[{"ph":"X","ts":1,,}]}' > "$work/badjob/rank-1.json"
"$gtb" diagnose "$work/badjob" --out "$work/badjob.out" 2> "$work/badjob.err"; rc=$?
[ $rc -eq 2 ] || fail "malformed rank exit $rc, want 2"
grep -q "rank-1.json: .*at byte 33 " "$work/badjob.err" || fail "malformed rank message: $(cat "$work/badjob.err")"
[ ! -e "$work/badjob.out" ] || fail "malformed rank wrote output"
# Two traces of one rank, and a trace without a rank: exit 2.
cp "$traces/ddp/job2-straggler/rank-0.json.gz" "$work/again-rank-0.json.gz"
"$gtb" diagnose "$traces/ddp/job2-straggler/rank-0.json.gz" "$work/again-rank-0.json.gz" 2> "$work/dup.err" > /dev/null; rc=$?
[ $rc -eq 2 ] && grep -q "rank 0 again" "$work/dup.err" || fail "duplicate rank: rc $rc $(cat "$work/dup.err")"
cp "$traces/ddp/job2-straggler/rank-1.json.gz" "$work/norank.json.gz"
"$gtb" diagnose "$traces/ddp/job2-straggler/rank-0.json.gz" "$work/norank.json.gz" 2> "$work/norank.err" > /dev/null; rc=$?
[ $rc -eq 2 ] && grep -q "no rank" "$work/norank.err" || fail "no rank: rc $rc $(cat "$work/norank.err")"
"$gtb" diagnose "$traces/ddp/job2" --jobs 0 2> /dev/null; [ $? -eq 2 ] || fail "--jobs 0: want exit 2"
"$gtb" diagnose "$work/missing-folder/" "$traces/ddp/job2/rank-0.json.gz" 2> "$work/miss.err" > /dev/null; rc=$?
[ $rc -eq 2 ] && grep -q "missing-folder" "$work/miss.err" || fail "missing rank file: rc $rc $(cat "$work/miss.err")"
# Two traces side by side.
"$gtb" diagnose --diff "$traces/ddp/diff/base.json.gz" "$traces/ddp/diff/slower-loader.json.gz" --format json --out "$work/diff.json" 2> /dev/null || fail "diff exit"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['kind']=='diff' and d['categories']['data_loader_us']['beyond_noise']" "$work/diff.json" || fail "diff json"
"$gtb" diagnose --diff "$traces/ddp/diff/base.json.gz" "$traces/ddp/diff/sync-every-step.json.gz" | grep -q "aten::item" || fail "diff text names no aten::item"
"$gtb" report "$fixtures/cpu_a.json" --diagnosis "$work/diff.json" > "$work/rd.md" || fail "report --diagnosis of a diff"
grep -q "^## What changed: base.json.gz to slower-loader.json.gz" "$work/rd.md" || fail "report has no diff section"
"$gtb" diagnose --diff "$traces/ddp/diff/base.json.gz" 2> /dev/null; [ $? -eq 2 ] || fail "--diff with one trace: want exit 2"
"$gtb" diagnose --diff "$traces/ddp/diff/base.json.gz" "$work/bad.json" --out "$work/diffbad.out" 2> "$work/diffbad.err"; rc=$?
[ $rc -eq 2 ] && grep -q "bad.json: .*at byte 33 " "$work/diffbad.err" && [ ! -e "$work/diffbad.out" ] || fail "--diff malformed: rc $rc"
echo "PASS"
