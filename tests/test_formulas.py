"""Every memory term names a formula line in both languages, and every placeholder of that
line is filled by the term's values."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from advisor.memory import estimate
from advisor.models.workload import Workload

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"

# One workload per path through the engine: every runtime, recipe and family.
SWEEP = [
    dict(model="llama-3.1-8b", runtime="transformers", prompt_tokens=2000, new_tokens=200),
    dict(model="llama-2-13b", runtime="transformers", legacy_generate=True, batch_size=8),
    dict(model="llama-2-13b", runtime="transformers", legacy_generate=True, new_tokens=1),
    dict(model="qwen2.5-7b", weights_format="gptq-4bit", runtime="transformers"),
    dict(model="qwen2.5-7b", weights_format="awq-4bit", concurrency=16),
    dict(model="qwen2.5-72b", runtime="vllm", num_gpus=2, context_tokens=8192),
    dict(model="llama-3.1-8b", weights_format="q4_k_m"),
    dict(model="llama-3.1-8b", runtime="ollama", n_gpu_layers=20, attention="eager"),
    dict(model="llama-3.1-8b", runtime="exllamav2"),
    dict(model="llama-3.1-8b", mode="load_only"),
    dict(model="llama-3.1-8b", mode="lora", gradient_checkpointing=True),
    dict(model="llama-3.1-8b", mode="full", weights_format="fp32", mixed_precision=True),
    dict(model="llama-3.1-8b", mode="full", num_gpus=8, parallelism="zero3", mixed_precision=True),
    dict(model="llama-3.1-8b", mode="full", num_gpus=8, parallelism="fsdp", cpu_offload="params"),
    dict(model="llama-3.1-8b", mode="full", num_gpus=4, parallelism="ddp", chunked_loss=True),
    dict(
        model="llama-3.1-8b",
        mode="full",
        gradient_checkpointing=True,
        selective_checkpointing=True,
        optimizer="adamw",
    ),
    dict(
        model="llama-3.1-8b", mode="full", batch_size=1, seq_len=128, gradient_checkpointing=False
    ),
    dict(model="sdxl"),
    dict(model="sdxl", cpu_offload="model"),
    dict(model="sdxl", cpu_offload="sequential"),
    dict(model="flux.1-dev", weights_format="nf4", images_per_prompt=4),
    dict(model="flux.1-dev", cpu_offload="model", images_per_prompt=8),
    dict(model="flux.1-dev", mode="lora"),
    dict(model="hunyuanvideo", vae_tiling=True),
    dict(model="flux.1-dev", weights_format="torchao-int8", quantize_after_load=True),
    dict(model="resnet50", mode="full"),
    dict(model="resnet50"),
    dict(model="bert-large", mode="full"),
]


def formulas(lang: str) -> dict[str, str]:
    with (TEMPLATES / lang / "formulas.toml").open("rb") as fh:
        return tomllib.load(fh)["formula"]


def terms():
    for fields in SWEEP:
        est = estimate(Workload(**fields)).estimate
        assert est is not None
        yield from est.terms


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_term_has_a_formula_line_filled_by_its_values(lang: str) -> None:
    lines = formulas(lang)
    seen = set()
    for term in terms():
        assert term.formula_key in lines, f"{lang}: no formula line for {term.formula_key}"
        text = lines[term.formula_key]
        placeholders = set(re.findall(r"{(\w+)", text))
        missing = placeholders - set(term.values)
        assert not missing, f"{lang}: {term.formula_key} lacks values {missing}"
        text.format(**term.values)  # renders
        seen.add(term.formula_key)
    assert len(seen) >= 25  # the sweep reaches most of the engine's formulas


def test_both_languages_have_the_same_formula_keys() -> None:
    assert formulas("zh").keys() == formulas("en").keys()


def test_chinese_formulas_are_chinese() -> None:
    for key, text in formulas("zh").items():
        assert re.search(r"[\u4e00-\u9fff]", text), f"zh formula {key} has no Chinese"


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_details_view_reads_the_formula_lines(lang: str) -> None:
    """formulas.toml keeps its lines under [formula]: the details view fills them in the
    reader's language, never the bare-numbers fallback or the English formula in Chinese."""
    from advisor.parse import parse_query
    from advisor.recommend import recommend_query
    from advisor.render import render

    for q in ("qwen2.5-7b 推理", "全参微调 qwen2.5-7b"):
        parsed = parse_query(q)
        rec = recommend_query(parsed)
        text = render("details", lang, rec=rec, parsed=parsed, canonical=q, plain=True)
        assert ("参数 ×" if lang == "zh" else "params ×") in text, text[:500]
        assert "代入的数值" not in text and (lang == "en" or " params " not in text)


def test_vocabulary_ids_in_formula_values_are_shown_in_the_readers_words() -> None:
    """An optimizer id such as `sgd_momentum` (a detection stack's default) is a value of the
    optimizer line; the Chinese line names it in Chinese, never as the raw id."""
    from advisor.render import formula

    est = estimate(
        Workload(model="faster-rcnn-r50-fpn", mode="full", optimizer="sgd_momentum")
    ).estimate
    term = next(t for t in est.terms if t.formula_key == "optimizer")
    assert term.values["optimizer"] == "sgd_momentum"
    zh = formula("zh", term)
    assert "sgd_momentum" not in zh and "SGD（动量）" in zh
    assert "sgd_momentum" not in formula("en", term)
