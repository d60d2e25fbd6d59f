"""A question about a pipeline the catalog lacks that names its text encoders ("a 2B DiT
with a Gemma-2-2B text encoder", "文本编码器用 Qwen2.5-VL-3B", "T5-XXL and CLIP-L text
encoders"): each encoder is sized as the pipelines load it (data/quantizers.toml
[text_encoder_embedding.*], from each config.json) or as the catalog holds a decoder LLM /
VLM, and counted beside the generic pipeline's denoiser, not read as the model asked."""

from __future__ import annotations

import pytest

from advisor.memory import GIB, estimate
from advisor.parse import canonical_query, parse_query


@pytest.mark.parametrize(
    ("line", "encoders"),
    [
        ("a 2B DiT with a Gemma-2-2B text encoder, 1024x1024 image generation on a 3060", [2.61]),
        ("某个 4B 文生图模型，文本编码器用 Qwen2.5-VL-3B，4090 够吗", [3.75]),
        ("2b dit 1024x1024 image generation 4090, text encoders clip-l + t5-xxl", [0.123, 4.76]),
        ("3B image generation model with T5-XXL and CLIP-L text encoders on a 3090", [4.76, 0.123]),
    ],
)
def test_the_named_encoders_are_read_and_kept_by_the_canonical_line(
    line: str, encoders: list[float]
) -> None:
    parsed = parse_query(line)
    w = parsed.workload
    assert w is not None and w.model is None
    assert w.text_encoders_params_b == encoders
    again = parse_query(canonical_query(parsed)).workload
    assert again is not None and again.text_encoders_params_b == encoders


def test_a_named_encoder_is_counted_beside_a_generic_dit() -> None:
    w = parse_query("a 2B DiT with a Gemma-2-2B text encoder, 1024x1024 image generation").workload
    assert w is not None
    est = estimate(w).estimate
    assert est is not None
    terms = {t.name: t.bytes / GIB for t in est.terms}
    assert terms["text_encoders"] == pytest.approx(2.61e9 * 2 / GIB, rel=0.01)
    bare = estimate(w.model_copy(update={"text_encoders_params_b": None})).estimate
    assert bare is not None and "text_encoders" not in {t.name for t in bare.terms}


def test_a_catalog_pipeline_keeps_its_own_encoders_and_other_words_are_left_alone() -> None:
    flux = parse_query("flux dev t5 text encoder on cpu 4060").workload
    assert flux is not None and flux.model == "flux.1-dev" and not flux.text_encoders_on_gpu
    assert flux.text_encoders_params_b is None
    llm = parse_query("qwen2.5-vl-3b 推理 4090").workload
    assert llm is not None and llm.model == "qwen2.5-vl-3b"
