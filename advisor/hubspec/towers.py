"""Vision and audio towers counted from config.json alone (`vision_config`, `audio_config`):
a composite model's language model is only part of its weights (6-14% of them are a tower
in Qwen2-VL, Pixtral-based and Qwen2-Audio checkpoints). Transformer encoder blocks of the
tower's width, its patch or mel stem, and the projector into the language model's width.
Sources: transformers 4.57 modeling_{clip,siglip,pixtral,qwen2_vl,whisper,qwen2_audio}.py.
"""

from __future__ import annotations

from typing import Any

from advisor.hubspec.keys import vocabulary


def _first(config: dict[str, Any], field: str) -> int:
    for key in vocabulary()["towers"][field]:
        value = config.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return int(value)
    return 0


def _encoder_blocks(tower: dict[str, Any], width: int, layers: int, family: str = "") -> int:
    """`family`: the whole model's model_type, for a tower config that names none (a
    Qwen2.5-VL vision_config copied without its own "model_type" is still gated)."""
    inter = _first(tower, "intermediate") or int(float(tower.get("mlp_ratio") or 4) * width)
    kind = str(tower.get("model_type") or family).lower()
    gated = kind in vocabulary()["towers"]["gated_types"]
    mlp = (3 if gated else 2) * width * inter + inter + width  # with the biases CLIP keeps
    return layers * (4 * width * width + 4 * width + mlp + 4 * width)


def vision_params(tower: dict[str, Any], text_hidden: int, family: str = "") -> int:
    width, layers = _first(tower, "width"), _first(tower, "layers")
    if not (width and layers):
        return 0
    patch = int(tower.get("patch_size") or 14)
    channels = int(
        tower.get("num_channels") or tower.get("in_chans") or tower.get("in_channels") or 3
    )
    stem = channels * patch * patch * int(tower.get("temporal_patch_size") or 1) * width
    merge = int(tower.get("spatial_merge_size") or 1)
    projector = width * merge * merge * text_hidden + text_hidden * text_hidden
    return _encoder_blocks(tower, width, layers, family) + stem + projector


def audio_params(tower: dict[str, Any], text_hidden: int) -> int:
    width, layers = _first(tower, "width"), _first(tower, "layers")
    if not (width and layers):
        return 0
    mels = int(tower.get("num_mel_bins") or 80)
    stem = 3 * mels * width + 3 * width * width  # Whisper's two conv1d, kernel 3
    positions = int(tower.get("max_source_positions") or 1500) * width
    return _encoder_blocks(tower, width, layers) + stem + positions + width * text_hidden


def tower_params(config: dict[str, Any], text_hidden: int) -> tuple[int, int]:
    """(vision, audio) parameters of the towers a config.json describes beside its LM."""
    v = a = 0
    for key in vocabulary()["towers"]["vision"]:
        if isinstance(config.get(key), dict):
            v = vision_params(config[key], text_hidden, str(config.get("model_type") or ""))
    for key in vocabulary()["towers"]["audio"]:
        if isinstance(config.get(key), dict):
            a = audio_params(config[key], text_hidden)
    return v, a
