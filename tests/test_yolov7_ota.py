"""YOLOv7 trained by its own train.py: the catalog's YOLOv7 models, the trainer's defaults
(AMP, ModelEMA, SGD, batch 16 at 640) and the OTA loss's per-image cost tensors
(utils/loss.py ComputeLossOTA.build_targets; data/classic_activations.toml
[ota_cost_matrices])."""

from __future__ import annotations

import pytest

from advisor.memory import estimate
from advisor.memory.classic_inputs import activation_data
from advisor.models.workload import Workload
from advisor.parse import parse_query
from tests.conftest import answers_both


def ota(w: Workload) -> tuple[float, dict, dict]:
    result = estimate(w)
    est = result.estimate
    assert est is not None
    found = [t for t in est.terms if t.name == "ota_cost_matrices"]
    assumed = {a.field: a.value for a in result.assumed}
    return (found[0].bytes, found[0].values, assumed) if found else (0.0, {}, assumed)


def yolov7(**extra: object) -> Workload:
    fields: dict = dict(model="yolov7", mode="full", batch_size=16, image_width=640)
    return Workload(**(fields | extra))


def test_the_element_size_is_the_eleven_fp32_tensors_build_targets_holds() -> None:
    # gt_cls_per_image, the repeated sigmoid, y, 1 - y, y / (1 - y) and its log, plus
    # binary_cross_entropy_with_logits' max_val, loss, exp(-max_val), -input and
    # (-input - max_val): 11 fp32 tensors of [objects, candidates, classes]
    table = activation_data()["ota_cost_matrices"]
    assert table["bytes_per_element"] == 11 * 4
    # find_3_positive: 3 anchors x the box's cell and two neighbours, on each level;
    # find_5_positive (the P6 models' auxiliary head): the cell and all four neighbours
    assert table["anchors_per_level"] * table["cells_per_anchor"] == 9
    assert table["aux_cells_per_anchor"] == 5 and "yolov7" not in table["aux_head_models"]
    assert table["detect_levels"]["yolov7"] == 3 and table["detect_levels"]["yolov7-e6e"] == 4


def test_the_cost_tensors_are_one_images_and_the_batch_does_not_multiply_them() -> None:
    one, values, assumed = ota(yolov7(batch_size=1))
    sixteen, _, _ = ota(yolov7(batch_size=16))
    assert one == sixteen == 120 * (120 * 27) * 80 * 44
    assert values | {"gib": 0} == {
        "gib": 0,
        "objects": 120,
        "candidates": 3240,
        "classes": 80,
        "bytes_per_element": 44,
    }
    assert assumed["ota_objects_per_image"] == "120" and assumed["ota_classes"] == "80"
    # a P6 model detects on four levels and trains with train_aux.py, whose auxiliary
    # head's assigner (find_5_positive, g = 1.0) takes 5 cells an anchor: 60 an object
    p6, values, _ = ota(yolov7(model="yolov7-e6e", image_width=1280))
    assert values["candidates"] == 120 * 60 and p6 == 120 * 120 * 60 * 80 * 44


def test_the_data_a_question_states_sets_objects_and_classes() -> None:
    few, values, assumed = ota(yolov7(objects_per_image=30, num_classes=1))
    assert few == 30 * (30 * 27) * 1 * 44
    assert "ota_objects_per_image" not in assumed and "ota_classes" not in assumed
    w = parse_query("train yolov7 batch 16 640, 1 class, max 30 objects per image").workload
    assert w is not None and w.model == "yolov7"
    assert (w.num_classes, w.objects_per_image) == (1, 30)
    assert ota(w)[0] == few


def test_other_detectors_and_inference_have_no_ota_term() -> None:
    assert ota(Workload(model="yolov8n", mode="full", batch_size=16))[0] == 0.0
    assert ota(Workload(model="yolov7", mode="inference"))[0] == 0.0


@pytest.mark.parametrize(
    ("question", "model_id"),
    [
        ("yolov7 训练 batch 16 t4", "yolov7"),
        ("train yolov7-tiny batch 90 on a 2080ti", "yolov7-tiny"),
        ("yolov7-e6e 1280 batch 6 v100 32g", "yolov7-e6e"),
        ("yolov7x 训练", "yolov7x"),
    ],
)
def test_yolov7_models_are_read_from_a_question(question: str, model_id: str) -> None:
    w = parse_query(question).workload
    assert w is not None and w.model == model_id


def test_the_answer_shows_the_term_and_its_assumptions_in_both_languages() -> None:
    _, texts = answers_both("yolov7 训练 batch 16 t4")
    assert "OTA loss cost tensors (YOLOv7) 1.3 GiB" in texts["en"]
    assert "120 objects in the most crowded image" in texts["en"]
    assert "「OTA」损失的代价张量（YOLOv7） 1.3 GiB" in texts["zh"]
    assert "按 80 个类别算" in texts["zh"]
    # the AMP default is said as YOLOv7's own train.py, not Ultralytics'
    assert "YOLOv7's train.py runs amp.autocast" in texts["en"]
    assert "Ultralytics amp=True" not in texts["en"]
