# The parallel family in ci/ (ci/families.sh): no role; its phase of ci/gpu-check.sh runs it in one
# process (--ranks 1): NCCL over every local GPU (one GPU: NCCL's one-rank path), the GPU
# data-parallel step and backward beside a reduction. The quick suite runs it with two ranks, which
# a one-GPU machine cannot give a GPU each.
ci_roles=()
gpu_check_phase="parallel-1rank 60"

gpu_check_step() {
  local one_rank b
  one_rank="$out/gtb-${gpu}-parallel-1rank-$(date -u +%Y%m%d).json"
  b=$(phase_budget parallel-1rank)
  if [ $smoke = 1 ]; then not_run parallel-1rank "smoke check"
  elif [ ! -x "$build/bin/gtb-parallel" ]; then not_run parallel-1rank "no gtb-parallel in $build/bin"
  elif [ "$b" -eq 0 ]; then not_run parallel-1rank "out of time (overall deadline)"
  else
    phase_begin parallel-1rank "$b"
    gc_timeout "$b" "$build/bin/gtb" run --quick --backend cuda --family parallel --ranks 1 --out "$one_rank" \
      >"$out/parallel-1rank.log" 2>&1
    phase_end parallel-1rank "$(gc_suite_verdict $? "$one_rank")"
  fi
}
