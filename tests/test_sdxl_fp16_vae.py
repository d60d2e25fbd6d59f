"""SDXL on a card without bf16 runs in fp16, where its VAE overflows and decodes to NaN (black
images): the answer names the fp16-fix VAE or an fp32 decode (madebyollin/sdxl-vae-fp16-fix
model card; force_upcast in the SDXL vae/config.json). Not on a card with bf16, and not for
a model whose VAE does not overflow."""

from __future__ import annotations

import pytest

from tests.conftest import plain_answer

FIX = "madebyollin/sdxl-vae-fp16-fix"


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize(
    "q",
    [
        "sdxl base in diffusers with enable_model_cpu_offload on a 6gb gtx 1660 ti, will it run?",
        "sdxl 出图 t4 够吗",
    ],
)
def test_sdxl_on_a_card_without_bf16_names_the_fp16_fix_vae(q: str, lang: str) -> None:
    text = plain_answer(q, lang)
    assert text.count(FIX) == 1, text
    assert "NaN" in text


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize(
    "q", ["sdxl on a 4090", "sd1.5 on a gtx 1660 ti", "flux.1-dev on a t4", "wan2.1 video on p100"]
)
def test_no_vae_note_with_bf16_or_a_vae_that_does_not_overflow(q: str, lang: str) -> None:
    assert FIX not in plain_answer(q, lang)
