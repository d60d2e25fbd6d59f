"""Text-to-speech models' sequences: the speech tokens (an autoregressive LM's, a DiT's mel
frames) a second of speech takes, and the length of speech an answer assumes when none is
stated (data/models/tts.toml [tts.<id>], [tts_defaults])."""

from __future__ import annotations

import math
import tomllib
from functools import cache
from typing import Any

from advisor.catalog import DATA_DIR
from advisor.memory.terms import Breakdown


@cache
def _table() -> dict[str, Any]:
    with (DATA_DIR / "models" / "tts.toml").open("rb") as fh:
        return tomllib.load(fh)


def speech_tokens(model_id: str | None, acc: Breakdown) -> int | None:
    """The sequence of the assumed length of speech, said as assumed; None for a model
    whose token rate the catalog lacks (the general default context applies)."""
    row = _table().get("tts", {}).get(model_id or "")
    if row is None:
        return None
    seconds = _table()["tts_defaults"]["speech_seconds"]
    acc.assume("speech_seconds", seconds)
    return math.ceil(float(row["tokens_per_second"]) * seconds)
