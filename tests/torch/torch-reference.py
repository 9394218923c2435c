#!/usr/bin/env python3
"""PyTorch's figures for the same work gtb measures, on the same GPU, and the table that compares them.

  torch-reference.py OUT.json
      measures with PyTorch (needs torch with CUDA): host<->device copies of 256 MiB (pinned and
      pageable, CUDA events, as gtb's device clock), a 1 GiB device-to-device copy (read + write
      counted, as gtb's stream_copy), torch.matmul at 8192^3 per precision (CUDA events, warm L2),
      and one training step of gtb's model_sweep MLP (batch 256, input = width, depth 4 linear
      layers, 16 classes, ReLU, SGD with momentum; eager and CUDA-graph; host wall clock after a
      synchronize, as gtb's train family), and one training step of gtb's transformer block stack at
      its quick GPU configuration (2 layers, d_model 256, 4 heads, seq_len 128, batch 4; the model of
      bench/transformer/torch-cpu-step.py with F.scaled_dot_product_attention(is_causal=True), AdamW;
      fp32 and bf16 autocast; eager and torch.compile; host wall clock after a synchronize). Medians
      over samples after warm-up; GB = 1e9 bytes. The file is rewritten after each part, so a run
      stopped part-way keeps what it measured; a part that fails is recorded with its error.
  torch-reference.py --table [--gtb RESULTS.json ...] [--torch OUT.json]
      prints the table: gtb's figure, PyTorch's, and gtb / PyTorch (> 1: gtb is faster). A side
      that did not run says "not run" (or gtb's record status); a ratio needs both numbers.
"""
import argparse
import json
import os
import platform
import statistics
import sys
import time

MIB = 1 << 20
COPY_BYTES = 256 * MIB
D2D_BYTES = 1024 * MIB
GEMM_N = 8192
MLP_BATCH, MLP_DEPTH, MLP_CLASSES = 256, 4, 16
MLP_WIDTHS = (64, 1024)
# gtb's quick GPU transformer configuration: layers, d_model, heads, seq_len, batch.
XFMR = (2, 256, 4, 128, 4)
XFMR_PRECISIONS = ("fp32", "bf16")
XFMR_MODES = (("eager", "eager"), ("graph", "compiled"))  # gtb's mode -> the PyTorch mode beside it
XFMR_MODEL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "transformer",
                          "torch-cpu-step.py")


def xfmr_module():
    """The transformer yardstick's model (one definition for the CPU and GPU comparisons)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("gtb_transformer_torch_step", XFMR_MODEL)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
# gtb precision option -> (PyTorch key, label)
GEMM_PRECISIONS = [("fp32", "fp32"), ("tf32", "tf32"), ("fp16_fp32acc", "fp16"), ("bf16_fp32acc", "bf16")]


# ---- measuring -------------------------------------------------------------------------------------

def measure(out):
    import torch

    def median_seconds(fn, reps, samples, events, warmup=3):
        """Median seconds per call: CUDA events around `reps` calls, or the host clock until synchronized."""
        for _ in range(warmup):
            fn()
        torch.cuda.synchronize()
        times = []
        for _ in range(samples):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            t0 = time.perf_counter()
            start.record()
            for _ in range(reps):
                fn()
            end.record()
            end.synchronize()
            times.append((start.elapsed_time(end) / 1e3 if events else time.perf_counter() - t0) / reps)
        return statistics.median(times)

    def cuda_median(fn, reps, samples):
        return median_seconds(fn, reps, samples, events=True)

    def wall_median(fn, reps, samples):
        return median_seconds(fn, reps, samples, events=False)

    dev = torch.device("cuda")
    res = {"torch": torch.__version__, "cuda": torch.version.cuda, "gpu": torch.cuda.get_device_name(0),
           "host": platform.node(), "clock": "cuda_event for copies and matmul; perf_counter after "
           "torch.cuda.synchronize for the MLP step", "unit_note": "GB = 1e9 bytes",
           "copy_gbps": {}, "matmul_tflops": {}, "mlp_samples_per_s": {}, "xfmr_tokens_per_s": {},
           "xfmr_errors": {}}

    def dump():  # after each part: a run stopped at its budget keeps what it measured
        with open(out + ".tmp", "w") as f:
            json.dump(res, f, indent=1)
        os.replace(out + ".tmp", out)

    d = torch.empty(COPY_BYTES, dtype=torch.uint8, device=dev)
    for kind, pinned in (("pinned", True), ("pageable", False)):
        h = torch.randint(0, 255, (COPY_BYTES,), dtype=torch.uint8)
        if pinned:
            h = h.pin_memory()
        res["copy_gbps"][f"h2d_{kind}_256MiB"] = COPY_BYTES / cuda_median(
            lambda: d.copy_(h, non_blocking=pinned), reps=4, samples=9) / 1e9
        res["copy_gbps"][f"d2h_{kind}_256MiB"] = COPY_BYTES / cuda_median(
            lambda: h.copy_(d, non_blocking=pinned), reps=4, samples=9) / 1e9
    del d
    a = torch.randint(0, 255, (D2D_BYTES,), dtype=torch.uint8, device=dev)
    b = torch.empty_like(a)
    res["copy_gbps"]["d2d_1GiB_read_plus_write"] = 2 * D2D_BYTES / cuda_median(lambda: b.copy_(a), reps=4, samples=9) / 1e9
    del a, b
    dump()

    m = torch.backends.cuda.matmul
    # Accumulate in FP32 for FP16/BF16, as gtb's *_fp32acc variants do.
    for flag in ("allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction"):
        if hasattr(m, flag):
            setattr(m, flag, False)
    for key, dtype, tf32 in (("fp32", torch.float32, False), ("tf32", torch.float32, True),
                             ("fp16", torch.float16, False), ("bf16", torch.bfloat16, False)):
        m.allow_tf32 = tf32
        x = torch.randn(GEMM_N, GEMM_N, device=dev, dtype=dtype)
        y = torch.randn(GEMM_N, GEMM_N, device=dev, dtype=dtype)
        t = cuda_median(lambda: torch.matmul(x, y), reps=3, samples=7)
        res["matmul_tflops"][f"{key}_{GEMM_N}"] = 2 * GEMM_N**3 / t / 1e12
        del x, y
    m.allow_tf32 = False
    dump()

    for width in MLP_WIDTHS:
        dims = [width] * MLP_DEPTH + [MLP_CLASSES]
        layers = []
        for i in range(MLP_DEPTH):
            layers.append(torch.nn.Linear(dims[i], dims[i + 1]))
            if i + 1 < MLP_DEPTH:
                layers.append(torch.nn.ReLU())
        model = torch.nn.Sequential(*layers).to(dev)
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        loss_fn = torch.nn.CrossEntropyLoss()
        x = torch.randn(MLP_BATCH, width, device=dev)
        y = torch.randint(0, MLP_CLASSES, (MLP_BATCH,), device=dev)

        def step():
            opt.zero_grad(set_to_none=False)
            loss_fn(model(x), y).backward()
            opt.step()
        t = wall_median(step, reps=20, samples=9)
        res["mlp_samples_per_s"][f"eager_w{width}"] = MLP_BATCH / t
        # Whole-step capture as in PyTorch's CUDA-graph docs: warm up on a side stream, then capture.
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                step()
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            step()
        t = wall_median(g.replay, reps=20, samples=9)
        res["mlp_samples_per_s"][f"graph_w{width}"] = MLP_BATCH / t
        dump()

    # The transformer block step with PyTorch's fused attention; eager first, then compiled (whose
    # compilation may take most of the budget, or fail where no compiler toolchain is installed).
    mod = xfmr_module()
    layers, d, heads, seq, batch = XFMR
    for _, mode in XFMR_MODES:
        for prec in XFMR_PRECISIONS:
            key = f"{mode}_{prec}"
            try:
                torch.manual_seed(0)
                model = mod.build(torch, layers, d, heads, True).to(dev)
                opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
                fwd = torch.compile(model) if mode == "compiled" else model
                x, t = torch.randn(batch, seq, d, device=dev), torch.randn(batch, seq, d, device=dev)

                def xstep():
                    opt.zero_grad(set_to_none=True)
                    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=prec == "bf16"):
                        loss = mod.loss_of(torch, fwd, x, t)
                    loss.backward()
                    opt.step()
                res["xfmr_tokens_per_s"][key] = seq * batch / wall_median(xstep, reps=10, samples=7)
            except Exception as e:  # recorded, not fatal: the other parts stand
                res["xfmr_errors"][key] = f"{type(e).__name__}: {e}"[:400]
            dump()
    print(json.dumps(res, indent=1))


# ---- the table -------------------------------------------------------------------------------------

def rows():
    """(label, unit, gtb record selector, PyTorch (section, key))."""
    r = []
    for direction, memory, label in (("h2d", "pinned", "H2D pinned 256 MiB"), ("d2h", "pinned", "D2H pinned 256 MiB"),
                                     ("h2d", "pageable", "H2D pageable 256 MiB")):
        sel = {"family": "transfer", "workload": f"copy_{direction}", "params": {"bytes": COPY_BYTES},
               "options": {"memory": memory, "clock": "device"}}
        r.append((label, "GB/s", sel, ("copy_gbps", f"{direction}_{memory}_256MiB")))
    r.append(("device copy 1 GiB (read+write)", "GB/s",
              {"family": "ceilings", "workload": "stream_copy", "variant": "memcpy_d2d", "params": {"bytes": D2D_BYTES}},
              ("copy_gbps", "d2d_1GiB_read_plus_write")))
    for prec, key in GEMM_PRECISIONS:
        r.append((f"GEMM {GEMM_N}^3 {key}", "TFLOP/s",
                  {"family": "gemm", "workload": "gemm", "params": {"m": GEMM_N, "n": GEMM_N, "k": GEMM_N},
                   "options": {"precision": prec, "l2": "warm"}}, ("matmul_tflops", f"{key}_{GEMM_N}")))
    for width in MLP_WIDTHS:
        for mode in ("eager", "graph"):
            r.append((f"MLP step w{width} b{MLP_BATCH} {mode}", "samples/s",
                      {"family": "train", "workload": "model_sweep",
                       "params": {"batch": MLP_BATCH, "width": width, "depth": MLP_DEPTH}, "options": {"mode": mode}},
                      ("mlp_samples_per_s", f"{mode}_w{width}")))
    layers, d, heads, seq, batch = XFMR
    for prec in XFMR_PRECISIONS:
        for gtb_mode, torch_mode in XFMR_MODES:
            for variant in ("materialised", "fused"):
                r.append((f"transformer step {layers}x d{d} h{heads} s{seq} b{batch} {prec}: gtb {variant} {gtb_mode}, "
                          f"PyTorch SDPA {torch_mode}", "tokens/s",
                          {"family": "transformer", "workload": "configs", "variant": variant,
                           "params": {"layers": layers, "d_model": d, "heads": heads, "seq_len": seq, "batch": batch},
                           "options": {"precision": prec, "mode": gtb_mode}},
                          ("xfmr_tokens_per_s", f"{torch_mode}_{prec}")))
    return r


# Said under the table, so that no reader takes the fused variant's speed for the state of the art.
FUSED_NOTE = ("gtb's fused attention (kernels/transformer/cuda/attention_*.cu) is scalar FP32 arithmetic on the CUDA "
              "cores, without tensor cores, in every precision; PyTorch's scaled_dot_product_attention picks its "
              "own fused kernel (flash, memory-efficient or cuDNN attention, where the inputs allow). The transformer "
              "rows set a simple exact baseline beside a production kernel.")


def matches(rec, sel):
    if rec.get("backend") != "cuda":
        return False
    for k in ("family", "workload", "variant"):
        if k in sel and rec.get(k) != sel[k]:
            return False
    for k in ("params", "options"):
        have = rec.get(k, {})
        if any(have.get(n) != v for n, v in sel.get(k, {}).items()):
            return False
    return True


def gtb_cell(records, sel):
    """(value or None, text): the best ok record (several variants may do the same work), else why not."""
    found = [r for r in records if matches(r, sel)]
    ok = [r for r in found if r.get("status") == "ok" and isinstance(r.get("value"), (int, float))]
    if ok:
        best = max(ok, key=lambda r: r["value"])
        return best["value"], f"{best['value']:.4g} ({best['variant']})"
    if not found:
        return None, "not run"
    statuses = sorted({r.get("status", "?") for r in found})
    return None, "/".join(statuses)


def table(gtb_files, torch_file):
    records = []
    for path in gtb_files:
        try:
            with open(path) as f:
                records += json.load(f).get("records", [])
        except (OSError, ValueError) as e:
            print(f"torch-reference: cannot read {path}: {e}", file=sys.stderr)
    torch_res, torch_why = None, "not run"
    if torch_file and os.path.exists(torch_file):
        try:
            with open(torch_file) as f:
                torch_res = json.load(f)
        except (OSError, ValueError) as e:
            torch_why = "unreadable"
            print(f"torch-reference: cannot read {torch_file}: {e}", file=sys.stderr)
    head = "gtb vs PyTorch, same GPU, same run" + (f" (PyTorch {torch_res.get('torch')} on {torch_res.get('gpu')})"
                                                   if torch_res else " (PyTorch: not run)")
    lines = [head, "", "| work | unit | gtb | PyTorch | gtb / PyTorch |", "| --- | --- | --- | --- | --- |"]
    for label, unit, sel, (section, key) in rows():
        g, gtext = gtb_cell(records, sel)
        t = (torch_res or {}).get(section, {}).get(key) if torch_res else None
        failed = key in (torch_res or {}).get("xfmr_errors", {}) if section == "xfmr_tokens_per_s" else False
        ttext = f"{t:.4g}" if isinstance(t, (int, float)) else ("failed (its error is in the PyTorch file)" if failed
                                                                 else torch_why)
        ratio = f"{g / t:.2f}" if isinstance(g, (int, float)) and isinstance(t, (int, float)) and t > 0 else "-"
        lines.append(f"| {label} | {unit} | {gtext} | {ttext} | {ratio} |")
    lines += ["", FUSED_NOTE]
    print("\n".join(lines))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?", help="measure with PyTorch and write this JSON file")
    ap.add_argument("--table", action="store_true", help="print the gtb vs PyTorch table")
    ap.add_argument("--gtb", action="append", default=[], help="a gtb results file (repeatable)")
    ap.add_argument("--torch", help="this script's JSON output")
    a = ap.parse_args()
    if a.table:
        table(a.gtb, a.torch)
    elif a.out:
        measure(a.out)
    else:
        ap.error("give OUT.json to measure, or --table")


if __name__ == "__main__":
    main()
