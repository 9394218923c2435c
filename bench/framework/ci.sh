# The framework family in ci/ (roles: ci/families.sh). Its phase of ci/gpu-check.sh: the family's
# quick records with the PyTorch the GPU machine has (GTB_PYTHON, default python3; PyTorch with CUDA
# is on typical GPU machines, never installed by gtb), run on their own only when the quick suite did
# not reach the family; not run, with the reason, where that interpreter has no PyTorch with CUDA.
ci_roles=()
gpu_check_phase="framework-gpu 120"

gpu_check_step() {
  local own b n py
  own="$out/gtb-${gpu}-framework-$(date -u +%Y%m%d).json"
  b=$(phase_budget framework-gpu)
  n=$(gc_count_records "$results" framework cuda)
  py=${GTB_PYTHON:-python3}
  if [ $smoke = 1 ]; then not_run framework-gpu "smoke check"
  elif [ "$n" -gt 0 ]; then not_run framework-gpu "the quick suite ran its $n GPU records ($(basename "$results"))"
  elif ! "$py" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' >/dev/null 2>&1; then
    not_run framework-gpu "GTB_PYTHON=$py has no PyTorch with a usable CUDA device"
  elif [ ! -x "$build/bin/gtb" ]; then not_run framework-gpu "no gtb binary in $build/bin"
  elif [ "$b" -eq 0 ]; then not_run framework-gpu "out of time (overall deadline)"
  else
    phase_begin framework-gpu "$b"
    GTB_PYTHON=$py gc_timeout "$b" "$build/bin/gtb" run --quick --family framework --out "$own" \
      >"$out/framework-gpu.log" 2>&1
    phase_end framework-gpu "$(gc_suite_verdict $? "$own")"
  fi
}
