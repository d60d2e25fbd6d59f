"""Model names as people write them: catalog names (a repo-style name's suffixes peeled off),
R1 distills, family shorthands ("千问 14b", "满血 r1"), names the engine cannot size yet, and
a versioned name the catalog lacks before a size. Repo ids, GGUF files and Ollama tags are
read in hub_names.py; "did you mean" is similar_names.py."""

from __future__ import annotations

import re
from functools import cache, lru_cache

from advisor import catalog
from advisor.catalog import ModelSpec
from advisor.parse import vocab
from advisor.parse.image_knobs import name_resolution
from advisor.parse.scan import Reading, Scan, reject

_SIZE = r"(?P<size>\d+(?:\.\d+)?)\s*b(?![a-z0-9])"


def use_model(r: Reading, spec: ModelSpec, word: str) -> None:
    r.spec = spec
    name_resolution(r, word)
    variant = catalog.same_architecture_variant(word, spec)
    if catalog.finetune_base(word) == spec.id:  # "llama-3.1-nemotron-70b": Llama 3.1 70B
        r.assumed.append(f"finetune_of = {word.strip()} → {spec.name}")
    elif variant is not None:  # "qwen2.5-coder-14b": sized as Qwen2.5 14B, said so
        r.assumed.append(f"same_architecture = {word.strip()} → {spec.name}")


def set_format(r: Reading, fmt_id: str, origin: str) -> None:
    """A format named by a repo suffix, file name or tag (`origin`); the first one wins."""
    if "weights_format" not in r.fields and catalog.formats().get(fmt_id) is not None:
        r.fields["weights_format"] = fmt_id


# --- names with suffixes, peeled off until the catalog knows the rest -----------------------


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


def looks_like_model(name: str) -> bool:
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
        if looks_like_model(m.group("name")):
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
            use_model(r, spec, m.group(0))
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
        use_model(r, catalog.models()[table[vocab.squash(m.group(0))]], m.group(0))


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
                use_model(r, spec, candidate)
                if fmt:
                    set_format(r, fmt, "repo")
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
        use_model(r, spec, m.group(0))
        r.assumed.append(f"model = {spec.name}")
