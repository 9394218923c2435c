#!/usr/bin/env python3
"""PyTorch figures on the same machine as a gtb run, for the targets that compare against PyTorch.

Writes a small JSON file: torch.matmul TFLOP/s per dtype at square sizes, pinned and pageable
host<->device copy bandwidth, device-to-device copy bandwidth, an eager MLP training step, and the
CPU's SGEMM. Timed with CUDA events after warm-up; medians over repeated samples. GB = 1e9 bytes.
"""
import json
import platform
import statistics
import sys
import time

import torch


def cuda_median(fn, reps=10, samples=15, warmup=3):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(samples):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(reps):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3 / reps)
    return statistics.median(times)


def host_median(fn, reps=3, samples=7):
    fn()
    times = []
    for _ in range(samples):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        times.append((time.perf_counter() - t0) / reps)
    return statistics.median(times)


def main(out):
    dev = torch.device("cuda")
    res = {"torch": torch.__version__, "cuda": torch.version.cuda, "gpu": torch.cuda.get_device_name(0),
           "host": platform.node(), "cpu_threads": torch.get_num_threads(), "clock": "cuda_event (GPU), perf_counter (CPU)",
           "matmul_tflops": {}, "copy_gbps": {}, "mlp": {}}
    for name, dtype, tf32 in [("fp32", torch.float32, False), ("tf32", torch.float32, True),
                              ("fp16", torch.float16, False), ("bf16", torch.bfloat16, False)]:
        torch.backends.cuda.matmul.allow_tf32 = tf32
        for n in (4096, 8192):
            a = torch.randn(n, n, device=dev, dtype=dtype)
            b = torch.randn(n, n, device=dev, dtype=dtype)
            t = cuda_median(lambda: torch.matmul(a, b))
            res["matmul_tflops"][f"{name}_{n}"] = 2 * n**3 / t / 1e12
    torch.backends.cuda.matmul.allow_tf32 = False
    nbytes = 256 << 20
    d = torch.empty(nbytes, dtype=torch.uint8, device=dev)
    for kind, pinned in (("pinned", True), ("pageable", False)):
        h = torch.randint(0, 255, (nbytes,), dtype=torch.uint8).pin_memory() if pinned else \
            torch.randint(0, 255, (nbytes,), dtype=torch.uint8)
        res["copy_gbps"][f"h2d_{kind}_256MiB"] = nbytes / cuda_median(lambda: d.copy_(h, non_blocking=pinned), reps=4, samples=9) / 1e9
        res["copy_gbps"][f"d2h_{kind}_256MiB"] = nbytes / cuda_median(lambda: h.copy_(d, non_blocking=pinned), reps=4, samples=9) / 1e9
    d2 = torch.empty_like(d)
    res["copy_gbps"]["d2d_256MiB_read_plus_write"] = 2 * nbytes / cuda_median(lambda: d2.copy_(d), reps=4, samples=9) / 1e9
    for width, batch in ((256, 512), (1024, 1024), (4096, 1024)):
        layers = []
        for _ in range(4):
            layers += [torch.nn.Linear(width, width), torch.nn.GELU()]
        model = torch.nn.Sequential(*layers[:-1]).to(dev)
        opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
        x = torch.randn(batch, width, device=dev)
        y = torch.randint(0, width, (batch,), device=dev)
        loss_fn = torch.nn.CrossEntropyLoss()

        def step():
            opt.zero_grad(set_to_none=True)
            loss_fn(model(x), y).backward()
            opt.step()
        t = cuda_median(step, reps=5, samples=9)
        res["mlp"][f"eager_fp32_w{width}_b{batch}_d4"] = {"step_s": t, "samples_per_s": batch / t}
    a = torch.randn(4096, 4096)
    b = torch.randn(4096, 4096)
    res["cpu_sgemm_4096_gflops"] = 2 * 4096**3 / host_median(lambda: torch.matmul(a, b)) / 1e9
    with open(out, "w") as f:
        json.dump(res, f, indent=1)
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "torch-reference.json")
