"""Video DiT LoRA training: adapters counted on the model's real linears, tokens over frames.

Hand counts from the transformers' configs (data/models/video.toml) and finetrainers'
default target_modules (to_q to_k to_v to_out.0); finetrainers' own logs print the
trainable counts (117,440,512 for LTX-Video and 132,120,576 for CogVideoX-5b at rank 128).
"""

from advisor.memory import estimate
from advisor.models.workload import Workload

GIB = 2**30


def _lora(model: str, frames: int, width: int, height: int, **kw) -> object:
    return estimate(
        Workload(
            model=model,
            mode="lora",
            lora_rank=128,
            weights_format="bf16",
            batch_size=1,
            video_frames=frames,
            image_width=width,
            image_height=height,
            gradient_checkpointing=True,
            **{"text_encoders_on_gpu": False, **kw},
        )
    )


def _values(r, name: str) -> dict:
    return next(t for t in r.estimate.terms if t.name == name).values


def test_ltx_video_rank_128_adapters_cover_self_and_cross_attention():
    # the T5 encoder kept on the card (finetrainers without --precompute_conditions): the
    # precompute phase (T5-XXL + the VAE encode) would otherwise be the peak and hide the steps
    # (the optimizer's states are there at every moment of the step, the per-step encode too)
    r = _lora("ltx-video", 49, 768, 512, text_encoders_on_gpu=True)
    # 28 blocks x (attn1 + attn2) x 4 projections x 128 x (2048 + 2048); the old count
    # took a 4096-wide head_dim-128 block from the parameter count: 37.7M
    assert _values(r, "optimizer")["params_m"] == round(28 * 2 * 4 * 128 * 4096 / 1e6, 1)
    assert round(28 * 2 * 4 * 128 * 4096) == 117_440_512


def test_cogvideox_5b_rank_128_adapters_match_the_trainers_log():
    r = _lora("cogvideox-5b", 49, 720, 480, text_encoders_on_gpu=True)
    assert _values(r, "optimizer")["params_m"] == round(132_120_576 / 1e6, 1)


def test_video_training_tokens_count_the_latent_frames():
    # the per-step VAE encode tiled (finetrainers --enable_tiling), so the step's backward is
    # its peak and the activations show
    r = _lora("cogvideox-5b", 49, 720, 480, text_encoders_on_gpu=True, vae_tiling=True)
    # 49 frames -> 1 + 48 / 4 = 13 latent frames x (480 / 16) x (720 / 16) + 226 text
    assert _values(r, "activations")["tokens"] == 13 * 30 * 45 + 226
    # checkpointed: one 16-bit block input per block (2 x 3072 x 42) + one block's working set
    # (40 x 3072) per token
    act = (13 * 30 * 45 + 226) * (2 * 3072 * 42 + 40 * 3072)
    got = next(t.bytes for t in r.estimate.terms if t.name == "activations")
    assert abs(got - act) / act < 0.01


def test_the_adapters_own_fp32_weights_are_counted():
    r = _lora("cogvideox-5b", 49, 720, 480, text_encoders_on_gpu=True)
    weights = next(t.bytes for t in r.estimate.terms if t.name == "weights")
    assert abs(weights - (5.57e9 * 2 + 132_120_576 * 4)) / weights < 0.01


def test_wan_targets_named_as_in_wans_own_code_are_counted():
    r = estimate(
        Workload(
            model="wan2.1-t2v-14b",
            mode="lora",
            lora_rank=16,
            lora_targets="q,k,v,o,ffn.0,ffn.2",
            weights_format="bf16",
            text_encoders_on_gpu=False,
        )
    )
    # 40 blocks: self + cross attention q/k/v/o (5120 -> 5120), ffn 5120 -> 13824 -> 5120
    hand = 16 * 40 * (8 * 10240 + 2 * 18944)
    assert _values(r, "gradients")["params_m"] == round(hand / 1e6, 1)
