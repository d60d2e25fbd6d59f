"""Mask2Former's loss holds the ground-truth masks at the padded input (data/
classic_activations.toml [query_mask_targets]), pinned to mmdet's code: preprocess_panoptic_gt
returns masks.long(), and _loss_by_feat_single keeps the matched targets' int64 copy, their
concatenation and a float copy alive together; at most one segment a query (100)."""

from advisor.memory import estimate
from advisor.models.workload import Workload
from advisor.parse import parse_query


def _term(w: Workload):
    r = estimate(w)
    return next((t for t in r.estimate.terms if t.name == "query_mask_targets"), None), r


def test_int64_masks_and_the_loss_copies_hold_28_bytes_a_pixel_of_a_segment():
    # 8 (masks.long()) + 8 (gt_masks[pos_assigned_gt_inds]) + 8 (torch.cat) + 4 (.float())
    w = Workload(model="mask2former-swin-b", mode="full", batch_size=2, objects_per_image=40)
    term, _ = _term(w)
    assert term is not None
    assert term.bytes == 2 * 40 * 1024 * 1024 * 28


def test_the_default_is_one_segment_per_query_and_is_said():
    # configs/mask2former/mask2former_r50_8xb2-lsj-50e_coco-panoptic.py: num_queries=100,
    # the LSJ crop padded to 1024x1024 (BatchFixedSizePad, pad_mask=True), 2 images per GPU
    term, r = _term(Workload(model="mask2former-swin-t", mode="full"))
    assert term is not None and term.bytes == 2 * 100 * 1024 * 1024 * 28
    assert {a.field: a.value for a in r.assumed}["segments_per_image"] == "100"


def test_the_matcher_caps_the_segments_at_the_queries():
    w = Workload(model="mask2former-swin-t", mode="full", batch_size=1, objects_per_image=500)
    term, _ = _term(w)
    assert term is not None and term.values["segments"] == 100


def test_inference_and_other_detectors_hold_no_such_masks():
    assert _term(Workload(model="mask2former-swin-b", mode="inference"))[0] is None
    assert _term(Workload(model="yolov8n", mode="full", batch_size=16))[0] is None


def test_segments_per_image_are_read_from_a_question_in_both_languages():
    for line in (
        "训练 mask2former swin-b 每张图最多30个分割区域",
        "train mask2former swin-b, max 30 segments per image",
    ):
        w = parse_query(line).workload
        assert w is not None and w.objects_per_image == 30, line
