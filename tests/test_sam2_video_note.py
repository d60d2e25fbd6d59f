"""SAM 2 / 2.1 has no memory model yet (vocab/models.toml [not_estimated]), but its answer
says why a video run grows and the switches that hold it (facebookresearch/sam2
sam2_video_predictor.py init_state): every frame's pixels and each tracked frame's memory
features stay in the inference state unless offload_video_to_cpu / offload_state_to_cpu
move them to the CPU."""

from __future__ import annotations

import pytest

from advisor.parse import parse_query
from advisor.render import render

SAM21_VIDEO = {
    "en": "sam2.1 hiera large video segmentation inference on a 12gb rtx 2060, ok?",
    "zh": "sam2.1 hiera large 视频分割 推理 2060 12g 行吗",
}


def _error_text(line: str, lang: str) -> str:
    parsed = parse_query(line)
    assert parsed.error is not None and parsed.error.code == "not_estimated"
    return render("error", lang, plain=True, error=parsed.error, parsed=parsed)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_sam2_video_answer_names_the_state_growth_and_its_offload_switches(lang: str) -> None:
    text = _error_text(SAM21_VIDEO[lang], lang)
    assert "SAM 2.1" in text
    assert "offload_video_to_cpu=True, offload_state_to_cpu=True" in text
    assert "predictor.init_state" in text
    growth = "memory grows with the video's length" if lang == "en" else "显存随视频长度增长"
    assert growth in text
