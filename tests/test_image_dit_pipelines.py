"""Image DiTs whose pipelines keep large text encoders on the card (data/models/image_dit.toml).

Before these entries HunyuanDiT and CogView4 were sized as a generic DiT holding every
parameter with no text encoder: HunyuanDiT read 6.6 GiB against the README's 11 GB, CogView4
left out its 8.78B GLM-4 text encoder.
"""

from advisor.memory import estimate
from advisor.models.workload import Workload

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


def test_hidream_keeps_four_text_encoders_and_adapts_its_attention_projections():
    """HiDream-I1: the 17B transformer (README) beside CLIP-L, OpenCLIP bigG, the T5-XXL
    encoder and Llama-3.1-8B-Instruct (8.03B as LlamaForCausalLM), all in bf16 unless told;
    rank-8 LoRA on the DreamBooth script's to_q/to_k/to_v/to_out, one 2560 x 2560 linear
    each in 16 double + 32 single blocks."""
    r = estimate(Workload(model="hidream-i1-dev", mode="lora", lora_rank=8, weights_format="bf16"))
    assert r.model.id == "hidream-i1-dev"
    te = (0.123 + 0.695 + 4.76 + 8.03) * 1e9 * 2
    assert abs(_term(r, "text_encoders") - te) / te < 0.01
    adapters = 48 * 4 * 8 * (2560 + 2560)
    assert adapters == 7_864_320
    opt = next(t for t in r.estimate.terms if t.name == "optimizer")
    assert opt.values["params_m"] == round(adapters / 1e6, 1)
    weights = 17.0e9 * 2 + adapters * 4
    assert abs(_term(r, "weights") - weights) / weights < 0.01


def test_hidream_full_runs_guidance_as_a_batch_of_two_and_dev_one_pass():
    # eight images with the decode sliced, so the denoiser pass is the working set shown
    runs = [
        estimate(Workload(model=m, images_per_prompt=8, vae_slicing=True)).estimate
        for m in ("hidream-i1-full", "hidream-i1-dev")
    ]
    acts = [next(t for t in e.terms if t.name == "activations") for e in runs]
    assert acts[0].values["batch"] == 16 and acts[1].values["batch"] == 8
    assert acts[1].values["tokens"] == 64 * 64 + 384
