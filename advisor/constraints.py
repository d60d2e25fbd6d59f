"""What a card can run: the requirements in data/capabilities.toml checked against a card's
facts (gpus.toml). Applied before ranking: a card that misses one is never a pick."""

from __future__ import annotations

import tomllib
from functools import cache

from pydantic import BaseModel

from advisor.catalog import DATA_DIR, GpuSpec, find_format
from advisor.memo import ByIdentity, Memo
from advisor.models.choices import Kind, Runtime
from advisor.models.result import EstimateResult

# The runtime an LLM answer assumes when none is named: vLLM serves, transformers trains.
SERVING_DEFAULT = Runtime.vllm


class Requirement(BaseModel):
    id: str
    formats: list[str] = []
    runtimes: list[str] = []
    training: bool | None = None
    compute: list[str] = []
    attention: list[str] = []
    kv: list[str] = []  # the KV cache type the estimate used (`kv_cache_type`)
    # Applies only when the 16-bit type was named by the user (true) or assumed (false):
    # an assumed bf16 is fp16 on a card without bf16 (same bytes), not a blocker.
    named: bool | None = None
    needs: str | None = None  # a card flag: fp8 | bf16 | fast_fp16
    min_cc: float | None = None
    vendors: list[str] = []
    # Applies to cards of these vendors only (empty: every card): FP8 off CUDA needs the
    # card's own FP8 (MI300-class), where on NVIDIA weight-only FP8 runs on older cards.
    only_on: list[str] = []
    # The runtime itself does not run on the card, whatever the format (vLLM on a Pascal
    # card or a Mac): the card's own LLM runtime is sized instead (recommend/fixes.py)
    engine: bool = False
    source: str
    read_date: str


@cache
def _data() -> dict:
    with (DATA_DIR / "capabilities.toml").open("rb") as fh:
        return tomllib.load(fh)


@cache
def requirements() -> tuple[Requirement, ...]:
    return tuple(Requirement(**r) for r in _data()["requirement"])


@cache
def engine_blocker_ids() -> frozenset[str]:
    """The requirements that keep a runtime itself off a card (`engine = true`)."""
    return frozenset(r.id for r in requirements() if r.engine)


@cache
def speed_constants() -> dict[str, float]:
    return {k: v for k, v in _data()["speed"].items() if isinstance(v, int | float)}


def offload_transfer() -> dict:
    """capabilities.toml [offload_transfer]: what a diffusion pipeline's CPU offload moves
    over PCIe per second (advisor/recommend/offload_speed.py)."""
    return dict(_data()["offload_transfer"])


def card_mfu_scale() -> dict[str, dict]:
    """capabilities.toml [speed.card_mfu]: cards whose training MFU is the rule's scaled by
    their measured matmul efficiency over H100's (card id -> its row)."""
    return dict(_data()["speed"].get("card_mfu", {}))


def speed_source() -> str:
    """capabilities.toml [speed]'s source line (the MFU and MoE constants)."""
    return str(_data()["speed"].get("source", ""))


def nvlinked(gpu: GpuSpec, count: int) -> bool:
    """Whether `count` cards talk over NVLink: datacenter boards (SXM / HGX) link all eight;
    consumer and workstation cards (3090, A6000) and PCIe datacenter cards (A100 PCIe,
    H100 PCIe / NVL) only in bridged pairs."""
    if gpu.has_nvlink and "nvlink" in gpu.shaky_fields:
        # a listing that may be either form (V100 "PCIe/SXM2"): its PCIe cards have no
        # NVLink, so the cards are taken to talk over PCIe (the slower, the safer claim)
        return False
    if not gpu.has_nvlink:
        # AMD's OAM boards join every card of a node by Infinity Fabric (architectures.toml)
        from advisor.architectures import architecture_of

        arch = architecture_of(gpu)
        return arch is not None and arch.peer_link is not None
    if gpu.nvlink_bridge_cards is not None:  # PCIe datacenter cards: bridged pairs only
        return count <= gpu.nvlink_bridge_cards
    return gpu.segment == "datacenter" or count <= _data()["interconnect"]["bridge_pair_cards"]


def apple_raised_limit_gb(gpu: GpuSpec) -> float | None:
    """The GPU's share of a Mac's unified memory after `sudo sysctl iogpu.wired_limit_mb`
    raises it, the memory less ~8 GB for macOS (data/pitfalls.toml apple_wired_limit); None
    on other cards, or where that leaves no more than 2 GB over the default."""
    if gpu.vendor != "Apple":
        return None
    top = gpu.vram_gb - 8
    return top if top >= gpu.usable_vram_gib + 2 else None


def allreduce_latency_s(gpu: GpuSpec, count: int) -> float:
    link = "nvlink" if nvlinked(gpu, count) else "pcie"
    return _data()["interconnect"][link]["allreduce_latency_us"] * 1e-6


def tp_ok(result: EstimateResult, count: int) -> bool:
    """Tensor parallelism splits attention heads: the count must divide them (a layer
    split, llama.cpp's, takes any count)."""
    arch = result.model.arch
    if count == 1 or arch is None or result.workload.mode.is_training:
        return True
    par = result.workload.parallelism
    assumed = next((a.value for a in result.assumed if a.field == "parallelism"), None)
    if (par.value if par is not None else assumed) not in (None, "tp"):
        return True
    # vLLM: num_attention_heads % tp == 0, and the KV heads split (kv % tp == 0) or are
    # replicated (tp % kv == 0). The query heads' test was once on one side of the "or"
    # only: Qwen2.5-7B (28/4 heads) was served on TP 8.
    heads, kv = arch.heads, arch.kv_heads_
    return heads % count == 0 and (kv % count == 0 or count % kv == 0)


def runtime_of(result: EstimateResult) -> str | None:
    """The runtime the answer assumes: the one asked for, else the one the engine assumed,
    else the usual one for the job."""
    w = result.workload
    if w.runtime is not None:
        return w.runtime.value
    assumed = next((a.value for a in result.assumed if a.field == "runtime"), None)
    if assumed:
        return assumed
    if w.framework:
        return w.framework.lower()
    if result.model.kind == Kind.llm:
        return "transformers" if w.mode.is_training else SERVING_DEFAULT.value
    return None


def compute_dtype(result: EstimateResult) -> str:
    """The type the workload computes in: named, else fp32 for a CNN / detector / segmentor
    trained without autocast (its configs' default: the estimate assumed no AMP recipe),
    else bf16 (the usual default)."""
    w = result.workload
    if w.compute_dtype:
        return w.compute_dtype
    name = weights_format(result)
    fmt = find_format(name) if name else None
    if fmt is not None and fmt.id in ("fp16", "fp32"):
        return fmt.id
    if _trains_classic_in_fp32(result):
        return "fp32"
    return "bf16"


def _trains_classic_in_fp32(result: EstimateResult) -> bool:
    """A classic network trained as its configs train it when nothing names a precision:
    fp32, unless the estimate took its trainer's AMP default (assumption training_recipe)."""
    w = result.workload
    if result.model.kind != Kind.classic or not w.mode.is_training or w.mixed_precision:
        return False
    return not any(a.field == "training_recipe" for a in result.assumed)


def has_fast_fp16(gpu: GpuSpec) -> bool:
    """Whether an NVIDIA card computes fp16 at least at its fp32 rate (capabilities.toml
    [fast_fp16]: compute capability 6.0, 6.2 and 7.0+; 6.1 runs it at 1/64, 5.x and older
    have no fp16 arithmetic). Other vendors and cards of unknown capability: taken as yes."""
    if gpu.vendor != "NVIDIA" or gpu.cc <= 0:
        return True
    table = _data()["fast_fp16"]
    return gpu.cc >= table["min_cc"] or gpu.cc in table["also_cc"]


def compute_named(result: EstimateResult) -> bool:
    """Whether the user named the 16-bit type (compute dtype, or 16-bit weights)."""
    w = result.workload
    fmt = find_format(w.weights_format) if w.weights_format else None
    return w.compute_dtype is not None or (fmt is not None and fmt.id in ("bf16", "fp16", "fp32"))


def weights_format(result: EstimateResult) -> str | None:
    """The weights' format as computed: asked, else the one the engine assumed (a model's
    own default: fp8 for DeepSeek-V3, MXFP4 for gpt-oss)."""
    w = result.workload
    if w.weights_format:
        return w.weights_format
    return next((a.value for a in result.assumed if a.field == "weights_format"), None)


def kv_cache_type(result: EstimateResult) -> str | None:
    """The KV cache type the question set ("int8 kv cache", "-ctk q8_0") as the estimate
    used it: a type the runtime lacks is the one it was answered with (int4 under vLLM is
    its fp8; the assumption `kv_cache_dtype_unsupported` says why). None when none was set."""
    w = result.workload
    if not w.kv_cache_dtype or w.mode.is_training:
        return None
    for a in result.assumed:
        if a.field in ("kv_cache_dtype_unsupported", "kv_cache_without_flash_attention"):
            used = str(a.value).split("→", 1)[-1].split("(", 1)[0].strip()
            return used or w.kv_cache_dtype
    return w.kv_cache_dtype


def _card_has(req: Requirement, gpu: GpuSpec) -> bool:
    if req.only_on and gpu.vendor not in req.only_on:
        return True
    if req.vendors and gpu.vendor not in req.vendors:
        return False
    if req.needs == "fp8" and not gpu.fp8_supported:
        return False
    if req.needs == "bf16" and not gpu.bf16_supported:
        return False
    if req.needs == "fast_fp16" and not has_fast_fp16(gpu):
        return False
    # Compute capability is an NVIDIA notion; other vendors are judged by `vendors`.
    return not (req.min_cc is not None and gpu.vendor == "NVIDIA" and 0 < gpu.cc < req.min_cc)


# Requirements by estimate (advisor.memo): asked for each estimate by the search over cards,
# the fixes and the pitfalls of a recommendation.


def applicable(result: EstimateResult) -> list[Requirement]:
    """The requirements this workload has (the same for every card). Shared: read only."""
    return _applicable(result)


def _applicable(result: EstimateResult) -> list[Requirement]:
    return _matching(requirements(), result)


def _matching(rows: tuple[Requirement, ...], result: EstimateResult) -> list[Requirement]:
    """The rows (requirements or advisories) this workload meets: every condition a row
    sets holds (weights format, runtime, training or not, compute type, a named 16-bit
    type, attention, KV cache type). A function of the table and these facts of the workload, which
    take a handful of values: kept per table (advisor.memo), as every estimate of a
    recommendation (each count, each fix tried) asks. Shared: read only."""
    w = result.workload
    name = weights_format(result)
    fmt = find_format(name) if name else None
    facts = (
        fmt.id if fmt is not None else None,
        runtime_of(result),
        w.mode.is_training,
        compute_dtype(result),
        compute_named(result),
        w.attention.value if w.attention is not None else None,
        kv_cache_type(result),
    )
    return _MATCHING.get((id(rows), facts), lambda: _rows_matching(rows, *facts))


# Rows by table and workload facts (advisor.memo): the tables are read once per process
# (`requirements`, `advisories_table`), so a table's identity names it.
_MATCHING: Memo[list[Requirement]] = Memo("matching_rows", 512, table=True)


def _rows_matching(
    rows: tuple[Requirement, ...],
    fmt_id: str | None,
    runtime: str | None,
    training: bool,
    compute: str,
    named: bool,
    attention: str | None,
    kv: str | None,
) -> list[Requirement]:
    out = []
    for req in rows:
        if req.kv and kv not in req.kv:
            continue
        if req.formats and (fmt_id is None or fmt_id not in req.formats):
            continue
        if req.runtimes and runtime not in req.runtimes:
            continue
        if req.training is not None and req.training != training:
            continue
        if req.compute and compute not in req.compute:
            continue
        if req.named is not None and req.named != named:
            continue
        if not req.attention or attention in req.attention:
            out.append(req)
    return out


# What each card lacks (advisor.memo, per card: a function of the two catalogs alone): the
# ids of the requirement and advisory rows it misses. Every answer asks it of every card.
_LACKS: ByIdentity[frozenset[int]] = ByIdentity("card_lacks", 512, table=True)


@cache
def _rows() -> frozenset[int]:
    """The ids of the requirement and advisory rows (`_LACKS` knows these)."""
    return frozenset(id(r) for r in (*requirements(), *advisories_table()))


def _lacks(gpu: GpuSpec) -> frozenset[int]:
    def table() -> frozenset[int]:
        rows = (*requirements(), *advisories_table())
        return frozenset(id(r) for r in rows if not _card_has(r, gpu))

    return _LACKS.of(gpu, table)


def _missing(reqs: list[Requirement], gpu: GpuSpec) -> list[str]:
    """The ids of `reqs` the card lacks: by the card's table for the catalog's rows, by
    `_card_has` for any other (a row built elsewhere)."""
    if not reqs:
        return []  # most workloads: nothing to look up
    lacks, rows = _lacks(gpu), _rows()
    return [r.id for r in reqs if id(r) in lacks or (id(r) not in rows and not _card_has(r, gpu))]


def blockers(
    gpu: GpuSpec, result: EstimateResult, reqs: list[Requirement] | None = None
) -> list[str]:
    """Codes of the requirements this workload has that the card misses (none for a card
    known only by its memory size)."""
    if gpu.spec_confidence == "unknown":
        return []
    return _missing(applicable(result) if reqs is None else reqs, gpu)


@cache
def advisories_table() -> tuple[Requirement, ...]:
    return tuple(Requirement(**r) for r in _data().get("advisory", []))


def advisories(gpu: GpuSpec, result: EstimateResult) -> list[str]:
    """Codes of kernels this workload would like that the card lacks (runs, but slower)."""
    if gpu.spec_confidence == "unknown":
        return []
    wanted = _matching(advisories_table(), result)
    return _missing(wanted, gpu)
