"""Names the catalog lacks, typed with a size ("olmo2:7b", "falcon3 10b"), and repo ids typed
in the guided conversation: both reach the Hub. End to end against the
Bot API stand-in and the stand-in Hub; no network."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from advisor.parse import canonical_query, parse_query
from bot.settings import Settings
from hublookup.resolve import HubAnswer, search_texts
from hublookup.standin import HubStandin
from standin import Call, FakeTelegram, User
from tests.conftest import ask, halt, launch, press, settled, shown

TINY = "TinyLlama/TinyLlama-1.1B-Chat-v1.0"


@pytest.fixture
async def hub(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[HubStandin]:
    standin = HubStandin()
    await standin.start()
    monkeypatch.setenv("HF_ENDPOINT", standin.url)
    monkeypatch.setenv("HUB_TIMEOUT_S", "10")
    monkeypatch.delenv("HF_TOKEN", raising=False)
    yield standin
    await standin.stop()


# --- the parser: size known, model unknown ---------------------------------------------------


@pytest.mark.parametrize(
    ("line", "params_b", "name"),
    [
        ("olmo2:7b", 7.0, "olmo2:7b"),
        ("granite3.1-dense:8b on a 4090", 8.0, "granite3.1-dense:8b"),
        ("smollm2:1.7b", 1.7, "smollm2:1.7b"),
        ("smollm2:135m", 0.135, "smollm2:135m"),
        ("falcon3 10b lora", 10.0, "falcon3 10b"),
        ("olmo2的7b 推理", 7.0, "olmo2的7b"),
    ],
)
def test_a_name_the_catalog_lacks_is_read_as_its_size_and_reported(
    line: str, params_b: float, name: str
) -> None:
    p = parse_query(line)
    assert p.ok and p.workload is not None
    assert p.workload.model is None and p.workload.params_b == params_b
    assert p.unrecognized is not None and p.unrecognized.detail == name
    assert name.split(":")[0] not in p.ignored


def test_an_unknown_ollama_tag_is_still_an_ollama_download() -> None:
    p = parse_query("olmo2:7b")
    assert p.workload is not None
    assert p.workload.runtime is not None and p.workload.runtime.value == "ollama"
    assert p.workload.weights_format == "q4_k_m"


def test_the_unrecognized_name_survives_the_canonical_round_trip() -> None:
    p = parse_query("olmo2:7b 4090")
    again = parse_query(canonical_query(p))
    assert canonical_query(p).startswith("olmo2:7b")
    assert again.workload == p.workload and again.unrecognized == p.unrecognized


@pytest.mark.parametrize("line", ["7b", "13B fp16", "qwen2.5:7b", "mistral 7b", "单卡A6000 跑 14b"])
def test_known_models_and_bare_sizes_carry_no_unrecognized_name(line: str) -> None:
    assert parse_query(line).unrecognized is None


@pytest.mark.parametrize("line", ["bs8 7b", "lora64 7b", "cuda12 7b", "step2 7b", "k80 7b"])
def test_a_knob_or_a_setting_glued_to_a_number_is_not_taken_for_a_model(line: str) -> None:
    p = parse_query(line)
    assert p.ok and p.unrecognized is None and p.workload is not None
    assert p.workload.params_b == 7.0


@pytest.mark.parametrize("line", ["lama3-8b", "llama9:7b", "llama9 7b", "olmo-2-7b"])
def test_misspellings_and_known_family_prefixes_stay_did_you_mean_errors(line: str) -> None:
    p = parse_query(line)
    assert not p.ok and p.error is not None and p.error.code == "unknown_model"


def test_an_unknown_latest_tag_is_an_unknown_model_not_a_missing_one() -> None:
    p = parse_query("olmo2:latest")
    assert p.error is not None and p.error.code == "unknown_model"
    assert p.error.detail == "olmo2:latest"


def test_hub_search_texts_hyphenate_as_hub_repos_do() -> None:
    assert search_texts("olmo2:7b") == ["olmo2-7b", "olmo2", "olmo-2"]
    assert search_texts("falcon3 10b") == ["falcon3-10b", "falcon3", "falcon-3"]


def test_the_chinese_note_carries_no_english_outside_the_allow_list() -> None:
    from advisor.recommend import recommend_query
    from advisor.render import render
    from tests.test_answer_chinese import ALLOWED, _names, _words

    parsed = parse_query("olmo2:7b 4090")
    rec = recommend_query(parsed, default_currency="CNY")
    searches = [
        None,
        HubAnswer(repo_id="olmo2:7b", error="unreachable"),
        HubAnswer(repo_id="olmo2:7b", suggestions=["org/other"]),
        HubAnswer(repo_id="olmo2:7b"),
    ]
    texts = [
        render(template, "zh", rec=rec, parsed=parsed, canonical="", hub=searched, plain=True)
        for searched in searches
        for template in ("answer", "details")
    ]
    assert all("没认出模型「olmo2:7b」" in text and "通用的 7B 模型" in text for text in texts)
    assert "连不上" in texts[2] and "org/other" in texts[4] and "也没有" in texts[6]
    texts.append(render("inline", "zh", rec=rec, parsed=parsed, plain=True))
    assert "没认出模型「olmo2:7b」" in texts[-1]
    allowed = {w.lower() for a in ALLOWED for w in _words(a)} | {n.lower() for n in _names()}
    allowed |= {"org", "other"}  # the suggested repo id
    leaks = {
        w
        for text in texts
        for w in _words(text.replace("「olmo2:7b」", ""))
        if w.lower() not in allowed
    }
    assert not leaks, leaks


def _text(call: Call) -> str:
    return call.result.get("text", "") if isinstance(call.result, dict) else ""


# --- the bot, end to end -----------------------------------------------------------------------


async def test_hub_down_answers_for_a_generic_size_and_says_so(
    tg: FakeTelegram, settings: Settings, hub: HubStandin
) -> None:
    await hub.stop()
    app = await launch(settings)
    try:
        text = shown(await ask(tg, User(1), "olmo2:7b on a 4090"))
        assert "I don't recognize the model “olmo2:7b”" in text
        assert "the figures below are for a generic 7B model" in text
        assert "could not be reached" in text
        assert "VRAM per card" in text  # an answer, not a refusal
        zh = shown(await ask(tg, User(2, language_code="zh"), "olmo2:7b 4090"))
        assert "没认出模型「olmo2:7b」" in zh and "通用的 7B 模型" in zh and "连不上" in zh
    finally:
        await halt(tg, app)


async def test_the_hub_search_offers_repos_beside_the_generic_answer(
    tg: FakeTelegram, settings: Settings, hub: HubStandin
) -> None:
    app = await launch(settings)
    try:
        text = shown(await ask(tg, User(1), "smollm2:1.7b"))
        assert "generic 1.7B model" in text
        assert "HuggingFaceTB/SmolLM2-135M-Instruct" in text
        # Ollama's "olmo2" is the Hub's "OLMo-2": the version set apart finds it
        text = shown(await ask(tg, User(2), "olmo2 7b"))
        assert "allenai/OLMo-2-0325-32B" in text and "generic 7B model" in text
    finally:
        await halt(tg, app)
    assert hub.requests["GET /api/models"] >= 2


async def test_a_name_the_hub_lacks_too_is_answered_for_its_size(
    tg: FakeTelegram, settings: Settings, hub: HubStandin
) -> None:
    app = await launch(settings)
    try:
        text = shown(await ask(tg, User(1), "granite3.1-dense:8b"))
        assert "generic 8B model" in text and "has no repo by that name either" in text
    finally:
        await halt(tg, app)


async def test_a_repo_id_typed_at_the_wizard_model_step_is_read_from_the_hub(
    tg: FakeTelegram, settings: Settings, hub: HubStandin
) -> None:
    app = await launch(settings)
    try:
        ann = User(11, "Ann", "en")
        menu = await ask(tg, ann, "/start")
        step = await press(tg, ann, menu, "Run an LLM")
        assert "Step 1/5: Model" in shown(step)
        step = await ask(tg, ann, TINY)
        assert "Step 2/5" in shown(step), shown(step)
        assert "I don't know the model" not in shown(step)
        step = await press(tg, ann, step, "INT8")
        step = await press(tg, ann, step, "32k")
        step = await press(tg, ann, step, "Skip")
        answer = await press(tg, ann, step, "¥10/h")
        text = shown(answer)
        assert "Architecture from the Hugging Face Hub" in text and TINY in text
        assert "1.100B parameters counted in the safetensors headers" in text
        await settled(app)
        rows = await app.repo.recent_history(11, 11)
        assert rows and rows[0].canonical.startswith(TINY)
    finally:
        await halt(tg, app)


async def test_a_missing_repo_at_the_wizard_model_step_is_explained_and_asked_again(
    tg: FakeTelegram, settings: Settings, hub: HubStandin
) -> None:
    app = await launch(settings)
    try:
        ann = User(12, "Ann", "en")
        menu = await ask(tg, ann, "/start")
        await press(tg, ann, menu, "Run an LLM")
        explained = await ask(tg, ann, "HuggingFaceTB/SmolLM-999M")
        assert "There is no model" in shown(explained)
        asked = await tg.wait_for(lambda c: c.seq > explained.seq and "Step 1/5" in _text(c))
        assert "Which model" not in shown(asked)  # the Hub's reason stands, no second one
        typed = tg.user_sends(ann, None, "qwen2.5-7b")  # the model step is still open
        step = await tg.wait_for(lambda c: "Step 2/5" in _text(c))
        assert typed is not None and "✓ Model: qwen2.5-7b" in shown(step)
    finally:
        await halt(tg, app)


async def test_the_command_line_answers_a_generic_size_with_the_hubs_repos(
    hub: HubStandin, tmp_path: Path
) -> None:
    import json

    from tests.test_hub_cli import cli

    rc, out = await cli(hub, tmp_path / "cache.sqlite3", "smollm2:1.7b", "--json")
    assert rc == 0
    answer = json.loads(out)
    assert answer["workload"]["params_b"] == 1.7 and "model" not in answer["workload"]
    assert answer["unrecognized"]["name"] == "smollm2:1.7b"
    assert "HuggingFaceTB/SmolLM2-135M-Instruct" in answer["unrecognized"]["hub_suggestions"]
    rc, out = await cli(hub, tmp_path / "cache.sqlite3", "olmo2:7b", "--offline")
    assert rc == 0 and "generic 7B model" in out


async def test_a_whole_question_typed_at_the_wizard_task_menu_reaches_the_hub(
    tg: FakeTelegram, settings: Settings, hub: HubStandin
) -> None:
    app = await launch(settings)
    try:
        ann = User(13, "Ann", "en")
        await ask(tg, ann, "/start")
        text = shown(await ask(tg, ann, f"{TINY} on a 4090"))
        assert "Architecture from the Hugging Face Hub" in text and TINY in text
        bo = User(14, "Bo", "en")
        await ask(tg, bo, "/start")
        text = shown(await ask(tg, bo, "smollm2:1.7b"))
        assert "generic 1.7B model" in text and "HuggingFaceTB/SmolLM2" in text
    finally:
        await halt(tg, app)
