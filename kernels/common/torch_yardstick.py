"""What the PyTorch yardstick scripts (bench/<family>/torch-cpu-step.py) share: the timing of one
training step beside gtb's and the reading of gtb's own CPU figures from a results file. The models
themselves come from kernels/framework/models.py."""
import argparse
import json
import statistics
import time


def parser(family, default_configs):
    """The arguments every yardstick takes: --threads, --gtb and the configurations to time."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (default: torch's own)")
    ap.add_argument("--gtb", help=f"a gtb results file with the {family} family's CPU records")
    ap.add_argument("configs", nargs="*", default=default_configs)
    return ap


def start(torch, args, family, key, unit):
    """Sets the threads, prints the header line and returns gtb's figures by key (gtb_rates)."""
    if args.threads:
        torch.set_num_threads(args.threads)
    gtb = gtb_rates(args.gtb, family, key)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; {unit}/s, median")
    return gtb


def median_step_s(step, samples, warmup_s, sample_s=0.0):
    """The median seconds of step() over `samples` samples, after `warmup_s` seconds of warm-up
    (allocator, thread pool, kernel selection). With sample_s, a sample times as many steps as fill
    about sample_s seconds (one step timed once first) and divides; otherwise one step a sample."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < warmup_s:
        step()
    reps = 1
    if sample_s > 0:
        per = time.perf_counter()
        step()
        one = max(time.perf_counter() - per, 1e-6)
        reps = max(1, int(sample_s / one))
    times = []
    for _ in range(samples):
        t = time.perf_counter()
        for _ in range(reps):
            step()
        times.append((time.perf_counter() - t) / reps)
    return statistics.median(times)


def gtb_rates(path, family, key):
    """gtb's figure (the record's value) of each ok CPU record of `family` in the results file at
    `path`, by key(record); a record whose key is None is left out. {} without a path."""
    if not path:
        return {}
    with open(path) as f:
        doc = json.load(f)
    out = {}
    for r in doc["records"]:
        if r["family"] != family or r["backend"] != "cpu" or r["status"] != "ok":
            continue
        k = key(r)
        if k is not None:
            out[k] = r["value"]
    return out


def beside(rate, ours, width):
    """PyTorch's rate, gtb's beside it and their ratio, for one printed line."""
    line = f"torch {rate:{width}.1f}"
    if ours:
        line += f"  gtb {ours:{width}.1f}  gtb/torch {ours / rate:.2f}"
    return line
