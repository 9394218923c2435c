# Pieces of ci/gpu-check.sh that its test (ci/test.d/30-gpu-check.sh) exercises on their own: the
# phases' plan, running a command within a budget that holds its kill grace, finding the test
# binaries, running them with a budget, and turning exit codes into verdicts.
# Verdict words: pass, FAIL, timeout, skipped, not run. "pass" only for something that ran and passed.

# ---- the plan: phases in order with their default budgets (seconds, each GTB_<NAME>_SECONDS
# overrides one) ----
# GPU work first, in passes over every family's GPU quick records (`gtb run --backend cuda --cases
# FROM:TO`): the first two records of every family, then the next six, then the rest, so that every
# family is measured before any family's whole list (gtb run drops a family cut by the budget, so a
# pass's cut costs one family's slice, not its whole list). The GPU tests run after the first pass,
# before the second; a family's own phase (bench/<family>/ci.sh) follows the phase its declaration
# names (one that runs the rest of a family's first GPU records follows the GPU tests, so that the
# first minutes reach one case of each of that family's GPU workloads), the others follow the GPU
# passes; then PyTorch's figures and memcheck; the CPU records and the CPU tests last. GC_RESERVE
# seconds of --deadline are kept for the summary, the table and the archive. ci/gpu-check-plan.py
# plays this plan with a stand-in clock (docs/gpu-check.md).
GC_RESERVE=15
GC_KILL_GRACE=10
# gc_plan ROOT: "NAME BUDGET KIND [CASES [FAMILY]]" lines in run order; KIND: build, gpu-suite (CASES:
# the slice of each family's GPU records), gpu-tests, family (a bench/<family>/ci.sh phase), family-gpu
# (such a phase that runs FAMILY's own GPU quick records in CASES, those the phases before it did not
# hold), torch, memcheck, cpu-suite, cpu-tests. A family declares its phase (ci/families.sh) as
# "NAME SECONDS [after=PHASE] [gpu-records=FROM:TO]": it runs after PHASE (default gpu-rest), in
# bench/ order among those after the same phase.
gc_plan() {
  local fams line
  fams=$(ci_gpu_phases "$1")
  for line in "build 300 build" "gpu-first 120 gpu-suite 0:2" "gpu-tests 90 gpu-tests" \
      "gpu-second 90 gpu-suite 2:8" "gpu-rest 150 gpu-suite 8:" "torch-reference 90 torch" \
      "memcheck 120 memcheck" "cpu-suite 120 cpu-suite" "cpu-tests 240 cpu-tests"; do
    echo "$line"
    [ -n "$fams" ] || continue
    awk -v prev="${line%% *}" '{
      after = "gpu-rest"; cases = ""; fam = ""
      for (i = 3; i <= NF; i++) {
        if ($i ~ /^after=/) after = substr($i, 7)
        else if ($i ~ /^gpu-records=/) cases = substr($i, 13)
        else if ($i ~ /^family=/) fam = substr($i, 8)
      }
      if (after != prev) next
      if (cases != "") print $1, $2, "family-gpu", cases, fam
      else print $1, $2, "family"
    }' <<<"$fams"
  done
}
# gc_default_budget ROOT NAME: a phase's default budget from the plan; gc_plan_cases ROOT NAME: its slice.
gc_default_budget() { gc_plan "$1" | awk -v n="$2" '$1 == n { print $2; exit }'; }
gc_plan_cases() { gc_plan "$1" | awk -v n="$2" '$1 == n { print $4; exit }'; }

# gc_now: seconds since the epoch (one clock for every budget).
gc_now() { date +%s; }

# gc_timeout SECONDS CMD...: runs CMD and ends it within SECONDS, its kill grace included: SIGTERM
# at SECONDS minus the grace (GC_KILL_GRACE, at most a third of SECONDS), SIGKILL at SECONDS, so a
# command that ignores SIGTERM still ends in time. Exit status: CMD's, 124 (stopped by SIGTERM) or
# 137 (killed). Under 3 s: SIGTERM at 1 s, SIGKILL 1 s later.
gc_timeout() {
  local secs=$1; shift
  timeout $(gc_timeout_args "$secs") "$@"
}
# gc_timeout_args SECONDS: timeout(1)'s "-k GRACE TERM" for gc_timeout (for `env ... timeout`).
gc_timeout_args() {
  local secs=$1 grace term
  grace=$(( secs / 3 < GC_KILL_GRACE ? secs / 3 : GC_KILL_GRACE ))
  [ "$grace" -ge 1 ] || grace=1
  term=$(( secs - grace ))
  [ "$term" -ge 1 ] || term=1
  echo "-k $grace $term"
}

# gc_test_binaries BUILD LABEL: the test executables CTest knows under LABEL (cpu or gpu), one a line,
# wherever the build put them; only those that exist (an unbuilt one is a CTest placeholder).
gc_test_binaries() {
  local build=$1 label=$2
  if command -v python3 >/dev/null; then
    ctest --test-dir "$build" -L "^$label\$" --show-only=json-v1 2>/dev/null | python3 -c '
import json, os, sys
try:
    tests = json.load(sys.stdin).get("tests", [])
except ValueError:
    sys.exit(0)
seen = []
for t in tests:
    cmd = t.get("command") or []
    if cmd and cmd[0] not in seen and os.path.basename(cmd[0]).startswith("test_") and \
            os.path.isfile(cmd[0]) and os.access(cmd[0], os.X_OK):
        seen.append(cmd[0])
for path in seen:
    print(path)'
  else
    find "$build" -path '*/CMakeFiles' -prune -o -type f -perm -u+x -name "test_*_$label" -print | sort
  fi
}

# gc_gtest_counts JSON: "COMPLETED SKIPPED", the tests of a GoogleTest JSON report (--gtest_output=json)
# that ran to the end and that skipped. Read with grep: GoogleTest writes one key a line.
gc_gtest_counts() {
  local completed skipped
  completed=$(grep -c '"result": *"COMPLETED"' "$1" 2>/dev/null)
  skipped=$(grep -c '"result": *"SKIPPED"' "$1" 2>/dev/null)
  echo "${completed:-0} ${skipped:-0}"
}

# gc_run_binaries LOGDIR SECONDS [ENV=VALUE...] -- BIN...: runs the binaries within SECONDS, logging
# to LOGDIR/NAME.log (and GoogleTest's report to LOGDIR/NAME.json), and prints "NAME RC SKIPPED"
# lines, SKIPPED being the binary's skipped tests ("-" when it wrote no report). One after the other,
# each may use what the ones before it left (a binary with no time left is not started and counts as
# a timeout, 124); with GC_PARALLEL=1 all at once, each with all of it. GC_WRAP, if set, is a command
# put in front of each binary (compute-sanitizer ...). GTEST_SKIP() exits 0 like a pass: a binary
# that exited 0 with no test that ran to the end (every test skipped) is reported 77.
gc_run_binaries() {
  local logdir=$1 secs=$2; shift 2
  local envs=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  mkdir -p "$logdir"
  local t name left rc counts pids=() names=() end=$(( $(date +%s) + secs ))
  for t in "$@"; do
    name=$(basename "$t")
    rm -f "$logdir/$name.json"
    if [ "${GC_PARALLEL:-0}" = 1 ]; then
      ( env "${envs[@]}" timeout $(gc_timeout_args "$secs") ${GC_WRAP:-} "$t" --gtest_output="json:$logdir/$name.json" \
          >"$logdir/$name.log" 2>&1; echo $? >"$logdir/$name.rc" ) &
      pids+=($!)
    else
      left=$(( end - $(date +%s) ))
      if [ "$left" -lt 1 ]; then
        echo "not started: the phase's budget was spent" >"$logdir/$name.log"
        echo 124 >"$logdir/$name.rc"
      else
        env "${envs[@]}" timeout $(gc_timeout_args "$left") ${GC_WRAP:-} "$t" --gtest_output="json:$logdir/$name.json" \
          >"$logdir/$name.log" 2>&1
        echo $? >"$logdir/$name.rc"
      fi
    fi
    names+=("$name")
  done
  for t in "${pids[@]}"; do wait "$t"; done
  for name in "${names[@]}"; do
    rc=$(cat "$logdir/$name.rc")
    if [ -f "$logdir/$name.json" ]; then
      counts=$(gc_gtest_counts "$logdir/$name.json")
      if [ "$rc" = 0 ] && [ "${counts%% *}" = 0 ]; then
        rc=77
        echo "SKIPPED: every test skipped (${counts#* } skipped): see the [  SKIPPED ] lines" >>"$logdir/$name.log"
      fi
      echo "$name $rc ${counts#* }"
    else
      echo "$name $rc -"
    fi
  done
}

# gc_verdict WHAT < "NAME RC [SKIPPED]" lines: one verdict for a set of test binaries (or memcheck
# runs). 0 pass, 77 skipped (no usable GPU, or every test skipped), 124/137 timeout, anything else
# FAIL. FAIL wins over timeout, timeout over pass; all skipped is "skipped", never "pass"; no lines
# at all is "not run". A pass names the binaries that skipped and counts the tests skipped in the rest.
gc_verdict() {
  local what=$1 name rc tskip pass=0 skip=0 skipped_tests=0 skipped_names="" fails="" timeouts=""
  while read -r name rc tskip; do
    [ -n "$name" ] || continue
    case $rc in
      0) pass=$((pass + 1)); [[ ${tskip:-} =~ ^[0-9]+$ ]] && skipped_tests=$((skipped_tests + tskip)) ;;
      77) skip=$((skip + 1)); skipped_names="$skipped_names $name" ;;
      124|137) timeouts="$timeouts $name" ;;
      *) fails="$fails $name(exit $rc)" ;;
    esac
  done
  local n=$((pass + skip + $(wc -w <<<"$fails$timeouts")))
  local within=""
  [ "$skipped_tests" -gt 0 ] && within=" ($skipped_tests tests skipped within them)"
  if [ "$n" -eq 0 ]; then echo "not run: no $what found"
  elif [ -n "$fails" ]; then echo "FAIL:$fails${timeouts:+; timeout:$timeouts}"
  elif [ -n "$timeouts" ]; then echo "timeout:$timeouts ($pass passed, $skip skipped)"
  elif [ "$pass" -eq 0 ]; then echo "skipped: nothing ran ($skip $what exited 77)"
  elif [ "$skip" -gt 0 ]; then echo "pass: $pass $what$within; $skip skipped:$skipped_names"
  else echo "pass: $pass $what$within"
  fi
}

# gc_skip_reason LOGDIR: the first "SKIPPED: ..." line the binaries printed (why nothing ran).
gc_skip_reason() {
  cat "$1"/*.log 2>/dev/null | sed -n 's/^SKIPPED: //p' | head -1
}

# gc_ctest_verdict RC: a ctest run under `timeout`.
gc_ctest_verdict() {
  case $1 in 0) echo pass ;; 124|137) echo "timeout" ;; *) echo "FAIL (ctest exit $1)" ;; esac
}

# gc_suite_verdict RC RESULTS: the quick suite. Counts the records by backend and status; "FAIL"
# when gtb failed or a record is failed or invalid, "timeout" when the budget ran out (the results
# file then holds the families that completed), "no results file" when there is none.
gc_suite_verdict() {
  local rc=$1 results=$2 counts=""
  if [ -f "$results" ] && command -v python3 >/dev/null; then
    counts=$(python3 - "$results" <<'PY'
import collections, json, sys
try:
    d = json.load(open(sys.argv[1]))
except (OSError, ValueError) as e:
    print(f"unreadable: {e}")
    sys.exit(0)
c = collections.Counter((r.get("backend"), r.get("status")) for r in d.get("records", []))
bad = sum(v for (b, s), v in c.items() if s in ("failed", "invalid"))
fams = [f"{f['name']}:{f['status']}" for f in d.get("families", []) if f.get("status") != "ok"]
parts = [f"{b} {s} {v}" for (b, s), v in sorted(c.items())]
print(("BAD " if bad or fams else "") + (", ".join(parts) or "no records (none selected)") +
      (f"; families {' '.join(fams)}" if fams else ""))
PY
)
  fi
  if [ ! -f "$results" ]; then
    case $rc in 124|137) echo "timeout: no results file" ;; *) echo "FAIL (exit $rc): no results file" ;; esac
  elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then echo "timeout: partial results (${counts#BAD })"
  elif [ "$rc" -ne 0 ] || [ "${counts#BAD }" != "$counts" ]; then echo "FAIL (exit $rc): ${counts#BAD }"
  else echo "done: ${counts:-results written}"
  fi
}

# gc_count_records RESULTS FAMILY BACKEND: how many records of FAMILY on BACKEND the results file
# holds, whatever their status (0 when the file is missing or unreadable). A family's phase reads it
# to learn whether the quick suite already reached that family.
gc_count_records() {
  [ -f "$1" ] && command -v python3 >/dev/null || { echo 0; return; }
  python3 - "$1" "$2" "$3" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    print(0)
    sys.exit(0)
print(sum(1 for r in d.get("records", []) if r.get("family") == sys.argv[2] and r.get("backend") == sys.argv[3]))
PY
}

# gc_unpack_deb DEB DIR: dpkg-deb where there is one; otherwise ar + tar (a .deb is an ar archive
# whose data.tar.* holds the files), for GPU images that are not Debian-based.
gc_unpack_deb() {
  if [ -z "${GC_NO_DPKG:-}" ] && command -v dpkg-deb >/dev/null; then dpkg-deb -x "$1" "$2"; return; fi
  local member
  member=$(ar t "$1" | grep -m1 '^data\.tar') || return 1
  case $member in
    *.xz) ar p "$1" "$member" | tar -xJ -C "$2" ;;
    *.zst) ar p "$1" "$member" | tar --zstd -x -C "$2" ;;
    *.gz) ar p "$1" "$member" | tar -xz -C "$2" ;;
    *) ar p "$1" "$member" | tar -x -C "$2" ;;
  esac
}
