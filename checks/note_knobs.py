"""Settings a measured case names only in its notes or quote (diffusers offload / slicing /
tiling, torchtune's chunked loss, optimizer in backward, activation offloading, precomputed
text embeddings, which pipeline components a quantizer touched), read by a fixed phrase
table (checks/data/note_knobs.toml): the same for every case, never keyed by case id, model
name or source.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from advisor.models.choices import Kind

# The phrase table as data: (regex on notes, workload field, value) rows, each with its
# comment and source in the file. Negated mentions ("no optimizer_in_bwd") are skipped by a
# row's lookbehind or by NEGATION below.
NOTE_KNOBS_FILE = Path(__file__).with_name("data") / "note_knobs.toml"


def load_note_knobs(path: Path = NOTE_KNOBS_FILE) -> list[tuple[str, str, object]]:
    """The table's rows in file order; a pattern written in parts is joined end to end."""
    with path.open("rb") as f:
        rows = tomllib.load(f)["knob"]
    return [
        (
            "".join(r["pattern"]) if isinstance(r["pattern"], list) else r["pattern"],
            r["field"],
            r["value"],
        )
        for r in rows
    ]


NOTE_KNOBS = load_note_knobs()


CHUNK_OFFLOAD_KNOBS = {"chunked_loss", "activation_offload", "torch_compile"}


# A mention the text denies: "(no --t5_cpu)", "without VAE tiling", "not cache_latents".
NEGATION = re.compile(r"(?:\bno|\bnot|\bwithout|\bnever)[ `'\"(]*$", re.I)


# Of two offload modes a case names, the one that keeps less on the GPU is the one it ran
# ("enable_sequential_cpu_offload" together with a pipeline's own cpu_offloading=True):
# sequential offload streams every submodule, model offload keeps a component resident.
OFFLOAD_RANK = {"model": 1, "sequential": 2}


def mentioned(pattern: str, text: str) -> bool:
    """Whether the text names the setting: a match not preceded by a negation."""
    return any(
        not NEGATION.search(text[max(0, m.start() - 12) : m.start()])
        for m in re.finditer(pattern, text)
    )


def knobs_from_text(case: dict, kind: Kind, fields: dict) -> list[str]:
    """Settings named only in the notes or the quote, by the fixed phrase table; the quote
    is read too, since a table row's label ("4Bit + CPU offloading + VAE tiling") can be
    the only place a setting is named."""
    wl = case["workload"]
    text = f"{case.get('notes') or ''} {case.get('quote') or ''}"
    knobs: list[str] = []
    for pattern, field, value in NOTE_KNOBS:
        # Offload modes here are diffusers' (inference).
        if field == "cpu_offload" and (kind != Kind.diffusion or wl["mode"] != "inference"):
            continue
        # Chunked losses and activation offloading are torchtune / Unsloth features; an HF
        # row's notes may describe them only to contrast the two.
        if field in CHUNK_OFFLOAD_KNOBS and fields.get("framework") not in ("torchtune", "unsloth"):
            continue
        if mentioned(pattern, text):
            ranked = field == "cpu_offload" and isinstance(value, str)
            if ranked and OFFLOAD_RANK.get(str(fields.get(field)), 0) > OFFLOAD_RANK[str(value)]:
                continue
            if value == "compute":
                value = wl.get("compute_dtype") or "fp16"
            elif value == "weights":
                value = wl.get("weights_precision")
            fields[field] = value
            knobs.append(f"{field}={value}")
    return knobs
