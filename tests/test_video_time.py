"""A video model's answer says how long a clip takes on the card, from the seconds per clip
its makers measured (data/video_speed.toml), moved to the card by the cards' measured speed
ratio; a model with no measured clip gets no time."""

from __future__ import annotations

import pytest

from advisor import catalog
from advisor.__main__ import main
from advisor.parse import parse_query
from advisor.recommend import recommend_query
from advisor.video_speed import Clip, clip_seconds, table


def _named(line: str):  # noqa: ANN202
    rec = recommend_query(parse_query(line), default_currency="CNY")
    assert rec.named is not None, line
    return rec.named


@pytest.mark.parametrize(
    ("line", "lang", "said"),
    [
        (
            "CogVideoX-5B 生成一段6秒视频要多久, 4090",
            "zh",
            "生成约 3.6 分钟（A100 80GB SXM4 上实测约 180 秒",
        ),
        (
            "how long does CogVideoX-5B take for a 6 second video on a 4090",
            "en",
            "generation ~3.6 min",
        ),
    ],
)
def test_a_video_question_gets_a_time_from_a_measured_clip(
    line: str, lang: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: no time at all. CogVideoX README: ~180 s on an A100, ~90 s on an H100 (50
    steps, 49 frames at 720x480); a 4090 trains at 1.44x a 3090 in Lambda's benchmark, an
    A100 80GB SXM4 at 1.75x, an H100 SXM at 2.89x: 219 s from the A100 row (the slower)."""
    main([line, "--lang", lang, "--offline"])
    text = capsys.readouterr().out
    assert said in text, text
    named = _named(line)
    assert named.video_seconds is not None and 200 <= named.video_seconds <= 240


def test_the_card_it_was_measured_on_reads_the_measurement() -> None:
    assert _named("wan2.1 t2v 1.3b 4090").video_seconds == 240


def test_longer_clips_and_more_steps_take_longer() -> None:
    gpu = catalog.gpus()["rtx-4090"]
    base = clip_seconds("cogvideox-5b", gpu, Clip(49, 720, 480))
    longer = clip_seconds("cogvideox-5b", gpu, Clip(97, 720, 480))
    steps = clip_seconds("cogvideox-5b", gpu, Clip(49, 720, 480, steps=25))
    assert base is not None and longer is not None and steps is not None
    assert longer.seconds > 1.9 * base.seconds and longer.scaled and not base.scaled
    assert steps.seconds < base.seconds


def test_a_model_without_a_measured_clip_gets_no_time() -> None:
    assert _named("hunyuanvideo h100").video_seconds is None
    assert _named("sdxl 4090").video_seconds is None


def test_every_row_names_its_source_date_model_and_card() -> None:
    for row in table()["row"]:
        assert row["model"] in catalog.models() and row["gpu"] in catalog.gpus(), row
        assert row["source"] and row["read_date"] == "2026-12-07", row
        assert row["seconds"] > 0 and row["frames"] > 0 and row["steps"] > 0, row


@pytest.mark.parametrize(
    ("line", "frames"),
    [
        ("CogVideoX-5B 生成一段6秒视频要多久, 4090", 49),
        ("how long does CogVideoX-5B take for a 6 second video on a 4090", 49),
        ("cogvideox1.5-5b a 10-second video on h100", 161),
        ("wan2.1 1.3b 3秒视频 4090", 49),
        ("cogvideox-5b 10秒的视频 4090", 49),  # it makes 6-second clips: the longest, said so
    ],
)
def test_a_clip_length_in_seconds_is_frames_at_the_models_frame_rate(
    line: str, frames: int
) -> None:
    """ "生成一段6秒视频" listed 「段」「6」「秒」 as not understood: the seconds are frames at
    the model's frame rate (CogVideoX 8 fps, CogVideoX1.5 and Wan2.1 16 fps), said so."""
    p = parse_query(line)
    assert p.workload is not None and p.workload.video_frames == frames, p.assumed
    assert any(a.startswith("clip_seconds = ") for a in p.assumed)
    assert not {"段", "6", "秒", "10-second"} & set(p.ignored), p.ignored
    assert any(a.startswith("clip_capped") for a in p.assumed) == ("10秒" in line)


def test_seconds_without_a_frame_rate_or_a_video_word_are_not_read() -> None:
    assert parse_query("hunyuanvideo 5秒视频 h100").workload.video_frames is None  # type: ignore[union-attr]
    assert parse_query("cogvideox-5b 4090 跑10秒").workload.video_frames is None  # type: ignore[union-attr]
