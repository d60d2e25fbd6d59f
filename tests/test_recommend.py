"""The guide's examples and scenarios for the recommender."""

from advisor import catalog
from advisor.models.workload import Workload
from advisor.parse import parse_query
from advisor.recommend import recommend


def _rec(text: str):
    p = parse_query(text)
    assert p.ok, p.error
    return recommend(p.workload, gpu_id=p.gpu_id, currency="CNY")


# the setup as asked runs out of memory: "oom", or "oom_as_asked" under a headline that
# runs it with a change (recommend._oom_as_asked)
AS_ASKED_OOM = {"oom", "oom_as_asked"}


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
    """Guide ch.4: training 30B on a 3060 12 GB. Expected: does not fit; pitfall OOM."""
    rec = _rec("训练 30b on 3060")
    assert not rec.named.fits and _codes(rec) & AS_ASKED_OOM


def test_h100_for_simple_7b_inference_is_waste():
    """Guide typical mistake: an H100 for 7B chat. Expected: fits easily; pitfall over-provisioned."""
    rec = _rec("7b chat on h100")
    assert rec.named.fits and "overprovisioned" in _codes(rec)


def test_13b_fp16_on_24gb_card_does_not_fit_and_quantizing_fixes_it():
    """Guide: 13B fp16 needs more than 24 GB. Expected: a 4090 does not fit; quantizing is the fix."""
    rec = _rec("13b fp16 on 4090")
    assert not rec.named.fits
    assert any(f.startswith("quantize") for f in rec.fixes)


def test_7b_lora_fits_a_4090_and_a100_is_not_needed():
    """7B LoRA. Expected: fits a 4090; the cheapest pick is a card of 48 GB or less."""
    rec = _rec("lora 7b on 4090")
    assert rec.named.fits
    assert catalog.gpus()[rec.cheapest.gpu_id].vram_gb <= 48


def test_7b_full_finetune_needs_several_big_cards_not_one_4090():
    """Guide typical mistake: one card for a full fine-tune. Expected: no fit on a 4090; several cards or an 80 GB card; pitfall: full fine-tune needs multiple GPUs."""
    rec = _rec("全参微调 7b on 4090")
    assert not rec.named.fits
    assert "full_finetune_multi_gpu" in _codes(rec)
    assert rec.cheapest.count > 1 or catalog.gpus()[rec.cheapest.gpu_id].vram_gb >= 80


def test_moe_warns_that_memory_is_total_params():
    """Mixtral 8x7B. Expected pitfall: MoE memory is total, not active, parameters."""
    assert "moe_total_params" in _codes(_rec("mixtral 8x7b"))


def test_v100_has_no_bf16():
    """LoRA on a V100 (Volta). Expected: bf16 the user asked for cannot run there (a
    blocker, said as the verdict); with no precision named it trains in fp16 AMP (same
    bytes), said as an assumption, not blocked."""
    rec = _rec("bf16 lora 7b on v100")
    assert "no_bf16_training" in _codes(rec) and rec.verdict.state == "blocked"
    rec = _rec("lora 7b on v100")
    assert "no_bf16_training" not in _codes(rec) and rec.verdict.state != "blocked"
    assert "fp16_amp_no_bf16" in _codes(rec)


def test_multi_4090_warns_about_no_nvlink():
    """72B AWQ on 2x4090. Expected pitfall: 4090s have no NVLink or P2P."""
    assert "no_nvlink" in _codes(_rec("qwen2.5-72b awq on 2x4090"))


def test_rendering_gets_the_guide_table():
    """Blender rendering. Expected: the guide's rendering row; pitfall: no formula exists."""
    rec = _rec("Blender 渲染")
    assert rec.guide_task is not None and rec.guide_task.id == "rendering"
    assert "no_formula" in _codes(rec)


def test_course_homework_cnn_is_one_consumer_card():
    """Course homework CNN. Expected: one card."""
    rec = _rec("课程作业 CNN")
    assert rec.cheapest.count == 1


def test_long_context_kv_warning():
    """Llama-3.1-8B at 128k. Expected pitfall: long context blows up the KV cache."""
    assert "long_context_kv" in _codes(_rec("llama-3.1-8b 128k"))


def test_training_time_and_cost_are_estimated_when_tokens_are_known():
    """LoRA with a known token count. Expected: training hours and job cost on the cheapest pick."""
    w = Workload(model="llama-3.1-8b", mode="lora", train_tokens=100_000_000)
    rec = recommend(w, currency="CNY")
    assert rec.cheapest.train_hours and rec.cheapest.job_cost


def test_budget_filters_expensive_cards():
    """A ¥2/h budget for a 7B model. Expected: the cheapest pick costs at most ¥2/h."""
    rec = recommend(Workload(model="qwen2.5-7b"), budget_per_hour=2.0, currency="CNY")
    assert rec.cheapest.price_per_hour.amount <= 2.0


def test_a_total_budget_of_zero_rents_nothing_and_says_so():
    """ "预算0元 想跑70b": an inference job has no job cost to hold against a total budget, so a
    total above zero lets every priced card through, but ¥0 is met by none: the answer is
    over budget (it said nothing of the ¥0 before and offered 8× 3090 at ¥10/h as within it).
    A total above zero still passes an inference pick."""
    zero = recommend(Workload(model="qwen2.5-7b"), budget_total=0.0, currency="CNY")
    assert zero.over_budget
    some = recommend(Workload(model="qwen2.5-7b"), budget_total=500.0, currency="CNY")
    assert not some.over_budget


def test_recommendations_keep_20pct_headroom():
    """Qwen2.5-32B AWQ. Expected: every top pick keeps the guide's 20% headroom."""
    rec = _rec("qwen2.5-32b awq")
    for o in (rec.cheapest, rec.best_value, rec.fastest):
        assert o.headroom_fraction >= 0.2


# --- more scenarios: each docstring says the expected pick class and pitfalls ---


def _vram_gib(o) -> float:
    return catalog.gpus()[o.gpu_id].usable_vram_gib * o.count


def test_72b_int4_long_context_picks_one_machine_never_a_cluster():
    """qwen2.5-72b AWQ-class int4 at 32k: ~62 GiB per card alone. Expected: 48 GB-class cards
    in pairs or one 80 GB+ card, all on one machine; fastest is a priced card, not 16 cards."""
    rec = _rec("qwen2.5-72b int4 32k")
    for o in (rec.cheapest, rec.best_value, rec.fastest):
        assert not o.multi_node and o.count <= 8 and o.price_per_hour is not None
        assert catalog.gpus()[o.gpu_id].usable_vram_gib * 2**30 * 0.8 >= (
            o.fixed_bytes or o.per_gpu_bytes
        )  # 20% headroom, after the one cheap setting the pick names


def test_70b_fp16_inference_needs_at_least_160gb_across_cards_split_by_tensor_parallel():
    """Llama-3.3-70B bf16: 140 GB of weights. Expected: 2-8 cards whose memory adds up to
    well over 140 GB; card counts that divide 64 heads and 8 KV heads (2, 4, 8)."""
    rec = _rec("llama-3.3-70b fp16")
    o = rec.cheapest
    assert o.count in (2, 4, 8) and _vram_gib(o) >= 160


def test_deepseek_v3_fp8_needs_a_full_node_of_the_largest_cards_and_warns_moe():
    """DeepSeek-V3 (671B total, 37B active) in fp8: ~650 GiB. Expected: 8 cards of 96 GB+
    (8x80 GB is too small); pitfall: MoE memory is total parameters."""
    rec = _rec("deepseek-v3 fp8")
    assert rec.cheapest.count == 8 and catalog.gpus()[rec.cheapest.gpu_id].vram_gb >= 96
    assert "moe_total_params" in _codes(rec)


def test_qlora_70b_on_two_3090s_needs_fsdp_parameter_offload():
    """QLoRA 70B on 2x3090 (24 GB): the NF4 shards alone are ~20 GiB per card. Expected: does
    not fit as asked; the fix offered is FSDP with parameters on the CPU (the FSDP-QLoRA
    recipe); pitfalls: OOM, QLoRA needs host RAM at load."""
    rec = _rec("qlora 70b on 2x3090")
    assert not rec.named.fits and "offload_params" in rec.fixes
    assert "qlora_host_ram" in _codes(rec) and _codes(rec) & AS_ASKED_OOM


def test_sdxl_four_images_at_1024_needs_a_24gb_card_as_loaded_but_runs_on_12gb_as_people_run_it():
    """SDXL, 4 images at 1024x1024: diffusers measured 21.7 GiB with every component resident.
    Expected: with no card named, a 24 GB+ card; on a 3060 12 GB the answer is for the
    small-card recipe (the images one at a time, components taking turns, tiled decode),
    it fits, and nothing in the answer says it will run out of memory."""
    assert catalog.gpus()[_rec("sdxl 1024 4 images").cheapest.gpu_id].vram_gb >= 24
    rec = _rec("sdxl 1024 4 images on 3060")
    assert rec.asked is not None and rec.asked.estimate.total_bytes > 12 * 2**30
    assert rec.recipe == "one_image_at_a_time" and rec.named.fits
    assert rec.verdict.state == "fits" and "oom" not in _codes(rec)


def test_flux_dev_fp16_does_not_fit_a_4090_resident_but_quantized_or_streamed_does():
    """FLUX.1-dev in fp16: 12B transformer (24 GB) + T5-XXL: more than 24 GB. Expected:
    as loaded by default it does not fit; with no offload mode named the answer keeps fp16
    and streams the layers (sequential offload); with model offload named the fixes
    include a quantized transformer; pitfall OOM only where it does not fit."""
    rec = _rec("flux.1-dev fp16 on 4090")
    assert rec.asked.estimate.total_bytes > 24 * 2**30
    assert rec.recipe == "offload_sequential" and rec.named.fits
    pinned = _rec("flux.1-dev fp16 model offload on 4090")
    assert not pinned.named.fits and any(f.startswith("quantize") for f in pinned.fixes)
    assert _codes(pinned) & AS_ASKED_OOM


def test_total_budget_keeps_the_best_value_job_within_it():
    """LoRA on Llama-3.1-8B over 100M tokens with a ¥50 total budget. Expected: the best-value
    pick finishes the job for at most ¥50, with its training hours stated."""
    p = parse_query("lora llama-3.1-8b data 100m tokens 预算 50元")
    rec = recommend(p.workload, budget_total=p.budget.amount, currency="CNY")
    assert rec.best_value.job_cost <= 50 and rec.best_value.train_hours > 0


def test_fp8_weights_on_an_a100_warn_that_ampere_has_no_fp8():
    """Qwen2.5-7B fp8 on an A100. Expected: fits (fp8 weights run weight-only through
    FP8-Marlin on Ampere); pitfalls: no fp8 speed-up on Ampere, and an A100 for a 7B model is
    over-provisioned."""
    rec = _rec("qwen2.5-7b fp8 on a100")
    assert rec.named.fits and {"fp8_no_speedup", "overprovisioned"} <= _codes(rec)


def test_below_four_bits_warns_about_quality():
    """GGUF Q2_K. Expected: a small consumer card; pitfall: quality drops below 4 bits."""
    rec = _rec("qwen2.5-7b q2_k")
    assert "low_bit_quality" in _codes(rec) and catalog.gpus()[rec.cheapest.gpu_id].vram_gb <= 24


def test_vllm_warns_about_preallocation():
    """vLLM serving. Expected pitfall: vLLM takes 90% of VRAM up front, nvidia-smi looks full."""
    assert "vllm_preallocates" in _codes(_rec("qwen2.5-7b vllm"))


def test_rtx_5090_warns_about_cuda_12_8():
    """RTX 5090 (Blackwell consumer). Expected: fits a 7B model; pitfall: needs CUDA 12.8+ /
    PyTorch 2.7+."""
    rec = _rec("qwen2.5-7b on 5090")
    assert rec.named.fits and "blackwell_cuda" in _codes(rec)


def test_export_variant_card_is_flagged():
    """H800 (China export variant of H100). Expected: fits a 7B model; pitfalls: export variant
    differs from the original; over-provisioned for 7B."""
    assert {"export_variant", "overprovisioned"} <= _codes(_rec("7b on h800"))


def test_video_transcoding_gets_the_guides_table_without_a_formula():
    """Video transcoding: no VRAM formula. Expected: the guide's row for video and rendering
    (one row in the guide), one card."""
    rec = _rec("视频转码")
    assert (
        rec.result.estimate is None and "视频" in rec.guide_task.name_zh and rec.cheapest.count == 1
    )
    assert "no_formula" in _codes(rec)


def test_llama_on_a_t4_does_not_fit_in_16bit_and_turing_lacks_bf16_and_flash_attention():
    """Llama-3.1-8B bf16 on a T4 (16 GB, Turing). Expected: does not fit at 4k context;
    int8 or 4-bit fits; pitfalls: OOM, no bf16, no FlashAttention-2."""
    rec = _rec("llama-3.1-8b on t4")
    assert not rec.named.fits and "quantize:int8" in rec.fixes
    assert {"no_bf16_inference", "no_flash_attention"} <= _codes(rec) and _codes(rec) & AS_ASKED_OOM


def test_high_concurrency_long_context_is_dominated_by_the_kv_cache():
    """Llama-3.1-8B, 64 concurrent requests of 8k tokens: the KV cache (64 GiB) dwarfs the
    weights. Expected: several 80 GB-class cards; pitfall: long context blows up the KV cache."""
    rec = _rec("llama-3.1-8b batch 64 ctx 8192")
    e = rec.result.estimate
    assert e.breakdown["kv_cache"] > 3 * e.breakdown["weights"]
    assert "long_context_kv" in _codes(rec) and rec.cheapest.count >= 2


def test_pretraining_on_a_cheap_card_takes_days_and_the_fastest_card_is_much_quicker():
    """Pre-training 1B parameters on 10B tokens. Expected: the cheapest card needs more than
    three days (pitfall: too little compute) but finishes within a week (picks are held to
    that, D21); the fastest pick finishes far sooner. At torchtitan's 30% MFU one A100 40GB
    PCIe (133 h at 40%) is past the week, so the cheapest is now several cards, warned about
    only past the week (pitfalls.card.slow_hours)."""
    rec = _rec("pretrain 1b data 10b tokens")
    beside = {n.code for n in rec.cheapest.notes}  # said under the pick itself
    assert rec.cheapest.train_hours > 72
    if rec.cheapest.count == 1:
        assert "slow_compute" in _codes(rec) | beside
    assert rec.cheapest.train_hours <= 168
    # 3x 4090 140 h vs one H800 56 h at 30% MFU: 2.49x
    assert rec.fastest.train_hours < rec.cheapest.train_hours / 2.4


def test_tight_fit_is_shown_as_risky_not_hidden():
    """Llama-3.1-8B LoRA on a 3090: fits with ~10% headroom. Expected: shown as fitting but
    risky (below the guide's 20%), with QLoRA or a second card as the fix."""
    rec = _rec("llama-3.1-8b lora on 3090")
    assert rec.named.fits and rec.named.risky and "tight_headroom" in _codes(rec)
    assert "qlora" in rec.fixes


def test_multi_card_price_is_per_machine_not_per_card():
    """2x 4090. Expected: the price shown is two cards' hourly price; pitfall: no NVLink/P2P
    on 4090s."""
    rec = _rec("qwen2.5-14b awq on 2x4090")
    one = recommend(
        parse_query("qwen2.5-14b awq on 4090").workload, gpu_id="rtx-4090", currency="CNY"
    ).named
    assert abs(rec.named.price_per_hour.amount - 2 * one.price_per_hour.amount) < 0.02
    assert "no_nvlink" in _codes(rec)


def test_bf16_training_is_not_sent_to_a_card_without_bf16():
    """LoRA on Llama-3.1-8B in bf16 (asked). Expected: no top pick is a V100 or T4 (no
    bf16); they stay in the full list, and fp16 training may still pick them."""
    rec = _rec("bf16 lora llama-3.1-8b")
    for o in (rec.cheapest, rec.best_value, rec.fastest):
        assert catalog.gpus()[o.gpu_id].bf16_supported
    assert "no_bf16_training" not in _codes(rec)
    assert "tesla-v100" in rec.excluded
    fp16 = recommend(Workload(model="llama-3.1-8b", mode="lora", weights_format="fp16"))
    assert any(not catalog.gpus()[o.gpu_id].bf16_supported for o in fp16.options)


def test_multi_node_options_only_when_no_machine_will_do():
    """Llama-3.1-70B LoRA: 4 A100 80G run it on one machine. Expected: no option in the list
    is a multi-node cluster (16 RTX 3090s beside four A100s was noise, never a pick). Llama
    3.1 405B LoRA fits no 8-card machine comfortably: there the clusters are the answer."""
    one_machine = _rec("llama-3.1-70b lora")
    assert one_machine.options and not any(o.multi_node for o in one_machine.options)
    clusters = _rec("llama-3.1-405b lora 8k")
    assert clusters.cheapest is not None and clusters.cheapest.multi_node
    assert any(o.multi_node and o.count == 32 for o in clusters.options)


def test_qlora_host_ram_note_is_one_shard_not_the_whole_16bit_model() -> None:
    """Before: "主机内存至少要 135.4 GiB" for QLoRA of Qwen2.5-72B; weights load shard by
    shard and are quantized per layer, so host RAM is about the largest shard plus the
    process."""
    from advisor.pitfalls import pitfall_texts

    texts = pitfall_texts()["qlora_host_ram"]
    assert "至少要" not in texts["zh"] and "at least" not in texts["en"]
    assert "16 GB" in texts["zh"] and "16 GB" in texts["en"]
    # and no other line of the same answer asks for RAM as large as the weights
    rec = _rec("想用qlora微调qwen2.5-72b，一张A100 80G够么")
    assert "qlora_host_ram" in _codes(rec) and "host_ram_disk" not in _codes(rec)
