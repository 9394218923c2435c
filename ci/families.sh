# What the ci/ scripts know of the families: only what each declares in bench/<family>/ci.sh. That
# file is sourced; it sets
#   ci_roles=(...)  the jobs the family takes part in:
#     aa-ab         ci/test.d/20-aa-compare.sh: the A/A `gtb ab` of a build against itself
#     aa-runs       ci/test.d/20-aa-compare.sh: two `--runs 3` files of one build compared
#     calibrate     ci/calibrate-compare.sh: the `--runs` A/A files and the timed `gtb ab`
#     calibrate-ab  ci/calibrate-compare.sh: the `gtb ab` A/A pairs
#     gpu-smoke     ci/gpu-check.sh --smoke: the subset of the quick suite
#     gpu-dry-run   ci/test.d/30-gpu-check.sh: the smoke dry run without a GPU (one short family)
# and may define gpu_check_step, a phase of ci/gpu-check.sh run after the quick suite (see there),
# and the variables ci/static-checks.sh reads (sc_*, see there). Nothing else in ci/ names a family.

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
