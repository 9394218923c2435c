#!/usr/bin/env bash
# Planted twins of the GPU check's plan tests (tests/ci.cmake): each must fail with the check's message.
#   no-slot  the real plan without the framework's phase: its GPU workloads are not reached
#   doc      docs/gpu-check.md with a changed figure in the dry run's block
#   budget   docs/gpu-check.md with a phase's budget changed in its table of phases
# usage: gpu_check_plan_planted.sh MODE PYTHON ROOT GTB WORKDIR [SCENARIO ARGS...]
set -u
mode=$1 py=$2 root=$3 gtb=$4 work=$5
shift 5
mkdir -p "$work" || exit 2
case $mode in
  no-slot)
    bash -c 'source "$1/ci/gpu-check-lib.sh" && source "$1/ci/families.sh" && gc_plan "$1"' plan "$root" |
      grep -v '^framework-gpu ' >"$work/plan.txt" || exit 2
    "$py" "$root/ci/gpu-check-plan.py" --plan "$work/plan.txt" --gtb "$gtb" "$@" ;;
  doc|budget)
    # doc: the first "N of M" of the block's counts of records kept, one more; budget: gpu-first's.
    if [ "$mode" = doc ]; then
      sed '/^<!-- gpu-check-plan:/,/^<!-- \/gpu-check-plan -->/ s/ \([0-9][0-9]*\) of \([0-9]\)/ 9\1 of \2/' \
        "$root/docs/gpu-check.md" >"$work/gpu-check.md"
    else
      sed 's/^\(| [0-9]* | gpu-first | \)[0-9]*/\1999/' "$root/docs/gpu-check.md" >"$work/gpu-check.md"
    fi
    if cmp -s "$root/docs/gpu-check.md" "$work/gpu-check.md"; then echo "nothing planted in $work/gpu-check.md"; exit 2; fi
    "$py" "$root/ci/gpu-check-plan.py" --gtb "$gtb" --doc "$work/gpu-check.md" --check ;;
  *) echo "usage: $0 no-slot|doc|budget PYTHON ROOT GTB WORKDIR [ARGS...]"; exit 2 ;;
esac
