#!/bin/bash
# A planted twin of the layering check: a copy of harness/ with one include that runs back up.
# usage: layers_planted.sh MODE PYTHON SOURCE_ROOT WORK_DIR
#   MODE document: harness/document/stats.h includes the driver
#   MODE model:    harness/model/cost_terms.h includes the runtime (the model sits below it)
#   MODE driver:   a driver file includes the runtime's gtb.h (gtb_runtime, which the driver does not link)
#   MODE command:  a driver command folder (list/) includes another command's folder (report/)
#   MODE common:   the driver's common/ includes a command folder
#   MODE outside:  a source file directly in harness/
set -eu
mode=$1 py=$2 src=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
cp -r "$src/harness" "$work/harness"
case $mode in
  document) echo '#include "harness/driver/common/render_summary.h"' >>"$work/harness/document/stats.h" ;;
  model)    echo '#include "harness/runtime/stopping.h"' >>"$work/harness/model/cost_terms.h" ;;
  driver)   echo '#include "harness/runtime/startup.h"' >>"$work/harness/driver/list/list.cpp" ;;
  command)  echo '#include "harness/driver/diagnose/diagnose_trace.h"' >>"$work/harness/driver/list/list.cpp" ;;
  common)   echo '#include "harness/driver/diagnose/diagnose_trace.h"' >>"$work/harness/driver/common/families.h" ;;
  outside)  echo '// stray' >"$work/harness/stray.cpp" ;;
  *) echo "unknown mode $mode"; exit 2 ;;
esac
exec "$py" "$src/tests/tools/check_layers.py" "$work"
