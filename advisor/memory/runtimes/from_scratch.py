"""rasbt/LLMs-from-scratch's own PyTorch models (the `llms_from_scratch` package): what its
code materialises beyond the checkpoint, read from the code (data/runtimes.toml
[llms_from_scratch]):

- the loader clones a tied checkpoint's embedding into the output head (two copies);
- the RoPE cos/sin tables in float32 for the config's whole context_length;
- logits over every position in the model dtype; without a cache every step runs the whole
  sequence and the previous step's logits stay alive (a view of them is kept) while the next
  step writes its own;
- with `llms_from_scratch.kv_cache` a cache grown by concatenation, the prompt's logits held
  through the first decode step; for a batch the README's `kv_cache_batched` model, whose
  RoPE leaves the cached keys in float32;
- eager attention: two copies of the score matrix at a time.
"""

from __future__ import annotations

from dataclasses import replace

from advisor.memory.runtimes import InferenceSetup, add_kv, add_weights, coefficient
from advisor.memory.terms import Breakdown
from advisor.memory.transformer import kv_bytes_per_token, mlp_width

SECTION = "llms_from_scratch"


def handles(framework: str | None) -> bool:
    return framework in coefficient(SECTION, "frameworks")


def allocate(s: InferenceSetup, acc: Breakdown) -> int:
    arch = s.arch
    cached = s.framework in coefficient(SECTION, "cached_frameworks")
    acc.assume("from_scratch", "from_scratch_kv_cache" if cached else "from_scratch_no_kv_cache")
    allocated = add_weights(s, acc)
    if arch.tied_embeddings:
        head = arch.vocab * arch.hidden * s.kept_bytes * coefficient(SECTION, "untied_copies")
        allocated += acc.add(
            "untied_lm_head",
            head / s.tp,
            f"the loader clones the tied embedding into out_head: {arch.vocab} x {arch.hidden}"
            f" x {s.kept_bytes:.0f} B",
            key="untied_lm_head",
            vocab=arch.vocab,
            hidden=arch.hidden,
        )
    rope = 2 * arch.max_context_tokens * arch.head_dim_ * coefficient(SECTION, "rope_table_bytes")
    allocated += acc.add(
        "rope_tables",
        rope,
        f"RoPE cos + sin in fp32 for the config's {arch.max_context_tokens} positions x"
        f" {arch.head_dim_}",
        key="rope_tables",
        positions=arch.max_context_tokens,
        head_dim=arch.head_dim_,
    )
    if cached:
        return allocated + _cached(s, acc)
    return allocated + _uncached(s, acc)


def _layer_peak(s: InferenceSetup, tokens: int) -> float:
    """One eager layer over `tokens` positions a sequence: its hidden and MLP buffers, or
    its score copies, whichever is larger."""
    arch, elem = s.arch, s.act_bytes
    hidden = (
        coefficient("transformers", "prefill_hidden_buffers") * arch.hidden
        + coefficient("transformers", "prefill_mlp_buffers") * mlp_width(arch) / s.tp
    )
    buffers = s.batch * tokens * hidden * elem
    scores = (
        s.batch * arch.heads / s.tp * tokens * tokens * elem * coefficient(SECTION, "score_copies")
    )
    return max(buffers, scores)


def _uncached(s: InferenceSetup, acc: Breakdown) -> int:
    """Every step a forward over the whole sequence; the previous step's logits held."""
    arch, length = s.arch, s.context
    per_position = arch.vocab * s.act_bytes / s.tp
    held = s.batch * max(length - 1, 0) * per_position * (coefficient(SECTION, "held_logits") - 1)
    new = s.batch * length * per_position
    return acc.add(
        "activations",
        held + max(new, _layer_peak(s, length)),
        f"no KV cache: each step runs all {length} tokens; its logits over {arch.vocab} beside"
        " the previous step's",
        key="activations.from_scratch_uncached",
        tokens=length,
        sequences=s.batch,
        vocab=arch.vocab,
    )


def _cached(s: InferenceSetup, acc: Breakdown) -> int:
    """A cache for the whole sequence (the batched model keeps fp32 keys), and the prompt's
    forward: its logits over every prompt position, held through the first decode step."""
    arch = s.arch
    per_tok = kv_bytes_per_token(arch, s.kv_dtype, s.context, "transformers") / s.tp
    cache = s
    if s.batch > 1 and s.kv_dtype in ("bf16", "fp16") and not arch.recurrent_state_elements:
        per_tok *= (coefficient(SECTION, "batched_key_bytes") + 2) / 4
        # the cache line says what it holds: fp32 keys beside 16-bit values
        cache = replace(s, kv_dtype=f"fp32 K + {s.kv_dtype} V")
    allocated = add_kv(cache, acc, per_tok, s.context, s.batch)
    logits = s.batch * s.prompt * arch.vocab * s.act_bytes / s.tp
    return allocated + acc.add(
        "activations",
        max(logits, _layer_peak(s, s.prompt)),
        f"prompt of {s.prompt} tokens: logits over {arch.vocab} for every position",
        key="activations.from_scratch_cached",
        tokens=s.prompt,
        sequences=s.batch,
        vocab=arch.vocab,
    )
