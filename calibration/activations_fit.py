"""Fit and catalog figures from calibration/data/activations_cpu.json (no torch needed).

    python calibration/activations_fit.py

Prints, per measured model, the per-sample activation bytes the catalog keeps (saved for
backward per sample for classification / segmentation; peak of live storages per image
for detection, measured at batch 1 where anchors, proposals and losses are per image
too), scaled to the entry's reference input, and the power-law fit of the classification
models' per-sample bytes at 224x224 against their parameter count, which
advisor/data/classic_activations.toml [fallback] holds.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "activations_cpu.json"
DETECTION_REFERENCE = 1024  # catalog reference_input of detection entries (1024^2 px)
PAD = 32


def per_sample_bytes(rec: dict) -> float:
    if rec["task"] == "detection":
        return rec["peak_live_bytes"] / rec["batch"]
    return rec["saved_bytes"] / rec["batch"]


def at_reference(rec: dict) -> tuple[float, int]:
    """(bytes per sample, reference side): detection figures per 1024^2 padded pixels."""
    if rec["task"] != "detection":
        return per_sample_bytes(rec), rec["input"][0]
    if "reference_input" in rec:  # square inputs at the family's own reference (YOLO 640)
        return per_sample_bytes(rec), rec["reference_input"]
    h, w = (math.ceil(side / PAD) * PAD for side in rec["input"])
    return per_sample_bytes(rec) * DETECTION_REFERENCE**2 / (h * w), DETECTION_REFERENCE


def power_fit(points: list[tuple[float, float]]) -> tuple[float, float, float]:
    """Least squares of log(bytes) on log(params in millions): (coef, exponent, the
    geometric standard deviation of the residuals)."""
    xs = [math.log(p) for p, _ in points]
    ys = [math.log(b) for _, b in points]
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mx) ** 2 for x in xs
    )
    intercept = my - slope * mx
    resid = [y - (intercept + slope * x) for x, y in zip(xs, ys, strict=True)]
    spread = math.exp(math.sqrt(sum(r * r for r in resid) / (n - 2)))
    return math.exp(intercept), slope, spread


def main() -> None:
    raw = json.loads(DATA.read_text())
    print("setup:", raw["setup"])
    points = []
    for name, rec in raw["models"].items():
        value, ref = at_reference(rec)
        print(
            f"{name:36s} {rec['task']:14s} params {rec['params'] / 1e6:6.1f}M  "
            f"{value / 1e6:7.0f} MB per sample at {ref}^2  (peak/saved "
            f"{rec['peak_live_bytes'] / rec['saved_bytes']:.2f})"
        )
        if rec["task"] == "classification":
            points.append((rec["params"] / 1e6, value))
    coef, exponent, spread = power_fit(points)
    print(
        f"fallback fit over {len(points)} classification models: bytes per 224^2 sample = "
        f"{coef:.4g} x (params / 1e6) ^ {exponent:.3f}; residual spread x{spread:.2f}"
    )


if __name__ == "__main__":
    main()
