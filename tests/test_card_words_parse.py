"""Card and task words read beside numbers: "3050" is a card, not an image side; "full 128k
context" is the whole context window, not a full fine-tune."""

from __future__ import annotations

import pytest

from advisor import catalog
from advisor.models.choices import Mode
from advisor.parse import parse_query


@pytest.mark.parametrize(
    "question",
    [
        "sana 1600m 1024px 用diffusers 出图 3050 8g 够不够 要开offload吗",
        "sana 1600m 1024px with diffusers on an rtx 3050 8g, do I need offload?",
    ],
)
def test_a_3050_is_the_users_card_not_the_image_size(question) -> None:
    p = parse_query(question)
    assert p.workload.image_width in (None, 1024)
    assert p.vram_gib == 8.0
    assert any("RTX 3050" in a for a in p.assumed)


def test_a_bare_number_that_no_latent_model_takes_is_no_image_side() -> None:
    p = parse_query("sdxl 出图 3050")
    assert p.workload.image_width is None


@pytest.mark.parametrize(
    "question",
    [
        "gpt-oss-120b in llama.cpp on a dgx spark 128gb with full 128k context, fits?",
        "gpt-oss-120b 用 llama.cpp 在 128gb 统一内存上跑 full 128k context 行吗",
        "qwen2.5-7b with the full 32768 tokens context on a 4090",
    ],
)
def test_full_before_a_length_is_the_context_not_a_full_fine_tune(question) -> None:
    p = parse_query(question)
    assert p.workload.mode == Mode.inference


def test_a_full_fine_tune_with_a_context_stays_a_full_fine_tune() -> None:
    p = parse_query("full fine-tune qwen2.5-7b 4k context on a100")
    assert p.workload.mode == Mode.full


@pytest.mark.parametrize(
    "question",
    ["framepack 生成视频 4060ti 8g 能跑吗", "can framepack make videos on a 4060 ti 8gb?"],
)
def test_a_4060_ti_8g_is_the_8_gb_board(question) -> None:
    p = parse_query(question)
    assert p.gpu_id == "rtx-4060-ti-8gb" and p.vram_gib is None


@pytest.mark.parametrize(
    "question",
    [
        "ms-swift 全参微调 qwen2.5-32b deepspeed zero3 8卡 h200 max_length 8192 够吗",
        "ms-swift 全参微调 qwen2.5-32b 8张h200 max_length 8192 够吗",
        "ms-swift full fine-tune of qwen2.5-32b with zero3 on 8×h200, max_length 8192, enough?",
    ],
)
def test_a_card_before_a_max_length_knob_is_still_read(question) -> None:
    p = parse_query(question)
    assert p.gpu_id == "h200" and p.gpu_count == 8


@pytest.mark.parametrize(
    "question",
    [
        "一张4090 48g魔改版 能跑哪些模型",
        "4090 魔改48g 能跑哪些模型",
        "what models fit a 4090 48gb?",
    ],
)
def test_a_modded_4090_48g_is_a_48_gb_card(question) -> None:
    p = parse_query(question)
    assert p.gpu_id == "rtx-4090-48gb"
    gpu = catalog.gpus()["rtx-4090-48gb"]
    assert gpu.vram_gb == 48 and gpu.sources and gpu.spec_read_date == "2026-12-07"
    assert parse_query("qwen2.5-7b on a 4090").gpu_id == "rtx-4090"


@pytest.mark.parametrize(
    ("question", "gpu_id", "gb"),
    [
        (
            "vllm 跑 qwen3-4b-fp8 --max-model-len 32768 单卡 rtx 2000 ada 16g 能起来吗",
            "rtx-2000-ada",
            16,
        ),
        ("can vllm serve qwen3-4b-fp8 on one rtx 2000 ada?", "rtx-2000-ada", 16),
        (
            "ms-swift dpo lora 训练 qwen2.5-7b-instruct 单卡 rtx5000 ada 32g 够不够",
            "rtx-5000-ada",
            32,
        ),
        ("ms-swift dpo lora qwen2.5-7b-instruct on an rtx 5000 ada 32gb?", "rtx-5000-ada", 32),
        (
            "detr r50 training in mmdet with batch 4 per gpu on a 12gb titan x pascal, ok?",
            "titan-x-pascal",
            12,
        ),
        ("mmdet detr r50 训练 batch 4 titan x pascal 12g 行吗", "titan-x-pascal", 12),
    ],
)
def test_workstation_and_pascal_titan_cards_are_in_the_catalog(question, gpu_id, gb) -> None:
    p = parse_query(question)
    assert p.gpu_id == gpu_id and p.unknown_card is None
    gpu = catalog.gpus()[gpu_id]
    assert gpu.vram_gb == gb and gpu.sources and gpu.spec_read_date == "2026-12-07"


@pytest.mark.parametrize(
    ("question", "name"),
    [
        (
            "llama.cpp 跑 glm-4.5-air q4_k_m 32k上下文 ai max+ 395 128g 统一内存 行不行",
            "ai max+ 395",
        ),
        ("glm-4.5-air q4_k_m in llama.cpp on a ryzen ai max+ 395 128gb, ok?", "ryzen ai max+ 395"),
    ],
)
def test_a_unified_memory_machine_the_catalog_lacks_is_said_unknown(question, name) -> None:
    p = parse_query(question)
    assert p.gpu_id is None and p.unknown_card == name and p.vram_gib == 128
