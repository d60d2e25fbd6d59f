"""Number formats: "q4", "4bit", "w4a16", "4位量化", "半精度", "exl2 4.0bpw", "mlx 4bit", awq,
gptq, nf4, fp8; KV-cache types and 8-bit optimizers first, so "kv fp8" and "8bit adam" are
not read as weight formats."""

from __future__ import annotations

import re
from functools import cache

from advisor import catalog
from advisor.models.choices import Attention, Optimizer
from advisor.parse import vocab
from advisor.parse.scan import Reading, Scan, reject

# Shapes of format tokens; each is looked up in formats.toml (an unknown one, "fp17", is an
# error with the list of formats rather than a silent default).
_TOKEN = re.compile(
    r"(?<![a-z0-9.])((?:ud[-_])?(?:iq\d_(?:xxs|xs|s|m|nl)|q\d_k_xx?[sl])|q\d_k(?:_[sml])?|q\d_\d|q\d|fp\d+|bf16|int\d+|\d+(?:\.\d+)?\s?-?bits?|nf4|fp4|gptq|awq"
    r"|mxfp4|gguf|qint\d|qfloat8|半精度|全精度|单精度)(?![a-z0-9])"
)
# Read only when nothing more specific is named ("gguf q5_k_m" is Q5_K_M).
_GENERIC = {"int4", "int8"}


# KV cache types as users set them: vLLM/SGLang --kv-cache-dtype fp8[_e4m3|_e5m2], llama.cpp
# -ctk/-ctv (--cache-type-k/v) q8_0 / q4_0 / ..., Ollama's OLLAMA_KV_CACHE_TYPE, transformers'
# quantized cache (nbits 2/4/8: int2/int4/int8), "int8 kv cache", "kv cache 4bit", "KV缓存
# int8", "KV 量化 fp8", "kv cache quantized to int8".
_KV_TYPE = r"(fp8(?:_e4m3(?:fn)?|_e5m2)?|int[248]|[248][- ]?bits?|q8_0|q4_[01]|q5_[01]|iq4_nl|fp16|f16|bf16|fp32|f32)"
_KV_WORD = (
    r"(?:(?:量化\s*|quantized\s+)?(?:(?:ollama_|_)?kv[-_ ]?(?:cache)?(?:[-_ ]?(?:dtype|type|precision))?"
    r"|k/v\s*cache|kv\s*缓存)|-ct[kv]|--cache-type-[kv])"
)
_KV_LINK = (
    r"(?:[:=]|精度|(?:想|要|打算|准备)?(?:改用|用|换成|设为|设成|开)|为|成|到|in|to|as|at|quantized to"
    r"|quantization|量化(?:为|成|到)?)"
)
_KV_AFTER = re.compile(
    rf"{_KV_WORD}\s*(?:{_KV_LINK}\s*)?(?:{_KV_LINK}\s*)?[\"']?{_KV_TYPE}(?![a-z0-9])", re.I
)
_KV_BEFORE = re.compile(
    rf"(?<![a-z0-9_]){_KV_TYPE}\s*(?:的\s*)?(?:quantized\s*)?(?:k/v|kv)"
    rf"(?:[-_ ]?cache|\s*缓存)?(?:\s*(?:quantization|量化))?",
    re.I,
)
# A quantized cache with no type written: transformers' QuantizedCacheConfig (nbits 4 unless
# its nbits or the backend's bit count follows).
_KV_QUANTIZED = re.compile(
    r"cache_implementation\s*=?\s*[\"']?quantized[\"']?|quantized\s+(?:kv[-_ ]?)?cache"
    r"|quantiz(?:e|ed|ing)\s+(?:the\s+)?kv(?:[-_ ]?cache)?|kv[-_ ]?(?:cache\s*)?quantization"
    r"|量化\s*kv\s*(?:缓存)?|kv\s*(?:缓存)?\s*量化",
    re.I,
)
_KV_NBITS = re.compile(
    r"[\"']?nbits[\"']?\s*[:=]\s*([1-8])(?![0-9])"
    r"|(?<![a-z])(?:quanto|hqq)\s*[:,]?\s*(int[248]|[248][- ]?bits?)(?![a-z0-9])",
    re.I,
)
# The cache's library ("backend": "quanto" / "HQQ"; torchao's int8 KV cache): a transformers
# (PyTorch) run, read only beside a KV cache so "hqq 4bit" / "torchao int8" stay weights.
_KV_BACKEND = re.compile(
    r"cache_config\s*=?\s*\{?|[\"']?backend[\"']?\s*[:=]\s*[\"']?(?:quanto|hqq)[\"']?|(?<![a-z])(?:optimum[- ]quanto|quanto|hqq|torchao)"
    r"(?![a-z0-9])(?!\s*(?:int|fp|[248][- ]?bit|w\d))",
    re.I,
)
# llama.cpp's flash-attention switch (-fa / --flash-attn on|off|auto; a bare -fa in older
# builds) and Ollama's OLLAMA_FLASH_ATTENTION: a quantized V cache needs it on.
_FLASH_SWITCH = re.compile(
    r"(?:(?<![a-z0-9-])(?:-fa|--flash-attn)|(?:ollama)?_flash_attention)"
    r"(?:[\s=]+(on|off|auto|true|false|1|0)(?![a-z0-9.]))?(?![a-z0-9-])",
    re.I,
)
_LLAMACPP_FLAGS = re.compile(r"(?<![a-z0-9-])(?:-ct[kv]|--cache-type-[kv])(?![a-z0-9-])", re.I)
_OLLAMA_FLAGS = re.compile(r"ollama_(?:kv_cache_type|flash_attention)", re.I)
_NBITS_TYPE = {"1": "int2", "2": "int2", "3": "int4", "4": "int4"}
# A quantized cache with no type, under a runtime named before it: the type that runtime's
# docs give for it (Ollama FAQ and llama.cpp: q8_0; vLLM / SGLang / TGI: fp8; ExLlamaV2:
# its Q8 cache). transformers' own default is nbits 4.
_KV_USUAL = {
    **{r: "q8_0" for r in ("ollama", "llamacpp", "lmstudio", "exllamav2")},
    **{r: "fp8" for r in ("vllm", "sglang", "tgi")},
}


def _kv_type(token: str) -> str:
    t = token.lower().replace(" ", "").replace("-", "")
    t = re.sub(r"^([248])bits?$", r"int\1", t)
    return {"f16": "fp16", "f32": "fp32"}.get(t, "fp8" if t.startswith("fp8") else t)


def recognize_kv_cache(s: Scan, r: Reading) -> None:
    """The KV cache's type, and the runtime its switch belongs to (llama.cpp's -ctk/-ctv,
    Ollama's environment variables, transformers' quantized cache) when none is named."""
    if _OLLAMA_FLAGS.search(s.text):
        r.fields.setdefault("runtime", "ollama")
    elif _LLAMACPP_FLAGS.search(s.text):
        r.fields.setdefault("runtime", "llamacpp")
    found = [m.group(1) for m in s.take_all(_KV_AFTER)] or [
        m.group(1) for m in s.take_all(_KV_BEFORE)
    ]
    if found:  # -ctk and -ctv may differ: the larger sets the bound
        types = [_kv_type(t) for t in found]
        size = catalog.kv_cache_bytes_per_element()
        r.fields["kv_cache_dtype"] = max(types, key=lambda t: size.get(t, 2.0))
    quantized = s.take(_KV_QUANTIZED)
    if quantized and "cache_implementation" in quantized.group(0):
        r.fields.setdefault("runtime", "transformers")  # generate()'s own argument
    if quantized and "kv_cache_dtype" not in r.fields:
        if m := s.take(_KV_NBITS):
            t = _NBITS_TYPE.get(m.group(1), "int8") if m.group(1) else _kv_type(m.group(2))
            r.fields["kv_cache_dtype"] = t
        elif (usual := _KV_USUAL.get(str(r.fields.get("runtime")))) is not None:
            r.fields["kv_cache_dtype"] = usual  # "KV 量化" under Ollama: its q8_0
            r.assumed.append(f"kv_cache_quantized = {usual}")
        else:
            r.fields["kv_cache_dtype"] = "int4"  # transformers QuantizedCacheConfig nbits=4
            r.assumed.append("kv_cache_nbits = 4")
    if "kv_cache_dtype" in r.fields:
        if s.take_all(_KV_BACKEND):
            r.fields.setdefault("runtime", "transformers")
        s.take_all(_KV_NBITS)  # the nbits the type above already says
    if m := s.take(_FLASH_SWITCH):
        off = (m.group(1) or "on").lower() in ("off", "false", "0")
        r.fields["attention"] = Attention.eager if off else Attention.flash


def recognize_8bit_optimizer(s: Scan, r: Reading) -> None:
    if s.take(
        r"8[- ]?bit\s*adam(?:w)?|adam(?:w)?[- _]?8[- ]?bit|adamw8bit|paged[_ ]adamw(?:_?8bit)?"
    ):
        r.fields["optimizer"] = Optimizer.adamw_8bit


def _format_free(r: Reading) -> bool:
    """No format read yet, or only an Ollama tag's default download (a tag naming no quant is
    pulled as Q4_K_M): a format the line names beside it ("llama3.1:70B 16fp", Ollama #6764)
    is the one meant, and the default's assumption is dropped."""
    if "weights_format" not in r.fields:
        return True
    tag_default = next((a for a in r.assumed if a.startswith("ollama_quant = ")), None)
    if tag_default is None:
        return False
    r.assumed.remove(tag_default)
    del r.fields["weights_format"]
    return True


def recognize_quant_words(s: Scan, r: Reading) -> None:
    """Words from vocab/quant.toml ("4位量化", "w4a16", "bnb 4bit", "mlx 4bit", "iq4_xs")."""
    pattern, table = vocab.word_table("quant", "words")
    runtimes = vocab.squashed("quant", "runtime_of")
    for m in s.take_all(pattern):
        key = vocab.squash(m.group(0))
        if _format_free(r):
            r.fields["weights_format"] = table[key]
        if key in runtimes:
            r.fields.setdefault("runtime", runtimes[key])


@cache
def _exl2() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The bits-per-weight pattern, and what it cannot match without ("bpw" or an ExLlama
    word), a cheap test first: the pattern's number is tried at every position."""
    words = vocab.alternation(vocab.load("quant")["exl2"]["words"])
    return re.compile(rf"bpw|{words}", re.I), re.compile(
        rf"(?:{words}\s*)?(?<![\d.])(\d+(?:\.\d+)?)\s*bpw(?![a-z])|{words}\s*(\d+(?:\.\d+)?)\s*b(?:it)?s?\b",
        re.I,
    )


def recognize_exl2(s: Scan, r: Reading) -> None:
    """ExLlamaV2 quants by bits per weight: the weight-only format closest in bits."""
    needs, pattern = _exl2()
    m = s.take(pattern) if needs.search(s.text) else None
    if m is None:
        return
    bpw = float(m.group(1) or m.group(2))
    if not 1 <= bpw <= 16:
        raise reject("bad_value", "bpw")
    choices = [catalog.formats()[f] for f in vocab.load("quant")["exl2"]["formats"]]
    closest = min((f for f in choices if f.bits >= bpw - 0.5), key=lambda f: f.bits)
    if "weights_format" not in r.fields:
        r.fields["weights_format"] = closest.id
        r.assumed.append(f"exllama_bpw = {bpw:g} bpw ≈ {closest.id}")
    r.fields.setdefault("runtime", "exllamav2")


# A GGUF type the format table lacks ("q4_k_xl", "iq5_xxs"): the K-quant of its digit
# (Q4_K_M for a 4), said as an assumption naming both, never silently another format.
_GGUF_SHAPE = re.compile(r"(?:ud[-_])?i?q(\d)_\w+")


def _token_format(token: str, r: Reading | None = None) -> str:
    token = token.replace(" ", "")
    bits = re.fullmatch(r"(\d+)-?bits?", token)
    if bits:
        token = {"4": "int4", "8": "int8", "16": "fp16", "32": "fp32"}.get(bits.group(1), token)
    fmt = catalog.find_format(token)
    shape = _GGUF_SHAPE.fullmatch(token)
    if fmt is None and shape is not None and r is not None:
        nearest = catalog.find_format(f"q{shape.group(1)}_k_m") or catalog.find_format("q4_k_m")
        if nearest is not None:
            r.assumed.append(f"gguf_unknown = {token.upper()} → {nearest.id.upper()}")
            return nearest.id
    if fmt is None:
        raise reject("unknown_format", token, sorted(catalog.formats()))
    return fmt.id


def recognize_formats(s: Scan, r: Reading) -> None:
    """Format tokens; the most specific one named wins (awq over 4bit, q5_k_m over gguf)."""
    found = [(m.group(1), _token_format(m.group(1), r)) for m in _TOKEN.finditer(s.text)]
    if not found:
        return
    s.take_all(_TOKEN)
    if not _format_free(r):
        return
    specific = [f for token, f in found if token != "gguf" and f not in _GENERIC]
    fmt = specific[0] if specific else found[0][1]
    r.fields["weights_format"] = fmt
    if [t for t, _ in found] == ["gguf"]:
        r.assumed.append("gguf_quant = Q4_K_M")


@cache
def _backends() -> list[tuple[dict, re.Pattern[str]]]:
    return [
        (backend, re.compile(vocab.alternation(backend["words"]), re.I))
        for backend in vocab.load("quant")["backends"].values()
    ]


def recognize_quant_backend(s: Scan, r: Reading) -> None:
    """ "4bit with bitsandbytes" is NF4, "bnb 8bit" LLM.int8(): the library decides the format."""
    for backend, words in _backends():
        if s.take(words):
            current = r.fields.get("weights_format") or ""
            if current in backend["formats"]:
                r.fields["weights_format"] = backend["formats"][current]


@cache
def _unquantized() -> re.Pattern[str]:
    return re.compile(vocab.alternation(vocab.load("quant")["vague"]["negated"]), re.I)


@cache
def _vague() -> re.Pattern[str]:
    vague = vocab.load("quant")["vague"]
    not_after = "".join(f"(?<!{re.escape(w)})" for w in vague["not_after"])
    return re.compile(not_after + vocab.alternation(vague["words"]))


def recognize_vague_quant(s: Scan, r: Reading) -> None:
    """ "量化" / "quantized" with no bit count: 4-bit, said so. "非量化" / "unquantized": the
    model's own weights, so no format is set (the catalog's native one applies)."""
    if s.take(_unquantized()):
        r.assumed.append("quantized = no")
        return
    if s.take(_vague()) and "weights_format" not in r.fields:
        r.fields["weights_format"] = vocab.load("quant")["vague"]["format"]
        r.assumed.append("quantized = 4-bit")
