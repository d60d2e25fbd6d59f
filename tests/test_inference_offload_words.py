"""An inference asked about offload: llama.cpp's "offload" is layers on the GPU (-ngl), and an
inference has no optimizer. The header never says "optimizer offloaded to CPU", "offload saves
nothing" never sits beside a layer split, and where the model does not fit the card, the
full-GPU route (a smaller k-quant, a q8_0 KV cache with flash attention, a shorter context,
with its figure) comes before the CPU split."""

from __future__ import annotations

import pytest

from advisor.parse import parse_query
from tests.conftest import plain_answer

Q6K = {
    "en": "llama.cpp qwen2.5-14b-instruct q6_k with 32k context on a 12gb rtx 3060, can it fully offload?",
    "zh": "llama.cpp 跑 qwen2.5-14b q6_k 32k上下文 3060 12g 能全部offload吗",
}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_an_inference_reads_no_optimizer_offload(lang: str) -> None:
    parsed = parse_query(Q6K[lang])
    assert parsed.workload is not None and parsed.workload.cpu_offload.value == "none"
    text = plain_answer(Q6K[lang], lang)
    header = text.splitlines()[0]
    assert "optimizer" not in header and "优化器" not in header, header


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_full_gpu_route_comes_before_the_layer_split_and_nothing_says_saves_nothing(
    lang: str,
) -> None:
    text = plain_answer(Q6K[lang], lang)
    assert "saves nothing" not in text and "不省显存" not in text, text
    route = text.find("q4_k_m")
    kv = text.find("q8_0")
    split = text.find("-ngl")
    assert 0 <= route < split and 0 <= kv < split, text
    verdict = text.splitlines()[2]
    assert "q4_k_m" in verdict and ("after it" in verdict or "改后" in verdict), verdict
