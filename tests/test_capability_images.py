"""The capability answer's image row names the route a card runs it with: FLUX.1-dev in fp8
(the fp8 transformer with the fp8 T5, ComfyUI's FLUX fp8 workflow) sits on a 24 GB card
without any CPU offload, so a 4090 or two 3090s are never told to add model offload."""

from __future__ import annotations

import pytest

from advisor import catalog
from advisor.__main__ import main
from advisor.fit import card_fit
from advisor.kinds.capability import capability_rows


def image_row(gpu_id: str, count: int = 1):
    gpu = catalog.gpus()[gpu_id]
    rows = capability_rows(gpu, count, card_fit(gpu_id))
    return next(r for r in rows if r.task == "image")


@pytest.mark.parametrize(("gpu_id", "count"), [("rtx-4090", 1), ("rtx-3090", 2), ("rtx-3090", 1)])
def test_flux_fp8_runs_resident_on_24gb(gpu_id: str, count: int) -> None:
    row = image_row(gpu_id, count)
    assert row.example == "FLUX.1 [dev]" and row.recipe == "fp8", row


@pytest.mark.parametrize(
    ("line", "lang", "said", "not_said"),
    [
        ("我有张4090 最大能微调多大的模型啊", "zh", "FLUX.1 [dev]，FP8 权重", "CPU offload"),
        ("实验室有两张3090，能跑什么", "zh", "FP8 权重", "CPU offload"),
        ("what can my rtx 4090 run", "en", "with FP8 weights", "CPU offload"),
    ],
)
def test_the_capability_answer_says_fp8_without_offload(
    line: str, lang: str, said: str, not_said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    main([line, "--lang", lang, "--offline"])
    out = capsys.readouterr().out
    image = next(x for x in out.splitlines() if "🖼" in x)
    assert said in image and not_said not in image, image
