"""Model names as people copy them from where models are published, each with its own
suffixes: Hugging Face repo ids (and hub page addresses), GGUF file names, Ollama tags."""

from __future__ import annotations

import re
from functools import cache

from advisor import catalog
from advisor.parse import releases, vocab
from advisor.parse.names import looks_like_model, set_format, strip_name, use_model
from advisor.parse.scan import Reading, Scan, reject
from advisor.parse.similar_names import suggest


@cache
def _model_url() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """A hub host alone (a cheap test first: the optional scheme before it is tried from
    every position), and a hub page's address up to the repo id."""
    hosts = "|".join(re.escape(h) for h in vocab.load("words")["model_urls"]["hosts"])
    return re.compile(hosts, re.I), re.compile(
        rf"(?:https?://)?(?:www\.)?(?:{hosts})(?=[a-z0-9])", re.I
    )


def recognize_repo_id(s: Scan, r: Reading) -> None:
    """org/name[-suffixes]: meta-llama/Llama-3.2-3B-Instruct, Qwen/Qwen2.5-7B-Instruct-AWQ;
    a hub page's address is read as the id it ends in (vocab/words.toml model_urls)."""
    host, url = _model_url()
    if host.search(s.text):
        s.take_all(url)
    pattern = r"(?<![\w/])(?P<org>[a-z0-9][\w.\-]*)/(?P<name>[a-z0-9][\w.\-]*[a-z0-9])"
    for m in re.finditer(pattern, s.text, re.I):
        # "vit-b/16", "vit-l/14": a patch size after the slash, not an org/name repo id
        whole = None
        if re.fullmatch(r"\d{1,2}", m.group("name")):
            whole = catalog.find_model(m.group(0).replace("/", "-"))
        if whole is not None:
            # a word before it that belongs to the same name ("clip vit-l/14"), or names
            # another model of that shape ("dinov2 vit-l/14" is DINOv2's, not CLIP's)
            name = m.group(0).replace("/", "-")
            prev = re.search(r"([a-z][a-z0-9]*)[\s\-_]+$", s.text[: m.start()])
            joined = catalog.find_model(f"{prev.group(1)} {name}") if prev else None
            if prev and joined is not None:
                whole = joined
                s._consume(prev, (prev.start(1), m.start()))
            s._consume(m)
            use_model(r, whole, m.group(0))
            return
        name = re.sub(r"\.gguf$", "", m.group("name"))
        spec, fmt = strip_name(name)
        if spec is None:
            if looks_like_model(name):
                raise reject("unknown_model", m.group(0), suggest(name))
            continue
        s._consume(m)
        use_model(r, spec, m.group(0))
        if fmt and re.search(r"[-_.]gguf$", m.group("name"), re.I):
            r.gguf_repo = True  # a container, not a quant type: decided in assemble
        elif fmt:
            set_format(r, fmt, "repo")
        runtime = vocab.load("models")["repo_orgs"].get(m.group("org").lower())
        if runtime:
            r.fields.setdefault("runtime", runtime)
        return


_GGUF_QUANT = r"[-_.](?P<quant>i?q\d(?:_[a-z0-9]+)*|f16|bf16|f32|fp16)$"


def recognize_gguf_file(s: Scan, r: Reading) -> None:
    """qwen2.5-7b-instruct-q4_k_m.gguf: the model and the quant type in the file name."""
    m = re.search(r"(?<![\w/])(?P<stem>[a-z0-9][\w.\-]*?)\.gguf\b", s.text, re.I)
    if m is None or r.spec is not None:
        return
    stem = m.group("stem")
    if re.fullmatch(_GGUF_QUANT[len("[-_.]") :], stem, re.I):
        # "q4_K_M.gguf" alone: the file's quant type; the model is named elsewhere
        s._consume(m)
        if fmt_id := _format_word(stem):
            set_format(r, fmt_id, "file")
        return
    quant = re.search(_GGUF_QUANT, stem, re.I)
    fmt_id = _format_word(quant.group("quant")) if quant else None
    if quant:
        stem = stem[: quant.start()]
    spec, suffix_fmt = strip_name(stem)
    if spec is None:
        raise reject("unknown_model", m.group(0), suggest(stem))
    s._consume(m)
    use_model(r, spec, m.group(0))
    if fmt_id is None:
        fmt_id = "q4_k_m"
        r.assumed.append("gguf_quant = Q4_K_M")
    set_format(r, fmt_id or suffix_fmt or "q4_k_m", "file")


def _format_word(word: str) -> str | None:
    word = word.lower().replace("f16", "fp16") if word.lower() in ("f16", "f32") else word
    word = {"f32": "fp32"}.get(word.lower(), word)
    fmt = catalog.find_format(word)
    if fmt is not None:
        return fmt.id
    _, table = vocab.word_table("quant", "words")
    return table.get(vocab.squash(word))


def recognize_ollama_tag(s: Scan, r: Reading) -> None:
    """name:tag from the Ollama library: gemma3:12b, deepseek-r1:14b, llama3.1:8b-instruct-q8_0,
    qwen2.5:latest. Tags without a quant are Q4_K_M, as Ollama pulls them."""
    if r.spec is not None:
        return
    table = vocab.load("ollama")
    pattern = r"(?<![\w/:])(?P<name>[a-z][a-z0-9.\-]*):(?P<tag>latest|\d[\w.\-]*|[a-z]+\b)"
    for m in re.finditer(pattern, s.text, re.I):
        name, tag = m.group("name").lower(), m.group("tag").lower()
        parts = tag.split("-")
        size = table["latest"].get(name) if parts[0] == "latest" else parts[0]
        if size is None:
            if parts[0] == "latest":  # "olmo2:latest": a library name the table lacks
                raise reject("unknown_model", m.group(0), suggest(name))
            continue
        spec_id = table["tags"].get(f"{name}:{size}")
        spec = catalog.models().get(spec_id) if spec_id else catalog.find_model(f"{name}-{size}")
        if spec is None:
            new_release = releases.is_new_release(f"{name}-{size}")  # "qwen3.5:122b"
            if looks_like_model(name) and not new_release:
                raise reject("unknown_model", m.group(0), suggest(f"{name}-{size}"))
            if not _take_unrecognized(s, r, m, size):
                continue
        else:
            s._consume(m)
            use_model(r, spec, m.group(0))
        tag_quants = table.get("tag_quants", {})
        quant = next((q for p in parts[1:] if (q := _format_word(p) or tag_quants.get(p))), None)
        if quant is None:
            quant = table.get("format_of", {}).get(name) or table["default_format"]
            r.assumed.append(f"ollama_quant = {quant.upper()}")
        set_format(r, quant, "tag")
        r.fields.setdefault("runtime", "ollama")
        return


_TAG_SIZE = re.compile(r"(?P<n>\d+(?:\.\d+)?)(?P<unit>[bm])")


def _take_unrecognized(s: Scan, r: Reading, m: re.Match[str], size: str) -> bool:
    """An Ollama tag the catalog lacks ("olmo2:7b", "smollm2:135m"): the size is the tag's,
    the model unknown (ParsedQuery.unrecognized), never a silent generic one."""
    sized = _TAG_SIZE.fullmatch(size)
    if sized is None or r.unrecognized is not None:
        return False
    value = float(sized.group("n")) / (1000 if sized.group("unit") == "m" else 1)
    if not 0 < value <= 20000:
        return False
    s._consume(m)
    r.params_b = float(f"{value:.6g}")
    r.unrecognized = m.group(0)
    return True
