#!/usr/bin/env python3
"""PyTorch's eager CPU training step on gtb's train model, for the target "the CPU step is at least as
fast as a mainstream framework's on the same model, batch and threads".

The model is gtb's: input = width, depth Linear layers (width ... width -> 16 classes), ReLU (GELU with
--gelu), softmax cross-entropy, SGD with momentum 0.9 and lr 0.05 (or Adam, lr 1e-3). The step is
zero_grad + forward + backward + optimizer step, timed with time.perf_counter after warm-up; the
median over samples is printed as samples/s beside gtb's figure for the same configuration.
usage: torch-cpu-step.py [--threads N] [--gtb RESULTS.json] [width,depth,batch[,gelu][,adam] ...]
"""
import os
import sys

import torch

# The one definition of gtb's models in PyTorch (the framework family's worker builds them too), and
# the timing and results reading the yardsticks share.
_KERNELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "kernels")
sys.path.insert(0, os.path.join(_KERNELS, "framework"))
sys.path.insert(0, os.path.join(_KERNELS, "common"))
import models  # noqa: E402
import torch_yardstick  # noqa: E402

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

    return torch_yardstick.median_step_s(step, samples, warmup_s=0.2, sample_s=0.05)


def gtb_key(r):
    p, o = r["params"], r["options"]
    if o.get("micro_batches", 1) != 1:
        return None
    return (p["width"], p["depth"], p["batch"], o.get("activation", "relu") == "gelu", o.get("optimizer", "sgd") == "adam")


def main():
    a = torch_yardstick.parser("train", DEFAULT).parse_args()
    gtb = torch_yardstick.start(torch, a, "train", gtb_key, "samples")
    for c in a.configs:
        f = c.split(",")
        width, depth, batch = int(f[0]), int(f[1]), int(f[2])
        gelu, adam = "gelu" in f[3:], "adam" in f[3:]
        rate = batch / median_step_s(width, depth, batch, gelu, adam)
        ours = gtb.get((width, depth, batch, gelu, adam))
        print(f"  width {width:5d} depth {depth} batch {batch:5d} {'gelu' if gelu else 'relu'} "
              f"{'adam' if adam else 'sgd '}: " + torch_yardstick.beside(rate, ours, 12))
    return 0


if __name__ == "__main__":
    sys.exit(main())
