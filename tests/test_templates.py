"""Every template, in both languages, with hostile values: valid Telegram HTML, within the
length limit (or split into valid pieces), same information in zh and en."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from advisor import catalog
from advisor.fit import card_fit
from advisor.measured import Judgement, ReportSummary
from advisor.parse import ParseError, parse_query
from advisor.recommend import recommend_query
from advisor.recommend.owned import Machine, judge_machines
from advisor.render import TEMPLATES, label, labels, render
from bot.history_store import HistoryEntry
from bot.replies import split_message
from bot.storage import Stats
from hublookup.resolve import HubAnswer
from standin import MAX_TEXT, TelegramHTMLError, utf16_len, visible_text

EVIL = "<b>&\"'</i> 🚀 ${{ 7*7 }}"
TEMPLATE_NAMES = sorted(p.stem for p in (TEMPLATES / "en").glob("*.j2"))


def kind_answer(parsed):  # noqa: ANN001, ANN201
    from advisor.kinds import answer_kind

    return answer_kind(parsed, "CNY")


def contexts() -> dict[str, dict]:
    """A context for every template, each stuffed with hostile text where users can reach."""
    parsed = parse_query("qwen2.5-72b int4 32k on 4090 ¥10/h")
    rec = recommend_query(parsed)
    evil_parsed = parsed.model_copy(update={"ignored": [EVIL] * 3, "assumed": [EVIL]})
    gpu = catalog.gpus()["rtx-4090"]
    entry = HistoryEntry(
        id=1,
        user_id=1,
        chat_id=1,
        raw_text=EVIL,
        canonical=EVIL,
        workload=None,
        summary={"gpu": EVIL, "count": 1},
        catalog_version="v",
        created_at="2026-11-30T00:00:00",
    )
    error = ParseError(code="unknown_model", detail=EVIL, suggestions=[EVIL, "qwen2.5-7b"])
    price = recommend_query(parsed).cheapest.price_per_hour  # type: ignore[union-attr]
    return {
        "answer": {"rec": rec, "parsed": evil_parsed, "canonical": EVIL},
        "details": {"rec": rec, "parsed": evil_parsed, "canonical": EVIL},
        "error": {"error": error, "parsed": evil_parsed},
        "wizard": {
            "step": "model_llm",
            "task": EVIL,
            "step_no": 1,
            "step_total": 5,
            "step_label": EVIL,
            "picked": [(EVIL, EVIL)],
            "error": error,
            "parsed": evil_parsed,
            "group": True,
            "mention": '<a href="tg://user?id=1">x</a>',
        },
        "type_prompt": {"mention": '<a href="tg://user?id=1">x</a>', "step_label": EVIL},
        "gpus": {
            "rows": [(g, price) for g in catalog.gpus().values()],
            "query": EVIL,
            "min_gib": None,
            "total": len(catalog.gpus()),
        },
        "gpu": {"gpu": gpu, "count": 2, "fit": card_fit("rtx-4090", 2), "price": price},
        "fit": {"gpu": gpu, "count": 1, "fit": card_fit("rtx-4090"), "price": None},
        "fit_lines": {"fit": card_fit("rtx-4090")},
        # the kinds of question with their own answers (advisor/kinds)
        "capability": {
            "result": kind_answer(parse_query("biggest model on 22G")),
            "unknown_card": EVIL,
        },
        "out_of_scope": {"result": kind_answer(parse_query("你好"))},
        "serve": {
            "result": kind_answer(parse_query("30个学生用 qwen2.5-7b")),
            "unknown_card": EVIL,
        },
        "purchase": {"result": kind_answer(parse_query("预算2万 买卡 微调 qwen2.5-7b"))},
        "train_time": {
            "result": kind_answer(parse_query("resnet50 imagenet 90 epochs how long")),
            "unknown_card": EVIL,
        },
        "compare": {"result": kind_answer(parse_query("4090还是3090"))},
        "card_usage": {"command": "gpu"},
        "unknown_gpu": {"name": EVIL, "suggestions": [EVIL]},
        "history": {"entries": [entry] * 10},
        "lang": {"group": True},
        "lang_set": {"group_default": True},
        "forget_done": {"deleted": {"questions": 3, "saved_state": 1, "profile": 1}},
        "stats": {
            "stats": Stats(
                users=1,
                chats=2,
                questions=3,
                per_day=[("2026-11-30", 3)],
                top_models=[(EVIL, 2)],
                top_gpus=[(EVIL, 1)],
            ),
            "reports": ReportSummary(
                reports=3,
                figures=2,
                median_abs_error_pct=8.5,
                band_coverage_pct=50.0,
                ooms=1,
                ooms_agreed=1,
            ),
        },
        # "I ran it" reports; the error's detail is the member's own text
        "measured_prompt": {"mention": EVIL, "card": EVIL, "count": 2},
        "measured_done": {
            "j": Judgement(
                outcome="above",
                view="total",
                estimate_bytes=17 * 2**30,
                low_bytes=15 * 2**30,
                high_bytes=20 * 2**30,
                measured_bytes=23 * 2**30,
                error=-0.26,
            ),
            "card": EVIL,
            "count": 2,
            "where": "nvml",
        },
        "measured_error": {"error": "bad_unit", "detail": EVIL, "name": EVIL, "days": 180},
        "help": {"group": True, "bot_username": "GpuAdvisorBot"},
        **lab_contexts(rec, evil_parsed),
        # a Hub repo id is user text too
        "hub_error": {"hub": HubAnswer(repo_id=EVIL, error="gated", suggestions=[EVIL])},
        "hub_looking": {"repo_id": EVIL},
        "about": {
            "catalog_version": "v",
            "gpu_count": 42,
            "model_count": 93,
            "custom_prices": True,
        },
    }


def lab_contexts(rec, parsed) -> dict[str, dict]:  # noqa: ANN001
    """Lab and inline mode: machine names and notes are typed by users."""
    machines = [
        Machine(
            id=1,
            name=EVIL,
            gpu_id="a100-40gb-pcie",
            count=4,
            price_per_card_hour=3,
            currency="CNY",
            note=EVIL,
        ),
        Machine(id=2, name="ws", gpu_id="rtx-3090", count=1, note=None),
    ]
    own = judge_machines(parse_query("llama-3.3-70b fp16").workload, machines)
    return {
        "lab": {
            "machines": [(m, EVIL) for m in machines],
            "group": True,
            "can_change": True,
            "problem": "unknown",
            "detail": EVIL,
            "saved": [EVIL],
            "removed": EVIL,
        },
        "lab_first": {"own": own, "group": True, "chosen": True},
        "lab_prompt": {"mention": '<a href="tg://user?id=1">x</a>', "current": EVIL},
        "lab_forgotten": {"count": 3},
        "inline": {"rec": rec, "parsed": parsed},
        "forget_confirm": {"group": True, "machines": 3},
    }


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("name", TEMPLATE_NAMES)
def test_template_renders_valid_telegram_html_with_hostile_values(name: str, lang: str) -> None:
    body = render(name, lang, **contexts().get(name, {}))
    assert body.strip()
    for chunk in split_message(body):
        shown = visible_text(chunk, "HTML")  # raises where Telegram would answer 400
        assert utf16_len(shown) <= MAX_TEXT
    if EVIL in str(contexts().get(name, {})):
        assert "<b>&\"'</i>" not in body  # never raw


def test_both_languages_have_the_same_templates_and_labels() -> None:
    assert sorted(p.name for p in (TEMPLATES / "zh").glob("*")) == sorted(
        p.name for p in (TEMPLATES / "en").glob("*")
    )
    zh, en = labels("zh"), labels("en")
    assert {s: sorted(v) for s, v in zh.items()} == {s: sorted(v) for s, v in en.items()}


def test_every_memory_term_and_wizard_step_has_a_label() -> None:
    memory = Path(__file__).parent.parent / "advisor" / "memory"
    source = "\n".join(p.read_text(encoding="utf-8") for p in sorted(memory.rglob("*.py")))
    terms = set(re.findall(r'\.add\(\s*"([a-z_]+)"', source)) | {"runtime_overhead"}
    with (Path(__file__).parent.parent / "bot" / "wizard.toml").open("rb") as fh:
        spec = tomllib.load(fh)
    for lang in ("zh", "en"):
        for key in (
            [f"term.{t}" for t in terms]
            + [f"step.{s}" for s in spec["steps"]]
            + [f"task.{t}" for t in spec["tasks"]]
        ):
            assert label(lang, key) != key, f"{lang}: no label for {key}"


def test_both_languages_carry_the_same_numbers_in_an_answer() -> None:
    parsed = parse_query("llama-3.1-8b lora data 100m tokens on 3090")
    rec = recommend_query(parsed)
    numbers = [
        re.findall(
            r"\d+(?:\.\d+)?",
            visible_text(render("answer", lang, rec=rec, parsed=parsed, canonical="x"), "HTML"),
        )
        for lang in ("zh", "en")
    ]
    assert sorted(numbers[0]) == sorted(numbers[1])


def test_split_message_cuts_at_section_boundaries_and_keeps_tags_whole() -> None:
    sections = [
        f"<b>Section {i}</b>\n"
        + "\n".join(f"line {j} <code>x&amp;y</code> 显存" for j in range(40))
        for i in range(8)
    ]
    body = "\n\n".join(sections)
    chunks = split_message(body)
    assert len(chunks) > 1 and "".join(chunks).count("<b>Section") == 8
    for chunk in chunks:
        assert utf16_len(visible_text(chunk, "HTML")) <= MAX_TEXT
        assert chunk.startswith(("<b>Section", "line"))


def test_split_message_survives_one_enormous_line() -> None:
    chunks = split_message("<b>x</b> " + "🚀" * 5000)
    assert all(utf16_len(c) <= MAX_TEXT for c in chunks) and len(chunks) >= 3
    for chunk in chunks:
        visible_text(chunk, "HTML")


def test_the_html_checker_rejects_what_telegram_rejects() -> None:
    for bad in ("<b>13B <fp16></b>", "a & b", "<b>open", "<div>x</div>", "<span>x</span>", "</b>"):
        with pytest.raises(TelegramHTMLError):
            visible_text(bad, "HTML")
    assert visible_text("<b>a</b> &lt;&amp;&gt; &#128640;", "HTML") == "a <&> 🚀"


def test_split_message_never_cuts_inside_a_tag_that_spans_lines() -> None:
    body = "<b>GPUs matching “" + "x\n" * 3000 + "”</b>\n\nnext section"
    for chunk in split_message(body):
        visible_text(chunk, "HTML")
        assert utf16_len(chunk) <= MAX_TEXT


def test_an_out_of_range_value_is_named_in_words_never_as_a_field_name() -> None:
    from advisor.parse import ParseError
    from advisor.render import render

    for detail, zh, en in (
        ("params_b", "参数量", "model size"),
        ("odd thing", "某个数值", "a value"),
    ):
        error = ParseError(code="bad_value", detail=detail)
        assert zh in render("error", "zh", error=error) and "params_b" not in render(
            "error", "zh", error=error
        )
        assert en in render("error", "en", error=error)


def test_rendering_an_answer_leaves_no_cyclic_garbage() -> None:
    """Templates imported their macros `with context`: every render built a module of
    Macro objects tied to its context, ~50 cyclic objects per answer that the collector
    then freed in pauses of up to 22 ms under the load bench. Imported without context the
    module is built once; a render leaves nothing for the cycle collector."""
    import gc

    from advisor.parse import parse_query
    from advisor.recommend import recommend_query
    from advisor.render import render

    parsed = [parse_query(q) for q in ("lora 7b 4090", "3090或4090 跑 qwen2.5-14b", "sdxl 3060")]
    recs = [recommend_query(p) for p in parsed]
    for lang in ("zh", "en"):  # modules and templates loaded before counting
        for p, r in zip(parsed, recs, strict=True):
            render("answer", lang, rec=r, parsed=p, canonical="")
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for lang in ("zh", "en"):
            for p, r in zip(parsed, recs, strict=True):
                for view in ("answer", "details", "inline"):
                    render(view, lang, rec=r, parsed=p, canonical="")
        gc.collect()
        left = [type(o).__name__ for o in gc.garbage]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    assert left == [], left[:20]


def test_after_preload_no_reply_compiles_a_template(monkeypatch: pytest.MonkeyPatch) -> None:
    """bot.warmup compiles every template at start-up. The partials (macros, includes) are
    loaded only when a reply first renders them, so leaving them out put their compiling
    (~64 ms in all) on the first answers under load. A fresh environment, preloaded, then
    every template rendered in both languages with compiling forbidden."""
    from advisor import render as rendering

    rendering._env.cache_clear()
    try:
        rendering.preload_templates()
        env = rendering._env()

        def no_compile(*args: object, **kwargs: object) -> None:
            raise AssertionError(f"compiled after start-up: {args[1:2]}")

        monkeypatch.setattr(env, "compile", no_compile)
        for name in TEMPLATE_NAMES:
            for lang in ("zh", "en"):
                assert render(name, lang, **contexts().get(name, {})).strip()
    finally:
        rendering._env.cache_clear()  # the other tests get a whole environment again
