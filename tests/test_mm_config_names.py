"""OpenMMLab config names as users paste them (parse/mm_config.py) are read as the plain words
they stand for: the model and backbone, the batch per card from "NxbM", the dataset and crop.
The answer is the one the plain-words question gets, in both languages."""

import pytest

from advisor.parse.mm_config import expand_config_names
from tests.conftest import answers_both


@pytest.mark.parametrize(
    ("config", "plain"),
    [
        (
            "segformer_mit-b5_8xb1-160k_cityscapes-1024x1024",
            "segformer mit-b5 batch 1 cityscapes 1024x1024",
        ),
        ("rtmdet_l_8xb32-300e_coco", "rtmdet l batch 32 coco"),
        ("yolox_s_8xb8-300e_coco", "yolox s batch 8 coco"),
        ("mask-rcnn_r50_fpn_1x_coco", "mask-rcnn r50 fpn coco"),
        (
            "deeplabv3plus_r50-d8_4xb2-80k_cityscapes-512x1024",
            "deeplabv3plus r50-d8 batch 2 cityscapes 512x1024",
        ),
    ],
)
def test_config_name_becomes_its_words_and_gets_the_plain_answer(config: str, plain: str) -> None:
    assert expand_config_names(config) == plain
    assert expand_config_names(f"configs/x/{config}.py") == plain
    for q_cfg, q_plain in (
        (f"{config} 单卡 3090 能训吗", f"{plain} 单卡 3090 能训吗"),
        (f"can I train {config} on one 3090?", f"can I train {plain} on one 3090?"),
    ):
        rec_c, texts_c = answers_both(q_cfg)
        rec_p, texts_p = answers_both(q_plain)
        assert rec_c.result.model.id == rec_p.result.model.id
        assert texts_c == texts_p


def test_segformer_config_with_its_own_batch_reads_one_batch_in_both_languages() -> None:
    q = "mmseg segformer_mit-b5_8xb1-160k_cityscapes-1024x1024 单卡 batch 1 3090 能训吗"
    rec, texts = answers_both(q)
    assert (
        rec.result.model.id
        == answers_both("segformer mit-b5 cityscapes 1024x1024 batch 1 3090")[0].result.model.id
    )
    assert "SegFormer MiT-B5" in texts["zh"] and "批大小 1" in texts["zh"]
    assert "没看懂" not in texts["zh"] and "哪个模型" not in texts["zh"]
    assert "SegFormer MiT-B5" in texts["en"] and "batch 1" in texts["en"]


def test_a_batch_the_question_names_wins_over_the_configs() -> None:
    rec, texts = answers_both("segformer_mit-b5_8xb1-160k_cityscapes-1024x1024 bs 2 on a 3090")
    assert "batch 2" in texts["en"] and "批大小 2" in texts["zh"]


def test_other_underscored_words_are_left_as_typed() -> None:
    for text in ("qwen2.5_7b lora", "max_seq_length 2048", "llama_3_8b", "full_bf16"):
        assert expand_config_names(text) == text
