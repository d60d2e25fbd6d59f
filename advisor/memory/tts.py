"""Text-to-speech models' sequences: the speech tokens (an autoregressive LM's, a DiT's mel
frames) a second of speech takes, and the length of speech an answer assumes when none is
stated (data/models/tts.toml [tts.<id>], [tts_defaults])."""

from __future__ import annotations

import math
import tomllib
from functools import cache
from typing import Any

from advisor.catalog import DATA_DIR
from advisor.memory.runtimes import InferenceSetup, add_weights, coefficient
from advisor.memory.terms import Breakdown
from advisor.memory.transformer import mlp_width


@cache
def _table() -> dict[str, Any]:
    with (DATA_DIR / "models" / "tts.toml").open("rb") as fh:
        return tomllib.load(fh)


def speech_tokens(model_id: str | None, acc: Breakdown) -> int | None:
    """The sequence of the assumed length of speech, said as assumed; None for a model
    whose token rate the catalog lacks (the general default context applies)."""
    row = _table().get("tts", {}).get(model_id or "")
    if row is None or "tokens_per_second" not in row:
        return None
    seconds = _table()["tts_defaults"]["speech_seconds"]
    acc.assume("speech_seconds", seconds)
    return math.ceil(float(row["tokens_per_second"]) * seconds)


def non_autoregressive(model_id: str | None) -> bool:
    """A model that predicts every frame of the utterance at once (F5-TTS's flow-matching
    DiT): no KV cache, no per-token decode (data/models/tts.toml `autoregressive`)."""
    row = _table().get("tts", {}).get(model_id or "")
    return row is not None and row.get("autoregressive", True) is False


def allocate_flow(s: InferenceSetup, acc: Breakdown) -> int:
    """A non-autoregressive TTS model: its weights and the DiT's activations over the mel
    frames of the utterance, the guided and unguided passes in one batch of
    `guidance_batch`; the largest of one block's buffers at a time, as transformers'
    prefill (data/runtimes.toml [transformers] prefill_hidden_buffers, prefill_mlp_buffers)."""
    row = _table()["tts"][s.model.id or ""]
    guidance = int(row.get("guidance_batch", 1))
    allocated = add_weights(s, acc)
    arch = s.arch
    per_frame = (
        coefficient("transformers", "prefill_hidden_buffers") * arch.hidden
        + coefficient("transformers", "prefill_mlp_buffers") * mlp_width(arch)
    ) * s.act_bytes
    frames = s.batch * s.context
    allocated += acc.add(
        "activations",
        guidance * frames * per_frame,
        f"{guidance} x {frames} mel frames x {per_frame / 1024:.0f} KiB (DiT, no KV cache)",
        key="activations.tts_flow",
        guidance=guidance,
        frames=frames,
        kib_per_frame=round(per_frame / 1024, 1),
    )
    return allocated + _waveform_decode(row, s, acc)


def _waveform_decode(row: dict[str, Any], s: InferenceSetup, acc: Breakdown) -> int:
    """The decoder that turns a flow model's latents into audio, where its program runs one
    on the GPU (data/models/tts.toml [tts.<id>.waveform_decoder]): its working set over the
    samples of the frames decoded (prompt and speech together) at the precision the program
    runs it in, and the copy of its conv weights that torch's weight_norm pre-hook
    recomputes and keeps from the first decode on."""
    dec = row.get("waveform_decoder")
    if dec is None:
        return 0
    seconds = s.batch * s.context / float(row["tokens_per_second"])
    nbytes = int(dec["bytes_per_value"])
    working = seconds * int(dec["sample_rate"]) * int(dec["values_per_sample"]) * nbytes
    copy = float(dec["weight_copy_b"]) * 1e9 * nbytes
    return acc.add(
        "waveform_decode",
        working + copy,
        f"{seconds:.0f} s x {dec['sample_rate']} Hz x {dec['values_per_sample']} values"
        f" x {nbytes} B + {dec['weight_copy_b']}B recomputed weights",
        key="waveform_decode",
        seconds=round(seconds, 1),
        sample_rate=int(dec["sample_rate"]),
        values=int(dec["values_per_sample"]),
        bytes_per_value=nbytes,
        working_gib=round(working / 2**30, 2),
        copy_b=float(dec["weight_copy_b"]),
        copy_gib=round(copy / 2**30, 2),
    )


def program(model_id: str | None) -> str | None:
    """The repository's own inference program a TTS model runs in (data/models/tts.toml
    [tts.<id>] program): said as the runtime, not the transformers path the engine sizes."""
    row = _table().get("tts", {}).get(model_id or "")
    return str(row["program"]) if row is not None and "program" in row else None
