"""Measure what a LLaMA-style block saves for backward under LoRA and QLoRA, on the CPU.

Run it with a separate interpreter that has torch (not a project dependency):

    /work/torchenv/bin/python calibration/lora_saved_cpu.py

A self-contained LLaMA decoder block (RMSNorm with the fp32 upcast transformers and LitGPT
use, rotary q/k, SDPA, gated SiLU MLP) in bf16, random weights, LoRA (dropout 0.05) on the
query and value projections. The base projections run four ways:

- full:         every weight trains (the full fine-tune the engine's formula describes);
- lora:         16-bit base weights frozen (F.linear: autograd saves the input only when
                the weight needs a gradient);
- qlora_legacy: frozen base through bitsandbytes' MatMul4Bit as it was up to 0.43.1,
                which kept `ctx.tensors = (A, B)` whenever any input needed a gradient, so
                every quantized projection kept its input alive for backward
                (bitsandbytes commit 9e75374, 2024-07-16, "fix QLoRA mem bug: delete
                useless buffered activation", first released in 0.43.2);
- qlora:        the same after that fix (`ctx.tensors = (None, B)`).

The weights stay bf16 in every variant: only what autograd keeps differs, which is what
this measures. Saved bytes = the storages autograd keeps for backward (saved_tensors_hooks),
each counted once by data_ptr, parameters left out; divided by tokens x layers.
Results go to calibration/data/lora_saved_cpu.json.
"""

from __future__ import annotations

import datetime as dt
import json
import platform
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

OUT = Path(__file__).resolve().parent / "data" / "lora_saved_cpu.json"
HIDDEN, HEADS, INTER, LAYERS, SEQ, RANK = 512, 8, 1408, 2, 256, 8
DTYPE = torch.bfloat16


class LegacyMatMul4Bit(torch.autograd.Function):
    """bitsandbytes <= 0.43.1 MatMul4Bit: saves the input A beside the (frozen) weight."""

    @staticmethod
    def forward(ctx, a: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(a, w)
        return F.linear(a, w)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):  # type: ignore[override]
        _, w = ctx.saved_tensors
        return grad @ w, None


class FixedMatMul4Bit(torch.autograd.Function):
    """bitsandbytes >= 0.43.2: only the weight is kept."""

    @staticmethod
    def forward(ctx, a: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(w)
        return F.linear(a, w)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):  # type: ignore[override]
        (w,) = ctx.saved_tensors
        return grad @ w, None


class Proj(nn.Module):
    def __init__(self, n_in: int, n_out: int, mode: str, lora: bool) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n_out, n_in, dtype=DTYPE) * 0.02)
        self.mode = mode
        self.weight.requires_grad_(mode == "full")
        self.lora = lora and mode != "full"
        if self.lora:
            self.a = nn.Parameter(torch.randn(RANK, n_in, dtype=DTYPE) * 0.02)
            self.b = nn.Parameter(torch.zeros(n_out, RANK, dtype=DTYPE))
            self.drop = nn.Dropout(0.05)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.mode == "qlora_legacy":
            y = LegacyMatMul4Bit.apply(x, self.weight)
        elif self.mode == "qlora":
            y = FixedMatMul4Bit.apply(x, self.weight)
        else:
            y = F.linear(x, self.weight)
        if self.lora:
            y = y + F.linear(F.linear(self.drop(x), self.a), self.b) * 2.0
        return y


class RMSNorm(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim, dtype=DTYPE), requires_grad=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x.float()
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6)
        return self.weight * h.to(x.dtype)


def rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    x1, x2 = x.chunk(2, dim=-1)
    return x * cos + torch.cat((-x2, x1), dim=-1) * sin


class Block(nn.Module):
    def __init__(self, mode: str) -> None:
        super().__init__()
        self.n1, self.n2 = RMSNorm(HIDDEN), RMSNorm(HIDDEN)
        self.q = Proj(HIDDEN, HIDDEN, mode, lora=True)
        self.k = Proj(HIDDEN, HIDDEN, mode, lora=False)
        self.v = Proj(HIDDEN, HIDDEN, mode, lora=True)
        self.o = Proj(HIDDEN, HIDDEN, mode, lora=False)
        self.gate = Proj(HIDDEN, INTER, mode, lora=False)
        self.up = Proj(HIDDEN, INTER, mode, lora=False)
        self.down = Proj(INTER, HIDDEN, mode, lora=False)
        if mode == "full":
            for norm in (self.n1, self.n2):
                norm.weight.requires_grad_(True)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        b, t, _ = x.shape
        h = self.n1(x)
        shape = (b, t, HEADS, HIDDEN // HEADS)
        q = rope(self.q(h).view(shape).transpose(1, 2), cos, sin)
        k = rope(self.k(h).view(shape).transpose(1, 2), cos, sin)
        v = self.v(h).view(shape).transpose(1, 2)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.o(a.transpose(1, 2).reshape(b, t, HIDDEN))
        h = self.n2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


def saved_bytes_per_token_layer(mode: str) -> float:
    torch.manual_seed(0)
    blocks = nn.ModuleList(Block(mode) for _ in range(LAYERS))
    params = {p.data_ptr() for p in blocks.parameters()}
    hd = HIDDEN // HEADS
    pos = torch.arange(SEQ, dtype=torch.float32)[:, None]
    freq = 1.0 / (10000 ** (torch.arange(0, hd, 2, dtype=torch.float32) / hd))
    ang = torch.cat((pos * freq, pos * freq), dim=-1)
    cos, sin = ang.cos().to(DTYPE), ang.sin().to(DTYPE)
    # The block input needs a gradient in every variant (the layer below, or PEFT's
    # enable_input_require_grads under LoRA); its own storage is the layer below's output.
    x = torch.randn(1, SEQ, HIDDEN, dtype=DTYPE, requires_grad=True)
    seen: dict[int, int] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        ptr = t.untyped_storage().data_ptr()
        if ptr not in params and ptr != x.untyped_storage().data_ptr():
            seen[ptr] = t.untyped_storage().nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        h = x
        for blk in blocks:
            h = blk(h, cos, sin)
    h.float().sum().backward()
    return sum(seen.values()) / (SEQ * LAYERS)


def main() -> None:
    results = {m: saved_bytes_per_token_layer(m) for m in ("full", "lora", "qlora_legacy", "qlora")}
    record = {
        "setup": {
            "hidden": HIDDEN,
            "heads": HEADS,
            "intermediate": INTER,
            "layers": LAYERS,
            "seq": SEQ,
            "lora_rank": RANK,
            "lora_targets": "q,v (dropout 0.05)",
            "dtype": "bf16",
            "torch": torch.__version__,
            "machine": platform.machine(),
            "date": dt.date.today().isoformat(),
        },
        "saved_bytes_per_token_layer": {m: round(v, 1) for m, v in results.items()},
        "in_units": {
            m: {"x_hidden": round(v / HIDDEN, 3), "x_intermediate": round(v / INTER, 3)}
            for m, v in results.items()
        },
    }
    OUT.write_text(json.dumps(record, indent=2) + "\n")
    print(json.dumps(record["saved_bytes_per_token_layer"], indent=2))


if __name__ == "__main__":
    main()
