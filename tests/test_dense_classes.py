"""A segmentor's activations follow its classes (full-resolution logits, log-softmax and
their gradients per loss head), and the zoo's names reach the measured entries."""

from __future__ import annotations

import pytest

from advisor import catalog
from advisor.memory import GIB, estimate
from advisor.memory.classic import segmentation_class_bytes_per_pixel
from advisor.models.workload import Workload
from advisor.parse import parse_query


def seg(model: str, **extra: object) -> Workload:
    fields: dict = dict(
        model=model,
        mode="full",
        batch_size=4,
        image_width=512,
        image_height=512,
        weights_format="fp32",
        optimizer="sgd_momentum",
    )
    return Workload(**(fields | extra))


def activations_gib(w: Workload) -> float:
    est = estimate(w).estimate
    assert est is not None
    return next(t.bytes for t in est.terms if t.name == "activations") / GIB


def test_ade20k_classes_add_the_measured_logit_bytes_to_a_cityscapes_measured_deeplab() -> None:
    # DeepLabV3+ was measured with 19 classes; ADE20K has 150. Two full-resolution losses
    # (decode + auxiliary head): 14.96 B per pixel per class, measured on UPerNet.
    spec = catalog.find_model("deeplabv3plus-r50")
    assert spec is not None and spec.activation_classes == 19
    assert segmentation_class_bytes_per_pixel(seg("deeplabv3plus-r50", num_classes=150), spec) == (
        pytest.approx(131 * 14.96)
    )
    base = activations_gib(seg("deeplabv3plus-r50"))
    ade = activations_gib(seg("deeplabv3plus-r50", num_classes=150))
    expected = 4 * 512 * 512 * 131 * 14.96 / GIB  # batch 4 x pixels x classes x bytes
    assert ade - base == pytest.approx(expected, rel=0.01)


def test_fewer_classes_than_measured_take_nothing_away_from_upernet() -> None:
    # UPerNet was measured with ADE20K's 150 classes; a 19-class run keeps the figure (the
    # CPU figures read low on GPUs, so the logits stay as margin).
    assert catalog.find_model("upernet-r50").activation_classes == 150
    assert activations_gib(seg("upernet-r50", num_classes=19)) == activations_gib(
        seg("upernet-r50")
    )


def test_a_one_loss_segmentor_pays_the_measured_one_loss_figure() -> None:
    spec = catalog.find_model("fcn-hrnet-w18")
    assert spec is not None and spec.family == "hrnet"
    assert segmentation_class_bytes_per_pixel(seg("fcn-hrnet-w18", num_classes=150), spec) == (
        pytest.approx(131 * 12.0)
    )


def test_a_detector_ignores_the_class_count() -> None:
    w = Workload(model="faster-rcnn-r50-fpn", mode="full", num_classes=600)
    spec = catalog.find_model("faster-rcnn-r50-fpn")
    assert segmentation_class_bytes_per_pixel(w, spec) == 0.0


@pytest.mark.parametrize(
    ("query", "classes"),
    [
        ("训练 deeplabv3+ r50 ade20k batch 4", 150),
        ("train deeplabv3+ r50 cityscapes", 19),
        ("训练 upernet r50 19类 batch 2", 19),
        ("segformer b2 150 classes 训练", 150),
    ],
)
def test_the_data_set_or_a_class_count_in_a_question_sets_the_classes(
    query: str, classes: int
) -> None:
    parsed = parse_query(query)
    assert parsed.workload is not None and parsed.workload.num_classes == classes


def test_an_ade20k_question_costs_more_than_the_same_crop_without_a_data_set() -> None:
    with_set = parse_query("训练 deeplabv3+ r50 ade20k batch 4").workload
    plain = parse_query("训练 deeplabv3+ r50 512x512 batch 4").workload
    assert with_set is not None and plain is not None
    assert activations_gib(with_set) > activations_gib(plain) * 1.25


@pytest.mark.parametrize(
    ("name", "model_id"),
    [
        # the model zoos' own spellings (mmdet configs/swin README, mmseg configs/ocrnet)
        ("Mask R-CNN Swin-T FPN", "mask-rcnn-swin-t"),
        ("Mask R-CNN Swin-S FPN", "mask-rcnn-swin-s"),
        ("OCRNet HRNetV2p-W48", "ocrnet-hrnet-w48"),
        ("OCRNet HRNetV2p-W18", "ocrnet-hrnet-w18"),
        ("FCN HRNetV2p-W18", "fcn-hrnet-w18"),
    ],
)
def test_zoo_names_reach_the_measured_entries(name: str, model_id: str) -> None:
    spec = catalog.find_model(name)
    assert spec is not None and spec.id == model_id


def test_an_mmdetection_swin_detector_is_not_priced_as_a_segmentor() -> None:
    # Before its name resolved, Swin-T Mask R-CNN fell to the segmentation per-pixel median
    # at 1344x800 (13.4 GiB of activations); the measured entry holds ~5.8 GiB.
    w = Workload(
        model="mask-rcnn-swin-t",
        mode="full",
        batch_size=2,
        weights_format="fp32",
        optimizer="adamw",
        framework="mmdetection",
    )
    assert activations_gib(w) < 7.0
