"""The engine's memos (advisor.memo) never change an answer: every generated question gives
byte-identical replies with the memos on (first computed, then remembered) and off, in both
languages; the keys hold everything an answer depends on; the memos stay bounded."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest

from advisor import catalog, memo
from advisor.fit import CONTEXT_PROBE_MODEL, card_fit
from advisor.models.workload import Workload
from advisor.parse import canonical_query, parse_query
from advisor.recommend import recommend_query
from advisor.recommend.grid import precision_grid
from advisor.recommend.pricing import ALL_REGIONS, cheapest_price
from bot.answer import answer_text
from tests.test_answer_generated import QUESTIONS


def reader(lang: str, prices_file: Path | None = None) -> SimpleNamespace:
    """What answer_text reads of a bot Context: the language and the price-list setting."""
    return SimpleNamespace(lang=lang, settings=SimpleNamespace(prices_file=prices_file))


def replies(questions: list[str], templates: tuple[str, ...] = ("answer",)) -> list[str]:
    out = []
    for i, q in enumerate(questions):
        parsed = parse_query(q)
        assert parsed.ok, (q, parsed.error)
        lang = ("zh", "en")[i % 2]
        for template in templates:
            region = ALL_REGIONS if i % 5 == 0 else None  # "every platform" on some
            _, body = answer_text(parsed, reader(lang), template, region=region)  # type: ignore[arg-type]
            out.append(body)
    return out


@pytest.fixture
def memos_off() -> Iterator[None]:
    memo.set_enabled(False)
    try:
        yield
    finally:
        memo.set_enabled(True)


def test_generated_answers_are_byte_identical_with_the_memos_on_and_off() -> None:
    memo.set_enabled(False)
    try:
        plain = replies(QUESTIONS)
    finally:
        memo.set_enabled(True)
    first = replies(QUESTIONS)
    again = replies(QUESTIONS)  # every reply now from the memo
    assert first == plain
    assert again == plain
    hits = memo.stats()["answer"][1]
    assert hits >= len(QUESTIONS)  # the second round really was remembered


def test_the_details_view_is_identical_too() -> None:
    sample = QUESTIONS[::8]
    memo.set_enabled(False)
    try:
        plain = replies(sample, ("answer", "details"))
    finally:
        memo.set_enabled(True)
    assert replies(sample, ("details", "answer")) != []  # filled in the other order
    assert replies(sample, ("answer", "details")) == plain


def test_the_same_question_differs_by_language_and_currency() -> None:
    parsed = parse_query("qwen2.5-7b lora on 4090")
    _, zh = answer_text(parsed, reader("zh"))  # type: ignore[arg-type]
    _, en = answer_text(parsed, reader("en"))  # type: ignore[arg-type]
    assert zh != en
    assert "¥" in zh and "$" in en


def test_a_changed_price_file_is_not_answered_from_the_memo(tmp_path: Path) -> None:
    """An operator's PRICES_FILE is re-read on every answer: editing it must show at once."""
    prices = tmp_path / "prices.toml"
    packaged = Path(catalog.__file__).parent / "data" / "prices.toml"
    prices.write_text(packaged.read_text())
    parsed = parse_query("qwen2.5-7b on 4090")
    _, before = answer_text(parsed, reader("zh", prices))  # type: ignore[arg-type]
    # every price doubled: a different answer from a file of the same name
    prices.write_text("\n".join(_double(line) for line in packaged.read_text().splitlines()))
    _, after = answer_text(parsed, reader("zh", prices))  # type: ignore[arg-type]
    memo.set_enabled(False)
    try:
        _, plain = answer_text(parsed, reader("zh", prices))  # type: ignore[arg-type]
    finally:
        memo.set_enabled(True)
    assert after == plain
    assert after != before


def _double(line: str) -> str:
    key, sep, value = line.partition("=")
    if sep and key.strip() == "price_per_gpu_hour":
        return f"{key}= {float(value) * 2:g}"
    return line


def test_a_memo_keeps_at_most_its_size_and_drops_the_least_recently_used() -> None:
    m: memo.Memo[int] = memo.Memo("test-lru", 2)
    calls: list[str] = []

    def value(k: str) -> int:
        calls.append(k)
        return len(calls)

    assert m.get("a", lambda: value("a")) == 1
    assert m.get("b", lambda: value("b")) == 2
    assert m.get("a", lambda: value("a")) == 1  # remembered; "b" is now the oldest
    assert m.get("c", lambda: value("c")) == 3
    assert len(m) == 2
    assert m.get("b", lambda: value("b")) == 4  # was dropped, computed again
    assert calls == ["a", "b", "c", "b"]


def test_with_the_memos_off_nothing_is_remembered(memos_off: None) -> None:
    parsed = parse_query("qwen2.5-7b on 4090")
    answer_text(parsed, reader("en"))  # type: ignore[arg-type]
    answer_text(parsed, reader("en"))  # type: ignore[arg-type]
    assert all(entries == 0 and hits == 0 for entries, hits, _ in memo.stats().values())


def test_a_render_is_keyed_by_every_value_and_its_type() -> None:
    from bot.replies import _frozen

    assert _frozen({"n": 1}) != _frozen({"n": True})  # 1 == True in Python, not in a reply
    assert _frozen({"n": 1}) != _frozen({"n": 1.0})
    assert _frozen({"p": [("a", "b")]}) != _frozen({"p": (("a", "b"),)})
    gpu = catalog.gpus()["rtx-4090"]
    other = gpu.model_copy(update={"vram_gb": 48})
    assert _frozen({"gpu": gpu}) != _frozen({"gpu": other})
    # the engine's dataclass rows (a /gpus or /card reply's prices), field by field
    price = cheapest_price("rtx-4090", catalog.load_prices(None), "CNY")
    assert price is not None
    same = replace(price)
    assert _frozen({"price": price}) == _frozen({"price": same})
    assert _frozen({"price": price}) != _frozen({"price": replace(price, amount=price.amount + 1)})
    assert _frozen({"price": price}) != _frozen(
        {"price": replace(price, in_region=not price.in_region)}
    )
    with pytest.raises(TypeError):
        _frozen({"x": object()})  # no exact form: rendered every time, never remembered


def test_wizard_and_card_replies_are_identical_with_the_memos_on_and_off() -> None:
    from bot.replies import text

    def renders() -> list[str]:
        out = []
        for lang in ("zh", "en"):
            ctx = reader(lang)
            for gpu_id, count in (("rtx-4090", 1), ("a100-80gb-pcie", 2), ("tesla-t4", 4)):
                gpu = catalog.gpus()[gpu_id]
                probe = Workload(model=CONTEXT_PROBE_MODEL)  # type: ignore[call-arg]
                page = {"gpu": gpu, "count": count, "fit": card_fit(gpu_id, count), "price": None}
                grid = precision_grid(probe, gpu, count)
                out.append(text(ctx, "gpu", **page, grid=grid, grid_model="Llama"))  # type: ignore[arg-type]
                out.append(text(ctx, "fit", **page, grid=[], grid_model="Llama"))  # type: ignore[arg-type]
            out.append(text(ctx, "vram_usage"))  # type: ignore[arg-type]
        return out

    memo.set_enabled(False)
    try:
        plain = renders()
    finally:
        memo.set_enabled(True)
    assert renders() == plain
    assert renders() == plain
    assert memo.stats()["render"][1] > 0


def test_a_group_wizard_page_names_its_asker_as_rendered_directly() -> None:
    """The page is remembered once per step with a slot for the asker's name (bot.wizard):
    each asker's page is what rendering it with their own name gives, memos on or off."""
    from advisor.render import render
    from bot.replies import t
    from bot.wizard import _mention, _page, wizard_spec
    from bot.wizard_draft import stated_default

    task = next(iter(wizard_spec()["tasks"]))
    step = wizard_spec()["tasks"][task]["steps"][0]
    for lang in ("zh", "en"):
        for chat_type in ("supergroup", "private"):
            for uid, name in ((1, "Ann <&> Lee"), (2, "李雷")):
                update = SimpleNamespace(
                    effective_user=SimpleNamespace(id=uid, first_name=name),
                    effective_chat=SimpleNamespace(type=chat_type, id=-5),
                )
                draft = {"owner": uid, "task": task, "answers": {}, "path": [], "msg": None}
                group = chat_type != "private"
                ctx = reader(lang)
                direct = render(
                    "wizard",
                    lang,
                    step=step,
                    task=t(ctx, f"task.{task}"),
                    step_no=1,
                    step_total=len(wizard_spec()["tasks"][task]["steps"]),
                    step_label=t(ctx, f"step.{step}"),
                    default=stated_default(draft, step),
                    picked=[],
                    error=None,
                    parsed=None,
                    group=group,
                    mention=_mention(uid, name),
                )
                for _ in range(2):  # computed, then from the memo
                    assert _page(update, ctx, draft, step, None) == direct  # type: ignore[arg-type]
                assert (_mention(uid, name) in direct) is group


# Lines whose re-read canonical form differs from them in the words read (understood,
# assumed, cues), not in what they ask
REREAD = ["13B fp16", "qwen2.5-72b int4 32k", "qlora 70b 2x3090", "sdxl 1024 4 images"]


def test_a_button_press_rereading_the_canonical_line_reuses_the_recommendation() -> None:
    """A button under an answer re-reads the stored canonical line (bot.answer.show_view):
    the recommendation the first reply computed is the one it gets, and each view read
    from it is the reply computed with the memos off."""
    memo.clear_all()
    for q in REREAD:
        first = parse_query(q)
        again = parse_query(canonical_query(first))
        assert again.model_dump_json() != first.model_dump_json()  # the words read differ
        assert recommend_query(again, "USD") is recommend_query(first, "USD")
    with_memos = replies_views(REREAD)
    memo.set_enabled(False)
    try:
        plain = replies_views(REREAD)
    finally:
        memo.set_enabled(True)
    assert with_memos == plain


def replies_views(questions: list[str]) -> list[str]:
    """The first reply, then each section a button opens, as the press reads the question."""
    out = []
    for q in questions:
        first = parse_query(q)
        canonical = canonical_query(first)
        out.append(answer_text(first, reader("en"), canonical=canonical, view="short")[1])
        again = parse_query(canonical)
        for view in ("breakdown", "picks", "assumptions", "pitfalls"):
            out.append(answer_text(again, reader("en"), canonical=canonical, view=view)[1])  # type: ignore[arg-type]
    return out
