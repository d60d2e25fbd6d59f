"""Owners are told the changes that keep their own cards before "rent more cards": when
no one setting is enough, the settings of the same run stacked (fixes.stacked_fix)."""

from __future__ import annotations

from advisor.parse import parse_query
from advisor.recommend import recommend_query
from checks import answer_invariants as inv


def _answer(q: str):  # noqa: ANN202
    parsed = parse_query(q)
    rec = recommend_query(parsed, default_currency="CNY")
    return rec, inv.rendered(rec, parsed, q)


def test_70b_awq_on_two_4090s_gets_vllm_flags_fp8_kv_and_a_shorter_context_before_renting() -> None:
    rec, texts = _answer("llama-3.1-70b awq int4 两张4090 32k上下文")
    assert rec.verdict is not None and rec.verdict.fix is not None
    fix = rec.verdict.fix
    assert fix.startswith("stack:") and "kv_fp8" in fix and "shorter_context" in fix, fix
    first_cards = next(i for i, c in enumerate(rec.fixes) if c.startswith("cards:"))
    assert first_cards > 0 and rec.fixes[0] == fix
    zh = texts["zh/answer"].splitlines()[2]
    assert "--kv-cache-dtype fp8" in zh and "--enforce-eager" in zh and "租" not in zh, zh
    en = texts["en/answer"].splitlines()[2]
    assert "--kv-cache-dtype fp8" in en and "rent" not in en, en


def test_70b_awq_on_two_3090s_gets_vllm_flags_and_a_shorter_context_without_fp8_kv() -> None:
    """vLLM's fp8 KV cache does not run on a 3090 (CC 8.6; capabilities.toml
    vllm_fp8_kv_needs_ada): the stack of the user's own settings leaves it out (it was
    offered, and the stack then never ran) and keeps the 16-bit cache at a shorter context."""
    rec, texts = _answer("llama-3.1-70b awq int4 两张3090 32k上下文")
    assert rec.verdict is not None and rec.verdict.fix is not None
    fix = rec.verdict.fix
    assert fix.startswith("stack:") and "kv_fp8" not in fix and "shorter_context" in fix, fix
    assert rec.fixes[0] == fix
    en = texts["en/answer"].splitlines()[2]
    assert "--kv-cache-dtype fp8" not in en and "--enforce-eager" in en and "rent" not in en, en


def test_zero3_on_eight_4090s_gets_micro_batch_and_fused_loss_not_more_cards() -> None:
    """47 GiB of the 82.7 GiB per card are the micro-batch's logits: more cards under
    ZeRO-3 data parallel do not shrink them; micro-batch 1 and a fused loss do."""
    rec, texts = _answer("全参微调 llama3-8b deepspeed zero3 8卡4090 行不行 seq 4096 batch 8")
    assert rec.verdict is not None and rec.verdict.fix is not None
    fix = rec.verdict.fix
    assert fix.startswith("stack:") and "batch:1" in fix and "chunked_loss" in fix, fix
    assert "换更大显存或更多卡" not in texts["zh/answer"]
    assert "more cards" not in texts["en/answer"].splitlines()[2]
    assert "梯度累积" in texts["zh/answer"] and "Liger" in texts["zh/answer"]


def test_a_single_change_that_fits_is_not_stacked() -> None:
    """Stacking is only for when no one change is enough: a 3B LoRA at batch 8 on a 24 GB
    card keeps its one-change advice (the largest micro-batch that fits: 2). (Qwen2-7B at batch 4, seq 2048, used
    here before, now leads with its own settings stacked over switching to Unsloth:
    test_a_lora_that_fits_with_its_own_settings_leads_with_them_not_unsloth.)"""
    rec, _ = _answer("lora qwen2.5-3b bs 8 seq 2048 24g")
    assert rec.verdict is not None and rec.verdict.fix == "batch:2"


def test_70b_awq_on_two_24gb_cards_keeps_the_longest_context_that_runs() -> None:
    """Before: the stack halved the context down to 2048 chasing a 20% headroom that the
    weights alone rule out (practice: 8-16k with an fp16 KV cache, ~32k borderline with
    fp8); now the least change that runs: lean vLLM flags, fp8 KV, 16k."""
    from advisor.parse import parse_query
    from advisor.recommend import recommend_query

    rec = recommend_query(parse_query("llama-3.1-70b awq int4 两张4090 32k"), "CNY")
    fix = rec.verdict.fix or ""
    assert fix.startswith("stack:") and "kv_fp8" in fix
    assert "shorter_context:16384" in fix and "shorter_context:2048" not in fix
    # two 3090s (no fp8 KV cache under vLLM): the 16-bit cache at 8k, not 2048
    rec = recommend_query(parse_query("llama-3.1-70b awq int4 两张3090 32k"), "CNY")
    fix = rec.verdict.fix or ""
    assert "shorter_context:8192" in fix and "kv_fp8" not in fix
    # the grid under it agrees: AWQ at 4k runs (⚠️, with those flags), not ❌
    cell = next(c for c in rec.grid if c.format == "awq-4bit" and c.context_tokens == 4096)
    assert cell.state == "tight"


def test_llama3_70b_at_32k_is_answered_at_8k_and_points_to_31() -> None:
    from advisor.parse import parse_query
    from advisor.recommend import recommend_query
    from advisor.render import render

    for lang, words in (("zh", ("8192", "Llama 3.1 70B")), ("en", ("8192", "Llama 3.1 70B"))):
        parsed = parse_query("llama3-70b awq int4 两张3090 32k")
        rec = recommend_query(parsed, "CNY")
        text = render("answer", lang, plain=True, rec=rec, parsed=parsed)
        assert all(w in text for w in words) and rec.verdict is not None
        assert "context 8k" in text or "上下文 8k" in text


def test_a_lora_that_fits_with_its_own_settings_leads_with_them_not_unsloth() -> None:
    """Before: "改用 Unsloth" first; the user's own run (micro-batch 1 with gradient
    accumulation, a fused loss) fits too and is the smaller change."""
    from advisor.parse import parse_query
    from advisor.recommend import recommend_query
    from advisor.render import render

    parsed = parse_query("lora qwen2-7b bs4 2048 24g")
    assert parsed.workload.batch_size == 4 and parsed.workload.seq_len == 2048
    rec = recommend_query(parsed, "CNY")
    assert rec.verdict.fix == "stack:batch:1+chunked_loss"
    assert rec.fixes.index("unsloth") > rec.fixes.index("stack:batch:1+chunked_loss")
    zh = render("answer", "zh", plain=True, rec=rec, parsed=parsed)
    assert zh.index("梯度累积") < zh.index("Unsloth")
    en = render("answer", "en", plain=True, rec=rec, parsed=parsed)
    assert en.index("gradient accumulation") < en.index("Unsloth")
