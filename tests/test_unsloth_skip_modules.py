"""What a 4-bit load leaves in 16 bits beyond the token embedding: a Linear quantizer never
touches an nn.Embedding or a convolution (Gemma 3n's per-layer embedding table, its
MobileNet-V5 vision tower), and Unsloth's skip list (unsloth-zoo SKIP_QUANTIZATION_MODULES:
"audio_tower", "vision_tower", ...) keeps the encoders' Linears 16-bit too, where
transformers' own bitsandbytes loader quantizes them (data/quantizers.toml [encoder_skip])."""

from __future__ import annotations

from advisor import catalog
from advisor.memory import estimate
from advisor.memory.quantizers import _table, skipped_encoder_params
from advisor.models.workload import Workload
from advisor.render import assumption

GIB = 2**30


def _weights(framework: str | None, fmt: str = "nf4") -> int:
    w = Workload(
        model="gemma-3n-e4b",
        mode="qlora",
        weights_format=fmt,
        batch_size=1,
        seq_len=1024,
        framework=framework,
    )
    r = estimate(w)
    return next(t.bytes for t in r.estimate.terms if t.name == "weights")


def test_the_per_layer_table_is_what_the_config_gives():
    arch = catalog.find_model("google/gemma-3n-E4B-it").arch
    # vocab_size_per_layer_input x hidden_size_per_layer_input x num_hidden_layers
    per_layer_table = 262_144 * 256 * 35
    assert per_layer_table == 2_348_810_240
    # + MobileNet-V5-300M (huggingface.co/blog/gemma3n), convolutions
    assert arch.unquantized_params == per_layer_table + 300_000_000
    assert arch.tied_embeddings


def test_the_skip_list_is_unsloths_and_dated():
    row = _table()["encoder_skip"]
    assert row["frameworks"] == ["unsloth"]
    assert "SKIP_QUANTIZATION_MODULES" in row["source"] and "2026-12-07" in row["source"]
    arch = catalog.find_model("gemma-3n-e4b").arch
    assert skipped_encoder_params("nf4", "unsloth", arch) == arch.encoder_linear_params
    assert skipped_encoder_params("nf4", "peft", arch) == 0
    assert skipped_encoder_params("bf16", "unsloth", arch) == 0


def test_the_text_decoders_linears_alone_are_4_bit_under_unsloth():
    arch = catalog.find_model("gemma-3n-e4b").arch
    params = 7.85e9
    sixteen = arch.vocab * arch.hidden + arch.unquantized_params + arch.encoder_linear_params
    expected = (params - sixteen) * 4.5 / 8 + sixteen * 2
    assert abs(_weights("unsloth") - expected) < 1e6
    # ~9.3 GiB: the 16-bit tables and encoders are most of it (was 5.6 with everything
    # but the embedding read as Linear)
    assert 9.2 * GIB < _weights("unsloth") < 9.4 * GIB


def test_transformers_bitsandbytes_quantizes_the_audio_encoder():
    arch = catalog.find_model("gemma-3n-e4b").arch
    saved = arch.encoder_linear_params * (2 - 4.5 / 8)
    assert abs(_weights("unsloth") - _weights("peft") - saved) < 1e6


def test_the_answer_says_the_encoders_stay_16_bit():
    w = Workload(model="gemma-3n-e4b", mode="qlora", weights_format="nf4", framework="unsloth")
    r = estimate(w)
    assert "quant_skipped = unsloth_encoders" in r.assumptions
    for lang in ("en", "zh"):
        line = assumption(lang, "quant_skipped", "unsloth_encoders")
        assert "SKIP_QUANTIZATION_MODULES" in line


def test_gemma_3s_siglip_tower_is_kept_16_bit_under_unsloth():
    # vision_config: 27 layers, width 1152, MLP 4304 (SigLIP-So400m)
    siglip = 27 * (4 * 1152**2 + 2 * 1152 * 4304)
    for model in ("gemma-3-4b", "gemma-3-12b", "gemma-3-27b"):
        assert catalog.find_model(model).arch.encoder_linear_params == siglip
    w = Workload(model="gemma-3-12b", mode="qlora", weights_format="nf4", framework="unsloth")
    r = estimate(w)
    assert "quant_skipped = unsloth_encoders" in r.assumptions
