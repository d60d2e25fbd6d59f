"""Runtimes (vLLM, Ollama, llama.cpp, …), training stacks (LLaMA-Factory, Unsloth, …),
parallelism (ZeRO-1/2/3, FSDP, TP), CPU offload, mixed vs pure 16-bit, and concurrency."""

from __future__ import annotations

import re
from functools import cache

from advisor import catalog
from advisor.models.choices import Offload, Parallelism
from advisor.parse import vocab
from advisor.parse.scan import Reading, Scan, reject


@cache
def _runtime_table() -> tuple[re.Pattern[str], dict[str, tuple[str, str]]]:
    table = vocab.load("runtimes")["runtime"]
    lookup = {
        vocab.squash(w): (rid, spec["framework"])
        for rid, spec in table.items()
        for w in spec["words"]
    }
    words = [w for spec in table.values() for w in spec["words"]]
    return re.compile(vocab.alternation(words)), lookup


def framework_of(runtime: str) -> str:
    """The framework name the engine keys on for a runtime (vocab/runtimes.toml)."""
    return vocab.load("runtimes")["runtime"][runtime]["framework"]


def recognize_runtime(s: Scan, r: Reading) -> None:
    pattern, lookup = _runtime_table()
    for m in s.take_all(pattern):
        runtime, framework = lookup[vocab.squash(m.group(0))]
        r.fields.setdefault("runtime", runtime)
        r.fields.setdefault("framework", framework)


# The diffusers examples' trainers by their script names (examples/dreambooth/
# train_dreambooth_lora_flux.py, train_dreambooth_lora_sdxl.py, examples/text_to_image/
# train_text_to_image_lora_sdxl.py ..., read 2026-12-07): the program is diffusers, "lora" in
# the name is the mode, and the model's word at the end is left for the names to read.
_DIFFUSERS_SCRIPT = re.compile(
    r"(?<![a-z0-9])(train_(?:dreambooth|text_to_image)_)(?:(lora)(_))?([a-z0-9.\-]*?)(\.py)?"
    r"(?![a-z0-9_.])",
    re.I,
)


def recognize_trainer_script(s: Scan, r: Reading) -> None:
    """ "train_dreambooth_lora_flux": diffusers' own trainer, its LoRA, and the FLUX word."""
    m = _DIFFUSERS_SCRIPT.search(s.text)
    if m is None:
        return
    for group in (1, 3, 5):  # the script's own words; "lora" and the model stay to be read
        if m.group(group):
            s._consume(m, m.span(group))
    runtime, framework = _runtime_table()[1]["diffusers"]
    r.fields.setdefault("runtime", runtime)
    r.fields.setdefault("framework", framework)


# kohya sd-scripts' trainers by their script names (sdxl_train.py, sdxl_train_network.py,
# flux_train_network.py, sd3_train.py, train_network.py; its README and docs/, read
# 2026-12-07): the program is kohya, "_network" trains a LoRA and the others the whole
# denoiser, and the model's word in front is left for the names to read. A bare "train" or
# "train.py" is anyone's script: not read.
_KOHYA_SCRIPT = re.compile(
    r"(?<![a-z0-9])(?:(sdxl|flux|sd3|lumina)(_train(?:_network)?(?:\.py)?)|(train_network(?:\.py)?))"
    r"(?![a-z0-9_.])",
    re.I,
)


def recognize_kohya_script(s: Scan, r: Reading) -> None:
    """ "sdxl_train.py": kohya's full fine-tune of SDXL; "train_network.py": its LoRA."""
    m = _KOHYA_SCRIPT.search(s.text)
    if m is None:
        return
    group = 2 if m.group(2) else 3
    s._consume(m, m.span(group))
    mode = "lora" if "network" in m.group(group).lower() else "full"
    r.modes.append(mode)
    r.mode = r.mode or mode
    r.fields.setdefault("framework", vocab.load("runtimes")["stack"]["kohya"])


def recognize_platform_words(s: Scan, r: Reading) -> None:
    """ "rocm", "metal": read when the card named is that vendor's (the answer is on its
    stack already), else left over."""
    gpu = catalog.gpus().get(r.gpu_id or "")
    words = vocab.load("runtimes")["platform_words"].get(gpu.vendor if gpu else "")
    if words:
        s.take_all(vocab.alternation(words))


@cache
def _speech_table() -> tuple[re.Pattern[str], dict[str, str]]:
    table = vocab.load("runtimes")["speech_stack"]
    before, after, words = table["before_whisper"], table["after_whisper"], table["words"]
    pattern = "|".join(
        [rf"(?<![a-z0-9])(?:{'|'.join(map(re.escape, before))})[\s_-]?(?=whisper)"]
        + [rf"(?<=whisper)(?:{'|'.join(map(re.escape, after))})\b"]
        + [rf"\b(?:{'|'.join(map(re.escape, words))})\b"]
    )
    return re.compile(pattern, re.I), {**before, **after, **words}


def recognize_speech_stack(s: Scan, r: Reading) -> None:
    """ "openai-whisper large-v3", "whisperx large-v3": the program, taken before the model
    names and without the model's own word."""
    pattern, table = _speech_table()
    if m := s.take(pattern):
        word = m.group(0).strip(" _-").lower()
        r.fields["framework"] = table[word]
        # a program that always batches (WhisperX): its own batch unless one is told
        if batch := vocab.load("runtimes")["speech_stack"]["batch"].get(word):
            r.fields["batch_size"] = batch
            r.assumed.append(f"speech_stack_batch = {batch}")


def recognize_stack(s: Scan, r: Reading) -> None:
    pattern, table = vocab.word_table("runtimes", "stack")
    if m := s.take(pattern):
        framework = table[vocab.squash(m.group(0))]
        r.fields["framework"] = framework
        # "kohya sd-scripts": the same program's other names are read with it
        raw = vocab.load("runtimes")["stack"]
        same = [word for word, name in raw.items() if name == framework]
        s.take_all(vocab.alternation(same))


def recognize_parallelism(s: Scan, r: Reading) -> None:
    """ZeRO stages, FSDP, DDP, TP/PP; "tp 4" / "--tensor-parallel-size 4" also gives the count."""
    if m := s.take(
        r"(?:--?)?(?:tp|tensor[-_ ]parallel(?:[-_ ]size)?|张量并行)\s*[=:]?\s*(\d{1,3})\b"
    ):
        r.fields["parallelism"] = Parallelism.tp
        n = int(m.group(1))
        if not 1 <= n <= 4096:
            raise reject("bad_value", "num_gpus")
        if r.gpu_count is None:
            r.gpu_count = n
    if m := s.take(r"(?<![a-z0-9])zero[\s\-_]?(?:stage[\s\-_]?)?([123])(?![0-9])"):
        r.fields.setdefault("parallelism", Parallelism(f"zero{m.group(1)}"))
    pattern, table = vocab.word_table("runtimes", "parallelism")
    for m in s.take_all(pattern):
        value = Parallelism(table[vocab.squash(m.group(0))])
        if "parallelism" not in r.fields:
            r.fields["parallelism"] = value
            if vocab.squash(m.group(0)) == "deepspeed":
                r.assumed.append("parallelism = zero3 (DeepSpeed without a stage)")


# Asking whether to offload ("要开offload吗", "要不要开 cpu offload", "do I need offload",
# "should I enable model offload"): the question words are read here, the offload word itself
# by recognize_offload below (the setup the answer sizes beside the one without it).
_ASK_OFFLOAD = re.compile(
    r"(?:要不要|需不需要|用不用|该不该|是否(?:需要|要)?)\s*(?:开启|打开|启用|开|用)?\s*"
    r"(?=(?:cpu\s*|model\s*|模型\s*)?(?:offload|卸载))"
    r"|(?:需要|要|得)\s*(?:开启|打开|启用|开|用)?\s*"
    r"(?=(?:cpu\s*|model\s*|模型\s*)?(?:offload|卸载)\s*(?:吗|么|不|呢|\?|？))"
    r"|(?<=offload)\s*(?:吗|么|呢)"
    r"|(?:do|would|will)\s+i\s+need\s+(?:to\s+)?(?:use\s+|enable\s+|turn\s+on\s+)?"
    r"(?=(?:cpu\s+|model\s+)?offload)"
    r"|should\s+i\s+(?:use|enable|turn\s+on)\s+(?=(?:cpu\s+|model\s+)?offload)"
    r"|(?<=offload)\s*(?:needed|required)?\s*\?|need\s+(?=(?:cpu\s+|model\s+)?offload\s*\?)",
    re.I,
)


def recognize_offload_question(s: Scan, r: Reading) -> None:
    if s.take_all(_ASK_OFFLOAD):
        r.ask_offload = True


def recognize_offload(s: Scan, r: Reading) -> None:
    pattern, table = vocab.word_table("runtimes", "offload")
    found = [vocab.squash(m.group(0)) for m in s.take_all(pattern)]
    if not found:
        return
    # a pipeline's flags that offload one component (not an Offload mode): read apart
    if any(table.get(k) == "text_encoders" for k in found):
        r.fields["text_encoders_on_gpu"] = False
    found = [k for k in found if table.get(k) not in ("text_encoders", "none")]
    if not found:
        return
    explicit = [table[k] for k in found if k not in ("offload", "卸载", "cpuoffload")]
    if explicit:
        r.fields["cpu_offload"] = Offload(explicit[0])
    elif r.spec is not None and r.spec.kind.value == "diffusion":
        r.fields["cpu_offload"] = Offload.model  # a pipeline offloads its components
    elif r.fields.get("parallelism") in (Parallelism.zero3, Parallelism.fsdp):
        r.fields["cpu_offload"] = Offload(vocab.load("runtimes")["offload"]["zero3_default"])
    else:
        r.fields["cpu_offload"] = Offload.optimizer


@cache
def _precision_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    p = vocab.load("runtimes")["precision"]
    return re.compile(vocab.alternation(p["pure"])), re.compile(vocab.alternation(p["mixed"]))


def recognize_precision_recipe(s: Scan, r: Reading) -> None:
    """Mixed precision keeps fp32 master weights; pure bf16 does not: memory differs a lot."""
    pure, mixed = _precision_patterns()
    if m := s.take(pure):
        r.fields["mixed_precision"] = False
        r.fields.setdefault("weights_format", "fp16" if "fp16" in m.group(0) else "bf16")
    elif s.take(mixed):
        r.fields["mixed_precision"] = True


# a count with its scale: "10000", "1万", "1w", "10k", "2.5k"
# "10,000 users": a count may carry thousands separators
_COUNT = r"(?<![\d.,])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)\s*(k|w|万|千)?"
_COUNT_SCALE = {"": 1, "k": 1000, "千": 1000, "w": 10_000, "万": 10_000}
MAX_USERS = 10**9


@cache
def _concurrency_patterns() -> tuple[re.Pattern[str], ...]:
    before, after = vocab.knob_words("concurrency"), vocab.knob_words("concurrency_after")
    people, qps = vocab.knob_words("people_after"), vocab.knob_words("qps")
    return (
        re.compile(rf"{before}\s*(?:数)?\s*[:=：]?\s*(\d{{1,3}}(?:,\d{{3}})+|\d+)(?![\d.])", re.I),
        re.compile(rf"{_COUNT}\s*{after}", re.I),
        re.compile(rf"{_COUNT}\s*{people}(?![民工口])", re.I),  # not 人民币, 人工, 人口
        re.compile(
            rf"{qps}\s*[:=：]?\s*{_COUNT}|{_COUNT}\s*{qps}"
            # "每秒 5 个请求", "5 requests a second"
            rf"|(?:每秒|每一秒)\s*{_COUNT}\s*(?:个|次)?\s*(?:请求|调用)"
            rf"|{_COUNT}\s*(?:requests?|queries)\s*(?:a|per|/)\s*(?:second|sec|s)\b",
            re.I,
        ),
    )


def _count(m: re.Match[str], at: int = 1) -> float:
    return float(m.group(at).replace(",", "")) * _COUNT_SCALE[(m.group(at + 1) or "").lower()]


def recognize_concurrency(s: Scan, r: Reading) -> None:
    """ "并发 16", "16路并发": concurrent streams; "30 个学生", "10000 users": people, of whom
    a share generates at once; "QPS 10": streams by Little's law (advisor/serving.py)."""
    from advisor.serving import active_streams, streams_from_qps

    before, after, people, qps = _concurrency_patterns()
    if m := s.take(qps):  # first: "5 requests per second" is a rate, not 5 streams
        at = next(i for i in (1, 3, 5, 7) if m.group(i))  # the alternative that matched
        rate = _count(m, at)
        if not 0 < rate <= MAX_USERS:
            raise reject("bad_value", "concurrency")
        r.fields["concurrency"] = min(streams_from_qps(rate), 65_536)
        r.fields["qps"] = rate
        return
    if m := s.take(before):
        n, is_people = float(m.group(1).replace(",", "")), False
    elif m := s.take(after):
        n, is_people = _count(m), False
    elif m := s.take(people):
        n, is_people = _count(m), True
    else:
        return
    if n != int(n) or not 1 <= n <= MAX_USERS:
        raise reject("bad_value", "concurrency")
    active = active_streams(int(n), is_people)
    r.fields["concurrency"] = min(active, 65_536)
    if is_people or n > 65_536:
        r.fields["users"] = int(n)
        r.fields["users_are_people"] = is_people
