"""The guide's examples and scenarios for the recommender."""

from advisor import catalog
from advisor.models import Workload
from advisor.parse import parse_query
from advisor.recommend import recommend


def _rec(text: str):
    p = parse_query(text)
    assert p.ok, p.error
    return recommend(p.workload, gpu_id=p.gpu_id, currency="CNY")


def _codes(rec):
    return {p.code for p in rec.pitfalls}


def test_4gb_card_for_stable_diffusion_is_oom():
    """Guide ch.4: a 4 GB card running SD will OOM. No 4 GB card is in the rental
    catalog, so check the estimate against a 4 GB card's usable memory (~99%) with the
    guide's 20% headroom: SD 1.5 at 512px needs more than that allows."""
    rec = _rec("sd1.5 512px")
    usable_4gb = 4 * 2**30 * 0.99
    assert rec.result.estimate.total_bytes > usable_4gb * 0.8
    assert rec.result.estimate.high_bytes > usable_4gb


def test_rtx_3060_cannot_train_a_30b_model():
    rec = _rec("训练 30b on 3060")
    assert not rec.named.fits and "oom" in _codes(rec)


def test_h100_for_simple_7b_inference_is_waste():
    rec = _rec("7b chat on h100")
    assert rec.named.fits and "overprovisioned" in _codes(rec)


def test_13b_fp16_on_24gb_card_does_not_fit_and_quantizing_fixes_it():
    rec = _rec("13b fp16 on 4090")
    assert not rec.named.fits
    assert any(f.startswith("quantize") for f in rec.fixes)


def test_7b_lora_fits_a_4090_and_a100_is_not_needed():
    rec = _rec("lora 7b on 4090")
    assert rec.named.fits
    assert catalog.gpus()[rec.cheapest.gpu_id].vram_gb <= 48


def test_7b_full_finetune_needs_several_big_cards_not_one_4090():
    rec = _rec("全参微调 7b on 4090")
    assert not rec.named.fits
    assert "full_finetune_multi_gpu" in _codes(rec)
    assert rec.cheapest.count > 1 or catalog.gpus()[rec.cheapest.gpu_id].vram_gb >= 80


def test_moe_warns_that_memory_is_total_params():
    assert "moe_total_params" in _codes(_rec("mixtral 8x7b"))


def test_v100_has_no_bf16():
    assert "no_bf16" in _codes(_rec("lora 7b on v100"))


def test_multi_4090_warns_about_no_nvlink():
    assert "no_nvlink" in _codes(_rec("qwen2.5-72b awq on 2x4090"))


def test_rendering_gets_the_guide_table():
    rec = _rec("Blender 渲染")
    assert rec.guide_task is not None and rec.guide_task.id == "rendering"
    assert "no_formula" in _codes(rec)


def test_course_homework_cnn_is_one_consumer_card():
    rec = _rec("课程作业 CNN")
    assert rec.cheapest.count == 1


def test_long_context_kv_warning():
    assert "long_context_kv" in _codes(_rec("llama-3.1-8b 128k"))


def test_training_time_and_cost_are_estimated_when_tokens_are_known():
    w = Workload(model="llama-3.1-8b", mode="lora", train_tokens=100_000_000)
    rec = recommend(w, currency="CNY")
    assert rec.cheapest.train_hours and rec.cheapest.job_cost


def test_budget_filters_expensive_cards():
    rec = recommend(Workload(model="qwen2.5-7b"), budget_per_hour=2.0, currency="CNY")
    assert rec.cheapest.price_per_hour.amount <= 2.0


def test_recommendations_keep_20pct_headroom():
    rec = _rec("qwen2.5-32b awq")
    for o in (rec.cheapest, rec.best_value, rec.fastest):
        assert o.headroom_fraction >= 0.2
