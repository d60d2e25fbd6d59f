"""What OpenMMLab's Swish keeps for backward beyond torch's SiLU, in EfficientNet.

Run it with the calibration interpreter (calibration/requirements.txt):

    /work/torchenv/bin/python calibration/mmcv_swish_cpu.py

The catalog's EfficientNet figures are torchvision's models, whose activations are
`nn.SiLU`: autograd keeps the input alone. OpenMMLab builds EfficientNet's activations from
`act_cfg=dict(type='Swish')` (mmpretrain/models/backbones/efficientnet.py, the same in
mmcls 0.x; mmdet's EfficientDet backbone alike), and mmcv's Swish
(mmcv/cnn/bricks/swish.py) is `x * torch.sigmoid(x)`: the product keeps both of its inputs,
so the sigmoid's output is kept beside the input. Each model is run as calibration/
activations_cpu.py runs the catalog's (one fp32 training step at 224x224, batch 2, on the
CPU), once as built and once with every nn.SiLU swapped for that Swish; the ratio of their
saved-for-backward bytes is what the engine multiplies under an OpenMMLab stack.

Results go to calibration/data/mmcv_swish_cpu.json.
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path

import torch
import torchvision
from torch import nn

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import activations_cpu as cal  # noqa: E402

OUT = HERE / "data" / "mmcv_swish_cpu.json"
SIZE, BATCH = 224, 2


class Swish(nn.Module):
    """mmcv/cnn/bricks/swish.py Swish.forward."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(x)


def swap_silu(module: nn.Module) -> nn.Module:
    for name, child in module.named_children():
        if isinstance(child, nn.SiLU):
            setattr(module, name, Swish())
        else:
            swap_silu(child)
    return module


def measure(name: str, swish: bool) -> dict:
    model = torchvision.models.get_model(name, weights=None).train()
    if swish:
        swap_silu(model)
    return cal.classifier_step(model, SIZE, BATCH)


def main() -> None:
    torch.manual_seed(0)
    torch.set_num_threads(2)
    results = {}
    for name in ("efficientnet_b0", "efficientnet_b3", "efficientnet_b7"):
        silu, swish = measure(name, False), measure(name, True)
        results[name] = {
            "silu": silu,
            "mmcv_swish": swish,
            "saved_ratio": round(swish["saved_bytes"] / silu["saved_bytes"], 3),
        }
        print(name, results[name]["saved_ratio"], flush=True)
    setup = {
        "torch": torch.__version__,
        "torchvision": torchvision.__version__,
        "device": "cpu",
        "dtype": "fp32",
        "input": [SIZE, SIZE],
        "batch": BATCH,
        "date": dt.date.today().isoformat(),
        "script": "calibration/mmcv_swish_cpu.py",
    }
    OUT.write_text(json.dumps({"setup": setup, "models": results}, indent=1) + "\n")


if __name__ == "__main__":
    main()
