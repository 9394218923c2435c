"""The framework family's worker: builds PyTorch work when gtb asks and times repetitions of it.

gtb's family binary starts this script with the interpreter GTB_PYTHON names and talks to it one JSON
line each way over its stdin and stdout. The worker prepares what it is asked (inputs from the files
gtb wrote, or from a seed), runs it once and writes what gtb checks, then on each "run" request
times `reps` repetitions with time.perf_counter(), after torch.cuda.synchronize() on the GPU, and
returns the seconds. gtb owns the loop: the warm-up, how many repetitions and samples, the
statistics, the checks against its float64 references. Nothing here repeats or summarises timings.

Requests and answers (one line each):
  (on start, unasked)       {"hello": {python, python_version, torch, torch_error, cuda, cudnn, threads, ...}}
  {"op": "prepare", "workload": W, "device": "cpu"|"cuda", "params": {...}, "options": {...}, "dir": D}
                            {"ok": true, "check": {...}, "info": {...}} | {"ok": false, "skip": why} | {"ok": false, "error": why}
  {"op": "run", "reps": N}  {"ok": true, "seconds": S}
  {"op": "stats"}           {"ok": true, ...what the prepared work counted while it ran}
  {"op": "release"}         {"ok": true}
  {"op": "quit"}            (exits)
usage: worker.py --threads N
"""
import json
import math
import os
import platform
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

# NVIDIA's PyTorch containers set TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1, which makes PyTorch's FP32 GEMMs
# on the GPU run TF32 whatever allow_tf32 says (PyTorch reads it once: when it loads, or at its first
# GEMM). The family's FP32 work is FP32: the variable is unset before torch is imported, and the value
# found goes to the context (hello's "tf32").
TF32_OVERRIDE_VAR = "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE"
TF32_OVERRIDE_FOUND = os.environ.pop(TF32_OVERRIDE_VAR, None)

import models  # noqa: E402  (the one definition of gtb's models)


class Skip(Exception):
    """A case this PyTorch or this machine cannot run: the record is `skipped` with the reason."""


# ---- the protocol -----------------------------------------------------------------------------------

def protocol_out():
    """The answers' stream: the original stdout. Anything a library prints goes to stderr (the
    family's log) instead of into the protocol."""
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return out


def hello(threads):
    h = {"python": sys.executable, "python_version": platform.python_version(), "pid": os.getpid()}
    try:
        import torch
    except Exception as e:  # ImportError, or a broken install that fails while importing
        h["torch"] = None
        h["torch_error"] = f"{type(e).__name__}: {e}"
        return h, None
    if threads > 0:
        torch.set_num_threads(threads)
    # gtb's own CPU steps flush denormals (FTZ and DAZ on every thread): PyTorch's side the same.
    h["flush_denormal"] = bool(torch.set_flush_denormal(True))
    h["torch"] = torch.__version__
    h["threads"] = torch.get_num_threads()
    h["cuda"] = torch.version.cuda
    h["cudnn"] = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    h["compile"] = hasattr(torch, "compile")
    h["sdpa"] = hasattr(torch.nn.functional, "scaled_dot_product_attention")
    cuda = torch.cuda.is_available()
    h["cuda_available"] = cuda
    if cuda:
        h["gpus"] = torch.cuda.device_count()
        h["gpu"] = torch.cuda.get_device_name(0)
    h["bf16_cpu"] = hasattr(torch, "autocast")
    h["tf32"] = fp32_is_fp32(torch)
    try:  # PyTorch needs no numpy: the worker exchanges tensors without it (f32_bytes)
        import numpy
        h["numpy"] = numpy.__version__
    except Exception:
        h["numpy"] = None
    return h, torch


def fp32_is_fp32(torch):
    """FP32 matmuls and convolutions in FP32, not TF32 (the variable that overrides both is unset
    above); returns what the work runs with, for the context."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    if hasattr(torch, "set_float32_matmul_precision"):
        torch.set_float32_matmul_precision("highest")
    t = {TF32_OVERRIDE_VAR: TF32_OVERRIDE_FOUND, "override_unset": TF32_OVERRIDE_FOUND is not None,
         "matmul_allow_tf32": bool(torch.backends.cuda.matmul.allow_tf32),
         "cudnn_allow_tf32": bool(torch.backends.cudnn.allow_tf32)}
    if hasattr(torch, "get_float32_matmul_precision"):
        t["float32_matmul_precision"] = torch.get_float32_matmul_precision()
    return t


# ---- files gtb writes and reads ---------------------------------------------------------------------

def read_f32(torch, path, count):
    data = bytearray(open(path, "rb").read())
    if len(data) != 4 * count:
        raise ValueError(f"{path}: {len(data)} bytes, expected {4 * count}")
    return torch.frombuffer(data, dtype=torch.float32).clone()


def read_i32(torch, path, count):
    data = bytearray(open(path, "rb").read())
    if len(data) != 4 * count:
        raise ValueError(f"{path}: {len(data)} bytes, expected {4 * count}")
    return torch.frombuffer(data, dtype=torch.int32).clone()


# The tests' planted errors: outputs gtb checks come back off by 1e-2 (its checks must catch it);
# GTB_FRAMEWORK_PLANT=last_row: the MLP step trains on a batch whose last row differs from gtb's (a
# check of fewer rows than the step runs would miss it); GTB_FRAMEWORK_PLANT=compile: the compiler
# fails at the compiled step's first call, as Inductor does where a C compiler or Python's headers
# are missing (the case is skipped with the compiler's message).
PLANT_MODE = os.environ.get("GTB_FRAMEWORK_PLANT", "")
PLANT = 1e-2 if PLANT_MODE not in ("", "last_row", "compile") else 0.0


def f32_bytes(torch, t):
    """A tensor's values as FP32 in this machine's byte order (what gtb reads), without numpy (pip's
    PyTorch does not install it): copied into a bytearray that torch.frombuffer views (PyTorch 1.10+)."""
    flat = t.detach().float().cpu().contiguous().reshape(-1)
    buf = bytearray(4 * flat.numel())
    if buf:
        torch.frombuffer(buf, dtype=torch.float32).copy_(flat)
    return buf


def write_f32(path, t):
    import torch
    if PLANT:
        t = t.detach().float() + PLANT
    with open(path, "wb") as f:
        f.write(f32_bytes(torch, t))


# ---- the workloads ----------------------------------------------------------------------------------

class Work:
    """A prepared workload: `step()` is one repetition; `check` and `info` go back to gtb."""
    cuda = False
    check = None
    info = None

    def step(self):
        raise NotImplementedError

    def stats(self):
        return {}


def sync(torch, device):
    if device == "cuda":
        torch.cuda.synchronize()


class OpChain(Work):
    """The vectorize family's chain y = gelu_tanh(1.5 x + 0.25) in eager PyTorch: three operators
    (mul, add, gelu), each a dispatch and a pass over n elements."""

    def __init__(self, torch, device, p, d):
        n = int(p["n"])
        F = torch.nn.functional
        self.x = read_f32(torch, os.path.join(d, "x.f32"), n).to(device)
        self.gelu = lambda v: F.gelu(v, approximate="tanh")
        y = self.run_once()
        sync(torch, device)
        write_f32(os.path.join(d, "y.f32"), y)
        self.info = {"operators_per_rep": 3}

    def run_once(self):
        return self.gelu(self.x * 1.5 + 0.25)

    def step(self):
        self.run_once()


class AutogradChain(OpChain):
    """The same chain as a training step runs its operators: recorded by autograd on an input that
    requires a gradient, then run backward from its sum (the input's gradient accumulates, as a
    parameter's does). Its operators, forward and backward, are counted once with the profiler."""

    def __init__(self, torch, device, p, d):
        n = int(p["n"])
        F = torch.nn.functional
        self.x = read_f32(torch, os.path.join(d, "x.f32"), n).to(device).requires_grad_(True)
        self.gelu = lambda v: F.gelu(v, approximate="tanh")
        y = self.run_once()
        sync(torch, device)
        write_f32(os.path.join(d, "y.f32"), y)
        self.info = {"operators_per_rep": count_operators(torch, self.step)}

    def step(self):
        self.run_once().sum().backward()

class LoopVsVector(Work):
    """The articles' loop: `result.append(a[i] * b[i])` over i in Python, or `a * b`."""

    def __init__(self, torch, device, p, o, variant, d):
        n = int(p["n"])
        self.a = read_f32(torch, os.path.join(d, "a.f32"), n).to(device)
        self.b = read_f32(torch, os.path.join(d, "b.f32"), n).to(device)
        self.n = n
        self.torch = torch
        self.loop = variant == "python_loop"
        out = self.run_once()
        if self.loop:
            out = torch.stack(out)
        write_f32(os.path.join(d, "y.f32"), out)

    def run_once(self):
        if self.loop:
            a, b = self.a, self.b
            result = []
            for i in range(self.n):
                result.append(a[i] * b[i])
            return result
        return self.a * self.b

    def step(self):
        self.run_once()


def gtb_layout_to_model(torch, model, flat, w_off, b_off, dims):
    """Loads gtb's flat parameters (W_l row-major dims[l] x dims[l+1], then the biases) into the
    Linear layers (weight out x in = W_l transposed)."""
    linears = [m for m in model if isinstance(m, torch.nn.Linear)]
    with torch.no_grad():
        for l, lin in enumerate(linears):
            fi, fo = dims[l], dims[l + 1]
            w = flat[w_off[l]:w_off[l] + fi * fo].view(fi, fo).t()
            lin.weight.copy_(w)
            lin.bias.copy_(flat[b_off[l]:b_off[l] + fo])


def model_to_gtb_layout(torch, model, total, w_off, b_off, dims, grads=False):
    """The Linear layers' parameters (or, grads=True, their gradients) in gtb's flat layout."""
    out = torch.zeros(total, dtype=torch.float32)
    linears = [m for m in model if isinstance(m, torch.nn.Linear)]
    for l, lin in enumerate(linears):
        fi, fo = dims[l], dims[l + 1]
        w, b = (lin.weight.grad, lin.bias.grad) if grads else (lin.weight, lin.bias)
        out[w_off[l]:w_off[l] + fi * fo] = w.detach().float().cpu().t().reshape(-1)
        out[b_off[l]:b_off[l] + fo] = b.detach().float().cpu()
    return out


# Operators that only describe a tensor (views, metadata, allocation): dispatched, but no pass over data.
METADATA_OPS = {"aten::t", "aten::transpose", "aten::view", "aten::as_strided", "aten::detach", "aten::expand",
                "aten::reshape", "aten::_reshape_alias", "aten::resolve_conj", "aten::resolve_neg", "aten::empty",
                "aten::empty_strided", "aten::permute", "aten::slice", "aten::select", "aten::unsqueeze",
                "aten::squeeze", "aten::alias", "aten::lift_fresh", "aten::empty_like"}


def count_operators(torch, step):
    """The operators one call of `step` dispatches from Python and autograd (the outermost aten::
    calls, those that only describe a tensor left out), counted with PyTorch's profiler."""
    from torch.profiler import profile, ProfilerActivity
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        step()
    n = 0
    for e in prof.events():
        parent = e.cpu_parent
        if e.name.startswith("aten::") and e.name not in METADATA_OPS and (parent is None or not parent.name.startswith("aten::")):
            n += 1
    return n


def planted_compiler(_graph, _inputs):
    raise RuntimeError("planted compiler failure (GTB_FRAMEWORK_PLANT=compile)")


def compiled_or_skip(torch, module):
    """torch.compile(module). It compiles nothing yet: Dynamo traces and Inductor compiles at the first
    call, where a missing compiler fails (first_call_or_skip)."""
    if PLANT_MODE == "compile":
        if hasattr(torch, "compile"):  # Dynamo calls the backend at the first call, as it calls Inductor
            return torch.compile(module, backend=planted_compiler)

        def fails_first(*args):  # a PyTorch without torch.compile: the same failure, the same place
            planted_compiler(None, args)
        return fails_first
    if not hasattr(torch, "compile"):
        raise Skip(f"torch {torch.__version__} has no torch.compile (PyTorch 2.0 added it)")
    try:
        return torch.compile(module)
    except Exception as e:  # a compiler missing on this machine
        raise Skip(f"torch.compile failed: {brief_error(e)}")


def brief_error(e, limit=600):
    """An exception's type and the start of its message, on one line (a compiler's message can run to
    pages: the whole of it goes to the family's log)."""
    lines = [l.strip() for l in str(e).splitlines() if l.strip()]
    text = f"{type(e).__name__}: {' | '.join(lines[:4])}"
    return text if len(text) <= limit else text[:limit - 3] + "..."


def first_call_or_skip(what, fn):
    """The first call of compiled work (torch.compile's or a CUDA graph's), outside the timed region:
    a failure there is the compiler's or the capture's, an environment fact, and the case is skipped
    with its message."""
    try:
        return fn()
    except Skip:
        raise
    except Exception as e:
        traceback.print_exc(file=sys.stderr)
        raise Skip(f"{what} failed at the first call: {brief_error(e)}")


def grad_scaler(torch):
    """GradScaler for the GPU: torch.amp.GradScaler("cuda") where this PyTorch has it (the older name is
    deprecated there), torch.cuda.amp.GradScaler() before."""
    amp = getattr(torch, "amp", None)
    if amp is not None and hasattr(amp, "GradScaler"):
        return amp.GradScaler("cuda")
    return torch.cuda.amp.GradScaler()


class MlpStep(Work):
    """The train family's step: zero_grad + forward + cross-entropy + backward + optimizer step on
    gtb's initial parameters and data (from gtb's files). mode eager, compiled (torch.compile) or
    graph (captured once as a CUDA graph and replayed); precision fp32 or bf16 (autocast, FP32
    master weights); loss_read_every k: loss.item() every k steps (0: never)."""

    def __init__(self, torch, device, p, o, d):
        self.torch = torch
        self.device = device
        width, depth, batch = int(p["width"]), int(p["depth"]), int(p["batch"])
        dims, w_off, b_off, total = p["dims"], p["w_offsets"], p["b_offsets"], int(p["total"])
        mode = o.get("mode", "eager")
        prec = o.get("precision", "fp32")
        self.every = int(o.get("loss_read_every", 0))
        if mode == "graph" and device != "cuda":
            raise Skip("a CUDA graph needs the GPU")
        if prec == "fp16" and device != "cuda":
            raise Skip("fp16 with GradScaler is a GPU mode")
        torch.manual_seed(0)
        self.model = models.mlp(torch, width, depth, classes=dims[-1], input_dim=dims[0]).to(device)
        flat0 = read_f32(torch, os.path.join(d, "params.f32"), total)
        x_all = read_f32(torch, os.path.join(d, "x.f32"), batch * dims[0]).view(batch, dims[0])
        y_all = read_i32(torch, os.path.join(d, "labels.i32"), batch).long()
        self.loss_fn = torch.nn.CrossEntropyLoss()
        autocast_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(prec)
        self.autocast_dtype = autocast_dtype
        self.scaler = grad_scaler(torch) if prec == "fp16" else None

        def fresh():
            gtb_layout_to_model(torch, self.model, flat0.to(device), w_off, b_off, dims)
            self.opt = models.mlp_optimizer(torch, self.model)

        # The check: one eager step on the whole batch the timed steps run, from gtb's initial state;
        # what each layer computed, the gradients and the parameters after go to gtb's float64 check.
        fresh()
        if PLANT_MODE == "last_row":
            x_all[-1] += 1.0
        self.x, self.y = x_all.to(device), y_all.to(device)
        loss, skipped = self.traced_step(d, total, w_off, b_off, dims)
        self.check = {"loss": loss, "skipped": skipped}
        self.info = {}
        # The loss after k steps on the whole batch (fp32's and this precision's, side by side in gtb),
        # and the bytes of the tensors one step holds.
        k = int(p.get("k_steps", 0))
        if k > 0:
            fresh()
            for _ in range(k):
                last = self.eager_step(self.model, self.x, self.y)
            self.info = {"loss_after_k": float(last), "k_steps": k, "step_memory_bytes": self.counted_memory()}
        if mode == "eager":
            self.info["operators_per_step"] = count_operators(torch, lambda: self.eager_step(self.model, self.x, self.y))
        fresh()
        self.steps = 0
        self.reads = 0
        self.mem0 = torch.cuda.max_memory_allocated() if device == "cuda" else None
        if device == "cuda":
            torch.cuda.reset_peak_memory_stats()
        if mode == "eager":
            self.fn = lambda: self.eager_step(self.model, self.x, self.y, keep=True)
        elif mode == "compiled":
            cm = compiled_or_skip(torch, self.model)
            self.fn = lambda: self.eager_step(cm, self.x, self.y, keep=True)

            def first():  # compiles outside the timed region
                self.fn()
                sync(torch, device)
            first_call_or_skip("torch.compile", first)
        else:
            self.fn = first_call_or_skip("CUDA graph capture", self.capture_graph)

    def traced_step(self, d, total, w_off, b_off, dims):
        """One eager step that keeps what gtb's layer-local float64 check reads (kernels/train's
        verify_step): each Linear's output Z_l and its gradient dZ_l, each ReLU's output A_l (files
        z<l>.f32, dz<l>.f32, a<l>.f32, the batch's rows), the gradients and the parameters after
        (grads.f32, params_after.f32, gtb's layout). Returns the loss and whether GradScaler skipped
        the update."""
        torch = self.torch
        zs, acts = [], []

        def keep_z(_m, _inputs, out):
            out.retain_grad()
            zs.append(out)

        hooks = []
        for m in self.model:
            if isinstance(m, torch.nn.Linear):
                hooks.append(m.register_forward_hook(keep_z))
            else:
                hooks.append(m.register_forward_hook(lambda _m, _i, out: acts.append(out)))
        scale = float(self.scaler.get_scale()) if self.scaler is not None else 1.0
        try:
            loss = self.eager_step(self.model, self.x, self.y, keep=True)
        finally:
            for h in hooks:
                h.remove()
        sync(torch, self.device)
        skipped = self.scaler is not None and float(self.scaler.get_scale()) < scale
        for l, z in enumerate(zs, 1):
            write_f32(os.path.join(d, f"z{l}.f32"), z)
            # dZ of the mean loss: GradScaler's scale taken out, as it takes it out of the gradients.
            write_f32(os.path.join(d, f"dz{l}.f32"), z.grad.float() / scale)
        for l, a in enumerate(acts, 1):
            write_f32(os.path.join(d, f"a{l}.f32"), a)
        write_f32(os.path.join(d, "grads.f32"), model_to_gtb_layout(torch, self.model, total, w_off, b_off, dims, grads=True))
        write_f32(os.path.join(d, "params_after.f32"), model_to_gtb_layout(torch, self.model, total, w_off, b_off, dims))
        return float(loss), skipped

    def counted_memory(self):
        """The bytes of the tensors one step holds, counted (PyTorch keeps no memory statistics on the
        CPU): the parameters, the optimizer's state and the batch, one gradient per parameter, and
        every tensor autograd saves for the backward pass (each storage once; those that are a
        parameter or the batch counted once). Alive together when the backward pass starts, they
        bound the step's peak from below; an operator's scratch space is not counted."""
        torch = self.torch

        def storage(t):
            s = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
            return s.data_ptr(), s.nbytes()

        kept = dict(storage(t) for t in [*self.model.parameters(), self.x, self.y])
        saved = {}

        def pack(t):
            ptr, n = storage(t)
            saved[ptr] = n
            return t

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            self.eager_step(self.model, self.x, self.y)
        state = [v for st in self.opt.state.values() for v in st.values() if torch.is_tensor(v)]
        grads = [q.grad for q in self.model.parameters() if q.grad is not None]
        return (sum(kept.values()) + sum(n for ptr, n in saved.items() if ptr not in kept) +
                sum(t.numel() * t.element_size() for t in state + grads))

    def eager_step(self, model, x, y, keep=False):
        torch = self.torch
        self.opt.zero_grad(set_to_none=True)
        if self.autocast_dtype is not None:
            with torch.autocast(self.device, dtype=self.autocast_dtype):
                loss = self.loss_fn(model(x).float(), y)
        else:
            loss = self.loss_fn(model(x), y)
        if self.scaler is not None:
            self.scaler.scale(loss).backward()
            self.scaler.step(self.opt)
            self.scaler.update()
        else:
            loss.backward()
            self.opt.step()
        if not keep:
            return loss.item()
        return loss

    def capture_graph(self):
        torch = self.torch
        if self.scaler is not None:
            raise Skip("fp16 with GradScaler is not captured (its skipped steps read the host)")
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):  # warm-up on a side stream, as CUDA graph capture requires
                self.eager_step(self.model, self.x, self.y, keep=True)
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        self.opt.zero_grad(set_to_none=True)
        with torch.cuda.graph(g):
            self.graph_loss = self.eager_step(self.model, self.x, self.y, keep=True)
        g.replay()  # the first replay, outside the timed region
        torch.cuda.synchronize()
        return g.replay

    def step(self):
        loss = self.fn()
        self.steps += 1
        if self.every and self.steps % self.every == 0:
            if loss is None:
                loss = self.graph_loss
            loss.item()
            self.reads += 1

    def stats(self):
        out = {"steps": self.steps, "loss_reads": self.reads}
        if self.device == "cuda":
            out["peak_memory_bytes"] = self.torch.cuda.max_memory_allocated()
        return out


class TransformerStep(Work):
    """The transformer family's block stack, its step (AdamW, 0.5 * mean squared error), eager;
    checked here against the same model in float64 (the loss and the first step's update)."""

    def __init__(self, torch, device, p, o):
        layers, d, heads = int(p["layers"]), int(p["d_model"]), int(p["heads"])
        seq, batch = int(p["seq_len"]), int(p["batch"])
        fused = o.get("attention", "materialised") == "fused"
        prec = o.get("precision", "fp32")
        if fused and not hasattr(torch.nn.functional, "scaled_dot_product_attention"):
            raise Skip(f"torch {torch.__version__} has no F.scaled_dot_product_attention (PyTorch 2.0 added it)")
        self.torch, self.device = torch, device
        gen = torch.Generator().manual_seed(int(p.get("seed", 1)))
        torch.manual_seed(int(p.get("seed", 1)))
        model = models.transformer(torch, layers, d, heads, fused)
        x = torch.randn(batch, seq, d, generator=gen)
        t = torch.randn(batch, seq, d, generator=gen)
        # float64 reference of the same model: loss and one AdamW update, outside the timed region.
        ref = models.transformer(torch, layers, d, heads, fused).double()
        ref.load_state_dict({k: v.double() for k, v in model.state_dict().items()})
        ropt = models.transformer_optimizer(torch, ref)
        rloss = models.transformer_loss(torch, ref, x.double(), t.double())
        rloss.backward()
        r0 = [q.detach().clone() for q in ref.parameters()]
        ropt.step()
        rdelta = torch.cat([(q.detach() - a).reshape(-1) for q, a in zip(ref.parameters(), r0)])
        self.model = model.to(device)
        self.opt = models.transformer_optimizer(torch, self.model)
        self.x, self.t = x.to(device), t.to(device)
        self.dtype = torch.bfloat16 if prec == "bf16" else None
        p0 = [q.detach().clone() for q in self.model.parameters()]
        loss = self.step_once()
        sync(torch, device)
        delta = torch.cat([(q.detach() - a).reshape(-1).double().cpu() for q, a in zip(self.model.parameters(), p0)])
        loss_err = abs(float(loss) - float(rloss)) / max(abs(float(rloss)), 1e-30)
        upd_err = float((delta - rdelta).norm() / rdelta.norm().clamp_min(1e-300))
        tol = 3e-2 if self.dtype is not None else 1e-3
        ok = loss_err <= tol and upd_err <= tol * 10
        self.check = {"ok": ok, "detail": f"loss relative error {loss_err:.2e}, first update's relative norm error "
                      f"{upd_err:.2e} against float64 (tolerance {tol:g}, {tol * 10:g})"}
        self.info = {"operators_per_step": count_operators(torch, self.step_once)}

    def step_once(self):
        torch = self.torch
        self.opt.zero_grad(set_to_none=True)
        if self.dtype is not None:
            with torch.autocast(self.device, dtype=self.dtype):
                loss = models.transformer_loss(torch, self.model, self.x, self.t)
        else:
            loss = models.transformer_loss(torch, self.model, self.x, self.t)
        loss.backward()
        self.opt.step()
        return loss.detach()

    def step(self):
        self.step_once()



class Matmul(Work):
    """PyTorch's own GEMM at a training step's shape: C[m x n] = op(A) op(B) over k with torch.mm, in
    the orientation the step calls it: nn (the forward, A B), tn (a weight gradient, A^T B: A stored
    k x m and read through a transposed view) or nt (an input gradient, A B^T: B stored n x k). With
    `count` (workload bmm), `count` such products at once with torch.bmm, as attention's per-head
    products run (nt the scores Q K^T, nn the context P V and the query and key gradients, tn the value
    gradient P^T dO). gtb writes A ([count x] m x k) and B ([count x] k x n) row-major; the product
    goes back for gtb's float64 check."""

    def __init__(self, torch, device, p, o, d):
        m, n, k = int(p["m"]), int(p["n"]), int(p["k"])
        batch = (int(p["count"]),) if "count" in p else ()
        orient = o.get("orientation", "nn")
        if orient not in ("nn", "tn", "nt"):
            raise ValueError(f"orientation must be nn, tn or nt, got {orient}")
        a = read_f32(torch, os.path.join(d, "a.f32"), math.prod(batch + (m, k))).view(*batch, m, k)
        b = read_f32(torch, os.path.join(d, "b.f32"), math.prod(batch + (k, n))).view(*batch, k, n)
        # The stored operand of a transposed form is (each product's) transpose, contiguous; the view
        # is op(A) = A.
        self.a = a.transpose(-2, -1).contiguous().to(device).transpose(-2, -1) if orient == "tn" else a.to(device)
        self.b = b.transpose(-2, -1).contiguous().to(device).transpose(-2, -1) if orient == "nt" else b.to(device)
        self.op = torch.bmm if batch else torch.mm
        c = self.op(self.a, self.b)
        sync(torch, device)
        write_f32(os.path.join(d, "c.f32"), c)
        self.info = {"operators_per_rep": 1}

    def step(self):
        self.op(self.a, self.b)


class OptimizerStep(Work):
    """PyTorch's optimizer step alone, as a training step calls it: gtb's SGD (momentum 0.9, lr 0.05)
    or AdamW (lr 1e-3, weight decay 0.01) over `tensors` parameter tensors holding `params` values in
    all, their gradients set. gtb writes the parameters and gradients; the parameters after one
    step go back for gtb's float64 check; then each repetition is one opt.step()."""

    def __init__(self, torch, device, p, o, d):
        total, tensors = int(p["params"]), int(p["tensors"])
        if tensors <= 0 or total < tensors:
            raise ValueError(f"params ({total}) must be at least tensors ({tensors}) > 0")
        kind = o.get("optimizer", "sgd")
        flat = read_f32(torch, os.path.join(d, "params.f32"), total).to(device)
        grad = read_f32(torch, os.path.join(d, "grads.f32"), total).to(device)
        sizes = [total // tensors + (1 if i < total % tensors else 0) for i in range(tensors)]
        self.params = [torch.nn.Parameter(t.clone()) for t in flat.split(sizes)]
        for q, g in zip(self.params, grad.split(sizes)):
            q.grad = g.clone()
        if kind == "sgd":
            self.opt = models.mlp_optimizer(torch, torch.nn.ParameterList(self.params))
        elif kind == "adamw":
            self.opt = models.transformer_optimizer(torch, torch.nn.ParameterList(self.params))
        else:
            raise ValueError(f"optimizer must be sgd or adamw, got {kind}")
        self.opt.step()
        sync(torch, device)
        write_f32(os.path.join(d, "params_after.f32"), torch.cat([q.detach().reshape(-1) for q in self.params]))
        self.info = {"operators_per_rep": count_operators(torch, self.opt.step)}

    def step(self):
        self.opt.step()


class Spin:
    """Preprocessing of a known cost: the sample's CPU time spent in a loop (the clock the loop reads
    is only its stopping condition, never a measurement)."""

    def __init__(self, torch, features, us, length):
        self.torch, self.features, self.s, self.length = torch, features, us * 1e-6, length

    def __len__(self):
        return self.length

    def __getitem__(self, i):
        end = time.perf_counter() + self.s
        while time.perf_counter() < end:
            pass
        return self.torch.full((self.features,), float(i)) + self.torch.arange(self.features, dtype=self.torch.float32)


class Loader(Work):
    """A DataLoader feeding a consumer whose step takes step_ms (a sleep: the consumer waits on the
    device, as a GPU step leaves the host). One repetition: one batch taken and consumed. Counts the
    seconds the consumer waited for batches (its idle time)."""

    def __init__(self, torch, device, p, o):
        self.torch = torch
        batch, features = int(p["batch"]), int(p.get("features", 256))
        self.step_s = float(p["step_ms"]) * 1e-3
        workers = int(p["num_workers"])
        pin = o.get("pin_memory", "off") == "on"
        persistent = o.get("persistent_workers", "off") == "on"
        if persistent and workers == 0:
            raise Skip("persistent_workers needs num_workers > 0")
        if pin and not torch.cuda.is_available():
            raise Skip("pin_memory pins for a GPU: torch.cuda.is_available() is False")
        epoch_batches = int(p.get("epoch_batches", 16))
        ds = Spin(torch, features, float(p["sample_us"]), batch * epoch_batches)
        self.loader = torch.utils.data.DataLoader(ds, batch_size=batch, num_workers=workers, pin_memory=pin,
                                                  persistent_workers=persistent, shuffle=False)
        # The check: one epoch delivers every sample once, in order, intact.
        bad = 0
        for k, b in enumerate(self.loader):
            ids = torch.arange(k * batch, (k + 1) * batch, dtype=torch.float32).view(-1, 1)
            want = ids + torch.arange(features, dtype=torch.float32).view(1, -1)
            bad += int(not torch.equal(b, want))
        self.check = {"ok": bad == 0, "detail": f"{bad} of {epoch_batches} batches differ from the samples asked for"}
        self.it = iter(self.loader)
        self.idle = 0.0
        self.busy = 0.0
        self.batches = 0

    def next_batch(self):
        try:
            return next(self.it)
        except StopIteration:
            self.it = iter(self.loader)
            return next(self.it)

    def step(self):
        t0 = time.perf_counter()
        self.next_batch()
        t1 = time.perf_counter()
        time.sleep(self.step_s)
        self.idle += t1 - t0
        self.busy += time.perf_counter() - t1
        self.batches += 1

    def stats(self):
        total = self.idle + self.busy
        return {"idle_fraction": self.idle / total if total > 0 else None, "batches": self.batches}


class ToDevice(Work):
    """A batch copied to the GPU each repetition: from pageable memory, or from pinned memory with
    non_blocking=True."""

    def __init__(self, torch, device, p, o):
        if device != "cuda":
            raise Skip("a host-to-device copy needs the GPU")
        n = int(p["bytes"]) // 4
        pinned = o.get("memory", "pageable") == "pinned"
        src = torch.randn(n)
        self.src = src.pin_memory() if pinned else src
        self.nb = pinned
        dst = self.src.to("cuda", non_blocking=self.nb)
        torch.cuda.synchronize()
        ok = torch.equal(dst.cpu(), src)
        self.check = {"ok": ok, "detail": "the copy equals its source" if ok else "the copy differs from its source"}

    def step(self):
        self.src.to("cuda", non_blocking=self.nb)


class MultiGpu(Work):
    def __init__(self, torch, device, p, o, variant):
        if device != "cuda" or torch.cuda.device_count() < 2:
            have = torch.cuda.device_count() if torch.cuda.is_available() else 0
            raise Skip(f"{variant} needs two or more GPUs ({have} visible)")
        if variant == "ddp":
            raise Skip("DistributedDataParallel runs one process per GPU (torchrun); this worker is one process")
        width, depth, batch = int(p["width"]), int(p["depth"]), int(p["batch"])
        self.torch = torch
        torch.manual_seed(0)
        model = models.mlp(torch, width, depth).cuda()
        self.model = torch.nn.DataParallel(model)
        self.opt = models.mlp_optimizer(torch, self.model)
        self.x = torch.randn(batch, width, device="cuda")
        self.y = torch.randint(0, 16, (batch,), device="cuda")
        self.loss_fn = torch.nn.CrossEntropyLoss()
        single = self.loss_fn(model(self.x), self.y).item()
        par = self.loss_fn(self.model(self.x), self.y).item()
        ok = abs(single - par) <= 1e-4 * abs(single)
        self.check = {"ok": ok, "detail": f"DataParallel's loss {par} against one GPU's {single}"}

    def step(self):
        self.opt.zero_grad(set_to_none=True)
        self.loss_fn(self.model(self.x), self.y).backward()
        self.opt.step()


def prepare(torch, req):
    w, device = req["workload"], req.get("device", "cpu")
    # Each case compiles afresh: the cases share Sequential.forward, and past Dynamo's recompile limit
    # a compiled call would silently run eager. Only where a case has loaded Dynamo (no import for
    # the cases that never compile).
    dynamo = sys.modules.get("torch._dynamo")
    if dynamo is not None:
        dynamo.reset()
    p, o, d = req.get("params", {}), req.get("options", {}), req.get("dir", ".")
    variant = req.get("variant", "")
    if device == "cuda" and not torch.cuda.is_available():
        raise Skip(f"torch {torch.__version__} sees no CUDA device (torch.cuda.is_available() is False)")
    if w == "op_chain":
        work = OpChain(torch, device, p, d)
    elif w == "loop_vs_vector":
        work = LoopVsVector(torch, device, p, o, variant, d)
    elif w in ("mlp_step", "mixed_precision", "loss_read"):
        work = MlpStep(torch, device, p, o, d)
    elif w == "transformer_step":
        work = TransformerStep(torch, device, p, o)
    elif w == "autograd_chain":
        work = AutogradChain(torch, device, p, d)
    elif w in ("matmul", "bmm"):
        work = Matmul(torch, device, p, o, d)
    elif w == "optimizer":
        work = OptimizerStep(torch, device, p, o, d)
    elif w == "dataloader":
        work = Loader(torch, device, p, o)
    elif w == "to_device":
        work = ToDevice(torch, device, p, o)
    elif w == "multi_gpu":
        work = MultiGpu(torch, device, p, o, variant)
    else:
        raise ValueError(f"unknown workload {w}")
    work.cuda = device == "cuda"
    return work


def timed(torch, work, reps):
    """Seconds of `reps` repetitions: the GPU drained before the first and after the last."""
    if work.cuda:
        torch.cuda.synchronize()
    step = work.step
    t0 = time.perf_counter()
    for _ in range(reps):
        step()
    if work.cuda:
        torch.cuda.synchronize()
    return time.perf_counter() - t0


def main():
    threads = 0
    if "--threads" in sys.argv:
        threads = int(sys.argv[sys.argv.index("--threads") + 1])
    out = protocol_out()

    def answer(obj):
        out.write(json.dumps(obj) + "\n")
        out.flush()

    h, torch = hello(threads)
    answer({"hello": h})
    work = None
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            req = json.loads(line)
            op = req.get("op")
            if op == "quit":
                break
            if torch is None:
                answer({"ok": False, "skip": "no torch: " + h["torch_error"]})
                continue
            if op == "prepare":
                work = None
                work = prepare(torch, req)
                answer({"ok": True, "check": work.check or {}, "info": work.info or {}})
            elif op == "run":
                if work is None:
                    raise ValueError("run before prepare")
                answer({"ok": True, "seconds": timed(torch, work, int(req["reps"]))})
            elif op == "stats":
                answer({"ok": True, "stats": work.stats() if work else {}})
            elif op == "release":
                work = None
                answer({"ok": True})
            else:
                raise ValueError(f"unknown op {op}")
        except Skip as e:
            work = None
            answer({"ok": False, "skip": str(e)})
        except Exception as e:  # the case fails with the reason; the worker serves the next
            work = None
            traceback.print_exc(file=sys.stderr)
            answer({"ok": False, "error": f"{type(e).__name__}: {e}"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
