"""Fine-tuning Whisper: the encoder runs each 30 s window's 1500 frames, the decoder the
transcript's label tokens, and the loss's logits cover the labels only
(data/models/speech.toml [speech_training]: WhisperForConditionalGeneration applies proj_out
to the decoder's output; a transcript not stated is taken as openai/whisper's sample_len,
n_text_ctx // 2 = 224). Eager attention under autocast keeps the fp32 softmax and its 16-bit
copy: 6 B a score (advisor/memory/transformer.py)."""

from __future__ import annotations

from advisor.memory import estimate
from advisor.memory.speech_training import SpeechSequence
from advisor.memory.transformer import activation_bytes_per_token_layer
from advisor.models.architecture import Architecture
from advisor.models.choices import Attention
from advisor.models.workload import Workload

VOCAB, FRAMES, LABELS, BATCH = 51_865, 1500, 224, 4


def _lora(**kw: object) -> Workload:
    base: dict[str, object] = {
        "model": "whisper-large-v2",
        "mode": "lora",
        "weights_format": "fp32",
        "compute_dtype": "fp16",
        "mixed_precision": True,
        "batch_size": BATCH,
        "framework": "peft",
    }
    return Workload(**{**base, **kw})


def _terms(w: Workload) -> dict[str, int]:
    return {t.name: t.bytes for t in estimate(w).estimate.terms}


def test_the_losss_logits_cover_the_label_tokens_not_the_audio_frames():
    t = _terms(_lora())
    assert abs(t["logits"] / (BATCH * LABELS * VOCAB * 12) - 1) < 0.02


def test_a_sequence_stated_as_the_encoders_frames_counts_them_once():
    stated = _terms(_lora(seq_len=FRAMES))
    unstated = _terms(_lora())
    assert stated["activations"] == unstated["activations"]
    result = estimate(_lora())
    assert any(a.field == "label_tokens" and a.value == str(LABELS) for a in result.assumed)


def test_a_stated_transcript_length_is_the_labels():
    short = _terms(_lora(seq_len=64))
    assert abs(short["logits"] / (BATCH * 64 * VOCAB * 12) - 1) < 0.02


def test_eager_scores_hold_every_frame_against_every_frame_and_labels_against_both():
    s = SpeechSequence(FRAMES, LABELS, 32, 32)
    assert s.tokens == FRAMES + LABELS
    scores = FRAMES * FRAMES + LABELS * (LABELS + FRAMES)
    assert s.attention_keys * s.tokens >= scores > (s.attention_keys - 1) * s.tokens


def test_the_turbo_models_encoder_keeps_its_32_layers_over_a_4_layer_decoder():
    """large-v3-turbo's config.json: encoder_layers 32, decoder_layers 4. Its fine-tune
    runs the 1500 frames through 32 layers, as large-v3 does; only the labels' share
    shrinks."""
    turbo = _terms(_lora(model="whisper-large-v3-turbo", gradient_checkpointing=False))
    large = _terms(_lora(model="whisper-large-v3", gradient_checkpointing=False))
    assert turbo["activations"] > 0.85 * large["activations"]
    s = SpeechSequence(FRAMES, LABELS, 32, 4)
    assert s.tokens == FRAMES + LABELS // 8


def test_eager_scores_under_autocast_take_the_fp32_softmax_and_its_16_bit_copy():
    arch = Architecture(
        layers=32, hidden=1280, heads=20, kv_heads=20, head_dim=64, intermediate=5120, vocab=VOCAB
    )
    amp = activation_bytes_per_token_layer(arch, FRAMES, Attention.eager, 2.5, False)
    sdpa = activation_bytes_per_token_layer(arch, FRAMES, Attention.sdpa, 2.5, False)
    assert amp - sdpa == 20 * FRAMES * 6
    fp32 = activation_bytes_per_token_layer(arch, FRAMES, Attention.eager, 4, False)
    fp32_sdpa = activation_bytes_per_token_layer(arch, FRAMES, Attention.sdpa, 4, False)
    assert fp32 - fp32_sdpa == 20 * FRAMES * 8


def test_without_checkpointing_every_layer_keeps_its_eager_scores():
    """peft's prepare_model_for_kbit_training turns checkpointing on only for a k-bit model
    (peft v0.5.0 utils/other.py): an fp32 Whisper LoRA run keeps every encoder layer's
    20 x 1500 x 1500 scores at 6 B, about 8.6 GB a sample over 32 layers."""
    kept = _terms(_lora(gradient_checkpointing=False, attention="eager"))
    scores = 32 * 20 * FRAMES * FRAMES * 6 * BATCH
    assert kept["activations"] > scores


def test_a_question_says_adalora_and_checkpointing_off_as_the_recipe_runs():
    """AdaLoRA is a LoRA fine-tune; checkpointing said off in either language is off (PEFT's
    prepare_model_for_kbit_training leaves an fp32 model without checkpointing: peft v0.5.0)."""
    from advisor.parse import parse_query

    for text in (
        "whisper large-v2 adalora batch 4 fp32, no gradient checkpointing, eager",
        "whisper large-v2 adalora 微调 batch 4 fp32 不开梯度检查点 eager",
        "whisper large-v2 lora batch 4 gradient_checkpointing=False",
    ):
        w = parse_query(text).workload
        assert w is not None and w.mode == "lora" and w.gradient_checkpointing is False, text
    on = parse_query("whisper large-v2 lora batch 4 with gradient checkpointing").workload
    assert on is not None and on.gradient_checkpointing is True
