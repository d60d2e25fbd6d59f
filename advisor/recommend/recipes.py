"""The low-VRAM recipe a diffusion pipeline is run with on a small card.

People do not run SDXL at batch 4 on a 12 GB card, or FLUX NF4 on 8 GB, with every
component resident: they slice and tile the VAE decode, let components take turns on the
GPU, keep the text encoders off it, or stream layers from RAM (diffusers' own knobs, and
what ComfyUI does by itself). When the user names a card, asks for none of these knobs
and the job does not fit as loaded by default, the answer is for the first rung of
`data/small_card_recipes.toml` that fits, stated in the answer, so the verdict, the figure
and the fixes all describe the same setup.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache, partial
from typing import Any

from advisor.catalog import DATA_DIR, GpuSpec, find_format, find_model
from advisor.constraints import blockers
from advisor.memory import estimate, video
from advisor.models.choices import Kind, Mode, Offload, Optimizer, Runtime
from advisor.models.result import EstimateResult
from advisor.models.workload import Workload
from advisor.recommend.headroom import HEADROOM

# Adapter recipes on a frozen base: the base may be stored smaller (a full fine-tune
# updates the weights themselves, so their storage is the user's choice).
ADAPTER_MODES = (Mode.lora, Mode.qlora, Mode.dora, Mode.ia3)


@dataclass(frozen=True)
class Rung:
    code: str
    updates: dict[str, Any]
    images_only: bool
    slow: bool
    trainers: tuple[str, ...] = ()  # the named trainers that have it (empty: all)
    full: bool = False  # a full fine-tune's recipe (no base to store smaller), not an adapter's
    denoisers: tuple[str, ...] = ()  # the denoiser kinds it is written for (empty: all)
    chunked_decode: bool = False  # only where the pipeline's decode chunk is a setting


@cache
def rungs(training: bool) -> tuple[Rung, ...]:
    with (DATA_DIR / "small_card_recipes.toml").open("rb") as fh:
        data = tomllib.load(fh)
    return tuple(
        Rung(
            code=r["code"],
            updates=dict(r["set"]),
            images_only=bool(r.get("images", False)),
            slow=bool(r.get("slow", False)),
            trainers=tuple(r.get("trainers", ())),
            full=bool(r.get("full", False)),
            denoisers=tuple(r.get("denoisers", ())),
            chunked_decode=bool(r.get("chunked_decode", False)),
        )
        for r in data["training" if training else "inference"]
    )


def _images(w: Workload) -> int:
    return (w.images_per_prompt or 1) * (w.batch_size or 1)


def _bits(fmt: str | None) -> float:
    spec = find_format(fmt) if fmt else None
    return spec.bits if spec is not None else 16.0


def asks_no_knobs(w: Workload, kind: Kind) -> bool:
    """The user set none of the knobs a recipe sets: the engine may choose them. A user who
    named an offload mode, block swap, slicing, tiling or (for training) the base's format
    has chosen: "blockswap 20" is answered as asked, with its fixes, not replaced by the
    engine's own offload."""
    if kind != Kind.diffusion:
        return False
    if w.mode.is_training:
        return w.mode in ADAPTER_MODES and w.weights_format is None
    return (
        w.cpu_offload == Offload.none
        and not w.blocks_to_swap
        and not w.vae_slicing
        and not w.vae_tiling
        and w.decode_chunk_frames is None
        and w.text_encoders_on_gpu
        and w.runtime not in (Runtime.comfyui, Runtime.webui)  # they manage memory themselves
    )


def recipe_fixes(result: EstimateResult) -> Iterator[tuple[str, Callable[[], Workload]]]:
    """The rungs that change something for this workload, cheapest first: the recipe
    ladder, and the diffusion fixes offered when a setup does not fit."""
    for rung, make in _applicable(result):
        yield rung.code, make


def _applicable(result: EstimateResult) -> Iterator[tuple[Rung, Callable[[], Workload]]]:
    w = result.workload
    if result.model.kind != Kind.diffusion:
        return
    training = w.mode.is_training
    full = training and w.mode not in ADAPTER_MODES
    current = w.model_dump()
    # the base the estimate used: asked, else assumed (kohya's full fine-tune keeps fp32)
    base = w.weights_format or next(
        (a.value for a in result.assumed if a.field == "weights_format"), None
    )
    # checkpointing the estimate assumed on (a stack's default) is as good as set: a rung
    # that only turns it on changes nothing
    have = dict(current)
    if current.get("gradient_checkpointing") is None and any(
        a.field == "gradient_checkpointing" and a.value == "on" for a in result.assumed
    ):
        have["gradient_checkpointing"] = True
    offered: list[dict[str, Any]] = []  # what each rung offered so far changes
    for rung in rungs(training):
        if training and rung.full != full:
            continue  # a full fine-tune gets the full rungs only, an adapter the others
        if rung.denoisers and _denoiser(result) not in rung.denoisers:
            continue  # "the U-Net trained alone" is no recipe for a DiT
        if rung.images_only and _images(w) <= 1:
            continue
        if rung.chunked_decode and not _chunk_setting(result):
            continue  # decode_chunk_size is a setting of the SVD pipeline, not of every VAE
        if not trainer_has(rung, w, _family(result)):
            continue
        fmt = rung.updates.get("weights_format")
        if fmt is not None and _bits(fmt) >= _bits(base):
            continue  # never a larger base than asked
        change = {k: v for k, v in rung.updates.items() if not _same(have.get(k), v)}
        if not change or change in offered:
            continue  # nothing new: a rung whose other settings the user already chose
        offered.append(change)
        yield rung, partial(w.model_copy, update=_typed(rung.updates))


def _chunk_setting(result: EstimateResult) -> bool:
    geo = video.geometry(result.model.id)
    return geo is not None and geo.chunk_setting


def _denoiser(result: EstimateResult) -> str:
    spec = find_model(result.model.id) if result.model.id else None
    d = spec.diffusion if spec is not None else None
    return d.denoiser if d is not None else ""


def trainer_has(rung: Rung, w: Workload, family: str = "") -> bool:
    """A trainer the user named offers only its own recipes (kohya has no 4-bit base, and
    block swap is kohya's); with none named, the blocks_to_swap-only rungs stay kohya's, and
    a trainer's own rung is offered for a model one of its trainers trains. A UI that offers
    only its presets (FluxGym) gets those alone, and they only when it is named."""
    named = (w.framework or (w.runtime.value if w.runtime else "")).lower()
    if not rung.trainers:
        return named not in _presets_only()
    if rung.full:
        return named in rung.trainers  # a trainer's own full fine-tune recipe: when named
    if not named:
        if set(rung.trainers) & set(_presets_only()):
            return False  # a UI's presets are its own answer: only when it is named
        return "blocks_to_swap" not in rung.updates and _trained_by(rung.trainers, family)
    return named in rung.trainers


@cache
def _trainer_families() -> dict[str, tuple[str, ...]]:
    with (DATA_DIR / "small_card_recipes.toml").open("rb") as fh:
        table = tomllib.load(fh).get("trainer_families", {})
    return {name: tuple(families) for name, families in table.items()}


@cache
def _presets_only() -> tuple[str, ...]:
    with (DATA_DIR / "small_card_recipes.toml").open("rb") as fh:
        return tuple(tomllib.load(fh).get("presets_only", {}).get("trainers", ()))


def _trained_by(trainers: tuple[str, ...], family: str) -> bool:
    """Whether one of these trainers trains the family (data/small_card_recipes.toml
    [trainer_families]; a trainer it does not list trains any)."""
    known = _trainer_families()
    return any(t not in known or not family or family in known[t] for t in trainers)


def _family(result: EstimateResult) -> str:
    spec = find_model(result.model.id) if result.model.id else None
    return spec.family if spec is not None else ""


def _same(have: Any, want: Any) -> bool:
    return (have.value if hasattr(have, "value") else have) == want


def _typed(updates: dict[str, Any]) -> dict[str, Any]:
    """model_copy does not validate: enum fields get their enum."""
    out = dict(updates)
    if "cpu_offload" in out:
        out["cpu_offload"] = Offload(out["cpu_offload"])
    if "optimizer" in out:
        out["optimizer"] = Optimizer(out["optimizer"])
    return out


def small_card_recipe(
    result: EstimateResult, gpu: GpuSpec, cap_comfortable: int, cap_tight: int
) -> tuple[str, Workload] | None:
    """The rung the answer is for, in this order of preference: the first that fits `gpu`
    with the guide's headroom (`cap_comfortable` bytes) at full speed, the first that fits
    at all (`cap_tight`) at full speed, then the same among the slow rungs. None when the
    user chose the knobs or no rung fits."""
    if not asks_no_knobs(result.workload, result.model.kind):
        return None
    best: dict[tuple[bool, bool], tuple[str, Workload]] = {}
    for rung, make in _applicable(result):
        w = make()
        trial = estimate(w)
        if trial.estimate is None or blockers(gpu, trial):
            continue
        total = trial.estimate.total_bytes
        if total <= cap_tight:
            best.setdefault((rung.slow, total > cap_comfortable), (rung.code, w))
        if (False, False) in best:
            break
    for key in ((False, False), (False, True), (True, False), (True, True)):
        if key in best:
            return best[key]
    return None


# Offload levels, least first: a route is faster when it needs a lower one.
OFFLOAD_LEVEL = {Offload.none: 0, Offload.model: 1, Offload.sequential: 2}
# Smaller stored formats a diffusion pipeline is published or loaded in (ComfyUI's fp8
# checkpoints and weight_dtype fp8_e4m3fn, diffusers layerwise fp8 casting; bitsandbytes
# int8 / NF4), tried in this order; the text encoders go with them (ComfyUI's FLUX fp8
# workflow loads t5xxl_fp8_e4m3fn; the quantize fix does the same).
SMALLER_FORMATS = ("fp8", "int8", "nf4")
# What each level's route sets beside the format: the decode tiled (the same images), and
# for model offload the components taking turns.
ROUTE_SETTINGS: tuple[dict[str, Any], ...] = (
    {"vae_slicing": True, "vae_tiling": True},
    {"cpu_offload": Offload.model, "vae_slicing": True, "vae_tiling": True},
)


def faster_route(asked: EstimateResult, run: Workload, gpu: GpuSpec) -> str | None:
    """`faster_route_run`'s fix code alone."""
    found = faster_route_run(asked, run, gpu)
    return found[0] if found else None


def faster_route_run(
    asked: EstimateResult, run: Workload, gpu: GpuSpec
) -> tuple[str, EstimateResult] | None:
    """Where the recipe a small card runs offloads weights to the CPU: the first smaller
    format whose pipeline fits `gpu` with the guide's headroom at a lower offload level
    (FLUX.1-dev fp16 streamed on a 24 GB card: its fp8 transformer and T5 run resident).
    A fix code, `quantize_resident:<fmt>` or `quantize_model_offload:<fmt>`, and its
    estimate; None when the recipe offloads nothing or no smaller format helps."""
    level = OFFLOAD_LEVEL.get(run.cpu_offload, 0)
    if level == 0 or asked.model.kind != Kind.diffusion or asked.workload.mode.is_training:
        return None
    w = asked.workload
    asked_bits = _bits(w.weights_format or _assumed_format(asked))
    cap = int(gpu.usable_vram_bytes * (1 - HEADROOM))  # the guide's headroom
    for fmt in SMALLER_FORMATS:
        if _bits(fmt) >= asked_bits:
            continue
        for settings in ROUTE_SETTINGS:
            if OFFLOAD_LEVEL[settings.get("cpu_offload", Offload.none)] >= level:
                continue
            trial_w = w.model_copy(
                update={"weights_format": fmt, "text_encoder_format": fmt, **settings}
            )
            trial = estimate(trial_w)
            if trial.estimate is None or blockers(gpu, trial):
                continue
            if trial.estimate.total_bytes <= cap:
                where = "resident" if "cpu_offload" not in settings else "model_offload"
                return f"quantize_{where}:{fmt}", trial
    return None


def _assumed_format(result: EstimateResult) -> str | None:
    return next((a.value for a in result.assumed if a.field == "weights_format"), None)
