"""Serving plans pick cards that hold the model's per-card share (a merged "V100 16/32GB"
entry at its 16 GB), copies of the model before tensor parallel, and a `vllm serve` line
that runs as written (Hugging Face repo, --quantization, --dtype half on Volta)."""

from __future__ import annotations

import pytest

from advisor import Workload, catalog
from advisor.constraints import nvlinked
from advisor.kinds import answer_kind
from advisor.parse import parse_query
from advisor.render import render
from advisor.serving import plan_serving

GIB = 2**30


def _serve(text: str, lang: str = "zh") -> tuple[object, str]:
    parsed = parse_query(text)
    result = answer_kind(parsed, "CNY")
    return result, render("serve", lang, plain=True, result=result, parsed=parsed)


def test_a_rented_v100_is_planned_as_the_16gb_card() -> None:
    rented = {g.id: g for g in catalog.rented_gpus()}
    assert rented["tesla-v100"].usable_vram_gib == catalog.gpus()["tesla-v100-16gb"].usable_vram_gib
    assert catalog.gpus()["tesla-v100"].usable_vram_gib > 30  # "v100 32g" stays 32 GB


def test_qwen32b_bf16_is_never_served_on_16gb_cards_with_less_than_20_percent_free() -> None:
    """Before: 4x "Tesla V100 (16/32GB)" at 16.4 GB of weights per card."""
    plan = plan_serving(Workload(model="qwen2.5-32b"), 50, True, "CNY")
    weights = 32.76e9 * 2
    for o in plan.options:
        gpu = next(g for g in catalog.rented_gpus() if g.id == o.gpu_id)
        per_card = weights / o.cards_per_replica
        assert per_card <= 0.8 * gpu.usable_vram_gib * GIB, (o.gpu_name, o.cards_per_replica)
    assert all(o.gpu_id != "tesla-v100" or o.cards_per_replica >= 8 for o in plan.options)


def test_v100_rentals_in_the_general_recommender_are_16gb() -> None:
    from advisor.recommend.search import rentable_cards

    v100 = next(c for c in rentable_cards() if c.gpu.id == "tesla-v100")
    assert v100.usable_bytes <= 16 * GIB


def test_an_8b_model_at_200_streams_is_never_split_past_a_pair_over_pcie() -> None:
    """Before: 8x RTX A5000 with --tensor-parallel-size 8 over PCIe. A group is a pair, or
    cards all on NVLink, and only where it takes fewer cards than copies on single cards
    (2 A6000 pairs hold 200 streams' KV at 4k on 4 cards; 1-card copies take 5)."""
    plan = plan_serving(Workload(model="llama-3-8b"), 200, False, "CNY")
    assert plan.options
    for o in plan.options:
        gpu = catalog.gpus()[o.gpu_id]
        assert o.cards_per_replica <= 2 or nvlinked(gpu, o.cards_per_replica), o
    a6000 = plan_serving(Workload(model="llama-3-8b"), 200, False, "CNY", gpu_ids=["rtx-a6000"])
    assert (a6000.options[0].cards_per_replica, a6000.options[0].total_cards) == (2, 4)


def test_a_model_one_card_cannot_hold_still_gets_tensor_parallel() -> None:
    plan = plan_serving(Workload(model="qwen2.5-72b"), 20, False, "CNY")
    small = [o for o in plan.options if catalog.gpus()[o.gpu_id].vram_gb <= 96]
    assert small and all(o.cards_per_replica >= 2 for o in small)


def test_vllm_serve_line_names_the_hugging_face_repo() -> None:
    """Before: `vllm serve qwen2.5-32b` (not a repo id; fails when pasted)."""
    _, text = _serve("部署 qwen2.5-32b 给实验室50个人同时用 vllm 要什么卡")
    assert "vllm serve Qwen/Qwen2.5-32B-Instruct " in text
    _, text = _serve("vllm 跑 llama3-8b 200并发 需要几张卡")
    # the instruct repo: the base repo has no chat template, so /v1/chat/completions fails
    assert "vllm serve meta-llama/Meta-Llama-3-8B-Instruct " in text


def test_every_catalog_chat_model_is_served_from_its_chat_repo() -> None:
    """Before: Llama, Mistral, Gemma, Yi, Qwen1.5/2 and the small Qwen2.5 entries were read
    from their base repo and served from it; the InternVL / MiniCPM-V entries from their
    decoder's repo, which has no vision tower."""
    speech = {"whisper", "tts"}  # speech models are not served as chat
    for spec in catalog.models().values():
        if spec.kind != "llm" or spec.family in speech:
            continue
        assert spec.chat_repo, spec.id
        assert spec.serve_repo == spec.chat_repo
    _, text = _serve("serve internvl2-8b to 20 users", "en")
    assert "vllm serve OpenGVLab/InternVL2-8B " in text
    _, text = _serve("mixtral-8x7b 并发 20")
    assert "vllm serve mistralai/Mixtral-8x7B-Instruct-v0.1 " in text


def test_nf4_serving_says_bitsandbytes_and_awq_asks_for_the_quantized_repo() -> None:
    _, text = _serve("qwen2.5-32b nf4 50人 vllm")
    assert "--quantization bitsandbytes" in text
    _, text = _serve("qwen2.5-32b awq 50人 vllm")
    assert "--quantization awq" in text and "-AWQ" in text
    _, text = _serve("serve llama-3.1-8b awq to 30 users", "en")  # no vendor AWQ repo: the note
    assert "--quantization awq" in text and "pre-quantized repo" in text
    # the note names the repo the command holds as the one to replace, in both languages
    assert "in place of meta-llama/Llama-3.1-8B-Instruct above" in text
    _, text = _serve("vllm 部署 llama-3.1-8b awq 30人")
    assert "把上面命令里的「meta-llama/Llama-3.1-8B-Instruct」换成" in text


@pytest.mark.parametrize(
    ("line", "lang"),
    [
        ("vllm 部署 qwen3-14b-awq 组里25个人用 上下文4k 要几张 a5500", "zh"),
        ("serve qwen3-14b-awq with vllm for 25 people, 4k context, how many a5500", "en"),
    ],
)
def test_qwen3_awq_is_served_from_qwens_own_awq_repo(line: str, lang: str) -> None:
    """Qwen publishes the Qwen3 dense models as AWQ checkpoints (catalog quantized_repos):
    the command loads Qwen/Qwen3-14B-AWQ, not the 16-bit repo, and no note contradicts it."""
    _, text = _serve(line, lang)
    assert "vllm serve Qwen/Qwen3-14B-AWQ " in text
    assert "vllm serve Qwen/Qwen3-14B " not in text
    assert "pre-quantized repo" not in text and "预量化" not in text


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize(
    ("line", "repo"),
    [
        (
            "vllm 部署 qwen2.5-32b-instruct-awq 20人用 上下文8k 两张4090",
            "Qwen/Qwen2.5-32B-Instruct-AWQ",
        ),
        ("serve qwen2.5-7b gptq int4 to 30 users", "Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4"),
        ("serve qwen2.5-14b gptq int8 to 30 users", "Qwen/Qwen2.5-14B-Instruct-GPTQ-Int8"),
    ],
)
def test_the_printed_vllm_serve_names_the_vendors_quantized_repo(
    line: str, repo: str, lang: str
) -> None:
    """`vllm serve Qwen/Qwen2.5-32B-Instruct --quantization awq` fails (no quantized weights
    in the 16-bit repo): the command names the vendor's own AWQ / GPTQ repo."""
    _, text = _serve(line, lang)
    assert f"vllm serve {repo} " in text, text
    assert (
        "-Instruct --" not in text and "16 位的原版" not in text and "16-bit original" not in text
    )


def test_a_v100_serves_bf16_models_in_fp16_and_says_so() -> None:
    _, text = _serve("serve qwen2.5-14b to 30 students on 4 v100", "en")
    assert "--dtype half" in text and "no bf16" in text


def test_bridged_workstation_cards_take_the_smallest_group_past_a_pair() -> None:
    """A5000s bridge in pairs only: four go over PCIe, so a group of 2 is taken over a
    cheaper group of 4 (before: NVLink was read as linking any count)."""
    from advisor.serving import ServeOption, _best

    def opt(tp: int, price: float) -> ServeOption:
        return ServeOption(
            gpu_id="rtx-a5000", gpu_name="RTX A5000", cards_per_replica=tp, replicas=1,
            total_cards=tp, max_num_seqs=8, kv_tokens_per_replica=1, tokens_per_s_per_user=20,
            tokens_per_s_total=160, meets_target=True, price_per_hour=price, currency="CNY",
            platform=None, price_date=None, flags="",
        )  # fmt: skip

    assert _best([opt(4, 4.0), opt(2, 5.0)], 3)[0].cards_per_replica == 2


def test_h100_vs_h200_for_serving_offers_native_fp8_as_a_change() -> None:
    """Before: bf16 only ("H100 ❌ Does not fit", "H200 … 139 GiB per card of 140 GiB"),
    no word of the fp8 both cards run natively."""
    parsed = parse_query("H100 vs H200 for serving llama 70b")
    result = answer_kind(parsed, "USD")
    sides = result.sides  # type: ignore[attr-defined]
    assert len(sides) == 2 and all(s.fp8_verdict for s in sides)
    assert all(s.fp8_per_card_bytes < s.per_card_bytes for s in sides)
    h200 = next(s for s in sides if s.gpu_id.startswith("h200"))
    assert h200.fp8_verdict == "fits"
    text = render("compare", "en", plain=True, result=result, parsed=parsed)
    assert "Change to FP8 weights" in text


def test_no_fp8_line_for_cards_without_fp8() -> None:
    parsed = parse_query("a100 vs v100 32g for serving qwen2.5-14b")
    result = answer_kind(parsed, "USD")
    assert all(s.fp8_verdict is None for s in result.sides)  # type: ignore[attr-defined]


def test_no_precision_named_on_a_card_with_native_fp8_is_served_in_fp8_before_more_replicas() -> (
    None
):
    """ "serve qwen2.5-7b for 200 users on L4 gpus, how many" was 15 L4s at bf16 (4 sequences
    each) while "fp8" typed gave 2: an L4 (Ada) runs FP8 natively, so the plan tries fp8
    before adding replicas, and says so; a format named, or a card without fp8, keeps it."""
    for line, lang, said in [
        ("serve llama3.1-8b to 500 users on L40S", "en", "native on L40S"),
        ("给 500 个用户部署 llama3.1-8b，L40S 要几张", "zh", "L40S 原生支持 FP8"),
    ]:
        result, text = _serve(line, lang)
        assert result.weights_format == "fp8" and result.cards_at_16bit is not None, text
        o = result.plan.options[0]
        assert o.total_cards < result.cards_at_16bit and "--quantization fp8" in o.flags, text
        assert said in text, text
    # 200 people on L4s: 2 cards as fp8 copies, or as one bf16 pair (its KV pooled); never
    # the 15 bf16 copies of before
    fp8, _ = _serve("serve qwen2.5-7b fp8 for 200 users on L4 gpus", "en")
    plain, _ = _serve("serve qwen2.5-7b for 200 users on L4 gpus, how many", "en")
    assert plain.plan.options[0].total_cards == fp8.plan.options[0].total_cards == 2
    for kept in (
        "serve qwen2.5-7b bf16 for 200 users on L4",
        "serve qwen2.5-7b for 200 users on A10",
    ):
        result, text = _serve(kept, "en")
        assert result.fp8_native_on is None and "--quantization" not in text, text


def test_a_model_that_fills_one_card_is_served_by_a_tensor_parallel_pair() -> None:
    """One card's copy of the weights leaves room for 2 sequences of Qwen3-32B fp8 at 8k on
    an L40 (48 GB) and 6 of Phi-4 at 4k on an A100 40GB: a pair pools its KV after one copy,
    so 9 and 40 sequences take 2 cards, not 5 and 7 replicas of one."""
    for line, lang, cards in [
        ("vllm部署qwen3-32b fp8 组里30个人用 平均上下文8k 要几张l40", "zh", "2× L40，共 2 张卡"),
        (
            "serve qwen3-32b fp8 to 30 people with vllm, 8k context, how many l40",
            "en",
            "2× L40 = 2 cards",
        ),
        ("serve phi-4 to 40 concurrent users with vllm, how many a100 40gb", "en", "2× A100 40GB"),
        ("40个并发用 vllm 部署 phi-4，要几张 a100 40g", "zh", "2× A100 40GB"),
    ]:
        result, text = _serve(line, lang)
        o = result.plan.options[0]
        assert (o.cards_per_replica, o.replicas) == (2, 1), text
        assert cards in text and "--tensor-parallel-size 2" in text, text


def test_a_tensor_parallel_group_asked_for_is_the_group_planned() -> None:
    """ "on 2x a100 40gb tensor parallel": replicas of that pair, with its KV per sequence."""
    for line, lang in [
        ("serve phi-4 to 40 concurrent users with vllm on 2x a100 40gb tensor parallel", "en"),
        ("2张a100 40g 张量并行 vllm 部署 phi-4 给 40 个并发", "zh"),
    ]:
        result, text = _serve(line, lang)
        assert result.plan.kv_bytes_per_sequence > 0.5 * GIB, text
        assert all(o.cards_per_replica == 2 for o in result.plan.options), text
        assert "--tensor-parallel-size 2" in text, text


def test_a_count_asked_of_the_card_named_is_answered_enough_or_not() -> None:
    """ "30 个学生同时用 qwen2.5-14b，用 4 张 4090 够吗" was answered "2× RTX 4090 …" with no
    word on the 4 asked: now it says 4 are enough (2 do it in FP8; bf16 takes 6, so 4
    would not be, in 16 bits), in both languages."""
    result, zh = _serve("30 个学生同时用 qwen2.5-14b，用 4 张 4090 够吗")
    assert result.asked_cards == 4 and result.asked_gpu_id == "rtx-4090"
    top = result.plan.options[0]
    assert top.gpu_id == "rtx-4090" and top.total_cards <= 4
    assert "你问的 4 张 GeForce RTX 4090：够" in zh
    _, en = _serve("30 students using qwen2.5-14b at once, are 4x 4090 enough", "en")
    assert "The 4× GeForce RTX 4090 you asked about: enough" in en
    if result.cards_at_16bit and result.cards_at_16bit > 4:
        assert "4 张不够" in zh and "so 4 are not enough" in en


def test_a_count_below_the_plan_is_answered_not_enough() -> None:
    result, zh = _serve("500 个学生同时用 qwen2.5-7b，用 1 张 4090 够吗")
    top = result.plan.options[0]
    assert top.gpu_id == "rtx-4090" and top.total_cards > 1
    assert f"你问的 1 张 GeForce RTX 4090：不够，要 {top.total_cards} 张" in zh
    _, en = _serve("500 students using qwen2.5-7b at once, is 1x 4090 enough", "en")
    assert f"you asked about: not enough, it takes {top.total_cards}" in en


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        (
            "how many a10gs to serve qwen2.5-14b-instruct to 30 concurrent users with 8k "
            "context each in vllm?",
            "en",
        ),
        ("vllm 部署 qwen2.5-14b-instruct 给 30 个并发用户 每个 8k 上下文 要几张 a10g", "zh"),
    ],
)
def test_a_model_no_pcie_pair_holds_is_split_over_four_pcie_cards(text: str, lang: str) -> None:
    """Before: tensor parallelism past a pair was tried only over NVLink, so A10Gs (PCIe)
    had no plan for Qwen2.5-14B at 8k and the answer said no machine of up to 8 cards holds
    it; a group of 4 at --tensor-parallel-size 4 (AWS g5.12xlarge) serves it."""
    result, out = _serve(text, lang)
    options = result.plan.options  # type: ignore[attr-defined]
    assert options and options[0].gpu_id == "a10g" and options[0].cards_per_replica == 4
    assert "--tensor-parallel-size 4" in out


def test_a_model_one_card_holds_is_still_not_split_over_pcie() -> None:
    """The rule the fallback keeps: an 8B model on RTX A5000s gets single-card replicas."""
    result, _ = _serve("serve llama-3.1-8b to 30 users on rtx a5000", "en")
    assert all(o.cards_per_replica == 1 for o in result.plan.options)  # type: ignore[attr-defined]
