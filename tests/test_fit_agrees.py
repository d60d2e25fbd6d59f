"""/fit and /gpu tables say what fits a card; the answer to that same question must agree.
They drew the 20% headroom line at usable / 1.2 where every answer draws it at usable x
0.8 (a 4090's table said "LoRA 7B · QLoRA 20B", the answers to those said "⚠️ tight"), and
probed image models in fp16 where answers run bf16 (SD3 Medium ✗ on a 3090 the answer
calls ✅)."""

from __future__ import annotations

import pytest

from advisor.fit import DIFFUSION_PROBES, SIZE_LADDER_B, card_fit
from advisor.parse import parse_query
from advisor.recommend import Recommendation, recommend_query

# catalog id -> how a user names it
CARDS = {
    "rtx-4090": "4090",
    "rtx-3090": "3090",
    "a100-40gb-sxm": "a100 40g",
    "tesla-t4": "t4",
    # /fit forced gradient checkpointing on and listed "full 0.5B" here; the answer to
    # "full fine-tune 0.5b 4060ti 16g" leaves it off below 1B and calls it tight
    "rtx-4060-ti-16gb": "4060ti 16g",
}


def _answer(q: str, gpu: str) -> Recommendation:
    rec = recommend_query(parse_query(q))
    assert rec.verdict is not None and rec.named is not None, q
    assert rec.named.gpu_id == gpu and rec.named.count == 1, q
    return rec


def _verdict(q: str, gpu: str) -> str:
    return _answer(q, gpu).verdict.state  # type: ignore[union-attr]


@pytest.mark.parametrize("gpu", CARDS)
def test_the_largest_sizes_in_a_card_table_fit_with_headroom_in_their_answers(gpu: str) -> None:
    fit = card_fit(gpu)
    for fmt, size in fit.inference_b.items():
        if size:
            q = f"{size:g}b {fmt} {CARDS[gpu]} 4k batch 1"
            assert _verdict(q, gpu) == "fits", (gpu, fmt, size)
    for mode, size in fit.finetune_b.items():
        if size:
            words = {"lora": "lora", "qlora": "qlora", "full": "full fine-tune"}[mode]
            # the LoRA row is for its stated recipe (fit.LORA_SEQ_LEN, checkpointing on)
            seq = (
                "seq 1024 batch 1 gradient checkpointing" if mode == "lora" else "seq 2048 batch 1"
            )
            q = f"{words} {size:g}b {CARDS[gpu]} {seq}"
            assert _verdict(q, gpu) == "fits", (gpu, mode, size)


@pytest.mark.parametrize("gpu", CARDS)
def test_an_image_model_a_card_table_ticks_fits_in_its_answer(gpu: str) -> None:
    fit = card_fit(gpu)
    assert set(fit.diffusion) == set(DIFFUSION_PROBES)
    for model, ok in fit.diffusion.items():
        if ok:
            assert _verdict(f"{model} {CARDS[gpu]}", gpu) == "fits", (gpu, model)


@pytest.mark.parametrize("gpu", CARDS)
def test_an_image_model_a_card_table_crosses_out_needs_a_recipe_in_its_answer(gpu: str) -> None:
    """✗ in the table (as loaded, native resolution): the answer does not call it a plain
    fit; it either does not fit or fits only through a small-card recipe (offload, ...)."""
    fit = card_fit(gpu)
    for model, ok in fit.diffusion.items():
        if not ok:
            rec = _answer(f"{model} {CARDS[gpu]}", gpu)
            assert rec.verdict is not None
            assert rec.verdict.state != "fits" or rec.recipe is not None, (gpu, model)


@pytest.mark.parametrize("gpu", CARDS)
def test_the_next_size_past_a_card_tables_largest_does_not_fit_with_headroom(gpu: str) -> None:
    """The table's largest is the largest: its answer to the next rung is not ✅."""
    fit = card_fit(gpu)
    words = {"lora": "lora", "qlora": "qlora", "full": "full fine-tune"}
    for mode, size in fit.finetune_b.items():
        nxt = next((s for s in SIZE_LADDER_B if size is None or s > size), None)
        if nxt is not None:
            q = f"{words[mode]} {nxt:g}b {CARDS[gpu]} seq 2048 batch 1"
            assert _verdict(q, gpu) != "fits", (gpu, mode, nxt)


@pytest.mark.parametrize("gpu", CARDS)
def test_the_card_tables_batch_line_is_the_batch_its_answer_calls_a_fit(gpu: str) -> None:
    """The line computes a generate() batch; it read "Most concurrent 4k-token requests: 2"
    on a 4090, and "llama-3.1-8b 2 concurrent 4090" (served by vLLM) is tight."""
    from advisor.catalog import gpus
    from advisor.render import render

    fit = card_fit(gpu)
    en = render("fit", "en", gpu=gpus()[gpu], fit=fit, count=1, plain=True)
    assert "concurrent" not in en and "Largest batch of 4k-token sequences" in en
    if fit.batch_8b:
        q = f"llama-3.1-8b bf16 4k batch {fit.batch_8b} {CARDS[gpu]}"
        assert _verdict(q, gpu) == "fits", q
