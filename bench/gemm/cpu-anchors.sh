#!/usr/bin/env bash
# The CPU GEMM at 2048³ through gtb's gemm family beside its anchors on the same machine, in one
# log: every library's verified record (FP32: OpenBLAS, oneDNN 2.6, oneDNN 3, oneMKL; BF16: oneDNN
# 2.6, oneDNN 3, oneMKL), the direct library calls with nothing of gtb in between (tests/tools/
# sgemm_direct), and PyTorch's torch.matmul in FP32 and BF16 on the same threads. Run by hand:
#   bench/gemm/cpu-anchors.sh BUILD_DIR [ROUNDS (default 2)] > LOG
# TORCH_PYTHON names the interpreter with PyTorch (default /usr/bin/python3, Debian's python3-torch).
set -euo pipefail
build=${1:?usage: cpu-anchors.sh BUILD_DIR [ROUNDS]}
rounds=${2:-2}
py=${TORCH_PYTHON:-/usr/bin/python3}
family="$build/bin/gtb-gemm"
direct="$build/tests/sgemm_direct"
[ -x "$direct" ] || direct=$(find "$build" -name sgemm_direct -type f -perm -u+x | head -1)
for f in "$family" "$direct"; do
  [ -x "$f" ] || { echo "cpu-anchors: $f is not built (cmake --build $build --target gtb-gemm sgemm_direct)" >&2; exit 2; }
done
threads=$(nproc)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "# CPU GEMM 2048^3: gtb's gemm family records and their anchors, $rounds rounds"
echo "commit: $(git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null || echo unknown); date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'); threads: $threads;" \
     "flags: $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx512_bf16|amx_bf16|amx_tile|avx512f|avx512_vnni)$' | tr '\n' ' ')"
for r in $(seq 1 "$rounds"); do
  echo
  echo "## round $r (load before: $(cut -d' ' -f1-3 /proc/loadavg))"
  "$family" --gtb_suite=full --gtb_backend=cpu --gtb_pairs=off --gtb_out="$tmp/r$r.json" \
    --benchmark_filter='^gemm/gemm/(openblas|onednn|onednn3|mkl)/cpu/m=2048,n=2048,k=2048,' >"$tmp/r$r.log" 2>&1 ||
    { cat "$tmp/r$r.log" >&2; exit 1; }
  python3 - "$tmp/r$r.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
print("gtb gemm family records (median of samples; verified against float64 first):")
for r in d["records"]:
    info, opt = r.get("info", {}), r.get("options", {})
    if r["status"] != "ok":
        print(f"  {r['variant']:9} {opt.get('precision', ''):13} {r['status']}: {r.get('status_detail', '')}")
        continue
    gf = r["value"] * 1e3 if r.get("unit") == "TFLOP/s" else r["value"]
    print(f"  {r['variant']:9} {opt.get('precision', ''):13} {gf:8.1f} GFLOP/s  rel_fro_err {r['check']['rel_fro_err']:.1e}"
          f"  {info.get('library', '')} {info.get('impl', '')} {info.get('isa', '')} {info.get('processor', '')[:40]}")
EOF
  for lib in openblas onednn; do
    echo "direct call, $lib: $("$direct" 2048 5 "$lib" 2>&1 | tr '\n' ' ')"
  done
  "$py" - "$threads" <<'EOF' 2>&1 || echo "PyTorch: not measured ($py could not import torch)"
import sys, time
import torch
torch.set_num_threads(int(sys.argv[1]))
n = 2048
g = torch.Generator().manual_seed(1)
a32, b32 = torch.randn(n, n, generator=g), torch.randn(n, n, generator=g)
ref = a32.double() @ b32.double()
for name, dt in (("fp32", torch.float32), ("bf16", torch.bfloat16)):
    a, b = a32.to(dt), b32.to(dt)
    c = torch.matmul(a, b)  # warm-up, and the result checked below
    err = ((c.double() - (a.double() @ b.double())).norm() / ref.norm()).item()
    times = []
    for _ in range(7):
        t0 = time.perf_counter()
        torch.matmul(a, b)
        times.append(time.perf_counter() - t0)
    times.sort()
    gf = 2.0 * n ** 3 / 1e9
    print(f"PyTorch {torch.__version__} torch.matmul {name}: median {gf / times[3]:.1f} GFLOP/s, best {gf / times[0]:.1f}"
          f" GFLOP/s (7 calls, {torch.get_num_threads()} threads; error vs float64 of its operands {err:.1e})")
EOF
  echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
done
