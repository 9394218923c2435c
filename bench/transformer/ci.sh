# The transformer family in ci/ (roles: ci/families.sh). Its PyTorch yardstick
# (bench/transformer/torch-cpu-step.py --check) runs as a CTest test, correctness only, skipped where
# torch is not installed. Its phase of ci/gpu-check.sh: the family's GPU quick records (the step,
# checked in float64, materialised and fused, eager and graph), run on their own only when the quick
# suite did not reach the family (it stops at its budget with the families that completed).
ci_roles=()

gpu_check_step() {
  local own b n
  own="$out/gtb-${gpu}-transformer-$(date -u +%Y%m%d).json"
  b=$(budget "${GTB_TRANSFORMER_SECONDS:-120}")
  n=$(gc_count_records "$results" transformer cuda)
  if [ $smoke = 1 ]; then not_run transformer-gpu "smoke check"
  elif [ "$n" -gt 0 ]; then not_run transformer-gpu "the quick suite ran its $n GPU records ($(basename "$results"))"
  elif [ ! -x "$build/bin/gtb" ]; then not_run transformer-gpu "no gtb binary in $build/bin"
  elif [ "$b" -eq 0 ]; then not_run transformer-gpu "out of time (overall deadline)"
  else
    phase_begin transformer-gpu "$b"
    timeout -k 10 "$b" "$build/bin/gtb" run --quick --family transformer --out "$own" \
      >"$out/transformer-gpu.log" 2>&1
    phase_end transformer-gpu "$(gc_suite_verdict $? "$own")"
  fi
}
