"""Settings of the same run stacked on the same cards when no one of them alone makes the job
fit (`stacked_fix`)."""

from __future__ import annotations

from advisor.catalog import GpuSpec
from advisor.constraints import blockers, tp_ok
from advisor.models.result import EstimateResult
from advisor.recommend.estimates import trial_estimate
from advisor.recommend.fix_candidates import _context_of, candidate_fixes, context_fix
from advisor.recommend.headroom import HEADROOM, runs_in

# Settings of the same run on the same cards, stacked when no one of them alone makes it fit
# (70B AWQ at 32k on two 3090s: a lean vLLM, fp8 KV cache and a shorter context together;
# a ZeRO-3 full fine-tune on 8× 4090: micro-batch 1, a fused loss, optimizer offload),
# so that "rent more cards" is never the first advice while the user's own cards can run
# it. For vLLM the whole lean flag set (its label names every flag); for training no
# shorter sequences (they change what is learned).
STACK_TRAINING = ("batch", "checkpointing", "chunked_loss", "optimizer_8bit", "offload")
STACK_INFERENCE = (
    "vllm_lean",
    "vllm_lean_tp",
    "kv_fp8",
    "kv_q8_ollama",
    "kv_q8_llamacpp",
    "kv_q4_exllama",
    "kv_int8_lmdeploy",
    "shorter_context",
)
STACK_STEPS = 8
# Changes offered a halving at a time (fix_candidates): stacked again until the run fits.
HALVED = ("shorter_context", "batch")
# A halved context raised again in steps of this many tokens to the longest that fits (any
# -c / --max-model-len is accepted; a round number is one a user types).
CONTEXT_ROUND = 1024


def stacked_fix(
    result: EstimateResult, gpu: GpuSpec, extra: tuple[str, ...] = ()
) -> tuple[str, bool] | None:
    """The first of `stacked_fixes`, None when there is none."""
    found = stacked_fixes(result, gpu, extra)
    return found[0] if found else None


def stacked_fixes(
    result: EstimateResult, gpu: GpuSpec, extra: tuple[str, ...] = ()
) -> list[tuple[str, bool]]:
    """[("stack:<code>+<code>…", tight)] for settings that together make `result` run on
    `gpu` at the same count, each one kept only where it lowers the figure, taken in
    `candidate_fixes`' order (cheapest first; a shorter context halved until it fits); with
    the guide's headroom when reachable, else tight (`runs_in`). None when even all of them
    do not, or one alone would do (then `fixes_for` already names it). A comfortable stack
    with a shorter context is followed by the tight one found before it (`_found`)."""
    training = result.workload.mode.is_training
    if not tp_ok(result, result.workload.num_gpus):
        return []  # no setting makes tensor parallelism take a count the heads refuse
    allowed = (STACK_TRAINING if training else STACK_INFERENCE) + extra
    comfortable = gpu.usable_vram_bytes * (1 - HEADROOM)
    current, applied = result, []  # type: ignore[var-annotated]
    tight: tuple[list[str], EstimateResult] | None = None
    for _ in range(STACK_STEPS):
        if current.estimate is None:
            return _found(result, None, gpu, tight)
        kinds = {a.partition(":")[0] for a in applied}
        step = _next_step(current, gpu, allowed, extra, kinds - set(HALVED))
        if step is None and kinds & set(extra):
            # nothing else lowers it: the next smaller format in place of the one taken
            # (Llama-2-13B fp16 on a 12 GB card: int8 at 2k stayed at 16.0 GiB, NF4 at 2k
            # runs at 11.1)
            step = _next_step(current, gpu, allowed, extra, kinds - set(HALVED) - set(extra))
        if step is None:
            return _found(result, None, gpu, tight)
        code, current = step
        applied = [a for a in applied if a.partition(":")[0] != code.partition(":")[0]] + [code]
        total = current.estimate.total_bytes  # type: ignore[union-attr]
        if (
            len(applied) > 1
            and runs_in(total, gpu.usable_vram_bytes)
            and not blockers(gpu, current)
        ):
            if total <= comfortable:
                return _found(result, (applied, current), gpu, tight)
            # tight: kept only while no smaller change runs. Halving the context further
            # buys headroom only where the headroom can be reached: 70B AWQ on two 3090s
            # ran tight at 16k and was answered "shorten to 2048", tight still
            tight = tight or (list(applied), current)
            if not _headroom_reachable(current, gpu):
                return _found(result, None, gpu, tight)
    return _found(result, None, gpu, tight)


def _found(
    result: EstimateResult,
    stack: tuple[list[str], EstimateResult] | None,
    gpu: GpuSpec,
    tight: tuple[list[str], EstimateResult] | None = None,
) -> list[tuple[str, bool]]:
    """The comfortable `stack` of `result` (its halved context raised to the longest that still leaves
    the guide's headroom: a halving lands anywhere under it), then the `tight` one found on
    the way, the longest halving that runs (Qwen2.5-14B Q4_K_M with a q8_0 KV cache on a
    12 GB card: 32k was halved to 4096, where ~6k leaves the headroom and 16k runs tight);
    only `tight` when no comfortable one was found."""
    if stack is None:
        return [("stack:" + "+".join(tight[0]), True)] if tight is not None else []
    applied, current = stack
    halved = next((a for a in applied if a.startswith("shorter_context:")), None)
    if halved is not None:
        start = int(halved.partition(":")[2])
        asked = (_context_of(result) or ("", start))[1]
        longest = _longest_context(current, gpu, start, max(asked, start + 1))
        applied = [f"shorter_context:{longest}" if a == halved else a for a in applied]
    found = [("stack:" + "+".join(applied), False)]
    if tight is not None and halved is not None:
        found.append(("stack:" + "+".join(tight[0]), True))
    return found


def _longest_context(current: EstimateResult, gpu: GpuSpec, halved: int, asked: int) -> int:
    """The longest context in steps of CONTEXT_ROUND, from `halved` up to (not reaching)
    the `asked` one (a smaller format taken after the halving may leave room for more than
    twice it), at which `current`'s run still leaves the guide's headroom."""
    limit = gpu.usable_vram_bytes * (1 - HEADROOM)
    best, step = halved, CONTEXT_ROUND
    low, high = halved // step + 1, (asked - 1) // step  # in steps, both ends tried
    while low <= high:
        mid = (low + high) // 2
        make = context_fix(current, mid * step)
        trial = trial_estimate(make()) if make is not None else None
        if trial is not None and trial.estimate and trial.estimate.total_bytes <= limit:
            best, low = mid * step, mid + 1
        else:
            high = mid - 1
    return best


def _next_step(
    current: EstimateResult,
    gpu: GpuSpec,
    allowed: tuple[str, ...],
    extra: tuple[str, ...],
    taken: set[str],
) -> tuple[str, EstimateResult] | None:
    """The first allowed change not of a kind in `taken` that lowers the figure and that
    the card runs, the extra kinds first (a smaller format before the context is halved
    for it)."""
    est = current.estimate
    if est is None:
        return None
    ordered = sorted(candidate_fixes(current), key=lambda c: c[0].partition(":")[0] not in extra)
    for code, make in ordered:
        kind = code.partition(":")[0]
        if kind not in allowed or kind in taken:
            continue
        try:
            trial = trial_estimate(make())
        except ValueError:
            continue
        if trial.estimate is None or trial.estimate.total_bytes >= est.total_bytes:
            continue
        if blockers(gpu, trial):
            continue  # a setting this card cannot run (vLLM's fp8 KV cache on a 3090)
        return code, trial
    return None


def _headroom_reachable(result: EstimateResult, gpu: GpuSpec) -> bool:
    """Whether everything but the KV cache leaves the guide's 20% free: if not, no shorter
    context brings the run to a comfortable fit, only further from what was asked."""
    est = result.estimate
    if est is None:
        return False
    kv = sum(t.bytes for t in est.terms if t.name == "kv_cache")
    return est.total_bytes - kv <= gpu.usable_vram_bytes * (1 - HEADROOM)
