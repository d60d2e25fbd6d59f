"""A purchase line naming several jobs: sizes with their task words ("32b推理和7b lora微调")
or two catalog models with their own ("wan2.1 14b 视频生成和flux lora训练"), each sized as
asked for the answer's title (advisor/kinds/purchase.py picks the job that decides the plan)."""

from __future__ import annotations

from collections.abc import Callable

from advisor import catalog
from advisor.catalog import GpuSpec
from advisor.kinds.purchase_fit import fit_recipe
from advisor.memory import estimate
from advisor.models.choices import Mode
from advisor.models.workload import Workload


def heaviest_job(
    w: Workload, jobs: list[tuple[float, str]]
) -> tuple[Workload, list[Workload], list[tuple[str, str, float]]]:
    """A line naming several jobs ("32b推理和7b lora微调"): the machine runs them one at a
    time, so it is sized for the one needing the most memory per card; each job's label
    (size and task) for the answer's title, in the order written."""
    runs = [
        w.model_copy(update={"model": None, "params_b": size, "mode": Mode(mode)})
        for size, mode in jobs
    ]
    return _sized(runs, [f"{size:g}B" for size, _ in jobs])


def model_jobs(
    w: Workload, second: tuple[str, str | None], more: list[tuple[str, str | None]] | None = None
) -> tuple[Workload, list[Workload], list[tuple[str, str, float]]]:
    """ "wan2.1 14b 视频生成和flux lora训练": the line's model with its task and a second
    catalog model with its own (else the line's), each sized as asked; the machine is sized
    for the one needing the most memory."""
    runs, first = [w], catalog.models().get(w.model or "")
    labels = [first.name if first else "?"]
    for model_id, task in [second, *(more or [])]:  # the third and later models alike
        spec = catalog.models()[model_id]
        mode = Mode(task) if task else w.mode
        runs.append(Workload(kind=spec.kind, model=spec.id, mode=mode, num_gpus=w.num_gpus))
        labels.append(spec.name)
    return _sized(runs, labels)


def _sized(
    runs: list[Workload], labels: list[str]
) -> tuple[Workload, list[Workload], list[tuple[str, str, float]]]:
    """The job needing the most memory, every job, and each job's (label, Mode value,
    GiB as asked) for the answer."""
    needs = [estimate(r).estimate for r in runs]
    gib = [n.total_bytes / 2**30 if n is not None else 0.0 for n in needs]
    sized = runs[max(range(len(runs)), key=lambda i: gib[i])]
    return (
        sized,
        runs,
        [(lab, r.mode.value, g) for lab, r, g in zip(labels, runs, gib, strict=True)],
    )


def deciding_job(
    runs: list[Workload], heaviest: Workload, cost: Callable[[Workload], float]
) -> Workload:
    """The job whose cheapest plan that runs it (`cost`: in a lighter form or with a low-VRAM
    recipe, as the fit answer judges; inf where none in the budget does) costs the most: a
    machine that runs it runs the others. None runs anywhere: the one needing the most
    memory (`heaviest`)."""
    costs = [cost(r) for r in runs]
    if all(c == float("inf") for c in costs):
        return heaviest
    return runs[max(range(len(runs)), key=lambda i: costs[i])]


def job_fits(
    runs: list[Workload],
    gpu: GpuSpec,
    count: int,
    lighter: Callable[[Workload], list[tuple[Workload, list[str]]]],
) -> list[tuple[bool, str | None, str | None]]:
    """Each job on `count` of the card: whether it fits with the guide's headroom, the
    low-VRAM recipe it runs with (None: as asked), and the lighter form it needs (None, or
    the first flag of `lighter`'s form that fits: "four_bit", "optimizer_8bit")."""
    out: list[tuple[bool, str | None, str | None]] = []
    for run in runs:
        fit, recipe = fit_recipe(run, gpu, count)
        flag = None
        for form, flags in [] if fit else lighter(run):
            fit, recipe = fit_recipe(form, gpu, count)
            if fit:
                flag = flags[0]
                break
        out.append((fit, recipe, flag))
    return out
