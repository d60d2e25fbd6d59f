"""Cards people own that the research catalog lacks (advisor/data/gpus_owned.toml): named
by their usual spellings, judged with their capabilities, never priced."""

from __future__ import annotations

import pytest

from advisor import catalog
from advisor.constraints import blockers
from advisor.memory import estimate
from advisor.models.workload import Workload
from advisor.parse import parse_query
from advisor.recommend import recommend_query

OWNED = {
    "2080ti": ("rtx-2080-ti", 11),
    "tesla p100": ("tesla-p100-16gb", 16),
    "p40": ("tesla-p40", 24),
    "1080 ti": ("gtx-1080-ti", 11),
    "rtx 4060": ("rtx-4060", 8),
    "4070": ("rtx-4070", 12),
    "4070 super": ("rtx-4070-super", 12),
    "3060 ti": ("rtx-3060-ti", 8),
    "3070": ("rtx-3070", 8),
    "3080 ti": ("rtx-3080-ti", 12),
    "5080": ("rtx-5080", 16),
    "5070 ti": ("rtx-5070-ti", 16),
    "4060 laptop": ("rtx-4060-laptop", 8),
    "笔记本 4070": ("rtx-4070-laptop", 8),
    "4090 laptop": ("rtx-4090-laptop", 16),
}


@pytest.mark.parametrize(("name", "expected"), OWNED.items())
def test_owned_cards_resolve_to_catalog_entries_with_their_memory(name, expected) -> None:
    gpu_id, gb = expected
    p = parse_query(f"qwen2.5-7b on {name}")
    assert p.gpu_id == gpu_id and p.vram_gib is None
    gpu = catalog.gpus()[gpu_id]
    assert gpu.vram_gb == gb and gpu.sources and gpu.spec_read_date == "2026-11-30"
    assert not [x for x in catalog.load_prices() if x.gpu_id == gpu_id]  # owned: no price


def test_a_modded_2080ti_keeps_its_card_and_the_memory_named() -> None:
    p = parse_query("魔改 2080ti 22g 跑 qwen2.5-14b q4")
    # the modded 22 GB board is a catalog entry of its own (gpus_owned.toml)
    assert (p.gpu_id, p.vram_gib) == ("rtx-2080-ti-22gb", None)
    assert catalog.gpus()[p.gpu_id].vram_gb == 22


def test_turing_and_pascal_have_no_bf16_or_fp8_and_ada_blackwell_do() -> None:
    gpus = catalog.gpus()
    for gpu_id in ("rtx-2080-ti", "tesla-p100-16gb", "tesla-p40", "gtx-1080-ti"):
        assert not gpus[gpu_id].bf16_supported and not gpus[gpu_id].fp8_supported
    for gpu_id in ("rtx-4060", "rtx-4070-super", "rtx-5080", "rtx-4090-laptop"):
        assert gpus[gpu_id].bf16_supported and gpus[gpu_id].fp8_supported
    assert gpus["rtx-2080-ti"].cc == 7.5 and gpus["tesla-p40"].cc == 6.1


def test_capability_rules_apply_to_the_owned_cards() -> None:
    gpus = catalog.gpus()
    bf16_train = estimate(Workload(model="qwen2.5-1.5b", mode="lora", compute_dtype="bf16"))
    assert "no_bf16_training" in blockers(gpus["rtx-2080-ti"], bf16_train)
    assert "no_bf16_training" not in blockers(gpus["rtx-3070"], bf16_train)
    flash = estimate(Workload(model="qwen2.5-1.5b", mode="lora", attention="flash"))
    assert "flash_attention_needs_ampere" in blockers(gpus["rtx-2080-ti"], flash)
    awq = estimate(Workload(model="qwen2.5-7b", weights_format="awq-4bit", runtime="vllm"))
    assert "awq_needs_turing" in blockers(gpus["tesla-p100-16gb"], awq)
    assert not blockers(gpus["rtx-2080-ti"], awq)
    vllm = estimate(Workload(model="qwen2.5-7b", runtime="vllm"))
    assert "serving_engine_needs_volta" in blockers(gpus["tesla-p40"], vllm)
    assert "serving_engine_needs_volta" not in blockers(gpus["tesla-t4"], vllm)
    plain = estimate(Workload(model="qwen2.5-7b"))  # transformers runs on Pascal
    assert not blockers(gpus["tesla-p40"], plain)


def test_p40_and_1080ti_weak_fp16_falls_back_to_the_fp32_rate() -> None:
    gpus = catalog.gpus()
    for gpu_id in ("tesla-p40", "gtx-1080-ti"):
        assert gpus[gpu_id].fp16_bf16_tensor_dense_tflops is None
        assert gpus[gpu_id].dense_tflops == gpus[gpu_id].fp32_tflops


def test_vllm_on_a_p40_is_blocked_with_the_reason_in_the_answer() -> None:
    rec = recommend_query(parse_query("qwen2.5-7b vllm on p40"))
    assert rec.verdict is not None and rec.verdict.state == "blocked"
    assert "serving_engine_needs_volta" in {p.code for p in rec.pitfalls} | {
        n.code for n in rec.named.notes
    }


def test_owned_cards_are_judged_when_named_but_never_proposed_to_rent() -> None:
    rec = recommend_query(parse_query("qwen2.5-7b"))
    proposed = {o.gpu_id for o in rec.options}
    assert not proposed & {gpu_id for gpu_id, _ in OWNED.values()}
    named = recommend_query(parse_query("qwen2.5-1.5b on p40"))
    assert named.named is not None and named.named.gpu_id == "tesla-p40" and named.named.fits


# A used server card bought for a desktop: what to have ready before it runs (cooling,
# power plug, BIOS, display), said in both languages wherever the card is named.
SERVER_CARD_QUESTIONS = [
    (
        "咸鱼上p40 24g好便宜 拿来跑qwen2.5-14b q8 行么",
        "zh",
        ("被动散热", "EPS-12V", "4G 以上地址解码", "视频输出"),
    ),
    (
        "二手 tesla p40 跑 qwen2.5-7b 可以吗",
        "zh",
        ("被动散热", "EPS-12V", "4G 以上地址解码", "视频输出"),
    ),
    (
        "is a used tesla p40 good for llama 3 8b",
        "en",
        ("passively cooled", "EPS-12V", "Above 4G", "no video output"),
    ),
]


@pytest.mark.parametrize(("question", "lang", "words"), SERVER_CARD_QUESTIONS)
def test_a_named_p40_lists_its_desktop_pitfalls(question, lang, words, capsys) -> None:
    from advisor.__main__ import main

    main([question, "--lang", lang])
    out = capsys.readouterr().out
    assert all(w in out for w in words), out


def test_server_card_pitfall_only_on_the_cards_it_names() -> None:
    rec = recommend_query(parse_query("qwen2.5-7b on p40"))
    assert "passive_datacenter_card" in {p.code for p in rec.pitfalls}
    rented = recommend_query(parse_query("qwen2.5-7b on 4090"))
    assert "passive_datacenter_card" not in {p.code for p in rented.pitfalls}


# Kepler and Maxwell server cards still in labs: recognised by name, trained in fp32 (no
# fp16 arithmetic, no bf16), and for Kepler the last driver / CUDA / PyTorch that run it.
OLD_CARD_QUESTIONS = [
    (
        "实验室还有几张k80 还能拿来微调bert-base吗",
        "zh",
        ("Tesla K80", "fp32", "470", "1.12", "两颗"),
    ),
    ("老的tesla k80 能训练 bert-base 吗", "zh", ("Tesla K80", "fp32", "CUDA 12", "1.12")),
    (
        "can our old tesla k80 still fine-tune bert-base?",
        "en",
        ("Tesla K80", "fp32", "470", "1.12", "two separate GPUs"),
    ),
    ("fine-tune bert-base on a k80", "en", ("Tesla K80", "fp32", "CUDA 12", "1.12")),
]


@pytest.mark.parametrize(("question", "lang", "words"), OLD_CARD_QUESTIONS)
def test_a_k80_is_recognised_trains_in_fp32_and_names_its_last_software(
    question, lang, words, capsys
) -> None:
    from advisor.__main__ import main

    main([question, "--lang", lang])
    out = capsys.readouterr().out
    assert all(w in out for w in words), out
    assert "「k80」" not in out, out  # not left among the words it ignored


def test_kepler_and_maxwell_have_their_limits() -> None:
    from advisor import catalog
    from advisor.architectures import architecture_of

    k80, m40 = catalog.gpus()["tesla-k80"], catalog.gpus()["tesla-m40-24gb"]
    assert k80.vram_gb == 12 and k80.usable_vram_gib < 12 and not k80.bf16_supported
    assert m40.vram_gb == 24 and not m40.bf16_supported
    for gpu in (k80, m40):
        arch = architecture_of(gpu)
        assert arch is not None and not arch.fp16_training and not arch.tensor_cores
        assert not arch.vllm and arch.bitsandbytes == "none"
    rec = recommend_query(parse_query("fine-tune bert-base on a m40 24gb"))
    assert rec.named is not None and rec.named.gpu_id == "tesla-m40-24gb"
    assert "legacy_kepler_stack" not in {p.code for p in rec.pitfalls}
    assert "passive_datacenter_card" in {p.code for p in rec.pitfalls}
