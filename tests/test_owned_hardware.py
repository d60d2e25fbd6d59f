"""Hardware people own: the 16 GB V100 apart from the 32 GB one, modded
and older NVIDIA cards, AMD Radeon and Instinct, Apple silicon with its GPU share of the
unified memory; what their runtimes cannot do; a card the catalog lacks is named, never
swapped."""

from __future__ import annotations

import pytest

from advisor import catalog
from advisor.constraints import blockers
from advisor.decode_speed import card_fit, decode_fit, stack_fit
from advisor.memory import estimate
from advisor.models.workload import Workload
from advisor.parse import parse_query
from advisor.recommend.speed import card_speed


@pytest.mark.parametrize(
    ("line", "gpu_id", "vram_gb"),
    [
        ("V100 16G 能跑 qwen2.5-14b 吗", "tesla-v100-16gb", 16),
        ("v100 32g qwen2.5-14b", "tesla-v100", 32),
        ("魔改2080ti 22g 跑 qwen2.5-14b", "rtx-2080-ti-22gb", 22),
        ("titan rtx 能跑什么", "titan-rtx", 24),
        ("3060 12g qwen2.5-7b", "rtx-3060-12gb", 12),
        ("p40 qwen2.5-7b", "tesla-p40", 24),
        ("7900xtx 跑 qwen2.5-14b", "rx-7900-xtx", 24),
        ("rx 7900 xt qwen2.5-7b", "rx-7900-xt", 20),
        ("7900 gre 能跑什么", "rx-7900-gre", 16),
        ("w7900 qwen2.5-32b", "radeon-pro-w7900", 48),
        ("mi300x llama 70b", "mi300x", 192),
        ("mi325x deepseek-r1", "mi325x", 256),
        ("mi250x llama 70b", "mi250x", 128),
        ("instinct mi210 llama 8b", "mi210", 64),
        ("M2 Max 64GB 能跑 llama 70b 吗", "apple-m2-max-64gb", 64),
        ("m4 max 128g qwen2.5-72b", "apple-m4-max-128gb", 128),
        ("macbook pro m1 max 32gb 跑 qwen2.5-14b", "apple-m1-max-32gb", 32),
        ("我的 m3 pro 能跑什么", "apple-m3-pro-18gb", 18),
    ],
)
def test_owned_cards_are_read_as_the_card_named(line: str, gpu_id: str, vram_gb: int) -> None:
    p = parse_query(line)
    assert p.gpu_id == gpu_id and p.unknown_card is None, (line, p.gpu_id, p.unknown_card)
    assert catalog.gpus()[gpu_id].vram_gb == vram_gb


def test_a_16gb_v100_is_judged_with_16gb_not_the_32gb_card() -> None:
    """Before: "V100 16G" read tesla-v100 (32 GB) with an odd memory beside it."""
    p = parse_query("V100 16G 能跑 qwen2.5-14b 吗")
    assert catalog.gpus()[p.gpu_id].usable_vram_gib < 16


def test_apple_silicon_gives_the_gpu_its_default_share_of_unified_memory() -> None:
    gpus = catalog.gpus()
    assert gpus["apple-m2-max-64gb"].usable_vram_gib == 48.0  # 3/4 from 64 GB
    assert gpus["apple-m3-pro-18gb"].usable_vram_gib == pytest.approx(12.0, abs=0.01)  # 2/3
    assert "iogpu.wired_limit_mb" in (gpus["apple-m2-max-64gb"].spec_notes or "")


def _blocked(line: str, **change: object) -> list[str]:
    p = parse_query(line)
    w = p.workload.model_copy(update=change) if change else p.workload
    return blockers(catalog.gpus()[p.gpu_id], estimate(w))


def test_runtimes_that_cannot_run_on_the_platform_are_blockers() -> None:
    # no CUDA on Apple: vLLM is not a runtime there, nor bitsandbytes' QLoRA
    assert "vllm_needs_cuda_rocm_or_xpu" in _blocked("m2 max 64gb qwen2.5-7b vllm")
    assert "bitsandbytes_needs_cuda" in _blocked("m2 max 64gb qwen2.5-7b qlora")
    # AWQ / GPTQ kernels are CUDA's (vLLM's ROCm build has none)
    assert "awq_gptq_need_cuda" in _blocked("7900xtx qwen2.5-14b awq")
    assert "awq_gptq_need_cuda" not in _blocked("4090 qwen2.5-14b awq")
    # llama.cpp runs on both
    assert not _blocked("7900xtx qwen2.5-14b q4_k_m llama.cpp")
    assert not _blocked("m2 max 64gb qwen2.5-14b q4_k_m llama.cpp")


def test_apple_decode_speed_uses_the_llama_cpp_metal_fit() -> None:
    """Was: Apple's bandwidth scaled by 0.5 / 0.55. Now the card keeps its bandwidth and
    decodes by the fit to llama-bench on M2 Ultra / M3 Max (data/decode_speed.toml), whose
    fixed cost per layer is above llama.cpp CUDA's."""
    m2u = catalog.gpus()["apple-m2-ultra-192gb"]
    assert card_speed(m2u).bandwidth == 800e9
    assert card_speed(catalog.gpus()["rtx-4090"]).bandwidth == 1008e9
    metal = decode_fit("transformers", m2u)
    assert metal == card_fit("metal", m2u.id)
    assert metal.layer_s > stack_fit("llamacpp").layer_s


def test_a_card_named_that_the_catalog_lacks_is_said_not_swapped() -> None:
    p = parse_query("arc b580 12g 能跑什么")
    assert p.unknown_card == "arc b580" and p.vram_gib == 12 and p.gpu_id is None
    assert parse_query("昇腾 310p 能跑什么模型").unknown_card == "昇腾 310p"


def test_the_workload_on_an_owned_card_estimates() -> None:
    w = Workload(model="qwen2.5-7b", weights_format="q4_k_m", runtime="llamacpp")
    assert estimate(w).estimate is not None


def test_a_capability_answer_says_what_the_platform_cannot_run() -> None:
    """An Apple chip's table never silently offers QLoRA or vLLM; a Radeon's no QLoRA or
    AWQ; an NVIDIA Ampere card nothing."""
    from advisor.kinds import answer_kind

    def cannot(line: str) -> list[str]:
        return answer_kind(parse_query(line), "USD").cannot

    assert {"qlora", "vllm"} <= set(cannot("我的 m3 pro 能跑什么"))
    assert {"qlora", "awq"} <= set(cannot("what can my 7900 xtx run"))
    assert "vllm" not in cannot("what can my 7900 xtx run")  # vLLM has a ROCm build
    assert cannot("what can my 3090 run") == []


@pytest.mark.parametrize(
    ("line", "gpu_id"),
    [
        ("macbook air m3 16gb what can it run", "apple-m3-16gb"),
        ("mac mini m4 能跑什么", "apple-m4-16gb"),
        ("m2 24g qwen2.5-7b", "apple-m2-24gb"),
    ],
)
def test_a_base_apple_chip_gets_its_share_of_unified_memory_not_all_of_it(
    line: str, gpu_id: str
) -> None:
    """ "macbook air m3 16gb" was judged as a 16 GB GPU: macOS lets the GPU wire about 2/3 of
    a 16 GB Mac (10.67 GB measured on an M4, exo PR #1672). The bare chip name stays a model's
    ("minimax m1"), read as a Mac only after a Mac's name or with its memory."""
    p = parse_query(line)
    assert p.gpu_id == gpu_id and p.vram_gib is None
    gpu = catalog.gpus()[gpu_id]
    assert gpu.vendor == "Apple" and gpu.usable_vram_gib < gpu.vram_gb * 0.7
    assert parse_query("minimax m1 推理").gpu_id is None


def test_a_comparison_does_not_offer_qlora_on_a_card_without_bitsandbytes() -> None:
    """ "RX 7900 XTX 和 4090 哪个适合跑大模型" listed "QLoRA 14B" for both cards: bitsandbytes
    has no ROCm or Apple build, so the Radeon's (and a Mac's) QLoRA is marked ⛔."""
    from advisor.kinds import answer_kind
    from advisor.render import render

    for line in ("RX 7900 XTX 和 4090 哪个适合跑大模型", "m2 max 64g vs 4090"):
        p = parse_query(line)
        a = answer_kind(p, "CNY")
        qlora = {s.gpu_id: next(r for r in s.runs if r.task == "qlora") for s in a.sides}
        assert qlora["rtx-4090"].blocked is False
        assert [g for g, r in qlora.items() if r.blocked] == [p.gpu_id], line
    text = render("compare", "en", plain=True, result=a, parsed=p)
    assert text.count("QLoRA ⛔") == 1
