"""Settings stacked on the user's own card with a shorter context (a smaller GGUF type, a q8_0
KV cache): the context is the longest that leaves the guide's headroom, not the first halving
that does, and the longer halving that runs tight is offered beside it, marked tight
(advisor/recommend/stacked_fixes.py)."""

from __future__ import annotations

from advisor.recommend.headroom import HEADROOM
from advisor.recommend.stacked_fixes import CONTEXT_ROUND
from advisor.recommend.verdict import fixed_figure
from checks import answer_invariants as inv
from tests.conftest import answers_both

Q6K_32K = "llama.cpp qwen2.5-14b-instruct q6_k with 32k context on a 12gb rtx 3060, can it fit?"


def _context(code: str) -> int:
    step = next(s for s in code.removeprefix("stack:").split("+") if s.startswith("shorter_"))
    return int(step.partition(":")[2])


def test_the_stacked_context_is_the_longest_that_leaves_the_headroom() -> None:
    """Qwen2.5-14B Q6_K at 32k on a 12 GB RTX 3060: Q4_K_M + q8_0 KV cache was cut straight
    to 4096 tokens (~9.2 GiB); now 6144 leaves the 20% and 16384 is offered as tight."""
    rec, texts = answers_both(Q6K_32K)
    v = rec.verdict
    assert v.fix is not None and v.fix.startswith("stack:") and not v.fix_tight
    usable = rec.named.usable_bytes
    tokens = _context(v.fix)
    assert tokens > 4096 and tokens % CONTEXT_ROUND == 0
    assert v.fixed_bytes is not None and v.fixed_bytes <= usable * (1 - HEADROOM)
    longer = v.fix.replace(f"shorter_context:{tokens}", f"shorter_context:{tokens + CONTEXT_ROUND}")
    assert fixed_figure(rec.setup, longer) > usable * (1 - HEADROOM)  # type: ignore[operator]
    tight = [c for c in rec.fixes if c.startswith("stack:") and c != v.fix]
    assert tight and tight[0] in v.tight_fixes and _context(tight[0]) >= 2 * 4096
    assert fixed_figure(rec.setup, tight[0]) < usable  # type: ignore[operator]
    assert f"context cut to {tokens} tokens" in texts["en"]
    assert f"context cut to {_context(tight[0])} tokens (tight)" in texts["en"]
    assert f"上下文缩短到 {tokens} tokens" in texts["zh"]
    assert f"上下文缩短到 {_context(tight[0])} tokens（偏紧）" in texts["zh"]
    for lang, text in texts.items():
        assert not inv.contradictions(text, lang)
