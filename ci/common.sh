# Shared by the ci/ scripts: where the CUDA compiler is, and how gtb is configured and built.
gtb_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
jobs=$(nproc 2>/dev/null || echo 2)

# nvcc is often installed outside PATH.
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
# cuobjdump from the pip package, if that is where it is.
if ! command -v cuobjdump >/dev/null; then
  for d in $(python3 -c 'import site,sys; print(" ".join(site.getsitepackages()+[site.getusersitepackages()]))' 2>/dev/null); do
    [ -x "$d/nvidia/cu13/bin/cuobjdump" ] && export PATH="$d/nvidia/cu13/bin:$PATH" && break
  done
fi
# ccache keys on paths relative to the checkout, so a second clone of the repository (CI's clean
# clone) reuses what the first one compiled.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$gtb_root}"
export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-true}"

# gtb_progress LOG: copies a build's output into LOG and shows one progress line (Ninja's steps
# done / total): rewritten in place on a terminal, every 20 s (and at the end) otherwise.
gtb_progress() {
  local log=$1 line done_total="" last=0 now tty=0
  [ -t 1 ] && tty=1
  : >"$log"
  while IFS= read -r line; do
    printf '%s\n' "$line" >>"$log"
    [[ $line =~ ^\[([0-9]+)/([0-9]+)\] ]] || continue
    done_total="${BASH_REMATCH[1]}/${BASH_REMATCH[2]}"
    now=$SECONDS
    if [ $tty -eq 1 ]; then
      printf '\r  %s steps  (%d s, log: %s)   ' "$done_total" "$now" "$log"
    elif [ $((now - last)) -ge 20 ]; then
      printf '  %s steps  (%d s, log: %s)\n' "$done_total" "$now" "$log"
      last=$now
    fi
  done
  [ $tty -eq 1 ] && printf '\r%78s\r' ""
  # Ninja's total counts every step that might run; steps it then finds up to date are never shown,
  # so a finished rebuild can end at "1/10": say it finished, and how many steps ran.
  if [ -n "$done_total" ]; then
    printf '  build finished: %s of %s planned steps ran, the rest were up to date  (log: %s)\n' \
      "${done_total%/*}" "${done_total#*/}" "$log"
  elif grep -q "no work to do" "$log"; then
    printf '  nothing to rebuild  (log: %s)\n' "$log"
  fi
}

# gtb_build DIR [cmake args...]: configure (reusing DIR when it exists) and build everything, with a
# progress line; the full output goes to LOG.log (LOG: $GTB_BUILD_LOG, else DIR), and its end is
# shown when the build fails. The test command names its own logs, so the main job's stay.
gtb_build() {
  local dir=$1; shift
  local logbase=${GTB_BUILD_LOG:-$dir}
  echo "  configuring $dir (log: $logbase.configure.log)"
  cmake -S "$gtb_root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >"$logbase.configure.log" 2>&1 ||
    { cat "$logbase.configure.log"; return 1; }
  local start=$SECONDS
  SECONDS=0
  # `|| rc=$?` keeps errexit from ending the script before the log's tail is shown (pipefail gives
  # the build's own status).
  local rc=0
  cmake --build "$dir" -j "$jobs" 2>&1 | gtb_progress "$logbase.log" || rc=$?
  SECONDS=$((start + SECONDS))
  if [ "$rc" -ne 0 ]; then
    tail -40 "$logbase.log"
    echo "build of $dir failed (exit $rc); full output: $logbase.log" >&2
  fi
  return "$rc"
}
