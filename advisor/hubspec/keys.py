"""How a published config.json names things: the key vocabulary (advisor/data/hub_config.toml)
and the readers every part of advisor/hubspec shares."""

from __future__ import annotations

import tomllib
from functools import cache
from typing import Any

from advisor.catalog import DATA_DIR


@cache
def vocabulary() -> dict[str, Any]:
    with open(DATA_DIR / "hub_config.toml", "rb") as f:
        return tomllib.load(f)


def text_config(config: dict[str, Any]) -> dict[str, Any]:
    """The language model's part of a config: the nested text_config of a VLM, merged over
    the top level (some VLMs keep vocab_size or tie_word_embeddings outside). A nested
    config that publishes only some keys gets its type's transformers defaults for the rest
    (Qwen2-Audio's text_config names no widths)."""
    for key in vocabulary()["keys"]["text_config"]:
        nested = config.get(key)
        if isinstance(nested, dict):
            defaults = vocabulary()["text_defaults"].get(str(nested.get("model_type", "")), {})
            towers = {k: None for k in ("vision_config", "audio_config")}
            return {**config, **towers, **defaults, **nested}
    return config


def first(config: dict[str, Any], field: str) -> Any:
    """The first of a field's published names present with a value."""
    for key in vocabulary()["keys"][field]:
        value = config.get(key)
        if value is not None:
            return value
    return None


def model_type(config: dict[str, Any]) -> str:
    if config.get("model_type"):
        return str(config["model_type"]).lower()
    classes = config.get("architectures") or [""]
    return str(vocabulary()["architecture_types"].get(classes[0], "")).lower()
