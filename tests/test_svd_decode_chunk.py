"""Stable Video Diffusion decodes every frame in one VAE call unless given a chunk
(StableVideoDiffusionPipeline.__call__: `decode_chunk_size if not None else num_frames`;
Stability's sgm simple_video_sample.py decoding_t); a chunk the user names is read from the
question as from a case's notes (Workload.decode_chunk_frames)."""

from __future__ import annotations

import pytest

from advisor.memory import estimate, video
from advisor.models.choices import Kind
from advisor.models.workload import Workload
from advisor.parse import parse_query
from checks.note_numbers import numbers_in_notes


def _allocated(**knobs: object) -> int:
    w = Workload(
        kind=Kind.diffusion,
        model="svd-img2vid",
        weights_format="fp16",
        image_width=1024,
        image_height=576,
        **knobs,  # type: ignore[arg-type]
    )
    est = estimate(w).estimate
    assert est is not None
    return est.allocated_bytes


def test_the_pipeline_default_decodes_all_frames_at_once() -> None:
    geo = video.geometry("svd-img2vid")
    assert geo is not None and geo.decode_frames == 0 and geo.frames == 14
    ws = video.decode_working_set(geo, 14, 1024, 576, 2, 9, tiling=False)
    assert ws.at_once == 14
    chunked = video.decode_working_set(geo, 14, 1024, 576, 2, 9, tiling=False, chunk=2)
    assert chunked.at_once == 2
    # the last stage's maps scale with the frames at once; the decoded RGB stays
    stage = ws.bytes - ws.output_bytes
    assert chunked.bytes - chunked.output_bytes == pytest.approx(stage / 7)


def test_a_named_chunk_shrinks_the_decode() -> None:
    assert (
        _allocated(decode_chunk_frames=2)
        < _allocated(decode_chunk_frames=8)
        < _allocated(decode_chunk_frames=14)
        == _allocated()
    )


@pytest.mark.parametrize(
    "question",
    [
        "svd img2vid 14 frames 1024x576 decode_chunk_size=2 on a 4090",
        "stable video diffusion img2vid 14帧 每次解码2帧 4090",
        "svd img2vid decoding_t=2 4090",
        "svd img2vid 14 frames, decode 2 frames at a time, 4090",
    ],
)
def test_the_chunk_is_read_from_a_question_and_not_taken_for_the_frames(question: str) -> None:
    w = parse_query(question).workload
    assert w is not None and w.decode_chunk_frames == 2
    assert w.video_frames in (None, 14)


def test_the_case_notes_read_the_chunk_as_the_question_does() -> None:
    notes = "32 frames at 512x768, the VAE decodes 2 frames at a time (decoder_bs 2)"
    assert numbers_in_notes(notes, {}) == {"decode_chunk_frames": 2, "video_frames": 32}
    notes = "the VAE decodes 2 frames at a time, max_frames 32, 32 frames"
    assert numbers_in_notes(notes, {})["video_frames"] == 32
    assert numbers_in_notes("decoding_t=1: per-frame VAE decoding", {}) == {
        "decode_chunk_frames": 1
    }


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_small_card_is_answered_with_a_smaller_decode_chunk(lang: str) -> None:
    """All 14 frames at once do not fit a 24 GB card; the answer runs the diffusers guide's
    lever (decode_chunk_size), not a VAE tiling the temporal decoder does not have."""
    from advisor.recommend import recommend_query
    from advisor.render import render

    parsed = parse_query("svd img2vid 14 frames 1024x576 on an rtx 4090")
    rec = recommend_query(parsed, default_currency="CNY" if lang == "zh" else "USD")
    text = render("answer", lang, rec=rec, parsed=parsed, plain=True)
    assert rec.recipe == "decode_chunk", text
    assert "decode_chunk_size=2" in "\n".join(text.splitlines()[:3]), text
