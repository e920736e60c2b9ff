#!/usr/bin/env python3
"""The model and optimiser of workloads/gpt/train.cpp in PyTorch, on the CPU.

For the speed comparison in bench/gpt (see README.md): the same GPT (token
embedding, RMSNorm with gains, QK-norm, RoPE, causal attention, ReLU^2 MLP,
untied head), the same Muon (Nesterov momentum, quintic Newton-Schulz; the
qkv matrix as three blocks) and AdamW groups, the same batch of random
windows of the same data. The sizes and learning rates are read from the
constants at the top of train.cpp, so the two programs cannot drift apart.
Prints the training throughput in tokens per second.

    python3 torch_gpt.py --train-cpp workloads/gpt/train.cpp --data data/train.bin \
        --threads 2 --seconds 20
"""
import argparse
import math
import re
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB = 256


def read_constants(path):
    """`constexpr TYPE NAME = VALUE;` lines of train.cpp as a dict."""
    out = {}
    for m in re.finditer(r"^constexpr (int|double) (\w+) = ([^;]+);", open(path).read(), re.M):
        kind, name, value = m.groups()
        out[name] = int(value) if kind == "int" else float(value)
    return out


class RMSNorm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight


def rope(x, cos, sin):
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)


class Block(nn.Module):
    def __init__(self, c, heads, hidden):
        super().__init__()
        self.heads, self.head_dim = heads, c // heads
        self.attn_norm = RMSNorm(c)
        self.wqkv = nn.Linear(c, 3 * c, bias=False)
        self.q_norm = RMSNorm(self.head_dim)
        self.k_norm = RMSNorm(self.head_dim)
        self.wo = nn.Linear(c, c, bias=False)
        self.mlp_norm = RMSNorm(c)
        self.w1 = nn.Linear(c, hidden, bias=False)
        self.w2 = nn.Linear(hidden, c, bias=False)
        nn.init.zeros_(self.wo.weight)
        nn.init.zeros_(self.w2.weight)

    def forward(self, x, cos, sin, mask):
        B, T, C = x.shape
        q, k, v = self.wqkv(self.attn_norm(x)).split(C, dim=-1)
        shape = (B, T, self.heads, self.head_dim)
        q = rope(self.q_norm(q.view(shape)).transpose(1, 2), cos, sin)
        k = rope(self.k_norm(k.view(shape)).transpose(1, 2), cos, sin)
        v = v.view(shape).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(self.head_dim))
        att = att.masked_fill(mask, float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, C)
        x = x + self.wo(y)
        return x + self.w2(F.relu(self.w1(self.mlp_norm(x))).square())


class GPT(nn.Module):
    def __init__(self, k):
        super().__init__()
        c, heads, t = k["WIDTH"], k["HEADS"], k["CONTEXT"]
        self.embed = nn.Embedding(VOCAB, c)
        self.blocks = nn.ModuleList(Block(c, heads, k["MLP_MULT"] * c) for _ in range(k["DEPTH"]))
        self.final_norm = RMSNorm(c)
        self.head = nn.Linear(c, VOCAB, bias=False)
        nn.init.zeros_(self.head.weight)
        d = c // heads
        angle = torch.arange(t)[:, None] * k["ROPE_BASE"] ** (-2.0 * torch.arange(d // 2) / d)
        self.register_buffer("cos", torch.cos(angle))
        self.register_buffer("sin", torch.sin(angle))
        self.register_buffer("mask", torch.triu(torch.ones(t, t, dtype=torch.bool), 1))

    def forward(self, idx, targets):
        x = self.embed(idx)
        for block in self.blocks:
            x = block(x, self.cos, self.sin, self.mask)
        logits = self.head(self.final_norm(x))
        return F.cross_entropy(logits.view(-1, VOCAB), targets.view(-1))


def newton_schulz(g, steps):
    a, b, c = 3.4445, -4.7750, 2.0315
    x = g / (g.norm() + 1e-7)
    tall = x.shape[0] > x.shape[1]
    if tall:
        x = x.T
    for _ in range(steps):
        A = x @ x.T
        x = a * x + (b * A + c * A @ A) @ x
    return x.T if tall else x


class Muon:
    """Muon as train.cpp has it: m = beta m + g; update = NS(g + beta m)."""

    def __init__(self, params, lr, momentum, steps):
        self.blocks = []
        for p in params:
            n = 3 if p.shape[0] == 3 * p.shape[1] else 1
            self.blocks += [(p, i, n) for i in range(n)]
        self.buffers = [torch.zeros_like(p.data.chunk(n)[i]) for p, i, n in self.blocks]
        self.lr, self.momentum, self.steps = lr, momentum, steps

    @torch.no_grad()
    def step(self, lr_mult):
        for (p, i, n), m in zip(self.blocks, self.buffers):
            g = p.grad.chunk(n)[i]
            m.mul_(self.momentum).add_(g)
            u = newton_schulz(g + self.momentum * m, self.steps)
            scale = max(1.0, u.shape[0] / u.shape[1]) ** 0.5
            p.data.chunk(n)[i].sub_(self.lr * lr_mult * scale * u)


def flops_per_token(k):
    c, f, t, depth = k["WIDTH"], k["MLP_MULT"] * k["WIDTH"], k["CONTEXT"], k["DEPTH"]
    weights = depth * (3 * c * c + c * c + 2 * f * c) + VOCAB * c
    return 6 * weights + 6.0 * depth * c * (t + 1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--train-cpp", required=True)
    ap.add_argument("--data", required=True, help="train.bin of a prepared data directory")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                    help="cpu: process CPU time / threads, like train.cpp's GPT_CLOCK=cpu")
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    k = read_constants(args.train_cpp)
    data = torch.from_numpy(np.fromfile(args.data, dtype=np.uint8).astype(np.int64))
    B, T = k["BATCH"], k["CONTEXT"]
    model = GPT(k)
    matrices = [p for n, p in model.named_parameters() if p.dim() == 2 and n.startswith("blocks")]
    gains = [p for n, p in model.named_parameters() if p.dim() == 1]
    muon = Muon(matrices, k["MATRIX_LR"], k["MUON_MOMENTUM"], k["NS_STEPS"])
    adamw = torch.optim.AdamW(
        [
            {"params": [model.embed.weight], "lr": k["EMBED_LR"], "weight_decay": k["WEIGHT_DECAY"]},
            {"params": [model.head.weight], "lr": k["HEAD_LR"], "weight_decay": k["WEIGHT_DECAY"]},
            {"params": gains, "lr": k["GAIN_LR"], "weight_decay": 0.0},
        ],
        betas=(k["ADAM_BETA1"], k["ADAM_BETA2"]),
        eps=1e-8,
    )
    base_lrs = [g["lr"] for g in adamw.param_groups]

    def step(lr_mult):
        at = torch.randint(0, len(data) - T - 1, (B,))
        x = torch.stack([data[i : i + T] for i in at])
        y = torch.stack([data[i + 1 : i + T + 1] for i in at])
        loss = model(x, y)
        model.zero_grad(set_to_none=True)
        loss.backward()
        for g, lr in zip(adamw.param_groups, base_lrs):
            g["lr"] = lr * lr_mult
        adamw.step()
        muon.step(lr_mult)
        return loss.item()

    if args.clock == "cpu":
        clock = lambda: time.process_time() / args.threads  # noqa: E731
    else:
        clock = time.perf_counter
    for _ in range(args.warmup):
        step(0.1)
    start, steps, first = clock(), 0, None
    while clock() - start < args.seconds:
        loss = step(1.0)
        first = loss if first is None else first
        steps += 1
    elapsed = clock() - start
    tokens = steps * B * T
    print(
        f"torch: {tokens / elapsed:.0f} tokens/s, {flops_per_token(k) * tokens / elapsed * 1e-9:.1f} "
        f"GFLOP/s, {steps} steps in {elapsed:.1f} s ({args.clock} clock), "
        f"threads {torch.get_num_threads()}, "
        f"loss {first:.3f} -> {loss:.3f}"
    )


if __name__ == "__main__":
    main()
