#!/usr/bin/env python3
"""PyTorch's eager CPU training step on gtb's transformer block stack, the yardstick for "the CPU step is
at least as fast as a mainstream framework's on the same model, tokens and threads".

The model is gtb's: `layers` pre-LN decoder blocks of width d_model with `heads` heads (LayerNorm ->
Linear(d, 3d) -> causal multi-head attention -> Linear(d, d) -> residual -> LayerNorm -> Linear(d, 4d)
-> GELU(tanh) -> Linear(4d, d) -> residual), loss 0.5 * mean((y - target)^2), AdamW (lr 1e-3, weight
decay 0.01). Attention is written out (scores, mask, softmax, weighted sum: gtb's "materialised") or
F.scaled_dot_product_attention(is_causal=True) (PyTorch's fused CPU kernel: gtb's "fused"). bf16 is
torch.autocast("cpu", dtype=torch.bfloat16) with FP32 master weights, as gtb's. The step is zero_grad +
forward + backward + optimizer step, timed with time.perf_counter after warm-up; the median over
samples is printed as tokens/s beside gtb's figure for the same configuration.

usage: torch-cpu-step.py [--threads N] [--gtb RESULTS.json] [layers,d_model,heads,seq_len,batch,precision,attention ...]
       torch-cpu-step.py --check    (correctness only, float64, a tiny model: exit 0 when it holds, 77 without torch)
"""
import os
import sys

# The one definition of gtb's models in PyTorch (the framework family's worker builds them too), and
# the timing and results reading the yardsticks share.
_KERNELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "kernels")
sys.path.insert(0, os.path.join(_KERNELS, "framework"))
sys.path.insert(0, os.path.join(_KERNELS, "common"))
import models  # noqa: E402
import torch_yardstick  # noqa: E402

# The configurations of gtb's quick transformer suite (configs and seq_sweep).
# (The full suite's configs are 2,256,4,256,4 and 2,384,6,256,4 beside the small one: pass them.)
DEFAULT = ["2,128,4,128,4,fp32,fused", "2,256,4,128,4,fp32,fused", "2,320,5,128,4,fp32,fused",
           "2,128,4,128,4,bf16,fused", "2,256,4,128,4,bf16,fused", "2,320,5,128,4,bf16,fused",
           "2,128,4,128,4,fp32,materialised", "2,128,4,512,1,fp32,materialised",
           "2,128,4,512,1,fp32,fused"]


def build(torch, layers, d, heads, fused):
    return models.transformer(torch, layers, d, heads, fused)


def loss_of(torch, model, x, t):
    return models.transformer_loss(torch, model, x, t)


def median_step_s(torch, layers, d, heads, seq, batch, bf16, fused, samples=7):
    torch.manual_seed(0)
    model = build(torch, layers, d, heads, fused)
    opt = models.transformer_optimizer(torch, model)
    x, t = torch.randn(batch, seq, d), torch.randn(batch, seq, d)

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            loss = loss_of(torch, model, x, t)
        loss.backward()
        opt.step()

    return torch_yardstick.median_step_s(step, samples, warmup_s=0.3)


def gtb_key(r):
    p, o = r["params"], r["options"]
    return (p["layers"], p["d_model"], p["heads"], p["seq_len"], p["batch"], o.get("precision", "fp32"), r["variant"])


def check():
    """The yardstick computes gtb's workload: causal, the stated loss, both attentions equal, gradients right."""
    try:
        import torch
    except ImportError:
        print("SKIPPED: torch is not installed")
        return 77
    torch.set_default_dtype(torch.float64)
    torch.manual_seed(1)
    layers, d, heads, seq, batch = 2, 16, 2, 7, 2
    x, t = torch.randn(batch, seq, d), torch.randn(batch, seq, d)
    mat = build(torch, layers, d, heads, False)
    bad = []
    la = loss_of(torch, mat, x, t)
    ga = torch.autograd.grad(la, list(mat.parameters()))
    # PyTorch before 2.0 has no fused attention: the materialised checks below still hold.
    if hasattr(torch.nn.functional, "scaled_dot_product_attention"):
        fus = build(torch, layers, d, heads, True)
        fus.load_state_dict(mat.state_dict())
        lb = loss_of(torch, fus, x, t)
        if abs(la.item() - lb.item()) > 1e-12 * abs(la.item()):
            bad.append(f"materialised and fused losses differ: {la.item()} vs {lb.item()}")
        gb = torch.autograd.grad(lb, list(fus.parameters()))
        worst = max(((a - b).norm() / b.norm().clamp_min(1e-300)).item() for a, b in zip(ga, gb))
        if worst > 1e-10:
            bad.append(f"materialised and fused gradients differ (relative norm {worst})")
    else:
        print(f"torch {torch.__version__} has no F.scaled_dot_product_attention: fused attention not checked")
    y = mat(x)
    if abs(la.item() - 0.5 * ((y - t) ** 2).sum().item() / y.numel()) > 1e-12:
        bad.append("the loss is not 0.5 * mean((y - t)^2)")
    x2 = x.clone()
    x2[:, -1] += 1.0  # the last token cannot change any earlier output (causal)
    if (mat(x2)[:, :-1] - y[:, :-1]).abs().max().item() > 1e-12:
        bad.append("attention is not causal: the last token changed earlier outputs")
    w = mat[0].fc1.weight
    i = (3, 5)
    g = ga[[n for n, _ in mat.named_parameters()].index("0.fc1.weight")][i].item()
    with torch.no_grad():
        w[i] += 1e-6
        up = loss_of(torch, mat, x, t).item()
        w[i] -= 2e-6
        dn = loss_of(torch, mat, x, t).item()
        w[i] += 1e-6
    if abs((up - dn) / 2e-6 - g) > 1e-7 + 1e-5 * abs(g):
        bad.append(f"autograd gradient {g} vs finite difference {(up - dn) / 2e-6}")
    for b in bad:
        print("FAIL:", b)
    print(f"torch {torch.__version__}: yardstick check {'failed' if bad else 'passed'}")
    return 1 if bad else 0


def main():
    ap = torch_yardstick.parser("transformer", DEFAULT)
    ap.add_argument("--check", action="store_true", help="correctness only (float64, tiny model)")
    a = ap.parse_args()
    if a.check:
        return check()
    import torch
    gtb = torch_yardstick.start(torch, a, "transformer", gtb_key, "tokens")
    for c in a.configs:
        f = c.split(",")
        layers, d, heads, seq, batch = (int(v) for v in f[:5])
        prec, attn = f[5], f[6]
        rate = seq * batch / median_step_s(torch, layers, d, heads, seq, batch, prec == "bf16", attn == "fused")
        ours = gtb.get((layers, d, heads, seq, batch, prec, attn))
        print(f"  layers {layers} d_model {d:5d} heads {heads:2d} seq_len {seq:5d} batch {batch:3d} {prec} {attn:12s}: "
              + torch_yardstick.beside(rate, ours, 10))
    return 0


if __name__ == "__main__":
    sys.exit(main())
