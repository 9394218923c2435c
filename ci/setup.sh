#!/usr/bin/env bash
# Installs what gtb needs on Debian 12 (as root, or through sudo) and says what it cannot install.
# Safe to run again: it installs only what is missing.
# `setup.sh --tests` (the test command) adds what only the tests need.
set -euo pipefail

DEBIAN_PACKAGES=(
  cmake ninja-build g++ pkg-config git ccache      # build
  libbenchmark-dev                                  # Google Benchmark: family binaries' runner and JSON
  nlohmann-json3-dev                                # JSON for the results files
  libopenblas-openmp-dev                            # CPU BLAS baselines (SGEMM, the MLP step), on OpenMP's threads
  libdnnl-dev                                       # oneDNN: real CPU BF16 matmul where the CPU has it
  libgtest-dev libgmock-dev                         # GoogleTest
  libcli11-dev                                      # command-line parsing of the gtb driver
  zlib1g-dev                                        # gzipped profiler traces (gtb diagnose)
  libisal-dev isal                                  # ISA-L's igzip: inflates those traces faster than zlib
                                                    # (isal: the igzip program, the trace speed check's inflater)
  openmpi-bin libopenmpi-dev                        # MPI: the launcher and CPU collectives of families run as ranks
  python3 python3-jsonschema python3-matplotlib python3-numpy  # schema checks, plots
  python3-pip                                       # PyPI wheels: oneMKL (x86-64), the PyTorch yardstick
  clang libclang-rt-14-dev libomp-dev              # libFuzzer for the results-loader fuzz test (clang + OpenMP)
  binutils procps xz-utils zstd                     # programs the tests run that a minbase root lacks: ar, nm,
                                                    # objdump, readelf; ps, uptime; tar -xJ and --zstd of a .deb
)                                                   # (tests/tools/check_test_programs.py checks this list)

# The test command (`setup.sh --tests`) also measures PyTorch for real: Debian's CPU build, for Debian's
# own /usr/bin/python3. The main job installs none: a user's GPU machine brings its own PyTorch.
if [ "${1:-}" = --tests ]; then
  DEBIAN_PACKAGES+=(python3-torch)
fi

missing=()
for p in "${DEBIAN_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then SUDO=""; elif command -v sudo >/dev/null; then SUDO="sudo"; else
    echo "setup: missing Debian packages: ${missing[*]}" >&2
    echo "setup: run this script as root or install sudo" >&2
    exit 1
  fi
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The python3 first on PATH runs the plots and the schema checks; it may not be Debian's.
if ! python3 -c 'import jsonschema, matplotlib' 2>/dev/null; then
  echo "setup: installing jsonschema and matplotlib for $(command -v python3)"
  python3 -m pip install --quiet jsonschema matplotlib 2>/dev/null ||
    python3 -m pip install --quiet --break-system-packages jsonschema matplotlib
fi

# private_wheels LABEL SUBDIR HAS WHAT NOTE WHEEL...: LABEL's PyPI wheels (WHAT says which, and their
# size) into a private prefix, ${GTB_DEPS_DIR:-~/.cache/gtb}/SUBDIR, never system-wide, on x86-64
# only; nothing when HAS (a function given a prefix) finds LABEL there already. Debian's pip refuses
# any install outside a virtual environment unless told (PEP 668); a prefix of our own breaks
# nothing of the system's. NOTE, when not empty, says what runs where LABEL does not.
private_wheels() {
  local label=$1 prefix="${GTB_DEPS_DIR:-$HOME/.cache/gtb}/$2" has=$3 what=$4 note=$5 found="" d
  shift 5
  if [ "$(uname -m)" != x86_64 ]; then
    echo "setup: $label not installed: its wheels are for x86-64, this machine is $(uname -m) (its records are skipped${note:+; $note})"
    return
  fi
  for d in "$prefix" "$prefix/local"; do  # Debian's pip puts a --prefix install under local/
    if "$has" "$d"; then found=$d; fi
  done
  if [ -n "$found" ]; then
    echo "setup: $label found ($found)"
    return
  fi
  echo "setup: installing $label ($what) into $prefix"
  local pip_prefix=(python3 -m pip install --quiet --no-warn-script-location --prefix "$prefix")
  "${pip_prefix[@]}" "$@" 2>/dev/null || "${pip_prefix[@]}" --break-system-packages "$@" ||
    echo "setup: $label could not be installed; its records will be skipped with the reason${note:+ ($note)}"
}

# oneMKL: PyPI's mkl and mkl-include wheels; configure looks in their prefix (cmake/GtbMKL.cmake).
has_mkl() {
  compgen -G "$1/lib/libmkl_rt.so.*" >/dev/null && compgen -G "$1/lib/libmkl_gnu_thread.so.*" >/dev/null &&
    [ -f "$1/include/mkl_cblas.h" ]
}
private_wheels oneMKL mkl has_mkl "PyPI mkl and mkl-include, about 1 GB" "" 'mkl==2026.*' 'mkl-include==2026.*'

# The current oneDNN (3.x): PyPI's onednn-cpu-gomp and onednn-devel-cpu-gomp wheels, beside Debian's
# oneDNN 2.6 (libdnnl-dev above), whose BF16 matmul predates the AMX kernels. The GNU OpenMP build
# (oneDNN 3.2), so that it runs on the process's libgomp threads like everything else; the newer
# `onednn` wheel (oneDNN 3.13) is built on TBB and needs Intel's SYCL runtimes (dpcpp-cpp-rt,
# intel-opencl-rt): a second thread pool. Configure looks in their prefix (cmake/GtbOneDNN3.cmake);
# gtb loads it at run time, so the two versions never meet.
has_dnnl3() { [ -f "$1/lib/libdnnl.so.3" ] && [ -f "$1/include/oneapi/dnnl/dnnl.h" ]; }
private_wheels "oneDNN 3" onednn has_dnnl3 "PyPI onednn-cpu-gomp and onednn-devel-cpu-gomp, about 40 MB" \
  "Debian's oneDNN 2.6 still runs" 'onednn-cpu-gomp==2023.2.*' 'onednn-devel-cpu-gomp==2023.2.*'

# The CUDA Toolkit is not in Debian 12's main archive: it is found, never installed, here.
nvcc_path=$(command -v nvcc || true)
[ -z "$nvcc_path" ] && [ -x /usr/local/cuda/bin/nvcc ] && nvcc_path=/usr/local/cuda/bin/nvcc
if [ -n "$nvcc_path" ]; then
  echo "setup: CUDA Toolkit found: $("$nvcc_path" --version | grep -o 'release [0-9.]*')  ($nvcc_path)"
  # cuobjdump + nvdisasm (for the SASS half of the static checks) ship with a full toolkit; where
  # they are missing, PyPI has them (13.2 is the oldest CUDA 13 release there; it reads 13.0 cubins).
  if ! command -v cuobjdump >/dev/null && [ ! -x "$(dirname "$nvcc_path")/cuobjdump" ] &&
     ! python3 -c 'import importlib.util,sys; sys.exit(0 if importlib.util.find_spec("nvidia.cu13") else 1)' 2>/dev/null; then
    python3 -m pip install --quiet 'nvidia-cuda-cuobjdump==13.2.*' 'nvidia-cuda-nvdisasm==13.2.*' 2>/dev/null ||
      python3 -m pip install --quiet --break-system-packages 'nvidia-cuda-cuobjdump==13.2.*' 'nvidia-cuda-nvdisasm==13.2.*' 2>/dev/null ||
      echo "setup: cuobjdump not available; the SASS check will be skipped (the PTX and spill checks still run)"
  fi
else
  cat <<'MSG'
setup: CUDA Toolkit NOT found (nvcc is neither on PATH nor in /usr/local/cuda/bin).
       It is not a Debian package this script can install: get CUDA 12.x or 13.x from NVIDIA.
       Without it gtb builds the CPU side only: every GPU record is written as "skipped" with the
       reason "built without CUDA", the GPU tests are not built, and the CPU results are complete.
MSG
fi
