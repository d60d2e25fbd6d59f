"""A segmentor's images per GPU when the user names none follow its MMSegmentation configs
for the asked crop (data/classic_activations.toml `batch_by_crop`): SegFormer at Cityscapes
1024x1024 trains 1 image per GPU (segformer_mit-b5_8xb1-160k_cityscapes-1024x1024, 18.0 GB
logged), not the 2 of its ADE20K 512x512 configs; PSPNet at ADE20K 512x512 trains 4
(pspnet_r50-d8_4xb4-80k_ade20k-512x512)."""

from __future__ import annotations

import re

import pytest

from advisor.memory import estimate
from advisor.models.workload import Workload
from advisor.parse import parse_query
from advisor.recommend import recommend_query
from advisor.render import render

LINES = [
    (
        "how much vram per gpu for segformer-b5 cityscapes 1024x1024 training in mmseg",
        "en",
        "batch 1",
    ),
    ("mmseg 训练 segformer-b5 cityscapes 1024x1024 每卡要多少显存", "zh", "批大小 1"),
]


@pytest.mark.parametrize(("line", "lang", "batch"), LINES)
def test_segformer_at_cityscapes_1024_is_sized_at_its_configs_one_image_per_gpu(
    line: str, lang: str, batch: str
) -> None:
    parsed = parse_query(line)
    rec = recommend_query(parsed, default_currency="CNY" if lang == "zh" else "USD")
    text = render("answer", lang, rec=rec, parsed=parsed, plain=True)
    assert batch in text.splitlines()[0], text
    per_card = float(re.search(r"(\d+(?:\.\d+)?) GiB", text.splitlines()[1]).group(1))
    # mmseg's log: 18.0 GB (16.8 GiB) of tensors at 8xb1; the card view adds the context
    assert 16.8 <= per_card < 24, text
    # the dataset's epochs are said as epochs, not as a bare "1"
    assert "Assumed: 1;" not in text and "默认假设：1；" not in text, text


def test_the_crop_picks_the_configs_images_per_gpu_either_side_first() -> None:
    def batch(**kw) -> str:
        r = estimate(Workload(mode="full", **kw))
        return {a.field: a.value for a in r.assumed}["batch_size"]

    assert batch(model="segformer-b5", image_width=1024, image_height=1024) == "1"
    assert batch(model="segformer-b5", image_width=512, image_height=512) == "2"
    assert batch(model="pspnet-r50-d8", image_width=512, image_height=512) == "4"
    assert batch(model="pspnet-r50-d8", image_width=512, image_height=1024) == "2"
    # a crop no config trains at keeps the family's default
    assert batch(model="segformer-b5", image_width=800, image_height=800) == "2"
