"""Text encoders a question names for its pipeline ("a 2B DiT with a Gemma-2-2B text
encoder", "文本编码器用 Qwen2.5-VL-3B", "T5-XXL as text encoder"): each is sized as the
pipelines load it (data/vocab/models.toml [text_encoders] -> data/quantizers.toml), or as
the catalog holds a decoder LLM / VLM, and counted beside a pipeline the catalog lacks
(memory/diffusion.py named_encoders). Runs before the model names, so the encoder is not
read as the model asked about."""

from __future__ import annotations

import re
import tomllib
from functools import cache

from advisor import catalog
from advisor.models.choices import Kind
from advisor.parse import vocab
from advisor.parse.scan import Reading, Scan

QUANTIZERS_FILE = vocab.VOCAB_DIR.parent / "quantizers.toml"
_ENCODER = r"(?:text[\s_-]?encoders?|文本编码器)"
_ONE = r"[a-z][\w.\-/]*(?:[\s-](?:xxl|xl|l|g|bigg|vit-l/14))?"
_SEP = r"\s*(?:,|，|、|\+|&|\band\b|和|与)\s*"
# one encoder or a list of them ("T5-XXL and CLIP-L", "CLIP-L + T5-XXL")
_NAMES = rf"(?P<names>{_ONE}(?:{_SEP}{_ONE})*)"


@cache
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    after = re.compile(
        rf"{_ENCODER}\s*(?:is|are|=|:|：|用|是|为|uses?)?\s*(?:the\s+|a\s+)?{_NAMES}", re.I
    )
    before = re.compile(
        rf"(?<![\w.\-/]){_NAMES}\s*(?:as\s+(?:the\s+|a\s+|its\s+)?|作为|做)?\s*{_ENCODER}", re.I
    )
    size = re.compile(rf"{_ENCODER}\s*(?P<b>\d+(?:\.\d+)?)\s*b(?![a-z0-9])", re.I)
    return after, before, size


@cache
def _encoder_params() -> dict[str, float]:
    with QUANTIZERS_FILE.open("rb") as fh:
        table = tomllib.load(fh)["text_encoder_embedding"]
    names = vocab.load("models")["text_encoders"]
    return {vocab.squash(k): float(table[v]["params_b"]) for k, v in names.items()}


def encoder_params_b(name: str) -> float | None:
    """Billions of parameters of an encoder by name: a listed one, else a decoder LLM or
    VLM the catalog holds; None for anything else (not read as an encoder)."""
    known = _encoder_params().get(vocab.squash(name))
    if known is not None:
        return known
    spec = catalog.find_model(name)
    if spec is not None and spec.kind == Kind.llm and spec.params_b:
        return float(spec.params_b)
    return None


def _sized(m: re.Match[str]) -> list[float] | None:
    """Every name of the match sized, or None when one is not an encoder (then the words
    are left to the other recognizers)."""
    sizes = [encoder_params_b(n.strip()) for n in re.split(_SEP, m.group("names"))]
    return [x for x in sizes if x is not None] if all(x is not None for x in sizes) else None


def recognize_named_encoders(s: Scan, r: Reading) -> None:
    if not re.search(_ENCODER, s.text, re.I):
        return
    after, before, size = _patterns()
    found: list[float] = []
    while m := s.take(size):  # as the canonical line writes them back
        found.append(float(m.group("b")))
    for pattern in (after, before):
        m, sizes = s.take_if(pattern, _sized)
        if m is not None:
            found += sizes
            break
    if found:
        r.fields["text_encoders_params_b"] = found
