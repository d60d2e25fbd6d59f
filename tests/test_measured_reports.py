""" "I ran it" reports end to end through the real bot and the Bot API stand-in: the 📏 button
under an answer, its ForceReply prompt, the reply with a figure, in English, in Chinese and
in a group (privacy mode); typed reports in a private chat; out-of-memory reports stored as
bounds; bad input answered and nothing stored; /forget deletes the reports; /stats counts
them; the export scores with bench/accuracy.py."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from advisor import catalog
from advisor.parse import parse_query
from advisor.recommend import recommend_query
from standin import Call, Chat, FakeTelegram, User
from tests.conftest import ADMIN_ID, button, press, say, settled, shown

ROOT = Path(__file__).resolve().parent.parent
GIB, MIB = 2**30, 2**20
AT = "@GpuAdvisorBot"
QUESTION = "llama-3.1-8b fp16 on 1x 4090"
ANNA = User(7101, "Anna", "en")
LI = User(7102, "小李", "zh-hans")
GROUP = Chat(-1007770001, "supergroup", "NLP lab")
BEN = User(7103, "Ben", "en")


def engine(question: str, currency: str = "USD"):  # noqa: ANN201 - the engine's Estimate
    est = recommend_query(parse_query(question), default_currency=currency).setup.estimate
    assert est is not None
    return est


def rows(db: Path) -> list[dict]:
    con = sqlite3.connect(db)
    con.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in con.execute("SELECT * FROM measurements ORDER BY id")]
    finally:
        con.close()


async def ask_and_press(
    tg: FakeTelegram, user: User, question: str, chat: Chat | None = None, label: str = "I ran it"
) -> tuple[Call, Call]:
    answer = await say(tg, user, question, chat)
    start = len(tg.calls)
    tg.user_clicks(user, answer.result, button(answer, label))
    prompt = await tg.wait_for(
        lambda c: c.method == "sendMessage" and c.result and c.result["text"].startswith("📏"),
        since=start,
    )
    return answer, prompt


async def test_press_and_reply_with_a_figure_stores_the_report_with_its_workload(
    tg: FakeTelegram, bot, settings
) -> None:
    est = engine(QUESTION)
    answer, prompt = await ask_and_press(tg, ANNA, QUESTION)
    markup = prompt.params["reply_markup"]
    assert markup["force_reply"] is True and markup["selective"] is True
    # the prompt is addressed to the member (a mention: selective ForceReply opens for them)
    assert f"tg://user?id={ANNA.id}" in prompt.params["text"]
    assert "Anna, what did the job use?" in shown(prompt)

    figure_mib = round(est.total_bytes / MIB)
    done = await say(tg, ANNA, f"{figure_mib} MiB nvidia-smi", reply_to=prompt.result)
    assert shown(done).startswith("✅ Within the band")
    assert "1× GeForce RTX 4090" in shown(done) and "Thank you, saved." in shown(done)
    await settled(bot)
    (row,) = rows(settings.database_path)
    workload = json.loads(row["workload_json"])
    assert workload["model"] == "llama-3.1-8b" and workload["weights_format"] == "fp16"
    assert (row["gpu_id"], row["gpu_count"], row["kind"]) == ("rtx-4090", 1, "figure")
    assert row["measured_bytes"] == figure_mib * MIB and row["measured_what"] == "nvml"
    assert row["view"] == "total" and row["estimate_bytes"] == est.total_bytes
    assert row["low_bytes"] < row["estimate_bytes"] < row["high_bytes"]
    assert row["runtime"] == est.runtime.value  # the runtime assumed is stored
    assert json.loads(row["assumed_json"])  # and the defaults the answer assumed
    assert row["user_id"] == ANNA.id and row["chat_id"] == ANNA.id
    assert row["outcome"] == "within"

    # a second report on the same answer, above the band, read from torch
    _, prompt = await ask_and_press(tg, ANNA, QUESTION)
    high = est.allocated_bytes * 2 / GIB
    above = await say(tg, ANNA, f"{high:.1f}G torch allocated", reply_to=prompt.result)
    assert shown(above).startswith("⚠️ Above the band")
    assert "this will be checked" in shown(above)
    await settled(bot)
    assert [r["outcome"] for r in rows(settings.database_path)] == ["within", "above"]
    assert rows(settings.database_path)[1]["view"] == "allocated"


async def test_chinese_button_prompt_and_typed_report(tg: FakeTelegram, bot, settings) -> None:
    est = engine(QUESTION, "CNY")
    _, prompt = await ask_and_press(tg, LI, QUESTION, label="我跑过了")
    assert "小李，实际占用了多少显存？" in shown(prompt)
    gib = est.total_bytes / GIB
    done = await say(tg, LI, f"{gib:.2f}G", reply_to=prompt.result)
    assert shown(done).startswith("✅ 在估算范围内") and "谢谢，已记录" in shown(done)
    # typed, in the private chat, on the latest answer: no prompt needed
    typed = await say(tg, LI, f"实测 {gib * 1.6:.1f}G")
    assert shown(typed).startswith("⚠️ 高于估算范围") and "我们会核查" in shown(typed)
    await settled(bot)
    stored = rows(settings.database_path)
    assert [r["outcome"] for r in stored] == ["within", "above"]
    assert all(r["unit_ambiguous"] == 1 for r in stored)  # "G": read as GiB, flagged


async def test_out_of_memory_on_another_card_is_stored_as_a_bound(
    tg: FakeTelegram, bot, settings
) -> None:
    await say(tg, ANNA, "llama-3.1-8b full fine-tune")
    done = await say(tg, ANNA, "OOM on 2x 3090")
    assert "Out of memory on 2× GeForce RTX 3090" in shown(done)
    await settled(bot)
    (row,) = rows(settings.database_path)
    assert (row["kind"], row["gpu_id"], row["gpu_count"]) == ("oom", "rtx-3090", 2)
    assert row["measured_bytes"] is None
    assert row["limit_bytes"] == int(catalog.gpus()["rtx-3090"].usable_vram_gib * GIB)
    assert json.loads(row["workload_json"])["num_gpus"] == 2  # estimated for the cards it ran on
    # a full fine-tune of an 8B model does not fit 2x 24 GB: the engine agrees
    assert row["outcome"] == "oom_expected" and shown(done).startswith("✅")


async def test_in_a_group_only_the_asker_reports_on_their_answer(
    tg: FakeTelegram, bot, settings
) -> None:
    est = engine(QUESTION)
    answer, prompt = await ask_and_press(tg, ANNA, f"/vram{AT} {QUESTION}", GROUP)
    assert f"tg://user?id={ANNA.id}" in prompt.params["text"]
    # another member's press: refused, no prompt
    click = tg.user_clicks(BEN, answer.result, button(answer, "I ran it"))
    alert = await tg.wait_for(
        lambda c: (
            c.method == "answerCallbackQuery"
            and c.params["callback_query_id"] == click["callback_query"]["id"]
        )
    )
    assert "belongs to Anna" in alert.params["text"]
    # another member replying to Anna's prompt (a reply to the bot reaches it in privacy mode)
    other = await say(tg, BEN, "20G", GROUP, reply_to=prompt.result)
    assert "That answer was for Anna" in shown(other) and "Nothing was saved" in shown(other)
    # or replying to Anna's answer with a typed report
    other = await say(tg, BEN, "measured 20G", GROUP, reply_to=answer.result)
    assert "That answer was for Anna" in shown(other)
    await settled(bot)
    assert rows(settings.database_path) == []

    done = await say(tg, ANNA, f"{est.total_bytes / GIB:.2f} GiB", GROUP, reply_to=prompt.result)
    assert shown(done).startswith("✅ Within the band")
    assert done.params["reply_parameters"]["message_id"] > 0  # quotes the report in the group
    await settled(bot)
    (row,) = rows(settings.database_path)
    assert (row["user_id"], row["chat_id"]) == (ANNA.id, GROUP.id)
    assert json.loads(row["workload_json"])["model"] == "llama-3.1-8b"


@pytest.mark.parametrize(
    ("reply", "says"),
    [
        ("-5G", "is negative"),
        ("0 GB", "is zero"),
        ("3 TB", "more than 2 TB"),
        ("it worked fine", "could not find a figure"),
        ("21 kb", "cannot read the unit “kb”"),
        ("about 21", "has no unit"),
    ],
)
async def test_bad_reports_are_answered_and_nothing_is_stored(
    tg: FakeTelegram, bot, settings, reply: str, says: str
) -> None:
    _, prompt = await ask_and_press(tg, ANNA, QUESTION)
    refused = await say(tg, ANNA, reply, reply_to=prompt.result)
    assert says in shown(refused) and "Nothing was saved" in shown(refused)
    await settled(bot)
    assert rows(settings.database_path) == []


async def test_bad_reports_in_chinese(tg: FakeTelegram, bot, settings) -> None:
    _, prompt = await ask_and_press(tg, LI, QUESTION, label="我跑过了")
    refused = await say(tg, LI, "实测 -3G", reply_to=prompt.result)
    assert "是负数" in shown(refused) and "未保存" in shown(refused)
    typed = await say(tg, LI, "实测 21 斤")
    assert "看不懂单位“斤”" in shown(typed)
    await settled(bot)
    assert rows(settings.database_path) == []


async def test_a_report_on_an_answer_older_than_the_retention_is_refused(
    tg: FakeTelegram, bot, settings
) -> None:
    answer = await say(tg, ANNA, QUESTION)
    await settled(bot)
    con = sqlite3.connect(settings.database_path)
    with con:
        con.execute("UPDATE history SET created_at = '2020-01-01T00:00:00+00:00'")
    con.close()
    click = tg.user_clicks(ANNA, answer.result, button(answer, "I ran it"))
    alert = await tg.wait_for(
        lambda c: (
            c.method == "answerCallbackQuery"
            and c.params["callback_query_id"] == click["callback_query"]["id"]
        )
    )
    assert "older than 180 days" in alert.params["text"]
    typed = await say(tg, ANNA, "measured 18 GiB with nvidia-smi")
    assert "older than 180 days" in shown(typed) and "Nothing was saved" in shown(typed)
    await settled(bot)
    assert rows(settings.database_path) == []


async def test_a_typed_report_with_no_answer_before_it_says_so(tg: FakeTelegram, bot) -> None:
    alone = await say(tg, ANNA, "measured 18 GiB with nvidia-smi")
    assert "no answer of mine to attach that to" in shown(alone)


async def test_a_question_that_mentions_oom_is_still_a_question(tg: FakeTelegram, bot) -> None:
    await say(tg, ANNA, QUESTION)
    asked = await say(tg, ANNA, "qwen2.5-7b lora oom on 4090, what now?")
    assert "Within the band" not in shown(asked) and "Nothing was saved" not in shown(asked)
    assert "Qwen" in shown(asked)


async def test_forget_deletes_the_reports(tg: FakeTelegram, bot, settings) -> None:
    await say(tg, ANNA, QUESTION)
    await say(tg, ANNA, "measured 18 GiB with nvidia-smi")
    await say(tg, ANNA, "OOM on 2x 3090")
    await settled(bot)
    assert len(rows(settings.database_path)) == 2
    confirm = await say(tg, ANNA, "/forget")
    assert "the measurements you reported" in shown(confirm)
    done = await press(tg, ANNA, confirm, "Yes, delete everything")
    assert "Also deleted: 2 measurement report(s)." in shown(done)
    await settled(bot)
    assert rows(settings.database_path) == []


async def test_stats_shows_the_reports_and_the_engines_error(
    tg: FakeTelegram, bot, settings
) -> None:
    est = engine(QUESTION)
    admin = User(ADMIN_ID, "Admin", "en")
    await say(tg, admin, QUESTION)
    await say(tg, admin, f"measured {est.total_bytes * 1.1 / GIB:.2f} GiB with nvidia-smi")
    await say(tg, admin, "OOM on 2x 3090")
    stats = shown(await say(tg, admin, "/stats"))
    assert '"I ran it" reports: 2 · 1 figure(s): median error 9.1%' in stats
    assert "100.0% inside the band" in stats
    assert "1 out of memory, 0 as the estimate said" in stats  # 8B fp16 fits 2x 3090


async def test_the_export_scores_with_bench_accuracy(
    tg: FakeTelegram, bot, settings, tmp_path: Path
) -> None:
    est = engine(QUESTION)
    await say(tg, ANNA, QUESTION)
    await say(tg, ANNA, f"measured {est.allocated_bytes / GIB:.3f} GiB torch allocated")
    await say(tg, ANNA, "llama-3.1-8b full fine-tune")
    await say(tg, ANNA, "OOM on 2x 3090")
    await settled(bot)
    stored = rows(settings.database_path)
    out = tmp_path / "reports.json"
    env = {**os.environ, "DATABASE_PATH": str(settings.database_path)}
    env.pop("TELEGRAM_BOT_TOKEN", None)
    exported = subprocess.run(
        [sys.executable, "-m", "bot", "export-measurements", "--out", str(out)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
    )
    assert exported.returncode == 0, exported.stderr
    assert "wrote 2 measured case(s)" in exported.stdout
    cases = json.loads(out.read_text(encoding="utf-8"))
    text = out.read_text(encoding="utf-8")
    assert str(ANNA.id) not in text and "Anna" not in text  # no user ids or names
    figure, oom = cases
    assert figure["source"] == {
        "repo": "gpu-advisor-bot/reports",
        "report_id": stored[0]["id"],
        "date": stored[0]["created_at"][:10],
        "title": f"'I ran it' report {stored[0]['id']}",
    }
    assert figure["measured"]["what"] == "allocated" and figure["measured"]["bound"] is None
    assert oom["measured"]["value_gib"] is None
    assert oom["measured"]["bound"]["kind"] == "oom_at"
    assert oom["workload"]["num_gpus"] == 2
    assert {c["category"] for c in cases} == {"llm_inference", "llm_training"}

    scored = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "accuracy.py"), "--cases", str(out), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert scored.returncode == 0, scored.stderr
    data = json.loads(scored.stdout)
    (row,) = data["rows"]
    # the bench judges the figure as the bot did: the same estimate, inside the band
    assert row["estimate_bytes"] == stored[0]["estimate_bytes"]
    assert row["in_band"] is True and abs(row["error"]) < 0.01
    (bound,) = data["bounds"]
    assert bound["bound"] == "oom_at" and bound["estimate_bytes"] == stored[1]["estimate_bytes"]
    assert bound["ok"] is (stored[1]["outcome"] == "oom_expected")
    assert data["summary"]["cases_scored"] == 1 and data["summary"]["cases_failed"] == 0


async def test_a_replayed_report_is_stored_once(tmp_path: Path) -> None:
    """Telegram may send an update again after a crash (the inbox replays it): the report's
    update id is unique, so the second copy stores nothing."""
    from bot.measurement_store import Measurement, measurement_store
    from bot.storage import Repository

    repo = await Repository.open(tmp_path / "r.sqlite3")
    try:
        m = Measurement(
            history_id=1,
            canonical="llama-3.1-8b · fp16",
            workload={"model": "llama-3.1-8b"},
            runtime="transformers",
            assumed=[("batch_size", "1")],
            recipe=None,
            gpu_id="rtx-4090",
            gpu_count=1,
            kind="figure",
            measured_bytes=18 * GIB,
            limit_bytes=None,
            measured_what="nvml",
            unit_ambiguous=False,
            view="total",
            estimate_bytes=17 * GIB,
            low_bytes=15 * GIB,
            high_bytes=20 * GIB,
            outcome="within",
            catalog_version="v",
        )
        store = measurement_store(repo)
        kw = {"user_id": 1, "chat_id": 1, "raw_text": "18 GiB", "update_id": 99}
        assert await store.add(m, **kw) is True
        assert await store.add(m, **kw) is False
        (back,) = await store.all()
        assert back.assumed == [("batch_size", "1")] and back.measured_bytes == 18 * GIB
    finally:
        await repo.close()


async def test_in_a_forum_topic_the_prompt_and_the_reply_stay_in_the_topic(
    tg: FakeTelegram, bot, settings
) -> None:
    forum = Chat(-1007770002, "supergroup", "Lab forum")
    answer = await say(tg, ANNA, f"/vram{AT} {QUESTION}", forum, thread_id=42)
    start = len(tg.calls)
    tg.user_clicks(ANNA, answer.result, button(answer, "I ran it"))
    prompt = await tg.wait_for(
        lambda c: c.method == "sendMessage" and c.result and c.result["text"].startswith("📏"),
        since=start,
    )
    assert prompt.params["message_thread_id"] == 42
    done = await say(tg, ANNA, "OOM", forum, reply_to=prompt.result, thread_id=42)
    assert done.params["message_thread_id"] == 42 and "Out of memory" in shown(done)
    await settled(bot)
    assert [r["kind"] for r in rows(settings.database_path)] == ["oom"]


async def test_a_vllm_nvidia_smi_report_is_judged_on_the_share_and_exported_unscorable(
    tg: FakeTelegram, bot, settings, tmp_path: Path
) -> None:
    question = "qwen2.5-7b vllm serving on a100 80g"
    est = engine(question)
    assert est.nvidia_smi_bytes is not None and est.nvidia_smi_bytes > 2 * est.total_bytes
    await say(tg, ANNA, question)
    done = await say(tg, ANNA, f"nvidia-smi {est.nvidia_smi_bytes / MIB:.0f} MiB")
    assert shown(done).startswith("✅ Within the band")
    assert "the serving engine reserves its share of the card" in shown(done)
    await settled(bot)
    (row,) = rows(settings.database_path)
    assert (row["view"], row["estimate_bytes"]) == ("share", est.nvidia_smi_bytes)
    from bot.measurement_export import export_measurements

    out = tmp_path / "cases.json"
    assert export_measurements(settings.database_path, out) == 1
    (case,) = json.loads(out.read_text(encoding="utf-8"))
    assert case["scorable"] is False and "Not scorable" in case["notes"]
    assert case["workload"]["framework"] == "vllm"


def test_the_export_of_a_database_without_reports_is_one_clear_line(tmp_path: Path) -> None:
    db = tmp_path / "old.sqlite3"
    sqlite3.connect(db).close()  # a database from before migration 0006
    env = {**os.environ, "DATABASE_PATH": str(db)}
    env.pop("TELEGRAM_BOT_TOKEN", None)
    out = subprocess.run(
        [sys.executable, "-m", "bot", "export-measurements", "--out", str(tmp_path / "x.json")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
    )
    assert out.returncode == 2
    assert out.stderr.strip().startswith("error: cannot read the reports in")
    assert "Traceback" not in out.stderr and not (tmp_path / "x.json").exists()
