"""What the recognizers found -> a validated Workload, with what was assumed and ignored.

A leftover word that looks like a model is an unknown model (with "did you mean"), never an
ignored word; everything else left over is listed in `ignored`.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

from advisor import catalog
from advisor.models.choices import Kind, Mode, Offload
from advisor.models.workload import Workload
from advisor.parse import vocab
from advisor.parse.apple_machines import without_mac_names
from advisor.parse.backbone_depth import pick_depth
from advisor.parse.data_size import place_data
from advisor.parse.jobs import read_jobs
from advisor.parse.names import family_model
from advisor.parse.platform import platform_runtime, vague_quant_runtime
from advisor.parse.question import decide_kind
from advisor.parse.scan import Budget, ParseError, Reading, Scan, reject
from advisor.parse.similar_names import longer_context_siblings, suggest
from advisor.parse.stack import framework_of
from advisor.parse.tasks import first_model_task, second_model_task
from advisor.parse.training_mode import (
    four_bit_mode,
    fp32_only_training,
    implied_mode,
    lora_loaded,
    post_training_mode,
    resolve_finetune,
    unsloth_dtype,
)


class ParsedQuery(BaseModel):
    workload: Workload | None = None
    gpu_id: str | None = None
    gpu_count: int | None = None
    vram_gib: float | None = None  # a bare memory size ("我只有 12g 显存"): a card with that much
    budget: Budget | None = None
    # "每天大概用8小时", "8h a day": how many hours a day the cards would be busy, the
    # utilisation a buy-or-rent verdict uses (kinds/purchase.py) instead of its default
    hours_per_day: float | None = None
    ask_count: bool = False  # "需要几张 H100", "how many A100s": the count is the question
    # "要开offload吗", "do I need offload": whether to offload is the question; the answer
    # gives the figure without offload beside the one with it (recommend/offload_question.py)
    ask_offload: bool = False
    understood: list[str] = []
    ignored: list[str] = []
    assumed: list[str] = []
    error: ParseError | None = None
    # "4090 能跑什么模型": no model, a card: the bot answers with the card's /fit list
    ask_fit: bool = False
    owns_card: bool = False  # "my T4", "我的 3090": the card named is the user's own
    laptops: int | None = None  # "2x 4090 laptop": so many laptops, judged for one (cards.py)
    # "olmo2:7b", "falcon3 10b": a name the catalog lacks, typed with a size. The workload is
    # a generic model of that size; this says so (code "unknown_model", the name as typed),
    # the answer states it and the bot searches the Hub for the name (its suggestions).
    unrecognized: ParseError | None = None
    # "华为 Ascend 310P", "Arc A770": a card named that the catalog lacks, as typed. The answer
    # says so first (rentals follow) and asks for its memory size to size for it.
    unknown_card: str | None = None
    # "mask2former swin-b": a model read ("swin-b") beside a leftover word shaped like a model
    # name ("mask2former", letters around digits), as typed. The figures are for the model
    # read, which may be only a part of the one asked: the answer says so first.
    unread_name: str | None = None
    # "mask rcnn R101-FPN": a backbone depth the catalog has no entry of for the model read
    # (parse/backbone_depth.py), as "R101": the answer says first the figures are another depth's
    unread_depth: str | None = None
    # "3090或4090 跑 qwen2.5-14b", "a100 vs h100": more cards named as alternatives, each
    # (catalog id, count or None for the first card's). The first is the setup judged; the
    # answer gives each of these its own line, so no card the user named is dropped.
    other_cards: list[tuple[str, int | None]] = []
    # What kind of question it is (advisor/parse/question.py KINDS): `fit` is a workload's
    # needs (today's answers); the others are answered by advisor/kinds/<kind>.py. A
    # capability, purchase, comparison or out-of-scope line may come without a workload.
    question_kind: str = "fit"
    # The cue words read (parse/question.py, vocab kinds.toml): "card_only" (a card for a
    # PC the asker has), "rent" (buy or rent), "serve", "train_time" …, sorted
    cues: list[str] = []
    # "32b推理和7b lora微调", "32b inference + 7b lora": a purchase naming several jobs, each a
    # size with its own task word beside it, as (billions of parameters, Mode value), in the
    # order written; empty where the line names one job (its workload is then the job)
    jobs: list[tuple[float, str]] = []
    # "wan2.1 14b 视频生成和flux lora训练": a purchase naming a second model with its own task,
    # as (catalog id, Mode value or None: no task word of its own, the line's); the workload
    # is the first model's job
    second_job: tuple[str, str | None] | None = None
    # "… 和 sdxl lora 训练 和 yolov8 训练": the third and later models with their own tasks,
    # each sized beside the first two
    more_jobs: list[tuple[str, str | None]] = []

    @property
    def ok(self) -> bool:
        return self.error is None and self.workload is not None


# A leftover word shaped like a name with a size ("lama3-8b", "mistrel-7b"): a misspelt model
_NAME_WITH_SIZE = re.compile(r"[a-z][a-z0-9.\-_]*[\-_.]?\d+(?:\.\d+)?b")
_CJK = re.compile(r"[\u4e00-\u9fff]")
_NO_MODEL_KINDS = (Kind.rendering, Kind.video, Kind.simulation, Kind.classic)


def leftovers(s: Scan) -> list[str]:
    words = [t for t in re.split(r"[\s,，。;；、:：!！?？()（）·+]+", s.text) if t]
    out = []
    for word in words:
        if word in vocab.stopwords():
            continue
        if _CJK.search(word):  # Chinese has no spaces: drop filler inside the run
            word = vocab.cjk_filler().sub("", word)
        if re.search(r"\w", word):
            out.append(word)
    return out


def check_unknown_model(r: Reading, ignored: list[str]) -> None:
    if r.spec is not None:
        return
    for word in ignored:
        named = word.startswith(vocab.model_prefixes()) and len(word) >= 3
        if (named and (r.params_b is None or re.search(r"\d", word))) or _NAME_WITH_SIZE.fullmatch(
            word
        ):
            raise reject("unknown_model", word, suggest(word, size_b=r.params_b))


# A name-shaped token: letters joined to a digit or by "-", "_", "." ("kolors-3",
# "pixart-omega", "step-video-t2v", "hidream2")
_NAME_TOKEN = re.compile(r"(?=.*[a-z]{2})[a-z0-9]+(?:[\-_.][a-z0-9]+)+|[a-z]{2,}\d[a-z0-9]*")


def _unread_model(ignored: list[str], text: str) -> str | None:
    """The token of the line a name-shaped leftover was cut from ("step-" from
    "step-video-t2v", its "video" and "t2v" read as task words); None when none."""
    _vendors, card_model = vocab.card_vendors()
    tokens = [t.strip(".-_") for t in re.split(r"[^a-z0-9.\-_]+", text.lower())]
    for word in ignored:
        if not word.isascii() or card_model.match(word):
            continue
        whole = next((t for t in tokens if word.strip(".-_") and word.strip(".-_") in t), word)
        if _NAME_TOKEN.fullmatch(whole) and not card_model.match(whole):
            return whole
    return None


def pick_model(r: Reading, assumed: list[str], ignored: list[str], text: str) -> None:
    """No model named: an image task means SDXL, coursework a small CNN; else an error. A
    name the catalog lacks is said unknown, never answered as the default model (Step-Video-
    T2V was answered as SDXL)."""
    if r.spec is not None or r.params_b is not None or r.kind in _NO_MODEL_KINDS[:3]:
        return
    if r.kind in (Kind.diffusion, Kind.classic) and (name := _unread_model(ignored, text)):
        raise reject("unknown_model", name, suggest(name))
    if r.kind == Kind.diffusion:
        r.spec = catalog.find_model("sdxl")
        assumed.append("model = sdxl")
    elif r.kind == Kind.classic:
        r.spec = catalog.find_model("small-cnn")
        assumed.append("model = small-cnn")
    else:
        raise reject("no_model")


def _notes(ignored: list[str], assumed: list[str], r: Reading) -> list[str]:
    """Leftovers that deserve a note rather than "ignored": "cpu" (the bot sizes GPUs) and a
    second model ("A vs B", "A 和 B 对比"): the one read is answered, the other asked on its
    own."""
    notes = vocab.load("words")["notes"]
    cpu, compare = set(notes["cpu"]), set(notes["compare"])
    out: list[str] = []
    for word in ignored:
        if word in cpu:
            assumed.append("cpu_only = cpu")
            continue
        if r.spec is not None and catalog.normalize_name(word) == r.spec.family:
            continue  # "whisper medium 用官方whisper": the family named again, the same model
        second = catalog.find_model(word) if r.spec is not None else None
        if second is None and "compare" in r.cues and (size := _nominal_size(r)):
            second = family_model(word, size)  # "qwen vs llama 14b": Qwen at 14B
        if second is not None and (r.spec is None or second.id != r.spec.id):
            assumed.append(f"second_model = {second.name}")
            continue
        out.append(word)
    if len(out) < len(ignored) and any(a.startswith("second_model") for a in assumed):
        out = [w for w in out if w not in compare]
    return out


def _nominal_size(r: Reading) -> float | None:
    """The size a line names its model by ("llama-3.1-8b": 8, not its 8.03 B parameters)."""
    if r.spec is None:
        return r.params_b
    m = re.search(r"(\d+(?:\.\d+)?)b(?![a-z])", r.spec.id)
    return float(m.group(1)) if m else None


def workload_fields(r: Reading, assumed: list[str], ignored: list[str]) -> dict[str, Any]:
    fields = dict(r.fields)
    kind = r.kind
    if r.spec is not None:
        fields["model"] = r.spec.id
        kind = r.spec.kind
    elif r.params_b is not None:
        fields["params_b"] = r.params_b
    if kind is not None:
        fields["kind"] = kind
    mode = r.mode or implied_mode(fields, assumed)
    if r.post_training is not None and kind in (None, Kind.llm):
        mode = post_training_mode(r, fields, assumed)
    if mode == "finetune":
        # "需要多少节点 / 几张卡": the count is the question, so "does not fit one card" is no
        # reason for QLoRA (LLaMA-Factory #4297)
        mode = resolve_finetune(
            fields,
            kind,
            r.spec.family if r.spec else None,
            r.spec.params_b if r.spec else r.params_b,
            None if r.ask_count else r.gpu_id,
            None if r.ask_count else r.vram_gib,
            r.gpu_count,
            assumed,
        )
    if mode is None:
        served = vocab.load("tasks")["default_inference"]["id_prefixes"]
        trained = kind == Kind.classic and not (r.spec and r.spec.id.startswith(tuple(served)))
        mode = "full" if trained else "inference"
        assumed.append("mode = full (training)" if mode == "full" else "mode = inference")
    mode = lora_loaded(mode, fields, kind, r, assumed)
    mode = four_bit_mode(mode, fields, assumed)
    family = r.spec.family if r.spec else None
    served = "serve" in r.cues or (fields.get("concurrency") or 0) > 1
    vague_quant_runtime(fields, kind, family, mode, served, assumed)
    platform_runtime(fields, r.gpu_id, kind, family, mode, assumed)
    _gguf_default(fields, r, mode, assumed)
    _gguf_type(fields, assumed)
    fields["mode"] = Mode(mode)
    if fields["mode"] == Mode.inference and fields.get("cpu_offload") == Offload.optimizer:
        # a bare "offload" on an inference job: there is no optimizer to move ("can it fully
        # offload?" in llama.cpp's words asks whether every layer goes on the GPU, -ngl)
        del fields["cpu_offload"]
    unsloth_dtype(fields, r.gpu_id, assumed)
    fp32_only_training(fields, r.gpu_id, assumed)
    _place_context(fields, r, assumed)
    place_data(fields, assumed, ignored)
    if fields.get("runtime") and "framework" not in fields:
        # a runtime read from a tag, repo or quant ("gemma3:12b", "mlx-community/…")
        fields["framework"] = framework_of(fields["runtime"])
    if r.gpu_count and r.gpu_count > 1:
        fields["num_gpus"] = r.gpu_count
    if fields.get("concurrency") and fields["mode"] == Mode.inference:
        # Until every runtime model reads `concurrency`, concurrent requests size the KV cache
        # as a batch does (one sequence each).
        fields.setdefault("batch_size", fields["concurrency"])
    return fields


def _gguf_type(fields: dict[str, Any], assumed: list[str]) -> None:
    """A GGUF runtime asked to run a format GGUF files do not have ("fp8 ollama", "int8
    llama.cpp", AWQ, GPTQ, nf4: formats of the Linear layers only, formats.toml scope
    "linear"): it was sized as that format, for a file llama.cpp cannot load. The GGUF type
    of the same width instead (Q8_0; Q4_K_M, Ollama's default 4-bit), said as an assumption.
    (Q8_0 stores 8.5 bits per weight and the whole file: more than an 8-bit linear format.)"""
    fmt = catalog.find_format(str(fields.get("weights_format") or ""))
    if fmt is None or fmt.scope != "linear":
        return
    if fields.get("runtime") not in vocab.load("runtimes")["gguf_runtimes"]:
        return
    gguf = "q8_0" if fmt.bits >= 7 else "q4_k_m"
    fields["weights_format"] = gguf
    assumed.append(f"gguf_type = {fmt.id.upper()} → {gguf.upper()}")


def _gguf_default(fields: dict[str, Any], r: Reading, mode: str, assumed: list[str]) -> None:
    """A GGUF repo with no quant type, or a GGUF runtime (Ollama, LM Studio, llama.cpp)
    serving a model written HF-style with no format: the default download, Q4_K_M (the
    Ollama library's default tag; LM Studio's staff pick), unless the model's library page
    says otherwise (vocab/ollama.toml format_of). A type the user names is kept."""
    if "weights_format" in fields or mode != "inference":
        return
    runtimes = vocab.load("runtimes")["gguf_runtimes"]
    if not (r.gguf_repo or fields.get("runtime") in runtimes):
        return
    if r.spec is not None and r.spec.kind != Kind.llm:
        return
    table = vocab.load("ollama")
    spec_id = r.spec.id if r.spec else ""
    fmt = next(
        (v for k, v in table["format_of"].items() if spec_id.startswith(k)),
        table["default_format"],
    )
    fields["weights_format"] = fmt
    assumed.append(f"{'gguf_quant' if r.gguf_repo else 'gguf_runtime'} = {fmt.upper()}")


def _place_context(fields: dict[str, Any], r: Reading, assumed: list[str]) -> None:
    ctx = fields.pop("_ctx", None)
    if ctx is None:
        return
    if not 1 <= ctx <= 10_000_000:
        raise reject("bad_value", "context_tokens")
    spec = r.spec
    if spec is not None and spec.arch is not None and ctx > spec.arch.max_context_tokens:
        longer = longer_context_siblings(spec, ctx)
        if not longer:
            raise reject("context_too_long", str(spec.arch.max_context_tokens), longer)
        # "llama3-70b 32k": answered at the model's own limit, with the sibling that takes
        # the context asked named beside it (a refusal answered nothing)
        assumed.append(
            f"context_capped = {ctx} {spec.arch.max_context_tokens} {spec.name} {','.join(longer)}"
        )
        ctx = spec.arch.max_context_tokens
    fields["seq_len" if fields["mode"].is_training else "context_tokens"] = ctx


# Kinds answered without a workload when the line names no model ("4090还是3090", "8万配一台").
# Such a line still carries the "no_model" error, so a caller that knows only workloads
# answers it as before ("which model?"); advisor/kinds answers it by its kind first.
_WORKLOAD_OPTIONAL = ("capability", "purchase", "compare", "out_of_scope")


def _without_workload(s: Scan, r: Reading, kind: str, ignored: list[str]) -> ParsedQuery:
    """A kind answered without a workload (_WORKLOAD_OPTIONAL) on a line that names no
    model: the card, the budget and the words read; "which model?" unless it asks what a
    named card runs."""
    has_card = r.gpu_id is not None or r.vram_gib is not None
    return ParsedQuery(
        gpu_id=r.gpu_id,
        gpu_count=r.gpu_count,
        vram_gib=r.vram_gib if r.gpu_id is None else None,  # "biggest model on 24G"
        budget=r.budget,
        hours_per_day=r.hours_per_day,
        understood=list(s.understood),
        ignored=ignored[:20],
        ask_fit=kind == "capability",
        owns_card=r.owns_card and (r.gpu_id is not None or r.vram_gib is not None),
        # "arc a770 16g 能跑什么": the card the memory belongs to is named, not replaced
        unknown_card=_unknown_card(r, ignored),
        other_cards=[(g, n) for g, n in r.other_cards if g != r.gpu_id],
        question_kind=kind,
        cues=sorted(r.cues),
        error=None if kind == "capability" and has_card else ParseError(code="no_model"),
    )


def assemble(s: Scan, r: Reading) -> ParsedQuery:
    ignored = without_mac_names(leftovers(s), r.gpu_id)
    kind = decide_kind(r, s.understood, unread=bool(ignored) and card_name_in(ignored) is None)
    if kind == "out_of_scope":
        check_unknown_model(r, ignored)  # "qwen2.8": a misspelt model, not small talk
    if kind in _WORKLOAD_OPTIONAL and r.spec is None and r.params_b is None:
        return _without_workload(s, r, kind, ignored)
    assumed = list(r.assumed)
    ignored = _notes(ignored, assumed, r)
    second_job, more_jobs = None, []
    seconds = [a.split(" = ", 1)[1] for a in assumed if a.startswith("second_model = ")]
    if seconds:
        first_model_task(r, s.original, seconds[0])
        second_job = _second_job(r, s.original, seconds[0], kind)
        more_jobs = [j for n in seconds[1:] if (j := _second_job(r, s.original, n, kind))]
    if kind == "fit" and "compare" in r.cues and any(a.startswith("second_model") for a in assumed):
        kind = "compare"  # "qwen vs llama 14b": the second model is read by _notes
    check_unknown_model(r, ignored)
    understood = list(s.understood)
    pick_model(r, assumed, ignored, s.original)
    depth, ignored = pick_depth(r, s.original, ignored)
    fields = workload_fields(r, assumed, ignored)
    if kind == "serve" and Mode(fields.get("mode", Mode.inference)).is_training:
        kind = _training_not_served(fields, assumed)
    return ParsedQuery(
        workload=Workload(**fields),
        gpu_id=r.gpu_id,
        gpu_count=r.gpu_count,
        vram_gib=r.vram_gib,
        budget=r.budget,
        hours_per_day=r.hours_per_day,
        ask_count=r.ask_count,
        ask_offload=r.ask_offload,
        owns_card=r.owns_card and (r.gpu_id is not None or r.vram_gib is not None),
        laptops=r.laptops,
        understood=understood,
        ignored=ignored[:20],
        assumed=assumed,
        unrecognized=_unrecognized(r),
        unknown_card=_unknown_card(r, ignored),
        unread_name=unread_name(ignored),
        unread_depth=depth,
        other_cards=[(g, n) for g, n in r.other_cards if g != r.gpu_id],
        question_kind=kind,
        cues=sorted(r.cues),
        jobs=read_jobs(s.original) if kind == "purchase" else [],
        second_job=second_job,
        more_jobs=more_jobs if second_job else [],
    )


def _second_job(r: Reading, text: str, name: str, kind: str) -> tuple[str, str | None] | None:
    """A purchase's second model and its own task word's Mode value (None: none of its own)."""
    spec = catalog.find_model(name)
    if kind != "purchase" or spec is None:
        return None
    mode = second_model_task(r, text, name)
    if mode == "lora" and spec.kind not in (Kind.llm, Kind.diffusion):
        mode = "full"  # "yolo训练": a vision model is trained whole
    return spec.id, mode


# A leftover shaped like a model name: letters, digits, letters ("mask2former", "yolo12x"),
# or a vision architecture's name ending ("oneformer", "maskformer", "segnet", "cascadercnn"),
# the plain words excepted ("transformer": HF transformers); never a card's model word ("5060ti" begins with its digits)
_MODEL_SHAPED = re.compile(
    r"[a-z]{2,}[\-_.]?\d+(?:\.\d+)?[\-_.]?[a-z]{2,}[a-z0-9\-_.]*"
    r"|(?!(?:transformers?|internet)$)[a-z][a-z\-_]{2,}(?:former|net|rcnn)(?:[\-_.]?[a-z0-9]+)?"
)


def unread_name(ignored: list[str]) -> str | None:
    """The first leftover word shaped like a model name, when a model was read beside it."""
    _vendors, card_model = vocab.card_vendors()
    for word in ignored:
        if _MODEL_SHAPED.fullmatch(word) and not card_model.match(word):
            return word
    return None


def _training_not_served(fields: dict, assumed: list[str]) -> str:
    """ "qwen2.5-32b qlora 50人 vllm": a training run serves no one. It was planned as
    serving with a KV cache of 0.0 GiB per sequence (training has no context length, review
    of 2026-12-07); it is the training run's fit, the people said not to apply."""
    served = fields.get("users") or fields.get("concurrency")
    for key in ("users", "users_are_people", "qps", "concurrency"):
        fields.pop(key, None)
    if served:
        assumed.append(f"concurrency_training = {served}")
    return "fit"


def _unknown_card(r: Reading, ignored: list[str]) -> str | None:
    """The longest run of leftover words made of card makers' words and card model words
    ("华为 ascend 310p"), holding at least one of each; None when a card was read (the named
    card is answered) or no such run is left. With a memory size ("RTX 5090Ti 128G") the
    answer is for a card of that memory, and says the name was not known."""
    if r.gpu_id is not None:
        return None
    return r.unknown_machine or card_name_in(ignored)


def card_name_in(ignored: list[str]) -> str | None:
    """The longest run of card makers' and card model words among the leftovers."""
    vendors, model = vocab.card_vendors()
    best: list[str] = []
    run: list[str] = []
    for word in [*ignored, ""]:
        if word and (word in vendors or model.match(word)):
            run.append(word)
            continue
        has_vendor = any(w in vendors for w in run)
        if has_vendor and any(model.match(w) for w in run) and len(run) > len(best):
            best = run
        run = []
    return " ".join(best) or None


def _unrecognized(r: Reading) -> ParseError | None:
    """No catalog suggestions: the name matched no family the catalog knows, so the nearest
    spelling is another family ("olmo2" -> "mobilenet-v2"). The bot adds the Hub's repos."""
    if r.unrecognized is None or r.spec is not None:
        return None
    return ParseError(code="unknown_model", detail=r.unrecognized)
