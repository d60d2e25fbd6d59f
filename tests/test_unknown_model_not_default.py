"""An image or video model the catalog lacks is said unknown, with the nearest names and a
request for its size, never answered as the default model: "step-video-t2v 544x992 204帧
h100", before the catalog held Step-Video-T2V, was answered for SDXL (its "video" and "t2v"
read as task words, the rest left over, and an image task with no model read took SDXL)."""

from __future__ import annotations

import pytest

from advisor.parse import parse_query
from advisor.render import render


@pytest.mark.parametrize(
    ("line", "name"),
    [
        ("magi-1-t2v 544x992 204帧 h100 能跑吗", "magi-1-t2v"),
        ("kolors-3 4090 出图", "kolors-3"),
        ("pixart-omega text to image on a 4090", "pixart-omega"),
        ("vidu-2 t2v 720p on an h100", "vidu-2"),
        ("seedance-1.0 文生视频 a100", "seedance-1.0"),
        ("imagen4 出图 4090", "imagen4"),
    ],
)
def test_an_unknown_image_or_video_model_is_not_sdxl(line: str, name: str) -> None:
    parsed = parse_query(line)
    assert parsed.workload is None, parsed.workload
    assert parsed.error is not None and parsed.error.code == "unknown_model"
    assert parsed.error.detail == name
    zh = render("error", "zh", error=parsed.error, parsed=parsed, plain=True)
    en = render("error", "en", error=parsed.error, parsed=parsed, plain=True)
    assert f"我不认识模型“{name}”" in zh and "参数量" in zh and "Stable Diffusion" not in zh
    assert f"I don't know the model “{name}”" in en and "size" in en


@pytest.mark.parametrize(
    "line",
    ["4090 出图", "sdxl 4090 出图", "text to image on a 4090, 1024x1024", "文生图 3090 24g"],
)
def test_an_image_task_naming_no_model_still_takes_sdxl(line: str) -> None:
    parsed = parse_query(line)
    assert parsed.ok and parsed.workload is not None and parsed.workload.model == "sdxl"
