"""Score the engine against measured VRAM cases.

    python bench/accuracy.py [--cases PATH | --all] [--json] [--verbose] [--fit-band]

Default cases: ../shared/eval/vram_cases.json (schema in its README); `--all` pools it with
every case file in bench/data/ (the sets gathered from sources the shared one does not use). For each scorable
case the engine's allocated view (tensors only) is compared with `allocated` / `reserved` /
`software_reported` measurements and its total (nvidia-smi) view with `nvml` / `unknown`
ones, as ../shared/eval/README.md's "How to compare" says (a `reserved` peak carries the
allocator's slack the allocated view leaves out: such a case reads a few percent under by
construction, and the comparison is kept as the README has it so the figures stay comparable
with every other scorer of those cases); a serving engine's own report is compared with the same parts of the breakdown
under that runtime (vLLM: weights + activation profile + non-torch; llama.cpp: model +
context + compute buffers). Bounds are checked as the README says. The guide's formula
(params x bytes x 1.2, divided by the card count) is scored the same way.

Reported: overall, per category, per runtime, per source group, and leave-one-source-out:
for each source group, the figures on every other group's cases, and the band re-fitted
without that group (the only coefficients fitted from the cases in bulk) judged on the
group's own cases. `--fit-band` prints the band table for advisor/data/band.toml.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict
from pathlib import Path

from advisor.fit import max_context_tokens
from advisor.memory import estimate
from advisor.memory.band import band_table
from advisor.memory.runtimes import LLAMACPP_FAMILY, SERVING_ENGINES
from advisor.memory.runtimes.llamacpp import BUFFER_TERMS
from advisor.memory.runtimes.vllm import PROFILE_TERMS
from advisor.models.estimate import Estimate
from advisor.models.workload import Workload
from checks import calibration
from checks.cases import case_to_workload, guide_formula_bytes
from checks.conformal import (
    BAND_COVERAGE,
    CASES_PER_SOURCE,
    HELD_OUT_PER_SOURCE,
    MIN_SOURCES,
    UNDER_SHARE,
    conformal,
    grouped,
    level_band,
    points,
)

GIB = 2**30
DEFAULT_CASES = (
    Path(__file__).resolve().parent.parent.parent / "shared" / "eval" / "vram_cases.json"
)
OWN_CASES = Path(__file__).resolve().parent.parent / "bench" / "data"
ALLOCATED_VIEW = {"allocated", "reserved", "software_reported"}
# No side narrower than this: a level whose sources all agree still meets sources unlike
# them (chosen on the leave-one-source-out figures, docs/accuracy.md).
BAND_FLOOR = 0.15


def source_group(case: dict) -> str:
    """One group per publishing source: the repository, or the post for blog repos."""
    src = case.get("source") or {}
    repo = src.get("repo") or src.get("url") or "unknown"
    if repo.endswith("/blog") or repo == "unknown":
        return f"{repo}/{src.get('path') or src.get('title', '')[:40]}"
    return repo


def judged_bytes(est, measured_what: str) -> tuple[int, str]:
    """The engine's figure in the view the measurement was taken in."""
    if measured_what == "software_reported" and est.runtime in SERVING_ENGINES:
        return sum(t.bytes for t in est.terms if t.name in PROFILE_TERMS), "vllm-profile"
    if measured_what == "software_reported" and est.runtime in LLAMACPP_FAMILY:
        return sum(t.bytes for t in est.terms if t.name in BUFFER_TERMS), "llamacpp-buffers"
    if measured_what in ALLOCATED_VIEW:
        return est.allocated_bytes, "allocated"
    return est.total_bytes, "total"


def _bound_result(bound: dict, est: Estimate, workload: Workload, base: dict) -> dict:
    """A bound case judged: the engine's figure on the bound's side (fits under, OOM at,
    greater or less than), or for a longest context that ran, the context the engine
    says fits, within 25%."""
    limit = bound["limit_gib"] * GIB
    kind = bound["kind"]
    total, alloc = est.total_bytes, est.allocated_bytes
    guide = base["guide_bytes"]
    if kind == "fits_under":
        ok, gok, judged = total <= limit, guide <= limit, total
    elif kind == "oom_at":
        ok, gok, judged = total > limit, guide > limit, total
    elif kind == "greater_than":
        ok, gok, judged = alloc > limit, guide > limit, alloc
    elif kind == "less_than":
        ok, gok, judged = alloc < limit, guide < limit, alloc
    else:  # max_context_tokens: judged on the largest context that fits
        # The measured bound is the longest context that ran, so the engine's own
        # estimate of it is judged (its point estimate, as every value case is); the
        # answer's safer figure, whose band's high end fits, is the band's to judge.
        judged = max_context_tokens(workload, int(limit), safe=False) or 0
        ok, gok = abs(judged / bound["tokens"] - 1) <= 0.25, False
    if kind == "max_context_tokens":  # judged on the context, not on bytes
        for k in ("estimate_bytes", "low_bytes", "high_bytes"):
            base.pop(k)
    key = "context_tokens" if kind == "max_context_tokens" else "estimate_bytes"
    return {**base, "bound": kind, "ok": ok, "guide_ok": gok, key: int(judged)}


def score_case(case: dict) -> dict:
    base = {
        "id": case["id"],
        "category": case["category"],
        "group": source_group(case),
    }
    measured = case["measured"]
    try:
        workload, knobs = case_to_workload(case)
        result = estimate(workload)
    except Exception as exc:  # a case the adapter cannot express is reported, not hidden
        return {**base, "failed": str(exc).splitlines()[0]}
    est = result.estimate
    assert est is not None
    value, view = judged_bytes(est, measured["what"])
    base.update(
        runtime=est.runtime.value if est.runtime else "transformers",
        family=est.band_basis.family,
        band_runtime=est.band_basis.runtime,
        stratum=est.band_basis.stratum,
        unmodelled=est.band_basis.unmodelled_framework,
        guessed=est.band_basis.guessed_architecture,
        derived_share=est.band_basis.derived_share,
        view=view,
        estimate_bytes=int(value),
        low_bytes=int(value * (1 - est.band_low_fraction)),
        high_bytes=int(value * (1 + est.band_high_fraction)),
        knobs=knobs,
        guide_bytes=int(guide_formula_bytes(case)),
    )
    bound = measured.get("bound")
    if bound:
        return _bound_result(bound, est, workload, base)
    if measured.get("value_gib") is None:
        return {**base, "skipped": "no value"}
    meas = measured["value_gib"] * GIB
    return {
        **base,
        "measured_bytes": int(meas),
        "error": value / meas - 1,
        "guide_error": base["guide_bytes"] / meas - 1,
        "in_band": base["low_bytes"] <= meas <= base["high_bytes"],
    }


def score(cases: list[dict]) -> list[dict]:
    return [score_case(c) for c in cases if c.get("scorable", True)]


def summarize(rows: list[dict], error_key: str = "error", ok_key: str = "ok") -> dict:
    pts = [r for r in rows if error_key in r]
    errs = [r[error_key] for r in pts]
    bounds = [r for r in rows if "bound" in r]
    n = len(errs)
    return {
        "cases_scored": n,
        "cases_failed": sum("failed" in r for r in rows),
        "median_abs_error_pct": round(statistics.median(abs(e) for e in errs) * 100, 1)
        if n
        else None,
        "within_20pct": round(sum(abs(e) <= 0.2 for e in errs) / n, 3) if n else None,
        "under_10pct": round(sum(e < -0.1 for e in errs) / n, 3) if n else None,
        "band_holds": round(sum(r.get("in_band", False) for r in pts) / n, 3)
        if n and error_key == "error"
        else None,
        "bounds_satisfied": f"{sum(bool(b.get(ok_key)) for b in bounds)}/{len(bounds)}",
    }


def line(name: str, s: dict) -> str:
    pct = lambda v: f"{(v or 0) * 100:.1f}%"  # noqa: E731
    return (
        f"{name}: {s['cases_scored']} scored, {s['cases_failed']} failed, median |error| "
        f"{s['median_abs_error_pct']}%, {pct(s['within_20pct'])} within ±20%, "
        f"{pct(s['under_10pct'])} under >10%, "
        + (f"band holds {pct(s['band_holds'])}, " if s["band_holds"] is not None else "")
        + f"bounds {s['bounds_satisfied']}"
    )


def fit_band(rows: list[dict]) -> dict:
    """The band table (advisor/data/band.toml's shape): for every level with at least
    MIN_SOURCES sources (each stratum of a family under a runtime group, each family under
    a runtime group, each family, and all cases), each side the split-conformal quantile of
    measured / estimate - 1 over that level's cases, every source weighted as at most
    CASES_PER_SOURCE cases."""
    pts = points(rows)
    table: dict = {"all": _level(pts), "family": {}, "cell": {}, "stratum": {}}
    for what in ("unmodelled", "guessed"):
        # Where the engine knows less: a stack it does not follow, an architecture guessed
        # from the size alone. Fitted on such cases only, per family where enough sources.
        less = [r for r in pts if r[what]]
        if (row := _level(less)) is not None:
            table[what] = row
            for family, fam in grouped(less, "family").items():
                if (frow := _level(fam)) is not None:
                    row[family] = frow
    modelled = [r for r in pts if not r["unmodelled"] and not r["guessed"]]
    for family, fam in grouped(modelled, "family").items():
        if (row := _level(fam)) is not None:
            table["family"][family] = row
        for runtime, cell in grouped(fam, "band_runtime").items():
            if (row := _level(cell)) is not None:
                table["cell"].setdefault(family, {})[runtime] = row
            for stratum, part in grouped(cell, "stratum").items():
                if stratum and (row := _level(part)) is not None:
                    table["stratum"].setdefault(family, {}).setdefault(runtime, {})[stratum] = row
    return table


def _level(pts: list[dict]) -> dict | None:
    """One level's band, or None when too few sources (or too little weight) back it."""
    per_source: dict[str, int] = defaultdict(int)
    for r in pts:
        per_source[r["group"]] += 1
    if len(per_source) < MIN_SOURCES:
        return None
    scores = [
        (
            r["measured_bytes"] / r["estimate_bytes"] - 1,
            min(1.0, CASES_PER_SOURCE / per_source[r["group"]]),
        )
        for r in pts
    ]
    misses = 1 - BAND_COVERAGE
    hi = conformal(scores, 1 - misses * UNDER_SHARE)
    lo = conformal([(-x, w) for x, w in scores], 1 - misses * (1 - UNDER_SHARE))
    if hi is None or lo is None:
        return None
    return {
        "low": round(max(lo, BAND_FLOOR), 3),
        "high": round(max(hi, BAND_FLOOR), 3),
        "sources": len(per_source),
        "cases": len(pts),
    }


def band_holds_with(rows: list[dict], table: dict) -> tuple[int, int]:
    """(held, judged): the left-out cases inside the band the table gives them."""
    held = judged = 0
    if table["all"] is None:  # too few sources left to fit any band: nothing judged
        return 0, 0
    fixed = band_table()  # the fixed widening for a guessed architecture, where no level fits
    table = {
        "guessed_arch_low": fixed["guessed_arch_low"],
        "guessed_arch_high": fixed["guessed_arch_high"],
        **table,
    }
    for r in points(rows):
        lo, hi = level_band(table, r)
        judged += 1
        held += (
            r["estimate_bytes"] * (1 - lo) <= r["measured_bytes"] <= r["estimate_bytes"] * (1 + hi)
        )
    return held, judged


def calibration_section(table: dict, paths: list[Path]) -> str:
    """[new_source], fitted on the calibration files' cases around `table`'s levels."""
    cal = score([c for p in paths for c in json.loads(p.read_text(encoding="utf-8"))])
    fixed = band_table()
    table = {k: fixed[k] for k in ("guessed_arch_low", "guessed_arch_high")} | table
    scale = calibration.fit_new_source(cal, table)
    loso = calibration.leave_one_calibration_source_out(cal, table)
    return calibration.section(scale, loso)


def band_toml(table: dict) -> str:
    """The fitted table as advisor/data/band.toml's sections."""

    def section(name: str, row: dict) -> str:
        return (
            f"[{name}]\nlow = {row['low']}\nhigh = {row['high']}\n"
            f"sources = {row['sources']}\ncases = {row['cases']}\n"
        )

    if table["all"] is None:
        return f"# fewer than {MIN_SOURCES} sources (or too few cases): no band can be fitted"
    out = [section("all", table["all"])]
    for what in ("unmodelled", "guessed"):
        if what in table:
            row = table[what]
            out.append(section(what, {k: row[k] for k in ("low", "high", "sources", "cases")}))
            fams = {f: r for f, r in row.items() if isinstance(r, dict)}
            out += [section(f"{what}.{f}", r) for f, r in sorted(fams.items())]
    out += [section(f"family.{f}", row) for f, row in sorted(table["family"].items())]
    for family, cells in sorted(table["cell"].items()):
        out += [section(f"cell.{family}.{rt}", row) for rt, row in sorted(cells.items())]
    for family, cells in sorted(table.get("stratum", {}).items()):
        for rt, strata in sorted(cells.items()):
            out += [section(f"stratum.{family}.{rt}.{s}", row) for s, row in sorted(strata.items())]
    return "\n".join(out)


def leave_one_source_out(rows: list[dict]) -> list[dict]:
    """For each source group: the engine on every other group's cases, and the band fitted
    without the group (the whole fit: levels, fallbacks, floors), judged on the group's own
    cases: split-conformal coverage for a source the fit never saw."""
    out = []
    for group, own in grouped(rows, "group").items():
        others = [r for r in rows if r.get("group") != group]
        held, judged = band_holds_with(own, fit_band(others))
        out.append(
            {
                "left_out": group,
                "own_cases": judged,
                "others": summarize(others),
                "band_refit_held": held,
                "band_refit_holds_on_left_out": held / judged if judged else None,
            }
        )
    return out


def loso_coverage(loso: list[dict]) -> dict:
    """Pooled over the left-out cases; and with each source counted as at most
    CASES_PER_SOURCE cases (how the held-out sets are drawn)."""
    judged = [x for x in loso if x["own_cases"]]
    n = sum(x["own_cases"] for x in judged)
    held = sum(x["band_refit_held"] for x in judged)
    weight = {x["left_out"]: min(1.0, HELD_OUT_PER_SOURCE / x["own_cases"]) for x in judged}
    w_n = sum(weight[x["left_out"]] * x["own_cases"] for x in judged)
    w_held = sum(weight[x["left_out"]] * x["band_refit_held"] for x in judged)
    return {
        "cases": n,
        "sources": len(judged),
        "held": held,
        "pooled": round(held / n, 3) if n else None,
        "per_source_capped": round(w_held / w_n, 3) if w_n else None,
    }


def print_table(rows: list[dict], verbose: bool) -> None:
    print(f"{'case':52} {'estimate':>9} {'band':>15} {'measured':>9} {'error':>7}  view")
    for r in rows:
        if "failed" in r:
            print(f"{r['id']:52} ERROR {r['failed']}")
        elif "error" in r:
            flag = " UNDER" if r["error"] < -0.1 else ""
            flag += "" if r["in_band"] else " OUT"
            extra = f"  [{', '.join(r['knobs'])}]" if verbose and r["knobs"] else ""
            band = f"{r['low_bytes'] / GIB:.1f}-{r['high_bytes'] / GIB:.1f}G"
            print(
                f"{r['id']:52} {r['estimate_bytes'] / GIB:8.2f}G {band:>15} "
                f"{r['measured_bytes'] / GIB:8.2f}G {r['error'] * 100:+6.1f}%  {r['view']}{flag}{extra}"
            )
        elif "bound" in r:
            print(f"{r['id']:52} bound {r['bound']}: {'ok' if r['ok'] else 'FAILED'}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--cases",
        type=Path,
        action="append",
        help="a case file (repeat to pool several, e.g. the shared set and bench/data's)",
    )
    ap.add_argument(
        "--all",
        action="store_true",
        help="the shared set and every bench/data/*cases*.json, pooled",
    )
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--fit-band", action="store_true")
    ap.add_argument(
        "--calibrate",
        type=Path,
        action="append",
        help="with --fit-band: a case file of sources the engine was never tuned on, that "
        "fits the [new_source] widening (repeat to pool several)",
    )
    args = ap.parse_args(argv)
    cases: list[dict] = []
    paths = list(args.cases or [])
    if args.all:
        paths += [DEFAULT_CASES, *sorted(OWN_CASES.glob("*cases*.json"))]
    for path in paths or [DEFAULT_CASES]:
        try:
            cases += json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            print(f"accuracy: cannot read the cases at {path} ({exc.__class__.__name__})")
            return 2
    rows = score(cases)
    overall = summarize(rows)
    guide = summarize(rows, "guide_error", "guide_ok")
    views = {
        "category": {k: summarize(v) for k, v in grouped(rows, "category").items()},
        "runtime": {k: summarize(v) for k, v in grouped(rows, "runtime").items()},
        "source_group": {k: summarize(v) for k, v in grouped(rows, "group").items()},
    }
    loso = leave_one_source_out(rows)
    if args.json:
        keep = ("id", "category", "runtime", "group", "view", "estimate_bytes", "low_bytes")
        keep += ("high_bytes", "measured_bytes", "error", "in_band", "failed")
        out = {
            "rows": [{k: r[k] for k in keep if k in r} for r in rows if "bound" not in r],
            "bounds": [
                {
                    k: r[k]
                    for k in ("id", "bound", "ok", "estimate_bytes", "context_tokens")
                    if k in r
                }
                for r in rows
                if "bound" in r
            ],
            "summary": overall,
            "guide_summary": guide,
            **views,
            "leave_one_source_out": loso,
            "leave_one_source_out_band": loso_coverage(loso),
        }
        print(json.dumps(out, indent=2))
        return 0
    if args.fit_band:
        table = fit_band(rows)
        print(band_toml(table))
        if args.calibrate:
            print("\n" + calibration_section(table, args.calibrate))
        return 0
    print_table(rows, args.verbose)
    for title, table in views.items():
        print(f"\nper {title}:")
        for name, s in table.items():
            print("  " + line(name, s))
    print("\nleave one source out (engine on the other sources; band re-fitted without it):")
    for x in loso:
        held = x["band_refit_holds_on_left_out"]
        print(
            f"  {x['left_out'][:44]:44} own {x['own_cases']:3}  band on own "
            f"{'-' if held is None else f'{held * 100:.0f}%':>5}  |  others: "
            + line("", x["others"])[2:]
        )
    cov = loso_coverage(loso)
    if cov["cases"]:
        judged = [x for x in loso if x["band_refit_holds_on_left_out"] is not None]
        worst = min(judged, key=lambda x: x["band_refit_holds_on_left_out"])
        print(
            f"  band re-fitted without each source (split-conformal), on that source's "
            f"cases: {cov['held']}/{cov['cases']} held = {cov['pooled'] * 100:.1f}% pooled, "
            f"{cov['per_source_capped'] * 100:.1f}% with each source as at most "
            f"{HELD_OUT_PER_SOURCE} cases, over {cov['sources']} sources (worst "
            f"{worst['left_out']}: {worst['band_refit_holds_on_left_out'] * 100:.0f}%)"
        )
    print()
    print(line("engine", overall))
    print(line("guide formula (params x bytes x 1.2)", guide))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
