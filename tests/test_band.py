"""The uncertainty band: fitted per family and runtime by split-conformal quantiles of
measured residuals (bench/accuracy.py --fit-band), read back by the engine
(advisor/memory/terms.py), judged leave-one-source-out, and said near a card's limit."""

import pytest

from advisor.memory import estimate
from advisor.memory.band import band_table, new_source_widening, pick_band
from advisor.models.choices import Runtime
from advisor.models.workload import Workload
from advisor.parse import parse_query
from advisor.recommend import recommend
from checks import accuracy

TABLE = {
    "all": {"low": 0.3, "high": 0.4, "sources": 40, "cases": 300},
    "unmodelled": {"low": 0.2, "high": 0.6, "sources": 5, "cases": 12},
    "family": {"llm_inference": {"low": 0.12, "high": 0.15, "sources": 20, "cases": 80}},
    "cell": {
        "llm_inference": {"transformers": {"low": 0.1, "high": 0.12, "sources": 9, "cases": 50}}
    },
}


def test_the_narrowest_level_measured_sets_the_band_else_the_next_one_up():
    assert pick_band(TABLE, "llm_inference", "transformers", False)[:3] == (
        0.1,
        0.12,
        "llm_inference/transformers",
    )
    # a runtime group measured by too few sources: its family's spread
    assert pick_band(TABLE, "llm_inference", "serving", False)[2] == "llm_inference"
    # a family measured by too few sources: everything's spread
    assert pick_band(TABLE, "classic_inference", "transformers", False)[:3] == (0.3, 0.4, "all")


def test_a_stack_the_engine_does_not_model_takes_the_spread_measured_on_such_stacks():
    lo, hi, *_ = pick_band(TABLE, "llm_inference", "transformers", True)
    assert (lo, hi) == (0.2, 0.6)


def test_the_engine_widens_the_band_for_a_stack_it_does_not_model():
    base = Workload(model="llama-3.1-8b", mode="lora")
    named = base.model_copy(update={"framework": "some-trainer"})
    known = estimate(base).estimate
    unknown = estimate(named).estimate
    assert unknown.band_basis.unmodelled_framework and not known.band_basis.unmodelled_framework
    wide = band_table().get("unmodelled", band_table()["all"])
    assert unknown.band_high_fraction >= max(known.band_high_fraction, wide["high"])


def test_every_estimate_says_what_its_band_was_measured_on():
    est = estimate(Workload(model="llama-3.1-8b", runtime="vllm")).estimate
    basis = est.band_basis
    assert basis.level.startswith("llm_inference") or basis.level == "all"
    assert basis.sources >= accuracy.MIN_SOURCES and basis.cases >= basis.sources
    assert est.high_bytes == int(est.total_bytes * (1 + est.band_high_fraction))


def test_conformal_quantile_needs_enough_cases_and_counts_the_case_being_judged():
    assert accuracy.conformal([(x / 10, 1.0) for x in range(10)], 0.95) is None
    scores = [(x / 100, 1.0) for x in range(100)]
    # 95% of (100 + 1): the 96th smallest
    assert accuracy.conformal(scores, 0.95) == pytest.approx(0.95)


def _rows(group: str, residuals: list[float], n_sources: int = 1) -> list[dict]:
    return [
        {
            "id": f"{group}-{i}",
            "group": f"{group}{i % n_sources}",
            "family": "llm_inference",
            "band_runtime": "transformers",
            "unmodelled": False,
            "guessed": False,
            "error": 1 / (1 + r) - 1,
            "estimate_bytes": 100,
            "measured_bytes": 100 * (1 + r),
        }
        for i, r in enumerate(residuals)
    ]


def test_leave_one_source_out_judges_a_source_on_the_band_fitted_without_it():
    """Twenty agreeing sources and one that ran 80% above every estimate: fitted with it
    the band would stretch toward it; fitted without it (as a source never seen is), the
    band misses all of its cases, and the coverage line says so."""
    rows = _rows("calm", [((i * 7) % 11 - 5) / 100 for i in range(80)], n_sources=20)
    rows += _rows("wild", [0.8] * 4)
    loso = {x["left_out"]: x for x in accuracy.leave_one_source_out(rows)}
    assert loso["wild0"]["band_refit_held"] == 0 and loso["wild0"]["own_cases"] == 4
    cov = accuracy.loso_coverage(list(loso.values()))
    assert cov["cases"] == 84 and cov["held"] <= 80


def test_a_fit_decided_near_the_limit_says_how_far_measured_setups_ran():
    """FLUX.1-schnell in NF4 (bitsandbytes, quantized while loading) on a 24 GB card: fits by
    the estimate with headroom, but the high end measured on setups like it (+38%) is over
    the card. Expected: the verdict carries that figure (not the stated band's high end,
    widened further for sources nobody measured). A level too wide to inform (QLoRA's +92%)
    says nothing of it, and a card with room to spare says nothing either."""
    wide = parse_query("llama-3.1-8b qlora on 4080")
    assert (
        recommend(wide.workload, gpu_id=wide.gpu_id, currency="CNY").verdict.measured_up_to_bytes
        is None
    )
    p = parse_query("flux.1-schnell nf4 on 3090")
    rec = recommend(p.workload, gpu_id=p.gpu_id, currency="CNY")
    est, v = rec.result.estimate, rec.verdict
    high = est.decision_high_bytes
    assert rec.named.fits and est.total_bytes <= rec.named.usable_bytes < high <= est.high_bytes
    assert v.measured_up_to_bytes == high
    roomy = recommend(p.workload, gpu_id="a100-80gb-sxm", currency="CNY")
    assert roomy.verdict.state == "fits" and roomy.verdict.measured_up_to_bytes is None


def test_a_short_chat_and_a_long_prefill_are_banded_on_their_own_strata():
    """Qwen2.5-7B bf16 under transformers: at 4k tokens the runs measured like it stayed
    within +10% of the estimate, so its band is the short stratum's, never wider than the
    runtime group's (whose top a 128k prefill set until GLM-4's long prefill was modelled;
    both now sit at the floor); at 128k the long stratum has too few sources and the
    group's band holds (data/band.toml)."""
    w = Workload(model="qwen2.5-7b", weights_format="bf16", context_tokens=4096)
    short = estimate(w).estimate
    long = estimate(w.model_copy(update={"context_tokens": 131072})).estimate
    table = band_table()
    assert short.band_basis.stratum == "short" and long.band_basis.stratum == "long"
    assert short.band_basis.level == "llm_inference/transformers/short"
    assert long.band_basis.level == "llm_inference/transformers"
    stratum = table["stratum"]["llm_inference"]["transformers"]["short"]
    cell = table["cell"]["llm_inference"]["transformers"]
    level_high = [e.decision_high_bytes / e.total_bytes - 1 for e in (short, long)]
    assert stratum["high"] <= cell["high"]
    assert level_high == pytest.approx([stratum["high"], cell["high"]], abs=1e-3)


def test_a_source_nobody_measured_widens_the_band_by_the_part_the_engine_works_out():
    """[new_source]: the stated band's high end is the level's plus k x the share of the
    estimate the engine derives (all but 16/32-bit weights and weights stored quantized,
    counted exactly). Expected: a weight-heavy chat widens less than an activation-heavy
    long prefill, each by exactly that, a model bitsandbytes quantizes while loading by k in
    full, a GGUF file's weights counted."""
    k_lo, k_hi = new_source_widening(band_table())
    assert k_hi > 0
    w = Workload(model="qwen2.5-7b", weights_format="bf16", context_tokens=4096)
    chat = estimate(w).estimate
    long = estimate(w.model_copy(update={"context_tokens": 131072})).estimate
    four = estimate(w.model_copy(update={"weights_format": "nf4"})).estimate
    for e in (chat, long, four):
        level = e.decision_high_bytes / e.total_bytes - 1
        widened = level + k_hi * e.band_basis.derived_share
        assert e.band_high_fraction == pytest.approx(widened, abs=1e-3)
    weights = sum(t.bytes for t in chat.terms if t.name == "weights")
    assert chat.band_basis.derived_share == pytest.approx(1 - weights / chat.total_bytes, abs=1e-3)
    assert chat.band_basis.derived_share < long.band_basis.derived_share
    assert four.band_basis.derived_share == 1.0  # bitsandbytes quantizes while loading
    # a GGUF file's weights are its own bytes: counted, as 16-bit weights are
    gguf = estimate(
        w.model_copy(update={"weights_format": "q4_k_m", "runtime": Runtime.llamacpp})
    ).estimate
    assert gguf.band_basis.derived_share < 0.5


def test_the_new_source_widening_is_the_conformal_quantile_over_calibration_sources():
    """checks.calibration.fit_new_source on made-up rows around one level (high 0.2,
    low 0.2): sources each with one case 0.1 above the high end per unit of derived share,
    one of them 1.0 above. Expected: the 95% quantile over n + 1 scores (the case being
    judged counts) reaches the outlier with 20 sources and not with 40, the low side stays
    0, too few sources fit nothing, and leaving each of 40 sources out holds 39."""
    from checks.calibration import fit_new_source, leave_one_calibration_source_out

    table = {"all": {"low": 0.2, "high": 0.2, "sources": 9, "cases": 9}}

    def row(i: int, excess: float) -> dict:
        return {
            "group": f"s{i}",
            "family": "llm_inference",
            "band_runtime": "transformers",
            "unmodelled": False,
            "guessed": False,
            "stratum": "",
            "derived_share": 0.5,
            "estimate_bytes": 100,
            "measured_bytes": 100 * (1 + 0.2 + excess * 0.5),
            "error": 0.0,
        }

    few = fit_new_source([row(i, 0.1) for i in range(19)] + [row(19, 1.0)], table)
    assert few is not None and few["high_per_derived"] == pytest.approx(1.0)
    rows = [row(i, 0.1) for i in range(39)] + [row(39, 1.0)]
    fit = fit_new_source(rows, table)
    assert fit is not None
    assert fit["high_per_derived"] == pytest.approx(0.1) and fit["low_per_derived"] == 0.0
    assert fit_new_source(rows[:3], table) is None
    assert leave_one_calibration_source_out(rows, table)["held"] == 39


def test_weights_quantized_while_loading_and_stored_quantized_are_apart():
    """bitsandbytes NF4 (quantized by the loader, data/quantizers.toml) and GPTQ (stored
    quantized) are different strata of the quantized group; 16-bit weights have no loader
    part and an image model no context part."""
    base = Workload(model="llama-3.1-8b", context_tokens=2048, runtime="transformers")
    strata = {
        fmt: estimate(base.model_copy(update={"weights_format": fmt})).estimate.band_basis
        for fmt in ("nf4", "gptq-4bit", "bf16")
    }
    assert strata["nf4"].stratum == "short-onload"
    assert strata["gptq-4bit"].stratum == "short-stored"
    assert strata["bf16"].stratum == "short"
    assert strata["nf4"].runtime == strata["gptq-4bit"].runtime == "transformers-quantized"
    sd = estimate(Workload(model="sdxl", weights_format="bf16")).estimate.band_basis
    assert sd.stratum == ""


def test_a_stratum_is_fitted_only_where_enough_sources_measured_it():
    """Twenty sources of short runs within ±5%, three of long runs 40% above: the short
    stratum gets its own narrow band; the long one (three sources) is left out of the
    table, so its runs take the runtime group's band, which holds them."""
    rows = _rows("calm", [((i * 7) % 11 - 5) / 100 for i in range(80)], n_sources=20)
    for r in rows:
        r["stratum"] = "short"
    wild = _rows("wild", [0.4] * 12, n_sources=3)
    for r in wild:
        r["stratum"] = "long"
    table = accuracy.fit_band(rows + wild)
    strata = table["stratum"]["llm_inference"]["transformers"]
    assert "long" not in strata and strata["short"]["high"] == accuracy.BAND_FLOOR
    assert table["cell"]["llm_inference"]["transformers"]["high"] >= 0.4
    lo, hi, level, *_ = pick_band(table, "llm_inference", "transformers", False, "long")
    assert level == "llm_inference/transformers" and hi >= 0.4
    assert pick_band(table, "llm_inference", "transformers", False, "short")[1] < hi


KNOWS_LESS = {
    **TABLE,
    "guessed": {
        "low": 0.5,
        "high": 0.7,
        "sources": 18,
        "cases": 47,
        "diffusion_inference": {"low": 0.6, "high": 0.9, "sources": 15, "cases": 41},
    },
    "guessed_arch_low": 0.05,
    "guessed_arch_high": 0.25,
}


def test_a_guessed_architecture_takes_the_spread_measured_on_guessed_models():
    """Per side the wider of its level and [guessed.<family>], else [guessed]; the fixed
    widening guessed_arch_* only where no such level was fitted."""
    assert pick_band(KNOWS_LESS, "diffusion_inference", "diffusers", False, "", True)[:2] == (
        0.6,
        0.9,
    )
    assert pick_band(KNOWS_LESS, "llm_inference", "transformers", False, "", True)[:2] == (
        0.5,
        0.7,
    )
    lo, hi, *_ = pick_band(
        TABLE | {"guessed_arch_low": 0.05, "guessed_arch_high": 0.25},
        "llm_inference",
        "transformers",
        False,
        "",
        True,
    )
    assert (lo, hi) == pytest.approx((0.15, 0.37))


def test_the_fit_gives_guessed_models_and_unknown_stacks_their_own_levels():
    def row(i: int, family: str, guessed: bool, err: float) -> dict:
        return {
            "group": f"src{i % 6}",
            "family": family,
            "band_runtime": "diffusers",
            "stratum": "",
            "unmodelled": False,
            "guessed": guessed,
            "measured_bytes": int(100 * (1 + err)),
            "estimate_bytes": 100,
            "error": 0.0,
        }

    rows = [row(i, "diffusion_inference", True, 1.5) for i in range(60)]
    rows += [row(i, "diffusion_inference", False, 0.05) for i in range(60)]
    table = accuracy.fit_band(rows)
    assert table["guessed"]["high"] >= 1.5
    assert table["guessed"]["diffusion_inference"]["high"] >= 1.5
    # the named-architecture levels are fitted without the guessed cases
    assert table["family"]["diffusion_inference"]["high"] < 0.2


def test_a_named_16_bit_model_never_gets_a_low_end_below_its_weights():
    est = estimate(Workload(model="llama-3.1-8b", mode="inference")).estimate
    weights = sum(t.bytes for t in est.terms if t.name == "weights")
    assert est.low_bytes >= weights * 1e9 / 2**30 - 1
    assert est.low_bytes <= est.total_bytes <= est.high_bytes


def test_the_json_answer_gives_the_stated_band_and_how_far_measured_setups_ran():
    """--json's estimate (docs/engine.md): low_bytes <= total <= measured_high_bytes <=
    high_bytes, the last two apart where the engine works out part of the figure."""
    from advisor.report import estimate_json

    out = estimate_json(estimate(Workload(model="qwen2.5-7b", context_tokens=32768)))["estimate"]
    assert out["low_bytes"] <= out["total_bytes"] <= out["measured_high_bytes"]
    assert out["measured_high_bytes"] < out["high_bytes"]


def test_the_details_view_says_how_far_measured_setups_ran_and_that_the_range_is_wider():
    """Qwen2.5-7B on a 4090: the details view gives the measured high end (the figure the
    verdict uses) and says the stated range is widened for sources nobody measured, in
    both languages, with the same figure."""
    from advisor.parse import parse_query
    from advisor.recommend import recommend_query
    from advisor.render import render
    from advisor.units import gib

    q = "4090 能跑 qwen2.5-7b 吗"
    parsed = parse_query(q)
    rec = recommend_query(parsed)
    est = rec.result.estimate
    assert est.decision_high_bytes < est.high_bytes
    up_to = gib(est.decision_high_bytes)
    en = render("details", "en", rec=rec, parsed=parsed, canonical=q, plain=True)
    zh = render("details", "zh", rec=rec, parsed=parsed, canonical=q, plain=True)
    assert f"measured setups like this ran up to {up_to}" in en and "widened" in en
    assert f"类似配置的实测最高到 {up_to}" in zh and "放宽" in zh
