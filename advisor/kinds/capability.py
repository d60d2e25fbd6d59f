"""Capability: "what can my 3080 run", "能微调多大的模型", "biggest model on 24G". The /fit
table of the card (advisor/fit.py) as rows by task and precision, each with the recipe people
use and a model of that size: chat as a GGUF Q4_K_M file at 4k context (llama.cpp / Ollama),
serving at BF16 / INT8 / INT4, QLoRA and LoRA at 2k tokens, a full fine-tune, and image
generation through the low-VRAM routes (FP8 weights, CPU offload). A card the catalog lacks
is judged by the memory stated ("a 22 GB card"); with neither, the answer asks for the card.
"""

from __future__ import annotations

import tomllib
from functools import cache
from typing import Any

from pydantic import BaseModel

from advisor import catalog
from advisor.catalog import DATA_DIR, GpuSpec
from advisor.constraints import blockers
from advisor.fit import (
    CardFit,
    card_fit,
    fit_for_gpu,
    image_fits,
    largest_model_b,
    largest_tight_model_b,
)
from advisor.memory import estimate
from advisor.models.workload import Workload
from advisor.parse import ParsedQuery
from advisor.recommend import card_with


class CapabilityRow(BaseModel):
    task: str  # chat | serve | qlora | lora | full | image
    precision: str  # q4_k_m | bf16 | int8 | int4 | nf4 | fp8 ...
    recipe: str  # runtime and setting, for the template: "llamacpp 4k", "fp8+offload"
    largest_params_b: float | None  # None: nothing of that kind fits
    example: str | None  # a model of that size people know ("Qwen2.5 14B"), or the pipeline
    # The card's runtimes cannot run the row's recipe (QLoRA needs bitsandbytes, which Apple
    # and ROCm lack): a one-line "runs" list marks it ⛔ rather than offer a size (compare,
    # purchase); the capability answer names it under its table
    blocked: bool = False
    # A larger rung that runs tight: it fits the card with under the guide's 20% free but
    # at least MIN_FREE (the "⚠️ tight" line of every answer), None where none does
    tight_params_b: float | None = None
    tight_example: str | None = None
    # image: a pipeline that stays on the card (no offload) named beside one that needs
    # offload (capability_examples.toml [image] resident), with its route
    also_example: str | None = None
    also_recipe: str | None = None
    also_precision: str | None = None


# What a card's runtimes may not do, each tried on a small model (advisor.constraints):
# QLoRA (bitsandbytes), a vLLM server, AWQ and GPTQ weights (each its own probe: vLLM's
# quantization hardware table marks GPTQ supported on Volta, AWQ only from Turing, read
# 2026-12-07; capabilities.toml awq_needs_turing / gptq_needs_volta), FlashAttention-2 training.
_PROBES: dict[str, dict[str, object]] = {
    "qlora": {"mode": "qlora", "weights_format": "nf4"},
    "vllm": {"runtime": "vllm"},
    "awq": {"weights_format": "awq-4bit", "runtime": "vllm"},
    "gptq": {"weights_format": "gptq-4bit", "runtime": "vllm"},
    "flash_attention": {"mode": "lora", "attention": "flash"},
}


def cannot_run(gpu: GpuSpec) -> list[str]:
    """The probes the card's runtimes cannot run ("qlora", "vllm", …): said in the answer,
    so a capability table never offers what the platform lacks (Apple: no bitsandbytes)."""
    if gpu.spec_confidence == "unknown":
        return []  # a card known only by its memory: nothing is claimed about its kernels
    out = []
    for name, fields in _PROBES.items():
        w = Workload(model="qwen2.5-0.5b", **fields)
        if blockers(gpu, estimate(w)):
            out.append(name)
    return out


class CapabilityAnswer(BaseModel):
    gpu_id: str | None  # None: no card named (the answer asks for it)
    gpu_name: str | None
    count: int
    known_card: bool  # False: judged as a card of the stated memory
    vram_gib: float | None
    rows: list[CapabilityRow]
    fit: CardFit | None
    cannot: list[str] = []  # cannot_run(gpu): what the table's rows assume but it lacks

    def public_json(self) -> dict[str, Any]:
        return {
            "gpu": self.gpu_id,
            "fit": self.fit.model_dump() if self.fit else None,  # /fit's table, as it was
            "count": self.count,
            "known_card": self.known_card,
            "cannot": self.cannot,
            "capability": [
                r.model_dump(include={"task", "precision", "largest_params_b", "example"})
                for r in self.rows
            ],
        }


@cache
def _examples() -> dict[str, Any]:
    with (DATA_DIR / "capability_examples.toml").open("rb") as fh:
        return tomllib.load(fh)


def example_llm(size_b: float | None) -> str | None:
    if size_b is None:
        return None
    model_id = _examples()["llm"].get(f"{size_b:g}")
    spec = catalog.models().get(model_id) if model_id else None
    return spec.name if spec else None


def _image_route(gpu: GpuSpec, model_id: str, resident: bool) -> tuple[str, str] | None:
    """The first route (id, format) that fits `model_id` on the card; `resident`: only
    the routes that keep the whole denoiser on the card through the steps."""
    for route in _examples()["image"]["routes"]:
        if resident and route["offload"] == "sequential":
            continue
        fmt = route["format"] if gpu.bf16_supported or route["format"] != "bf16" else "fp16"
        if image_fits(gpu, model_id, fmt, route["offload"], route.get("text_encoders")):
            return route["id"], fmt
    return None


def _image_row(gpu: GpuSpec) -> CapabilityRow:
    """The largest pipeline through the first route that fits (native, FP8, offload, a
    4-bit denoiser, sequential offload); where that one streams its layers from RAM, or
    needs offload, the everyday pipeline that stays on the card is named beside it."""
    table = _examples()["image"]
    for model_id in table["pipelines"]:
        found = _image_route(gpu, model_id, resident=False)
        if found is None:
            continue
        spec = catalog.models()[model_id]
        row = CapabilityRow(
            task="image",
            precision=found[1],
            recipe=found[0],
            largest_params_b=spec.params_b,
            example=spec.name,
        )
        resident = table["resident"]
        if found[0] not in ("native", "fp8") and model_id != resident:
            also = _image_route(gpu, resident, resident=True)
            if also is not None:
                row.also_example = catalog.models()[resident].name
                row.also_recipe, row.also_precision = also
        return row
    return CapabilityRow(
        task="image", precision="fp16", recipe="none", largest_params_b=None, example=None
    )


_CANNOT: dict[str, list[str]] = {}


def _cannot(gpu: GpuSpec) -> list[str]:
    """cannot_run, once per catalog card (a compare or a purchase lists several cards)."""
    if gpu.id not in catalog.gpus():
        return cannot_run(gpu)
    if gpu.id not in _CANNOT:
        _CANNOT[gpu.id] = cannot_run(gpu)
    return _CANNOT[gpu.id]


def _chat_row(gpu: GpuSpec, count: int) -> CapabilityRow:
    """The largest model to chat with: GGUF Q4_K_M at 4k under llama.cpp (layers split over
    several cards), and a larger one that fits tight."""
    chat_job: dict = {
        "weights_format": "q4_k_m",
        "runtime": "llamacpp",
        "context_tokens": 4096,
        "batch_size": 1,
        **({"parallelism": "layer"} if count > 1 else {}),
    }
    chat = largest_model_b(gpu, count, **chat_job)
    chat_tight = largest_tight_model_b(gpu, count, **chat_job)
    chat_tight = chat_tight if chat_tight and (chat is None or chat_tight > chat) else None
    return CapabilityRow(
        task="chat",
        precision="q4_k_m",
        recipe="llamacpp_4k",
        largest_params_b=chat,
        example=example_llm(chat),
        tight_params_b=chat_tight,
        tight_example=example_llm(chat_tight),
    )


def _finetune_rows(gpu: GpuSpec, count: int, fit: CardFit) -> list[CapabilityRow]:
    """The largest model each fine-tuning recipe trains (QLoRA, LoRA, full), QLoRA's
    tight size beside it as /fit's rung."""
    cannot = _cannot(gpu)
    rows = []
    for mode, fmt in (("qlora", "nf4"), ("lora", "bf16"), ("full", "bf16")):
        size = fit.finetune_b.get(mode)
        tight = None
        if mode == "qlora" and "qlora" not in cannot:
            # as /fit's QLoRA rung (2k tokens, batch 1), on the "⚠️ tight" line
            tight = largest_tight_model_b(
                gpu,
                count,
                mode="qlora",
                weights_format="nf4",
                seq_len=2048,
                batch_size=1,
                **({"parallelism": "fsdp"} if count > 1 else {}),
            )
            tight = tight if tight and (size is None or tight > size) else None
        rows.append(
            CapabilityRow(
                task=mode,
                precision=fmt,
                recipe="1k_checkpointing" if mode == "lora" else "2k",
                largest_params_b=size,
                example=example_llm(size),
                blocked=mode == "qlora" and "qlora" in cannot,
                tight_params_b=tight,
                tight_example=example_llm(tight),
            )
        )
    return rows


def capability_rows(gpu: GpuSpec, count: int, fit: CardFit) -> list[CapabilityRow]:
    rows = [_chat_row(gpu, count)]
    for fmt in ("bf16", "int8", "int4"):
        size = fit.inference_b.get(fmt)
        rows.append(
            CapabilityRow(
                task="serve",
                precision=fmt,
                recipe="4k",
                largest_params_b=size,
                example=example_llm(size),
            )
        )
    rows += _finetune_rows(gpu, count, fit)
    rows.append(_image_row(gpu))
    return rows


def answer(parsed: ParsedQuery, currency: str) -> CapabilityAnswer:
    count = parsed.gpu_count or 1
    if not 1 <= count <= 8:
        count = 1
    gpu = catalog.gpus().get(parsed.gpu_id) if parsed.gpu_id else None
    if gpu is None and parsed.vram_gib:
        gpu = card_with(parsed.vram_gib)
    if gpu is None:
        return CapabilityAnswer(
            gpu_id=None,
            gpu_name=None,
            count=count,
            known_card=False,
            vram_gib=None,
            rows=[],
            fit=None,
        )

    def make() -> CapabilityAnswer:
        known = gpu.id in catalog.gpus()
        fit = card_fit(gpu.id, count) if known else fit_for_gpu(gpu, count)
        return CapabilityAnswer(
            gpu_id=gpu.id,
            gpu_name=gpu.name,
            count=count,
            known_card=known,
            vram_gib=gpu.vram_gb,
            rows=capability_rows(gpu, count, fit),
            fit=fit,
            cannot=cannot_run(gpu),
        )

    return make()
