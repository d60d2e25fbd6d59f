"""Reverse questions: the largest context, batch or model that fits a memory limit.

Each is a binary search over the forward estimate, so it can never disagree with it.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from pydantic import BaseModel

from advisor import catalog
from advisor.catalog import GpuSpec
from advisor.largest import largest
from advisor.memo import Memo
from advisor.memory import estimate
from advisor.models.workload import Workload
from advisor.recommend.headroom import HEADROOM, MIN_FREE
from advisor.recommend.recipes import small_card_recipe


def _total(w: Workload) -> int:
    est = estimate(w).estimate
    return est.total_bytes if est else 0


def _high(w: Workload) -> int:
    est = estimate(w).estimate
    return est.decision_high_bytes if est else 0


def max_context_tokens(
    w: Workload, limit_bytes: int, ceiling: int | None = None, *, safe: bool = True
) -> int | None:
    """Largest context (prompt + generated tokens) that fits `limit_bytes`. `safe`: the
    high end measured on setups like this must fit (Estimate.decision_high_bytes), so a user
    told "up to N tokens" does not meet OOM at N when the real figure sits at the top of
    what was measured (fits decisions are safe against the band);
    off where the limit already carries the guide's 20% headroom."""
    view = _high if safe else _total
    from advisor.memory import resolve_model

    model, _ = resolve_model(w)
    top = ceiling or (model.arch.max_context_tokens if model.arch else 131072)

    def fits(tokens: int) -> bool:
        if w.mode.is_training:
            trial = w.model_copy(update={"seq_len": tokens})
        else:
            trial = w.model_copy(
                update={"context_tokens": tokens, "prompt_tokens": None, "new_tokens": None}
            )
        return view(trial) <= limit_bytes

    return largest(256, max(top, 256), fits)


def max_batch_size(w: Workload, limit_bytes: int, ceiling: int = 4096) -> int | None:
    return largest(
        1, ceiling, lambda b: _total(w.model_copy(update={"batch_size": b})) <= limit_bytes
    )


# Model sizes users actually rent for (billions); the answer is the largest that fits.
# 20 / 22 / 24 / 27: InternLM2-20B, Codestral-22B, Mistral-Small-24B, Gemma-2/3-27B —
# without them a 24 GB card read "INT4 14B" while a 27B at 4 bits fits with headroom.
LORA_SEQ_LEN = 1024  # the LoRA row's recipe, stated beside it (templates/*/fit_lines.j2)
SIZE_LADDER_B = (0.5, 1.5, 3, 7, 8, 13, 14, 20, 22, 24, 27, 32, 34, 70, 72, 110, 180, 405)
CONTEXT_PROBE_MODEL = "llama-3.1-8b"
DIFFUSION_PROBES = ("sd-1.5", "sdxl", "sd3-medium", "flux.1-dev")


class CardFit(BaseModel):
    """What fits one card (or `count` cards) with the guide's 20% headroom."""

    gpu_id: str
    count: int
    limit_bytes: int  # usable VRAM x count x (1 - HEADROOM): the answers' "✅" line
    inference_b: dict[str, float | None]  # format -> largest size, 4k context, batch 1
    # lora / qlora / full -> largest size, batch 1; QLoRA and full at 2k tokens, LoRA by its
    # recipe (LORA_SEQ_LEN tokens, gradient checkpointing on)
    finetune_b: dict[str, float | None]
    context_tokens_8b: int | None  # longest bf16 context for an 8B model
    context_tokens_8b_int4: int | None
    batch_8b: int | None  # most concurrent 4k-token sequences for an 8B model in bf16
    diffusion: dict[str, bool]  # pipeline id -> fits at its default resolution, as loaded
    diffusion_format: str = "bf16"  # what the card runs them in: fp16 where it lacks bf16
    # pipeline id -> the low-VRAM recipe (a small_card_recipes.toml code) it fits with, with
    # the guide's headroom, where it does not as loaded: what people run on the card (SDXL
    # on an 11-12 GB card with the model offloaded and the VAE tiled), as its answer does
    diffusion_recipe: dict[str, str] = {}
    diffusion_recipe_tight: list[str] = []  # of those, the ones that leave under 20% free
    # the 16-bit format the card computes in (bf16; fp16 where it lacks bf16): the name of
    # the "bf16" rows, which cost the same bytes in either
    half_format: str = "bf16"


# A card's table is a pure function of the catalog, the card and the count, and takes tens
# of milliseconds (hundreds of estimates): computed once per process (advisor.memo).
_CARD_FITS: Memo[CardFit] = Memo("card_fit", 512, table=True)


def card_fit(gpu_id: str, count: int = 1) -> CardFit:
    """The shared result: change it only through `model_copy`."""
    return _CARD_FITS.get(
        (catalog.catalog_version(), gpu_id, count),
        lambda: fit_for_gpu(catalog.gpus()[gpu_id], count),
    )


def fit_for_gpu(gpu: GpuSpec, count: int = 1) -> CardFit:
    """`card_fit` for any card, also one known only by its memory ("biggest model on 24G"):
    the largest LLM by format and recipe (`_largest_llms`), an 8B model's longest context
    and batch (`_context_and_batch`), and which image pipelines run (`_diffusion_fit`)."""
    # The same line as every answer's "✅ fits with 20% headroom": need <= usable x 0.8
    # (it was usable / 1.2 = 0.83 of the card: a looser line than the answers' 0.8).
    per_card = int(gpu.usable_vram_bytes * (1 - HEADROOM))
    inference, finetune = _largest_llms(per_card, count)
    ctx, ctx4, batch = _context_and_batch(per_card, count)
    image_format, diffusion, recipes, tight = _diffusion_fit(gpu, per_card, count)
    return CardFit(
        gpu_id=gpu.id,
        count=count,
        limit_bytes=per_card * count,
        inference_b=inference,
        finetune_b=finetune,
        context_tokens_8b=ctx,
        context_tokens_8b_int4=ctx4,
        batch_8b=batch,
        diffusion=diffusion,
        diffusion_format=image_format,
        diffusion_recipe=recipes,
        diffusion_recipe_tight=tight,
        half_format=image_format,
    )


def _largest_llms(
    per_card: int, count: int
) -> tuple[dict[str, float | None], dict[str, float | None]]:
    """The largest LLM (billions) that fits: for inference in bf16, int8 and int4; for
    QLoRA, a full fine-tune and LoRA by the recipes people run. (inference, fine-tune)."""

    def largest(make: Callable[[float], Workload]) -> float | None:
        return _largest_rung(lambda size: _total(make(size)) <= per_card)

    def llm(size: float, /, **kw: object) -> Workload:
        return Workload(params_b=size, num_gpus=count, **kw)

    shard = {"parallelism": "tp"} if count > 1 else {}
    train_shard = {"parallelism": "fsdp"} if count > 1 else {}
    inference = {
        fmt: largest(partial(llm, weights_format=fmt, context_tokens=4096, batch_size=1, **shard))
        for fmt in ("bf16", "int8", "int4")
    }
    # LoRA on 16-bit weights, QLoRA on NF4, full fine-tune with the engine's default format.
    finetune = {
        mode: largest(
            partial(
                llm,
                mode=mode,
                weights_format=fmt,
                seq_len=2048,
                batch_size=1,
                # gradient checkpointing left to the engine, as in an answer (on from 1B):
                # forced on, /fit listed "full 0.5B" for a 4060 Ti 16GB whose answer to
                # "全参微调 0.5b" is tight (off below 1B)
                **train_shard,
            )
        )
        for mode, fmt in (("qlora", "nf4"), ("full", None))
    }
    # LoRA by the recipe people run on a 24 GB card: bf16 base, gradient checkpointing on,
    # sequences of LORA_SEQ_LEN tokens, batch 1 (LLaMA-Factory README "Hardware
    # Requirement": LoRA 16-bit 7B ≈ 16 GB; its SFT examples cut sequences at 1024-2048).
    # At 2k with the whole logits a 4090 read "LoRA 3B", though 7B/8B LoRA on it is routine.
    finetune["lora"] = largest(
        partial(
            llm,
            mode="lora",
            weights_format="bf16",
            seq_len=LORA_SEQ_LEN,
            batch_size=1,
            gradient_checkpointing=True,
            **train_shard,
        )
    )
    return inference, finetune


def _context_and_batch(per_card: int, count: int) -> tuple[int | None, int | None, int | None]:
    """An 8B model's longest context in bf16 and int4, and its largest batch at 4k."""
    shard = {"parallelism": "tp"} if count > 1 else {}
    probe = Workload(
        model=CONTEXT_PROBE_MODEL, weights_format="bf16", batch_size=1, num_gpus=count, **shard
    )
    # per_card already keeps the guide's 20% headroom: judged on the figure, not the band
    ctx = max_context_tokens(probe, per_card, safe=False)
    int4 = probe.model_copy(update={"weights_format": "int4"})
    ctx4 = max_context_tokens(int4, per_card, safe=False)
    batch = max_batch_size(
        probe.model_copy(update={"context_tokens": 4096}), per_card, ceiling=1024
    )
    return ctx, ctx4, batch


def _diffusion_fit(
    gpu: GpuSpec, per_card: int, count: int
) -> tuple[str, dict[str, bool], dict[str, str], list[str]]:
    """Which image pipelines run on the card in the format it runs, and for those that do
    not, the small-card recipe its answer would give (marked tight under 20% free).
    (format, fits, recipes, tight)."""
    # In what the card runs (an answer's default): bf16, fp16 before Ampere. fp16 costs
    # more than bf16 for a T5 text encoder (transformers keeps its `wo` in fp32), so an
    # fp16 probe said ✗ for SD3 Medium on a 3090 that the answer to it calls ✅.
    image_format = "bf16" if gpu.bf16_supported else "fp16"
    diffusion, recipes, tight = {}, {}, []
    for m in DIFFUSION_PROBES:
        w = Workload(model=m, images_per_prompt=1, weights_format=image_format)
        diffusion[m] = _total(w) <= per_card
        if not diffusion[m] and count == 1:
            # the rung its answer would be for (advisor.recommend: full speed, even tight,
            # before layers streamed from RAM), marked tight where it leaves under 20%
            found = small_card_recipe(
                estimate(w), gpu, per_card, int(gpu.usable_vram_bytes * (1 - MIN_FREE))
            )
            if found is not None:
                recipes[m] = found[0]
                if _total(found[1]) > per_card:
                    tight.append(m)
    return image_format, diffusion, recipes, tight


def largest_model_b(gpu: GpuSpec, count: int = 1, **fields: object) -> float | None:
    """The largest size of SIZE_LADDER_B whose workload (`fields` and the size, on `count`
    cards) fits `gpu` with the guide's 20% headroom, as `fit_for_gpu` judges its rows: a
    capability answer's rows beyond /fit's (a GGUF chat model at 4k, say)."""
    per_card = int(gpu.usable_vram_bytes * (1 - HEADROOM))
    return _largest_rung(
        lambda size: _total(Workload(params_b=size, num_gpus=count, **fields)) <= per_card
    )


def largest_tight_model_b(gpu: GpuSpec, count: int = 1, **fields: object) -> float | None:
    """`largest_model_b` on the answers' "⚠️ tight" line: the workload leaves at least
    MIN_FREE of the card's usable memory, under the guide's 20% (advisor.recommend.headroom
    runs_in). The rung a capability answer names as "runs tight" beyond the comfortable one."""
    per_card = int(gpu.usable_vram_bytes * (1 - MIN_FREE))
    return _largest_rung(
        lambda size: _total(Workload(params_b=size, num_gpus=count, **fields)) <= per_card
    )


def _largest_rung(fits: Callable[[float], bool]) -> float | None:
    """The largest rung of SIZE_LADDER_B that fits, climbing until one fails after one fit.
    Below the first that fits the climb goes on: the defaults change with size (gradient
    checkpointing on from 1B), so a 0.5B QLoRA run without it needed more than 1.5B with it
    and a 3080's table read "QLoRA —" beside "LoRA 1.5B"."""
    best = None
    for size in SIZE_LADDER_B:
        if fits(size):
            best = size
        elif best is not None:
            break
    return best


def image_fits(
    gpu: GpuSpec,
    model_id: str,
    weights_format: str,
    offload: str,
    text_encoder_format: str | None = None,
) -> bool:
    """Whether an image pipeline fits `gpu` with headroom: one image at its native size,
    the VAE decode tiled (the same images)."""
    per_card = int(gpu.usable_vram_bytes * (1 - HEADROOM))
    w = Workload(
        model=model_id,
        images_per_prompt=1,
        weights_format=weights_format,
        text_encoder_format=text_encoder_format,
        cpu_offload=offload,
        vae_slicing=True,
        vae_tiling=True,
    )
    return _total(w) <= per_card
