"""ExLlama v1 (turboderp/exllama model.py, data/runtimes.toml [exllama_v1]): the fp16 cache
preallocated for the context, the token embeddings on the CPU, temp_state and temp_dq
kernel buffers, and the whole prompt in one forward with the attention scores and softmax
materialised (SDPA with an explicit fp16 mask). Hand count for Llama-2-7B GPTQ 4-bit
(32 layers, 32 heads of 128, hidden 4096, MLP 11008, vocabulary 32000), a 1,920-token
prompt and 128 new tokens (a 2,048-token cache), as ExLlama's README benchmark ran it."""

from __future__ import annotations

from advisor import catalog
from advisor.memory import estimate
from advisor.memory.transformer import estimate_weight_bytes
from advisor.models.workload import Workload

PROMPT, CTX = 1920, 2048
HIDDEN, MLP, HEADS, VOCAB = 4096, 11008, 32, 32000


def _terms(framework: str) -> dict[str, int]:
    w = Workload(
        model="llama-2-7b",
        weights_format="gptq-4bit",
        framework=framework,
        prompt_tokens=PROMPT,
        new_tokens=CTX - PROMPT,
    )
    return {t.name: t.bytes for t in estimate(w).estimate.terms}


def test_exllama_v1_counts_its_own_buffers_from_the_code():
    t = _terms("exllama-v1")
    arch = catalog.find_model("llama-2-7b").arch
    weights = estimate_weight_bytes(6.74e9, arch, "gptq-4bit") - VOCAB * HIDDEN * 2
    assert abs(t["weights"] - weights) <= 1  # embed_tokens stays on the CPU
    assert t["kv_cache"] == 32 * 2 * 32 * 128 * 2 * CTX  # fp16, the whole context up front
    assert t["kernel_scratch"] == CTX * MLP * 2 + HIDDEN * MLP * 2  # temp_state + temp_dq
    scores = PROMPT * PROMPT * (HEADS * 4 + 2)  # fp16 scores + softmax per head, fp16 mask
    assert t["activations"] == scores + PROMPT * MLP * 2 * 2 + VOCAB * 4


def test_the_score_matrix_grows_with_the_square_of_a_long_prompt():
    """README 'Testing long sequences': 30B at 9,032 tokens reads 46,863 MB against 20,062
    at 2,048; what makes the difference beyond the cache is the materialised attention,
    which ExLlamaV2's chunked prefill (max_input_len 2048) does not have."""
    long = Workload(
        model="llama-2-7b",
        weights_format="gptq-4bit",
        framework="exllama-v1",
        prompt_tokens=8000,
        new_tokens=128,
    )
    v1 = {t.name: t.bytes for t in estimate(long).estimate.terms}
    v2 = {
        t.name: t.bytes
        for t in estimate(long.model_copy(update={"framework": "exllamav2"})).estimate.terms
    }
    assert v1["activations"] >= 8000 * 8000 * HEADS * 4
    assert v2["activations"] < v1["activations"] / 10
