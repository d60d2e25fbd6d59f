"""Jinja rendering of replies: `templates/<lang>/<name>.j2`, autoescaped for Telegram HTML.
`plain=True` strips the HTML tags for the terminal.

The filters that show numbers live in advisor/units.py (the one place bytes become the unit
users see), the short wording in advisor/wording.py, the assumptions said in
advisor/assumed.py; their names are re-exported here (`__all__`) for the callers that render.
"""

from __future__ import annotations

import html
import re
from functools import cache

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from advisor import catalog, constraints
from advisor.assumed import (
    assumption,
    assumption_text,
    assumptions,
    context_cap,
    runtime_name,
)
from advisor.memory.terms import shown_name
from advisor.pitfalls import gpu_notes
from advisor.recommend.speed import gpu_layers_tokens_per_s
from advisor.units import (
    amount,
    bar,
    day,
    each,
    figure,
    gib,
    headroom,
    hours,
    ktokens,
    listed,
    money,
    pct,
    sig2,
    tokens,
    whole,
)
from advisor.wording import (
    LANGS,
    TEMPLATES,
    fix_label,
    formula,
    label,
    labels,
    swatch,
    term_colours,
    term_word,
)

__all__ = [
    "TEMPLATES",
    "amount",
    "assumption",
    "assumption_text",
    "figure",
    "formula",
    "gib",
    "hours",
    "ktokens",
    "label",
    "labels",
    "preload_templates",
    "render",
    "sig2",
    "term_colours",
]


def split_word(lang: str, parallelism: str | None, result) -> str:  # noqa: ANN001
    """How the work is split over cards, in the words of the runtime that splits it: plain
    transformers (device_map="auto") puts whole layers on each card, which is not tensor
    parallelism (vLLM, SGLang, TGI split each layer's heads)."""
    if not parallelism:
        return ""
    if parallelism == "tp" and runtime_name(result) == "transformers":
        return label(lang, "value.layer_split_hf")
    return label(lang, f"value.{parallelism}")


def ignored(parsed) -> list[str]:  # noqa: ANN001
    """Fragments the parser skipped, without the bare punctuation between them."""
    return [f for f in (s.strip(" -·,，;；") for s in parsed.ignored) if re.search(r"\w", f)]


_HF_SOURCE = re.compile(r"config\.json of (\S+) \(Hugging Face Hub\)")


def model_source(lang: str, source: str | None) -> str:
    """Where a model's architecture came from, in the reader's language: the Hugging Face
    repo when the catalog cites one; English citations stay out of Chinese replies."""
    if source and (m := _HF_SOURCE.search(source)):
        return label(lang, "source.hf", repo=m.group(1))
    if lang == "en" and source:
        return source
    return label(lang, "source.catalog")


def workload_facts(result, pick=None) -> dict[str, object]:  # noqa: ANN001
    """What the headline states about the job: mode, format, context, batch, cards, runtime
    (asked or assumed), for the templates to word. An assumed bf16 on a card without it
    (`pick`'s) is stated as the fp16 it runs in (`assumptions`)."""
    w = result.workload
    assumed = {a.field: a.value for a in result.assumed}
    if catalog.lacks_bf16(pick) and assumed.get("weights_format") == "bf16":
        assumed["weights_format"] = "fp16"
    context = w.seq_len if w.mode.is_training else w.context_tokens
    context = context or assumed.get("seq_len" if w.mode.is_training else "context_tokens")
    mode = w.mode.value
    if w.mode.is_post_training and w.tuning.value in ("lora", "qlora", "full"):
        mode = f"{mode}_{w.tuning.value}"  # "GRPO (LoRA policy)": the method and its recipe
    return {
        "mode": mode,
        "format": w.weights_format or assumed.get("weights_format"),
        "kv": constraints.kv_cache_type(result),
        "context": tokens(int(context)) if context and str(context).isdigit() else None,
        "batch": w.batch_size or assumed.get("batch_size"),
        "runtime": w.runtime.value if w.runtime else None,
        "offload": w.cpu_offload.value if w.cpu_offload.value != "none" else None,
    }


@cache
def _env() -> Environment:
    env = Environment(
        loader=FileSystemLoader(str(TEMPLATES)),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=StrictUndefined,
        auto_reload=False,  # templates ship with the code; no stat() per reply
    )
    # Macros are imported without the render's context (a cached module: importing them
    # `with context` built a module of Macro objects per render, cyclic garbage the
    # collector then freed in pauses of up to 22 ms under load), so their wording comes
    # from this global with the language named in each macro file.
    env.globals["label"] = label
    env.globals["fix_label"] = fix_label
    env.globals["split_word"] = split_word
    env.globals["gpu_layers_speed"] = gpu_layers_tokens_per_s
    env.filters.update(
        gib=gib,
        bar=bar,
        pct=pct,
        headroom=headroom,
        money=money,
        listed=listed,
        amount=amount,
        whole=whole,
        each=each,
        tokens=tokens,
        day=day,
        hours=hours,
        swatch=swatch,
        ktokens=ktokens,
        sig2=sig2,
    )
    return env


def preload_templates() -> int:
    """Compile every template now (start-up), not on the first reply that needs it: a
    template compiles once per process (jinja's cache, auto_reload off) in ~5–20 ms, which
    the first askers would otherwise wait for. The partials too (`.jinja`: macros, includes,
    loaded when a reply first renders them): left out, their ~64 ms of compiling fell on
    the first answers of bench/load.py's window. Returns how many."""
    env = _env()
    names = [n for n in env.list_templates() if n.endswith((".j2", ".jinja"))]
    for name in names:
        env.get_template(name)
    return len(names)


def render(template: str, lang: str, /, plain: bool = False, **ctx: object) -> str:
    lang = lang if lang in LANGS else "en"

    def t(key: str, **fmt: object) -> str:
        return label(lang, key, **fmt)

    helpers = {
        "t": t,
        "formula": lambda term: formula(lang, term),
        "assumptions": lambda parsed, result, pick=None: assumptions(lang, parsed, result, pick),
        "ignored": ignored,
        "context_cap": lambda parsed: context_cap(lang, parsed),
        "facts": workload_facts,
        "model_source": lambda source: model_source(lang, source),
        "gpu_note": lambda gpu_id: gpu_notes().get(gpu_id, {}).get(lang, ""),
        "term_word": lambda name, gpu_id=None: term_word(lang, name, gpu_id),
        "shown_name": shown_name,
    }
    text = _env().get_template(f"{lang}/{template}.j2").render(lang=lang, **helpers, **ctx).strip()
    text = re.sub(r"\n{3,}", "\n\n", text)
    if plain:
        text = html.unescape(re.sub(r"<[^<>]+>", "", text))
    return text
