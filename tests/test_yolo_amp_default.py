"""YOLO training sized as the YOLO trainers run it when the user names no precision: AMP
(Ultralytics cfg/default.yaml amp: True, YOLOv5 train.py check_amp; data/classic_activations
.toml [default_amp]), over activation figures measured per model
(calibration/activations_cpu.py), not the YOLOv8n figure times width x depth. The YOLOv5
README trains YOLOv5x at batch 16 on a V100-16GB; YOLOv8m at batch 32 is ~14-20 GB."""

from __future__ import annotations

import re

import pytest

from advisor.memory import estimate
from advisor.models.workload import Workload
from advisor.parse import parse_query
from advisor.recommend import recommend_query
from advisor.render import render

LINES = [
    ("yolov5x 从头训练 batch 16 单卡 a4000 16g 会不会爆显存", "zh", 12.0, 15.8),
    ("train yolov5x from scratch batch 16 on one a4000 16gb, will it oom?", "en", 12.0, 15.8),
    ("yolov8m 训练 batch 32 imgsz 640 单卡 3090 显存够吗", "zh", 12.0, 20.0),
    ("yolov8m training batch 32 imgsz 640 on one 3090, enough vram?", "en", 12.0, 20.0),
]


@pytest.mark.parametrize(("line", "lang", "low", "high"), LINES)
def test_yolo_runs_the_readmes_batch_on_its_card(
    line: str, lang: str, low: float, high: float
) -> None:
    parsed = parse_query(line)
    rec = recommend_query(parsed, default_currency="CNY" if lang == "zh" else "USD")
    text = render("answer", lang, rec=rec, parsed=parsed, plain=True)
    per_card = float(re.search(r"(\d+(?:\.\d+)?) GiB", text.splitlines()[1]).group(1))
    assert low <= per_card <= high, text
    assert ("AMP" in text) and ("16" in text.splitlines()[0] or "32" in text.splitlines()[0])
    assert "imgsz" not in text  # Ultralytics' imgsz is read as the square side, not ignored


def test_imgsz_is_the_square_side_the_trainer_letterboxes_to() -> None:
    parsed = parse_query("yolov8m train batch 16 imgsz=1280 on a 4090")
    assert (parsed.workload.image_width, parsed.workload.image_height) == (1280, 1280)


def test_a_named_precision_overrides_the_trainers_amp() -> None:
    def acts(**kw) -> float:
        r = estimate(Workload(model="yolov8m", mode="full", batch_size=16, **kw))
        return next(t.bytes for t in r.estimate.terms if t.name == "activations")

    amp, fp32 = acts(), acts(mixed_precision=False)
    assert abs(amp / fp32 - 0.55) < 0.01
    # an mmdet-style stack that is not a YOLO trainer keeps its own (fp32) default
    assert acts(framework="mmdetection") == fp32


def test_yolov5_figures_are_its_own_not_yolov8s() -> None:
    def per_sample(model: str) -> float:
        r = estimate(Workload(model=model, mode="full", batch_size=1, mixed_precision=False))
        return next(t.bytes for t in r.estimate.terms if t.name == "activations")

    # measured on ultralytics/yolov5 v7.0 (1363 MB) and Ultralytics' yolov8m (717 MB)
    assert 1.36e9 <= per_sample("yolov5x") < 1.45e9
    assert 0.71e9 <= per_sample("yolov8m") < 0.8e9
    assert per_sample("yolov5m") < per_sample("yolov8m")
