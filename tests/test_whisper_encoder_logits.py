"""Whisper under transformers: the decoder's logits never cover the encoder's audio frames
(WhisperForConditionalGeneration applies proj_out to the decoder's output only,
data/runtimes.toml [transformers] encoder_frames_logits_source), and insanely-fast-whisper
runs BetterTransformer / SDPA whatever the release (its cli.py, sdpa_frameworks)."""

from __future__ import annotations

from advisor.memory import estimate
from advisor.models.workload import Workload
from advisor.parse import parse_query
from checks.cases import stack

VOCAB, FRAMES, BATCH = 51_866, 1500, 8


def _whisper(**kw: object) -> Workload:
    base: dict[str, object] = {
        "model": "whisper-large-v3",
        "weights_format": "fp16",
        "batch_size": BATCH,
        "prompt_tokens": 4,
        "new_tokens": 128,
        "transformers_version": "4.40",
    }
    return Workload(**{**base, **kw})


def _terms(w: Workload) -> dict[str, int]:
    return {t.name: t.bytes for t in estimate(w).estimate.terms}


def test_full_prompt_logits_cover_the_decoders_tokens_not_the_audio_frames():
    """transformers 4.36-4.44 computed logits over every decoder position (fp16 + the fp32
    upcast, 6 B): for Whisper those are its 4 forced tokens, not the 1,500 frames."""
    t = _terms(_whisper())
    frames_logits = BATCH * FRAMES * VOCAB * 6
    assert t["activations"] < frames_logits / 10
    # the frames' cross-attention keys and values stay in the cache
    assert t["kv_cache"] >= BATCH * FRAMES * 32 * 2 * 1280 * 2


def test_insanely_fast_whisper_keeps_sdpa_on_a_release_before_the_sdpa_default():
    old = _whisper(transformers_version="4.35", batch_size=24)
    eager = estimate(old)
    sdpa = estimate(old.model_copy(update={"framework": "insanely-fast-whisper"}))
    assert any(a.field == "attention" and a.value == "eager_before_sdpa" for a in eager.assumed)
    assert any(a.field == "attention" and a.value == "sdpa" for a in sdpa.assumed)
    assert sdpa.estimate.allocated_bytes < eager.estimate.allocated_bytes


def test_insanely_fast_whisper_is_read_from_a_question_as_the_case_adapter_reads_it():
    q = parse_query("insanely-fast-whisper large-v3 batch 24 on a 4090")
    assert q.workload is not None and q.workload.framework == "insanely-fast-whisper"
    assert stack("transformers ASR pipeline (insanely-fast-whisper CLI)") == (
        "insanely-fast-whisper"
    )


def test_a_release_before_the_dynamic_cache_never_copies_the_cross_attention_cache():
    """Before 4.36 a decode step re-concatenates the self-attention keys and values only:
    WhisperAttention reuses the cross-attention past_key_value whole (data/runtimes.toml
    [transformers] cross_attention_cache_source), so the step's copy is the decoder's few
    hundred positions, never the 1,500 frames' keys and values."""
    legacy = _whisper(transformers_version="4.35", framework="insanely-fast-whisper")
    t = _terms(legacy.model_copy(update={"batch_size": 35, "new_tokens": 440}))
    per_token = 32 * 2 * 1280 * 2  # layers x (k, v) x d_model x fp16
    cross = 35 * FRAMES * per_token
    assert t["kv_cache"] >= cross
    # the step holds at most a second copy of the decoder's own cache (4 + 440 positions)
    # or the prefill's buffers, never a second copy of the frames' cache
    assert t["activations"] < cross / 2
