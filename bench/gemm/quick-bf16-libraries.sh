#!/bin/sh
# The quick suite measures every CPU BF16 GEMM library at 2048^3 (oneDNN 2.6, oneDNN 3, oneMKL):
# the family's best BF16 rate is the fastest record of the run, so a library left out of the quick
# suite at that shape would understate it where that library is the fastest.
#   usage: quick-bf16-libraries.sh GTB_GEMM
set -u
[ $# -eq 1 ] || { echo "usage: quick-bf16-libraries.sh GTB_GEMM" >&2; exit 2; }
cases=$("$1" --gtb_suite=quick --gtb_backend=cpu --benchmark_list_tests=true) || {
  echo "FAIL: $1 could not list its quick cases" >&2
  exit 1
}
status=0
for lib in onednn onednn3 mkl; do
  if ! printf '%s\n' "$cases" | grep -q "^gemm/gemm/$lib/cpu/m=2048,n=2048,k=2048,precision=bf16_fp32acc/"; then
    echo "FAIL: the quick suite has no $lib BF16 GEMM at 2048^3" >&2
    status=1
  fi
done
exit $status
