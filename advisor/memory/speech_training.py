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
    tokens, and how many layers each runs through (as wide as each other in Whisper; the
    turbo model's decoder keeps 4 of the encoder's 32)."""

    frames: int
    labels: int
    encoder_layers: int
    decoder_layers: int

    @property
    def tokens(self) -> int:
        """Positions a sample runs through the encoder's layer count: the frames, and the
        labels scaled by the decoder's share of layers (all of them when as deep)."""
        return self.frames + math.ceil(self.labels * self.decoder_layers / self.encoder_layers)

    @property
    def attention_keys(self) -> int:
        """Keys a position attends to, on average over the sample's layer-positions: every
        frame to every frame (encoder), every label to the labels before it and to every
        frame (decoder self- and cross-attention); what an eager score matrix holds."""
        scores = self.encoder_layers * self.frames**2 + self.decoder_layers * self.labels * (
            self.labels + self.frames
        )
        return math.ceil(scores / (self.encoder_layers * self.tokens))


def sequence(
    model_id: str | None, w: Workload, decoder_layers: int, acc: Breakdown
) -> SpeechSequence | None:
    """The sample of a speech model's fine-tune (None for any other model): the labels as
    stated when shorter than the frames, else the default transcript length, said."""
    frames = multimodal.encoder_frames(model_id)
    if not frames:
        return None
    encoder_layers = multimodal.encoder_layers(model_id) or decoder_layers
    asked = w.seq_len or w.context_tokens
    if asked is not None and asked < frames:
        return SpeechSequence(frames, asked, encoder_layers, decoder_layers)
    labels = int(_table()["default_label_tokens"])  # type: ignore[call-overload]
    acc.assume("label_tokens", labels)
    return SpeechSequence(frames, labels, encoder_layers, decoder_layers)
