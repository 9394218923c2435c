"""The PyTorch definitions of gtb's models, one of each: the train family's MLP and the transformer
family's block stack. The framework family's worker and the yardstick scripts (bench/train,
bench/transformer) build their models from here."""
import math


def mlp(torch, width, depth, classes=16, gelu=False, input_dim=None):
    """gtb's MLP: input (= width unless given), `depth` Linear layers (width ... width -> classes),
    ReLU (GELU, tanh form, with gelu=True) between them; the loss is softmax cross-entropy."""
    nn = torch.nn
    dims = [input_dim or width] + [width] * (depth - 1) + [classes]
    layers = []
    for i in range(depth):
        layers.append(nn.Linear(dims[i], dims[i + 1]))
        if i + 1 < depth:
            layers.append(nn.GELU(approximate="tanh") if gelu else nn.ReLU())
    return nn.Sequential(*layers)


def mlp_optimizer(torch, model, adam=False):
    """gtb's optimizers: SGD with momentum 0.9 and lr 0.05, or Adam with lr 1e-3."""
    if adam:
        return torch.optim.Adam(model.parameters(), lr=1e-3)
    return torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)


def transformer(torch, layers, d, heads, fused):
    """gtb's block stack: `layers` pre-LN decoder blocks of width d with `heads` heads (LayerNorm ->
    Linear(d, 3d) -> causal multi-head attention -> Linear(d, d) -> residual -> LayerNorm ->
    Linear(d, 4d) -> GELU(tanh) -> Linear(4d, d) -> residual). Attention written out (gtb's
    "materialised") or F.scaled_dot_product_attention (gtb's "fused", where this PyTorch has it)."""
    nn, F = torch.nn, torch.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

        def attention(self, x):
            b, s, _ = x.shape
            q, k, v = self.qkv(x).view(b, s, 3, heads, d // heads).permute(2, 0, 3, 1, 4)
            if fused:
                o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            else:
                scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d // heads))
                mask = torch.ones(s, s, dtype=torch.bool, device=x.device).triu(1)
                o = scores.masked_fill(mask, float("-inf")).softmax(-1) @ v
            return self.proj(o.transpose(1, 2).reshape(b, s, d))

        def forward(self, x):
            x = x + self.attention(self.ln1(x))
            return x + self.fc2(F.gelu(self.fc1(self.ln2(x)), approximate="tanh"))

    return nn.Sequential(*[Block() for _ in range(layers)])


def transformer_loss(torch, model, x, t):
    """gtb's loss of the block stack: 0.5 * mean((y - t)^2), in FP32 under autocast."""
    y = model(x)
    if y.dtype != t.dtype:
        y = y.to(t.dtype)
    return 0.5 * ((y - t) ** 2).mean()


def transformer_optimizer(torch, model):
    """gtb's optimizer of the block stack: AdamW, lr 1e-3, weight decay 0.01."""
    return torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
