"""Inputs that are not text but become decoder tokens: images for vision-language models
(patches merged into tokens), audio for Whisper (encoder frames the decoder cross-attends
to). Geometry per model in data/models/vision_language.toml [vision.<id>] and
data/models/speech.toml [speech.<id>]."""

from __future__ import annotations

import math
import tomllib
from functools import cache
from typing import Any

from advisor.catalog import DATA_DIR
from advisor.memory.terms import Breakdown
from advisor.models.workload import Workload


@cache
def _tables() -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for name, table in (("vision_language.toml", "vision"), ("speech.toml", "speech")):
        with (DATA_DIR / "models" / name).open("rb") as fh:
            for model_id, row in tomllib.load(fh).get(table, {}).items():
                out[model_id] = {"kind": table, **row}
    return out


def image_tokens(row: dict[str, Any], width: int, height: int) -> int:
    """Qwen2.5-VL: one token per (patch x merge)^2 pixels; LLaVA-1.5: a fixed grid."""
    if row.get("fixed_tokens"):
        return int(row["fixed_tokens"])
    side = row["patch"] * row["merge"]
    return math.ceil(width / side) * math.ceil(height / side)


def encoder_frames(model_id: str | None) -> int:
    """Audio frames an encoder-decoder speech model (Whisper) takes in its encoder: counted
    among the prompt's tokens for their cross-attention cache, never decoder positions
    (no logits over them; data/runtimes.toml [transformers] encoder_frames_logits_source)."""
    row = _tables().get(model_id or "")
    return int(row["encoder_frames"]) if row is not None and row["kind"] == "speech" else 0


def encoder_layers(model_id: str | None) -> int:
    """Layers a speech model's encoder runs where they differ from its decoder's (the
    turbo model's 32 over a 4-layer decoder); 0 where the catalog's layer count holds."""
    row = _tables().get(model_id or "")
    return int(row.get("encoder_layers", 0)) if row is not None and row["kind"] == "speech" else 0


def extra_prompt_tokens(model_id: str | None, w: Workload, acc: Breakdown) -> int:
    """Tokens the non-text inputs add to every sequence's prompt (0 for text models)."""
    row = _tables().get(model_id or "")
    if row is None:
        return 0
    if row["kind"] == "speech":
        frames = int(row["encoder_frames"])
        # The decoder's own prompt is a few tokens (Whisper's decoder holds 448 at most,
        # max_target_positions): a prompt stated as long as the encoder's frames is those
        # frames, and they are counted once.
        if (w.prompt_tokens or 0) >= frames:
            return 0
        return frames
    images = w.images_per_prompt or 1
    if w.images_per_prompt is None:
        acc.assume("images", 1)
    width = w.image_width or row["default_image"]
    height = w.image_height or width
    if w.image_width is None:
        acc.assume("resolution", f"{width}x{height}")
    return images * image_tokens(row, width, height)
