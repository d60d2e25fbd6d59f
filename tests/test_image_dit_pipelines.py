"""Image DiTs whose pipelines keep large text encoders on the card (data/models/image_dit.toml).

Before these entries HunyuanDiT and CogView4 were sized as a generic DiT holding every
parameter with no text encoder: HunyuanDiT read 6.6 GiB against the README's 11 GB, CogView4
left out its 8.78B GLM-4 text encoder.
"""

from advisor.memory import estimate
from advisor.models import Workload

GIB = 2**30


def _term(r, name: str) -> float:
    return sum(t.bytes for t in r.estimate.terms if t.name == name)


def test_hunyuandit_keeps_its_clip_and_mt5_encoders_beside_the_dit():
    r = estimate(Workload(model="hunyuandit", weights_format="fp16"))
    assert r.model.id == "hunyuan-dit"
    # BertModel 0.33B + mT5-XL 1.67B in fp16, the mT5's `wo` (24 x 5120 x 2048 = 0.252B)
    # kept in fp32 by transformers' _keep_in_fp32_modules
    hand = (0.33 + 1.67 - 0.252) * 1e9 * 2 + 0.252e9 * 4
    assert abs(_term(r, "text_encoders") - hand) / hand < 0.01
    assert abs(_term(r, "weights") - 1.5e9 * 2) / 3e9 < 0.01


def test_cogview4_counts_the_glm4_text_encoder():
    r = estimate(Workload(model="cogview4", weights_format="bf16", batch_size=4))
    assert r.model.id == "cogview4-6b"
    # GlmModel without the LM head: 151552 x 4096 + 40 x (2 x 4096^2 + 2 x 4096 x 256 +
    # 3 x 4096 x 13696) = 8.78B
    hand = 151552 * 4096 + 40 * (2 * 4096**2 + 2 * 4096 * 256 + 3 * 4096 * 13696)
    assert abs(hand / 1e9 - 8.78) < 0.01
    assert abs(_term(r, "text_encoders") - 8.78e9 * 2) / (8.78e9 * 2) < 0.01
    assert r.estimate.allocated_bytes > (6.0 + 8.78) * 1e9 * 2
