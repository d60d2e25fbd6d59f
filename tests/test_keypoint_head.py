"""Keypoint R-CNN's keypoint head runs on the R-CNN sampler's positive RoIs, up to
512 x 0.25 = 128 an image (torchvision roi_heads.py, detectron2 ROI_HEADS), where the
catalog's random-weight measurement ran it on the 7 ground-truth boxes: the term adds the
rest, each RoI keeping what torchvision's KeypointRCNNHeads / KeypointRCNNPredictor save
for the backward (data/classic_activations.toml [keypoint_head_positives])."""

from __future__ import annotations

import pytest

from advisor.memory import estimate
from advisor.memory.classic_inputs import activation_data
from advisor.models.workload import Workload
from tests.conftest import answers_both


def keypoint_training(**extra: object) -> Workload:
    fields: dict = dict(
        model="keypoint-rcnn-r50-fpn",
        mode="full",
        batch_size=2,
        image_width=1333,
        image_height=800,
        weights_format="fp32",
        optimizer="sgd_momentum",
    )
    return Workload(**(fields | extra))


def term(w: Workload) -> tuple[float, dict]:
    est = estimate(w).estimate
    assert est is not None
    found = [t for t in est.terms if t.name == "keypoint_head_rois"]
    return (found[0].bytes, found[0].values) if found else (0.0, {})


def test_a_roi_keeps_the_keypoint_heads_layer_shapes() -> None:
    # keypoint_roi_pool output_size 14 over the FPN's 256 channels, eight 3x3 512-channel
    # convs with in-place ReLU at 14x14, the log-softmax over 17 keypoints x 56 x 56
    # (torchvision models/detection/keypoint_rcnn.py), fp32
    table = activation_data()["keypoint_head_positives"]
    floats = 256 * 14 * 14 + 8 * 512 * 14 * 14 + 17 * 56 * 56
    assert (table["pooled_floats"], table["conv_floats"], table["logit_floats"]) == (
        256 * 14 * 14,
        8 * 512 * 14 * 14,
        17 * 56 * 56,
    )
    assert table["bytes_per_roi"] == floats * 4 == 3_625_216
    # the sampler's cap: box_batch_size_per_image 512 x box_positive_fraction 0.25
    assert table["positives_cap"] == 512 // 4


def test_the_keypoint_head_is_sized_for_the_samplers_positives() -> None:
    one, values = term(keypoint_training())
    assert values["rois"] == (128 - 7) * 2
    assert one == pytest.approx((128 - 7) * 2 * 3_625_216)
    # the head's activations shrink with the rest under AMP
    amp, _ = term(keypoint_training(mixed_precision=True, compute_dtype="fp16"))
    assert 0 < amp < one
    # detectors without a keypoint head have none
    assert term(keypoint_training(model="faster-rcnn-r50-fpn"))[0] == 0.0
    assert term(keypoint_training(model="mask-rcnn-r50-fpn"))[0] == 0.0


def test_the_answer_names_the_keypoint_heads_rois_in_both_languages() -> None:
    _, texts = answers_both("train keypointrcnn_resnet50_fpn batch 2 on a 4090")
    assert "keypoint head on positive RoIs 0.8 GiB" in texts["en"]
    assert "关键点头的正样本框 0.8 GiB" in texts["zh"]
