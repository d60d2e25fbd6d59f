"""MMDetection's YOLOX and RTMDet are catalogued (data/models/detection_mmdet.toml): their
names are read, the batch a question names no figure for is the config name's ("8xb8",
"8xb32"), and YOLOX-L at its config's 8 images is the peak mmdetection's metafile logs."""

from advisor.memory import estimate
from advisor.models.workload import Workload
from tests.conftest import answers_both

GIB = 2**30


def test_yolox_l_at_its_configs_batch_is_the_logged_peak():
    # configs/yolox/metafile.yml: yolox_l_8xb8-300e_coco, Training Memory (GB) 19.9
    r = estimate(Workload(model="yolox-l", mode="full", batch_size=8, framework="mmdetection"))
    assert 19.4 * GIB < r.estimate.allocated_bytes < 21.0 * GIB
    assert "ema_model" in {t.name for t in r.estimate.terms}  # configs custom_hooks EMAHook


def test_yolox_l_batch_8_on_a_3090_is_answered_in_both_languages():
    rec, texts = answers_both("mmdet yolox-l 训练 单卡 batch 8 3090 24g 够吗")
    assert rec.result.model.id == "yolox-l"
    assert "YOLOX-L" in texts["zh"] and "批大小 8" in texts["zh"]
    assert "不认识" not in texts["zh"]
    _, texts = answers_both("mmdet yolox-l training, batch 8, one 3090 24gb, enough?")
    assert "YOLOX-L" in texts["en"] and "batch 8" in texts["en"]


def test_rtmdet_takes_the_configs_32_images_a_gpu_when_none_is_named():
    for lang, q in (
        ("en", "mmdet rtmdet-l training on a single 48gb l40, ok?"),
        ("zh", "mmdet rtmdet-l 训练 单卡 l40 48g 够吗"),
    ):
        rec, texts = answers_both(q)
        assert rec.result.model.id == "rtmdet-l"
        assert ("batch 32" if lang == "en" else "批大小 32") in texts[lang]


def test_yolox_without_a_batch_takes_the_configs_8_at_its_800_px_peak():
    rec, texts = answers_both("mmdetection yolox-s training on a 4090")
    assert rec.result.model.id == "yolox-s"
    assert "batch 8" in texts["en"]


def test_rtmdet_keeps_the_band_of_the_size_fit_its_activations_come_from():
    # no measured figure: the catalogued entry is sized as an uncatalogued 24.71M network
    # and keeps that guess's width (advisor/memory/band.py _sized_by_the_fit)
    known = estimate(Workload(model="rtmdet-m", mode="full", batch_size=8, image_width=640))
    assert known.estimate.low_bytes < 0.5 * known.estimate.total_bytes


def test_yolox_says_its_configs_640_input_and_the_800_px_batches_it_is_sized_at():
    # configs/yolox/yolox_s_8xb8-300e_coco.py: img_scale (640, 640), BatchSyncRandomResize
    # random_size_range (480, 800): the answer states both beside the 800x800 it sizes at
    rec, texts = answers_both("mmdet yolox-l 训练 单卡 batch 8 3090 24g 够吗")
    assert rec.result.model.id == "yolox-l"
    assert "分辨率 800x800" in texts["zh"] and "配置输入 640x640 → 480–800 px" in texts["zh"]
    assert (
        "resolution 800x800" in texts["en"] and "config input 640x640 → 480–800 px" in texts["en"]
    )
    # a size the question names is the size, with no multi-scale note
    _, texts = answers_both("mmdet yolox-l training 640x640 batch 8 on a 3090")
    assert "config input" not in texts["en"] and "配置输入" not in texts["zh"]


def test_rtmdet_keeps_its_configs_ema_copy():
    # configs/rtmdet custom_hooks: EMAHook (ExpMomentumEMA), an fp32 copy of the model
    r = estimate(Workload(model="rtmdet-l", mode="full", batch_size=8, image_width=640))
    ema = next(t for t in r.estimate.terms if t.name == "ema_model")
    assert ema.bytes == 52.3e6 * 4
