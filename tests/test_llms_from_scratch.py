"""rasbt/LLMs-from-scratch's own PyTorch models (pkg/llms_from_scratch at 064f6b1,
data/runtimes.toml [llms_from_scratch]): hand counts from the code for Qwen3-0.6B
(28 layers, hidden 1024, 8 KV heads of 128, vocabulary 151,936, tied embeddings,
context_length 40,960 in QWEN_CONFIG_06_B)."""

from __future__ import annotations

from advisor import parse
from advisor.memory import estimate
from advisor.models.workload import Workload
from advisor.render import assumption
from checks.cases import stack

VOCAB, HIDDEN, HEAD_DIM, CONTEXT = 151_936, 1024, 128, 40_960


def _terms(framework: str, batch: int, prompt: int, new: int) -> dict[str, int]:
    w = Workload(
        model="qwen3-0.6b",
        framework=framework,
        batch_size=batch,
        prompt_tokens=prompt,
        new_tokens=new,
    )
    return {t.name: t.bytes for t in estimate(w).estimate.terms}


def test_the_loader_unties_the_head_and_the_rope_tables_cover_the_whole_context():
    t = _terms("llms-from-scratch", 1, 20, 150)
    # load_weights_into_qwen: Parameter(embed_tokens.clone()) assigned to out_head
    assert t["untied_lm_head"] == VOCAB * HIDDEN * 2
    # compute_rope_params(context_length=40960) in float32: cos and sin buffers
    assert t["rope_tables"] == 2 * CONTEXT * HEAD_DIM * 4
    assert "kv_cache" not in t


def test_without_a_cache_each_step_keeps_the_previous_steps_logits():
    """ch04 generate_text_simple: `logits = logits[:, -1, :]` keeps a view of the whole
    bf16 logits while the next forward over every position writes its own."""
    batch, length = 8, 15 + 150
    t = _terms("llms-from-scratch", batch, 15, 150)
    assert t["activations"] == batch * (2 * length - 1) * VOCAB * 2


def test_with_its_kv_cache_the_prompts_logits_and_a_grown_cache():
    t = _terms("llms-from-scratch-kv", 1, 20, 150)
    assert t["kv_cache"] == 28 * 2 * 8 * HEAD_DIM * 2 * 170
    assert t["activations"] == 20 * VOCAB * 2
    # kv_cache_batched's apply_rope leaves the keys in fp32 (the fp32 cos/sin promote them)
    b = _terms("llms-from-scratch-kv", 8, 15, 150)
    assert b["kv_cache"] == 28 * 8 * HEAD_DIM * (4 + 2) * 165 * 8


def test_the_package_is_read_from_a_question_as_the_case_adapter_reads_it():
    assert stack("PyTorch from-scratch Qwen3Model (LLMs-from-scratch, no KV cache)") == (
        "llms-from-scratch"
    )
    assert stack("PyTorch from-scratch Qwen3Model (LLMs-from-scratch, KV cache)") == (
        "llms-from-scratch-kv"
    )
    plain = parse.parse_query("qwen3-0.6b llms-from-scratch batch 8 on an a100")
    assert plain.workload.framework == "llms-from-scratch"
    cached = parse.parse_query("qwen3 0.6b llms_from_scratch.kv_cache batch 8 a100")
    assert cached.workload.framework == "llms-from-scratch-kv"


def test_the_answer_says_which_model_of_the_package_it_sized_in_both_languages():
    for lang in ("en", "zh"):
        for value in ("from_scratch_kv_cache", "from_scratch_no_kv_cache"):
            said = assumption(lang, "from_scratch", value)
            assert "LLMs-from-scratch" in said and value not in said
        assert "from_scratch_eager" not in assumption(lang, "attention", "from_scratch_eager")
