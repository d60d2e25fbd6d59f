"""The longest context an LLM runs at on one card it does not run on as asked, for the
answer on the user's own card: the shorter-context changes halve the context down to 2k
(fix_candidates.shorter_context_fixes); below that a small card may still run the model
at a shorter one, with the eager CUDA context or only with the lazy one (PyTorch 2.1+,
lazy_context.py), or at none at all. Baichuan2-7B in bitsandbytes NF4 on a 6 GB GTX 1660
Ti: 5.3 GiB of weights, 6.4 GiB at 256 tokens even with the lazy context: no context fits,
said so, where the answer said only "take a card with more memory" at 4k and "rent 2 cards"
at 1k."""

from __future__ import annotations

from typing import NamedTuple

from advisor.catalog import GpuSpec
from advisor.largest import largest
from advisor.memory.runtimes import SERVING_ENGINES
from advisor.models.choices import Kind
from advisor.models.result import EstimateResult
from advisor.recommend.estimates import trial_estimate
from advisor.recommend.headroom import HEADROOM, runs_in
from advisor.recommend.lazy_context import lazy_saving

# Contexts tried, in steps of this many tokens: a short prompt and its reply is the least
# an answer calls a context to run at.
CONTEXT_STEP = 256


class ContextFit(NamedTuple):
    """`tokens`: the longest context (a multiple of CONTEXT_STEP under the asked one) that
    runs, None when not even CONTEXT_STEP does; `bytes`: per card at it (at CONTEXT_STEP
    when none runs), with the lazy context where `lazy`; `tight`: under the guide's
    headroom; `weights`: the weights' bytes per card."""

    tokens: int | None
    bytes: int
    lazy: bool
    tight: bool
    weights: int


def _context(setup: EstimateResult) -> int | None:
    w = setup.workload
    if setup.model.kind != Kind.llm or w.mode.is_training or setup.estimate is None:
        return None
    if (w.batch_size or 1) > 1 or (w.concurrency or 1) > 1:
        return None  # a batch's sequences share the card: the batch is a lever too
    if w.context_tokens:
        return w.context_tokens
    for a in setup.assumed:
        if a.field == "context_tokens" and a.value.isdigit():
            return int(a.value)
    return None


def longest_context(setup: EstimateResult, gpu: GpuSpec) -> ContextFit | None:
    """The longest context the job runs at on one `gpu` (see ContextFit); None for a job
    with no context to shorten (training, not an LLM), a batch or several requests at once,
    a serving engine (vLLM / SGLang / TGI: their own flags are the changes), or one asked at
    CONTEXT_STEP or less."""
    asked = _context(setup)
    if asked is None or asked <= CONTEXT_STEP or setup.estimate is None:
        return None
    usable = gpu.usable_vram_bytes
    saving = lazy_saving(setup.estimate, gpu)
    sized: dict[int, int] = {}

    def need(steps: int) -> int:
        if steps not in sized:
            w = setup.workload.model_copy(
                update={
                    "context_tokens": steps * CONTEXT_STEP,
                    "prompt_tokens": None,
                    "new_tokens": None,
                }
            )
            est = trial_estimate(w).estimate
            sized[steps] = est.total_bytes if est is not None else 1 << 62
        return sized[steps]

    top = (asked - 1) // CONTEXT_STEP
    weights = sum(t.bytes for t in setup.estimate.terms if t.name == "weights")
    if setup.estimate.runtime in SERVING_ENGINES:
        # its start-up profile and flags, not the context, decide (vLLM's lean flags): said
        # only where the weights alone are over the card
        if weights <= usable:
            return None
        return ContextFit(None, need(1), False, True, weights)
    for lazy, off in ((False, 0), (True, saving)):
        if lazy and not saving:
            break

        def runs(steps: int, off: int = off) -> bool:
            return runs_in(need(steps) - off, usable)

        steps = largest(1, top, runs)
        if steps is not None:
            got = need(steps) - off
            tight = lazy or got > usable * (1 - HEADROOM)
            return ContextFit(steps * CONTEXT_STEP, got, lazy, tight, weights)
    return ContextFit(None, need(1) - saving, saving > 0, True, weights)
