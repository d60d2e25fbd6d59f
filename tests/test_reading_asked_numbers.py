"""What a number or a "how many" in the question counts: tokens per second on the named
card (not cards), epochs written "10个epoch" / "10 epochs" / "90ep", and a bare card number
("2060") before an image size."""

import pytest

from advisor import catalog
from advisor.__main__ import main
from advisor.parse import parse_query

IMAGENET_TRAIN = 1_281_167  # the training split (vocab/datasets.toml)


@pytest.mark.parametrize(
    "question",
    [
        "gemma-2-27b on an rtx 5090 with vllm, how many tokens per second",
        "qwen2.5-7b on a 4090, how many tokens/s",
        "llama3-8b on one 3090, how many tokens per second with vllm",
        "gemma-2-27b 5090 vllm 每秒多少token",
        "gemma-2-27b 5090 vllm 多少 tok/s",
        "gemma-2-27b on an rtx 5090 with vllm, how fast",
    ],
)
def test_a_speed_question_is_asked_of_the_named_card_not_the_card_count(question: str) -> None:
    p = parse_query(question)
    assert p.ok and not p.ask_count and p.gpu_id is not None
    assert p.gpu_count in (None, 1)


@pytest.mark.parametrize(
    "question",
    ["how many a100 for qwen2.5-72b", "llama3-70b vllm how many h100", "qwen2.5-72b 需要几张 h100"],
)
def test_a_card_count_question_still_asks_the_count(question: str) -> None:
    assert parse_query(question).ask_count


@pytest.mark.parametrize(
    ("question", "epochs"),
    [
        ("resnet50 imagenet 10个epoch 单张4090", 10),
        ("resnet50 imagenet 90个epoch 单张4090", 90),
        ("resnet50 imagenet 10 epochs on a 4090", 10),
        ("resnet50 imagenet 训练10轮 4090", 10),
        ("resnet50 imagenet 10ep 4090", 10),
        ("resnet50 imagenet 30 个 epochs 4090", 30),
    ],
)
def test_the_epochs_written_are_the_epochs_run(question: str, epochs: int) -> None:
    p = parse_query(question)
    assert p.ok and p.workload.train_images == IMAGENET_TRAIN * epochs
    assert not p.ignored


@pytest.mark.parametrize(
    ("question", "gpu_id"),
    [
        ("sd1.5 lora训练 2060 6g 够吗", "rtx-2060"),
        ("sd1.5 lora training on an rtx 2060", "rtx-2060"),
        ("sdxl 2060 12g 能跑吗", "rtx-2060-12gb"),
    ],
)
def test_a_bare_card_number_is_the_card_not_an_image_size(question: str, gpu_id: str) -> None:
    p = parse_query(question)
    assert p.ok and p.gpu_id == gpu_id and p.workload.image_width is None
    spec = catalog.gpus()[gpu_id]
    assert not spec.bf16_supported and spec.sources and spec.spec_read_date


@pytest.mark.parametrize(
    "question", ["sd1.5 2060x2060 4090", "sd1.5 2060px 4090", "sd1.5 分辨率2060 4090"]
)
def test_a_number_written_as_a_size_stays_the_image_size(question: str) -> None:
    p = parse_query(question)
    assert p.gpu_id == "rtx-4090" and p.workload.image_width == 2060


def test_sd15_lora_on_a_2060_fits_at_its_own_resolution(
    capsys: pytest.CaptureFixture[str],
) -> None:
    main(["sd1.5 lora训练 2060 6g 够吗", "--lang", "zh", "--offline"])
    text = capsys.readouterr().out
    assert "RTX 2060" in text and "2060×2060" not in text
    assert "✅" in text and "❌ 装不下" not in text


@pytest.mark.parametrize(
    "question",
    ["实验室还有几张k80 还能拿来微调bert-base吗", "我们组有几张3090，想跑70b 的 q4"],
)
def test_cards_the_user_has_are_not_a_question_of_how_many(question: str) -> None:
    """Before: "还有几张k80" (the lab has a few K80s) answered "you asked how many: at least 1";
    "有几张" tells what the user has, "要几张 / 需要几张" asks."""
    p = parse_query(question)
    assert p.ok and not p.ask_count and p.gpu_id is not None
    assert parse_query("qwen2.5-72b 要几张4090").ask_count


@pytest.mark.parametrize(
    ("question", "params_b"),
    [
        ("预算20万 7b到14b全参微调 买什么卡", 14.0),
        ("finetuning 7b-13b models on a 4090", 13.0),
        ("7b~14b 推理 3090", 14.0),
    ],
)
def test_a_range_of_sizes_is_sized_for_the_largest_and_says_so(question: str, params_b: float):
    """Before: "7b-13b" / "7b到14b" read as 7B, so a plan or a card for "7B to 14B" left the
    user short on the larger models they named."""
    p = parse_query(question)
    assert p.ok and p.workload.params_b == params_b
    assert any(a.startswith("size_range = ") for a in p.assumed)


def test_a_purchase_for_training_says_train_in_its_heading():
    from advisor.kinds import answer_kind
    from advisor.render import render

    parsed = parse_query("预算20万 7b到14b全参微调 买什么卡")
    zh = render("purchase", "zh", plain=True, result=answer_kind(parsed, "CNY"), parsed=parsed)
    assert "采购方案（训练 14B" in zh
