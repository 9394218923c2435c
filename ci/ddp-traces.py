#!/usr/bin/env python3
"""Multi-rank PyTorch profiler traces for `gtb diagnose` tests: DistributedDataParallel on the CPU with
the gloo backend, N processes on one machine, each writing its own Chrome trace (rank-N in the name,
distributedInfo inside).

usage: ddp-traces.py OUT_DIR [--world 2] [--steps 4] [--straggler RANK] [--straggler-ms 30]
                     [--no-sync-every K] [--bucket-mb 25] [--loader-ms 0] [--sync-every-step]
                     [--hidden 64] [--seed 0]

One change per diff pair: a slower data loader (--loader-ms), a sync every step (--sync-every-step:
the loss read back with .item() each step), a larger model (--hidden). The planted straggler sleeps
before its backward pass in every profiled step, so the other ranks wait in the gradient all-reduce.
"""
import argparse
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP


def work(rank, a):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(a.port)
    torch.manual_seed(a.seed)
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=a.world)
    h = a.hidden
    model = torch.nn.Sequential(torch.nn.Linear(32, h), torch.nn.ReLU(), torch.nn.Linear(h, h), torch.nn.ReLU(),
                                torch.nn.Linear(h, 8))
    ddp = DDP(model, bucket_cap_mb=a.bucket_mb)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    x = torch.randn(64, 32)
    y = torch.randn(64, 8)

    def batch():
        with torch.profiler.record_function("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"):
            if a.loader_ms:
                time.sleep(a.loader_ms / 1e3)
            return x.clone(), y.clone()

    def forward_backward(xb, yb):
        out = ddp(xb)
        loss = torch.nn.functional.mse_loss(out, yb)
        if a.straggler == rank:
            time.sleep(a.straggler_ms / 1e3)
        loss.backward()
        return loss

    def one(i):
        xb, yb = batch()
        # no_sync must hold the forward pass too: DDP prepares the gradient reduction there.
        if a.no_sync_every and i % a.no_sync_every != a.no_sync_every - 1:
            with ddp.no_sync():
                loss = forward_backward(xb, yb)
        else:
            loss = forward_backward(xb, yb)
        opt.step()
        opt.zero_grad()
        if a.sync_every_step:
            loss.item()

    for i in range(3):  # warm-up, not profiled
        one(i)
    dist.barrier()
    acts = [torch.profiler.ProfilerActivity.CPU]
    path = os.path.join(a.out, f"rank-{rank}.json")
    with torch.profiler.profile(activities=acts, record_shapes=True,
                                schedule=torch.profiler.schedule(wait=0, warmup=1, active=a.steps, repeat=1),
                                on_trace_ready=lambda p: p.export_chrome_trace(path)) as prof:
        for i in range(a.steps + 1):
            one(i)
            prof.step()
    dist.barrier()
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--world", type=int, default=2)
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--straggler", type=int, default=-1)
    p.add_argument("--straggler-ms", type=float, default=30)
    p.add_argument("--no-sync-every", type=int, default=0)
    p.add_argument("--bucket-mb", type=float, default=25)
    p.add_argument("--loader-ms", type=float, default=0)
    p.add_argument("--sync-every-step", action="store_true")
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--port", type=int, default=29531)
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    mp.spawn(work, args=(a,), nprocs=a.world, join=True)


if __name__ == "__main__":
    sys.exit(main())
