"""Pitfalls raised by a workload and the card picked for it.

Each is a code, a severity and parameters; the wording in both languages lives in
`data/pitfalls.toml`, so templates and the JSON output share it. Each family is its own
module: what the card brings (card.py), the model (model.py), the KV cache (kv_cache.py), a
training run and its host memory (training.py); `find_pitfalls` lists them in the order an
answer shows them.
"""

from __future__ import annotations

from advisor.catalog import GpuSpec
from advisor.models.choices import Offload
from advisor.models.result import EstimateResult
from advisor.pitfalls.card import card_pitfalls, gpu_notes, overprovisioned, stack_note
from advisor.pitfalls.kv_cache import (
    kv_cache_notes,
    kv_copies_speed,
    kv_size_notes,
    serving_notes,
)
from advisor.pitfalls.model import (
    low_bit_quality,
    model_notes,
    own_levers,
    stack_levers,
    vendor_long_context,
    video_state_unsized,
)
from advisor.pitfalls.pitfall import pitfall
from advisor.pitfalls.training import (
    diffusers_full_fp32,
    full_finetune_multi_gpu,
    host_ram,
    qlora_host_ram,
    rollout_time,
    stack_floor,
)
from advisor.types import Option, Pitfall, pitfall_texts

__all__ = ["Pitfall", "card_pitfalls", "find_pitfalls", "gpu_notes", "pitfall_texts"]


def find_pitfalls(
    result: EstimateResult,
    gpu: GpuSpec | None,
    pick: Option | None,
    cheapest: Option | None,
    owned: bool = False,
    card_notes: list[Pitfall] | None = None,
) -> list[Pitfall]:
    """`owned`: the named card is the user's own; it is never called over-provisioned (a
    card one owns costs nothing more per hour than a rented one would). `card_notes`:
    `card_pitfalls(result, gpu, pick)` when the caller has it already (the pick's notes)."""
    if result.estimate is None:
        return [pitfall("no_formula")]
    out: list[Pitfall] = []
    if gpu is not None and pick is not None:
        out += card_pitfalls(result, gpu, pick) if card_notes is None else card_notes
        out += overprovisioned(result, gpu, pick, cheapest, owned)
    out += model_notes(result)
    out += video_state_unsized(result)
    out += vendor_long_context(result, gpu, pick)
    out += kv_size_notes(result)
    out += serving_notes(result)
    out += kv_copies_speed(result)
    out += kv_cache_notes(result)
    out += qlora_host_ram(result)
    if gpu is not None and pick is not None:
        out += rollout_time(result, gpu)
    out += low_bit_quality(result)
    out += full_finetune_multi_gpu(result, pick)
    out += diffusers_full_fp32(result)
    out += host_ram(result)
    if gpu is not None:
        out += stack_floor(result, gpu)
    out += stack_levers(result)
    streamed = result.workload.cpu_offload in (Offload.model, Offload.sequential)
    if pick is not None and (not pick.fits or pick.risky or streamed):
        out += own_levers(result)
    out += stack_note(gpu, owned)
    return out
