"""The task-aligned label assigner of the YOLOv8 / YOLO11 heads: [batch, n_max_boxes,
n_anchors] fp32 tensors in the loss (data/classic_activations.toml [label_assigner]), pinned
to the shapes in the frameworks' code, and the objects per image read from a question."""

from advisor.memory import estimate
from advisor.models.workload import Workload
from advisor.parse import parse_query


def _term(w: Workload):
    r = estimate(w)
    return next((t for t in r.estimate.terms if t.name == "label_assigner"), None), r


def test_ultralytics_select_candidates_in_gts_holds_32_bytes_per_image_box_anchor():
    # ultralytics/utils/tal.py: xy_centers[None] - lt and rb - xy_centers[None] ([b*n, na, 2]
    # fp32 each) and their cat ([b, n, na, 4] fp32): 8 + 8 + 16 B; at 640 px the stride
    # 8 / 16 / 32 maps give 80^2 + 40^2 + 20^2 = 8,400 anchors
    w = Workload(model="yolov8n", mode="full", batch_size=16, image_width=640, objects_per_image=50)
    term, _ = _term(w)
    assert term is not None
    assert term.values["anchors"] == 8400
    assert term.bytes == 16 * 50 * 8400 * 32


def test_mmyolo_repeats_the_priors_and_corners_before_it_subtracts():
    # mmyolo assigners/utils.py select_candidates_in_gts: priors, lt and rb repeated to
    # [b*n, na, 2] (3 x 8 B), two differences (2 x 8 B) and their cat (16 B)
    w = Workload(
        model="yolov8m",
        mode="full",
        batch_size=16,
        image_width=640,
        framework="mmyolo",
        objects_per_image=50,
    )
    term, _ = _term(w)
    assert term is not None and term.bytes == 16 * 50 * 8400 * 56


def test_the_default_is_a_coco_mosaic_and_is_said():
    # YOLOX's COCO recipe caps a mosaic's labels at 120 (yolox_base.py TrainTransform)
    w = Workload(model="yolo11s", mode="full", batch_size=8, image_width=1280)
    term, r = _term(w)
    anchors = 160**2 + 80**2 + 40**2
    assert term is not None and term.bytes == 8 * 120 * anchors * 32
    assert {a.field: a.value for a in r.assumed}["objects_per_image"] == "120"


def test_yolov5s_anchor_matching_has_no_such_term():
    # YOLOv5's build_targets matches anchors to targets by shape ratio: no [b, n, anchors]
    # assigner tensors
    term, _ = _term(Workload(model="yolov5s", mode="full", batch_size=16, image_width=640))
    assert term is None


def test_objects_per_image_is_read_from_a_question_in_both_languages():
    for line, value in (
        ("训练 yolov8n batch 16 T4 每张图最多200个框", 200),
        ("train yolov8s bs 8 on a 3060, max 50 objects per image", 50),
    ):
        p = parse_query(line)
        assert p.workload is not None and p.workload.objects_per_image == value
