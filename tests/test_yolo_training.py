"""YOLO detectors trained as Ultralytics / MMYOLO / YOLOX do: an fp32 EMA copy of the model
beside it, and Ultralytics' defaults when the user names none (data/classic_activations.toml
[ema], [family.yolo])."""

from advisor.memory import estimate
from advisor.models.workload import Workload


def test_the_ema_copy_of_the_model_is_counted_in_fp32():
    r = estimate(Workload(model="yolov8x", mode="full", batch_size=4, image_width=640))
    ema = next(t for t in r.estimate.terms if t.name == "ema_model")
    # ModelEMA deepcopies the model: 68.2M parameters x 4 B
    assert abs(ema.bytes - 68.2e6 * 4) / (68.2e6 * 4) < 0.01


def test_ultralytics_defaults_when_the_user_names_none():
    r = estimate(Workload(model="yolov8n", mode="full"))
    assumed = {a.field: a.value for a in r.assumed}
    # ultralytics/cfg/default.yaml: batch 16, imgsz 640; optimizer auto -> AdamW under
    # 10,000 iterations
    assert assumed["batch_size"] == "16"
    assert assumed["resolution"] == "640x640"
    assert assumed["optimizer"] == "adamw"
