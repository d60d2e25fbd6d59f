"""A 12 GB card's capability answer names what people run on it: a 14B Q4_K_M chat model
(9.5 GiB under llama.cpp at 4k with its own 457 MiB context, at the guide's 20% line), FLUX.1-dev with a 4-bit transformer
kept on the card (Forge nf4, ComfyUI-GGUF) rather than only sequential offload, SDXL as the
pipeline that stays on the card, and the QLoRA rung that runs tight at 2k tokens."""

from __future__ import annotations

import pytest

from advisor import catalog
from advisor.__main__ import main
from advisor.fit import card_fit
from advisor.kinds.capability import capability_rows


def rows(gpu_id: str) -> dict[str, object]:
    gpu = catalog.gpus()[gpu_id]
    return {r.task: r for r in capability_rows(gpu, 1, card_fit(gpu_id))}


@pytest.mark.parametrize("gpu_id", ["rtx-4070", "rtx-3060-12gb"])
def test_a_12gb_card_runs_14b_chat_tight_and_flux_as_nf4(gpu_id: str) -> None:
    r = rows(gpu_id)
    chat, image, qlora = r["chat"], r["image"], r["qlora"]
    # Qwen2.5 14B at Q4_K_M is its 8.99 GB file (llama.cpp's mix, data/gguf_mix.toml) with
    # 4k of KV: over the 20% rule on a 12 GB card, so tight; 13B comfortable
    assert chat.largest_params_b == 13 and chat.tight_params_b == 14, chat
    assert chat.tight_example == "Qwen2.5 14B", chat
    assert image.example == "FLUX.1 [dev]" and image.recipe == "nf4", image
    assert image.also_example and "XL" in image.also_example, image
    # comfortable 3B at 2k tokens (the whole-vocabulary logits, 2.9 GiB, are what grows),
    # and 7-8B on the tight line: the 20% rule is kept for the comfortable rung
    assert qlora.largest_params_b == 3 and qlora.tight_params_b == 8, qlora


def test_a_24gb_card_names_no_offload_companion() -> None:
    image = rows("rtx-4090")["image"]
    assert image.recipe == "fp8" and image.also_example is None, image


@pytest.mark.parametrize(
    ("line", "lang", "said"),
    [
        (
            "手上有张4070 12g 能跑哪些模型",
            "zh",
            ["14B 偏紧", "NF4", "Stable Diffusion XL"],
        ),
        ("我的3060 12g能跑什么模型", "zh", ["14B 偏紧", "常驻显存", "QLoRA 2k tokens 8B 偏紧"]),
        ("what can my rtx 4070 run", "en", ["14B tight", "NF4"]),
    ],
)
def test_the_12gb_capability_answer_says_the_tight_rungs(
    line: str, lang: str, said: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    main([line, "--lang", lang, "--offline"])
    out = capsys.readouterr().out
    for s in said:
        assert s in out, (s, out)
    assert "仅靠逐层" not in out and "only with sequential" not in out, out
