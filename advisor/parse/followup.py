"""Follow-ups: a message that changes the last question instead of asking a new one.

"换成 int4", "用 4090 呢", "并发改成 8", "what about 2 cards", "batch 16": the same
recognizers read the message; what they found replaces the matching part of the last
question, everything else stays.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from pydantic import ValidationError

from advisor import catalog
from advisor.models.choices import Mode
from advisor.models.workload import Workload
from advisor.parse import MAX_QUERY_CHARS, parse_query, read, vocab
from advisor.parse.assemble import ParsedQuery, leftovers
from advisor.parse.platform import vague_quant_runtime
from advisor.parse.scan import ParseError, Reading, Rejected
from advisor.parse.similar_names import longer_context_siblings
from advisor.parse.stack import framework_of
from advisor.parse.training_mode import four_bit_mode, resolve_finetune

# Fields that only mean something while training: dropped when a follow-up switches to
# inference ("推理呢" after a LoRA question).
_TRAINING_ONLY = (
    "lora_rank",
    "optimizer",
    "train_tokens",
    "gradient_checkpointing",
    "lora_targets",
    "gradient_accumulation",
    "mixed_precision",
)


@cache
def _words() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """(words that ask for a change, words removed before reading)."""
    f = vocab.load("words")["followup"]
    asks = re.compile(vocab.alternation(f["change"] + f["ask"]))
    return asks, re.compile(vocab.alternation(f["change"] + f["drop"]))


@cache
def _size_ask() -> re.Pattern[str]:
    return re.compile(vocab.alternation(vocab.load("words")["followup"]["size_ask"]))


def parse_followup(text: str, last: ParsedQuery) -> ParsedQuery | None:
    """The last question changed by `text`, or None when `text` is not a follow-up (a new
    question, or nothing the parser reads). A follow-up that makes no sense comes back
    with its error (e.g. a context the model lacks)."""
    if not text or not text.strip() or len(text) > MAX_QUERY_CHARS:
        return None  # too long: read as a question, which says so
    if last.workload is None:
        return _capability_followup(text, last) if last.question_kind == "capability" else None
    asks, dropped = _words()
    lowered = text.lower()
    asks_change = bool(asks.search(lowered))
    try:
        s, r = read(dropped.sub(" ", lowered))
    except Rejected:
        return None  # read as a new question, which reports the same error
    names_model = r.spec is not None or r.params_b is not None
    if r.spec is None and r.params_b is not None and _size_ask().search(lowered):
        asks_change = True
    if r.kind is not None or r.ask_fit or r.cues & _NEW_QUESTION_CUES:
        return None  # "画图", "渲染", "能跑什么模型", "你好", "买卡": a new question
    if (names_model and not asks_change) or not s.understood:
        return None
    if r.other_cards and r.mode is not None and not names_model and not asks_change:
        return None  # "4090 和 a100 40g 跑微调": two cards for a task, a question of its own
    try:
        return _merge(last, r, s.understood, leftovers(s))
    except Rejected as exc:
        return ParsedQuery(error=exc.error)
    except ValidationError as exc:
        loc = ".".join(str(p) for p in exc.errors()[0].get("loc", ())) or "query"
        return ParsedQuery(error=ParseError(code="bad_value", detail=loc))


def _capability_followup(text: str, last: ParsedQuery) -> ParsedQuery | None:
    """ "那换成4090呢", "2张呢", "what about a 4090" after "两张3090能跑什么": what the other
    card (or count, or memory size) runs. A model named ("qwen2.5-14b 呢") is that model's
    question on the card asked about; a task alone is a question of its own."""
    try:
        s, r = read(_words()[1].sub(" ", text.lower()))
    except Rejected:
        return None
    if r.spec is not None or r.params_b is not None:
        return _on_the_last_card(text, last, r)
    if r.kind is not None or r.mode is not None:
        return None
    if r.cues & (_NEW_QUESTION_CUES - {"capability"}) or r.other_cards:
        return None
    if r.gpu_id is None and r.vram_gib is None and r.gpu_count is None:
        return None
    gpu_id, vram, count = last.gpu_id, last.vram_gib, last.gpu_count
    if r.gpu_id is not None:
        gpu_id, vram = r.gpu_id, None
    elif r.vram_gib is not None:
        gpu_id, vram = None, r.vram_gib
    if r.gpu_count is not None:
        count = r.gpu_count
    return ParsedQuery(
        gpu_id=gpu_id,
        gpu_count=count,
        vram_gib=vram,
        understood=list(s.understood),
        ignored=leftovers(s),
        ask_fit=True,
        owns_card=last.owns_card and r.gpu_id is None and r.vram_gib is None,
        question_kind="capability",
    )


def _on_the_last_card(text: str, last: ParsedQuery, r: Reading) -> ParsedQuery | None:
    """A model named after a card's capability answer, with no card of its own: the model's
    question on that card (and count)."""
    if r.gpu_id is not None or r.vram_gib is not None or r.other_cards:
        return None  # a card of its own: a new question
    parsed = parse_query(text)
    if not parsed.ok or parsed.question_kind != "fit" or parsed.workload is None:
        return None
    count = r.gpu_count or last.gpu_count
    workload = parsed.workload.model_copy(update={"num_gpus": count or 1})
    return parsed.model_copy(
        update={
            "workload": workload,
            "gpu_id": last.gpu_id,
            "gpu_count": count,
            "vram_gib": last.vram_gib,
            "owns_card": last.owns_card,
        }
    )


def _merge(last: ParsedQuery, r: Reading, understood: list[str], ignored: list[str]) -> ParsedQuery:
    assert last.workload is not None
    w: dict[str, Any] = last.workload.model_dump(exclude_defaults=True)
    assumed = list(r.assumed)
    _swap_model(w, r)
    old_mode = last.workload.mode
    mode = _followup_mode(last, old_mode, w, r, assumed)
    if mode.is_training and not old_mode.is_training:
        _drop_serving(w, assumed)
    if mode.is_training != old_mode.is_training:
        ctx = w.pop("seq_len" if old_mode.is_training else "context_tokens", None)
        if ctx is not None:
            w["seq_len" if mode.is_training else "context_tokens"] = ctx
        if not mode.is_training:
            for key in _TRAINING_ONLY:
                w.pop(key, None)
    if old_mode == Mode.qlora and mode != Mode.qlora and w.get("weights_format") == "nf4":
        w.pop("weights_format")  # NF4 came with QLoRA
    if mode == Mode.qlora and "weights_format" not in r.fields:
        w["weights_format"] = "nf4"
    w["mode"] = mode
    if "concurrency" in r.fields and mode.is_training:
        # concurrent requests size a served model; a training run has none (its knob is the
        # batch size): said, instead of repeating the same answer
        assumed.append(f"concurrency_training = {r.fields.pop('concurrency')}")
    _vague_quant(w, r, mode, last, assumed)
    _apply_fields(w, r, mode, ignored)
    gpu_id, count, vram = last.gpu_id, last.gpu_count, last.vram_gib
    if r.gpu_id is not None:
        gpu_id, vram = r.gpu_id, r.vram_gib
    elif r.vram_gib is not None:
        gpu_id, vram = None, r.vram_gib
    if r.gpu_count is not None:
        count = r.gpu_count
    if count is not None:
        w["num_gpus"] = count
    return ParsedQuery(
        workload=Workload(**w),
        gpu_id=gpu_id,
        gpu_count=count,
        vram_gib=vram,
        budget=r.budget or last.budget,
        understood=understood,
        ignored=ignored,
        assumed=assumed,
        question_kind=_followup_kind(last, r, mode),
    )


def _swap_model(w: dict[str, Any], r: Reading) -> None:
    """A model named in the follow-up replaces the last one; a size alone, the last model's
    sibling of that size, else a bare size."""
    if r.spec is not None:
        for key in ("model", "params_b", "active_params_b", "arch", "kind"):
            w.pop(key, None)
        w["model"], w["kind"] = r.spec.id, r.spec.kind
    elif r.params_b is not None:
        sibling = _sibling_of_size(w.get("model"), r.params_b)
        for key in ("model", "params_b", "active_params_b", "arch"):
            w.pop(key, None)
        if sibling is not None:  # "72b 呢" after qwen2.5-14b: Qwen2.5-72B
            w["model"], w["kind"] = sibling.id, sibling.kind
        else:
            w["params_b"] = r.params_b


def _followup_mode(
    last: ParsedQuery, old_mode: Mode, w: dict[str, Any], r: Reading, assumed: list[str]
) -> Mode:
    """The follow-up's mode: "微调呢" resolved to a recipe as a question of its own would be
    (the same one while already training), then QLoRA where a 4-bit format asks for it."""
    if r.mode == "finetune":
        if old_mode.is_training:  # "微调呢" while already training: the same recipe
            r.mode = old_mode.value
        else:
            model = w.get("model")
            spec = catalog.models().get(model) if model else None
            params_b = spec.params_b if spec else w.get("params_b")
            gpu_id = r.gpu_id or (None if r.vram_gib else last.gpu_id)
            vram = r.vram_gib if r.gpu_id or r.vram_gib else last.vram_gib
            fields = {**w, **r.fields}
            r.mode = resolve_finetune(
                fields,
                w.get("kind"),
                spec.family if spec else None,
                params_b,
                gpu_id,
                vram,
                r.gpu_count or last.gpu_count,
                assumed,
            )
            if "weights_format" in fields:
                r.fields["weights_format"] = fields["weights_format"]
    mode = Mode(r.mode) if r.mode else old_mode
    if "weights_format" in r.fields or (r.mode and old_mode != Mode.qlora):
        fields = {**w, **r.fields}
        mode = Mode(four_bit_mode(mode.value, fields, assumed))
        if fields.get("weights_format") is not None:
            r.fields["weights_format"] = fields["weights_format"]
    return mode


# Cues of a question of its own kind (parse/question.py): never merged into the last one
_NEW_QUESTION_CUES = frozenset({"purchase", "greeting", "capability", "compare"})


# What only a served model has: the people, the concurrent requests and the serving engine
# with its batch. A training run of the same model has none of them.
_SERVING_ONLY = ("users", "users_are_people", "qps", "concurrency", "batch_size", "runtime")


def _drop_serving(w: dict[str, Any], assumed: list[str]) -> None:
    """ "微调呢" after a plan serving 50 people: the model fine-tuned, not a training run
    carrying the plan's 50 users and vLLM (that merge was answered as a serving plan with a
    KV cache of 0.0 GiB per sequence, review of 2026-12-07)."""
    users = w.get("users") or w.get("concurrency")
    if users is None:
        return
    for key in _SERVING_ONLY:
        w.pop(key, None)
    if w.get("framework") is not None:
        w.pop("framework")
    assumed.append(f"serving_to_training = {users}")


def _vague_quant(
    w: dict[str, Any], r: Reading, mode: Mode, last: ParsedQuery, assumed: list[str]
) -> None:
    """ "量化呢" after a question: the 4-bit file of the runtime the conversation implies, as
    a new question reads it (parse/platform.py vague_quant_runtime): a runtime named before
    is kept; a serving plan before is served."""
    merged = {**w, **r.fields}
    served = "serve" in r.cues or last.question_kind == "serve"
    served = served or (merged.get("concurrency") or 0) > 1
    spec = catalog.models().get(str(merged.get("model") or ""))
    family = spec.family if spec else None
    vague_quant_runtime(merged, merged.get("kind"), family, mode.value, served, assumed)
    for key in ("weights_format", "runtime"):
        if key in merged and merged[key] != w.get(key):
            r.fields[key] = merged[key]


def _followup_kind(last: ParsedQuery, r: Reading, mode: Mode) -> str:
    """ "要多久" after a training question asks its time; "30 个人用呢" its serving; any other
    change keeps the last question's kind. A training run is never a serving plan."""
    for kind in ("train_time", "serve"):
        if kind in r.cues and not (kind == "serve" and mode.is_training):
            return kind
    kept = last.question_kind if last.question_kind in ("fit", "train_time", "serve") else "fit"
    return "fit" if kept == "serve" and mode.is_training else kept


def _sibling_of_size(model_id: str | None, params_b: float) -> catalog.ModelSpec | None:
    """The same model line at another size: qwen2.5-14b + 72b -> qwen2.5-72b."""
    if not model_id or not re.search(r"\d+(?:\.\d+)?b(?![a-z])", model_id):
        return None
    return catalog.find_model(
        re.sub(r"\d+(?:\.\d+)?b(?![a-z])", f"{params_b:g}b", model_id, count=1)
    )


def _apply_fields(w: dict[str, Any], r: Reading, mode: Mode, ignored: list[str]) -> None:
    fields = dict(r.fields)
    ctx = fields.pop("_ctx", None)
    if ctx is not None:
        model = w.get("model")
        spec = catalog.models().get(model) if model else None
        if spec is not None and spec.arch is not None and ctx > spec.arch.max_context_tokens:
            raise Rejected(
                ParseError(
                    code="context_too_long",
                    detail=str(spec.arch.max_context_tokens),
                    suggestions=longer_context_siblings(spec, ctx),
                )
            )
        w["seq_len" if mode.is_training else "context_tokens"] = ctx
    tokens, epochs = fields.pop("_tokens", None), fields.pop("_epochs", None)
    fields.pop("_samples", None)
    if tokens is not None and mode.is_training:
        w["train_tokens"] = int(tokens * (epochs or 1))
    elif epochs is not None:
        ignored.append("epochs without a data size")
    if fields.get("runtime") and "framework" not in fields:
        fields["framework"] = framework_of(fields["runtime"])
    if "concurrency" in fields and mode == Mode.inference and "batch_size" not in fields:
        fields["batch_size"] = fields["concurrency"]  # as a new question reads it
    w.update(fields)


def fields_named(text: str) -> set[str] | ParseError:
    """Which question fields a short text sets on its own ("awq" -> weights_format, "32k" ->
    context_tokens and seq_len, "qwen2.5-7b" -> model): lets a guided conversation file a
    typed answer under the step it answers. A text the parser rejects returns its error."""
    try:
        s, r = read(text)
    except Rejected as exc:
        return exc.error
    named = {k for k in r.fields if not k.startswith("_")}
    if "_ctx" in r.fields:
        named |= {"context_tokens", "seq_len"}
    if {"_tokens", "_samples"} & set(r.fields):
        named.add("train_tokens")
    if "_epochs" in r.fields:
        named.add("epochs")
    if r.spec is not None or r.params_b is not None:
        named.add("model")
    if r.budget is not None:
        named.add("budget")
    if r.mode is not None:
        named.add("mode")
    return named
