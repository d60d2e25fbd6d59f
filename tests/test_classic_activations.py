"""Classic vision training memory: measured catalog entries for detection / segmentation /
classification models, the parameter-count fallback for uncatalogued networks, the
detection defaults (1333x800 padded to 32, batch 2) and OpenMMLab's trainable BN."""

from __future__ import annotations

import pytest

from advisor import catalog
from advisor.memory import GIB, estimate
from advisor.memory.classic import openmmlab_bn_bytes
from advisor.memory.classic_inputs import fallback_activation_bytes_per_sample
from advisor.models.workload import Workload
from advisor.parse import parse_query


def activations_gib(**fields: object) -> float:
    est = estimate(Workload(**fields)).estimate
    assert est is not None
    return next(t.bytes for t in est.terms if t.name == "activations") / GIB


def detection(model: str, **extra: object) -> Workload:
    fields: dict = dict(
        model=model,
        mode="full",
        batch_size=2,
        image_width=1333,
        image_height=800,
        weights_format="fp32",
        optimizer="sgd_momentum",
    )
    return Workload(**(fields | extra))


@pytest.mark.parametrize(
    ("name", "model_id"),
    [
        ("Faster R-CNN R50-FPN", "faster-rcnn-r50-fpn"),
        ("faster rcnn", "faster-rcnn-r50-fpn"),
        ("fasterrcnn_resnet50_fpn", "faster-rcnn-r50-fpn"),
        ("Faster R-CNN X-101-64x4d-FPN", "faster-rcnn-x101-64x4d-fpn"),
        ("Mask R-CNN R-50-FPN", "mask-rcnn-r50-fpn"),
        ("RetinaNet R-101-FPN", "retinanet-r101-fpn"),
        ("retinanet", "retinanet-r50-fpn"),
        ("detr", "detr-r50"),
        ("convnext-tiny", "convnext-tiny"),
        ("efficientnet-b0", "efficientnet-b0"),
        ("deeplabv3", "deeplabv3-r50"),
    ],
)
def test_common_vision_models_resolve_by_their_usual_names(name: str, model_id: str) -> None:
    spec = catalog.find_model(name)
    assert spec is not None and spec.id == model_id


@pytest.mark.parametrize(
    ("line", "model_id"),
    [
        ("train faster rcnn batch 2", "faster-rcnn-r50-fpn"),
        ("mask r-cnn training on coco", "mask-rcnn-r50-fpn"),
        ("训练 retinanet", "retinanet-r50-fpn"),
        ("fine-tune convnext-tiny batch 64", "convnext-tiny"),
        ("swin-t training", "swin-t"),
    ],
)
def test_vision_models_are_read_from_a_question(line: str, model_id: str) -> None:
    q = parse_query(line)
    assert q.error is None and q.workload is not None
    assert q.workload.model == model_id


def test_mmdet_and_detectron2_are_read_as_training_stacks() -> None:
    mm = parse_query("mmdet faster rcnn r50 batch 2")
    d2 = parse_query("detectron2 mask rcnn")
    assert mm.workload is not None and mm.workload.framework == "mmdetection"
    assert d2.workload is not None and d2.workload.framework == "detectron2"


def test_faster_rcnn_at_1333x800_keeps_over_a_gib_of_activations_per_image() -> None:
    # Measured 317 MB per image at 667x400 on torchvision's model: ~1.2 GB at 1344x800.
    gib = activations_gib(**detection("faster-rcnn-r50-fpn").model_dump())
    assert 2.0 <= gib <= 3.2


def test_a_bigger_backbone_keeps_more_activations() -> None:
    r50 = activations_gib(**detection("faster-rcnn-r50-fpn").model_dump())
    x101 = activations_gib(**detection("faster-rcnn-x101-64x4d-fpn").model_dump())
    assert x101 > 1.5 * r50


def test_detection_without_size_or_batch_assumes_1333x800_and_two_images() -> None:
    res = estimate(Workload(model="faster-rcnn-r50-fpn", mode="full"))
    assumed = {a.field: a.value for a in res.assumed}
    assert assumed["batch_size"] == "2"
    assert assumed["resolution"] == "1333x800"
    act = next(t for t in res.estimate.terms if t.name == "activations")  # type: ignore[union-attr]
    assert act.values["size"] == "1344x800"  # padded to a multiple of 32


def test_openmmlab_trainable_bn_keeps_more_than_detectron2s_frozen_bn() -> None:
    frozen = activations_gib(
        **detection("faster-rcnn-r50-fpn", framework="detectron2").model_dump()
    )
    mm = activations_gib(**detection("faster-rcnn-r50-fpn", framework="mmdetection").model_dump())
    assert mm > 1.1 * frozen


def test_uncatalogued_network_activations_grow_with_its_size() -> None:
    small, ref = fallback_activation_bytes_per_sample(5e6)
    large, _ = fallback_activation_bytes_per_sample(300e6)
    assert ref == 224
    assert 30e6 <= small <= 120e6
    assert large > 3 * small
    tiny = activations_gib(kind="classic", params_b=0.005, mode="full", batch_size=32)
    huge = activations_gib(kind="classic", params_b=0.3, mode="full", batch_size=32)
    assert huge > 3 * tiny


def test_detection_without_an_optimizer_assumes_the_stacks_sgd_with_momentum() -> None:
    res = estimate(Workload(model="mask-rcnn-r50-fpn", mode="full"))
    assumed = {a.field: a.value for a in res.assumed}
    assert assumed["optimizer"] == "sgd_momentum"
    detr = estimate(Workload(model="detr-r50", mode="full"))
    assert {a.field: a.value for a in detr.assumed}["optimizer"] == "adamw"


def test_openmmlab_bn_adds_the_backbones_bytes_whatever_the_detector_head() -> None:
    # The trainable-affine BN keeps the inputs of the backbone's trained stages: the same
    # bytes over Faster R-CNN and RetinaNet on one backbone (gap, 2026-12-01), more on R101
    # than on R50 and more again on the wide ResNeXt-101.
    def extra_gib(model: str) -> float:
        frozen = activations_gib(**detection(model, framework="detectron2").model_dump())
        mm = activations_gib(**detection(model, framework="mmdetection").model_dump())
        return mm - frozen

    px = 1344 * 800 * 2  # padded input x batch 2
    assert extra_gib("faster-rcnn-r50-fpn") == pytest.approx(468.1 * px / GIB, rel=1e-6)
    r50, r101 = extra_gib("faster-rcnn-r50-fpn"), extra_gib("faster-rcnn-r101-fpn")
    x101 = extra_gib("faster-rcnn-x101-32x8d-fpn")
    assert r50 < r101 < x101
    assert extra_gib("faster-rcnn-x101-64x4d-fpn") == pytest.approx(x101)

    mm = Workload(model="retinanet-r101-fpn", framework="mmdetection")
    per_image = {
        model: openmmlab_bn_bytes(mm, catalog.find_model(model), 1344, 800)
        for model in ("retinanet-r101-fpn", "faster-rcnn-r101-fpn", "retinanet-r50-fpn")
    }
    assert per_image["retinanet-r101-fpn"] == per_image["faster-rcnn-r101-fpn"]
    assert per_image["retinanet-r50-fpn"] == pytest.approx(r50 * GIB / 2)
    # detectron2 and torchvision freeze BN: nothing is added there
    d2 = Workload(model="faster-rcnn-r50-fpn", framework="detectron2")
    assert openmmlab_bn_bytes(d2, catalog.find_model("faster-rcnn-r50-fpn"), 1344, 800) is None


def test_openmmlab_bn_extra_is_halved_with_the_activations_under_amp() -> None:
    def extra_gib(**amp: object) -> float:
        base = detection("faster-rcnn-r101-fpn", **amp)
        frozen = activations_gib(**base.model_copy(update={"framework": "detectron2"}).model_dump())
        mm = activations_gib(**base.model_copy(update={"framework": "mmdetection"}).model_dump())
        return mm - frozen

    fp32 = extra_gib()
    amp = extra_gib(mixed_precision=True)
    assert amp == pytest.approx(0.55 * fp32, rel=0.02)


def test_mmdet_bitmap_mask_targets_add_above_the_backward_peak() -> None:
    # mmdet copies one image's masks per positive RoI in fp32 after the mask head's
    # forward (gap, 2026-12-01): (660 - 208.7 x images) B per padded pixel over the peak.
    def terms(model: str, framework: str, batch: int = 2) -> dict[str, float]:
        w = detection(model, framework=framework, batch_size=batch)
        est = estimate(w).estimate
        assert est is not None
        return {t.name: t.bytes for t in est.terms}

    mm = terms("mask-rcnn-r50-fpn", "mmdetection")
    assert mm["mask_targets"] == pytest.approx((660.0 - 2 * 208.7) * 1344 * 800, rel=1e-6)
    assert terms("cascade-mask-rcnn-r50-fpn", "mmdetection")["mask_targets"] > 0
    # torchvision / detectron2 build targets from one copy per box; box-only heads have none
    assert "mask_targets" not in terms("mask-rcnn-r50-fpn", "detectron2")
    assert "mask_targets" not in terms("faster-rcnn-r50-fpn", "mmdetection")
    assert "mask_targets" not in terms("cascade-rcnn-r50-fpn", "mmdetection")
    # four images' forward leave more room under the peak than one image's copies take
    assert "mask_targets" not in terms("mask-rcnn-r50-fpn", "mmdetection", batch=4)
    one = terms("mask-rcnn-r50-fpn", "mmdetection", batch=1)["mask_targets"]
    assert one > mm["mask_targets"]


def test_the_mask_head_is_sized_for_the_samplers_128_positives_an_image() -> None:
    # The catalog's mask entries ran the head on the 7 ground-truth boxes a random-weight
    # RPN leaves positive; a trained detector's sampler takes 512 x 0.25 = 128 an image, and
    # the measured step peaks 1,637,544 B higher a RoI (calibration/mask_head_positives.py,
    # 2026-12-07: 1,123,456,224 -> 1,321,599,060 B over 121 more RoIs).
    def term(model: str, **extra: object) -> tuple[float, dict]:
        est = estimate(detection(model, **extra)).estimate
        assert est is not None
        found = [t for t in est.terms if t.name == "mask_head_rois"]
        return (found[0].bytes, found[0].values) if found else (0.0, {})

    per_roi = (1_321_599_060 - 1_123_456_224) / (128 - 7)
    one, values = term("mask-rcnn-r50-fpn", framework="detectron2")
    assert one == pytest.approx(121 * 2 * per_roi, rel=1e-4)
    assert values["rois"] == 242 and values["stages"] == 1
    # Cascade Mask R-CNN trains a mask head in each of its three stages
    three, values = term("cascade-mask-rcnn-r50-fpn", framework="mmdetection")
    assert three == pytest.approx(3 * one, rel=1e-6) and values["stages"] == 3
    # under AMP the head's activations shrink with the rest (0.55)
    amp, _ = term("mask-rcnn-r50-fpn", mixed_precision=True)
    assert amp == pytest.approx(0.55 * one, rel=1e-6)
    # box-only detectors have no mask head
    assert term("faster-rcnn-r50-fpn")[0] == 0.0
    assert term("cascade-rcnn-r50-fpn", framework="mmdetection")[0] == 0.0


def test_swin_window_attention_stays_fp32_under_autocast() -> None:
    # mmdet's WindowMSA adds the fp32 relative-position bias and shift mask to the fp16
    # q @ k^T, so softmax keeps fp32 probabilities and attn @ v an fp16 copy: 6 B a score
    # saved under autocast, against 4 B in fp32 (which the AMP share had halved).
    def term(model: str, **extra: object) -> tuple[float, dict]:
        est = estimate(detection(model, optimizer="adamw", **extra)).estimate
        assert est is not None
        found = [t for t in est.terms if t.name == "amp_window_scores"]
        return (found[0].bytes, found[0].values) if found else (0.0, {})

    # Swin-T: depths 2/2/6/2, heads 3/6/12/24, 7x7 windows on the 1/4..1/32 maps
    per_pixel = sum(
        d * h * 49 / (4 * 2**s) ** 2
        for s, (d, h) in enumerate(zip([2, 2, 6, 2], [3, 6, 12, 24], strict=True))
    )
    assert per_pixel == pytest.approx(43.64, abs=0.01)
    amp, values = term("mask-rcnn-swin-t", mixed_precision=True)
    assert amp == pytest.approx(per_pixel * 1344 * 800 * 2 * (6 - 0.55 * 4), rel=1e-6)
    assert values["scores_m"] == round(per_pixel * 1344 * 800 * 2 / 1e6)
    # Swin-S has 18 blocks in its third stage
    assert term("mask-rcnn-swin-s", mixed_precision=True)[0] > 1.5 * amp
    # fp32 training keeps the one fp32 tensor the measured entry holds; CNNs have no windows
    assert term("mask-rcnn-swin-t")[0] == 0.0
    assert term("mask-rcnn-r50-fpn", mixed_precision=True)[0] == 0.0


def test_an_mmseg_run_says_the_estimate_has_cudnn_benchmark_off() -> None:
    # MMSeg's configs turn cudnn_benchmark on and its log then counts the search's
    # workspaces (18,773 MB logged against the model zoo's 6.1 GB for PSPNet, whose tables
    # were logged with it off: mmsegmentation issues #1215, #321).
    def assumed(framework: str, model: str) -> list[tuple[str, str]]:
        w = Workload(model=model, mode="full", batch_size=4, framework=framework)
        return [(a.field, a.value) for a in estimate(w).assumed]

    assert ("cudnn_benchmark", "mmseg_off") in assumed("mmsegmentation", "deeplabv3plus-r50")
    assert all(f != "cudnn_benchmark" for f, _ in assumed("mmdetection", "faster-rcnn-r50-fpn"))


def test_a_yolo_run_under_its_trainer_says_gpu_mem_is_reserved_memory() -> None:
    # Ultralytics / YOLOv5 print GPU_mem as torch.cuda.memory_reserved() / 1e9
    def fields(**extra: object) -> list[str]:
        w = Workload(model="yolov8n", mode="full", batch_size=16, **extra)
        return [a.field for a in estimate(w).assumed]

    assert "gpu_mem_column" in fields()
    assert "gpu_mem_column" in fields(framework="ultralytics")
    assert "gpu_mem_column" not in fields(framework="mmyolo")


def test_autocast_keeps_a_16_bit_copy_of_every_weight_through_the_forward() -> None:
    # torch.autocast's cast cache (aten/src/ATen/autocast_mode.cpp cached_cast: fp32 leaf
    # tensors that require grad, cast once per autocast region) holds the fp16 copy of every
    # conv / linear weight, which each conv also saves for backward: 2 B a parameter
    def copy_bytes(**extra: object) -> int:
        est = estimate(detection("mask-rcnn-r50-fpn", framework="mmdetection", **extra)).estimate
        assert est is not None
        return sum(t.bytes for t in est.terms if t.name == "compute_copy")

    params = catalog.find_model("mask-rcnn-r50-fpn").params_b * 1e9  # type: ignore[union-attr]
    assert copy_bytes(compute_dtype="fp16", mixed_precision=True) == pytest.approx(2 * params)
    assert copy_bytes() == 0  # fp32 training reads its fp32 weights as they are


def test_the_multiscale_crop_recipe_pads_a_batch_to_a_crop_flipped_canvas() -> None:
    # mmdet's ms-crop pipeline (configs/swin/mask_rcnn_swin-t-p4-w7_fpn_ms-crop-3x_coco.py):
    # a 600-high, 384-wide crop resized to an 800 short side is 1250 x 800, padded with a
    # 800 x 1333 image of the same (landscape) original orientation: 1280 x 1344
    from advisor.memory.classic_inputs import multiscale_crop_canvas

    assert multiscale_crop_canvas(1333, 800) == (1333, 1250)
    assert multiscale_crop_canvas(800, 1333) == (1250, 1333)
    plain = activations_gib(**detection("mask-rcnn-swin-t", framework="mmdetection").model_dump())
    crop = activations_gib(
        **detection("mask-rcnn-swin-t", framework="mmdetection", multiscale_crop=True).model_dump()
    )
    assert crop / plain == pytest.approx(1280 / 800, rel=0.01)
    parsed = parse_query("mask rcnn swin-t ms-crop 3x batch 2 mmdet")
    assert parsed.workload is not None and parsed.workload.multiscale_crop
