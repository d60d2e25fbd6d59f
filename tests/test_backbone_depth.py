"""A detector's backbone depth as written ("R101-FPN", "r101", "resnet-101") picks the
catalog entry of that depth (detection_segmentation.toml names them by backbone); where the
catalog has none (Mask R-CNN R101), the answer says first that the figures are another
depth's, in both languages, and "fpn" is not listed as not understood."""

from __future__ import annotations

import pytest

from advisor.parse import parse_query
from tests.conftest import plain_answer


@pytest.mark.parametrize(
    ("q", "model"),
    [
        ("detectron2 faster rcnn R101-FPN 3x batch 2 on 3060ti", "faster-rcnn-r101-fpn"),
        ("faster rcnn resnet-101 batch 2 on 3060ti", "faster-rcnn-r101-fpn"),
        ("retinanet resnet101 fpn on 3060ti", "retinanet-r101-fpn"),
        ("faster rcnn r101 batch 2 on 3060ti", "faster-rcnn-r101-fpn"),
        ("mask rcnn r50-fpn on 3060ti", "mask-rcnn-r50-fpn"),
        ("mask rcnn on 3060ti", "mask-rcnn-r50-fpn"),
        ("pspnet r101 on 3060ti", "pspnet-r101"),
    ],
)
def test_the_depth_named_picks_that_entry(q: str, model: str) -> None:
    parsed = parse_query(q)
    assert parsed.workload is not None and parsed.workload.model == model
    assert parsed.unread_depth is None and not parsed.ignored, parsed.ignored


MASK_R101 = {
    "zh": "detectron2 mask rcnn R101-FPN 3x 训练 batch 2，3060ti 8g 够吗",
    "en": "detectron2 mask rcnn R101-FPN 3x, batch 2, on a 3060ti 8g: enough?",
}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_depth_the_catalog_lacks_is_said_first(lang: str) -> None:
    parsed = parse_query(MASK_R101[lang])
    assert parsed.unread_depth == "R101" and "-fpn" not in parsed.ignored
    head = "\n".join(plain_answer(MASK_R101[lang], lang).splitlines()[:3])
    assert "R101" in head and "Mask R-CNN R50-FPN" in head, head
    assert ("库里没有" if lang == "zh" else "I have no R101 backbone") in head, head
