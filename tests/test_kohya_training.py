"""kohya sd-scripts / musubi-tuner and finetrainers as their code defaults them: gradient
checkpointing only with the flag, --fp8_base, --blocks_to_swap (data/training_stacks.toml,
data/models.toml FLUX shape)."""

from advisor.memory import estimate
from advisor.models.workload import Workload
from advisor.parse import parse_query

GIB = 2**30


def _flux_lora(**kw) -> object:
    return estimate(
        Workload(
            model="flux.1-dev",
            mode="lora",
            weights_format="fp8",
            batch_size=1,
            image_width=1024,
            image_height=1024,
            **{"text_encoders_on_gpu": False, **kw},
        )
    )


def _term(r, name: str) -> int:
    return sum(t.bytes for t in r.estimate.terms if t.name == name)


def test_kohya_keeps_every_blocks_activations_unless_told():
    kohya = _flux_lora(framework="kohya")
    assumed = {a.field: a.value for a in kohya.assumed}
    assert assumed["gradient_checkpointing"] == "off"
    told = _flux_lora(framework="kohya", gradient_checkpointing=True)
    # without checkpointing: 40 x 3072 B per token in each of FLUX's 57 blocks over
    # 4096 latent + 512 text tokens
    hand = (4096 + 512) * 40 * 3072 * 57
    assert abs(_term(kohya, "activations") - hand) / hand < 0.01
    assert _term(told, "activations") < hand / 10


def test_block_swap_keeps_the_swapped_share_of_the_denoiser_off_the_card():
    # encoders resident (no cache switches): the steps, not the precompute phase, are the peak
    kw = {"gradient_checkpointing": True, "lora_rank": 16, "text_encoders_on_gpu": True}
    base = _flux_lora(**kw)
    swap = _flux_lora(**kw, blocks_to_swap=18)
    # fp8 base: 11.9B x 1 B; kohya's 18 units of 38 leave 20/38 of it on the card
    fp8 = 11.9e9
    assert abs((_term(base, "weights") - _term(swap, "weights")) - fp8 * 18 / 38) / fp8 < 0.01


def test_the_flags_are_read_from_the_question():
    q = parse_query("flux lora kohya --fp8_base --blocks_to_swap 18 on 4090")
    assert q.workload.blocks_to_swap == 18
    assert q.workload.weights_format == "fp8"
    assert q.workload.framework == "kohya"


def test_kohya_caches_latents_then_text_embeddings_with_the_vae_off_the_card():
    # train_network.py: new_cache_latents, vae.to("cpu"); then flux_train_network.py moves
    # the VAE and the DiT off before the text encoders (CLIP-L + T5-XXL, bf16) come on.
    kw = {
        "gradient_checkpointing": True,
        "lora_rank": 4,
        "blocks_to_swap": 16,
        "latents_cached": True,
        "optimizer": "adamw_8bit",
    }
    kohya = _flux_lora(framework="kohya", **kw)
    unnamed = _flux_lora(**kw)
    te = (0.123 + 4.76) * 1e9 * 2
    assert abs(_term(kohya, "text_encoders") - te) / te < 0.03
    assert _term(kohya, "vae") == 0 and _term(kohya, "vae_encode") == 0
    # a stack not known to free the VAE first holds both at once (the safe side)
    assert _term(unnamed, "vae_encode") > 0
    # sd-scripts README (FLUX LoRA on 12 GB with --blocks_to_swap 16): the precompute phase
    # fits there, where the two at once did not
    assert kohya.estimate.total_bytes < 11.9 * GIB < unnamed.estimate.total_bytes


def test_kohya_and_musubi_adapt_every_block_linear_but_the_modulation():
    # musubi-tuner networks/lora_qwen_image.py: every nn.Linear in QwenImageTransformerBlock
    # except '_mod_': per block 8 attention linears (3072 -> 3072) and 4 MLP linears
    # (3072 <-> 12288), 60 blocks
    from advisor import catalog
    from advisor.memory.diffusion_training import ALL_LINEAR, lora_trainable_params

    qwen = catalog.find_model("qwen-image")
    assert qwen is not None
    hand = 128 * 60 * (8 * 6144 + 4 * 15360)
    assert lora_trainable_params(qwen, ALL_LINEAR, 128, 3072, 60) == hand
    # Wan's entry names its linears twice (its own q/k/v/o and diffusers'): counted once,
    # 40 blocks x (self- and cross-attention q/k/v/o + two FFN linears) = 400 modules
    wan = catalog.find_model("wan2.1-t2v-14b")
    assert wan is not None
    wan_hand = 32 * (4 * 80 * 10240 + 2 * 40 * 18944)
    assert lora_trainable_params(wan, ALL_LINEAR, 32, 5120, 40) == wan_hand
    r = estimate(
        Workload(
            model="qwen-image",
            mode="lora",
            weights_format="fp8",
            lora_rank=128,
            framework="kohya",
            gradient_checkpointing=True,
            text_encoders_on_gpu=False,
            latents_cached=True,
        )
    )
    assumed = {a.field: a.value for a in r.assumed}
    assert assumed["lora_targets"] == "all-linear"
    # the fp32 adapter's gradients
    assert abs(_term(r, "gradients") - hand * 4) / (hand * 4) < 0.01
