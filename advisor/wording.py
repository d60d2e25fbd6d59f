"""The short wording of replies, as data: labels, buttons and term names
(`templates/<lang>/labels.toml`), each memory term's arithmetic line
(`templates/<lang>/formulas.toml`) and colour (`templates/colours.toml`). Kept apart from the
Jinja rendering (advisor/render.py) because the bot's buttons and chart read the same words
without rendering a template."""

from __future__ import annotations

import re
import tomllib
from functools import cache
from pathlib import Path

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
LANGS = ("zh", "en")


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
    """A change's wording; where the user named a trainer (else a runtime) and the change
    has a wording of its own for it (`fix.<name>_<trainer>`: kohya's --fp8_base, ai-toolkit's
    quantize: true; Ollama, which has no expert offload), that one, so a kohya user is not
    told ai-toolkit's switch."""
    setup = (rec.asked or rec.result) if rec is not None else None
    w = setup.workload if setup is not None else None
    runtime = getattr(getattr(w, "runtime", None), "value", "") or ""
    # the trainer named, else the runtime ("fix.cpu_moe_ollama": Ollama has no such option)
    trainer = (getattr(w, "framework", None) or runtime) if w is not None else ""
    if trainer:
        key = f"fix.{name}_{trainer.lower().replace('-', '_')}"
        if label(lang, key) != key:
            return label(lang, key, arg=arg)
    if name in WORDED_BY_FORMAT and setup is not None:
        key = f"fix.{name}_{_training_format(setup, getattr(rec, 'headline', None))}"
        if label(lang, key) != key:
            return label(lang, key, arg=arg)
    return label(lang, f"fix.{name}", arg=arg)


# Recipes whose flags follow the format the weights train in: kohya's SDXL full fine-tune
# keeps the U-Net in fp32 unless --full_bf16 (or, on a card without bf16, --full_fp16)
# says otherwise (kohya-ss/sd-scripts docs/train_SDXL-en.md, README "--full_bf16").
# `fix.<name>_fp16` / `_fp32` word it for those formats; bf16 is the plain wording.
WORDED_BY_FORMAT = ("full_unet_only_cached",)


def _training_format(setup, pick) -> str:  # noqa: ANN001
    """The format the recipe trains the weights in: the one asked, else 16 bits (the
    recipe's --full_bf16; kohya's own fp32 default, assumed, is what the recipe changes),
    bf16 being the fp16 it runs in on a card without it (render.workload_facts)."""
    from advisor.catalog import lacks_bf16

    asked = setup.workload.weights_format
    if asked is None:
        return "fp16" if lacks_bf16(pick) else "bf16"
    return str(asked).lower()


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
