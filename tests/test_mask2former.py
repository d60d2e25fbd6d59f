"""Mask2Former is sized as mmdet's configs build it (data/models/mask_transformers.toml), at its
own LSJ crop even when COCO is named, and a question naming it is not answered for its
backbone alone."""

from __future__ import annotations

import tomllib

import pytest

from advisor.catalog import DATA_DIR, find_model
from advisor.parse import parse_query
from advisor.recommend import recommend_query
from tests.conftest import plain_answer

Q27 = {
    "en": "mask2former swin-b coco panoptic training in mmdet, batch 2 per gpu, enough on a 24gb a30?",
    "zh": "mmdet 训练 mask2former swin-b coco 全景分割 batch 2 a30 24g 够吗",
}


def test_the_catalog_figures_are_the_headers_sums() -> None:
    """Backbone (the classifier's measured figure + the window-12 scores) plus the head,
    as written out in the data file's header; parameters from the paper's Table 1."""
    raw = tomllib.loads((DATA_DIR / "models" / "mask_transformers.toml").read_text())
    rows = {m["id"]: m for m in raw["model"]}
    head = 1.470 + 0.063 + 0.066 + 0.336 + 0.198 + 0.206 + 0.262 + 0.022
    assert rows["mask2former-swin-b"]["activation_bytes_per_sample"] == pytest.approx(
        (5.714 + head) * 1e9, rel=2e-3
    )
    assert rows["mask2former-swin-t"]["activation_bytes_per_sample"] == pytest.approx(
        (2.254 + head) * 1e9, rel=2e-3
    )
    assert "2026-12-07" in rows["mask2former-swin-b"]["source"]
    assert rows["mask2former-swin-b"]["params_b"] == 0.107


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_mask2former_swin_b_panoptic_is_sized_as_itself_at_the_lsj_crop(lang: str) -> None:
    parsed = parse_query(Q27[lang])
    assert parsed.workload is not None and parsed.workload.model == "mask2former-swin-b"
    assert "mask2former" not in " ".join(parsed.ignored)
    assert "panoptic" not in " ".join(parsed.ignored)
    rec = recommend_query(parsed)
    w = rec.result.workload
    assert (w.image_width, w.image_height) in ((None, None), (1024, 1024))
    # mmdet README 26.0 GB at 2 images: the written-out count reads ~18 GiB, well above a
    # bare Swin-B (6.2 GiB), and the A30 is no longer a comfortable fit
    total = rec.result.estimate.total_bytes / 2**30
    assert 17 < total < 30
    text = plain_answer(Q27[lang], lang)
    assert "Mask2Former Swin-B" in text.splitlines()[0]
    assert ("1024x1024" in text) and ("640x640" not in text)


def test_coco_keeps_a_detectors_own_config_size_and_yolos_640() -> None:
    """COCO's 640 is Ultralytics' imgsz: mmdet's Mask R-CNN keeps its 1333x800."""
    mrcnn = parse_query("mask rcnn r50 fpn coco training in mmdet on a 3090").workload
    yolo = parse_query("yolov8m coco training on a 3090").workload
    assert mrcnn is not None and mrcnn.image_width is None
    assert yolo is not None and yolo.image_width in (None, 640)  # its family default is 640


def test_the_window_12_backbone_counts_its_larger_windows() -> None:
    from advisor.memory.classic_extras import window_scores_per_pixel

    w12 = window_scores_per_pixel(find_model("mask2former-swin-b"))
    w7 = window_scores_per_pixel(find_model("swin-b"))
    assert w12 == pytest.approx(w7 * 144 / 49)
