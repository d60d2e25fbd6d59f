"""Catalogs as data: models, number formats, GPUs, prices and the guide's task tables.

Everything is read once from `advisor/data/*.toml` (or an operator's price file) and
validated into pydantic models (advisor/specs.py), so a typo in a data file fails at
start-up, not in a chat.
"""

from __future__ import annotations

import difflib
import re
import tomllib
from functools import cache
from pathlib import Path

# ModelSpec and GpuSpec are named through the catalog by most of the engine: re-exported here.
from advisor.specs import FormatSpec, GpuSpec, ModelSpec, PriceSpec, TaskSpec

DATA_DIR = Path(__file__).resolve().parent / "data"


def _load(name: str) -> dict:
    with (DATA_DIR / name).open("rb") as fh:
        return tomllib.load(fh)


@cache
def models() -> dict[str, ModelSpec]:
    # models.toml plus one file per family under data/models/ (added as the catalog grows)
    raw = list(_load("models.toml")["model"])
    for path in sorted((DATA_DIR / "models").glob("*.toml")):
        raw += _load(f"models/{path.name}")["model"]
    specs = [ModelSpec(**m) for m in raw]
    by_id = {m.id: m for m in specs}
    if len(by_id) != len(specs):
        dup = sorted({m.id for m in specs if sum(o.id == m.id for o in specs) > 1})
        raise ValueError(f"models: duplicate ids {dup}")
    return by_id


@cache
def formats() -> dict[str, FormatSpec]:
    raw = _load("formats.toml")
    return {k: FormatSpec(id=k, **v) for k, v in raw.items() if k != "kv"}


@cache
def kv_cache_bytes_per_element() -> dict[str, float]:
    return {k: v["bytes"] for k, v in _load("formats.toml")["kv"].items()}


@cache
def gpus() -> dict[str, GpuSpec]:
    # gpus.toml is generated from the research catalog; gpus_owned.toml holds the cards
    # people own that it lacks (no prices), kept by hand beside it.
    raw = list(_load("gpus.toml")["gpu"]) + list(_load("gpus_owned.toml")["gpu"])
    specs = [GpuSpec(**g) for g in raw] + apple_gpus()
    by_id = {g.id: g for g in specs}
    if len(by_id) != len(specs):
        raise ValueError("gpus: an id is in both gpus.toml and gpus_owned.toml")
    return by_id


def lacks_bf16(pick) -> bool:  # noqa: ANN001
    """The card an answer is about (its headline option, anything with a gpu_id) has no bf16
    (T4, V100, Pascal)."""
    gpu = gpus().get(pick.gpu_id) if pick is not None else None
    return gpu is not None and gpu.vendor == "NVIDIA" and not gpu.bf16_supported


def apple_gpus() -> list[GpuSpec]:
    """data/gpus_apple.toml: one entry per Apple chip and memory size. The GPU gets the
    macOS default share of the unified memory (2/3 below 64 GB, 3/4 from 64 GB); the bare
    chip name ("m2 max") is its smallest size, a base chip's ("m3") only after a Mac's name
    ("macbook air m3": parse/card_names.py reads a Mac's name as "apple"; `bare = false`)."""
    data = _load("gpus_apple.toml")
    share = data["share"]
    out = []
    for chip in data["chip"]:
        short = chip["id"].replace("-", " ")  # "m2 max"
        for i, mem in enumerate(chip["memory_gb"]):
            part = share["below_64gb"] if mem < 64 else share["from_64gb"]
            bandwidth = chip.get("bandwidth_by_memory", {}).get(str(mem), chip["bandwidth_gbs"])
            aliases = [f"{short} {mem}gb", f"{short} {mem}g", f"apple {short} {mem}gb"]
            if i == 0:  # "m1" alone is also MiniMax-M1: a base chip needs a Mac's name
                aliases += [f"apple {short}"] + ([short] if chip.get("bare", True) else [])
            out.append(
                GpuSpec(
                    id=f"apple-{chip['id']}-{mem}gb",
                    name=f"{chip['name']} {mem}GB",
                    vendor="Apple",
                    segment="consumer",
                    architecture="Apple Silicon (unified memory)",
                    launch_year=chip["launch_year"],
                    vram_gb=mem,
                    usable_vram_gib=round(mem * part, 2),
                    memory_type="unified LPDDR",
                    memory_bandwidth_gbs=bandwidth,
                    fp32_tflops=chip["fp32_tflops"],
                    fp16_bf16_tensor_dense_tflops=chip["fp32_tflops"],
                    bf16_supported=chip["bf16"],
                    spec_confidence="low",
                    spec_notes=(
                        f"Unified memory: the GPU may use ~{part:.0%} by default; "
                        f"`sudo sysctl {share['sysctl']}=N` raises it. Runs llama.cpp, MLX, "
                        "Ollama, LM Studio; no CUDA (no vLLM, bitsandbytes/QLoRA, "
                        "FlashAttention-2)."
                    ),
                    spec_read_date="2026-12-07",
                    aliases=aliases,
                    shaky_fields=["fp32_tflops", "fp16_bf16_tensor_dense_tflops"],
                    sources=[
                        "data/gpus_apple.toml (Apple product pages; GPU share measured "
                        "by llmfit, exo, GPUStack, antirez/ds4)"
                    ],
                    rentable=False,
                )
            )
    return out


@cache
def rented_gpus() -> tuple[GpuSpec, ...]:
    """Every card a platform rents, in catalog order, as a rental is planned: a merged entry
    (`rented_as`) with its smaller variant's memory and name, under its own id (its prices)."""
    by_id = gpus()
    out = []
    for g in by_id.values():
        if not g.rentable:
            continue
        small = by_id.get(g.rented_as) if g.rented_as else None
        if small is not None and small.usable_vram_gib < g.usable_vram_gib:
            g = g.model_copy(
                update={
                    "name": small.name,
                    "vram_gb": small.vram_gb,
                    "usable_vram_gib": small.usable_vram_gib,
                }
            )
        out.append(g)
    return tuple(out)


@cache
def platforms() -> dict:
    """data/platforms.toml: rental platforms by region, free tiers and the dollar rate."""
    return _load("platforms.toml")


def cny_per_usd() -> float:
    """One dollar in yuan, for comparing prices only (an answer that converts says so)."""
    return platforms()["conversion"]["cny_per_usd"]


@cache
def tasks() -> list[TaskSpec]:
    return [TaskSpec(**t) for t in _load("tasks.toml")["task"]]


def load_prices(path: Path | None = None) -> list[PriceSpec]:
    """The packaged price list, or an operator's file of the same shape."""
    if path is None:
        return list(_default_prices())
    with Path(path).open("rb") as fh:
        raw = tomllib.load(fh)
    return [PriceSpec(**p) for p in raw.get("price", [])]


@cache
def _default_prices() -> tuple[PriceSpec, ...]:
    return tuple(PriceSpec(**p) for p in _load("prices.toml")["price"])


def normalize_name(text: str) -> str:
    """Lower-case, unify separators: 'Qwen2.5 7B-Instruct' -> 'qwen2.5-7b-instruct'."""
    text = text.strip().lower()
    text = text.split("/")[-1]  # an org/name HF id names the model by its last part
    text = _SPACES.sub("-", text)
    text = _DASHES.sub("-", text)
    return text.strip("-")


_SPACES = re.compile(r"[\s_]+")
_SIBLING_SUFFIX = re.compile(r"-(i2v|t2v)$")
_SAME_ARCH_VARIANT = re.compile(r"-(coder|math)(?=-)")
_DASHES = re.compile(r"-+")


@cache
def _model_index() -> dict[str, str]:
    index: dict[str, str] = {}
    for spec in models().values():
        for name in [spec.id, spec.name, *spec.aliases]:
            if normalize_name(name).isdigit():
                continue  # "vit-b/16" must not make "16" a model name
            index.setdefault(normalize_name(name), spec.id)
            index.setdefault(normalize_name(name).replace("-", ""), spec.id)
    return index


# find_model's answers by the name as given: the parser tries every run of up to four words
# of a line as a name, and the catalog is loaded once per process.
_MODEL_BY_NAME: dict[str, ModelSpec | None] = {}


def find_model(name: str) -> ModelSpec | None:
    """Exact match on id, name or alias after normalisation (no fuzzy guess)."""
    try:
        return _MODEL_BY_NAME[name]
    except KeyError:
        pass
    found = _find_model(name)
    if len(_MODEL_BY_NAME) < 4096:  # bounded: names come from users' text too
        _MODEL_BY_NAME[name] = found
    return found


def _find_model(name: str) -> ModelSpec | None:
    key = normalize_name(name)
    index = _model_index()
    model_id = index.get(key) or index.get(key.replace("-", ""))
    if model_id is None:
        # Instruction-tuned or chat variants share the base model's memory footprint.
        stripped = _CHAT_SUFFIX.sub("", key)
        model_id = index.get(stripped)
    if model_id is None:
        # a fine-tune published under its own name, its base's architecture (finetunes.toml)
        model_id = finetune_base(key)
    if model_id is None:
        # A video model's image-to-video / text-to-video sibling published under the base
        # name + "-I2V" / "-T2V" (tencent/HunyuanVideo-I2V: the same 13B transformer, the
        # conditioning image's latent concatenated on its input channels and its tokens
        # given to the same text encoder; README, read 2026-12-07) is sized as the base.
        base = _SIBLING_SUFFIX.sub("", key)
        sibling = index.get(base) if base != key else None
        if sibling is not None and models()[sibling].diffusion is not None:
            model_id = sibling
    if model_id is None and (base := _SAME_ARCH_VARIANT.sub("", key, count=1)) != key:
        # A code or maths model published under its base's name + "-Coder" / "-Math"
        # (Qwen2.5-Coder-14B, Qwen2.5-Math-7B, Qwen3-Coder-30B-A3B) is its base's
        # architecture trained further: the same config.json shapes (Qwen2.5-Coder
        # technical report, arXiv 2409.12186 §2 "Model Architecture", Table 1: 0.5B-32B as
        # Qwen2.5; Qwen2.5-Math report, arXiv 2409.12122 §2: initialised from Qwen2.5;
        # read 2026-12-07), sized as the base; the answer names the variant.
        found = _find_model(base)
        model_id = found.id if found is not None else None
    return models()[model_id] if model_id else None


@cache
def _finetunes() -> dict[str, tuple[str, str]]:
    """data/finetunes.toml: a fine-tune's normalised name -> (its base's id, source)."""
    return {
        normalize_name(row["name"]): (row["base"], row["source"])
        for row in _load("finetunes.toml")["finetune"]
    }


_CHAT_SUFFIX = re.compile(r"-(instruct|chat|it|base|hf|fp16|bf16)$")


def finetune_base(name: str) -> str | None:
    """The catalog id a fine-tune that keeps its base's architecture is sized as
    ("llama-3.1-nemotron-70b-instruct" -> llama-3.1-70b), else None."""
    key = normalize_name(name).replace(":", "-")
    for _ in range(2):  # "-instruct-hf": peeled one suffix at a time
        row = _finetunes().get(key) or _finetunes().get(_CHAT_SUFFIX.sub("", key))
        if row is not None:
            return row[0]
        key = _CHAT_SUFFIX.sub("", key)
    return None


def same_architecture_variant(name: str, spec: ModelSpec) -> str | None:
    """The "coder" / "math" of a name read as `spec`, its base ("qwen2.5-coder-14b" ->
    Qwen2.5 14B), else None."""
    m = _SAME_ARCH_VARIANT.search(normalize_name(name).replace(":", "-"))
    if m is None or m.group(1) in spec.id or m.group(1) in spec.name.lower():
        return None
    return m.group(1)


def _close_ids(key: str, index: dict[str, str], n: int, cutoff: float) -> list[str]:
    """Up to n distinct catalog ids whose index keys are close to `key`."""
    out: list[str] = []
    for hit in difflib.get_close_matches(key, list(index), n=n * 3, cutoff=cutoff):
        if index[hit] not in out:
            out.append(index[hit])
    return out[:n]


def close_model_names(name: str, n: int = 3) -> list[str]:
    return _close_ids(normalize_name(name), _model_index(), n, cutoff=0.6)


@cache
def _format_index() -> dict[str, str]:
    index: dict[str, str] = {}
    for spec in formats().values():
        for name in [spec.id, *spec.aliases]:
            index.setdefault(name.lower(), spec.id)
    return index


# find_format's answers by the name as given: the catalog is loaded once per process
# (`@cache` above) and a recommendation asks tens of thousands of times for a few names.
_FORMAT_BY_NAME: dict[str, FormatSpec | None] = {}


def find_format(name: str) -> FormatSpec | None:
    try:
        return _FORMAT_BY_NAME[name]
    except KeyError:
        pass
    key = name.strip().lower()
    fmt_id = _format_index().get(key) or _format_index().get(key.replace("-", "_"))
    found = formats()[fmt_id] if fmt_id else None
    if len(_FORMAT_BY_NAME) < 4096:  # bounded: names come from users' text too
        _FORMAT_BY_NAME[name] = found
    return found


@cache
def _gpu_index() -> dict[str, str]:
    index: dict[str, str] = {}
    for spec in gpus().values():
        names = [spec.id, spec.name, *spec.aliases]
        for name in names:
            key = re.sub(r"[\s_\-]+", "", name.lower())
            index.setdefault(key, spec.id)
    # Common short names pick the variant rental platforms list most often.
    for short, gpu_id in {
        "a100": "a100-80gb-pcie",
        "a10080g": "a100-80gb-pcie",
        "a10040g": "a100-40gb-pcie",
        "h100": "h100-sxm",
        "h10080g": "h100-sxm",
        "v100": "tesla-v100",
        "t4": "tesla-t4",
        "4090": "rtx-4090",
        "4090d": "rtx-4090d",
        "3090": "rtx-3090",
        "5090": "rtx-5090",
        "a800": "a800-80gb",
        "a6000": "rtx-a6000",
        "6000ada": "rtx-6000-ada",
        "910b": "ascend-910b",
    }.items():
        index.setdefault(short, gpu_id)
    return index


def find_gpu(name: str) -> GpuSpec | None:
    key = re.sub(r"[\s_\-]+", "", name.strip().lower())
    key = re.sub(r"^(nvidia|geforce|tesla)", "", key)
    for candidate in (key, key.removeprefix("rtx"), "rtx" + key):
        gpu_id = _gpu_index().get(candidate)
        if gpu_id:
            return gpus()[gpu_id]
    return None


def close_gpu_names(name: str, n: int = 3) -> list[str]:
    return _close_ids(re.sub(r"[\s_\-]+", "", name.strip().lower()), _gpu_index(), n, cutoff=0.5)


def search_gpus(text: str) -> tuple[list[GpuSpec], int | None]:
    """Cards for `/gpus <text>`, smallest first: "24g" means at least 24 GB (a 24 GB card
    reports 23.6-23.8 GiB usable, hence the 7% allowance), anything else matches a name,
    id or alias. Also returns the GB floor when one was asked for."""
    text = text.strip().lower()
    cards = list(gpus().values())
    min_gb = None
    if m := re.fullmatch(r"(\d+)\s*g(?:b|ib)?", text):
        min_gb = int(m.group(1))
        cards = [g for g in cards if g.usable_vram_gib >= min_gb * 0.93]
    elif text:
        cards = [g for g in cards if text in g.id or text in g.name.lower() or text in g.aliases]
    return sorted(cards, key=lambda g: (g.vram_gb, g.name)), min_gb


@cache  # the catalog is loaded once per process; every memo key starts with this stamp
def catalog_version() -> str:
    """A short stamp stored with each answer: which data it was computed from."""
    return f"models:{len(models())}/gpus:{len(gpus())}/prices:{len(_default_prices())}@2026-11-30"
