"""The stratum of an estimate inside its band's runtime group (data/band.toml [strata]):
the regimes a runtime handles differently, each fitted as its own band level where enough
sources measured it (checks/accuracy.py fit_band), else the group's band holds.

Two axes, chosen on the residuals (docs/accuracy.md "The band"):
- context: a language model's run over `long_context_tokens` tokens (inference: prompt +
  generated; training: the sequence) is "long". transformers' 128k prefill and caches sized
  to the maximum length ran 30-45% over the estimate where runs of a few thousand tokens
  ran within ±10%, so one quantile over both regimes set a +44% top on a 4k chat.
- loader: weights under 16 bits are quantized while loading by a library
  (data/quantizers.toml [quantizer.*]: bitsandbytes, torchao, quanto) — "onload", whose
  buffers, kept 16/32-bit layers and load peaks spread wide — or stored quantized in the
  checkpoint (GPTQ, AWQ, FP8, MXFP4, GGUF) — "stored", loaded as they are.
"""

from __future__ import annotations

from advisor import catalog
from advisor.memory.band import band_table
from advisor.memory.quantizers import quantizer_of
from advisor.models.choices import Kind
from advisor.models.workload import Workload


def run_tokens(w: Workload) -> int | None:
    """The tokens a run holds at once, as the workload states them; None where it does not
    say (the engine then assumes a short default: 4k for inference, its recipe's length
    for training)."""
    if w.mode.is_training:
        return w.seq_len
    if w.context_tokens:
        return w.context_tokens
    if w.prompt_tokens is not None or w.new_tokens is not None:
        return (w.prompt_tokens or 0) + (w.new_tokens or 0)
    return None


def band_stratum(kind: Kind, w: Workload, fmt: str | None) -> str:
    """The stratum's name: "short" or "long" for a language model, then "onload" or
    "stored" for weights under 16 bits, joined by "-" ("short-onload"); "" where no axis
    applies (a 16-bit CNN)."""
    parts: list[str] = []
    if kind == Kind.llm:
        tokens = run_tokens(w)
        long = tokens is not None and tokens > band_table()["strata"]["long_context_tokens"]
        parts.append("long" if long else "short")
    spec = catalog.find_format(fmt) if fmt else None
    if spec is not None and spec.bits < 16:
        parts.append("onload" if quantizer_of(spec.id) is not None else "stored")
    return "-".join(parts)
