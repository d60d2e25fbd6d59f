"""Settings of the same run stacked on the same cards when no one of them alone makes the job
fit (`stacked_fix`)."""

from __future__ import annotations

from advisor.catalog import GpuSpec
from advisor.constraints import blockers, tp_ok
from advisor.models.result import EstimateResult
from advisor.recommend.estimates import trial_estimate
from advisor.recommend.fix_candidates import candidate_fixes
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


def stacked_fix(
    result: EstimateResult, gpu: GpuSpec, extra: tuple[str, ...] = ()
) -> tuple[str, bool] | None:
    """("stack:<code>+<code>…", tight) for settings that together make `result` run on
    `gpu` at the same count, each one kept only where it lowers the figure, taken in
    `candidate_fixes`' order (cheapest first; a shorter context halved until it fits); with
    the guide's headroom when reachable, else tight (`runs_in`). None when even all of them
    do not, or one alone would do (then `fixes_for` already names it)."""
    training = result.workload.mode.is_training
    if not tp_ok(result, result.workload.num_gpus):
        return None  # no setting makes tensor parallelism take a count the heads refuse
    allowed = (STACK_TRAINING if training else STACK_INFERENCE) + extra
    comfortable = gpu.usable_vram_bytes * (1 - HEADROOM)
    current, applied = result, []  # type: ignore[var-annotated]
    tight: tuple[str, bool] | None = None
    for _ in range(STACK_STEPS):
        if current.estimate is None:
            return tight
        kinds = {a.partition(":")[0] for a in applied}
        step = _next_step(current, gpu, allowed, extra, kinds - set(HALVED))
        if step is None and kinds & set(extra):
            # nothing else lowers it: the next smaller format in place of the one taken
            # (Llama-2-13B fp16 on a 12 GB card: int8 at 2k stayed at 16.0 GiB, NF4 at 2k
            # runs at 11.1)
            step = _next_step(current, gpu, allowed, extra, kinds - set(HALVED) - set(extra))
        if step is None:
            return tight
        code, current = step
        applied = [a for a in applied if a.partition(":")[0] != code.partition(":")[0]] + [code]
        total = current.estimate.total_bytes  # type: ignore[union-attr]
        if (
            len(applied) > 1
            and runs_in(total, gpu.usable_vram_bytes)
            and not blockers(gpu, current)
        ):
            found = ("stack:" + "+".join(applied), total > comfortable)
            if not found[1]:
                return found
            # tight: kept only while no smaller change runs. Halving the context further
            # buys headroom only where the headroom can be reached: 70B AWQ on two 3090s
            # ran tight at 16k and was answered "shorten to 2048", tight still
            tight = tight or found
            if not _headroom_reachable(current, gpu):
                return tight
    return tight


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
