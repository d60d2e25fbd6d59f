"""The precision an answer assumes follows the program the user named and the card: the
official openai-whisper package builds its model in fp32 ("官方whisper" is that package),
segment-anything's SAM runs in fp32, and a card without bf16 is never answered in bf16.
The named program is kept: its family word said again is not a second model."""

from __future__ import annotations

import pytest

from advisor.parse import parse_query
from advisor.render import render
from tests.conftest import plain_answer

OFFICIAL_WHISPER = {
    "zh": "whisper medium 用官方whisper 转录 4g显卡 够吗",
    "en": "whisper medium with the official whisper on a 4gb card, enough?",
}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_official_whisper_package_is_answered_in_fp32_and_does_not_fit_4gb(lang: str) -> None:
    parsed = parse_query(OFFICIAL_WHISPER[lang])
    assert parsed.workload.framework == "openai-whisper"
    said = plain_answer(OFFICIAL_WHISPER[lang], lang)
    head = said.splitlines()[0]
    assert "fp32" in head and "bf16" not in said, said
    need = said.splitlines()[1]  # ~5.7 GiB of 4.0 usable: as is it does not fit
    assert "5.7 GiB" in need and "4.0 GiB" in need, said
    # "whisper" said again is the same model, not a second one to ask about separately
    assert "large-v3" not in said, said
    # openai-whisper is its own PyTorch program, not transformers
    assert "transformers" not in said.split("\n\n")[-1], said


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_sam_is_answered_in_fp32_as_segment_anything_runs_it(lang: str) -> None:
    said = plain_answer("sam vit-h inference on a 6gb card", lang)
    assert "fp32" in said.splitlines()[0], said
    assert {"zh": "权重精度 fp32", "en": "weights in fp32"}[lang] in said, said


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_card_without_bf16_is_not_answered_in_bf16(lang: str) -> None:
    said = plain_answer("whisper medium 转录 2080ti 够吗", lang)
    head, assumed = said.splitlines()[0], said.split("\n\n")[-1]
    assert "fp16" in head and "bf16" not in head and "bf16" not in assumed, said


# ---- the named program is kept, and its changes are ones it can make ----------------------

NAMED = {
    "faster_v2": {
        "zh": "faster-whisper large-v2 int8 4g显卡 够吗",
        "en": "faster-whisper large-v2 int8 on a 4gb card, will it fit",
    },
    "sam_small": {"zh": "sam vit-h 推理 6g显卡", "en": "sam vit-h inference on a 6gb card"},
    "unsloth_tight": {
        "zh": "unsloth qlora mistral-nemo-12b 3080ti 12g 够吗",
        "en": "qlora mistral-nemo-12b with unsloth on a 12gb rtx 3080 ti, enough?",
    },
}
RENT_MORE = {"zh": "张卡", "en": "cards"}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_faster_whisper_large_v2_stays_v2_and_gets_only_ctranslate2_changes(lang: str) -> None:
    said = plain_answer(NAMED["faster_v2"][lang], lang)
    head = said.splitlines()[0]
    assert "large-v2" in head and "int8" in head, said
    top = "\n".join(said.splitlines()[:4])
    assert "awq" not in said.lower() and RENT_MORE[lang] not in top, said


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_official_whisper_is_told_faster_whisper_int8_not_more_cards(lang: str) -> None:
    top = "\n".join(plain_answer(OFFICIAL_WHISPER[lang], lang).splitlines()[:4])
    assert "faster-whisper" in top and "int8" in top and RENT_MORE[lang] not in top, top


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_sam_too_big_is_told_a_smaller_sam_not_more_cards(lang: str) -> None:
    top = "\n".join(plain_answer(NAMED["sam_small"][lang], lang).splitlines()[:4])
    # segment-anything's eager attention keeps three score copies a global block: ViT-H
    # (7.1 GiB) and ViT-L are over or tight on 6 GB; ViT-B is the largest SAM that fits
    assert "SAM ViT-B" in top and RENT_MORE[lang] not in top, top


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_one_gpu_unsloth_run_is_not_told_fsdp_or_zero_offload(lang: str) -> None:
    said = plain_answer(NAMED["unsloth_tight"][lang], lang)
    assert "FSDP" not in said and "ZeRO" not in said, said


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_unsloth_grpo_keeps_unsloth_and_its_4bit_default(lang: str) -> None:
    q = {
        "zh": "unsloth grpo 训练 llama-3.2-3b 要多大显存 我只有3080 10g",
        "en": "unsloth grpo llama-3.2-3b on a 3080 10gb",
    }[lang]
    said = plain_answer(q, lang)
    assert "QLoRA" in said.splitlines()[0], said
    assumed = said.split("\n\n")[-1]
    assert (
        "Unsloth" in assumed and {"zh": "默认按 4 bit", "en": "load_in_4bit=True"}[lang] in assumed
    )
    assert {"zh": "框架：TRL（", "en": "framework: TRL ("}[lang] not in assumed, assumed


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_ai_toolkit_is_read_and_its_24gb_floor_named(lang: str) -> None:
    q = {
        "zh": "用ai-toolkit训练flux dev lora a10g 24g 够吗",
        "en": "fine-tune flux dev lora with ai-toolkit on an a10g 24gb, will it fit",
    }[lang]
    parsed = parse_query(q)
    assert parsed.workload.framework == "ai-toolkit" and "ai-toolkit" not in parsed.ignored
    said = plain_answer(q, lang)
    assert "low_vram" in said and "24 GB" in said, said


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_pascal_card_is_known_and_never_answered_in_bf16(lang: str) -> None:
    q = {
        "zh": "whisper medium 用官方whisper 转录 1050ti 4g 够吗",
        "en": "whisper medium on a gtx 1050 ti",
    }[lang]
    parsed = parse_query(q)
    assert parsed.gpu_id == "gtx-1050-ti" and "1050ti" not in parsed.ignored
    said = plain_answer(q, lang)
    assert "GeForce GTX 1050 Ti" in said.splitlines()[1] and "bf16" not in said, said


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_card_table_for_a_card_without_bf16_says_fp16_for_its_lora_base(lang: str) -> None:
    q = {"zh": "1080ti 能跑什么模型", "en": "what can a gtx 1080 ti run"}[lang]
    parsed = parse_query(q)
    from advisor.kinds import answer_kind

    said = render(
        parsed.question_kind,
        lang,
        plain=True,
        result=answer_kind(parsed, "USD"),
        parsed=parsed,
        unknown_card=parsed.unknown_card,
    )
    assert "bf16" not in said and "fp16" in said, said
