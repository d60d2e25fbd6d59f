"""Open-Sora 2.0 as its configs build it (data/models/video_opensora.toml): was not
recognised, and a generic video answer put it on a 24 GB card. The check is its README's
"Computational Efficiency" table: 256x256 on one GPU, peak 52.5 GB."""

from __future__ import annotations

import pytest

from advisor.memory import GIB
from advisor.parse import parse_query
from advisor.recommend import recommend_query

README_PEAK_GIB = 52.5e9 / GIB


@pytest.mark.parametrize(
    "q",
    [
        "open-sora 2.0 生成256px视频 单卡 rtx pro 6000 96g 够吗",
        "open-sora 2.0 text to video at 256px on one rtx pro 6000 96gb, enough?",
    ],
)
def test_open_sora_2_at_256px_fits_a_96_gb_card_near_its_readme_peak(q: str) -> None:
    parsed = parse_query(q)
    assert parsed.workload is not None and parsed.workload.model == "open-sora-2.0"
    rec = recommend_query(parsed, default_currency="CNY")
    assert rec.verdict.state == "fits" and rec.recipe is None
    assert rec.result.estimate is not None
    total = rec.result.estimate.total_bytes / GIB
    assert 0.8 * README_PEAK_GIB < total < 1.3 * README_PEAK_GIB


def test_open_sora_2_does_not_fit_a_24_gb_card_as_it_loads() -> None:
    parsed = parse_query("open-sora 2.0 256px video on a 4090, enough?")
    rec = recommend_query(parsed, default_currency="CNY")
    assert rec.recipe is not None or rec.verdict.state == "no_fit"
