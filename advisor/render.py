"""Jinja rendering of replies: `templates/<lang>/<name>.j2`, autoescaped for Telegram HTML.

The one place bytes become the unit users see (`gib` filter). `plain=True` strips the
HTML tags for the terminal.
"""

from __future__ import annotations

import html
import re
import tomllib
from functools import cache
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from advisor import catalog, constraints
from advisor.memory.runtimes.whisper import own_kernels, own_program
from advisor.memory.terms import shown_name
from advisor.pitfalls import gpu_notes
from advisor.recommend.speed import gpu_layers_tokens_per_s
from advisor.units import headroom

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
LANGS = ("zh", "en")


def gib(value: float | int | None) -> str:
    if value is None:
        return "?"
    v = value / 2**30
    return f"{v:.1f} GiB" if v < 100 else f"{v:.0f} GiB"


def bar(part: float, whole: float, width: int = 10) -> str:
    """A text bar for part of a whole (a term of the VRAM total)."""
    n = max(0, min(width, round(part / whole * width))) if whole else 0
    return "█" * n + "░" * (width - n)


def pct(fraction: float) -> str:
    return f"{fraction * 100:.0f}%"


SYMBOLS = {"CNY": "¥", "USD": "$"}


def figure(value: float) -> str:
    """An amount of money as users see it, without false precision: whole units (with
    separators) from 100 up, else three significant digits. Prices are platform list
    prices times an estimate (hours, card counts) whose own band is ±30% or more, so
    "¥32544.15" claimed a cent it cannot know: 32,544 / 478 / 47.8 / 4.98 / 0.125. Every
    money filter below goes through here (tests/test_money_rounding.py)."""
    if abs(value) >= 99.95:
        return f"{round(value):,}"
    return f"{float(f'{value:.3g}'):g}"


def money(price) -> str:  # noqa: ANN001
    if price is None:
        return "—"
    return f"{SYMBOLS.get(price.currency, price.currency)}{figure(price.amount)}/h"


def listed(price) -> str:  # noqa: ANN001
    """What the platform itself charges, for a price converted from another currency."""
    if price is None or price.listed_currency is None:
        return ""
    sym = SYMBOLS.get(price.listed_currency, price.listed_currency)
    return f"{sym}{figure(price.listed_amount)}/h"


def each(price, count: int) -> str:  # noqa: ANN001
    """One card's rate of a price for `count` cards, in the currency shown first (the
    platform's own when converted): "$0.12/h"."""
    if price.listed_currency is not None:
        return f"{amount(price.listed_amount / count, price.listed_currency)}/h"
    return f"{amount(price.amount / count, price.currency)}/h"


def amount(value: float | None, currency: str) -> str:
    """A total in a currency: ¥12.4, $3.1, ¥32,544 (`figure`)."""
    if value is None:
        return "—"
    return f"{SYMBOLS.get(currency, currency)}{figure(value)}"


def whole(value: float | None, currency: str) -> str:
    """A purchase price in whole units with separators: ¥80,000, $12,000; other currencies
    by their code (a budget in euros is shown as typed: EUR 5,000)."""
    if value is None:
        return "—"
    sym = SYMBOLS.get(currency)
    text = f"{abs(value):,.0f}"
    sign = "-" if value < 0 else ""
    return f"{sign}{sym}{text}" if sym else f"{sign}{currency} {text}"


def day(source_date: str | None) -> str:
    """The date part of a price's source date ("~2026 (undated mirror)" -> "~2026")."""
    m = re.match(r"~?[\d-]+", source_date or "")
    return m.group(0) if m else "?"


def hours(h: float | None) -> str:
    """Training time without false precision: 3.4, 42, 1,250 (hours); under 0.1 h two
    significant digits (0.03), so a whole-job cost beside it is rate × hours as shown,
    never a cost beside "0.0 h"."""
    if h is None:
        return "?"
    if 0 < h < 0.095:
        return f"{h:.2g}"
    return f"{h:.1f}" if h < 10 else f"{round(h):,}"


def ktokens(n: int | None) -> str:
    """A length found by search (the longest context that fits), without false precision:
    74826 -> "74k", rounded down to whole thousands so the figure shown still fits."""
    if n is None:
        return "—"
    return f"{n // 1000}k" if n >= 1000 else str(n)


def sig2(x: float | None) -> str:
    """Seconds to two significant digits: 55.05 -> 55, 1.23 -> 1.2, 0.654 -> 0.65."""
    if x is None:
        return "?"
    if x >= 100:
        return f"{round(x):,}"
    return f"{float(f'{x:.2g}'):g}"


def tokens(n: int | None) -> str:
    """4096 -> 4k, 131072 -> 128k: the way users write contexts."""
    if n is None:
        return "?"
    return f"{n // 1024}k" if n >= 1024 and n % 1024 == 0 else str(n)


@cache
def labels(lang: str) -> dict[str, dict[str, str]]:
    """Short wording (buttons, alerts, term names) from `templates/<lang>/labels.toml`."""
    with (TEMPLATES / (lang if lang in LANGS else "en") / "labels.toml").open("rb") as fh:
        return tomllib.load(fh)


def term_word(lang: str, name: str, gpu_id: str | None = None) -> str:
    """A memory term's name in the words of the card's compute stack: "CUDA context" on an
    NVIDIA card, "HIP (ROCm) context" on AMD, "Metal context" on a Mac
    (data/architectures.toml `backend`; labels.toml `term.<name>_<backend>` where it differs).
    `name` may name its section ("tool.smi": the memory tool, nvidia-smi / rocm-smi)."""
    from advisor import catalog
    from advisor.architectures import backend_of

    section, _, name = name.rpartition(".")
    section = section or "term"
    gpu = catalog.gpus().get(gpu_id) if gpu_id else None
    backend = backend_of(gpu).lower()
    words = labels(lang if lang in LANGS else "en").get(section, {})
    return words.get(f"{name}_{backend}") or label(lang, f"{section}.{name}")


def label(lang: str, key: str, **fmt: object) -> str:
    """`label("zh", "button.skip")`; an unknown key shows as itself rather than failing a reply."""
    section, _, name = key.partition(".")
    text = labels(lang).get(section, {}).get(name, key)
    return text.format(**fmt) if fmt else text


def fix_label(lang: str, name: str, arg: str, rec=None) -> str:  # noqa: ANN001
    """A change's wording; where the user named a trainer and the change has a wording of
    its own for it (`fix.<name>_<trainer>`: kohya's --fp8_base, ai-toolkit's quantize:
    true), that one, so a kohya user is not told ai-toolkit's switch."""
    setup = (rec.asked or rec.result) if rec is not None else None
    trainer = (getattr(setup.workload, "framework", None) or "") if setup is not None else ""
    if trainer:
        key = f"fix.{name}_{trainer.lower().replace('-', '_')}"
        if label(lang, key) != key:
            return label(lang, key, arg=arg)
    return label(lang, f"fix.{name}", arg=arg)


@cache
def term_colours() -> dict[str, tuple[str, str]]:
    """Each memory term's (square, hex colour) from `templates/colours.toml`: the breakdown
    text and its picture (bot/chart.py) show a term in one colour. Unknown terms: "other"."""
    with (TEMPLATES / "colours.toml").open("rb") as fh:
        groups = tomllib.load(fh)["group"]
    out = {"": (groups["other"]["square"], groups["other"]["hex"])}
    for g in groups.values():
        for name in g["terms"]:
            out[name] = (g["square"], g["hex"])
    return out


def swatch(term_name: str) -> str:
    """The coloured square of a term (`term_colours`)."""
    colours = term_colours()
    return colours.get(term_name, colours[""])[0]


@cache
def formulas(lang: str) -> dict[str, str]:
    """`templates/<lang>/formulas.toml` (written by the engine side): term formula lines with
    {placeholders} filled from `Term.values`. Absent file: no lines."""
    path = TEMPLATES / (lang if lang in LANGS else "en") / "formulas.toml"
    if not path.exists():
        return {}
    with path.open("rb") as fh:
        data = tomllib.load(fh)
    table = data.get("formula", data)  # the lines sit under [formula]
    return {k: v for k, v in table.items() if isinstance(v, str)}


def formula(lang: str, term) -> str:  # noqa: ANN001
    """A term's arithmetic in the reader's language: the formulas.toml line when the engine
    names one; else in English the engine's formula, in Chinese the numbers that went in
    (never the English formula), or nothing when there are none."""
    line = formulas(lang).get(term.formula_key or "")
    if line:
        # Vocabulary ids among the values (an optimizer, a format) in the reader's words.
        words = labels(lang if lang in LANGS else "en").get("value", {})
        values = {k: words.get(v, v) if isinstance(v, str) else v for k, v in term.values.items()}
        try:
            return line.format(**values)
        except (KeyError, IndexError, ValueError):
            pass
    if lang == "en":
        return term.formula
    # `gib` is the term's own size, already shown beside its name.
    numbers = [
        f"{v:g}" if isinstance(v, int | float) else str(v)
        for k, v in term.values.items()
        if k != "gib"
    ]
    numbers = [n for n in numbers if re.fullmatch(r"[\d.eE+-]+", n)]
    return label(lang, "formula.fallback", numbers="、".join(numbers)) if numbers else ""


_ASSUMED = re.compile(r"^\s*([a-z_]+)\s*=\s*(.+?)\s*$")
_SAMPLES = re.compile(r"^([\d.]+) samples x (\d+) tokens$")


def assumption(lang: str, field: str, value: str) -> str:
    """One assumption as a phrase: ("context_tokens", "4096") -> "上下文 4096 tokens"."""
    words = labels(lang if lang in LANGS else "en")
    shown = words.get("value", {}).get(value.lower().replace(" ", "_"), value)
    phrase = words.get("assume", {}).get(field)
    if phrase is None:
        return label(lang, "assume.other", value=shown)
    return phrase.format(value=shown)


def assumption_text(lang: str, text: str) -> str:
    """A parser assumption written as `field = value` (or a data-size phrase) as a phrase."""
    if m := _SAMPLES.match(text):
        return label(lang, "assume.samples", samples=m.group(1), tokens=m.group(2))
    if m := _ASSUMED.match(text):
        field, value = m.group(1), m.group(2)
        value = re.sub(r"\s*\(.*\)$", "", value)  # "full (training)": the mode word is enough
        return assumption(lang, field, value)
    return text


def lacks_bf16(pick) -> bool:  # noqa: ANN001
    """The card an answer is about (its headline option) has no bf16 (T4, V100, Pascal)."""
    from advisor import catalog

    gpu = catalog.gpus().get(pick.gpu_id) if pick is not None else None
    return gpu is not None and gpu.vendor == "NVIDIA" and not gpu.bf16_supported


# Assumptions about an LLM's own internals (its KV cache, logits, a causal loss, how its
# attention kernel is picked): not said of a model that has none of them (an encoder
# reranker, a ViT, SAM, a diffusion pipeline), where they read as noise or as wrong.
LLM_ONLY = frozenset(
    {
        "kv_cache_dtype",
        "kv_cache_dtype_unsupported",
        "kv_cache_without_flash_attention",
        "loss_path",
        "cache_tokens",
        "max_num_batched_tokens",
        "attention",
    }
)
# The length of a non-LLM's inputs, said without LLM words ("training sequences", "context")
INPUT_LENGTH = frozenset({"seq_len", "context_tokens"})


def _family(result) -> str | None:  # noqa: ANN001
    """The catalog family of the answer's model ("yolo"), or None."""
    from advisor import catalog

    spec = catalog.models().get(getattr(result.model, "id", None) or "")
    return spec.family if spec is not None else None


def _runtime(result) -> str | None:  # noqa: ANN001
    est = getattr(result, "estimate", None)
    runtime = est.runtime if est is not None else None
    return getattr(runtime, "value", runtime)


def split_word(lang: str, parallelism: str | None, result) -> str:  # noqa: ANN001
    """How the work is split over cards, in the words of the runtime that splits it: plain
    transformers (device_map="auto") puts whole layers on each card, which is not tensor
    parallelism (vLLM, SGLang, TGI split each layer's heads)."""
    if not parallelism:
        return ""
    if parallelism == "tp" and _runtime(result) == "transformers":
        return label(lang, "value.layer_split_hf")
    return label(lang, f"value.{parallelism}")


# How a training stack is written in an answer (its project's own spelling).
STACK_NAMES = {"unsloth": "Unsloth", "llama-factory": "LLaMA-Factory", "axolotl": "Axolotl"}


def assumptions(lang: str, parsed, result, pick=None) -> list[str]:  # noqa: ANN001
    """The parser's and the engine's assumptions as phrases, each once, only those that
    matter for this model family (`LLM_ONLY` is left out for others, and their input length
    is said as such). On a card without bf16 (`pick`'s), a value only assumed to be bf16 is
    what that card runs: fp16, the same bytes ("Assumed: KV cache in bf16" beside "T4 has
    no bf16" contradicted it)."""
    out: list[str] = []
    fp16 = lacks_bf16(pick)
    kind = getattr(result.model, "kind", None)
    llm = getattr(kind, "value", kind) == "llm"
    for text in parsed.assumed:
        if text.startswith("context_capped = "):
            continue  # said at the top of the answer (context_cap)
        m = _ASSUMED.match(text)
        if not llm and m and m.group(1) in LLM_ONLY:
            continue
        phrase = assumption_text(lang, re.sub(r"\bbf16\b", "fp16", text) if fp16 else text)
        if phrase not in out:
            out.append(phrase)
    # faster-whisper (CTranslate2) runs its own kernels: the transformers path's runtime
    # and attention are not what it runs (its program is said by the parser's assumption);
    # openai-whisper is its own PyTorch program (SDPA attention), not transformers either
    framework = getattr(result.workload, "framework", None)
    own = own_kernels(framework)
    skip = ("runtime", "attention") if own else ("runtime",) if own_program(framework) else ()
    for a in result.assumed:
        # a reference implementation's own attention (SAM's, DINOv2's) is said for what it is
        reference = a.field == "attention" and a.value.endswith("_reference_eager")
        if not llm and a.field in LLM_ONLY and not reference or a.field in skip:
            continue
        value = "fp16" if fp16 and a.value == "bf16" else a.value
        field = "input_length" if not llm and a.field in INPUT_LENGTH else a.field
        if reference and not llm:
            field = "reference_scores"  # said as the score matrices, not as a kernel
        if a.field == "parallelism" and value == "tp" and _runtime(result) == "transformers":
            value = "layer_split_hf"
        phrase = assumption(lang, field, value)
        if field == "lora_targets" and framework:
            # the default of the stack the user named (kohya's, ms-swift's), never another's
            words = labels(lang if lang in LANGS else "en").get("value", {})
            shown = words.get(value.lower().replace(" ", "_"), value)
            stack = STACK_NAMES.get(framework.lower(), framework)
            phrase = label(lang, "assume.lora_targets_stack", value=shown, stack=stack)
        if field == "optimizer" and _family(result) == "yolo":
            # the YOLO trainers' own default (SGD for the runs people do), not a bare AdamW
            phrase = label(lang, "assume.optimizer_yolo")
        if field == "rl_framework" and framework and framework.lower() != value.lower():
            # "unsloth grpo": the stack named runs the method on TRL's trainer
            phrase = label(
                lang, "assume.rl_framework_stack", stack=STACK_NAMES.get(framework, framework)
            )
        if phrase not in out:
            out.append(phrase)
    return out


def context_cap(lang: str, parsed) -> str:  # noqa: ANN001
    """ "Llama 3 70B takes at most 8192 tokens: answered at 8k; for 32k use …" where the
    parser capped a context past the model's window (parse.assemble), else ""."""
    for text in getattr(parsed, "assumed", ()):
        if text.startswith("context_capped = "):
            asked, most, rest = text.removeprefix("context_capped = ").split(" ", 2)
            name, _, longer = rest.rpartition(" ")
            sep = "、" if lang == "zh" else ", "
            return label(
                lang,
                "assume.context_capped",
                model=name,
                most=int(most),
                asked=f"{int(asked) // 1024}k",
                longer=sep.join(_model_name(i) for i in longer.split(",")),
            )
    return ""


def _model_name(model_id: str) -> str:
    spec = catalog.models().get(model_id)
    return spec.name if spec is not None else model_id


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
    if lacks_bf16(pick) and assumed.get("weights_format") == "bf16":
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
