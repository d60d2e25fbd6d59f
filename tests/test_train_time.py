"""Training time (advisor/kinds/train_time.py, advisor/throughput.py, recommend/speed.py):
LLM runs from tokens x 6 x params at a stated MFU, vision runs from dataset x epochs at a
published images/s; hours and the whole job's cost per option."""

from __future__ import annotations

import json

import pytest

from advisor import catalog
from advisor.__main__ import main
from advisor.kinds import answer_kind
from advisor.parse import parse_query
from advisor.recommend.speed import train_mfu
from advisor.render import render
from advisor.throughput import images_per_s, table


def _answer(line: str, currency: str = "USD"):  # noqa: ANN202
    p = parse_query(line)
    assert p.question_kind == "train_time", (line, p.question_kind)
    return answer_kind(p, currency)


def test_resnet50_on_an_a100_is_on_the_same_stack_as_the_other_cards() -> None:
    """Was: NVIDIA's DALI-tuned 2470 img/s (14 h) for the A100 beside timm's plain-PyTorch
    826 for the 3090, so cards ranked by their source. Now every card is on the slowest
    stack: the 3090's timm figure x Lambda's measured A100 80GB SXM4 / RTX 3090 ratio
    (1582 / 905): 1444 img/s, 90 epochs in ~22 h; NVIDIA's 14 h is the tuned ceiling."""
    a100 = catalog.gpus()["a100-80gb-sxm"]
    rate = images_per_s("resnet50", a100, 224)
    assert rate is not None and rate.basis == "scaled_card"
    assert rate.images_per_s == pytest.approx(826 * 1582 / 905, rel=0.01)
    a = _answer("resnet50 imagenet 训练 90 epoch 要多久 a100 80g sxm")
    named = a.options[0]
    assert named.gpu_id == "a100-80gb-sxm"
    assert 20 < named.train_hours < 25


@pytest.mark.parametrize(
    "line",
    [
        "resnet50 imagenet 90个epoch 单张4090要跑多久",
        "how long does resnet-50 take on imagenet for 90 epochs on one rtx 4090",
        "4090 训练 resnet50 imagenet 要几天",
    ],
)
def test_a_4090_trains_resnet50_at_lambdas_measured_ratio_not_its_bandwidth(line: str) -> None:
    """Was: 890 img/s, 1.08x the 3090 (bandwidth ratio), 36 h, and a V100 (NVIDIA DALI)
    shown faster. Lambda's PyTorch benchmark: 4090 1301 vs 3090 905 img/s (1.44x): ~27 h."""
    a = _answer(line)
    named = a.options[0]
    assert named.gpu_id == "rtx-4090" and 24 < named.train_hours < 29
    gpus = catalog.gpus()
    r4090 = images_per_s("resnet50", gpus["rtx-4090"], 224).images_per_s  # type: ignore[union-attr]
    r3090 = images_per_s("resnet50", gpus["rtx-3090"], 224).images_per_s  # type: ignore[union-attr]
    assert r4090 / r3090 == pytest.approx(1301 / 905, rel=0.01)
    for v100 in ("tesla-v100", "tesla-v100-16gb"):
        assert images_per_s("resnet50", gpus[v100], 224).images_per_s < r4090  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("line", "lang"),
    [
        ("how long to train yolov8m on coco for 300 epochs on one 3090", "en"),
        ("yolov8m coco 300 epochs 一张3090 要训练多久", "zh"),
        ("train yolov8m on coco 300 epochs with a single rtx 3090, how many days", "en"),
    ],
)
def test_yolov8m_on_a_3090_is_about_the_v100s_days_and_ahead_of_an_a5000(
    line: str, lang: str
) -> None:
    """Was: 216 h on a 3090 (46 img/s) and the A5000 ranked faster (55 img/s) by the
    GeForce half-rate tensor spec. Lambda measures the A5000 at 0.88x a 3090 and the 3090
    at ~the V100 (801 vs 828): ~150-165 h, the 3090 before the A5000, and the data-loader
    caveat said."""
    a = _answer(line)
    rows = {o.gpu_id: o for o in a.options}
    assert 145 < rows["rtx-3090"].train_hours < 170  # type: ignore[operator]
    if "rtx-a5000" in rows:
        assert rows["rtx-a5000"].images_per_s < rows["rtx-3090"].images_per_s  # type: ignore[operator]
    gpus = catalog.gpus()
    a5000 = images_per_s("yolov8m", gpus["rtx-a5000"], 640).images_per_s  # type: ignore[union-attr]
    r3090 = images_per_s("yolov8m", gpus["rtx-3090"], 640).images_per_s  # type: ignore[union-attr]
    assert a5000 < r3090
    text = render("train_time", lang, plain=True, result=a, parsed=parse_query(line))
    assert "mosaic" in text and "DeepLearningExamples" not in text  # YOLO's own source


def test_no_epochs_named_takes_the_usual_recipes_and_says_so() -> None:
    p = parse_query("resnet50 imagenet 训练多久")
    assert "epochs = 90" in p.assumed and p.workload.train_images == 1_281_167 * 90
    coco = parse_query("yolov8s coco how long to train")
    assert "epochs = 100" in coco.assumed  # Ultralytics default.yaml


def test_the_job_cost_is_the_hours_times_the_price() -> None:
    a = _answer("resnet50 imagenet 90 epochs how long")
    for o in a.options:
        assert o.job_cost == pytest.approx(o.train_hours * o.price_per_hour, abs=0.02)


def test_an_unmeasured_card_is_never_faster_than_the_fastest_measured_one() -> None:
    fastest = max(r["images_per_s"] for r in table()["row"] if r["model"] == "resnet50")
    for gpu in catalog.gpus().values():
        rate = images_per_s("resnet50", gpu, 224)
        if rate is not None:
            assert rate.images_per_s <= fastest


def test_a_model_without_rows_is_scaled_by_gflops_and_says_so() -> None:
    v100 = catalog.gpus()["tesla-v100"]
    v8s, v5s = images_per_s("yolov8s", v100, 640), images_per_s("yolov5s", v100, 640)
    assert v8s.basis == "scaled_model"  # type: ignore[union-attr]
    assert v8s.images_per_s == pytest.approx(v5s.images_per_s * 16.5 / 28.6, rel=0.01)  # type: ignore[union-attr]
    assert images_per_s("segformer-b2", v100, 512) is None  # nothing published: no time


def test_larger_images_are_slower_and_smaller_ones_not_faster() -> None:
    r3090 = catalog.gpus()["rtx-3090"]
    at224 = images_per_s("resnet50", r3090, 224).images_per_s  # type: ignore[union-attr]
    assert images_per_s("resnet50", r3090, 448).images_per_s == pytest.approx(at224 / 4)  # type: ignore[union-attr]
    assert images_per_s("resnet50", r3090, 32).images_per_s == at224  # type: ignore[union-attr]


def test_an_llm_run_is_six_times_params_times_tokens_at_the_stated_mfu() -> None:
    a = _answer("qwen2.5-7b full 8x h100 1b tokens how long")
    o = a.options[0]
    gpu = catalog.gpus()[o.gpu_id]
    assert o.mfu == pytest.approx(train_mfu(gpu, o.count), abs=0.001)
    from advisor.catalog import find_model

    params = find_model("qwen2.5-7b").active_b * 1e9  # type: ignore[union-attr]
    expected = 6 * params * 1e9 / (o.count * gpu.dense_tflops * 1e12 * o.mfu) / 3600
    assert o.train_hours == pytest.approx(expected, rel=0.02)


def test_more_data_takes_proportionally_longer() -> None:
    one = _answer("resnet50 imagenet 45 epochs how long on a100 80g sxm").options[0]
    two = _answer("resnet50 imagenet 90 epochs how long on a100 80g sxm").options[0]
    assert two.train_hours == pytest.approx(2 * one.train_hours, rel=0.01)


def test_absurd_epochs_are_a_clear_error_in_both_languages() -> None:
    p = parse_query("resnet50 imagenet 1000000000 epochs how long")
    assert p.error is not None and p.error.detail == "epochs"
    assert "epochs must be from 1 to 100000" in render("error", "en", error=p.error, parsed=p)
    assert "训练轮数" in render("error", "zh", error=p.error, parsed=p)


def test_how_long_without_an_amount_of_data_asks_for_it() -> None:
    a = _answer("qwen2.5-7b lora 要多久")
    assert a.task is None
    text = render("train_time", "en", plain=True, result=a, parsed=parse_query("x"))
    assert "depends on how much data" in text


def test_the_cli_json_has_train_hours_and_job_cost(capsys) -> None:  # noqa: ANN001
    assert main(["yolov8s coco 训练多久", "--json", "--offline", "--lang", "zh"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["question_kind"] == "train_time"
    assert out["train_hours"] == out["train_time"]["options"][0]["train_hours"] > 0
    assert out["job_cost"] is not None and out["train_time"]["dataset"] == "coco"


def test_the_first_reply_stays_short() -> None:
    for line in ("resnet50 imagenet 训练 90 epoch 要多久", "qwen2.5-7b lora 1b tokens how long"):
        p = parse_query(line)
        for lang in ("en", "zh"):
            text = render("train_time", lang, plain=True, result=answer_kind(p, "USD"), parsed=p)
            assert len(text) <= 900, (line, lang, len(text))


def test_vit_b_imagenet_takes_deits_300_epochs_at_its_published_speed() -> None:
    """ "train vit-b/16 on imagenet from scratch how many days on 8x a100" had no published
    speed (hours left out). DeiT: DeiT-B (ViT-B/16) 300 epochs of ImageNet-1k in 53 h on one
    8x V100 node; the same figure comes back for 8 V100, and 300 epochs are the recipe."""
    p = parse_query("vit-b imagenet 训练多久 8x v100")
    assert "epochs = 300" in p.assumed and p.workload.train_images == 1_281_167 * 300
    a = _answer("vit-b imagenet 训练多久 8x v100")
    v100 = a.options[0]
    assert (v100.gpu_id, v100.count) == ("tesla-v100", 8)
    assert v100.train_hours == pytest.approx(53, rel=0.02)
    a100 = _answer("train vit-b/16 on imagenet from scratch how many days on 8x a100").options[0]
    assert a100.train_hours is not None and a100.train_hours < v100.train_hours
    # ResNet-50 keeps the torchvision recipe's 90 epochs
    assert "epochs = 90" in parse_query("resnet50 imagenet 训练多久").assumed


@pytest.mark.parametrize(
    "line",
    [
        "llama3-8b 从头预训练 100B tokens 8卡h100要多久",
        "how long to pretrain llama3-8b on 100B tokens with 8 h100",
        "8张h100 预训练 llama 3 8b 100b token 需要几天",
    ],
)
def test_8b_pretraining_on_8_h100_is_at_torchtitans_mfu_not_40_percent(line: str) -> None:
    """Was: MFU 40% -> 423 h. torchtitan measures Llama 3.1 8B on 8x H100 at 5,762-6,667
    tok/s per GPU (28-32% MFU): 100B tokens in ~520-600 h."""
    a = _answer(line)
    h100 = next(o for o in a.options if o.gpu_id.startswith("h100"))
    assert h100.count == 8 and h100.mfu == pytest.approx(0.30)
    assert 500 < h100.train_hours < 620
    p = parse_query(line)
    for lang in ("zh", "en"):
        text = render("train_time", lang, plain=True, result=a, parsed=p)
        assert "MFU 30%" in text and "40%" not in text


def test_the_stated_pcie_rule_is_applied_to_the_pcie_rows() -> None:
    """Was: '多卡走 PCIe 再 ×0.8' stated, and 8x A100 40GB PCIe still at MFU 40%. A PCIe
    datacenter card has NVLink only between bridged pairs (gpus.toml nvlink_bridge_cards)."""
    pcie = catalog.gpus()["a100-80gb-pcie"]
    sxm = catalog.gpus()["a100-80gb-sxm"]
    assert train_mfu(pcie, 8) == pytest.approx(train_mfu(sxm, 8) * 0.8)
    assert train_mfu(pcie, 2) == pytest.approx(train_mfu(sxm, 2))
    line = "how long to pretrain llama3-8b on 100B tokens with 8 A100 PCIe"
    a = _answer(line)
    row = next(o for o in a.options if o.gpu_id == "a100-80gb-pcie")
    assert row.mfu == pytest.approx(0.24)
    text = render("train_time", "en", plain=True, result=a, parsed=parse_query(line))
    assert "×0.8 when several cards talk over PCIe" in text and "MFU 24%" in text


@pytest.mark.parametrize(
    ("line", "lang"),
    [
        ("llama3-8b 从头预训练 100B tokens 8卡mi300x要多久", "zh"),
        ("how long to pretrain llama3-8b on 100B tokens with 8x mi300x", "en"),
        ("8张mi300x 预训练 llama 3 8b 100b token 需要几天", "zh"),
    ],
)
def test_mi300x_trains_no_faster_than_h100_at_its_measured_matmul_share(line, lang) -> None:
    """Was: MI300X at H100's 30% MFU, 427 h against H100's 564 h (1.32x faster on paper).
    Its measured BF16 matmul reaches 60.1% of its peak where H100's reaches 80.1% (stas00/
    ml-engineering MAMF table): MFU 0.30 x 0.601 / 0.801 = 22.5%, level with H100, and
    SemiAnalysis (2024-12) measured it at or below H100 on the public ROCm stack."""
    mi300x, h100 = catalog.gpus()["mi300x"], catalog.gpus()["h100-sxm"]
    assert train_mfu(mi300x, 8) == pytest.approx(0.30 * 0.601 / 0.801)
    rate = train_mfu(mi300x, 8) * mi300x.dense_tflops
    assert rate <= train_mfu(h100, 8) * h100.dense_tflops * 1.01
    a = _answer(line)
    row = next(o for o in a.options if o.gpu_id == "mi300x")
    assert row.count == 8 and 540 < row.train_hours < 620
    assert a.card_mfu and a.card_mfu[0]["gpu"] == row.gpu_name
    text = render("train_time", lang, plain=True, result=a, parsed=parse_query(line))
    assert "SemiAnalysis" in text and "MAMF" in text and "22%" in text
