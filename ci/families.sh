# What the ci/ scripts know of the families: only what each declares in bench/<family>/ci.sh. That
# file is sourced; it sets
#   ci_roles=(...)  the jobs the family takes part in:
#     aa-ab         ci/test.d/20-aa-compare.sh: the A/A `gtb ab` of a build against itself, and its two
#                   kept files compared
#     calibrate     ci/calibrate-compare.sh: the `--runs` A/A files and the timed `gtb ab`
#     calibrate-ab  ci/calibrate-compare.sh: the `gtb ab` A/A pairs
#     gpu-smoke     ci/gpu-check.sh --smoke: the subset of the quick suite
#     gpu-dry-run   ci/test.d/30-gpu-check.sh: the smoke dry run without a GPU (one short family)
# and may declare a phase of ci/gpu-check.sh of its own: gpu_check_phase="NAME SECONDS [after=PHASE]
# [gpu-records=FROM:TO]" (its name and default budget, GTB_<NAME>_SECONDS overriding it; where it runs
# and which of its GPU records it runs: gc_plan in ci/gpu-check-lib.sh) and the function gpu_check_step
# that runs it (see ci/gpu-check.sh); and the variables ci/static-checks.sh reads (sc_*, see there).
# A family's GPU records need nothing here: `gtb run --backend cuda` runs every family's. Nothing
# else in ci/ names a family.

# ci_families ROOT ROLE: the families that declare ROLE, comma-separated, in bench/ order.
ci_families() {
  local root=$1 role=$2 f out=""
  for f in "$root"/bench/*/ci.sh; do
    [ -f "$f" ] || continue
    if (
      ci_roles=()
      source "$f" >/dev/null
      for r in "${ci_roles[@]}"; do [ "$r" = "$role" ] && exit 0; done
      exit 1
    ); then
      out+="${out:+,}$(basename "$(dirname "$f")")"
    fi
  done
  printf '%s\n' "$out"
}

# ci_gpu_phases ROOT: each family's own gpu-check phase as declared, then family=FAMILY, in bench/ order.
ci_gpu_phases() {
  local f
  for f in "$1"/bench/*/ci.sh; do
    [ -f "$f" ] || continue
    ( gpu_check_phase=""; source "$f" >/dev/null
      [ -z "$gpu_check_phase" ] || echo "$gpu_check_phase family=$(basename "$(dirname "$f")")" )
  done
}
