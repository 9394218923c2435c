#!/usr/bin/env python3
"""A synthetic PyTorch profiler (Kineto) trace of a given size, for timing trace readers on traces as large
as real jobs write (hundreds of MB to GB), laid out the way Kineto writes them.

usage: make-kineto-trace.py OUT BYTES [--seed N] [--level L] [--layers N]
  OUT     the trace; gzipped (level L, default 6) when it ends .gz
  BYTES   about how many bytes of JSON (before gzip): steps are added until the JSON reaches it
  --layers  layers of the MLP (default 600: about 5.4 MB of JSON per step, as dense as the shared
          six-step A100 trace's 5.8 MB; fewer layers give more, smaller steps)

Each ProfilerStep#N is one rank's training step of an MLP on one A100 of eight (pid 0, streams 7, 20):
a DataLoader annotation, an input copy (cudaMemcpyAsync + gpu_memcpy), per layer a forward
aten::linear -> aten::addmm (recorded shapes) launching a tensor-core GEMM and a ReLU, the backward's
two GEMMs per layer, an NCCL all-reduce per layer on the communication stream (with PyTorch's
collective arguments), an optimizer's multi_tensor_apply kernels, the loss read with aten::item
(cudaStreamSynchronize). Every launch has its cuda_runtime event, its kernel, the `ac2g` flow pair
and a python_function frame, as with_stack=True writes them; times drift with a seeded random jitter so
the file compresses like a real one (about 15-25x), not like a repeated block.
"""
import gzip
import random
import sys

LAYERS = 600
WIDTH = 4096
BATCH = 256

GEMM_FWD = ("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_16x5_tn_align4>"
            "(cutlass_80_tensorop_s1688gemm_128x128_16x5_tn_align4::Params)")
GEMM_BWD = ("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x64_16x6_nn_align4>"
            "(cutlass_80_tensorop_s1688gemm_128x64_16x6_nn_align4::Params)")
RELU = ("void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::launch_clamp_scalar"
        "(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::"
        "operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> >"
        "(int, at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, "
        "c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::"
        "operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>)")
NCCL = "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"
ADAM = ("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::"
        "TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4>, double, "
        "double, double, double, double, bool, double*, double*>(...)")
PID, TID, CPU_PID, CPU_TID = 0, 7, 2131415, 2131415


class Writer:
    def __init__(self, out, rng):
        self.out, self.rng = out, rng
        self.ext = 1
        self.first = True
        self.buf = []
        self.nbytes = 0
        self.t = 1701234567000000.0

    def put(self, text):
        self.buf.append(text)

    def flush(self):
        for text in self.buf:
            self.out.write(("  " if self.first else ",\n  ") + text)
            self.nbytes += len(text) + 4
            self.first = False
        self.buf = []

    def jit(self, base):
        return round(base * (0.85 + 0.3 * self.rng.random()), 3)

    def cpu(self, cat, name, ts, dur, dims=None, types=None):
        self.ext += 1
        extra = ""
        if dims is not None:
            extra = (', "Input Dims": ' + str(dims).replace(" ", "") .replace(",", ", ") +
                     ', "Input type": [' + ", ".join(f'"{t}"' for t in types) + ']')
        self.put(f'{{\n    "ph": "X", "cat": "{cat}", "name": "{name}", "pid": {CPU_PID}, "tid": {CPU_TID},\n'
                 f'    "ts": {ts:.3f}, "dur": {dur:.3f},\n    "args": {{\n'
                 f'      "External id": {self.ext},\n      "Record function id": 0, "Ev Idx": {self.ext}'
                 f'{extra}, "Sequence number": {self.ext // 3}, "Fwd thread id": 0\n    }}\n  }}')
        return self.ext

    def python(self, name, ts, dur):
        self.put(f'{{\n    "ph": "X", "cat": "python_function", "name": "{name}", "pid": {CPU_PID}, "tid": {CPU_TID},\n'
                 f'    "ts": {ts:.3f}, "dur": {dur:.3f},\n    "args": {{\n'
                 f'      "Python parent id": {self.ext // 2}, "Python id": {self.ext}, "Python thread": 0\n    }}\n  }}')

    def launch(self, call, ts, dur, corr, ext, gpu_cat, gpu_name, gts, gdur, stream, gargs=""):
        self.put(f'{{\n    "ph": "X", "cat": "cuda_runtime", "name": "{call}", "pid": {CPU_PID}, "tid": {CPU_TID},\n'
                 f'    "ts": {ts:.3f}, "dur": {dur:.3f},\n    "args": {{\n'
                 f'      "External id": {ext},\n      "cbid": 211, "correlation": {corr}\n    }}\n  }}')
        self.put(f'{{\n    "ph": "s", "id": {corr}, "pid": {CPU_PID}, "tid": {CPU_TID}, "ts": {ts:.3f},\n'
                 f'    "cat": "ac2g", "name": "ac2g"\n  }}')
        self.put(f'{{\n    "ph": "X", "cat": "{gpu_cat}", "name": "{gpu_name}", "pid": {PID}, "tid": {stream},\n'
                 f'    "ts": {gts:.3f}, "dur": {gdur:.3f},\n    "args": {{\n'
                 f'      "External id": {ext},\n      "queued": 0, "device": 0, "context": 1,\n'
                 f'      "stream": {stream}, "correlation": {corr}{gargs}\n    }}\n  }}')
        self.put(f'{{\n    "ph": "f", "id": {corr}, "pid": {PID}, "tid": {stream}, "ts": {gts:.3f},\n'
                 f'    "cat": "ac2g", "name": "ac2g", "bp": "e"\n  }}')


def kernel_args(grid, block, regs, smem):
    return (f',\n      "registers per thread": {regs},\n      "shared memory": {smem},\n'
            f'      "blocks per SM": {grid[0] * grid[1] / 108:.7g},\n      "warps per SM": {grid[0] * grid[1] * block[0] / 32 / 108:.7g},\n'
            f'      "grid": [{grid[0]}, {grid[1]}, {grid[2]}],\n      "block": [{block[0]}, {block[1]}, {block[2]}],\n'
            f'      "est. achieved occupancy %": 25')


def op_kernel(w, c, gpu, op, at, dims, types, jits, launch_at, queue_at, kernel, stream, args):
    """A CPU operator (at `at`, with its recorded dims and types) launching one kernel with correlation
    c: jits are the bases of the operator's, the kernel's and the launch call's jittered durations,
    drawn in that order. The kernel starts at queue_at or when the stream frees (gpu); returns when
    the stream frees after it."""
    ext = w.cpu("cpu_op", op, at, w.jit(jits[0]), dims, types)
    d = w.jit(jits[1])
    start = max(gpu, queue_at)
    w.launch("cudaLaunchKernel", launch_at, w.jit(jits[2]), c, ext, "kernel", kernel, start, d, stream, args)
    return start + d + 2


def step(w, n):
    rng = w.rng
    t0 = w.t
    corr_base = n * 1000
    w.cpu("user_annotation", f"ProfilerStep#{n}", t0, 0.0)  # its duration is known at the step's end
    t = t0 + 5
    w.cpu("user_annotation", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", t, w.jit(900))
    t += 950
    gpu = t + 20
    ext = w.cpu("cpu_op", "aten::copy_", t, w.jit(40), [[BATCH, WIDTH], [BATCH, WIDTH], []], ["float", "float", "Scalar"])
    nbytes = BATCH * WIDTH * 4
    w.launch("cudaMemcpyAsync", t + 5, w.jit(20), corr_base, ext, "gpu_memcpy", "Memcpy HtoD (Pinned -> Device)",
             gpu, w.jit(180), TID, f',\n      "bytes": {nbytes}, "memory bandwidth (GB/s)": {nbytes / 180e3:.6g}')
    gpu += 200
    t += 60
    c = corr_base + 1
    for layer in range(LAYERS):
        w.python(f"nn.Module: Linear_{layer}", t, w.jit(60))
        w.python("torch/nn/modules/linear.py(113): forward", t + 1, w.jit(55))
        w.cpu("cpu_op", "aten::linear", t + 2, w.jit(50), [[BATCH, WIDTH], [WIDTH, WIDTH], [WIDTH]], ["float", "float", "float"])
        gpu = op_kernel(w, c, gpu, "aten::addmm", t + 4, [[WIDTH], [BATCH, WIDTH], [WIDTH, WIDTH], [], []],
                        ["float", "float", "float", "Scalar", "Scalar"], (40, 310, 8), t + 10, t + 15, GEMM_FWD, TID,
                        kernel_args((32, 2, 1), (256, 1, 1), 230, 73728))
        c += 1
        t += 70
        gpu = op_kernel(w, c, gpu, "aten::relu", t, [[BATCH, WIDTH]], ["float"], (20, 12, 6), t + 5, t + 10, RELU, TID,
                        kernel_args((1024, 1, 1), (128, 1, 1), 20, 0))
        c += 1
        t += 30
    w.cpu("cpu_op", "aten::item", t, w.jit(25), [[]], ["float"])
    ext = w.cpu("cpu_op", "aten::_local_scalar_dense", t + 2, w.jit(20), [[]], ["float"])
    w.launch("cudaMemcpyAsync", t + 4, w.jit(10), c, ext, "gpu_memcpy", "Memcpy DtoH (Device -> Pageable)",
             max(gpu, t + 8), 2.0, TID, ',\n      "bytes": 4, "memory bandwidth (GB/s)": 0.002')
    c += 1
    gpu = max(gpu, t + 8) + 3
    w.put(f'{{\n    "ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "pid": {CPU_PID}, "tid": {CPU_TID},\n'
          f'    "ts": {t + 15:.3f}, "dur": {max(1.0, gpu - t - 15):.3f},\n    "args": {{\n'
          f'      "External id": {ext},\n      "cbid": 131, "correlation": {c}\n    }}\n  }}')
    c += 1
    t = max(t + 20, gpu)
    for layer in reversed(range(LAYERS)):
        for bwd in ("aten::mm", "aten::mm"):
            gpu = op_kernel(w, c, gpu, bwd, t, [[BATCH, WIDTH], [WIDTH, WIDTH]], ["float", "float"], (30, 300, 7),
                            t + 6, t + 12, GEMM_BWD, TID, kernel_args((32, 4, 1), (128, 1, 1), 168, 81920))
            c += 1
            t += 40
        op_kernel(w, c, gpu, "c10d::allreduce_", t, [[WIDTH, WIDTH]], ["float"], (60, 700, 10), t + 20, t + 30, NCCL, 20,
                  kernel_args((2, 1, 1), (640, 1, 1), 96, 0) +
                  ',\n      "Collective name": "allreduce", "In msg nelems": 16777216, "Out msg nelems": 16777216, '
                  '"Group size": 8, "dtype": "Float", "In split size": "[]", "Out split size": "[]", '
                  '"Process Group Name": "0", "Process Group Description": "default_pg", "Process Group Ranks": "[0, 1, 2, 3, 4, 5, 6, 7]"')
        c += 1
        t += 70
    for _ in range(4):
        gpu = op_kernel(w, c, gpu, "aten::_fused_adam_", t, [[], [], [], [], [], []], ["TensorList"] * 6, (50, 90, 8),
                        t + 10, t + 15, ADAM, TID, kernel_args((320, 1, 1), (512, 1, 1), 64, 0))
        c += 1
        t += 60
    w.buf[0] = w.buf[0].replace('"dur": 0.000', f'"dur": {t - t0:.3f}', 1)
    w.flush()
    w.t = max(t, gpu) + w.jit(400)


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    out, target = argv[1], int(float(argv[2]))
    seed = int(argv[argv.index("--seed") + 1]) if "--seed" in argv else 1
    level = int(argv[argv.index("--level") + 1]) if "--level" in argv else 6
    global LAYERS
    LAYERS = int(argv[argv.index("--layers") + 1]) if "--layers" in argv else LAYERS
    rng = random.Random(seed)
    f = gzip.open(out, "wt", compresslevel=level) if out.endswith(".gz") else open(out, "w")
    with f:
        head = ('{\n  "schemaVersion": 1,\n  "deviceProperties": [\n    {\n      "id": 0, "name": "NVIDIA A100-SXM4-80GB", '
                '"totalGlobalMem": 85097971712,\n      "computeMajor": 8, "computeMinor": 0,\n      "maxThreadsPerBlock": 1024, '
                '"maxThreadsPerMultiprocessor": 2048,\n      "numSms": 108\n    }\n  ],\n'
                '  "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 8, "pg_count": 1},\n'
                '  "traceEvents": [\n')
        f.write(head)
        w = Writer(f, rng)
        w.nbytes = len(head)
        n = 1
        while w.nbytes < target:
            step(w, n)
            n += 1
        f.write('\n  ],\n  "traceName": "synthetic"\n}\n')
    print(f"{out}: {n - 1} steps, {w.nbytes} bytes of JSON")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
