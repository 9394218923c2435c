# The framework family in ci/ (roles: ci/families.sh). Its phase of ci/gpu-check.sh follows the GPU
# tests: the rest of the family's first eight GPU quick records (one case of each of PyTorch's GPU
# workloads: bench/framework/framework.cpp registers them first), those the first GPU pass did not
# hold, with the PyTorch the GPU machine has (GTB_PYTHON, default python3; PyTorch with CUDA is on
# typical GPU machines, never installed by gtb); not run, with the reason, where that interpreter has
# no PyTorch with CUDA. Only those eight: a phase that runs one family keeps nothing when its budget
# cuts the family (gtb run drops a family it stops), so it takes a slice that fits; the family's other
# GPU records run in the later GPU passes, as every family's do.
ci_roles=()
gpu_check_phase="framework-gpu 75 after=gpu-tests gpu-records=:8"

gpu_check_step() {
  local name=framework-gpu own b slice from to py t_end left rc
  own="$out/gtb-${gpu}-framework-$(date -u +%Y%m%d).json"
  rm -f "$own"
  b=$(phase_budget "$name")
  slice=$(gc_plan_cases "$root" "$name")
  from=${slice%%:*} to=${slice#*:}
  from=$(gpu_records_held framework "${from:-0}")
  py=${GTB_PYTHON:-python3}
  if [ $smoke = 1 ]; then not_run "$name" "smoke check"
  elif [ ! -x "$build/bin/gtb" ]; then not_run "$name" "no gtb binary in $build/bin"
  elif [ -n "$to" ] && [ "$from" -ge "$to" ]; then not_run "$name" "the GPU passes before it ran its first $to GPU records"
  elif [ "$b" -eq 0 ]; then not_run "$name" "out of time (overall deadline)"
  else
    phase_begin "$name" "$b"
    t_end=$(( $(gc_now) + b ))
    # The probe is PyTorch's cold import (it warms the run's): at most half the phase.
    gc_timeout $(( b / 2 )) "$py" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' \
      >"$out/$name-probe.log" 2>&1
    rc=$?
    case $rc in
      0)
        left=$(( t_end - $(gc_now) )); [ "$left" -ge 1 ] || left=1
        GTB_PYTHON=$py gc_timeout "$left" "$build/bin/gtb" run --quick --backend cuda --family framework \
          --cases "$from:$to" --out "$own" --logs "$out/suite-logs/$name" >"$out/$name.log" 2>&1
        phase_end "$name" "$(gc_suite_verdict $? "$own")" ;;
      124|137) phase_end "$name" "timeout: GTB_PYTHON=$py took over $(( b / 2 )) s to import torch ($name-probe.log)" ;;
      *) phase_end "$name" "not run: GTB_PYTHON=$py has no PyTorch with a usable CUDA device ($name-probe.log)" ;;
    esac
  fi
}
