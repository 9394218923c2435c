#!/usr/bin/env python3
"""PyTorch's eager CPU training step on gtb's train model, for the target "the CPU step is at least as
fast as a mainstream framework's on the same model, batch and threads".

The model is gtb's: input = width, depth Linear layers (width ... width -> 16 classes), ReLU (GELU with
--gelu), softmax cross-entropy, SGD with momentum 0.9 and lr 0.05 (or Adam, lr 1e-3). The step is
zero_grad + forward + backward + optimizer step, timed with time.perf_counter after warm-up; the
median over samples is printed as samples/s beside gtb's figure for the same configuration.
usage: torch-cpu-step.py [--threads N] [--gtb RESULTS.json] [width,depth,batch[,gelu][,adam] ...]
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch

# The one definition of gtb's models in PyTorch (the framework family's worker builds them too).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "kernels", "framework"))
import models  # noqa: E402

# The CPU configurations of gtb's quick train suite.
DEFAULT = ["256,4,1", "256,4,32", "256,4,512", "256,4,4096", "64,4,256", "1024,4,256",
           "512,4,512,gelu", "512,4,512,gelu,adam"]


def median_step_s(width, depth, batch, gelu, adam, samples=9):
    torch.manual_seed(0)
    model = models.mlp(torch, width, depth, gelu=gelu)
    opt = models.mlp_optimizer(torch, model, adam=adam)
    x = torch.randn(batch, width)
    y = torch.randint(0, 16, (batch,))
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad(set_to_none=True)
        loss_fn(model(x), y).backward()
        opt.step()

    t0 = time.perf_counter()
    while time.perf_counter() - t0 < 0.2:  # warm-up: allocator, thread pool, kernel selection
        step()
    per = time.perf_counter()
    step()
    one = max(time.perf_counter() - per, 1e-6)
    reps = max(1, int(0.05 / one))
    times = []
    for _ in range(samples):
        t = time.perf_counter()
        for _ in range(reps):
            step()
        times.append((time.perf_counter() - t) / reps)
    return statistics.median(times)


def gtb_rates(path):
    if not path:
        return {}
    doc = json.load(open(path))
    out = {}
    for r in doc["records"]:
        if r["family"] != "train" or r["backend"] != "cpu" or r["status"] != "ok":
            continue
        p, o = r["params"], r["options"]
        if o.get("micro_batches", 1) != 1:
            continue
        key = (p["width"], p["depth"], p["batch"], o.get("activation", "relu") == "gelu", o.get("optimizer", "sgd") == "adam")
        out[key] = r["value"]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (default: torch's own)")
    ap.add_argument("--gtb", help="a gtb results file with the train family's CPU records")
    ap.add_argument("configs", nargs="*", default=DEFAULT)
    a = ap.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    gtb = gtb_rates(a.gtb)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; samples/s, median")
    for c in a.configs:
        f = c.split(",")
        width, depth, batch = int(f[0]), int(f[1]), int(f[2])
        gelu, adam = "gelu" in f[3:], "adam" in f[3:]
        rate = batch / median_step_s(width, depth, batch, gelu, adam)
        ours = gtb.get((width, depth, batch, gelu, adam))
        ratio = f"  gtb/torch {ours / rate:.2f}" if ours else ""
        print(f"  width {width:5d} depth {depth} batch {batch:5d} {'gelu' if gelu else 'relu'} "
              f"{'adam' if adam else 'sgd '}: torch {rate:12.1f}" + (f"  gtb {ours:12.1f}" if ours else "") + ratio)
    return 0


if __name__ == "__main__":
    sys.exit(main())
