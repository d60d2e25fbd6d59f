""" "Can my card run it?": one model on one setup over precisions x contexts."""

from __future__ import annotations

from advisor.catalog import GpuSpec, find_format, find_model
from advisor.constraints import apple_raised_limit_gb, blockers
from advisor.models.choices import Kind, Mode, Runtime
from advisor.models.estimate import Estimate
from advisor.models.result import EstimateResult
from advisor.models.workload import Workload
from advisor.recommend.card_counts import workload_for
from advisor.recommend.estimates import estimate, trial_estimate
from advisor.recommend.fix_candidates import VLLM_LEAN, VLLM_LEAN_TP, VLLM_LIKE
from advisor.recommend.headroom import HEADROOM, runs_in
from advisor.recommend.lazy_context import lazy_fit
from advisor.recommend.options import GridCell
from advisor.recommend.rank import tp_ok
from advisor.recommend.speed import decode_step_s

GRID_FORMATS = ("bf16", "fp8", "int8", "int4")
GRID_CONTEXTS = (4096, 32768, 131072)
# llama.cpp and its front ends load GGUF files only: their grid shows the GGUF types of each
# width (Ollama's default download is Q4_K_M) and no FP8 row, a type GGUF does not have.
GGUF_RUNTIMES = (Runtime.llamacpp, Runtime.ollama, Runtime.lmstudio)
GGUF_ROWS = {"bf16": "bf16", "fp8": None, "int8": "q8_0", "int4": "q4_k_m"}


def _rows(w: Workload, used: str | None = None) -> list[str]:
    """The grid's formats; the one the answer used (asked, or the model's own checkpoint:
    gpt-oss's MXFP4) takes the row of its width (AWQ in the 4-bit row), so the grid and the
    verdict judge the same thing. A full fine-tune or a pre-training run has one row: its
    weights train in 16-bit with fp32 optimizer states whatever the checkpoint's format, so
    8- and 4-bit rows would judge runs nobody does."""
    name = w.weights_format or used
    asked = find_format(name) if name else None
    rows = list(GRID_FORMATS)
    if w.tuning in (Mode.full, Mode.pretrain):
        rows = ["bf16"]
    if asked is None or asked.id in rows:
        return rows
    width = "int4" if asked.bits < 6 else "int8" if asked.bits < 12 else "bf16"
    return [asked.id if f == width else f for f in rows]


def _gguf_where_blocked(base: Workload, fmt: str, gpu: GpuSpec) -> str:
    """vLLM loads GGUF too (its quantization hardware table: GGUF on AMD GPUs as on NVIDIA):
    a row whose format the card cannot run there (INT8 on a Radeon) is judged as the GGUF
    type of its width (Q8_0), the 8-bit route the answer's fixes name, not ⛔."""
    gguf = GGUF_ROWS.get(fmt)
    if gguf is None or gguf == fmt:
        return fmt
    trial = trial_estimate(base.model_copy(update={"weights_format": fmt}))
    if trial.estimate is None or not blockers(gpu, trial):
        return fmt
    other = trial_estimate(base.model_copy(update={"weights_format": gguf}))
    return gguf if other.estimate is not None and not blockers(gpu, other) else fmt


def _tokens_per_s(result, gpu: GpuSpec, count: int) -> float | None:  # noqa: ANN001
    """One request's decode speed for a cell that runs; None for a card known only by its
    memory (no bandwidth, no speed claimed)."""
    if not gpu.memory_bandwidth_gbs:
        return None
    step = decode_step_s(result, gpu, count)
    return 1 / step if step > 0 else None


def _cell_state(
    result: EstimateResult, est: Estimate, trial: Workload, gpu: GpuSpec, count: int
) -> tuple[str, int, bool]:
    """One cell's state, the figure it is judged on and whether it runs only with vLLM's lean
    flags: ok, tight (also where vLLM's lean flags or a Mac's raised GPU share make it run),
    no, split (tensor parallel cannot use the count) or unsupported (the card cannot run
    it)."""
    need = est.total_bytes
    lean_runs = False
    if (
        not runs_in(need, gpu.usable_vram_bytes)
        and est.runtime is not None
        and est.runtime.value in VLLM_LIKE
    ):
        # the answer's owner fix starts vLLM lean on a small card (eager, a small
        # profile batch, no custom all-reduce): a cell that runs so is ⚠️, not ❌,
        # or "AWQ 4k ❌" stood under "runs at 16k with these flags"
        flags = VLLM_LEAN_TP if count > 1 else VLLM_LEAN
        lean = trial_estimate(trial.model_copy(update=flags)).estimate
        if lean is not None and runs_in(lean.total_bytes, gpu.usable_vram_bytes):
            need, lean_runs = lean.total_bytes, True
    # a Mac past its default GPU share that the raised share holds (the headline's
    # `sudo sysctl iogpu.wired_limit_mb` change): ⚠️, not ❌ under "runs after it"
    raised = apple_raised_limit_gb(gpu)
    after_sysctl = raised is not None and runs_in(need, raised * 2**30)
    if blockers(gpu, result):
        state = "unsupported"
    elif not runs_in(need, gpu.usable_vram_bytes):
        # ⚠️ where the lazy CUDA context of PyTorch 2.1+ makes it run, as the verdict says
        lazy = lazy_fit(need, gpu.usable_vram_bytes, est, gpu) if count == 1 else None
        state = "tight" if after_sysctl or lazy is not None else "no"
    elif not tp_ok(result, count):
        # fits in memory as is; tensor parallel cannot use this count (a cell that
        # fits only with the lean flags is "no", as the verdict on it says)
        state = "no" if lean_runs else "split"
    elif lean_runs or need > gpu.usable_vram_bytes * (1 - HEADROOM):
        state = "tight"
    else:
        state = "ok"
    return state, need, lean_runs and state == "tight"


def _on_the_answers_runtime(
    base: Workload, gpu: GpuSpec
) -> tuple[Workload, Runtime | None, str | None]:
    """The grid's workload pinned to the runtime the answer above assumed, that runtime
    (None where left free) and the weights format the answer used. Left free, each row
    picked its own (FP8 served by vLLM with chunked prefill, INT4 under transformers), and a
    7B's grid read "FP8 128k ⚠️ · INT4 128k ❌" under an answer that says "runtime:
    transformers". An assumed runtime the card cannot run (vLLM on a Pascal card) is not
    pinned: every row would read ⛔ where transformers or llama.cpp run some of them."""
    first = estimate(base)
    runtime = first.estimate.runtime if first.estimate is not None else None
    if runtime is not None and (base.runtime is not None or not blockers(gpu, first)):
        base = base.model_copy(update={"runtime": Runtime(runtime)})
    else:
        runtime = None
    used = next((a.value for a in first.assumed if a.field == "weights_format"), None)
    return base, runtime, used


def _grid_rows(
    w: Workload, base: Workload, used: str | None, runtime: Runtime | None, gpu: GpuSpec
) -> list[str]:
    """The formats of the grid's rows on `runtime`: GGUF quants under llama.cpp and its
    front ends, FP16 for BF16 on a card without it, GGUF where vLLM cannot run a format."""
    rows = _rows(w, str(used) if used else None)
    if runtime in GGUF_RUNTIMES:
        kept = w.weights_format or used  # the answer's own format keeps its row as asked
        rows = [r for f in rows if (r := f if f == kept else GGUF_ROWS.get(f, f)) is not None]
    rows = [f if f != "bf16" or gpu.bf16_supported else "fp16" for f in rows]
    if runtime == Runtime.vllm:
        rows = [_gguf_where_blocked(base, f, gpu) for f in rows]
    return rows


def precision_grid(w: Workload, gpu: GpuSpec, count: int) -> list[GridCell]:
    """✅ fits with the guide's headroom, ⚠️ fits tight, ❌ does not fit, or the card cannot
    run that format (constraints) / the model does not take that context. A card without
    bf16 (V100, T4) gets an FP16 row in its place: the same memory, what it actually runs.
    No grid when no cell says anything (Whisper's 448-token window is under every column),
    nor for a TTS model: its sequence is the speech tokens of the speech it generates
    (memory/tts.py), not a context to pick."""
    spec = find_model(w.model) if w.model else None
    if spec is not None and spec.family == "tts":
        return []
    base, runtime, used = _on_the_answers_runtime(workload_for(w, count), gpu)
    # A training run's length is its sequence (seq_len); context_tokens is what inference
    # reads. Varying the wrong one showed every column of a LoRA question as its asked length
    # ("128k ✅" beside a 4k run that needs most of the card).
    length = "seq_len" if base.mode.is_training else "context_tokens"
    cells: list[GridCell] = []
    rows = _grid_rows(w, base, used, runtime, gpu)
    max_context: int | None = None  # the model's, once the first cell has resolved it
    for fmt in rows:
        for ctx in GRID_CONTEXTS:
            if max_context is not None and ctx > max_context:
                # The model is the same in every cell (formats and contexts do not change
                # which model it is): a context past its window needs no estimate.
                cells.append(GridCell(format=fmt, context_tokens=ctx, state="beyond"))
                continue
            trial = base.model_copy(
                update={
                    "weights_format": fmt,
                    length: ctx,
                    "prompt_tokens": None,
                    "new_tokens": None,
                }
            )
            result = trial_estimate(trial)  # its total alone is shown
            model, est = result.model, result.estimate
            if est is None or model.kind != Kind.llm:
                return []
            if model.arch is not None:
                max_context = model.arch.max_context_tokens
            if model.arch is not None and ctx > model.arch.max_context_tokens:
                cells.append(GridCell(format=fmt, context_tokens=ctx, state="beyond"))
                continue
            state, need, lean = _cell_state(result, est, trial, gpu, count)
            speed = None
            if ctx == GRID_CONTEXTS[0] and state in ("ok", "tight") and not base.mode.is_training:
                speed = _tokens_per_s(result, gpu, count)
            cells.append(
                GridCell(
                    format=fmt,
                    context_tokens=ctx,
                    state=state,
                    per_gpu_bytes=need,
                    tokens_per_s=speed,
                    lean=lean,
                )
            )
    if all(c.state == "beyond" for c in cells):
        return []
    return cells
