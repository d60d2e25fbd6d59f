"""The "I ran it" report parser (advisor/parse/measured.py): figures with their units,
out-of-memory words, where the figure was read, a card and count, and the bad input that
must never be stored."""

from __future__ import annotations

import pytest

from advisor.parse.measured import MAX_BYTES, may_be_report, parse_report

GIB, MIB = 2**30, 2**20


@pytest.mark.parametrize(
    ("text", "value", "ambiguous"),
    [
        ("21.3G", 21.3 * GIB, True),
        ("21800 MiB", 21800 * MIB, False),
        ("21,800 MiB", 21800 * MIB, False),
        ("18 GiB", 18 * GIB, False),
        ("23500MB", 23500 * MIB, True),
        ("实测 21.5G", 21.5 * GIB, True),
        ("显存占用 20G", 20 * GIB, True),
    ],
)
def test_a_figure_is_read_with_its_unit(text: str, value: float, ambiguous: bool) -> None:
    r = parse_report(text)
    assert r.ok and not r.oom
    assert r.value_bytes == int(value)
    assert r.unit_ambiguous is ambiguous


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("measured 18 GiB with nvidia-smi", "nvml"),
        ("21G torch allocated", "allocated"),
        ("torch.cuda.max_memory_allocated 17.2 GB", "allocated"),
        ("reserved 19.5 GB", "reserved"),
        ("torch reserved 19.5 GB", "reserved"),
        ("实测 19.5G torch 保留", "reserved"),  # the Chinese prompt's own words
        ("torch 已分配 17G", "allocated"),
        ("21G", "unknown"),
    ],
)
def test_where_the_figure_was_read(text: str, where: str) -> None:
    assert parse_report(text).where == where


def test_out_of_memory_with_a_card_and_count() -> None:
    r = parse_report("OOM on 2x 3090")
    assert r.ok and r.oom and r.value_bytes is None
    assert (r.gpu_id, r.gpu_count) == ("rtx-3090", 2)
    assert r.is_typed_report


@pytest.mark.parametrize("text", ["OOM", "爆显存", "显存不足", "CUDA out of memory"])
def test_out_of_memory_words(text: str) -> None:
    r = parse_report(text)
    assert r.ok and r.oom and r.is_typed_report


def test_a_card_with_its_memory_after_oom_is_the_card_not_a_figure() -> None:
    r = parse_report("a100 80g OOM")
    assert r.oom and r.gpu_id == "a100-80gb-sxm" and r.value_bytes is None


def test_a_figure_and_a_card_in_chinese() -> None:
    r = parse_report("2张3090 实测 30G")
    assert r.value_bytes == 30 * GIB and (r.gpu_id, r.gpu_count) == ("rtx-3090", 2)


def test_a_hyphen_inside_a_card_name_is_no_minus_sign() -> None:
    r = parse_report("18g on a100-40g")
    assert r.ok and r.value_bytes == 18 * GIB and r.gpu_id == "a100-40gb-sxm"


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("-5G", "negative"),
        ("0 GB", "zero"),
        ("0.0 MiB", "zero"),
        ("3 TB", "absurd"),
        ("2049 GiB", "absurd"),
        ("about 21", "no_unit"),
        ("21 kb", "bad_unit"),
        ("21 斤", "bad_unit"),
        ("it was fine", "no_figure"),
        ("", "empty"),
        ("x" * 400, "too_long"),
    ],
)
def test_bad_input_is_an_error_value(text: str, error: str) -> None:
    r = parse_report(text)
    assert r.error == error and r.value_bytes is None


def test_two_terabytes_is_the_largest_figure_taken() -> None:
    assert parse_report("2048 GiB").value_bytes == MAX_BYTES


@pytest.mark.parametrize(
    "text",
    [
        "实测 21.5G",
        "measured 18 GiB with nvidia-smi",
        "OOM on 2x 3090",
        "nvidia-smi 显示 23500MiB",
        "I saw 20G peak",
        "实测 -5G",  # a report, with an error to answer
    ],
)
def test_typed_messages_that_are_reports(text: str) -> None:
    assert may_be_report(text)  # the quick look lets every one through to the parser
    assert parse_report(text).is_typed_report


@pytest.mark.parametrize(
    "text",
    [
        "qwen 7b lora oom on 4090, what now?",
        "用了 4090",
        "实际 24G 够吗",
        "显存占用多少",
        "21.3G",  # a bare figure typed after an answer may be a card's memory: no cue
        "llama 3 8b fp16",
    ],
)
def test_typed_messages_that_are_not_reports(text: str) -> None:
    assert not parse_report(text).is_typed_report


# --- the judgement and its wording (advisor/measured.py, templates/*/measured_*.j2) ---------


def _estimate(total: int, allocated: int):  # noqa: ANN202 - an advisor.models.estimate.Estimate
    from advisor.models.estimate import Confidence, Estimate

    return Estimate(
        per_gpu=True,
        num_gpus=1,
        terms=[],
        allocated_bytes=allocated,
        total_bytes=total,
        low_bytes=0,
        high_bytes=0,
        confidence=next(iter(Confidence)),
        band_low_fraction=0.15,
        band_high_fraction=0.2,
    )


@pytest.mark.parametrize(
    ("text", "outcome", "view"),
    [
        ("20G", "within", "total"),
        ("24.5G", "above", "total"),  # 20 x 1.2 = 24 is the band's top
        ("16.5G", "below", "total"),  # 20 x 0.85 = 17 its bottom
        ("18G torch allocated", "within", "allocated"),
        ("18G reserved", "within", "allocated"),
        ("21G torch allocated", "above", "allocated"),  # 16 x 1.2 = 19.2
    ],
)
def test_a_figure_is_judged_in_the_view_it_was_read_in(text: str, outcome: str, view: str) -> None:
    from advisor import catalog
    from advisor.measured import judge_report

    j = judge_report(_estimate(20 * GIB, 16 * GIB), parse_report(text), catalog.gpus()["rtx-4090"])
    assert (j.outcome, j.view) == (outcome, view)
    assert j.low_bytes < j.estimate_bytes < j.high_bytes


def test_nvidia_smi_beside_a_serving_engine_is_judged_against_its_reserved_share() -> None:
    """vLLM takes gpu_memory_utilization of the card at start: nvidia-smi shows 71 GiB on an
    80 GB card for a 20 GiB job, as the answer says; torch's count is still the job's."""
    from dataclasses import replace

    from advisor import catalog
    from advisor.measured import judge_report

    est = replace(_estimate(20 * GIB, 18 * GIB), nvidia_smi_bytes=71 * GIB)
    card = catalog.gpus()["a100-80gb-sxm"]
    smi = judge_report(est, parse_report("72G nvidia-smi"), card)
    assert (smi.outcome, smi.view, smi.estimate_bytes) == ("within", "share", 71 * GIB)
    torch = judge_report(est, parse_report("18G torch allocated"), card)
    assert (torch.outcome, torch.view) == ("within", "allocated")


def test_out_of_memory_is_judged_against_the_cards_usable_memory() -> None:
    from advisor import catalog
    from advisor.measured import judge_report

    card = catalog.gpus()["rtx-4090"]
    usable = int(card.usable_vram_gib * GIB)
    over = judge_report(_estimate(usable + GIB, usable), parse_report("OOM"), card)
    under = judge_report(_estimate(usable - GIB, usable - 2 * GIB), parse_report("OOM"), card)
    assert (over.outcome, under.outcome) == ("oom_expected", "oom_missed")
    assert over.limit_bytes == usable and over.measured_bytes is None


def test_summary_median_error_and_band_coverage() -> None:
    from advisor import catalog
    from advisor.measured import judge_report, summarize

    card = catalog.gpus()["rtx-4090"]
    est = _estimate(20 * GIB, 16 * GIB)
    judged = [judge_report(est, parse_report(t), card) for t in ("20G", "25G", "40G", "OOM")]
    s = summarize(judged)
    assert (s.reports, s.figures, s.ooms, s.ooms_agreed) == (4, 3, 1, 0)
    assert s.median_abs_error_pct == 20.0  # errors 0, -20%, -50%
    assert s.band_coverage_pct == 33.3


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("outcome", ["within", "above", "below", "oom_expected", "oom_missed"])
def test_each_outcome_is_one_line_in_each_language(lang: str, outcome: str) -> None:
    from advisor.measured import Judgement
    from advisor.render import render

    oom = outcome.startswith("oom")
    j = Judgement(
        outcome=outcome,  # type: ignore[arg-type]
        view="total",
        estimate_bytes=20 * GIB,
        low_bytes=17 * GIB,
        high_bytes=24 * GIB,
        measured_bytes=None if oom else 21 * GIB,
        limit_bytes=23 * GIB if oom else None,
    )
    body = render("measured_done", lang, j=j, card="GeForce RTX 4090", count=1, where="nvml")
    share = render(
        "measured_done",
        lang,
        j=j.model_copy(update={"view": "share"}),
        card="A100",
        count=1,
        where="nvml",
    )
    assert "\n" not in share
    assert "\n" not in body and "?" not in body
    thanks = {"zh": ("已记录", "我们会核查"), "en": ("Thank you, saved.", "this will be checked")}
    saved, checked = thanks[lang]
    assert (saved if outcome in ("within", "oom_expected") else checked) in body


ERRORS = [
    "empty", "too_long", "no_figure", "no_unit", "bad_unit", "negative", "zero", "absurd",
    "bad_card", "not_yours", "too_old", "prompt_gone", "no_estimate", "changed", "no_answer",
]  # fmt: skip


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("error", ERRORS)
def test_each_refusal_says_nothing_was_saved(lang: str, error: str) -> None:
    from advisor.render import render

    body = render("measured_error", lang, error=error, detail="21", name="Anna", days=180)
    assert ("未保存" if lang == "zh" else "Nothing was saved") in body


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_each_refusal_has_its_own_wording(lang: str) -> None:
    from advisor.render import render

    bodies = {
        render("measured_error", lang, error=e, detail="21", name="A", days=9) for e in ERRORS
    }
    assert len(bodies) == len(ERRORS) - 1  # "empty" is worded as "no_figure"


def test_the_chinese_wording_carries_no_english() -> None:
    """Every Chinese reply of the reports (prompt, each outcome, each refusal) through the
    Chinese replies' English scanner (tests/test_answer_chinese.py)."""
    from advisor.measured import Judgement
    from advisor.render import render
    from tests.test_answer_chinese import leaks_in

    corpus = [
        (
            "prompt",
            render(
                "measured_prompt",
                "zh",
                plain=True,
                mention="小李",
                card="GeForce RTX 4090",
                count=1,
            ),
        )
    ]
    for outcome in ("within", "above", "below", "oom_expected", "oom_missed"):
        for view in ("total", "allocated", "share"):
            j = Judgement(
                outcome=outcome,  # type: ignore[arg-type]
                view=view,  # type: ignore[arg-type]
                estimate_bytes=20 * GIB,
                low_bytes=17 * GIB,
                high_bytes=24 * GIB,
                measured_bytes=21 * GIB,
                limit_bytes=23 * GIB,
            )
            body = render(
                "measured_done",
                "zh",
                plain=True,
                j=j,
                card="GeForce RTX 4090",
                count=1,
                where="nvml",
            )
            corpus.append((f"{outcome}/{view}", body))
    for error in ERRORS:
        body = render(
            "measured_error", "zh", plain=True, error=error, detail="21", name="小李", days=180
        )
        corpus.append((error, body))
    assert not leaks_in(corpus)
