#!/bin/bash
# A planted twin of the front-door check: a copy of the sources with one include around the door.
# usage: front_door_planted.sh MODE PYTHON SOURCE_ROOT WORK_DIR
#   MODE bench:   a family header includes the results document directly
#   MODE shim:    harness/runtime/gtb.h is back as a forwarding header, and a family includes it
#   MODE driver:  the driver includes the door (it links only gtb_runtime_base)
#   MODE door:    a door header includes the driver
#   MODE kernels: a kernel header includes the door
#   MODE missing: a family includes a gtb/ header the door does not hold
set -eu
mode=$1 py=$2 src=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
for d in bench include harness kernels; do cp -r "$src/$d" "$work/$d"; done
case $mode in
  bench)   echo '#include "harness/document/types.h"' >>"$work/bench/gemm/findings.h" ;;
  shim)    printf '#pragma once\n#include "gtb/gtb.h"\n' >"$work/harness/runtime/gtb.h"
           echo '#include "harness/runtime/gtb.h"' >>"$work/bench/train/train.cpp" ;;
  driver)  echo '#include "gtb/gtb.h"' >>"$work/harness/driver/list/list.cpp" ;;
  door)    echo '#include "harness/driver/commands.h"' >>"$work/include/gtb/record.h" ;;
  kernels) echo '#include "gtb/record.h"' >>"$work/kernels/common/errors.h" ;;
  missing) echo '#include "gtb/nothing.h"' >>"$work/bench/gemm/findings.h" ;;
  *) echo "unknown mode $mode"; exit 2 ;;
esac
exec "$py" "$src/tests/tools/check_front_door.py" "$work"
