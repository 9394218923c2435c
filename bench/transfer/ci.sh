# The transfer family in ci/ (roles: ci/families.sh), and its phase of ci/gpu-check.sh: the points
# of the gtb vs PyTorch table that the quick suite does not hold (256 MiB copies).
ci_roles=(gpu-smoke gpu-dry-run)
gpu_check_phase="table-points 60"

gpu_check_step() {
  local points="$out/gtb-table-points.json" b
  b=$(phase_budget table-points)
  if [ $smoke = 1 ]; then not_run table-points "smoke check"
  elif [ ! -x "$build/bin/gtb-transfer" ]; then not_run table-points "no gtb-transfer in $build/bin"
  elif [ "$b" -eq 0 ]; then not_run table-points "out of time (overall deadline)"
  else
    phase_begin table-points "$b"
    gc_timeout "$b" "$build/bin/gtb-transfer" --gtb_suite=full --gtb_out="$points" \
      '--benchmark_filter=^transfer/copy_(h2d|d2h)/cudaMemcpyAsync/cuda/bytes=268435456,memory=(pinned|pageable),clock=device/' \
      >"$out/table-points.log" 2>&1
    phase_end table-points "$(gc_suite_verdict $? "$points")"
  fi
  extra_results+=("$points")
}
