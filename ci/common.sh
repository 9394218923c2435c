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

# gtb_build DIR [cmake args...]: configure (once) and build everything.
gtb_build() {
  local dir=$1; shift
  cmake -S "$gtb_root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >"$dir.configure.log" 2>&1 ||
    { cat "$dir.configure.log"; return 1; }
  cmake --build "$dir" -j "$jobs"
}
