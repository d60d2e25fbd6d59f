"""Segmentation and mmdet detection nets whose memory is feature maps: the measured catalog
entries (calibration/activations_cpu.py mmseg_* / cascade_* / mask_rcnn_swin_* records), their
usual names, their stacks' defaults, and the dense-prediction figure an uncatalogued
segmentation network gets instead of the classifier fit by parameter count."""

from __future__ import annotations

import pytest

from advisor import catalog
from advisor.memory import GIB, estimate
from advisor.memory.classic_inputs import fallback_activation_bytes_per_sample
from advisor.models.workload import Workload
from advisor.parse import parse_query
from advisor.render import assumption


def terms_gib(**fields: object) -> dict[str, float]:
    est = estimate(Workload(**fields)).estimate
    assert est is not None
    return {t.name: t.bytes / GIB for t in est.terms}


def cityscapes(model: str, **extra: object) -> dict:
    return dict(model=model, mode="full", batch_size=2, image_width=1024, image_height=512) | extra


@pytest.mark.parametrize(
    ("name", "model_id"),
    [
        ("deeplabv3+", "deeplabv3plus-r50"),
        ("deeplabv3plus r101", "deeplabv3plus-r101"),
        ("DeepLabV3+ R-101-D8", "deeplabv3plus-r101"),
        ("deeplabv3 r101", "deeplabv3-r101"),
        ("fcn r101-d8", "fcn-r101"),
        ("upernet swin-t", "upernet-swin-t"),
        ("upernet swin-b", "upernet-swin-b"),
        ("upernet convnext-t", "upernet-convnext-t"),
        ("upernet r101", "upernet-r101"),
        ("hrnet w48 ocr", "ocrnet-hrnet-w48"),
        ("ocrnet", "ocrnet-hrnet-w18"),
        ("hrnet-w18", "fcn-hrnet-w18"),
        ("cascade mask rcnn x101", "cascade-mask-rcnn-x101-32x4d-fpn"),
        ("cascade rcnn", "cascade-rcnn-r50-fpn"),
        ("mask rcnn swin-t", "mask-rcnn-swin-t"),
    ],
)
def test_dense_prediction_models_resolve_by_the_names_people_write(
    name: str, model_id: str
) -> None:
    spec = catalog.find_model(name)
    assert spec is not None and spec.id == model_id


def test_a_deeplabv3plus_r101_question_is_read_with_its_backbone_and_crop() -> None:
    q = parse_query("训练 deeplabv3+ r101 cityscapes 512x1024 batch 2")
    assert q.error is None and q.workload is not None
    assert q.workload.model == "deeplabv3plus-r101"
    assert q.workload.lora_rank is None  # "r101" is the backbone, not a LoRA rank
    assert {q.workload.image_width, q.workload.image_height} == {512, 1024}


def test_deeplabv3plus_r101_at_512x1024_keeps_several_gib_per_image() -> None:
    # Measured 10.1 kB per pixel (256x512 crops, BN in train mode, aux head): ~5 GB per
    # 512x1024 image, where the classifier fit for 63M parameters gives well under 1 GB.
    gib = terms_gib(**cityscapes("deeplabv3plus-r101"))
    assert 8.0 <= gib["activations"] <= 12.0
    classifier, ref = fallback_activation_bytes_per_sample(62.6e6)
    assert gib["activations"] * GIB / 2 > 3 * classifier * 1024 * 512 / ref**2


def test_a_12m_hrnet_ocr_keeps_more_activations_than_a_60m_classifier() -> None:
    hrnet = terms_gib(**cityscapes("ocrnet-hrnet-w18"))["activations"]
    classifier, ref = fallback_activation_bytes_per_sample(60e6)
    # batch 2 both; measured 4.1 GiB against 3.0 GiB from the classifier fit
    assert hrnet * GIB > 1.2 * 2 * classifier * 1024 * 512 / ref**2


def test_dilated_r101_keeps_more_than_r50() -> None:
    r50 = terms_gib(**cityscapes("deeplabv3-r50"))["activations"]
    r101 = terms_gib(**cityscapes("deeplabv3-r101"))["activations"]
    assert r101 > 1.3 * r50


def test_a_segmentation_model_without_crop_or_batch_assumes_its_configs() -> None:
    res = estimate(Workload(model="deeplabv3plus-r50", mode="full"))
    assumed = {a.field: a.value for a in res.assumed}
    assert assumed["resolution"] == "1024x512"
    assert assumed["batch_size"] == "2"
    assert assumed["optimizer"] == "sgd_momentum"
    swin = estimate(Workload(model="upernet-swin-t", mode="full"))
    swin_assumed = {a.field: a.value for a in swin.assumed}
    assert swin_assumed["resolution"] == "512x512"
    assert swin_assumed["optimizer"] == "adamw"


def test_an_uncatalogued_segmentation_net_gets_the_dense_prediction_figure() -> None:
    fields = dict(kind="classic", params_b=0.03, mode="full", batch_size=2)
    fields |= dict(image_width=1024, image_height=512)
    dense = estimate(Workload(**fields, framework="mmsegmentation"))
    plain = estimate(Workload(**fields))
    dense_act = next(t.bytes for t in dense.estimate.terms if t.name == "activations")
    plain_act = next(t.bytes for t in plain.estimate.terms if t.name == "activations")
    assert dense_act > 2 * plain_act  # measured: 2.8x for 30M parameters
    assert ("activation_source", "dense_prediction") in {(a.field, a.value) for a in dense.assumed}
    assert "activation_source" not in {a.field for a in plain.assumed}


def test_the_dense_prediction_assumption_reads_in_both_languages() -> None:
    zh = assumption("zh", "activation_source", "dense_prediction")
    en = assumption("en", "activation_source", "dense_prediction")
    assert "分割" in zh and "dense_prediction" not in zh
    assert "segmentation" in en


def test_a_catalogued_segmentor_under_mmseg_keeps_its_measured_figure() -> None:
    res = estimate(Workload(**cityscapes("pspnet-r50", framework="mmsegmentation")))
    assert "activation_source" not in {a.field for a in res.assumed}


def test_cascade_mask_rcnn_keeps_more_than_cascade_rcnn_and_mask_rcnn() -> None:
    det = dict(mode="full", batch_size=2, image_width=1333, image_height=800)
    cascade = terms_gib(model="cascade-rcnn-r50-fpn", **det)["activations"]
    cascade_mask = terms_gib(model="cascade-mask-rcnn-r50-fpn", **det)["activations"]
    mask = terms_gib(model="mask-rcnn-r50-fpn", framework="mmdetection", **det)["activations"]
    assert cascade_mask > cascade
    assert cascade_mask > mask


def test_swin_mask_rcnn_has_no_batch_norm_to_scale_for_openmmlab() -> None:
    det = dict(model="mask-rcnn-swin-t", mode="full", batch_size=2)
    mm = terms_gib(**det, framework="mmdetection")["activations"]
    d2 = terms_gib(**det, framework="detectron2")["activations"]
    assert mm == pytest.approx(d2)


def test_mixed_precision_discounts_only_the_activations_of_a_segmentor() -> None:
    fp32 = terms_gib(**cityscapes("deeplabv3plus-r101"))
    amp = terms_gib(**cityscapes("deeplabv3plus-r101", mixed_precision=True))
    # mmcv's AMP keeps fp32 weights, gradients and optimizer state
    for term in ("weights", "gradients", "optimizer"):
        assert amp[term] == pytest.approx(fp32[term])
    assert 0.45 * fp32["activations"] < amp["activations"] < 0.7 * fp32["activations"]


def test_an_uncatalogued_segmentation_net_asked_in_chinese_is_not_a_language_model() -> None:
    q = parse_query("mmseg 训练 一个 30M 参数的新分割网络 512x1024 batch 2")
    assert q.error is None and q.workload is not None
    assert q.workload.kind is not None and q.workload.kind.value == "classic"
    res = estimate(q.workload)
    assert ("activation_source", "dense_prediction") in {(a.field, a.value) for a in res.assumed}


def test_a_resnext_backbone_is_not_read_as_a_card_count() -> None:
    q = parse_query("train cascade mask rcnn x101 mmdet batch 2")
    assert q.error is None and q.workload is not None
    assert q.workload.model == "cascade-mask-rcnn-x101-32x4d-fpn"
    assert q.gpu_count is None
    assert parse_query("llama3-8b a100 x8").gpu_count == 8


def test_cityscapes_reads_its_wide_crop_and_an_explicit_size_drops_the_assumption() -> None:
    """Cityscapes trains on 512x1024 crops (mmsegmentation's cityscapes configs), not
    1024x1024 squares: half the pixels. A size the user wrote wins, and the answer no longer
    lists the dataset's crop among its assumptions beside it."""
    q = parse_query("训练 deeplabv3+ r50 cityscapes batch 2")
    assert q.workload is not None
    assert (q.workload.image_width, q.workload.image_height) == (1024, 512)
    assert "dataset = cityscapes 1024x512" in q.assumed
    q = parse_query("train deeplabv3+ r101 cityscapes 768x768 batch 2")
    assert q.workload is not None
    assert (q.workload.image_width, q.workload.image_height) == (768, 768)
    assert not any(a.startswith("dataset = ") for a in q.assumed)
