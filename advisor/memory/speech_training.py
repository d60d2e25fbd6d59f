"""Fine-tuning an encoder-decoder speech model (Whisper): the encoder runs over each 30 s
window's frames, the decoder over the transcript's label tokens only, and the loss's logits
are the decoder's (data/models/speech.toml [speech_training]). A sequence stated as long as
the encoder's frames is those frames, counted once."""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from functools import cache

from advisor.catalog import DATA_DIR
from advisor.memory import multimodal
from advisor.memory.terms import Breakdown
from advisor.models.workload import Workload


@cache
def _table() -> dict[str, object]:
    with (DATA_DIR / "models" / "speech.toml").open("rb") as fh:
        return dict(tomllib.load(fh)["speech_training"])


@dataclass(frozen=True, slots=True)
class SpeechSequence:
    """One training sample of a speech model: the encoder's frames and the decoder's label
    tokens."""

    frames: int
    labels: int

    @property
    def tokens(self) -> int:
        """Positions a layer stack runs a sample: the frames through the encoder, the labels
        through the decoder (Whisper's encoder and decoder are as deep and as wide)."""
        return self.frames + self.labels

    @property
    def attention_keys(self) -> int:
        """Keys a position attends to, on average over the sample's positions: every frame
        to every frame (encoder), every label to the labels before it and to every frame
        (decoder self- and cross-attention); what an eager score matrix holds a position."""
        scores = self.frames**2 + self.labels * (self.labels + self.frames)
        return math.ceil(scores / self.tokens)


def sequence(model_id: str | None, w: Workload, acc: Breakdown) -> SpeechSequence | None:
    """The sample of a speech model's fine-tune (None for any other model): the labels as
    stated when shorter than the frames, else the default transcript length, said."""
    frames = multimodal.encoder_frames(model_id)
    if not frames:
        return None
    asked = w.seq_len or w.context_tokens
    if asked is not None and asked < frames:
        return SpeechSequence(frames, asked)
    labels = int(_table()["default_label_tokens"])  # type: ignore[call-overload]
    acc.assume("label_tokens", labels)
    return SpeechSequence(frames, labels)
