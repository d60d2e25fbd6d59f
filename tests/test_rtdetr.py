"""Ultralytics RT-DETR (rtdetr-l, rtdetr-x) is a catalog model trained by Ultralytics'
DetectionTrainer defaults (data/models/detection_rtdetr.toml): imgsz 640, batch 16, AMP and
the EMA copy, with its own measured activations, far above a YOLO of its size, so batch 16
at 640 does not fit a 10 GB card and batch 8 does."""

from __future__ import annotations

import pytest

from advisor.catalog import find_model
from advisor.parse import parse_query
from tests.conftest import plain_answer


@pytest.mark.parametrize(
    ("typed", "model_id"),
    [
        ("ultralytics rtdetr-l 训练 batch 16 imgsz 640 3080 10g", "rtdetr-l"),
        ("train rt-detr-l on a 3080", "rtdetr-l"),
        ("rtdetr-x.pt inference 4090", "rtdetr-x"),
    ],
)
def test_rt_detr_is_read(typed: str, model_id: str) -> None:
    p = parse_query(typed)
    assert p.ok, p.error
    assert p.workload.model == model_id


def test_a_detection_transformer_keeps_more_per_image_than_a_yolo_of_its_size() -> None:
    rtdetr, yolo = find_model("rtdetr-l"), find_model("yolov8l")
    assert rtdetr is not None and yolo is not None
    assert rtdetr.params_b < yolo.params_b
    assert rtdetr.activation_bytes_per_sample > yolo.activation_bytes_per_sample


@pytest.mark.parametrize(
    ("q", "lang", "as_asked", "fix"),
    [
        (
            "ultralytics rtdetr-l 训练 batch 16 imgsz 640 3080 10g 会爆吗",
            "zh",
            "按原样",
            "批大小改为 8",
        ),
        ("train rt-detr-l with ultralytics, batch 16, on a 3080 10gb", "en", "as asked", "batch 8"),
    ],
)
def test_batch_16_at_640_does_not_fit_10_gb_and_batch_8_does(
    q: str, lang: str, as_asked: str, fix: str
) -> None:
    text = plain_answer(q, lang)
    assert "RT-DETR-L" in text
    verdict = text.splitlines()[2]
    assert as_asked in verdict and fix in verdict
