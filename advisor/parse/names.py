"""Model names as people write them: Hugging Face repo ids with suffixes, GGUF file names,
Ollama tags, R1 distills, family shorthands ("千问 14b", "满血 r1"), catalog names; and
"did you mean" for the ones the catalog lacks."""

from __future__ import annotations

import difflib
import re
from collections import Counter
from functools import cache, lru_cache
from typing import NamedTuple

from advisor import catalog
from advisor.catalog import ModelSpec
from advisor.parse import releases, vocab
from advisor.parse.scan import Reading, Scan, reject

_SIZE = r"(?P<size>\d+(?:\.\d+)?)\s*b(?![a-z0-9])"


def _use(r: Reading, spec: ModelSpec, word: str) -> None:
    r.spec = spec
    variant = catalog.same_architecture_variant(word, spec)
    if variant is not None:  # "qwen2.5-coder-14b": sized as Qwen2.5 14B, said so
        r.assumed.append(f"same_architecture = {word.strip()} → {spec.name}")


def _set_format(r: Reading, fmt_id: str, origin: str) -> None:
    """A format named by a repo suffix, file name or tag (`origin`); the first one wins."""
    if "weights_format" not in r.fields and catalog.formats().get(fmt_id) is not None:
        r.fields["weights_format"] = fmt_id


# --- names with suffixes: repo ids and file names ------------------------------------------


@cache
def _suffixes() -> list[tuple[list[str], str]]:
    """Repo-name suffixes as token lists, longest first ("gptq-int4" before "int4")."""
    table = vocab.load("models")["repo_suffixes"]
    out = [(k.lower().split("-"), v) for k, v in table.items()]
    return sorted(out, key=lambda kv: len(kv[0]), reverse=True)


# Bounded and by the name as typed: a pure function of the catalog (loaded once per process),
# asked for every word of a line that could be a name.
@lru_cache(maxsize=4096)
def strip_name(name: str) -> tuple[ModelSpec | None, str | None]:
    """A repo or file name -> (catalog entry, format its suffixes name). Suffixes are peeled
    off the end one at a time until the catalog knows the rest."""
    key = catalog.normalize_name(name)
    for prefix in vocab.load("models")["repo_prefixes"]:
        if key.startswith(prefix) and catalog.find_model(key) is None:
            key = key.removeprefix(prefix)
    tokens = key.split("-")
    fmt: str | None = None
    while tokens:
        # a suffix that names a format first, so "llama-3.1-70b-bf16" keeps its bf16
        suffix = _suffix_at_end(tokens, with_format=True)
        if suffix:
            fmt = fmt or suffix[1]
            del tokens[-len(suffix[0]) :]
            continue
        spec = catalog.find_model("-".join(tokens))
        if spec is not None:
            return spec, fmt
        if len(tokens) > 1 and re.fullmatch(r"\d{4}", tokens[-1]):
            tokens.pop()  # a release date: -2407, -2501, -0528
            continue
        suffix = _suffix_at_end(tokens, with_format=False)
        if suffix is None:
            return None, fmt
        del tokens[-len(suffix[0]) :]
    return None, fmt


def _suffix_at_end(tokens: list[str], *, with_format: bool) -> tuple[list[str], str] | None:
    for suffix, value in _suffixes():
        fits = bool(value) == with_format and len(tokens) > len(suffix)
        if fits and tokens[-len(suffix) :] == suffix:
            return suffix, value
    return None


def _looks_like_model(name: str) -> bool:
    key = catalog.normalize_name(name)
    return key.startswith(vocab.model_prefixes()) or bool(re.search(r"\d+(\.\d+)?b\b", key))


@cache
def _not_estimated() -> tuple[re.Pattern[str], re.Pattern[str], dict[str, str]]:
    """The not-estimated names alone (a cheap test first: the optional org before them is
    tried from every position), and with an org before them ("THUDM/…")."""
    pattern, table = vocab.word_table("models", "not_estimated")
    with_org = re.compile(rf"(?:[a-z0-9\-]+/)?{pattern.pattern}", re.I)
    return re.compile(pattern.pattern, re.I), with_org, table


def recognize_not_estimated(s: Scan, r: Reading) -> None:
    """A model known by name that the engine cannot size yet (vocab/models.toml
    not_estimated): said plainly rather than misread as a neighbour."""
    names, pattern, table = _not_estimated()
    if names.search(s.text) and (m := pattern.search(s.text)):
        key = vocab.squash(m.group(0).split("/")[-1])
        raise reject("not_estimated", table.get(key, m.group(0)))


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
            # a word before it that belongs to the same name ("clip vit-l/14")
            name = m.group(0).replace("/", "-")
            prev = re.search(r"([a-z]+)[\s\-_]+$", s.text[: m.start()])
            if prev and catalog.find_model(f"{prev.group(1)} {name}") is whole:
                s._consume(prev, (prev.start(1), m.start()))
            s._consume(m)
            _use(r, whole, m.group(0))
            return
        name = re.sub(r"\.gguf$", "", m.group("name"))
        spec, fmt = strip_name(name)
        if spec is None:
            if _looks_like_model(name):
                raise reject("unknown_model", m.group(0), suggest(name))
            continue
        s._consume(m)
        _use(r, spec, m.group(0))
        if fmt and re.search(r"[-_.]gguf$", m.group("name"), re.I):
            r.gguf_repo = True  # a container, not a quant type: decided in assemble
        elif fmt:
            _set_format(r, fmt, "repo")
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
            _set_format(r, fmt_id, "file")
        return
    quant = re.search(_GGUF_QUANT, stem, re.I)
    fmt_id = _format_word(quant.group("quant")) if quant else None
    if quant:
        stem = stem[: quant.start()]
    spec, suffix_fmt = strip_name(stem)
    if spec is None:
        raise reject("unknown_model", m.group(0), suggest(stem))
    s._consume(m)
    _use(r, spec, m.group(0))
    if fmt_id is None:
        fmt_id = "q4_k_m"
        r.assumed.append("gguf_quant = Q4_K_M")
    _set_format(r, fmt_id or suffix_fmt or "q4_k_m", "file")


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
            if _looks_like_model(name) and not new_release:
                raise reject("unknown_model", m.group(0), suggest(f"{name}-{size}"))
            if not _take_unrecognized(s, r, m, size):
                continue
        else:
            s._consume(m)
            _use(r, spec, m.group(0))
        tag_quants = table.get("tag_quants", {})
        quant = next((q for p in parts[1:] if (q := _format_word(p) or tag_quants.get(p))), None)
        if quant is None:
            quant = table.get("format_of", {}).get(name) or table["default_format"]
            r.assumed.append(f"ollama_quant = {quant.upper()}")
        _set_format(r, quant, "tag")
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


# A name with a version number but no known family ("olmo2", "falcon3", "granite3.1-dense"),
# then a size apart from it ("olmo2 7b", "falcon3 的 10b"). Joined by a hyphen instead
# ("olmo-2-7b") it stays an unknown model with "did you mean" (it may be a misspelling).
_NAME_THEN_SIZE = re.compile(
    r"(?<![\w./:\-])(?P<name>[a-z][a-z.\-_]*\d[a-z0-9.\-_]*(?<![\-_.]))"
    r"(?:\s+|\s*的\s*)(?P<size>\d+(?:\.\d+)?)\s*(?P<unit>b|m)(?![a-z0-9])"
)


def recognize_unrecognized_name(s: Scan, r: Reading) -> None:
    """A versioned name the catalog lacks, before a bare size ("olmo2 7b"): the size is
    read, the name kept (ParsedQuery.unrecognized) so the answer says so and the bot looks
    the name up on the Hub. Runs after every name recognizer, just before bare sizes."""
    if r.spec is not None or r.params_b is not None or r.unrecognized is not None:
        return
    for m in _NAME_THEN_SIZE.finditer(s.text):
        if _looks_like_model(m.group("name")):
            continue  # "llama9 7b": a known family's prefix, left to "did you mean"
        letters = re.match(r"[a-z]+", m.group("name"))
        not_names = vocab.load("words")["not_model_names"]["words"]
        if letters is None or len(letters.group(0)) < 3 or letters.group(0) in not_names:
            continue  # "bs8 7b", "lora64 7b": a knob or a setting, not a model's name
        value = float(m.group("size")) / (1000 if m.group("unit") == "m" else 1)
        if not 0 < value <= 20000:
            continue
        s._consume(m)
        r.params_b = float(f"{value:.6g}")
        # as typed: the spaces scan.normalize put at Chinese/Latin edges are not the user's
        typed = re.sub(r"\s+", " ", m.group(0).strip())
        r.unrecognized = re.sub(r"\s*([\u4e00-\u9fff]+)\s*", r"\1", typed)
        return


# --- distills, phrases, families ------------------------------------------------------------


@cache
def _distill_patterns() -> list[re.Pattern[str]]:
    d = vocab.load("models")["distill"]
    word, base = vocab.alternation(d["words"]), vocab.alternation(d["base_words"])
    family = r"(?:(?P<fam>qwen|llama|千问)[\s\-]*)?"
    sep = r"[\s\-_]*(?:版|的)?[\s\-_]*"
    return [
        re.compile(rf"(?:{base}{sep})?{word}{sep}(?:{base}{sep})?{family}{_SIZE}"),
        re.compile(rf"{base}{sep}{family}{_SIZE}{sep}{word}"),
        re.compile(rf"{base}{sep}{_SIZE}"),  # "deepseek-r1 32b": no 32B original exists
        # "DeepSeek Qwen 14B", "deepseek llama 70b": the distill named by its base family
        re.compile(rf"{base}{sep}(?P<fam>qwen|llama|千问)[\s\-_]*{_SIZE}"),
    ]


def _distill_of(sizes: dict[str, str], m: re.Match[str]) -> str | None:
    """The distill of that size, if it is of the base family named ("deepseek qwen 8b": none)."""
    spec_id = sizes.get(f"{float(m.group('size')):g}")
    fam = (m.groupdict().get("fam") or "").replace("千问", "qwen")
    return spec_id if spec_id and fam in spec_id else None


def recognize_distill(s: Scan, r: Reading) -> None:
    """R1 distills: a size with a distill word (or after "r1") is never the 671B original."""
    if r.spec is not None:
        return
    sizes = vocab.load("models")["distill"]["sizes"]
    for i, pattern in enumerate(_distill_patterns()):
        m, spec_id = s.take_if(pattern, lambda m: _distill_of(sizes, m))
        if spec_id:
            assert m is not None  # a model is read only from a match
            spec = catalog.models()[spec_id]
            _use(r, spec, m.group(0))
            if i == 2:
                r.assumed.append(f"distill = {spec.name}")
            return


@cache
def _phrase_pattern() -> tuple[re.Pattern[str], dict[str, str]]:
    return vocab.word_table("models", "phrases")


def recognize_phrase(s: Scan, r: Reading) -> None:
    if r.spec is not None:
        return
    pattern, table = _phrase_pattern()
    if m := s.take(pattern):
        _use(r, catalog.models()[table[vocab.squash(m.group(0))]], m.group(0))


def recognize_catalog_name(s: Scan, r: Reading) -> None:
    """The longest run of up to 4 words that the catalog knows (id, name or alias)."""
    if r.spec is not None:
        return
    words = [
        (m.start(), m.end()) for m in re.finditer(r"[a-z0-9][a-z0-9.\-_]*|[\u4e00-\u9fff]+", s.text)
    ]
    # a name starts with a letter, a CJK word or an expert count ("8x7b"), never a bare number
    starts = {i for i, (a, b) in enumerate(words) if not re.fullmatch(r"[\d.\-_]+", s.text[a:b])}
    for size in (4, 3, 2, 1):
        spans = [
            (words[i][0], words[i + size - 1][1])
            for i in range(len(words) - size + 1)
            if i in starts
        ]
        for start, end in sorted(spans, key=lambda se: se[0] - se[1]):  # longer text first
            candidate = s.text[start:end]
            if size > 1 and catalog.find_format(candidate.split()[-1]) is not None:
                continue  # "llama-3.1-70b bf16": the format is read as a format
            spec, fmt = (
                strip_name(candidate) if size == 1 else (catalog.find_model(candidate), None)
            )
            if spec is not None and _contradicted_by_size(s.text[end:], spec):
                continue  # "qwen-vl 72b": the alias names the 7B; the size says otherwise
            if spec is not None:
                s.understood.append(candidate.strip())
                s.text = s.text[:start] + " " * (end - start) + s.text[end:]
                _use(r, spec, candidate)
                if fmt:
                    _set_format(r, fmt, "repo")
                return


def _contradicted_by_size(after: str, spec: ModelSpec) -> bool:
    m = re.match(r"\s*(\d+(?:\.\d+)?)\s*b(?![a-z0-9])", after)
    if m is None:
        return False
    size = float(m.group(1))
    return abs(size - spec.params_b) > 0.25 * spec.params_b and abs(size - spec.active_b) > 1


@cache
def _family_pattern() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str], dict[str, str]]:
    families = vocab.load("models")["families"]
    by_word = {vocab.squash(w): fam for fam, spec in families.items() for w in spec["words"]}
    words = vocab.alternation([w for spec in families.values() for w in spec["words"]])
    alone = [
        w for spec in families.values() for w in spec["words"] if len(w) >= 4 or not w.isascii()
    ]
    # "qwen2 7b", "llama v2 70B": a generation number, "v" optional
    version = r"(?:[\s\-_]?v?(?P<ver>\d+(?:\.\d+)?)(?![\d.]*\s*b))?"
    # the size may follow the word with nothing between ("qwen72b", "qwen7b"), in brackets
    # ("qwen2.5 (32b)"); so the family word needs no right edge here
    glued = words.replace("(?![a-z0-9])", "")
    # not inside a longer hyphenated name ("deepseek-r1-distil-qwen-7b" is no Qwen)
    with_size = re.compile(
        rf"(?<![\-_/.])(?P<fam>{glued}){version}[\s\-_(]*(?:的)?[\s\-_(]*{_SIZE}\)?"
        # nor a variant's name ("qwen3-8b-vl" is no Qwen3-8B; "-int4", "-instruct" are fine)
        rf"(?![\-_.]?{vocab.alternation(vocab.load('models')['variant_words']['words'])})"
    )
    # or the size first: "7B LLama based models", "70b 的 qwen", "70b llama2", "the 120b model
    # of gpt-oss" (a version after the family, a connector between: vocab size_first)
    connector = vocab.alternation(vocab.load("models")["size_first"]["connectors"])
    size_first = re.compile(
        rf"(?<![\w.]){_SIZE}[\s\-_]*(?:{connector}\s*(?:the\s+)?)?[\s\-_]*(?P<fam>{glued})"
        r"(?:[\s\-_]?v?(?P<ver>\d+(?:\.\d+)?))?(?![a-z0-9.])"
    )
    # alone: not the start of a longer name ("llama-9-900b" is an unknown model, not Llama)
    return with_size, size_first, re.compile(alternation_alone(alone)), by_word


def _family_default(
    s: Scan, m: re.Match[str], families: dict, by_word: dict[str, str]
) -> ModelSpec | None:
    """A family named alone is its usual model, unless a size is asked instead ("smallest
    llama model", "最大的千问"): then no model is read and the line is asked back."""
    before = s.text[: m.start()].rstrip()
    if re.search(
        vocab.alternation(vocab.load("models")["size_first"]["superlatives"]) + "$", before
    ):
        return None
    return catalog.models().get(families[by_word[vocab.squash(m.group(0))]]["default"])


def alternation_alone(words: list[str]) -> str:
    return vocab.alternation(words) + r"(?=[\s,.!?;:)\]]|$|[\u4e00-\u9fff])"


def family_model(word: str, size_b: float) -> ModelSpec | None:
    """A family word at a size ("qwen", 14 -> Qwen2.5 14B): the first generation that has
    it, as `recognize_family` reads "qwen 14b"; None for a word that is no family."""
    families = vocab.load("models")["families"]
    by_word = _family_pattern()[3]
    key = by_word.get(vocab.squash(word))
    if key is None:
        return None
    for gen in families[key]["generations"]:
        spec = catalog.find_model(f"{gen}-{size_b:g}b")
        if spec is not None:
            return spec
    return None


def recognize_family(s: Scan, r: Reading) -> None:
    """A family without a version: "千问 14b" -> the first generation with that size; "智谱"
    alone -> the family's usual model; "千问2.5 7b" -> that generation. Stated as assumptions."""
    if r.spec is not None:
        return
    families = vocab.load("models")["families"]
    with_size, size_first, alone, by_word = _family_pattern()

    def sized(m: re.Match[str]) -> ModelSpec | None:
        fam = families[by_word[vocab.squash(m.group("fam"))]]
        size = f"{float(m.group('size')):g}b"
        if m.group("ver") and "version_prefix" in fam:
            return catalog.find_model(f"{fam['version_prefix']}{m.group('ver')}-{size}")
        for gen in fam["generations"]:
            spec = catalog.find_model(f"{gen}-{size}")
            if spec is not None:
                return spec
        # "671B deepseek": the family's usual model, when it is the size stated
        default = catalog.models().get(fam.get("default", ""))
        if (
            default is not None
            and abs(default.params_b - float(m.group("size"))) < 0.02 * default.params_b
        ):
            return default
        return None

    m, spec = s.take_if(with_size, sized)
    if spec is None:
        m, spec = s.take_if(size_first, sized)
    if spec is None and (unread := s.peek(with_size) or s.peek(size_first)):
        # "Tiny Llama 1.5B": a size no generation has; never the family's default. With no
        # version typed the name was not read: the size is, and the answer says so. A version
        # typed ("qwen2.8 7b") is left to "did you mean".
        if not unread.group("ver") and r.unrecognized is None:
            s._consume(unread)
            r.params_b = float(unread.group("size"))
            r.unrecognized = unread.group(0).strip()
        return
    if spec is None:
        m, spec = s.take_if(alone, lambda m: _family_default(s, m, families, by_word))
    if spec is not None and m is not None:
        _use(r, spec, m.group(0))
        r.assumed.append(f"model = {spec.name}")


# --- did you mean ---------------------------------------------------------------------------


def _stem(key: str) -> str:
    return re.split(r"[\d.\-]", key, maxsplit=1)[0]


def _size(key: str) -> str | None:
    m = re.search(r"(\d+(?:\.\d+)?)b(?![a-z])", key)
    return m.group(1) if m else None


def _numbers(key: str) -> tuple[float, ...]:
    return tuple(float(x) for x in re.findall(r"\d+(?:\.\d+)?", key))


def _nearness(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    if not a or len(a) != len(b):
        return 0.0
    return sum(1 / (1 + abs(x - y)) for x, y in zip(a, b, strict=True)) / len(a)


class _Alias(NamedTuple):
    """A catalog id or alias with what `suggest` compares of it, computed once."""

    spec_id: str
    name: str  # normalized
    stem: str
    size: str | None
    numbers: tuple[float, ...]
    # each character with its repeat number ("aab": a1 a2 b1): the size of two such sets'
    # intersection is the count of characters the names share, difflib's quick_ratio bound
    letters: frozenset[tuple[str, int]]


# "Did you mean" compares a name with every alias (~950): their normal forms, stems, sizes
# and numbers are a pure function of the catalog (loaded once per process), built once.
@cache
def _aliases() -> tuple[tuple[str, tuple[_Alias, ...]], ...]:
    out = []
    for spec in catalog.models().values():
        names = [catalog.normalize_name(a) for a in (spec.id, *spec.aliases)]
        rows = (_Alias(spec.id, o, _stem(o), _size(o), _numbers(o), _letters(o)) for o in names)
        out.append((spec.id, tuple(rows)))
    return tuple(out)


def _letters(name: str) -> frozenset[tuple[str, int]]:
    seen: Counter[str] = Counter()
    out = []
    for ch in name:
        seen[ch] += 1
        out.append((ch, seen[ch]))
    return frozenset(out)


# Scores below this are never suggested.
_SUGGEST_FLOOR = 0.6
# Float slack for the upper bounds below (their sums are not in the score's order).
_SLACK = 1e-9


def suggest(name: str, n: int = 3, size_b: float | None = None) -> list[str]:
    """Catalog ids close to an unknown name: spelling (edit distance), then the same family
    stem, the same size and nearby numbers rank higher ("qwen2.8-7b" -> qwen2.5-7b first).

    The spelling score (difflib's ratio) is most of the cost, so an alias is scored only when
    an upper bound of its score (difflib's length and letter-count bounds on the ratio, plus
    its bonuses) could reach both the floor and its model's best alias so far: the ids and
    their order are those of scoring every alias."""
    key = catalog.normalize_name(name)
    stem, size = _stem(key), _size(key) or (f"{size_b:g}" if size_b else None)
    key_numbers, key_letters = _numbers(key), _letters(key)
    stem_near: dict[str, bool] = {}  # other stem -> spelt like this stem (per call)
    scored: dict[str, float] = {}
    for spec_id, aliases in _aliases():
        best = 0.0
        for alias in aliases:
            same_stem = bool(stem) and alias.stem == stem
            bonus = 0.15 if same_stem else 0.1 if stem else 0.0
            same_size = bool(size) and alias.size == size
            if same_size:
                bonus += 0.15
            near = _nearness(key_numbers, alias.numbers) if alias.numbers else 0.0
            bonus += 0.3 * near
            need = max(best, _SUGGEST_FLOOR) - bonus - _SLACK
            total_len = len(key) + len(alias.name)
            if 2.0 * min(len(key), len(alias.name)) / total_len < need:
                continue  # difflib's real_quick_ratio
            if 2.0 * len(key_letters & alias.letters) / total_len < need:
                continue  # difflib's quick_ratio
            score = difflib.SequenceMatcher(None, key, alias.name).ratio()
            if same_stem:
                score += 0.15
            elif stem:
                if alias.stem not in stem_near:
                    spelt = difflib.SequenceMatcher(None, stem, alias.stem).ratio()
                    stem_near[alias.stem] = spelt >= 0.8
                if stem_near[alias.stem]:
                    score += 0.1
            if same_size:
                score += 0.15
            score += 0.3 * near
            best = max(best, score)
        if best >= _SUGGEST_FLOOR:
            scored[spec_id] = best
    ranked = sorted(scored.items(), key=lambda kv: -kv[1])
    return [model_id for model_id, score in ranked[:n] if score >= _SUGGEST_FLOOR]


# A sibling is the same model re-released, not a variant trained for something else: a
# coder or a distilled model is no answer to "qwen3-30b-a3b at 128k".
_VARIANT_TAGS = frozenset({"coder", "code", "distill", "math", "vl", "r1", "audio", "embedding"})


def _variant_tags(model_id: str) -> set[str]:
    return set(re.split(r"[-_.]", model_id)) & _VARIANT_TAGS


def longer_context_siblings(spec: ModelSpec, ctx: int) -> list[str]:
    """Same family, kind and size, with the context asked for: Llama-3-8B at 32k ->
    Llama-3.1-8B; Qwen3-30B-A3B at 128k -> its 2507 release, not Qwen3-Coder."""
    out = []
    for other in catalog.models().values():
        if (
            other.id != spec.id
            and other.family == spec.family
            and other.kind == spec.kind
            and _variant_tags(other.id) <= _variant_tags(spec.id)
            and other.arch is not None
            and other.arch.max_context_tokens >= ctx
            and abs(other.params_b - spec.params_b) <= 0.1 * spec.params_b
            and abs(other.active_b - spec.active_b) <= 0.1 * spec.active_b  # MoE is no dense
        ):
            out.append(other.id)
    return out[:3]
