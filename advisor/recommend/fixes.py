"""What to change when a setup is tight or does not fit, cheapest change first.

Cost to the user, lowest first: settings that change nothing about the result (batch 1
with gradient accumulation, gradient checkpointing, a fused loss, an 8-bit optimizer, an
fp8 KV cache), then a shorter context, then a smaller number format, then a different
recipe (LoRA / QLoRA), then offload, and last more cards. Every fix is checked by running
the estimate again, and must leave the card able to run the job (constraints). The candidates are listed in
fix_candidates.py; settings stacked on the same cards in stacked_fixes.py."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial

from advisor.architectures import architecture_of
from advisor.catalog import GpuSpec
from advisor.constraints import Requirement, applicable, blockers, engine_blocker_ids, tp_ok
from advisor.largest import largest
from advisor.memory import CUDA_CONTEXT_BYTES
from advisor.models.result import EstimateResult
from advisor.models.workload import Workload
from advisor.recommend.estimates import trial_estimate
from advisor.recommend.fix_candidates import (
    CHEAP,
    VLLM_FLAG_CODES,
    candidate_fixes,
    setting_fixes,
    unblocking_fixes,
)
from advisor.recommend.headroom import HEADROOM, MIN_FREE

# Trial estimates kept across cards by (id of the estimate changed, fix code), each with its
# requirements once read: a changed workload weighs the same on any card.
Trials = dict[tuple[int, str], tuple[EstimateResult, list[Requirement] | None]]

# Fix kinds of which only the least change is advised (the first found: cheapest first).
_LEAST_OF_EACH = frozenset(
    (
        "batch",
        "cards",
        "shorter_context",
        "quantize",
        "vllm_flags",
        "gpu_layers",
        "cpu_moe",
        "smaller_model",
    )
)


def fixes_for(
    result: EstimateResult,
    gpu: GpuSpec,
    *,
    comfortable: bool = True,
    only_cheap: bool = False,
    limit: int = 4,
    trials: Trials | None = None,
    blocked: bool | None = None,
    enough: Callable[[list[tuple[str, EstimateResult]]], bool] | None = None,
) -> list[tuple[str, EstimateResult]]:
    """Changes that make `result` fit `gpu` (with the guide's headroom when `comfortable`),
    cheapest first, each with its new estimate (lean: its totals, never to be shown; see
    estimates.trial_estimate). One card-count fix at most: the fewest.
    `trials` keeps estimates (and their requirements) across cards: a changed workload
    weighs the same on any card. `enough`: the caller needs no more than the list so far
    (checked after each fix found; each fix further costs an estimate)."""
    cap = gpu.usable_vram_bytes * ((1 - HEADROOM) if comfortable else (1 - MIN_FREE))
    out: list[tuple[str, EstimateResult]] = []
    seen_kinds: set[str] = set()
    candidates = candidate_fixes(result)
    if blocked if blocked is not None else blockers(gpu, result):
        candidates = unblocking_fixes(result)  # first make the card able to run it at all
    for code, make in candidates:
        kind = code.partition(":")[0]
        if only_cheap and kind not in CHEAP:
            continue
        family = "vllm_flags" if kind in VLLM_FLAG_CODES else kind
        if family in seen_kinds and family in _LEAST_OF_EACH:
            continue  # the least change of each kind is the advice
        if kind == "llamacpp" and not _llamacpp_route_runs(gpu, result):
            continue  # the route for a card the serving engine itself does not run on
        if _cannot_lower(code, result) and (
            result.estimate is None or result.estimate.total_bytes > cap
        ):
            continue  # its estimate would be this one's, over the cap as this one is
        if kind in ("gpu_layers", "cpu_moe"):
            if family in seen_kinds or gpu.vendor == "Apple":
                continue  # unified memory: the layers or experts left to the CPU live in it too
            seen_kinds.add(family)  # one count: the least offload under the cap
            sized = _offload_fix(kind, result, cap)
            if sized is None:
                continue
            code, make = sized
        trial = _fitting_trial(result, code, make, trials, gpu, cap)
        if trial is None:
            continue
        out.append((code, trial))
        seen_kinds.add(family)
        if len(out) >= limit or (enough is not None and enough(out)):
            break
    return out


def _llamacpp_route_runs(gpu: GpuSpec, result: EstimateResult) -> bool:
    """The asked runtime itself does not run on the card (capabilities.toml `engine`) and
    the card's stack is one data/architectures.toml describes, each with a llama.cpp
    backend (CUDA, HIP, Metal, SYCL); a card it lacks (Ascend) keeps its port's advice."""
    return architecture_of(gpu) is not None and bool(
        engine_blocker_ids() & set(blockers(gpu, result))
    )


def _offload_fix(
    kind: str, result: EstimateResult, cap: float
) -> tuple[str, Callable[[], Workload]] | None:
    """A llama.cpp offload fix sized to the card: the most layers on the GPU (gpu_layers)
    or the fewest layers' experts on the CPU (cpu_moe) under `cap`; None when no count fits."""
    if kind == "gpu_layers":
        layers, setting = _most_gpu_layers(result, cap), "n_gpu_layers"
    else:
        layers, setting = _fewest_cpu_moe_layers(result, cap), "n_cpu_moe"
    if not layers:
        return None
    return f"{kind}:{layers}", partial(result.workload.model_copy, update={setting: layers})


def _fitting_trial(
    result: EstimateResult,
    code: str,
    make: Callable[[], Workload],
    trials: Trials | None,
    gpu: GpuSpec,
    cap: float,
) -> EstimateResult | None:
    """The estimate of `result` changed by `code` when it fits under `cap` and leaves `gpu`
    able to run the job; None otherwise (or where the change does not estimate)."""
    known = _trial(result, code, make, trials)
    if known is None:
        return None  # the changed workload is not one the engine estimates
    trial, reqs = known
    if trial.estimate is None or trial.estimate.total_bytes > cap:
        return None
    if not tp_ok(trial, trial.workload.num_gpus):
        return None  # vLLM would not start: the count does not divide the heads
    if reqs is None:  # read only for a change that fits (most trials do not)
        reqs = applicable(trial)
        if trials is not None:
            trials[(id(result), code)] = (trial, reqs)
    if blockers(gpu, trial, reqs):
        return None
    return trial


def _trial(
    result: EstimateResult, code: str, make: Callable[[], Workload], trials: Trials | None
) -> tuple[EstimateResult, list[Requirement] | None] | None:
    """The estimate of `result` changed by `code` (and its requirements, once read), from
    `trials` where another card asked it before; None where the change does not estimate."""
    key = (id(result), code)
    if trials is not None and key in trials:
        return trials[key]
    try:
        trial = trial_estimate(make())
    except ValueError:
        return None
    if trials is not None:
        trials[key] = (trial, None)
    return trial, None


def _most_gpu_layers(result: EstimateResult, cap: float) -> int:
    """The most layers (-ngl) under `cap` of fewer than the job keeps on the card now; 0
    when none. Found by halving: a layer more never weighs less."""
    w, arch = result.workload, result.model.arch
    if arch is None:
        return 0
    top = min(arch.layers, w.n_gpu_layers if w.n_gpu_layers is not None else arch.layers) - 1

    def fits(n: int) -> bool:
        est = trial_estimate(w.model_copy(update={"n_gpu_layers": n})).estimate
        return est is not None and est.total_bytes <= cap

    return (largest(1, top, fits) or 0) if top >= 1 else 0


def _fewest_cpu_moe_layers(result: EstimateResult, cap: float) -> int:
    """The fewest layers whose MoE experts stay on the CPU (llama.cpp --n-cpu-moe N) for
    the job to fit under `cap`, every layer's attention and shared weights on the card; 0
    when not even all experts on the CPU fit. A layer more on the CPU never weighs more."""
    w, arch = result.workload, result.model.arch
    if arch is None or not arch.experts:
        return 0
    layers = arch.layers

    def fits(kept: int) -> bool:  # `kept` layers keep their experts on the card
        trial = w.model_copy(update={"n_cpu_moe": layers - kept, "n_gpu_layers": None})
        est = trial_estimate(trial).estimate
        return est is not None and est.total_bytes <= cap

    kept = largest(0, layers - 1, fits)
    return 0 if kept is None else layers - kept


def _cannot_lower(code: str, result: EstimateResult) -> bool:
    """A fix whose estimate cannot come out under this one's, so that it is skipped where
    this one is over the cap (skipping saves an estimate per card count):

    - one that sets what the engine already assumed: training_recipe.training_setup turns
      checkpointing on for a model of 1B or more when not told, and says so;
    - one that only shrinks what the forward and backward pass hold (`ACTIVATION_FIXES`),
      on an estimate whose peak is the optimizer step (its `optimizer_step` term, which
      training.estimate_training adds only then): the weights, gradients, optimizer states
      and the step's buffer stay, so the step's peak stays and the new peak is at least it
      (a full fine-tune of a 70B model: a fused loss or a shorter sequence changes
      nothing). tests/test_recommend_cheap_floor.py checks both on every count."""
    if code == "checkpointing" and any(
        a.field == "gradient_checkpointing" and a.value == "on" for a in result.assumed
    ):
        return True
    if code.partition(":")[0] not in ACTIVATION_FIXES or result.estimate is None:
        return False
    return any(t.name == "optimizer_step" for t in result.estimate.terms)


# Fixes that change only the saved activations, the loss's logits and a layer's transient
# (batch size, checkpointing, the fused loss, the sequence length): never the weights, the
# gradients, the optimizer's states or its step.
ACTIVATION_FIXES = frozenset(("batch", "checkpointing", "chunked_loss", "shorter_context"))


def cheap_floor(result: EstimateResult) -> int:
    """Bytes per card that no `CHEAP` fix takes off: the weights and the CUDA context. A
    cheap fix is a setting of the same run (batch, checkpointing, the loss, the optimizer's
    states, the serving engine's flags, the KV cache): the model, its format and its split
    stay, and every estimate's total holds its weights terms (resident, never rebalanced)
    and the context. A card whose cap is under this needs no trial estimate to say that no
    cheap fix makes it comfortable (bench/speed.py's questions: 7.7 -> 7.0 lean estimates
    each). Checked over eval/golden.py's corpus: all 11,682 cheap trials estimated there
    came out at or above their floor (tests/test_recommend_cheap_floor.py checks a sample of
    workloads on every count)."""
    est = result.estimate
    if est is None:
        return 0
    # the context: PyTorch's, or a runtime's own where smaller (llama.cpp's, no slack)
    overhead = sum(t.bytes for t in est.terms if t.name == "runtime_overhead")
    context = min(overhead, CUDA_CONTEXT_BYTES) if overhead else CUDA_CONTEXT_BYTES
    return sum(t.bytes for t in est.terms if t.name == "weights") + context


class CheapFixes:
    """`fixes_for(result, gpu, only_cheap=True, limit=1, blocked=...)` for every card of one
    recommendation: the cheap candidates of each estimate are listed once, each trial
    estimated at most once and only when a card first needs it (as `fixes_for` with a
    shared `trials` would), and each card then only compares bytes and checks its kernels.
    With a limit of one, the first fix that fits is the answer, so no kind is skipped."""

    def __init__(self) -> None:
        # (id(result), blocked) -> (result, candidates not yet listed, listed entries,
        # floor); an entry is (code, make, trial, reqs, changes nothing), trial None until
        # estimated, False on error, reqs None until a card's cap admits the trial
        self._by_result: dict[tuple[int, bool], tuple[EstimateResult, Iterator, list, int]] = {}

    def first(
        self, result: EstimateResult, gpu: GpuSpec, blocked: bool
    ) -> tuple[str, EstimateResult] | None:
        key = (id(result), blocked)
        state = self._by_result.get(key)
        if state is None or state[0] is not result:
            # every cheap candidate is a setting (no costlier fix is cheap)
            source = unblocking_fixes(result) if blocked else setting_fixes(result)
            cheap = ((c, m) for c, m in source if c.partition(":")[0] in CHEAP)
            state = self._by_result[key] = (result, cheap, [], cheap_floor(result))
        _, pending, listed, floor = state
        cap = gpu.usable_vram_bytes * (1 - HEADROOM)
        if floor > cap:
            return None  # every cheap fix's estimate is over the cap: none is tried
        i = 0
        while True:
            if i == len(listed):
                nxt = next(pending, None)
                if nxt is None:
                    return None
                listed.append([nxt[0], nxt[1], None, None, _cannot_lower(nxt[0], result)])
            entry = listed[i]
            i += 1
            code = entry[0]
            if entry[4] and (result.estimate is None or result.estimate.total_bytes > cap):
                continue  # its estimate would be this one's, over the cap as this one is
            if entry[2] is None:
                try:
                    entry[2] = trial_estimate(entry[1]())
                except ValueError:
                    entry[2] = False
            trial = entry[2]
            if trial is False or trial.estimate is None or trial.estimate.total_bytes > cap:
                continue
            if entry[3] is None:  # read only for a change that fits some card
                entry[3] = applicable(trial)
            if blockers(gpu, trial, entry[3]):
                continue
            return code, trial
