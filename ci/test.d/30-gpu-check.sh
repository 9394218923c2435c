#!/usr/bin/env bash
# ci/gpu-check.sh without a GPU: its verdicts on fake test binaries (pass, fail, skip, hang), then a
# smoke dry run on the real build, which must leave a results file and call nothing "pass" that did
# not run. Cheap: the fakes take a few seconds, the dry run one short suite subset.
# test.d: beside
set -uo pipefail
build=$1
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/gpu-check-lib.sh"
source "$here/families.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0
expect() {  # expect LABEL GOT PATTERN
  if [[ $2 == $3 ]]; then echo "ok: $1: $2"; else echo "FAILED: $1: got '$2', want '$3'"; fails=$((fails + 1)); fi
}

# The whole check ends before --deadline when a phase ignores SIGTERM: a stand-in build whose gtb
# ignores it and never ends. Its first suite phase gets what the deadline leaves and is killed at
# the end of its budget; the summary and the archive fit in the reserve. It spends its minute
# waiting, so it runs in the background while the checks below run; its expectations come last.
mkdir -p "$work/stubborn/bin"
echo "CMAKE_GENERATOR:INTERNAL=Ninja" >"$work/stubborn/CMakeCache.txt"
printf '#!/usr/bin/env bash
case ${1:-} in run) trap "" TERM; exec sleep 300 ;; *) exit 1 ;; esac
' >"$work/stubborn/bin/gtb"
chmod +x "$work/stubborn/bin/gtb"
(
  t0=$(date +%s)
  bash "$here/gpu-check.sh" "$work/stubborn-out" --build "$work/stubborn" --deadline 60 --export "$work/stubborn-export" \
    >"$work/stubborn.txt" 2>&1
  echo $(( $(date +%s) - t0 )) >"$work/stubborn.took"
) &
stubborn_pid=$!

mkdir -p "$work/bin"
for spec in pass:0 fail:1 skip:77 crash:139; do
  printf '#!/bin/sh\nexit %s\n' "${spec#*:}" >"$work/bin/test_${spec%%:*}_gpu"
done
printf '#!/bin/sh\nsleep 30\n' >"$work/bin/test_hang_gpu"
# One that ignores SIGTERM: it takes the whole of its budget, the kill grace included.
printf '#!/bin/sh\ntrap "" TERM\nexec sleep 30\n' >"$work/bin/test_stubborn_gpu"
# Binaries that exit 0 and write GoogleTest's JSON report: every test skipped, or one of two.
for spec in allskip:"SKIPPED SKIPPED" someskip:"COMPLETED SKIPPED"; do
  cat >"$work/bin/test_${spec%%:*}_gpu" <<EOF
#!/bin/sh
for a in "\$@"; do case \$a in --gtest_output=json:*) out=\${a#--gtest_output=json:} ;; esac; done
[ -n "\${out:-}" ] || exit 0
{ echo '{'; echo '  "testsuites": ['; for r in ${spec#*:}; do echo '          "result": "'\$r'",'; done; echo '  ]'; echo '}'; } >"\$out"
exit 0
EOF
done
chmod +x "$work/bin"/*
v() { gc_run_binaries "$work/logs" 2 -- "$@" | gc_verdict "GPU test binaries"; }
expect "all pass" "$(v "$work/bin/test_pass_gpu")" "pass: 1 GPU test binaries"
expect "all skipped is not a pass" "$(v "$work/bin/test_skip_gpu" "$work/bin/test_skip_gpu")" "skipped: nothing ran*"
expect "exit 0 with every test skipped is not a pass" "$(v "$work/bin/test_allskip_gpu")" "skipped: nothing ran (1 GPU test binaries exited 77)"
expect "the skip says why" "$(gc_skip_reason "$work/logs")" "every test skipped (2 skipped)*"
expect "tests skipped in a passing binary are counted" "$(v "$work/bin/test_someskip_gpu")" \
  "pass: 1 GPU test binaries (1 tests skipped within them)"
expect "a binary that skipped every test is named" "$(v "$work/bin/test_someskip_gpu" "$work/bin/test_allskip_gpu")" \
  "pass: 1 GPU test binaries (1 tests skipped within them); 1 skipped: test_allskip_gpu"
expect "nothing found" "$(gc_verdict "GPU test binaries" </dev/null)" "not run: no GPU test binaries found"
expect "a failure wins" "$(v "$work/bin/test_pass_gpu" "$work/bin/test_fail_gpu" "$work/bin/test_hang_gpu")" "FAIL: test_fail_gpu(exit 1); timeout: test_hang_gpu"
expect "a crash is a failure" "$(v "$work/bin/test_crash_gpu")" "FAIL: test_crash_gpu(exit 139)"
expect "a hang is a timeout, not a failure" "$(v "$work/bin/test_pass_gpu" "$work/bin/test_hang_gpu")" "timeout: test_hang_gpu (1 passed, 0 skipped)"
expect "a binary with no time left is not started" \
  "$(v "$work/bin/test_stubborn_gpu" "$work/bin/test_pass_gpu" 2>/dev/null)" "timeout: test_stubborn_gpu test_pass_gpu (0 passed, 0 skipped)"
expect "concurrent runs" "$(GC_PARALLEL=1 v "$work/bin/test_pass_gpu" "$work/bin/test_skip_gpu")" "pass: 1 GPU test binaries; 1 skipped: test_skip_gpu"
expect "concurrent runs read the reports" "$(GC_PARALLEL=1 v "$work/bin/test_allskip_gpu")" "skipped: nothing ran*"
expect "ctest timeout" "$(gc_ctest_verdict 124)" "timeout"
expect "ctest failure" "$(gc_ctest_verdict 8)" "FAIL*"
expect "suite without a file" "$(gc_suite_verdict 1 "$work/none.json")" "FAIL (exit 1): no results file"
expect "suite cut short" "$(gc_suite_verdict 124 "$work/none.json")" "timeout: no results file"
echo '{"families":[{"name":"a","status":"ok"}],"records":[{"backend":"cpu","status":"ok"},{"backend":"cuda","status":"skipped"}]}' >"$work/r.json"
expect "suite without a GPU" "$(gc_suite_verdict 0 "$work/r.json")" "done: cpu ok 1, cuda skipped 1"
echo '{"families":[{"name":"a","status":"ok"}],"records":[{"backend":"cuda","status":"invalid"}]}' >"$work/bad.json"
expect "an invalid record fails the suite" "$(gc_suite_verdict 0 "$work/bad.json")" "FAIL (exit 0): cuda invalid 1"
echo '{"records":[{"family":"f","backend":"cuda","status":"ok"},{"family":"f","backend":"cpu","status":"ok"},{"family":"g","backend":"cuda","status":"skipped"}]}' >"$work/fam.json"
expect "a family's GPU records are counted" "$(gc_count_records "$work/fam.json" f cuda)" "1"
expect "a family the suite did not reach has none" "$(gc_count_records "$work/fam.json" h cuda)" "0"
expect "no results file counts none" "$(gc_count_records "$work/none.json" f cuda)" "0"
expect "an empty build has no test binaries" "$(gc_test_binaries "$work" gpu | wc -l)" "0"
expect "test binaries are found where the build put them" \
  "$(gc_test_binaries "$build" cpu | grep -c '/test_[a-z]*_cpu$')" "[1-9]*"

# The kill grace counts inside the budget: a command that ignores SIGTERM ends by SIGKILL at the
# budget, not a grace later.
t0=$(date +%s)
( gc_timeout 6 sh -c 'trap "" TERM; exec sleep 30' ) 2>/dev/null
rc=$?
expect "a command that ignores SIGTERM ends within its budget" "$rc:$(( $(date +%s) - t0 <= 7 ))" "137:1"
expect "the grace is at most a third of a short budget" "$(gc_timeout_args 6)" "-k 2 4"
expect "the grace of a long budget" "$(gc_timeout_args 120)" "-k 10 110"
expect "a budget under 3 s" "$(gc_timeout_args 1)" "-k 1 1"

# The plan: the build first, then every GPU phase before any CPU phase, the families' own phases
# among the GPU ones; every budget a whole number of seconds.
plan=$(gc_plan "$here/..")
kinds=$(awk '{ print $3 }' <<<"$plan" | tr '\n' ' ')
expect "the plan starts with the build and the first GPU pass" "$(head -2 <<<"$plan" | awk '{ print $1 }' | tr '\n' ' ')" "build gpu-first "
expect "the plan runs no CPU phase before a GPU phase" "$(grep -Eo 'cpu-[a-z]+ .*(gpu|family|torch|memcheck)' <<<"$kinds" | wc -l)" "0"
expect "the families' phases are in the plan" "$(awk '$3 ~ /^family/' <<<"$plan" | wc -l)" "$(ci_gpu_phases "$here/.." | wc -l)"
expect "the GPU tests run before the second GPU pass" \
  "$(awk '$1 == "gpu-tests" { t = NR } $1 == "gpu-second" { s = NR } END { print (t && s && t < s) }' <<<"$plan")" "1"
expect "a family's phase over its GPU records names its slice and family" \
  "$(awk '$3 == "family-gpu" && (NF != 5 || $4 !~ /:/)' <<<"$plan" | wc -l)" "0"
expect "every budget is whole seconds" "$(awk '$2 !~ /^[0-9]+$/' <<<"$plan" | wc -l)" "0"

# The dry run with a stand-in clock (ci/gpu-check-plan.py): on a planted listing, the passes take
# each family's slice in run order, a family cut by a pass's budget is dropped (as gtb run drops it),
# the deadline leaves later phases not run, a family's own phase runs the records of its slice the
# passes did not hold after its probe, a family's start cost counts in every process of it, records
# are labelled by their axes where the axes make the cases, requirements fail with exit 1 and bad input
# exits 2. The real plan and listing: the CTest test ci.gpu_check_plan (tests/ci.cmake).
cat >"$work/list.json" <<'EOF2'
[{"family": "a", "workloads": [{"workload": "w", "variant": "v", "backend": "cuda", "cases": 3},
                               {"workload": "w", "variant": "v", "backend": "cpu", "cases": 2}]},
 {"family": "b", "workloads": [{"workload": "x", "variant": "v", "backend": "cuda", "cases": 80}]},
 {"family": "f", "workloads": [{"workload": "m", "variant": "v", "backend": "cuda", "cases": 4,
    "axes": [{"name": "w,n", "names": ["w", "n"], "kind": "param", "values": [[1, 2], [3, 4]]},
             {"name": "mode", "kind": "option", "values": ["eager", "graph"]}]},
   {"workload": "u", "variant": "v", "backend": "cuda", "cases": 1, "axes": [{"name": "k", "kind": "param", "values": [1, 2]}]},
   {"workload": "z", "variant": "v", "backend": "cuda", "cases": 20}]},
 {"family": "c", "workloads": [{"workload": "y", "variant": "v", "backend": "cpu", "cases": 4}]}]
EOF2
printf 'build 100 build\ngpu-first 60 gpu-suite 0:2\nown 60 family-gpu :5 f\ngpu-rest 60 gpu-suite 2:\ncpu-suite 60 cpu-suite\n' >"$work/plan.txt"
sim() {  # sim QUERY [FLAGS...]: QUERY (Python) reads the dry run's JSON as d
  local q=$1; shift
  python3 "$here/gpu-check-plan.py" --plan "$work/plan.txt" --list "$work/list.json" --build 50 --gpu-record 1 \
    --family-start 1 --cpu-record 1 --json "$@" | python3 -c "$q" 2>&1
}
pyq='import json, sys; d = json.load(sys.stdin); p = {r["phase"]: r for r in d["phases"]}'
expect "dry run: the first pass takes two of each family's GPU records" \
  "$(sim "$pyq; print(' '.join(f + ':' + ','.join(v) for f, v in p['gpu-first']['kept'].items()))" --deadline 480)" \
  "a:w/v/cuda#0,w/v/cuda#1 b:x/v/cuda#0,x/v/cuda#1 f:m/v/cuda/w=1,n=2,mode=eager,m/v/cuda/w=3,n=4,mode=eager"
expect "dry run: a family's own phase runs the rest of its slice" \
  "$(sim "$pyq; r = p['own']; print(r['verdict'], r['seconds'], *r['kept']['f'])" --deadline 480)" \
  "done 4.0 m/v/cuda/w=1,n=2,mode=graph m/v/cuda/w=3,n=4,mode=graph u/v/cuda#0"
expect "dry run: a family's start cost counts in each of its processes, and its phase's probe" \
  "$(sim "$pyq; print(p['gpu-first']['seconds'], p['own']['seconds'])" --deadline 480 --start f=7)" "16.0 18.0"
expect "dry run: a family's phase runs the slice from its start when the passes hold none of it" \
  "$(sim "$pyq; print(p['gpu-first']['verdict'], p['own']['verdict'], p['own']['records'])" --deadline 480 --family-start 25)" \
  "timeout: b cut, dropped done 5"
expect "dry run: a probe over half the phase is a timeout" \
  "$(sim "$pyq; print(p['own']['verdict'], p['own']['records'])" --deadline 480 --start f=31)" \
  "timeout: the probe's import 0"
expect "dry run: a family cut by its pass is dropped" \
  "$(sim "$pyq; r = p['gpu-rest']; print(r['verdict'], *r['kept'], *d['gpu_records_kept'].values())" --deadline 480)" \
  "timeout: b cut, dropped a 3 2 5"
expect "dry run: the deadline leaves the CPU records not run" \
  "$(sim "$pyq; print(p['cpu-suite']['verdict'], d['predicted_seconds'] <= 120)" --deadline 120)" \
  "not run: out of time (overall deadline) True"
expect "dry run: no deadline runs everything" \
  "$(sim "$pyq; print(p['cpu-suite']['records'], p['gpu-rest']['verdict'])" --deadline 0)" "6 timeout: b cut, dropped"
req() { python3 "$here/gpu-check-plan.py" --plan "$work/plan.txt" --list "$work/list.json" --build 50 --gpu-record 1 "$@" >/dev/null 2>&1; echo $?; }
expect "dry run: requirements met exit 0" "$(req --require-phase own --require-records 2 --require-case 'f:m/*mode=graph')" "0"
expect "dry run: a record not kept fails" "$(req --require-case 'f:z/*')" "1"
expect "dry run: a phase cut fails" "$(req --require-phase gpu-rest)" "1"
expect "dry run: a family short of records fails" "$(req --require-records 3)" "1"
rc=0; python3 "$here/gpu-check-plan.py" --plan "$work/list.json" --list "$work/list.json" >/dev/null 2>&1 || rc=$?
expect "dry run: a bad plan exits 2" "$rc" "2"
printf 'own 60 family-gpu :5\n' >"$work/plan-nofam.txt"
rc=0; python3 "$here/gpu-check-plan.py" --plan "$work/plan-nofam.txt" --list "$work/list.json" >/dev/null 2>&1 || rc=$?
expect "dry run: a family's phase without its family exits 2" "$rc" "2"
rc=0; python3 "$here/gpu-check-plan.py" --plan "$work/plan.txt" --list "$work/list.json" --start f >/dev/null 2>&1 || rc=$?
expect "dry run: --start without seconds exits 2" "$rc" "2"
"$build/bin/gtb" list --json >"$work/real-list.json" 2>/dev/null ||
  expect "dry run: gtb list --json on the build" "no listing from $build/bin/gtb" "a listing"

# The selection the GPU passes rely on: gtb run --backend cuda --cases FROM:TO on a family of the
# build with at least three GPU records (chosen from the listing, not named): the two slices hold
# the family's GPU records once each and no CPU record; bad values exit 2 and write nothing.
fam=$(python3 -c 'import json, sys
for f in json.load(open(sys.argv[1])):
    n = sum(w["cases"] for w in f["workloads"] if w["backend"] == "cuda")
    if n >= 3:
        print(f["family"], n)
        break' "$work/real-list.json" 2>/dev/null)
if [ -n "$fam" ]; then
  set -- $fam
  ids() { python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(" ".join(sorted(r["backend"] + ":" + r["id"] for r in d["records"])))' "$1"; }
  "$build/bin/gtb" run --quick --family "$1" --backend cuda --budget 0.02 --out "$work/sel-all.json" -q >/dev/null 2>&1
  "$build/bin/gtb" run --quick --family "$1" --backend cuda --cases 0:2 --budget 0.02 --out "$work/sel-a.json" -q >/dev/null 2>&1
  "$build/bin/gtb" run --quick --family "$1" --backend cuda --cases 2: --budget 0.02 --out "$work/sel-b.json" -q >/dev/null 2>&1
  expect "gtb run --backend cuda: only the GPU records" "$(ids "$work/sel-all.json" | tr ' ' '\n' | grep -vc '^cuda:')" "0"
  expect "gtb run --backend cuda: every one of them" "$(ids "$work/sel-all.json" | wc -w)" "$2"
  expect "gtb run --cases 0:2: the first two" "$(ids "$work/sel-a.json" | wc -w)" "2"
  expect "gtb run --cases 0:2 and 2: hold each record once (the same sorted ids)" \
    "$(echo $(ids "$work/sel-a.json") $(ids "$work/sel-b.json") | tr ' ' '\n' | sort | md5sum)" \
    "$(ids "$work/sel-all.json" | tr ' ' '\n' | sort | md5sum)"
  for bad in "--backend tpu" "--cases 3" "--cases 5:2"; do
    rc=0; "$build/bin/gtb" run --quick --family "$1" $bad --out "$work/sel-bad.json" >/dev/null 2>&1 || rc=$?
    expect "gtb run $bad: exit 2, no file" "$rc:$([ -e "$work/sel-bad.json" ] && echo written)" "2:"
  done
else
  expect "gtb run --backend: a family with three GPU records in the listing" "none" "one"
fi

# Bad input: exit 2, a message, and no output folder.
for args in "" "--smoke" "X --bogus" "X --deadline 5" "X --build $work/none" "X --build"; do
  rc=0
  (cd "$work" && bash "$here/gpu-check.sh" $args >/dev/null 2>"$work/err.txt") || rc=$?
  expect "bad input '$args'" "$rc:$( [ -s "$work/err.txt" ] && echo message):$( [ -e "$work/X" ] && echo created)" "2:message:"
done

# A .deb unpacks without dpkg-deb too (GPU images that are not Debian-based).
mkdir -p "$work/deb/pkg/DEBIAN" "$work/deb/pkg/usr/share/gtb-test" "$work/deb/x"
printf 'Package: gtb-test\nVersion: 1\nArchitecture: all\nMaintainer: gtb\nDescription: test\n' >"$work/deb/pkg/DEBIAN/control"
echo unpacked >"$work/deb/pkg/usr/share/gtb-test/file"
# The test package is built with dpkg-deb, which every Debian machine has; a missing or failing
# dpkg-deb fails this check with its reason rather than dropping it.
if ! command -v dpkg-deb >/dev/null; then
  expect "a .deb unpacks with ar + tar" "no dpkg-deb to build the test package" "unpacked"
elif ! dpkg-deb -Zxz --build "$work/deb/pkg" "$work/deb/t.deb" >"$work/deb/build.txt" 2>&1; then
  expect "a .deb unpacks with ar + tar" "dpkg-deb could not build the test package: $(head -c 300 "$work/deb/build.txt")" "unpacked"
else
  GC_NO_DPKG=1 gc_unpack_deb "$work/deb/t.deb" "$work/deb/x"
  expect "a .deb unpacks with ar + tar" "$(cat "$work/deb/x/usr/share/gtb-test/file" 2>/dev/null)" "unpacked"
fi

# The dry run: the smoke check on this build. Without a usable GPU the GPU tests must say skipped (or
# not run without CUDA) and the GPU records skipped; with one, they must pass and the GPU records be
# ok. Memcheck is never part of the smoke check. One family keeps the dry run short on a 2-core machine.
dry_family=$(ci_families "$here/.." gpu-dry-run)
if GTB_SMOKE_FAMILIES=${dry_family:?no family declares gpu-dry-run (ci/families.sh)} bash "$here/gpu-check.sh" "$work/out" --build "$build" --smoke --export "$work/export" >"$work/dry.txt" 2>&1; then
  summary=$(sed -n '/gpu-check summary/,$p' "$work/dry.txt")
  echo "$summary" | head -12
  # Whether a GPU is usable is what the family binaries found (context.gpu of the dry run's results
  # file: the probe every GPU test binary also makes before its tests), not whether CUDA was built.
  gpu=none
  if grep -q '^GTB_BUILT_WITH_CUDA:INTERNAL=ON$' "$build/CMakeCache.txt"; then
    gpu=$(python3 - "$work/out"/gtb-*.json 2>/dev/null <<'PY'
import json, sys
try:
    print("usable" if json.load(open(sys.argv[1]))["context"]["gpu"]["available"] else "unusable")
except Exception:
    print("unknown")
PY
)
  fi
  case $gpu in
    usable) want_tests="pass: *" want_suite="*done: *cuda ok*" passing='^  (build|gpu-tests) ' ;;
    unusable) want_tests="*skipped: nothing ran*no usable GPU*" want_suite="*done: *cuda skipped*" passing='^  build ' ;;
    none) want_tests="*not run: the build has no CUDA backend*" want_suite="*done: *cuda skipped*" passing='^  build ' ;;
    *) want_tests="(a results file that says whether a GPU is usable)" want_suite="$want_tests" passing='^  build ' ;;
  esac
  echo "dry run: GPU $gpu"
  expect "dry run: GPU tests" "$(grep -E '^  gpu-tests ' <<<"$summary")" "$want_tests"
  expect "dry run: memcheck" "$(grep -E '^  memcheck ' <<<"$summary")" "*not run*"
  expect "dry run: suite" "$(grep -E '^  gpu-first ' <<<"$summary")" "$want_suite"
  expect "dry run: nothing else passes" "$(grep -E '^  [a-z-]+ .* pass' <<<"$summary" | grep -Evc "$passing")" "0"
  expect "dry run: results file" "$(ls "$work/out"/gtb-*.json 2>/dev/null | wc -l)" "1"
  expect "dry run: exported archive" "$(tar -tzf "$work/export/gpu-check.tar.gz" 2>/dev/null | grep -cE '(^|/)summary\.txt$')" "1"
  expect "dry run: table says not run" "$(grep -c '| not run |' "$work/out/gtb-vs-torch.md")" "[1-9]*"
else
  cat "$work/dry.txt"
  echo "FAILED: the dry run of ci/gpu-check.sh exited non-zero"
  fails=$((fails + 1))
fi
wait "$stubborn_pid"
took=$(cat "$work/stubborn.took" 2>/dev/null || echo unknown)
expect "a phase that ignores SIGTERM: the check ends before --deadline 60" "$(( ${took/unknown/999} < 60 )):$took s" "1:*"
expect "... and its phase is a timeout" "$(grep -E '^  gpu-first ' "$work/stubborn-out/summary.txt")" "*timeout*"
expect "... and the archive is written" "$(tar -tzf "$work/stubborn-export/gpu-check.tar.gz" 2>/dev/null | grep -c 'summary.txt$')" "1"
[ $fails -eq 0 ] || { echo "$fails gpu-check expectation(s) failed"; exit 1; }
echo "gpu-check: all expectations met"
