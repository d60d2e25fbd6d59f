"""Every point a question asks is answered: a KV-cache type asked in passing ("kv想用q8_0")
is read and sized, with the runtime's own switch; everyday words ("放得下吗", "per gpu",
"aws g5") are read, not listed as not understood."""

from __future__ import annotations

import pytest

from advisor.parse import parse_query
from advisor.recommend import recommend_query
from advisor.render import render


def _answer(q: str, lang: str) -> str:
    parsed = parse_query(q)
    rec = recommend_query(parsed, default_currency="CNY" if lang == "zh" else "USD")
    return render("answer", lang, rec=rec, parsed=parsed, canonical=q, view="full", plain=True)


OLLAMA_KV = {
    "zh": "gemma3 27b ollama q4 开32k上下文 a5000 24g放得下吗 kv想用q8_0",
    "en": "gemma3 27b in ollama q4 with 32k context on an a5000 24gb, kv cache q8_0",
}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_kv_type_asked_in_passing_is_sized_with_ollamas_switch(lang: str) -> None:
    parsed = parse_query(OLLAMA_KV[lang])
    assert parsed.workload.kv_cache_dtype == "q8_0"
    assert not parsed.ignored, parsed.ignored
    text = _answer(OLLAMA_KV[lang], lang)
    assert "q8_0" in text.splitlines()[0]
    assert "OLLAMA_KV_CACHE_TYPE=q8_0" in text and "OLLAMA_FLASH_ATTENTION=1" in text


@pytest.mark.parametrize(
    "q", ["qwen2.5-14b ollama kv要用q8_0", "qwen2.5-14b ollama kv cache 想改用 q4_0"]
)
def test_wanting_words_before_the_kv_type(q: str) -> None:
    assert parse_query(q).workload.kv_cache_dtype in ("q8_0", "q4_0")


@pytest.mark.parametrize(
    ("q", "gpu"),
    [
        ("fine-tune flux dev lora with ai-toolkit on an a10g 24gb (aws g5), will it fit", "a10g"),
        ("flux lora on aws g5", "a10g"),
        ("llama 3 8b on a g4dn", "tesla-t4"),
    ],
)
def test_a_cloud_instance_family_is_read_as_its_card(q: str, gpu: str) -> None:
    parsed = parse_query(q)
    assert parsed.gpu_id == gpu
    assert not {"aws", "g5", "g4dn"} & set(parsed.ignored), parsed.ignored


def test_per_gpu_is_read() -> None:
    parsed = parse_query("how much vram per gpu for segformer-b5 cityscapes 1024x1024 training")
    assert "per" not in parsed.ignored


# The questions these rules came from, asked in Chinese: their answers carry no English
# outside tests/test_answer_chinese.py's allow list.
CHINESE = [
    OLLAMA_KV["zh"],
    "两张a4000 16g 用llama.cpp跑qwq-32b q4_k_m 上下文64k -ctk q8_0 -ctv q8_0 行不行",
    "3080 12g 能用bitsandbytes 8bit 加载 baichuan2-13b-chat 吗",
    "kohya 训练 flux lora 显存16g的4080 super 够不够",
    "sdxl lora 用kohya训练 3060 12g 1024分辨率 能跑吗",
    "sd3.5 large 用diffusers 推理 要多少显存 3090ti 24g 够不够 要开offload吗",
    "wan2.2 ti2v 5b 出720p 单卡4090d 能跑吗 要开offload吗",
    "cogvideox-2b 3060 12g 能跑吗 diffusers",
    "yolov5x 从头训练 batch 16 单卡 a4000 16g 会不会爆显存",
    "vllm部署qwen3-32b fp8 组里30个人用 平均上下文8k 要几张l40",
    "glm-4-9b-chat 用transformers bf16 跑 128k 上下文 显存要多少 a100 80g 够吗",
    "yolov8m 训练 batch 32 imgsz 640 单卡 3090 显存够吗",
    "faster-whisper large-v3 fp16 batch_size 8 批量转录 3060 12g 够吗",
]


def test_these_answers_in_chinese_carry_no_english() -> None:
    from tests.test_answer_chinese import leaks_in

    corpus = []
    for q in CHINESE:
        parsed = parse_query(q)
        if parsed.question_kind not in (None, "fit"):
            continue
        corpus.append((q, _answer(q, "zh")))
    assert len(corpus) >= 10
    leaks = leaks_in(corpus)
    assert not leaks, leaks
