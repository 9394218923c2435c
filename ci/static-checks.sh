#!/usr/bin/env bash
# Static checks of generated code: 128-bit global accesses in the vec4 kernels (PTX, and SASS when
# cuobjdump is available), no register spills in any kernels/*/cuda/*.cu, scalar CPU loops that
# really are scalar, and the layout rules (nothing under kernels/ includes harness/; nothing in a
# cuda/ folder includes a cpu/ folder). Exits non-zero when a property fails; every failure line
# starts with "FAIL:". A part that cannot run here (no cuobjdump, no --cpu-lib, not x86-64) is
# reported on a "SKIPPED:" line with the reason; when nothing failed, that makes the exit status 77
# (CTest: Skipped), never 0, since the property was not checked.
#
# usage: ci/static-checks.sh [--root DIR] [--nvcc PATH] [--cuobjdump PATH] [--cpu-lib FILE]
#                            [--only ptx|spills|sass|cpu|layout]... [--plant vec4|spill|cpu|layout]
#   --cpu-lib   archive or object holding gtb::cpu::{axpy,chain}_{scalar,autovec,openmp}; without it
#               the CPU part is skipped (exit 77 when nothing failed).
#   --plant     runs a check on something that must fail, to prove the check can fail:
#               vec4  checks the one-thread-per-element kernels for 128-bit accesses,
#               spill adds a kernel built to spill registers to the spill check,
#               cpu   checks the compiler-vectorized CPU loops for being scalar,
#               layout checks a planted kernels/ tree that includes harness/ and, from cuda/, cpu/.
# cuobjdump: $CUOBJDUMP, PATH, the toolkit's bin/, or the pip package nvidia-cuda-cuobjdump.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
nvcc="${CUDACXX:-}"
cuobjdump="${CUOBJDUMP:-}"
cpu_lib=""
plant=""
only=()

while [[ $# -gt 0 ]]; do
  case "$1" in
    --root) root="$2"; shift 2 ;;
    --nvcc) nvcc="$2"; shift 2 ;;
    --cuobjdump) cuobjdump="$2"; shift 2 ;;
    --cpu-lib) cpu_lib="$2"; shift 2 ;;
    --only) only+=("$2"); shift 2 ;;
    --plant) plant="$2"; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "static-checks: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
case "$plant" in ""|vec4|spill|cpu|layout) ;; *) echo "static-checks: --plant must be vec4, spill, cpu or layout" >&2; exit 2 ;; esac

wanted() {  # wanted PART: true when no --only was given or PART was named
  [[ ${#only[@]} -eq 0 ]] && return 0
  local p
  for p in "${only[@]}"; do [[ "$p" == "$1" ]] && return 0; done
  return 1
}

failures=0
skips=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
skip() { echo "SKIPPED: $*"; skips=$((skips + 1)); }
note() { echo "static-checks: $*"; }
# check_wide_accesses LABEL FILE LOAD STORE: every kernel matching $vec_pattern among FILE's lines
# ("name ld st", from a scan of PTX or SASS) has its 128-bit load (LOAD) and store (STORE); counts
# the kernels it checked in checked.
check_wide_accesses() {
  local label=$1 file=$2 load=$3 store=$4 name ld st
  while read -r name ld st; do
    [[ "$name" == *"$vec_pattern"* ]] || continue
    checked=$((checked + 1))
    [[ "$ld" == 1 ]] || fail "$label: $name has no $load"
    [[ "$st" == 1 ]] || fail "$label: $name has no $store"
  done <"$file"
}

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

need_cuda=0
for p in ptx spills sass; do wanted "$p" && need_cuda=1; done
if [[ $need_cuda -eq 1 ]]; then
  if [[ -z "$nvcc" ]]; then nvcc="$(command -v nvcc || true)"; fi
  if [[ -z "$nvcc" && -x /usr/local/cuda/bin/nvcc ]]; then nvcc=/usr/local/cuda/bin/nvcc; fi
  if [[ -z "$nvcc" || ! -x "$nvcc" ]]; then
    echo "FAIL: nvcc not found (pass --nvcc or set CUDACXX)"; exit 1
  fi
fi
# What the families declare for these checks (sc_* in bench/<family>/ci.sh, see ci/families.sh):
# extra compile flags, the sources and name patterns of the vec4 kernels, the CPU loops that must be
# scalar or vectorized and the library that holds them.
sc_nvflags=() sc_vec4_sources=() sc_scalar_fns=() sc_vector_fns=() sc_cpu_planted=()
sc_vec4_pattern="" sc_vec4_planted="" sc_cpu_lib_target=""
for f in "$root"/bench/*/ci.sh; do
  if [[ -f "$f" ]]; then source "$f"; fi
done
nvflags=(-std=c++17 -O3 -DNDEBUG -DGTB_HAVE_CUDA=1 --expt-relaxed-constexpr -I"$root" "${sc_nvflags[@]}")
vec_srcs=()
for f in "${sc_vec4_sources[@]}"; do vec_srcs+=("$root/$f"); done
vec_pattern=$sc_vec4_pattern
[[ "$plant" == vec4 ]] && vec_pattern=$sc_vec4_planted

# --- 1. PTX: every vec4 kernel loads and stores 16 bytes at a time -----------------------------------
if wanted ptx; then
  checked=0
  [[ ${#vec_srcs[@]} -gt 0 ]] || fail "PTX: no family declares vec4 kernels (sc_vec4_sources)"
  for vec_src in "${vec_srcs[@]}"; do
    ptx="$tmp/$(basename "$vec_src" .cu).ptx"
    if ! "$nvcc" "${nvflags[@]}" -ptx -arch=sm_90 "$vec_src" -o "$ptx"; then
      fail "PTX (sm_90): $vec_src does not compile"
      : >"$ptx"
    fi
    # One line per kernel: name, then whether a v4.f32 global load and store appear in its body.
    awk '/\.entry[ \t]/ { if (name) print name, ld, st; name = $NF; sub(/\($/, "", name); ld = 0; st = 0 }
         /ld\.global(\.nc)?\.v4\.f32/ { ld = 1 }
         /st\.global\.v4\.f32/ { st = 1 }
         END { if (name) print name, ld, st }' "$ptx" >"$tmp/ptx_entries"
    check_wide_accesses "PTX (sm_90)" "$tmp/ptx_entries" "ld.global[.nc].v4.f32 (128-bit load)" \
      "st.global.v4.f32 (128-bit store)"
  done
  if [[ $checked -eq 0 ]]; then
    fail "PTX (sm_90): no kernel matching '$vec_pattern' in ${vec_srcs[*]}"
  else
    note "PTX: checked $checked kernel(s) matching '$vec_pattern' for v4.f32 loads and stores"
  fi
fi

# --- 2. Spills: ptxas -v over every kernels/*/cuda/*.cu for sm_80 and sm_90 --------------------------
# Device-only compiles (-cubin), several at once; the sm_80/sm_90 cubins of the vec4 sources are kept
# for SASS.
if wanted spills || wanted sass; then
  sources=("$root"/kernels/*/cuda/*.cu)
  if [[ "$plant" == spill ]]; then
    # 96 values live at once under a 32-register cap (1024 threads x 2 blocks per SM).
    cat >"$tmp/planted_spill.cu" <<'EOF'
__global__ void __launch_bounds__(1024, 2) planted_spill(const float* in, float* out) {
  float acc[96];
#pragma unroll
  for (int k = 0; k < 96; ++k) acc[k] = in[threadIdx.x + k * 1024];
  out[threadIdx.x] = 0.0f;
  float s = 0.0f;
#pragma unroll
  for (int r = 0; r < 96; ++r) s += acc[r] * acc[(r * 7 + 3) % 96];
  out[threadIdx.x + 1024] = s;
}
EOF
    sources=("$tmp/planted_spill.cu")  # the suite's files are the unplanted run's business
  fi
  if ! wanted spills; then sources=("${vec_srcs[@]}"); fi
  jobs_max="$(nproc 2>/dev/null || echo 2)"
  pids=()
  for src in "${sources[@]}"; do
    for arch in 80 90; do
      base="$(basename "$src" .cu)_sm$arch"
      ( "$nvcc" "${nvflags[@]}" -cubin -arch=sm_$arch -Xptxas -v "$src" -o "$tmp/$base.cubin" \
          >"$tmp/$base.log" 2>&1; echo $? >"$tmp/$base.rc" ) &
      pids+=($!)
      while [[ $(jobs -rp | wc -l) -ge $jobs_max ]]; do wait -n || true; done
    done
  done
  wait "${pids[@]}" || true
  if wanted spills; then
    for src in "${sources[@]}"; do
      for arch in 80 90; do
        base="$(basename "$src" .cu)_sm$arch"
        if [[ "$(cat "$tmp/$base.rc")" != 0 ]]; then
          fail "spills: $src does not compile for sm_$arch:"; sed 's/^/    /' "$tmp/$base.log" | tail -20
          continue
        fi
        # ptxas prints "N bytes spill stores, M bytes spill loads" per function.
        bad="$(grep -E '[1-9][0-9]* bytes spill (stores|loads)' "$tmp/$base.log" | grep -vE ' 0 bytes spill stores, 0 bytes spill loads' || true)"
        if [[ -n "$bad" ]]; then
          fail "spills: $(basename "$src") (sm_$arch) spills registers:"
          grep -B1 -E '[1-9][0-9]* bytes spill (stores|loads)' "$tmp/$base.log" | sed 's/^/    /'
        fi
      done
    done
    note "spills: checked ${#sources[@]} file(s) x sm_80, sm_90 with ptxas -v"
  fi
fi

# --- 3. SASS: LDG.E.128 / STG.E.128 in the vec4 kernels, when cuobjdump is available -----------------
if wanted sass; then
  if [[ -z "$cuobjdump" ]]; then cuobjdump="$(command -v cuobjdump || true)"; fi
  if [[ -z "$cuobjdump" && -n "$nvcc" && -x "$(dirname "$nvcc")/cuobjdump" ]]; then cuobjdump="$(dirname "$nvcc")/cuobjdump"; fi
  if [[ -z "$cuobjdump" ]] && command -v python3 >/dev/null; then
    for d in $(python3 -c 'import site, sys; print(" ".join(site.getsitepackages() + [site.getusersitepackages()]))' 2>/dev/null); do
      for c in "$d"/nvidia/cu*/bin/cuobjdump "$d"/nvidia/cuda_cuobjdump/bin/cuobjdump; do
        [[ -x "$c" ]] && { cuobjdump="$c"; break 2; }
      done
    done
  fi
  if [[ -z "$cuobjdump" ]]; then
    skip "SASS: cuobjdump not found (looked at --cuobjdump, \$CUOBJDUMP, PATH, beside nvcc, the pip packages; pip install 'nvidia-cuda-cuobjdump' 'nvidia-cuda-nvdisasm' provides it)"
  else
    for arch in 80 90; do
      checked=0
      : >"$tmp/sass_entries_$arch"
      for vec_src in "${vec_srcs[@]}"; do
        cubin="$tmp/$(basename "$vec_src" .cu)_sm$arch.cubin"
        if [[ ! -s "$cubin" ]]; then fail "SASS: no cubin for sm_$arch ($(basename "$vec_src") did not compile)"; continue; fi
        # cuobjdump -sass runs nvdisasm, which the pip packages put beside it.
        if ! PATH="$(dirname "$cuobjdump"):${nvcc:+$(dirname "$nvcc"):}$PATH" "$cuobjdump" -sass "$cubin" \
            >"$tmp/sass_$arch.txt" 2>"$tmp/sass_$arch.err"; then
          skip "SASS: $cuobjdump -sass failed: $(head -c 300 "$tmp/sass_$arch.err") (pip install 'nvidia-cuda-nvdisasm' provides nvdisasm)"
          break 2
        fi
        awk '/Function :/ { if (name) print name, ld, st; name = $NF; ld = 0; st = 0 }
             /LDG\.E\.128/ { ld = 1 }
             /STG\.E\.128/ { st = 1 }
             END { if (name) print name, ld, st }' "$tmp/sass_$arch.txt" >>"$tmp/sass_entries_$arch"
      done
      check_wide_accesses "SASS (sm_$arch)" "$tmp/sass_entries_$arch" LDG.E.128 STG.E.128
      if [[ $checked -eq 0 ]]; then fail "SASS (sm_$arch): no kernel matching '$vec_pattern'"; fi
      note "SASS (sm_$arch, $cuobjdump): checked $checked kernel(s) for LDG.E.128 / STG.E.128"
    done
  fi
fi

# --- 4. CPU: the scalar loops contain no packed SIMD arithmetic; the vectorized loops do -------------
if wanted cpu && [[ -n "$cpu_lib" ]]; then
  if [[ "$(uname -m)" != x86_64 ]]; then
    skip "CPU: the instruction patterns are x86-64's, this is $(uname -m)"
  elif ! command -v objdump >/dev/null; then
    fail "CPU: objdump not found"
  elif [[ ! -f "$cpu_lib" ]]; then
    fail "CPU: $cpu_lib not found (build $sc_cpu_lib_target first)"
  else
    objdump -d -C --no-show-raw-insn "$cpu_lib" >"$tmp/cpu.asm"
    packed='(^|[^a-z])v?((add|sub|mul|div|min|max|sqrt)ps|fn?m(add|sub)[0-9]+ps|cvtt?ps2dq|cvtdq2ps)([^a-z]|$)'
    body() {  # body NAME: the disassembly of functions whose demangled name starts with NAME(
      awk -v n="<$1(" 'index($0, n) && />:$/ { on = 1; next } /^$/ { on = 0 } on' "$tmp/cpu.asm"
    }
    scalar_fns=("${sc_scalar_fns[@]}")
    vector_fns=("${sc_vector_fns[@]}")
    if [[ "$plant" == cpu ]]; then scalar_fns=("${sc_cpu_planted[@]}"); fi
    [[ ${#scalar_fns[@]} -gt 0 ]] || fail "CPU: no family declares scalar loops (sc_scalar_fns)"
    for f in "${scalar_fns[@]}"; do
      b="$(body "$f")"
      if [[ -z "$b" ]]; then fail "CPU: $f not found in $cpu_lib"; continue; fi
      hits="$(grep -cE "$packed" <<<"$b" || true)"
      [[ "$hits" == 0 ]] || fail "CPU: $f should be scalar but has $hits packed SIMD instruction(s), e.g. $(grep -m1 -E "$packed" <<<"$b" | sed 's/^ *//')"
    done
    if [[ "$plant" != cpu ]]; then
      for f in "${vector_fns[@]}"; do
        # OpenMP outlines the loop body into "NAME(...) [clone ._omp_fn.0]", which body() also matches.
        b="$(body "$f")"
        if [[ -z "$b" ]]; then fail "CPU: $f not found in $cpu_lib"; continue; fi
        grep -qE "$packed" <<<"$b" || fail "CPU: $f should be vectorized but has no packed SIMD arithmetic"
      done
    fi
    note "CPU: checked ${#scalar_fns[@]} scalar loop(s) in $(basename "$cpu_lib")"
  fi
elif wanted cpu && [[ ${#only[@]} -gt 0 ]]; then
  fail "CPU: --only cpu needs --cpu-lib"
elif wanted cpu; then
  skip "CPU: no --cpu-lib given (the kernel library ${sc_cpu_lib_target:-that holds the loops})"
fi

# --- 5. Layout: kernels know nothing of the harness; a cuda/ folder includes no cpu/ folder --------
if wanted layout; then
  scan="$root"
  if [[ "$plant" == layout ]]; then
    scan="$tmp/planted"  # the suite's files are the unplanted run's business
    mkdir -p "$scan/kernels/planted/cpu" "$scan/kernels/planted/cuda"
    printf '#include "harness/runtime/gtb.h"\n' >"$scan/kernels/planted/cpu/uses_harness.cpp"
    printf '#include <cstddef>\n#  include "kernels/planted/cpu/uses_harness.h"\n' >"$scan/kernels/planted/cuda/uses_cpu.cu"
  fi
  checked=0
  while IFS= read -r -d '' f; do
    checked=$((checked + 1))
    rel="${f#"$scan"/}"
    while IFS= read -r hit; do
      fail "layout: $rel:$hit includes harness/ (kernels use kernels/common/: errors.h, clock.h, cuda/)"
    done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]harness/' "$f" || true)
    if [[ "$rel" == */cuda/* ]]; then
      while IFS= read -r hit; do
        fail "layout: $rel:$hit includes a cpu/ folder from cuda/ (move what both need to the family's shared header)"
      done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]([^">]*/)?cpu/' "$f" || true)
    fi
  done < <(find "$scan/kernels" -type f \( -name '*.h' -o -name '*.hpp' -o -name '*.cuh' -o -name '*.cpp' -o -name '*.cu' \) -print0)
  if [[ $checked -eq 0 ]]; then fail "layout: no source files under $scan/kernels"; fi
  note "layout: checked $checked file(s) under kernels/"
fi

if [[ $failures -gt 0 ]]; then
  echo "static-checks: $failures failure(s)"
  exit 1
fi
if [[ $skips -gt 0 ]]; then
  echo "static-checks: no failure, but $skips part(s) skipped (see SKIPPED: above)"
  exit 77
fi
echo "static-checks: all passed"
