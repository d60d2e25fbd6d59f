"""What is done (inference, LoRA, full fine-tune, pre-training, …) and what kind of work
(image generation, rendering, video, simulation, coursework), from vocab/tasks.toml."""

from __future__ import annotations

import re
from functools import cache

from advisor import catalog
from advisor.models.choices import Kind
from advisor.parse import vocab
from advisor.parse.scan import Reading, Scan


@cache
def _groups(section: str) -> list[tuple[re.Pattern[str], str]]:
    return [
        (re.compile(vocab.alternation(g["zh"] + g["en"])), g["id"])
        for g in vocab.load("tasks")[section]
    ]


@cache
def _any_group(section: str) -> re.Pattern[str]:
    """Every word of every group in one pattern: it finds nothing exactly when no group's
    pattern does (each matches where one of its words does), so a line naming no mode or
    kind, most lines, costs one scan instead of one per group."""
    return re.compile(
        vocab.alternation([w for g in vocab.load("tasks")[section] for w in g["zh"] + g["en"]])
    )


@cache
def _not_mode() -> re.Pattern[str]:
    return re.compile(vocab.alternation(vocab.load("tasks")["not_mode"]["words"]))


@cache
def _hardware_words() -> re.Pattern[str]:
    return re.compile(vocab.alternation(vocab.load("tasks")["hardware_words"]["words"]), re.I)


@cache
def _cpu_model() -> re.Pattern[str]:
    prefixes = vocab.alternation(vocab.load("tasks")["cpu_models"]["prefixes"])
    return re.compile(rf"{prefixes.replace('(?![a-z0-9])', '')}[\s\-]*\d{{3,5}}[a-z]{{0,3}}\b")


@cache
def _no_adapter() -> re.Pattern[str]:
    return re.compile(vocab.alternation(vocab.load("tasks")["no_adapter"]["words"]))


def recognize_no_adapter(s: Scan, r: Reading) -> None:
    """ "SFT without peft", "不用lora 全量": a full fine-tune, read before the stack and the
    modes would take "peft" as a library and "lora" as LoRA. Without a training word ("7b
    inference, no lora") it says only that no adapter is trained: read, no mode set."""
    if not s.take_all(_no_adapter()):
        return
    training = ("finetune", "full", "train", "pretrain", *POST_TRAINING)
    if any(p.search(s.text) for p, mode in _groups("mode") if mode in training):
        r.modes.append("full")
        r.mode = r.mode or "full"


@cache
def _finetune_short() -> re.Pattern[str]:
    short = vocab.load("tasks")["finetune_short"]
    not_after = "".join(map(re.escape, short["not_after"]))
    return re.compile(rf"(?<![{not_after}])" + vocab.alternation(short["words"]))


# Preference / RL methods (models.Mode): read beside the policy's own recipe word.
POST_TRAINING = ("grpo", "ppo", "dpo", "kto", "orpo", "simpo", "rloo")


# "with full 128k context", "full 32768 tokens": "full" before a length is the whole context
# window, not a full fine-tune (an inference question was sized as training, ~30x too much).
_FULL = re.compile(r"(?<![a-z0-9])full(?![a-z0-9])", re.I)
_LENGTH_AFTER = re.compile(
    r"[\s\-]*\d+(?:\.\d+)?\s*(?:k(?![a-z0-9])|(?:tokens?|context|ctx)\b)", re.I
)


def recognize_mode(s: Scan, r: Reading) -> None:
    s.take_all(_not_mode())
    while s.take_if(_FULL, lambda m: _LENGTH_AFTER.match(s.original, m.end()))[0]:
        pass  # the length itself was read as the context already
    for pattern, mode in _groups("mode") if _any_group("mode").search(s.text) else ():
        if s.take_all(pattern):
            r.modes.append(mode)
            if mode in POST_TRAINING:  # the method; the policy's recipe is the mode word
                r.post_training = r.post_training or mode
                continue
            r.mode = r.mode or ("full" if mode == "train" else mode)
    # "调Baichuan 13B": short for 微调, before a Latin name (already read, so the line as typed)
    m, _ = s.take_if(
        _finetune_short(), lambda m: re.match(r"\s*[a-z]", s.original[m.end() :], re.I)
    )
    if m is not None:
        r.modes.append("finetune")
        r.mode = r.mode or "finetune"


def recognize_kind(s: Scan, r: Reading) -> None:
    s.take_all(_hardware_words())
    s.take_all(_cpu_model())
    for pattern, kind in _groups("kind") if _any_group("kind").search(s.text) else ():
        if s.take_all(pattern):
            r.kind = r.kind or Kind(kind)


@cache
def _ask_fit() -> re.Pattern[str]:
    table = vocab.load("words")["ask_fit"]
    return re.compile(vocab.alternation(table["words"]) + "|" + table["spoken"])


def recognize_ask_fit(s: Scan, r: Reading) -> None:
    """ "4090 能跑什么模型", "what's the biggest model I can run on a 3090"."""
    if s.take(_ask_fit()):
        r.ask_fit = True


def _two_models(r: Reading, text: str, second: str) -> tuple[str, str] | None:
    """The first model's words and the second's: the line split at the last joining word
    between the two names."""
    other_spec = catalog.find_model(second)
    if r.spec is None or other_spec is None:
        return None
    low = text.lower()
    first, other = _name_at(low, r.spec.family), _name_at(low, other_spec.family)
    if first < 0 or other < 0:
        return None
    a, b = sorted((first, other))
    # "run wan video generation and train flux lora", "generate images with flux and lora
    # fine-tune qwen": the words after the last joining word between the two names are the
    # later name's job, the words before it the earlier name's (a verb may come first)
    joins = list(_JOIN.finditer(low, a, b))
    cut = joins[-1].start() if joins else _verb_before(low, a, b)
    earlier, later = low[:cut], low[cut:]
    return (earlier, later) if first < other else (later, earlier)


def _name_at(low: str, family: str) -> int:
    """Where a family's name starts a word: "sd" is SDXL's in "sdxl lora", not the "sd" of
    "15k usd" (which put SDXL before Llama and swapped the two models' tasks); -1: absent."""
    m = re.search(rf"(?<![a-z0-9]){re.escape(family.lower())}", low)
    return m.start() if m else -1


# Joining words, and the words that order two jobs ("…给20人用 再训练 sdxl lora", "serve
# llama to 20 users then train sdxl lora"): without them the line was cut at the later name
# and its training word went to the earlier model.
_JOIN = re.compile(
    r"\b(?:and|plus|then|also|as well as|after that)\b"
    r"|和|与|及|以及|还有|再|然后|接着|之后|另外|同时|并且|顺便|[,，+;；、]"
)


def _verb_before(low: str, a: int, b: int) -> int:
    """With no joining word between the names, a task word written just before the later
    name is that one's ("部署 llama-3.3-70b 给20人用 训练 sdxl lora"): the cut is where it
    starts; else at the later name."""
    starts = [
        m.start()
        for p, _mode in _groups("mode")
        for m in p.finditer(low, a, b)
        if not low[m.end() : b].strip(" -_")
    ]
    return min(starts) if starts else b


def _runs(words: str) -> bool:
    """An inference word, or a generation word ("视频生成", "image generation": a diffusion
    model generating runs it), with no training word."""
    modes = [mode for p, mode in _groups("mode") if p.search(words)]
    generates = any(p.search(words) for p, kind in _groups("kind") if kind == "diffusion")
    return ("inference" in modes or generates) and all(m == "inference" for m in modes)


def first_model_task(r: Reading, text: str, second: str) -> None:
    """ "whisper转录和yolo训练", "whisper transcription and yolo training", "wan2.1 视频生成和
    flux lora训练": two models, each with its own task word. The first model keeps the
    inference (or generation) word written after it, up to the second model's name; the
    training word beside the second model is that one's."""
    if r.mode in (None, "inference"):
        return
    parts = _two_models(r, text, second)
    if parts is not None and _runs(parts[0]):
        r.mode = "inference"


def second_model_task(r: Reading, text: str, second: str) -> str | None:
    """The second model's own task (a Mode value) from the words after its name: a
    generation word runs it, a training word trains it ("微调" / "训练" read as LoRA, as a
    purchase's jobs read them: parse/jobs.py read_jobs); None: no word of its own."""
    parts = _two_models(r, text, second)
    if parts is None:
        return None
    if _runs(parts[1]):
        return "inference"
    for pattern, mode in _groups("mode"):
        if mode not in POST_TRAINING and mode != "inference" and pattern.search(parts[1]):
            return "lora" if mode in ("train", "finetune") else mode
    return None
