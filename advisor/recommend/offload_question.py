"""Whether to offload, when that is the question ("要开offload吗", "do I need offload"): the
named card's figure without offload beside the one with it, and the answer in a word: yes
(it does not fit without), tight (it fits without, under the guide's headroom), no (it
fits without, with headroom; the answer is then for the setup without offload, which runs
at full speed: offload moves each component over PCIe on every use) or no_effect (the
offload read saves nothing for this job)."""

from __future__ import annotations

from collections.abc import Callable

from advisor import catalog
from advisor.models.choices import Offload
from advisor.parse import ParsedQuery
from advisor.recommend.fix_candidates import SLOW
from advisor.recommend.named_card import named_option
from advisor.recommend.options import OffloadAnswer, Recommendation
from advisor.recommend.search import Setups


def answer_offload_question(
    parsed: ParsedQuery, rec: Recommendation, again: Callable[[ParsedQuery], Recommendation]
) -> Recommendation:
    """`rec` with the offload question answered; `again` recommends for another reading of
    the question (the one without offload, when that fits with headroom)."""
    w = parsed.workload
    named, gpu_id = rec.named, parsed.gpu_id
    if w is None or named is None or gpu_id is None:
        return rec
    if w.cpu_offload == Offload.none:
        # an inference asked about offload, read as none (parse/assemble.py: it has no
        # optimizer to offload): "it saves nothing here", unless a change the answer names
        # leaves part of the model in RAM (llama.cpp -ngl, --n-cpu-moe, offload): then
        # that change is the answer to the question, not "saves nothing"
        splits = any(code.partition(":")[0] in SLOW for code in _codes(rec))
        if not parsed.ask_offload or w.mode.is_training or splits:
            return rec
        same = OffloadAnswer(
            answer="no_effect",
            without_bytes=named.per_gpu_bytes,
            with_bytes=named.per_gpu_bytes,
            usable_bytes=named.usable_bytes,
            headroom_without=named.headroom_fraction,
            with_fits=named.fits,
        )
        return rec.model_copy(update={"offload_asked": same})
    without_w = w.model_copy(update={"cpu_offload": Offload.none})
    gpu = catalog.gpus()[gpu_id]
    bare, _, _ = named_option(
        Setups(without_w), gpu, None, named.count, counted=True, ask_count=False
    )
    word = "yes" if not bare.fits else "tight" if bare.risky else "no"
    if named.per_gpu_bytes >= bare.per_gpu_bytes:
        word = "no_effect"  # nothing to offload here (an LLM's inference has no optimizer)
    offload = OffloadAnswer(
        answer=word,
        without_bytes=bare.per_gpu_bytes,
        with_bytes=named.per_gpu_bytes,
        usable_bytes=named.usable_bytes,
        headroom_without=bare.headroom_fraction,
        with_fits=named.fits,
    )
    if word == "no":  # the answer is for the faster setup that fits
        without_q = parsed.model_copy(update={"workload": without_w, "ask_offload": False})
        rec = again(without_q)
    return rec.model_copy(update={"offload_asked": offload})


def _codes(rec: Recommendation) -> list[str]:
    """The changes the answer names (each stack's parts one by one)."""
    fixes = list(rec.fixes or [])
    if rec.verdict is not None and rec.verdict.fix:
        fixes.append(rec.verdict.fix)
    return [part for code in fixes for part in code.removeprefix("stack:").split("+")]
