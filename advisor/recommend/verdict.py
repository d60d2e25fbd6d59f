"""The verdict on the setup asked about — fits with headroom, tight, does not fit, a count
tensor parallelism cannot split, or cannot run as asked — and the changes that would make
it fit, cheapest first (split out of advisor.recommend, which calls `verdict_of`)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from itertools import chain

from advisor.catalog import GpuSpec
from advisor.constraints import apple_raised_limit_gb, blockers, tp_ok
from advisor.models.choices import Parallelism
from advisor.models.estimate import Estimate
from advisor.models.result import EstimateResult
from advisor.models.workload import Workload
from advisor.recommend.card_counts import COUNTS, ONE_MACHINE, adds_cards, workload_for
from advisor.recommend.context_fit import CONTEXT_STEP, longest_context
from advisor.recommend.estimates import trial_estimate
from advisor.recommend.fix_candidates import SLOW, candidate_fixes, context_fix, unblocking_fixes
from advisor.recommend.fixes import fixes_for
from advisor.recommend.headroom import HEADROOM, runs_in
from advisor.recommend.lazy_context import context_bytes, lazy_fit
from advisor.recommend.options import Verdict
from advisor.recommend.rank import fits_on
from advisor.recommend.setup_fixes import offered
from advisor.recommend.stacked_fixes import stacked_fix, stacked_fixes
from advisor.types import Option


def verdict_of(
    setup: EstimateResult, o: Option | None, gpu: GpuSpec | None, own_card: bool = False
) -> tuple[Verdict | None, list[str]]:
    """Fits with headroom / fits tight (do X) / does not fit (cheapest change) / cannot run
    as asked on this card (what to change). On the user's own single card (`own_card`) more
    cards are never "the cheapest change": a laptop or a one-GPU box cannot add cards, so
    renting more stays in the list, last."""
    if o is None or gpu is None or setup.estimate is None:
        return None, []
    # Near the card's limit the band's high end decides whether "fits" is said alone.
    up_to = o.measured_up_to_bytes
    if o.blocked:
        state = "blocked"
    elif o.fits and not o.risky:
        return Verdict(
            state="fits", headroom_fraction=o.headroom_fraction, measured_up_to_bytes=up_to
        ), []
    elif not o.fits and runs_in(o.per_gpu_bytes, o.usable_bytes):
        # The memory fits; tensor parallelism cannot split the heads over this many cards
        # (vLLM refuses to start). "Does not fit" beside a figure under the card's memory
        # contradicted itself, and memory fixes changed nothing (consist, 2026-11-30).
        return _split_verdict(setup, gpu, o, own_card)
    else:
        state = "tight" if o.fits else "no_fit"
    if state == "no_fit" and o.count == 1:
        lazy = _lazy_verdict(setup.estimate, gpu, o)
        if lazy is not None:
            return lazy, []
    if state == "no_fit" and o.count > 1 and not tp_ok(setup, o.count):
        # neither fits as is nor splits its heads over this count: the changes are the
        # splits that do (layers in a pipeline, fewer or more cards), no setting on it
        codes, tight = split_fixes(setup, gpu, o.count)
    else:
        codes, tight = fixes_by_cost(setup, gpu, state)
    first = codes[0] if codes else None
    if own_card and first is not None and adds_cards(first):
        first = None
    verdict = Verdict(
        state=state,
        headroom_fraction=o.headroom_fraction,
        fix=first,
        fix_tight=first is not None and first in tight,
        measured_up_to_bytes=up_to if state == "tight" else None,
        # more cards, and settings stacked on the same cards, that run only tight are marked
        # so beside the comfortable stack they follow (stacked_fixes)
        tight_fixes=sorted(c for c in tight if adds_cards(c) or c.startswith("stack:")),
        fixed_bytes=fixed_figure(setup, first),
    )
    if state == "no_fit" and own_card and o.count == 1 and first is None:
        return own_card_context(verdict, codes, setup, gpu)
    return verdict, codes


def _split_verdict(
    setup: EstimateResult, gpu: GpuSpec, o: Option, own_card: bool
) -> tuple[Verdict, list[str]]:
    """The memory fits but tensor parallelism cannot split the heads over `o`'s cards: the
    splits that do, and on the user's own cards a change on them before renting more."""
    codes, tight = split_fixes(setup, gpu, o.count)
    # own cards: a change on these cards, even a tight one, before renting more
    first = next((c for c in codes if not (own_card and adds_cards(c))), None)
    return Verdict(
        state="split",
        headroom_fraction=o.headroom_fraction,
        fix=first,
        fix_tight=first is not None and first in tight,
        heads=heads_of(setup),
    ), codes


def _lazy_verdict(estimate: Estimate, gpu: GpuSpec, o: Option) -> Verdict | None:
    """Tight, with no change and no more cards, where the job fits one card once PyTorch
    2.1+ loads CUDA modules lazily; None where it does not."""
    lazy = lazy_fit(o.per_gpu_bytes, o.usable_bytes, estimate, gpu)
    if lazy is None:
        return None
    return Verdict(
        state="tight",
        headroom_fraction=1 - lazy / o.usable_bytes,
        lazy_context_bytes=lazy,
        contexts=context_bytes(),
    )


def without_more_cards(
    verdict: Verdict | None, codes: list[str], setup: EstimateResult
) -> tuple[Verdict | None, list[str]]:
    """The verdict and changes for a card the user owns: no "rent N cards" (Baichuan2-7B
    NF4 on a GTX 1660 Ti said "rent 2 cards (tight)"; the cards to rent instead are listed
    below the verdict). More of the same card named as such stays ("2× RTX 3090 with
    vLLM's lean flags" for 72B AWQ on one 3090, "2× Radeon RX 7900 XTX": cards one can
    buy; the caller keeps them on a Mac or a Radeon, platform.py)."""

    def more(code: str) -> bool:
        return code.startswith("cards:")

    kept = [c for c in codes if not more(c)]
    if verdict is None or verdict.fix is None or not more(verdict.fix):
        return verdict, kept
    first = kept[0] if kept else None
    update = {"fix": first, "fix_tight": False, "fixed_bytes": fixed_figure(setup, first)}
    return verdict.model_copy(update=update), kept


def own_card_context(
    verdict: Verdict, codes: list[str], setup: EstimateResult, gpu: GpuSpec
) -> tuple[Verdict, list[str]]:
    """On one card of the user's own where no change on it was found: the longest
    context it runs at (below the 2k the shorter-context changes stop at; with the lazy
    CUDA context of PyTorch 2.1+ where only that fits), or the figure at the shortest
    context when none does (context_fit.py)."""
    found = longest_context(setup, gpu)
    if found is None:
        return verdict, codes
    if found.tokens is None:
        update: dict[str, object] = {
            "no_context_bytes": found.bytes,
            "no_context_tokens": CONTEXT_STEP,
            "no_context_lazy": found.lazy,
            "weights_bytes": found.weights,
            "contexts": context_bytes() if found.lazy else None,
        }
        return verdict.model_copy(update=update), codes
    code = f"shorter_context{'_lazy' if found.lazy else ''}:{found.tokens}"
    update = {
        "fix": code,
        "fix_tight": found.tight,
        "fixed_bytes": found.bytes,
        "contexts": context_bytes() if found.lazy else None,
    }
    return verdict.model_copy(update=update), [code, *codes]


# Fixes whose count fixes_for searches (-ngl, --n-cpu-moe): the Workload field it sets.
COUNTED = {"gpu_layers": "n_gpu_layers", "cpu_moe": "n_cpu_moe"}


def fixed_figure(setup: EstimateResult, code: str | None) -> int | None:
    """Per card after a single change on the same cards (the verdict's "fits with X" and
    the figure it comes to), or after a stack's changes taken in turn; None for more cards
    or a change not listed."""
    if code is not None and code.startswith("stack:"):
        current: EstimateResult | None = setup
        for step in code.removeprefix("stack:").split("+"):
            current = _after(current, step)
        return current.estimate.total_bytes if current and current.estimate else None
    if code is None or code.startswith(("cards:", "wired_limit:")):
        return None
    trial = _after(setup, code)
    return trial.estimate.total_bytes if trial is not None and trial.estimate else None


def _after(setup: EstimateResult | None, code: str) -> EstimateResult | None:
    """The estimate after one change of `setup` (None: not listed for it, or refused)."""
    if setup is None:
        return None
    kind, _, arg = code.partition(":")
    make: Callable[[], Workload] | None
    if kind in COUNTED and arg.isdigit():  # the candidates list a marker count: the found one
        make = partial(setup.workload.model_copy, update={COUNTED[kind]: int(arg)})
    else:
        listed = chain(candidate_fixes(setup), unblocking_fixes(setup))
        make = next((m for c, m in listed if c == code), None)
        if make is None and kind == "shorter_context" and arg.isdigit():
            make = context_fix(setup, int(arg))  # a stack's longest context (stacked_fixes)
    if make is None:
        return None
    try:
        return trial_estimate(make())
    except ValueError:
        return None


def heads_of(setup: EstimateResult) -> str:
    arch = setup.model.arch
    return f"{arch.heads}/{arch.kv_heads_}" if arch is not None else ""


def split_fixes(setup: EstimateResult, gpu: GpuSpec, count: int) -> tuple[list[str], set[str]]:
    """For a count tensor parallelism cannot use: a pipeline split over the same cards
    (layers, not heads, are divided), fewer of the cards, or the next count that divides
    the heads; each kept when it fits, those under the guide's headroom marked tight."""
    cap = gpu.usable_vram_bytes
    trials: list[tuple[str, Workload]] = [
        (
            f"pipeline:{count}",
            setup.workload.model_copy(update={"parallelism": Parallelism.pp}),
        )
    ]
    fewer = [c for c in COUNTS if c < count][::-1]
    more = [c for c in COUNTS if c > count]
    trials += [(f"fewer_cards:{c}", workload_for(setup.workload, c)) for c in fewer]
    trials += [(f"cards:{c}", workload_for(setup.workload, c)) for c in more]
    codes: list[str] = []
    tight: set[str] = set()
    kinds: set[str] = set()
    for code, w in trials:
        kind = code.partition(":")[0]
        if kind in kinds:
            continue
        trial = trial_estimate(w)
        if trial.estimate is None or blockers(gpu, trial):
            continue
        n = int(code.partition(":")[2]) if kind != "pipeline" else 1
        if trial.estimate.total_bytes > cap or not fits_on(trial, gpu, n):
            continue
        if trial.estimate.total_bytes > cap * (1 - HEADROOM):
            tight.add(code)
        codes.append(code)
        kinds.add(kind)
    codes.sort(key=lambda c: c in tight)  # with the guide's headroom first, in that order
    return codes, tight


# Fixes that move the run to another trainer (the same recipe, its own code paths).
OTHER_STACK = ("unsloth",)


def fixes_by_cost(setup: EstimateResult, gpu: GpuSpec, state: str) -> tuple[list[str], set[str]]:
    """The changes for the user's setup, cheapest first: those that leave the guide's
    headroom; else (for a setup that does not fit at all) those that fit tight; more cards
    always last, since renting more is the costliest change. Also returns the tight ones."""
    comfortable = fixes_for(setup, gpu, limit=6, enough=four_on_the_same_cards)
    same_cards = [c for c, _ in comfortable if not c.startswith("cards:")]
    more_cards = [c for c, _ in comfortable if c.startswith("cards:")]
    tight: set[str] = set()
    if all(c.partition(":")[0] in SLOW for c in same_cards) and state != "tight":
        same_cards, more_cards, tight = _full_speed_first(
            setup, gpu, comfortable, same_cards, more_cards
        )
    if same_cards and same_cards[0].startswith("shorter_context:"):
        kept = keeps_the_asked_context(setup, gpu)
        if kept is not None and kept != same_cards[0]:
            same_cards = [kept] + [c for c in same_cards if c != kept]
            if kept not in {k for k, _ in comfortable}:
                tight.add(kept)
    if setup.workload.mode.is_training and same_cards and same_cards[0] in OTHER_STACK:
        # A switch to another trainer is not a change the user makes in their own run: the
        # settings of that run stacked (micro-batch 1 with gradient accumulation, a fused
        # loss, ...) come first where they leave the headroom, as for a ZeRO run
        stacked = stacked_fix(setup, gpu)
        if stacked is not None and not stacked[1]:
            same_cards = [stacked[0]] + same_cards
    if state == "no_fit" and len(same_cards) < 4:
        # Fewer more cards with settings of the same run, before the count that runs it as
        # asked: 72B AWQ on one 3090 runs on two with vLLM's lean flags (tight), not only
        # on the four rented ones.
        fewer = fewer_cards_with_settings(setup, gpu, more_cards)
        if fewer is not None:
            more_cards = _put_first(fewer, more_cards, tight)
    if same_cards and len(more_cards) > 1:
        # A change on the card named already runs it: more cards stay the costly last resort,
        # the fewest of them only (Gemma-3-12B bf16 on one 16 GB card: AWQ on the card, or two
        # cards with vLLM's lean flags; not also "rent 8 cards" for 16-bit weights)
        more_cards = more_cards[:1]
    more_cards = [c for c in more_cards if not _split_wastes_the_cards(c, setup, gpu)]
    if state == "no_fit" and not same_cards and not setup.workload.mode.is_training:
        # Only more cards so far: a smaller format with a shorter context on the card named
        # comes first where the two together run it (13B in 8-bit on a 12 GB card: 4-bit at
        # 2k, not "rent 2 cards")
        for stacked in reversed(stacked_fixes(setup, gpu, extra=("quantize",))):
            same_cards = _put_first(stacked, same_cards, tight)
    if not [c for c in same_cards if c not in tight]:
        # No one change leaves the headroom on these cards: several settings of the same run
        # together, before any tight single change and before renting more cards.
        stacked = stacked_fix(setup, gpu)
        if stacked is not None and (not same_cards or not stacked[1]):
            same_cards = _put_first(stacked, same_cards, tight)
    raised = wired_limit_fix(setup, gpu)
    if raised is not None:  # a setting of the Mac, no speed lost: before every other change
        same_cards = _put_first(raised, same_cards, tight)
    listed = (same_cards + more_cards)[:4]
    return listed, {c for c in tight if c in listed}


def _full_speed_first(
    setup: EstimateResult,
    gpu: GpuSpec,
    comfortable: list[tuple[str, EstimateResult]],
    same_cards: list[str],
    more_cards: list[str],
) -> tuple[list[str], list[str], set[str]]:
    """Nothing at full speed leaves the headroom: a full-speed change that fits tight
    comes before streaming weights from RAM (several times slower). The changes on the same
    cards, those with more cards, and the ones that fit only tight."""
    loose = fixes_for(setup, gpu, comfortable=False, limit=6)
    own = [c for c, _ in loose if not c.startswith("cards:")]
    fast = [c for c in own if c.partition(":")[0] not in SLOW]
    if same_cards:  # slow ones leave the headroom: tight full-speed ones go first
        tight = set(fast[:2])
        same_cards = fast[:2] + same_cards
    else:  # nothing leaves the headroom: the two first that fit, full speed first
        same_cards = (fast + [c for c in own if c not in fast])[:2]
        tight = set(same_cards)
    more_cards = more_cards or [c for c, _ in loose if c.startswith("cards:")]
    tight |= {c for c in more_cards if c not in {k for k, _ in comfortable}}
    if same_cards and not fast and not setup.workload.mode.is_training:
        # Only layers streamed from RAM run it: a smaller format with the run's own
        # settings stacked (a q8_0 KV cache, a shorter context) on the card alone comes
        # first where together they fit (Qwen2.5-14B Q6_K at 32k on a 12 GB card: Q4_K_M
        # with a q8_0 KV cache, not only -ngl 25 at a few tokens a second)
        for stacked in reversed(stacked_fixes(setup, gpu, extra=("quantize",))):
            same_cards = _put_first(stacked, same_cards, tight)
    return same_cards, more_cards, tight


def _put_first(found: tuple[str, bool], codes: list[str], tight: set[str]) -> list[str]:
    """`codes` with the change `found` (its code, whether it fits only tight) first; a
    tight one joins `tight`."""
    if found[1]:
        tight.add(found[0])
    return [found[0]] + codes


def keeps_the_asked_context(setup: EstimateResult, gpu: GpuSpec) -> str | None:
    """A context the user asked is kept where a setting of the same run fits it on the card
    named, tight or not (a q8_0 / fp8 KV cache), before cutting it: Llama-3.1-8B Q4_K_M at
    128k on a 16 GB card runs with llama.cpp's q8_0 KV cache (13.6 of 15.8 GiB) rather than
    at 32k. None when the context was assumed or no such setting fits."""
    if any(a.field in ("context_tokens", "seq_len") for a in setup.assumed):
        return None
    cheap = fixes_for(setup, gpu, comfortable=False, only_cheap=True, limit=1)
    return cheap[0][0] if cheap else None


def wired_limit_fix(setup: EstimateResult, gpu: GpuSpec) -> tuple[str, bool] | None:
    """On a Mac the job outgrows at its default GPU share (Metal's ~75% of unified memory)
    but fits once `sudo sysctl iogpu.wired_limit_mb` raises it to the memory less ~8 GB
    (data/pitfalls.toml apple_wired_limit): the fix `wired_limit:<MB>` and whether it is
    tight there. Qwen3-235B-A22B Q3_K_M on an M4 Max 128GB, 108 GiB: "❌ does not run on
    this machine" while a note gave the sysctl that makes 120 GiB available."""
    top = apple_raised_limit_gb(gpu)
    est = setup.estimate
    if top is None or est is None or est.total_bytes <= gpu.usable_vram_bytes * (1 - HEADROOM):
        return None
    cap = top * 2**30
    if not runs_in(est.total_bytes, cap):
        return None
    return f"wired_limit:{int(top * 1024)}", est.total_bytes > cap * (1 - HEADROOM)


def fewer_cards_with_settings(
    setup: EstimateResult, gpu: GpuSpec, more_cards: list[str]
) -> tuple[str, bool] | None:
    """(code, tight) for the fewest cards, fewer than the first count in `more_cards`, on
    which the job runs as is or with one setting of the same run (the vLLM lean flags, an
    fp8 KV cache): "stack:cards:2+vllm_lean_tp". None when none does (several settings
    stacked on more cards read as a recipe, not a change)."""
    if not offered("cards:2", setup.workload):
        return None  # a program that runs the model whole on one card (setup_fixes)
    counts = [int(c.partition(":")[2]) for c in more_cards if c.startswith("cards:")]
    upto = min(counts, default=ONE_MACHINE + 1)
    usable = gpu.usable_vram_bytes
    for count in (c for c in COUNTS if setup.workload.num_gpus < c < upto):
        trial = trial_estimate(workload_for(setup.workload, count))
        if trial.estimate is None or not tp_ok(trial, count) or blockers(gpu, trial):
            continue
        if runs_in(trial.estimate.total_bytes, usable):
            return f"cards:{count}", True  # tight as is (a comfortable count is in the list)
        # with the guide's headroom where one setting leaves it (batch 4, not a tight 8)
        one = fixes_for(trial, gpu, only_cheap=True, limit=1) or fixes_for(
            trial, gpu, comfortable=False, only_cheap=True, limit=1
        )
        if one:
            code, fixed = one[0]
            tight = fixed.estimate is not None and fixed.estimate.total_bytes > usable * (
                1 - HEADROOM
            )
            return f"stack:cards:{count}+{code}", tight
    return None


def four_on_the_same_cards(found: list[tuple[str, EstimateResult]]) -> bool:
    """`fixes_by_cost` reads no further than this: with four changes on the same cards,
    one of them at full speed, its answer is those four (more cards, always listed after
    them, fall past the fourth place; the slow-only branch is not taken), so the fifth
    and sixth fixes' estimates would change nothing."""
    same = [c for c, _ in found if not c.startswith("cards:")]
    return len(same) >= 4 and any(c.partition(":")[0] not in SLOW for c in same)


def _split_wastes_the_cards(code: str, setup: EstimateResult, gpu: GpuSpec) -> bool:
    """More than two of a card no platform rents (one the user owns and would have to buy
    more of) where they would hold over twice what the job needs on one card: each card
    keeps its own context, buffers and unsplit activations, so the job belongs on one larger
    card (Baichuan2-7B NF4 at 9.6 GiB on a 6 GB GTX 1660 Ti: a card with more memory, not
    "rent 4 cards"). Rented cards keep their count (70B in bf16 on 4 A100s is the usual run)."""
    kind, _, arg = code.partition(":")
    if kind != "cards" or gpu.rentable or setup.estimate is None or not arg.isdigit():
        return False
    need = setup.estimate.total_bytes * setup.workload.num_gpus
    return int(arg) > 2 and int(arg) * gpu.usable_vram_bytes > 2 * need
