"""Measure a diffusion denoiser's inference working set on the CPU.

Run it with a separate interpreter that has torch and diffusers (they are not project
dependencies):

    python3 -m venv /tmp/dtorch && /tmp/dtorch/bin/pip install torch diffusers
    /tmp/dtorch/bin/python calibration/diffusion_inference_cpu.py [--size 1024] [--batch 2]

The SDXL UNet is built from stabilityai/stable-diffusion-xl-base-1.0 unet/config.json (the
fields that differ from UNet2DConditionModel's defaults), with random weights in bf16, and
runs one denoiser call under torch.no_grad() at the batch the pipeline runs (2: the
conditional and unconditional halves of classifier-free guidance) with PyTorch SDPA. The
figure is the peak of the storages created during the call (a TorchDispatchMode that
registers every op's output storage and a finalizer for its release): what a GPU allocator
holds beside the weights while the UNet runs. Kernel workspaces (cuDNN) are not seen; the
estimate's allocator slack covers them.

Results go to calibration/data/diffusion_inference_cpu.json (one record per run).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import time
import weakref
from pathlib import Path

import diffusers
import torch
from diffusers import UNet2DConditionModel
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

OUT = Path(__file__).resolve().parent / "data" / "diffusion_inference_cpu.json"

# stabilityai/stable-diffusion-xl-base-1.0 unet/config.json, read 2026-12-07.
SDXL_UNET = {
    "sample_size": 128,
    "in_channels": 4,
    "out_channels": 4,
    "down_block_types": ["DownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D"],
    "up_block_types": ["CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "UpBlock2D"],
    "block_out_channels": [320, 640, 1280],
    "layers_per_block": 2,
    "transformer_layers_per_block": [1, 2, 10],
    "attention_head_dim": [5, 10, 20],
    "cross_attention_dim": 2048,
    "use_linear_projection": True,
    "addition_embed_type": "text_time",
    "addition_time_embed_dim": 256,
    "projection_class_embeddings_input_dim": 2816,
    "norm_num_groups": 32,
}


class LiveStorages(TorchDispatchMode):
    """Every storage an op creates and when it is released, replayed for the peak."""

    def __init__(self, exclude: set[int]) -> None:
        super().__init__()
        self.exclude = exclude  # the weights' storages: views of them (aten.t) are no new memory
        self.live: dict[int, int] = {}
        self.current = 0
        self.peak = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
        out = func(*args, **(kwargs or {}))
        for t in tree_flatten(out)[0]:
            if isinstance(t, torch.Tensor):
                self._track(t)
        return out

    def _track(self, t: torch.Tensor) -> None:
        storage = t.untyped_storage()
        key, size = storage.data_ptr(), storage.nbytes()
        if size == 0 or key in self.live or key in self.exclude:
            return
        self.live[key] = size
        self.current += size
        self.peak = max(self.peak, self.current)
        weakref.finalize(storage, self._release, key, size)

    def _release(self, key: int, size: int) -> None:
        if self.live.pop(key, None) is not None:
            self.current -= size


def sdxl_unet_pass(size: int, batch: int) -> dict:
    torch.manual_seed(0)
    unet = UNet2DConditionModel(**SDXL_UNET).to(torch.bfloat16).eval()
    params = sum(p.numel() for p in unet.parameters())
    latent = size // 8
    x = torch.randn(batch, 4, latent, latent, dtype=torch.bfloat16)
    text = torch.randn(batch, 77, 2048, dtype=torch.bfloat16)
    cond = {
        "text_embeds": torch.randn(batch, 1280, dtype=torch.bfloat16),
        "time_ids": torch.tensor([[size, size, 0, 0, size, size]] * batch, dtype=torch.bfloat16),
    }
    t = torch.tensor(500)
    weights = {t.untyped_storage().data_ptr() for t in [*unet.parameters(), *unet.buffers()]}
    tracker = LiveStorages(weights)
    start = time.perf_counter()
    with torch.no_grad(), tracker:
        out = unet(x, t, encoder_hidden_states=text, added_cond_kwargs=cond).sample
    seconds = time.perf_counter() - start
    assert out.shape == x.shape
    tokens = batch * (latent // 2) ** 2  # the attention tokens (latent / 4), as the catalog
    return {
        "model": "sdxl-unet",
        "size": size,
        "batch": batch,
        "params": params,
        "peak_live_bytes": tracker.peak,
        "bytes_per_attention_token": round(tracker.peak / tokens),
        "seconds": round(seconds, 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, nargs="+", default=[1024])
    ap.add_argument("--batch", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(2)
    records = json.loads(OUT.read_text()) if OUT.exists() else []
    for size in args.size:
        r = sdxl_unet_pass(size, args.batch)
        r.update(
            torch=torch.__version__,
            diffusers=diffusers.__version__,
            machine=platform.machine(),
            date=dt.date.today().isoformat(),
        )
        print(json.dumps(r))
        records = [
            x
            for x in records
            if (x["model"], x["size"], x["batch"]) != (r["model"], size, args.batch)
        ]
        records.append(r)
    OUT.write_text(json.dumps(records, indent=1) + "\n")


if __name__ == "__main__":
    main()
