#!/usr/bin/env bash
# Calibrates gtb's regression gate on this machine, under a concurrent compile: the A/A false-alarm
# rate of `--runs K` baselines and of `gtb ab`, and how often planted slowdowns are caught.
# usage: ci/calibrate-compare.sh BUILD OUTDIR   (BUILD: a build folder with tests, i.e. bin/gtb-selftest)
#        ci/calibrate-compare.sh --recompare BUILD OUTDIR   (decide the kept results files again)
# Knobs (environment), defaults sized for about 25 minutes on a 2-core machine with one compile beside it:
#   CAL_FAMILIES     --runs A/A families (those declaring the role calibrate, ci/families.sh, and selftest)
#   CAL_AB_FAMILIES  gtb ab A/A families (those declaring calibrate-ab, and selftest)
#   CAL_RUNS (3), CAL_AA_FILES (6: neighbouring files compared, 5 pairs), CAL_AB_PAIRS (4; the timed
#   gtb ab below is a fifth A/A pair),
#   CAL_ROUNDS (5), CAL_TRIALS (planted trials per size and mode, 20), CAL_PLANTED ("0.10 0.25"),
#   CAL_TIMED_AB (families of one timed gtb ab, those declaring calibrate; empty: skip),
#   CAL_TARGET (the record slowed down: selftest/spin/scalar/cpu/steps=262144), CAL_LOAD_JOBS (1 compile loop).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
recompare_only=0
if [ "${1:-}" = "--recompare" ]; then recompare_only=1; shift; fi
build=$(cd "${1:?usage: calibrate-compare.sh BUILD OUTDIR}" && pwd)
out=${2:?usage: calibrate-compare.sh BUILD OUTDIR}
source "$here/families.sh"
families=${CAL_FAMILIES:-$(ci_families "$root" calibrate),selftest}
ab_families=${CAL_AB_FAMILIES:-$(ci_families "$root" calibrate-ab),selftest}
runs=${CAL_RUNS:-3}
aa_files=${CAL_AA_FILES:-6}
ab_pairs=${CAL_AB_PAIRS:-4}
rounds=${CAL_ROUNDS:-5}
trials=${CAL_TRIALS:-20}
planted=${CAL_PLANTED:-0.10 0.25}
timed_ab=${CAL_TIMED_AB-$(ci_families "$root" calibrate)}
load_jobs=${CAL_LOAD_JOBS:-1}
target=${CAL_TARGET:-selftest/spin/scalar/cpu/steps=262144}
[ -x "$build/bin/gtb-selftest" ] || { echo "calibrate: $build/bin/gtb-selftest missing (build with tests)" >&2; exit 2; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
load_pids=()
cleanup() {
  for p in "${load_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
# A private copy of the binaries: rebuilding the tree during the calibration must not change them.
mkdir -p "$work/a/bin" && cp "$build"/bin/gtb "$build"/bin/gtb-* "$work/a/bin/"
gtb="$work/a/bin/gtb"
GTB_FAMILIES="$(find "$work/a/bin" -name 'gtb-*' -printf '%f\n' | sed 's/^gtb-//' | sort | paste -sd, -)"
export GTB_FAMILIES

# Decides every kept pair of results files (again); a pair's exit code sits beside its comparison.
recompare() {
  local b n name rc extra
  for b in "$out"/files/*.base.json; do
    n=${b%.base.json}.new.json
    name=$(basename "${b%.base.json}")
    extra=()
    case $name in *-ab-*) extra=(--paired) ;; esac
    # gtb ab's confirmation rounds, when it ran them, decide again too.
    [ -e "${b%.base.json}.base.confirm.json" ] &&
      extra+=(--confirmed-by "${b%.base.json}.base.confirm.json" "${b%.base.json}.new.confirm.json")
    rc=0; "$gtb" compare "$b" "$n" "${extra[@]}" --format json --out "$out/cmp/$name.json" >/dev/null || rc=$?
    echo "$rc" >"$out/cmp/$name.rc"
  done
  python3 "$here/calibrate-summary.py" "$out/cmp" "$target" | tee "$out/summary.md"
}
mkdir -p "$out/files" "$out/cmp"
if [ $recompare_only = 1 ]; then recompare; exit 0; fi

# The planted build: the same binaries, gtb-selftest wrapped to slow the target record down.
plant_build() {  # plant_build FRACTION -> folder
  local d="$work/p$1"
  mkdir -p "$d/bin"
  printf '#!/bin/sh\nGTB_SELFTEST_SLOWDOWN=%s@%s exec %s "$@"\n' "$1" "$target" "$work/a/bin/gtb-selftest" >"$d/bin/gtb-selftest"
  chmod +x "$d/bin/gtb-selftest"
  echo "$d"
}

# The load: compiling one of the project's sources in a loop, as another job on a CI runner would.
for ((j = 0; j < load_jobs; j++)); do
  (while :; do c++ -std=c++17 -O2 -I"$root" -c "$root/harness/driver/common/compare_decide.cpp" -o /dev/null 2>/dev/null; done) &
  load_pids+=($!)
done
log() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$out/log.txt"; }
log "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) logical CPUs; load: $load_jobs compile loop(s) + whatever else runs"
log "uptime: $(uptime)"

ab_pair() {  # ab_pair NAME BUILD_A BUILD_B FAMILIES
  local s; s=$(date +%s)
  "$gtb" ab "$2" "$3" --family "$4" --rounds "$rounds" --keep "$work/keep" >/dev/null 2>>"$out/run.log" || true
  mv "$work/keep/base.json" "$out/files/$1.base.json" && mv "$work/keep/new.json" "$out/files/$1.new.json"
  if [ -e "$work/keep/base.confirm.json" ]; then
    mv "$work/keep/base.confirm.json" "$out/files/$1.base.confirm.json"
    mv "$work/keep/new.confirm.json" "$out/files/$1.new.confirm.json"
  fi
  echo $(( $(date +%s) - s ))
}

# 1. Planted slowdowns of the target record: --runs K baselines and gtb ab.
for f in $planted; do
  p=$(plant_build "$f")
  for ((t = 1; t <= trials; t++)); do
    "$gtb" run --family selftest --runs "$runs" --out "$out/files/plant-runs-$f-$t.base.json" -q 2>/dev/null || true
    GTB_BIN_DIR="$p/bin" "$gtb" run --family selftest --runs "$runs" --out "$out/files/plant-runs-$f-$t.new.json" -q \
      2>/dev/null || true
    ab_pair "plant-ab-$f-$t" "$work/a" "$p" selftest >/dev/null
  done
  log "planted $f: $trials trials per mode"
done
# 2. A/A with --runs K baselines: K interleaved runs per file, neighbouring files compared.
t0=$(date +%s)
for ((i = 1; i <= aa_files; i++)); do
  "$gtb" run --family "$families" --runs "$runs" --out "$out/files/aa-$i.json" -q 2>>"$out/run.log" || true
  if [ "$i" -gt 1 ]; then
    cp "$out/files/aa-$((i - 1)).json" "$out/files/aa-runs-$((i - 1)).base.json"
    cp "$out/files/aa-$i.json" "$out/files/aa-runs-$((i - 1)).new.json"
  fi
done
log "runs A/A: $aa_files files of --runs $runs ($families) in $(( $(date +%s) - t0 )) s"

# 3. A/A with gtb ab: the same build on both sides.
for ((i = 1; i <= ab_pairs; i++)); do
  log "ab A/A pair $i ($ab_families, --rounds $rounds): $(ab_pair "aa-ab-$i" "$work/a" "$work/a" "$ab_families") s"
done

# 4. One gtb ab over the quick CPU families, timed (also an A/A pair).
if [ -n "$timed_ab" ]; then
  log "ab A/A over $timed_ab (--rounds $rounds): $(ab_pair aa-ab-0 "$work/a" "$work/a" "$timed_ab") s"
fi

log "uptime: $(uptime)"
recompare
