"""How much more a ResNet keeps for backward when it is the CIFAR variant, at CIFAR's 32 px.

Run it with the calibration interpreter (calibration/requirements.txt):

    /work/torchenv/bin/python calibration/cifar_stem_cpu.py

The catalog's ResNet figures are torchvision's ImageNet ResNets (7x7 stride-2 stem and a
stride-2 max-pool: the first stage works at a quarter of the input's side), scaled by the
input area. The CIFAR recipes train another stem: mmpretrain's ResNet_CIFAR
(mmpretrain/models/backbones/resnet_cifar.py: "the first conv layer is a 3x3 conv with
stride 1 and no max-pooling", used by configs/_base_/models/resnet18_cifar.py,
resnet34_cifar.py, resnet50_cifar.py ...), so every stage works at four times the side.
Both variants are built from torchvision's ResNet (the CIFAR one with conv1 a 3x3 stride-1
conv and maxpool an identity, ten classes) and run one training step at 32x32, fp32, on the
CPU, at two batches: the CIFAR variant's peak of live storages per sample is the slope
between them (what grows with the batch; the backward's weight-sized transients do not),
the figure the engine's term sizes a sample with; the saved-for-backward ratio of the two
variants is kept beside it as a check.

Results go to calibration/data/cifar_stem_cpu.json.
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

OUT = HERE / "data" / "cifar_stem_cpu.json"
SIZE, BATCHES = 32, (16, 64)


def resnet(name: str, cifar: bool) -> nn.Module:
    model = torchvision.models.get_model(name, weights=None, num_classes=10)
    if cifar:  # mmpretrain ResNet_CIFAR: conv1 3x3 stride 1 padding 1, no max-pool
        model.conv1 = nn.Conv2d(3, 64, kernel_size=3, stride=1, padding=1, bias=False)
        model.maxpool = nn.Identity()
    return model.train()


def measure(name: str, cifar: bool, batch: int) -> dict:
    return cal.classifier_step(resnet(name, cifar), SIZE, batch, classes=10)


def main() -> None:
    torch.manual_seed(0)
    torch.set_num_threads(2)
    results = {}
    for name in ("resnet18", "resnet34", "resnet50", "resnet101"):
        small, large = BATCHES
        imagenet = measure(name, False, small)
        cifar = {b: measure(name, True, b) for b in BATCHES}
        slope = (cifar[large]["peak_live_bytes"] - cifar[small]["peak_live_bytes"]) / (
            large - small
        )
        results[name] = {
            "imagenet_stem": imagenet,
            "cifar_stem": {str(b): r for b, r in cifar.items()},
            "saved_ratio": round(cifar[small]["saved_bytes"] / imagenet["saved_bytes"], 3),
            "cifar_peak_bytes_per_sample": round(slope),
        }
        print(name, results[name]["saved_ratio"], round(slope / 1e6, 2), "MB/sample", flush=True)
    setup = {
        "torch": torch.__version__,
        "torchvision": torchvision.__version__,
        "device": "cpu",
        "dtype": "fp32",
        "input": [SIZE, SIZE],
        "batches": list(BATCHES),
        "date": dt.date.today().isoformat(),
        "script": "calibration/cifar_stem_cpu.py",
    }
    OUT.write_text(json.dumps({"setup": setup, "models": results}, indent=1) + "\n")


if __name__ == "__main__":
    main()
