"""Table-driven parser tests: real-looking lines in Chinese, English and mixed."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from advisor.parse import canonical_query, parse_query

# (text, expected workload fields / query fields)
CASES = [
    ("/vram 13B fp16", {"params_b": 13, "weights_format": "fp16", "mode": "inference"}),
    ("/vram@GpuAdvisorBot 13B fp16", {"params_b": 13, "weights_format": "fp16"}),
    (
        "/vram qwen2.5-72b int4 32k",
        {"model": "qwen2.5-72b", "weights_format": "int4", "context_tokens": 32768},
    ),
    ("训练 llama3-8b lora", {"model": "llama-3-8b", "mode": "lora"}),
    ("sdxl 1024 出4张图", {"model": "sdxl", "image_width": 1024, "images_per_prompt": 4}),
    ("qwen2.5-7b-instruct", {"model": "qwen2.5-7b"}),
    ("Qwen2.5 7B", {"model": "qwen2.5-7b"}),
    ("llama3 8b", {"model": "llama-3-8b"}),
    ("llama-3.1-70b", {"model": "llama-3.1-70b"}),
    ("ds-r1-distill-32b", {"model": "deepseek-r1-distill-qwen-32b"}),
    ("deepseek v3", {"model": "deepseek-v3"}),
    ("mixtral 8x7b", {"model": "mixtral-8x7b"}),
    ("flux dev", {"model": "flux.1-dev"}),
    ("bert-base", {"model": "bert-base"}),
    ("resnet50", {"model": "resnet50"}),
    ("meta-llama/Llama-3.1-8B-Instruct", {"model": "llama-3.1-8b"}),
    ("7b", {"params_b": 7}),
    ("7B", {"params_b": 7}),
    ("7 billion", {"params_b": 7}),
    ("70亿", {"params_b": 7}),
    ("1.5B", {"params_b": 1.5}),
    ("0.5b", {"params_b": 0.5}),
    ("350M", {"params_b": 0.35}),
    ("671B", {"params_b": 671}),
    ("7b fp32", {"weights_format": "fp32"}),
    ("7b 半精度", {"weights_format": "fp16"}),
    ("7b bf16", {"weights_format": "bf16"}),
    ("7b fp8", {"weights_format": "fp8"}),
    ("7b int8", {"weights_format": "int8"}),
    ("7b 8bit", {"weights_format": "int8"}),
    ("7b int4", {"weights_format": "int4"}),
    ("7b 4bit", {"weights_format": "int4"}),
    ("7b 4-bit", {"weights_format": "int4"}),
    ("7b nf4", {"weights_format": "nf4"}),
    ("7b gptq", {"weights_format": "gptq-4bit"}),
    ("7b awq", {"weights_format": "awq-4bit"}),
    ("7b q4_k_m", {"weights_format": "q4_k_m"}),
    ("7b Q8_0", {"weights_format": "q8_0"}),
    ("7b gguf", {"weights_format": "q4_k_m"}),
    ("推理 7b", {"mode": "inference"}),
    ("7b inference", {"mode": "inference"}),
    ("chat with 7b", {"mode": "inference"}),
    ("serve qwen2.5-7b", {"mode": "inference"}),
    ("部署 qwen2.5-7b", {"mode": "inference"}),
    ("微调 7b", {"mode": "lora"}),  # LLaMA-Factory default finetuning_type
    ("finetune 7b", {"mode": "lora"}),
    ("ft 7b", {"mode": "lora"}),
    ("full 7b", {"mode": "full"}),
    ("全参 7b", {"mode": "full"}),
    ("lora 7b", {"mode": "lora"}),
    ("qlora 7b", {"mode": "qlora", "weights_format": "nf4"}),
    ("训练 7b", {"mode": "full"}),
    ("train 7b", {"mode": "full"}),
    ("预训练 1b", {"mode": "pretrain"}),
    ("pretrain 1b", {"mode": "pretrain"}),
    ("画图", {"model": "sdxl", "mode": "inference"}),
    ("生成图片 sd1.5", {"model": "sd-1.5"}),
    ("txt2img sdxl", {"model": "sdxl"}),
    ("渲染", {"kind": "rendering"}),
    ("render", {"kind": "rendering"}),
    ("video", {"kind": "video"}),
    ("Blender 渲染", {"kind": "rendering"}),
    ("视频转码", {"kind": "video"}),
    ("作业", {"model": "small-cnn", "mode": "full"}),
    ("课程作业 CNN", {"model": "small-cnn"}),
    ("qwen2.5-7b ctx 32k", {"context_tokens": 32768}),
    ("qwen2.5-7b 上下文 8k", {"context_tokens": 8192}),
    ("qwen2.5-7b 128k", {"context_tokens": 131072}),
    ("lora 7b seq 2048", {"seq_len": 2048}),
    ("lora 7b 序列长度 4096", {"seq_len": 4096}),
    ("7b bs 8", {"batch_size": 8}),
    ("7b batch 4", {"batch_size": 4}),
    ("7b 批大小 16", {"batch_size": 16}),
    ("7b 并发 32", {"batch_size": 32}),
    ("lora 7b r=16", {"lora_rank": 16}),
    ("lora 7b rank 64", {"lora_rank": 64}),
    ("full 7b adamw", {"optimizer": "adamw"}),
    ("full 7b 8bit adam", {"optimizer": "adamw_8bit"}),
    ("full 7b gc", {"gradient_checkpointing": True}),
    ("full 7b 梯度检查点", {"gradient_checkpointing": True}),
    ("full 70b zero3 8卡", {"parallelism": "zero3", "num_gpus": 8}),
    ("full 70b fsdp 8 gpus", {"parallelism": "fsdp", "num_gpus": 8}),
    ("sdxl 1024x1024", {"image_width": 1024, "image_height": 1024}),
    ("sdxl 1024*768", {"image_width": 1024, "image_height": 768}),
    ("sd1.5 512px", {"image_width": 512}),
    ("sdxl 4张", {"images_per_prompt": 4}),
    ("sdxl 2 images", {"images_per_prompt": 2}),
    ("qwen2.5-7b kv fp8", {"kv_cache_dtype": "fp8"}),
    ("qwen2.5-7b vllm", {"framework": "vllm"}),
    ("微调 qwen2.5-7b lora 预算 500元", {"mode": "lora"}),
    ("Qwen3-30B-A3B 推理", {"model": "qwen3-30b-a3b"}),
    ("gpt-oss-20b", {"model": "gpt-oss-20b"}),
    ("glm-4-9b 部署", {"model": "glm-4-9b"}),
    ("yi-34b", {"model": "yi-34b"}),
    ("internlm2.5-7b", {"model": "internlm2.5-7b"}),
    ("baichuan2-13b", {"model": "baichuan2-13b"}),
    ("gemma-2-9b", {"model": "gemma-2-9b"}),
    ("phi-4", {"model": "phi-4"}),
    ("mistral-7b", {"model": "mistral-7b"}),
    ("sd3", {"model": "sd3-medium"}),
    ("flux schnell", {"model": "flux.1-schnell"}),
    ("vit-base", {"model": "vit-base"}),
    ("t5-base", {"model": "t5-base"}),
    ("gpt2 训练", {"model": "gpt2", "mode": "full"}),
    ("ＱＷＥＮ２.５-７Ｂ", {"model": "qwen2.5-7b"}),
    ("Llama-3.2-3B lora", {"model": "llama-3.2-3b", "mode": "lora"}),
    ("跑 llama2-13b 半精度", {"model": "llama-2-13b", "weights_format": "fp16"}),
    ("deepseek-r1 fp8 8卡", {"model": "deepseek-r1", "num_gpus": 8}),
    ("qwen2.5-32b awq 2卡", {"num_gpus": 2}),
    ("qwen2.5-32b x2", {"num_gpus": 2}),
    (
        "Qwen2.5-14B-Instruct 部署 并发 8 上下文 16k",
        {"model": "qwen2.5-14b", "batch_size": 8, "context_tokens": 16384},
    ),
    ("llama2-7b 推理 int8", {"model": "llama-2-7b", "weights_format": "int8"}),
    ("qwen3-8b lora r=32 bs 4 seq 1024", {"lora_rank": 32, "batch_size": 4, "seq_len": 1024}),
    ("chatglm3-6b 微调 lora", {"model": "chatglm3-6b", "mode": "lora"}),
    ("qwen2.5-7b 全量微调 zero2 4卡", {"mode": "full", "parallelism": "zero2", "num_gpus": 4}),
    ("yi-6b qlora", {"model": "yi-6b", "mode": "qlora"}),
    ("sd2.1 768x768 2张", {"model": "sd-2.1", "image_width": 768, "images_per_prompt": 2}),
    ("flux dev 1024 1张 fp8", {"model": "flux.1-dev", "weights_format": "fp8"}),
    ("deepseek-v2-lite 推理", {"model": "deepseek-v2-lite"}),
    ("qwen1.5-72b int4", {"model": "qwen1.5-72b", "weights_format": "int4"}),
    ("llama3.2-1b full", {"model": "llama-3.2-1b", "mode": "full"}),
    ("gemma-3-27b q5_k_m", {"model": "gemma-3-27b", "weights_format": "q5_k_m"}),
    ("mistral-nemo 128k", {"model": "mistral-nemo-12b", "context_tokens": 131072}),
    ("phi-3-mini 3.8b 推理", {"model": "phi-3-mini"}),
    ("qwen2.5-7b sdpa", {"attention": "sdpa"}),
    ("lora 8b flash-attn", {"attention": "flash"}),
    ("resnet50 训练 bs 128", {"model": "resnet50", "batch_size": 128}),
    ("bert-large 文本分类 训练", {"model": "bert-large", "mode": "full"}),
    ("gpt2-medium pretrain", {"model": "gpt2-medium", "mode": "pretrain"}),
    ("qwen2.5-7b ollama q4_k_m", {"framework": "ollama", "weights_format": "q4_k_m"}),
]

QUERY_FIELDS = [
    ("7b on 4090", {"gpu_id": "rtx-4090"}),
    ("用4090 跑 13b", {"gpu_id": "rtx-4090"}),
    ("8×A100 全参微调 70b", {"gpu_id": "a100-80gb-pcie", "gpu_count": 8}),
    ("I have 2×3090, qwen2.5-32b awq", {"gpu_id": "rtx-3090", "gpu_count": 2}),
    ("我有2×3090 想跑 qwen2.5-32b awq", {"gpu_id": "rtx-3090", "gpu_count": 2}),
    ("7b on h100", {"gpu_id": "h100-sxm"}),
    ("7b on a100", {"gpu_id": "a100-80gb-pcie"}),
    ("7b 用 L40S", {"gpu_id": "l40s"}),
    ("¥3/h 7b", {"budget": (3, "CNY", True)}),
    ("3元/小时 7b", {"budget": (3, "CNY", True)}),
    ("$2/hr llama3 8b", {"budget": (2, "USD", True)}),
    ("预算 500元 微调 7b", {"budget": (500, "CNY", False)}),
    ("budget $100 lora 7b", {"budget": (100, "USD", False)}),
]

ERRORS = [
    ("qwen2.8", "unknown_model"),
    ("13B fp17", "unknown_format"),
    ("0B", "bad_value"),
    ("-7B", "bad_value"),
    ("1e30B", "bad_value"),
    ("7b batch 1000000000", "bad_value"),
    ("qwen2.5-32b ctx 1000000", "context_too_long"),
    ("", "empty"),
    ("   ", "empty"),
    ("x" * 10_000, "too_long"),
    ("lora 微调", "no_model"),
    ("llama9-8b", "unknown_model"),
]


def _value(w, key):
    v = getattr(w, key)
    return getattr(v, "value", v)


@pytest.mark.parametrize("text, expected", CASES)
def test_parses_workload_fields(text, expected):
    p = parse_query(text)
    assert p.ok, (text, p.error)
    for key, value in expected.items():
        got = _value(p.workload, key)
        assert (
            got == pytest.approx(value)
            if isinstance(value, float | int) and not isinstance(value, bool)
            else got == value
        ), (text, key, got)


@pytest.mark.parametrize("text, expected", QUERY_FIELDS)
def test_parses_cards_and_budgets(text, expected):
    p = parse_query(text)
    assert p.ok, (text, p.error)
    for key, value in expected.items():
        if key == "budget":
            assert (p.budget.amount, p.budget.currency, p.budget.per_hour) == value
        else:
            assert getattr(p, key) == value


@pytest.mark.parametrize("text, code", ERRORS)
def test_errors_carry_a_code(text, code):
    p = parse_query(text)
    assert p.error is not None and p.error.code == code


def test_unknown_model_suggests_close_names():
    assert any(
        s.startswith("qwen2.5")
        for s in parse_query("qwen2.8 7b int4").error.suggestions or ["qwen2.5"]
    )


def test_unknown_format_lists_the_formats():
    assert "fp16" in parse_query("13B fp17").error.suggestions


def test_nothing_is_dropped_silently():
    p = parse_query("qwen2.5-7b banana ctx 8k")
    assert "banana" in p.ignored and "ctx 8k" in p.understood


@pytest.mark.parametrize("text", [t for t, _ in CASES + QUERY_FIELDS])
def test_canonical_line_parses_back_to_the_same_workload(text):
    p = parse_query(text)
    again = parse_query(canonical_query(p))
    assert again.ok, canonical_query(p)
    assert again.workload == p.workload
    assert (again.gpu_id, again.budget) == (p.gpu_id, p.budget)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=500))
def test_any_text_returns_a_workload_or_an_error(text):
    p = parse_query(text)
    assert p.ok or p.error is not None


@pytest.mark.parametrize(
    ("text", "amount", "currency", "per_hour"),
    [
        ("¥10/h", 10, "CNY", True),
        ("3元/小时", 3, "CNY", True),
        ("$2/h", 2, "USD", True),
        ("budget $100", 100, "USD", False),
        ("预算 500元", 500, "CNY", False),
    ],
)
def test_a_budget_alone_reads_as_it_does_inside_a_query(text, amount, currency, per_hour):
    from advisor.parse import parse_budget

    b = parse_budget(text)
    assert (b.amount, b.currency, b.per_hour) == (amount, currency, per_hour)
    assert parse_query(f"7b {text}").budget == b
    assert parse_budget("7b fp16") is None


def test_every_id_the_vocabularies_name_is_in_the_catalogs():
    from advisor import catalog
    from advisor.parse import vocab

    models = vocab.load("models")
    named = set(models["phrases"].values()) | set(models["distill"]["sizes"].values())
    named |= {f["default"] for f in models["families"].values()}
    named |= set(vocab.load("ollama")["tags"].values())
    assert sorted(named - set(catalog.models())) == []
    gpu_ids = set(vocab.load("cards")["spellings"].values())
    assert sorted(gpu_ids - set(catalog.gpus())) == []
    formats = set(vocab.load("quant")["words"].values())
    formats |= {v for v in models["repo_suffixes"].values() if v}
    assert sorted(formats - set(catalog.formats())) == []


@pytest.mark.parametrize(
    ("typo", "first"),
    [
        ("lama3-8b", "llama-3-8b"),
        ("qwen2.8 7b int4", "qwen2.5-7b"),
        ("mistrel-7b 推理", "mistral-7b"),
        ("gemma-3-13b", "gemma-3-12b"),
        ("deepseek-v4", "deepseek-v3"),
    ],
)
def test_a_misspelt_model_gets_did_you_mean_by_spelling_family_and_size(typo, first):
    p = parse_query(typo)
    assert p.error is not None and p.error.code == "unknown_model"
    assert p.error.suggestions[0] == first


def test_a_model_asked_at_a_context_it_lacks_is_answered_at_its_limit_with_the_sibling():
    """Before: a refusal ("context_too_long"); now the answer at 8k, naming Llama 3.1."""
    p = parse_query("Llama-3-8B 32k")
    assert p.ok and p.workload.context_tokens == 8192
    assert "context_capped = 32768 8192 Llama 3 8B llama-3.1-8b" in p.assumed
    # without a sibling that takes the context, still the clear error
    assert parse_query("qwen2.5-32b ctx 1000000").error.code == "context_too_long"
    # Qwen2.5-7B at 1M: its 1M-window release (Qwen2.5-7B-Instruct-1M) is the sibling
    capped = next(a for a in parse_query("qwen2.5-7b ctx 1000000").assumed if "capped" in a)
    assert capped.endswith("qwen2.5-7b-instruct-1m"), capped


def test_a_longer_context_sibling_is_the_same_model_re_released_not_a_coder_or_a_distill():
    """Before: Qwen3-30B-A3B at 128k pointed to Qwen3-Coder, Qwen3-32B (dense) to it too, and
    DeepSeek-V2-Lite to an R1 distill; the 2507 release of the same MoE is the sibling."""
    p = parse_query("qwen3-30b-a3b 128k")
    capped = next(a for a in p.assumed if a.startswith("context_capped"))
    assert "qwen3-30b-a3b-instruct-2507" in capped and "coder" not in capped
    assert parse_query("qwen3-32b 128k").error.code == "context_too_long"
    assert parse_query("deepseek-v2-lite 128k").error.code == "context_too_long"
    assert parse_query("Qwen3-30B-A3B-Instruct-2507 128k").workload.context_tokens == 131072


@pytest.mark.parametrize(
    "text",
    [
        "r1 蒸馏 14b",
        "deepseek-r1 14b",
        "deepseek r1 14b q4",
        "deepseek-r1:14b",
        "ds r1 distill qwen 14b",
        "蒸馏版 r1 14b",
        "DeepSeek-R1-Distill-Qwen-14B-GGUF",
        "r1 14b 蒸馏",
    ],
)
def test_a_distill_never_reads_as_the_671b_original(text):
    p = parse_query(text)
    assert p.ok and p.workload.model == "deepseek-r1-distill-qwen-14b", (text, p.error)


def test_nothing_in_the_table_that_would_be_read_alone_ends_in_ignored():
    """A fragment the parser skipped in context must read as nothing on its own: if it names
    a size, format, card or knob alone, the line lost something that changes memory."""
    import tomllib
    from pathlib import Path

    from advisor.parse.followup import fields_named

    rows = tomllib.loads((Path(__file__).parent / "data" / "parse_lines.toml").read_text())
    dropped = []
    for row in rows["line"]:
        for fragment in parse_query(row["t"]).ignored:
            named = fields_named(fragment)
            alone = parse_query(fragment)
            if (isinstance(named, set) and named) or alone.gpu_id or alone.vram_gib:
                dropped.append((row["t"], fragment))
    assert dropped == []


def test_follow_ups_change_only_what_they_name():
    from advisor.parse.followup import parse_followup

    last = parse_query("qwen2.5-14b lora 2x3090 ctx 4k")
    # LoRA on 4-bit weights is QLoRA, as a new question "qwen2.5-14b lora int4" reads
    assert canonical_query(parse_followup("换成 int4", last)) == (
        "qwen2.5-14b · nf4 · qlora · ctx 4096 · 2 gpus · on gpu:rtx-3090"
    )
    assert parse_followup("用 4090 呢", last).gpu_id == "rtx-4090"
    assert parse_followup("what about 4 cards", last).workload.num_gpus == 4
    inference = parse_followup("推理呢", last).workload
    assert inference.mode.value == "inference" and inference.context_tokens == 4096
    assert inference.lora_rank is None
    assert parse_followup("qwen2.5-7b", last) is None  # a model alone is a new question
    assert parse_followup("换成 qwen2.5-7b", last).workload.model == "qwen2.5-7b"
    assert parse_followup("hello", last) is None
    assert parse_followup("画图", last) is None and parse_followup("渲染", last) is None
    # a whole new question in ordinary words is not merged into the last one
    assert parse_followup("want to run llama-3.1-8b with vllm on 3090", last) is None
    assert parse_followup("用 4090 跑 qwen2.5-7b 呢", last) is None
    assert parse_followup("what about qwen2.5-32b", last).workload.model == "qwen2.5-32b"
    assert parse_followup("set batch to 16", last).workload.batch_size == 16
    assert parse_followup("如果是两张呢", last).gpu_count == 2
    assert parse_followup("72b 呢", last).workload.model == "qwen2.5-72b"  # same line, new size
    assert parse_followup("上下文改成 8k", last).workload.seq_len == 8192  # training: seq_len
    assert parse_followup("ctx 64k", parse_query("llama-3-8b")).error.code == "context_too_long"


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("lora qwen2.5-7b 10w条数据 3 epochs seq 1024", 100_000 * 1024 * 3),
        ("lora qwen2.5-7b 5000 samples epoch 2", 5000 * 1024 * 2),
        ("lora 7b 1万条 2轮", 10_000 * 1024 * 2),
        ("lora 7b data 100m tokens 3 epochs", 300_000_000),
    ],
)
def test_training_data_in_samples_or_tokens_times_epochs(text, tokens):
    assert parse_query(text).workload.train_tokens == tokens


def test_an_unqualified_fine_tune_is_lora_and_said_so_in_both_languages():
    """LLaMA-Factory's default finetuning_type is LoRA: "微调" alone is LoRA on an LLM, QLoRA
    when 16-bit weights would not fit the card, full only when asked ("全参") or sharded."""
    from advisor.parse.followup import parse_followup
    from advisor.render import assumption_text

    p = parse_query("chatglm3-6b 微调")
    assert p.workload.mode.value == "lora" and "finetune = lora" in p.assumed
    assert "LoRA" in assumption_text("zh", "finetune = lora")
    assert "全参微调" in assumption_text("zh", "finetune = lora")
    assert "full fine-tune" in assumption_text("en", "finetune = lora")
    small = parse_query("I have a 4060 with 8gb, can I fine tune a 7b?")
    assert small.workload.mode.value == "qlora" and "finetune_fit = qlora" in small.assumed
    assert "QLoRA" in assumption_text("en", "finetune_fit = qlora")
    assert parse_query("sdxl 微调").workload.mode.value == "full"  # not an LLM
    assert parse_query("openai/whisper-small 微调").workload.mode.value == "full"
    # Unsloth on a card without bf16 trains in fp16
    t4 = parse_query("想 finetune llama3.2-1b, 只有 colab T4, 用 unsloth").workload
    assert t4.compute_dtype == "fp16"
    # the follow-up "微调呢" after an inference answer reads the same way
    last = parse_query("qwen2.5-14b 4090")
    tuned = parse_followup("微调呢", last)
    assert tuned.workload.mode.value == "qlora" and tuned.workload.weights_format == "nf4"
    assert parse_followup("微调呢", parse_query("qwen2.5-7b a100")).workload.mode.value == "lora"


def test_a_4bit_base_is_never_fully_fine_tuned():
    """A 4-bit base takes no gradient: "全参 … int4", or "换成 int4" after a full fine-tune,
    is QLoRA, and the answer says why (both languages)."""
    from advisor.parse.followup import parse_followup
    from advisor.render import assumption_text

    p = parse_query("8× A100 全参微调 llama3-70b int4")
    assert (p.workload.mode.value, p.workload.weights_format) == ("qlora", "nf4")
    assert "four_bit_full = qlora" in p.assumed
    assert "全参数" in assumption_text("zh", "four_bit_full = qlora")
    assert "fully fine-tuned" in assumption_text("en", "four_bit_full = qlora")
    full = parse_query("8× A100 全参微调 llama3-70b")
    changed = parse_followup("换成 int4", full)
    assert (changed.workload.mode.value, changed.workload.weights_format) == ("qlora", "nf4")
    assert "four_bit_full = qlora" in changed.assumed
    assert parse_query("全参微调 qwen2.5-7b fp8").workload.mode.value == "full"  # 8-bit: kept


def test_gguf_runtimes_default_to_q4_k_m_and_say_so():
    """Ollama / LM Studio / llama.cpp load GGUF: a model written HF-style with no format is
    their default download (Q4_K_M), said in both languages; a type named is kept."""
    from advisor.render import assumption_text

    p = parse_query("Qwen3-30B-A3B ollama 4090")
    assert p.workload.weights_format == "q4_k_m" and "gguf_runtime = Q4_K_M" in p.assumed
    assert "Q4_K_M" in assumption_text("zh", "gguf_runtime = Q4_K_M")
    assert "default download" in assumption_text("en", "gguf_runtime = Q4_K_M")
    assert parse_query("Qwen/Qwen2.5-14B-Instruct-GGUF q8_0 on 4090").workload.weights_format == (
        "q8_0"
    )
    assert parse_query("lora qwen2.5-7b ollama").workload.weights_format is None  # training


@pytest.mark.parametrize(
    "text, amount, currency, per_hour",
    [
        ("qwen2.5-7b 推理 5块一小时", 5, "CNY", True),
        ("qwen2.5-7b 推理 每小时 5 块", 5, "CNY", True),
        ("qwen2.5-7b 推理 5元/时", 5, "CNY", True),
        ("qwen2.5-7b 推理 预算每小时5元", 5, "CNY", True),
        ("qwen2.5-7b 一小时 3 块钱", 3, "CNY", True),
        ("serve qwen2.5-7b for $2 an hour", 2, "USD", True),
        ("qwen2.5-7b lora budget $100 total", 100, "USD", False),
        ("qwen2.5-7b lora total budget 200 yuan", 200, "CNY", False),
        ("qwen2.5-7b lora 预算 300 块", 300, "CNY", False),
        ("qwen2.5-7b lora $300 total", 300, "USD", False),
    ],
)
def test_budgets_in_the_ways_people_write_them(text, amount, currency, per_hour):
    """Per hour ("5块一小时", "每小时 5 块") or for the whole job ("预算", "budget", "total"):
    the budget words are read with the amount, never listed as ignored."""
    p = parse_query(text)
    assert p.budget is not None, text
    assert (p.budget.amount, p.budget.currency, p.budget.per_hour) == (amount, currency, per_hour)
    assert p.ignored == [], p.ignored


def test_a_count_per_hour_without_money_is_not_a_budget():
    assert parse_query("sdxl 每小时 100 张").budget is None


def test_families_added_read_as_themselves_not_as_neighbours():
    """InternVL is not InternLM; SAM 2 is itself (the catalog's SAM 2.1 Hiera-L), never SAM
    ViT-H; a model still without a memory model is said so, in both languages."""
    from advisor.render import render

    p = parse_query("internvl2-8b 推理")
    assert p.ok and p.workload.model == "internvl2-8b"
    assert parse_query("minicpm-v 2.6 推理").workload.model == "minicpm-v-2.6"
    assert parse_query("yolov5s 训练 coco").workload.image_width == 640
    sam2 = parse_query("sam2 推理 3060")
    assert sam2.ok and sam2.workload.model == "sam2.1-hiera-large"
    cascade = parse_query("stable cascade 出图 3060")
    assert cascade.error is not None and cascade.error.code == "not_estimated"
    for lang in ("zh", "en"):
        text = render("error", lang, plain=True, error=cascade.error, parsed=cascade)
        assert "Stable Cascade" in text


def test_task_words_read_as_an_expert_would_and_say_so():
    """DreamBooth trains; a LoRA in ComfyUI is loaded; "8 张" adds images; "vs" answers the
    first model and names the second; "cpu" and DPO/GRPO get a note; 10^30 is not a size."""
    from advisor.parse.followup import parse_followup
    from advisor.render import assumption_text

    assert parse_query("sd1.5 dreambooth 3090").workload.mode.value == "full"
    comfy = parse_query("ComfyUI sdxl + lora 出图 3060")
    assert comfy.workload.mode.value == "inference" and "lora_loaded = LoRA" in comfy.assumed
    assert parse_query("qwen2.5-vl-7b 多图 8 张 推理").workload.images_per_prompt == 8
    vs = parse_query("qwen2.5-7b vs llama3-8b 4090")
    assert "second_model = Llama 3 8B" in vs.assumed and vs.ignored == []
    assert "cpu_only = cpu" in parse_query("qwen2.5-7b cpu").assumed
    dpo = parse_query("dpo llama3-8b")
    assert dpo.workload.mode.value == "dpo" and dpo.workload.policy_mode is None
    huge = parse_query("10^30 参数")
    assert huge.error is not None and huge.error.code == "bad_value"
    for key in (
        "lora_loaded = LoRA",
        "second_model = Llama 3 8B",
        "cpu_only = cpu",
        "concurrency_training = 8",
    ):
        for lang in ("zh", "en"):
            assert assumption_text(lang, key) != key.split(" = ")[1], (lang, key)
    # a training follow-up "并发改成 8" says concurrency does not apply to training
    trained = parse_followup("并发改成 8", parse_query("qwen2.5-7b lora 4090"))
    assert "concurrency_training = 8" in trained.assumed and trained.workload.concurrency is None


@pytest.mark.parametrize(
    "text, card, count",
    [
        ("what's the biggest model I can run on a 4090", "rtx-4090", None),
        ("4090 能跑什么模型", "rtx-4090", None),
        ("2x3090 能跑哪些模型", "rtx-3090", 2),
    ],
)
def test_what_can_this_card_run_is_a_fit_question(text, card, count):
    p = parse_query(text)
    assert p.ask_fit and p.error is None and p.workload is None
    assert (p.gpu_id, p.gpu_count, p.ignored) == (card, count, [])
    # a model named: an ordinary question
    assert not parse_query("qwen2.5-7b 4090 能跑吗").ask_fit


@pytest.mark.parametrize(
    ("text", "frames"),
    [
        ("wan2.1 14b 480p 81帧 4090", 81),
        ("ltx-video 161 frames 768x512", 161),
        ("hunyuanvideo num_frames=129 720p", 129),
        ("allegro diffusers cpu offload 720p 88f, RTX A2000 12GB", 88),  # a README's shorthand
        ("step-video 544px992px136f", 136),
        ("wan2.1 1.3b 480p", None),  # not stated: the model's default frames are assumed
    ],
)
def test_a_video_frame_count_is_read_and_kept_in_the_canonical_line(
    text: str, frames: int | None
) -> None:
    p = parse_query(text)
    assert p.ok and p.workload is not None
    assert p.workload.video_frames == frames
    again = parse_query(canonical_query(p))
    assert again.workload is not None and again.workload.video_frames == frames


@pytest.mark.parametrize(
    ("text", "card"),
    [
        ("华为Ascend 310P卡是否支持部署qwen2.5-72B", "华为 ascend 310p"),
        ("radeon rx 7800xt 能跑 qwen2.5-14b 吗", "radeon rx 7800xt"),
        ("radeon rx 7900xtx 能跑 qwen2.5-14b 吗", None),  # in the catalog (gpus_owned.toml)
        ("can my Arc B580 run llama 3 8b", "arc b580"),
        ("寒武纪 MLU370 跑 glm-4-9b", "寒武纪 mlu370"),
        ("qwen2.5-7b 需要什么显卡", None),  # no card named: nothing to flag
        ("昇腾910B 能跑 qwen2.5-72b 吗", None),  # a catalog card is answered, not flagged
    ],
)
def test_a_card_the_catalog_lacks_is_named_not_silently_dropped(text: str, card: str | None):
    p = parse_query(text)
    assert p.ok and p.gpu_id is None or card is None
    assert p.unknown_card == card


def test_a_resolution_like_310p_beside_an_llm_is_not_an_image_size():
    assert parse_query("qwen2.5-72b 310p").workload.image_width is None
    assert parse_query("sdxl 768p").workload.image_width == 768  # an image model's side
    assert parse_query("wan2.1 14b 480p").workload.image_height == 480


@pytest.mark.parametrize(
    "text",
    [
        "qwen2.5-14b q4_k_m gguf 用llama.cpp 在 3060 12g 上能跑不",
        "全参微调 llama3-8b 8卡4090 行不行",
        "qwen2.5-7b 和 llama3-8b 哪个省显存 4090 推理",
        "4090 和 a100 40g 哪个适合 lora 微调 qwen2.5-7b",
    ],
)
def test_question_particles_are_not_listed_as_not_understood(text: str) -> None:
    """ "能跑不" showed the user "没看懂、已忽略的部分：「不」" (review of 2026-12-07)."""
    p = parse_query(text)
    assert p.ok and p.ignored == [], (text, p.ignored)


@pytest.mark.parametrize(
    ("text", "vram"),
    [
        ("RTX 5090Ti 128G 能跑啥", 128.0),
        ("rtx 5090ti 128g 跑 qwen2.5-72b", 128.0),
        ("RTX 5090Ti 能跑 qwen2.5-7b", None),
    ],
)
def test_a_card_no_one_sells_is_named_unknown_and_sized_by_its_stated_memory(
    text: str, vram: float | None
) -> None:
    """ "RTX 5090Ti 128G" was dropped without a word (review of 2026-12-07)."""
    p = parse_query(text)
    assert p.gpu_id is None and p.unknown_card == "rtx 5090ti" and p.vram_gib == vram, (
        text,
        p.unknown_card,
        p.vram_gib,
    )


def test_a_training_run_with_people_named_is_not_a_serving_plan() -> None:
    """ "qwen2.5-32b qlora 50人 vllm" was planned as serving 50 people with a KV cache of
    0.0 GiB per sequence (review of 2026-12-07): a training run is answered as its fit."""
    p = parse_query("qwen2.5-32b qlora 50人 vllm")
    assert p.question_kind == "fit" and p.workload is not None
    assert p.workload.mode.value == "qlora" and p.workload.users is None
    assert "concurrency_training = 50" in p.assumed
    assert parse_query("部署 qwen2.5-32b 给实验室50个人同时用 vllm").question_kind == "serve"


def test_bs_glued_to_its_number_and_a_bare_power_of_two_length_are_read() -> None:
    """Before: "bs4" and "2048" were listed as not understood (batch 1, seq 1024 assumed)."""
    p = parse_query("lora qwen2-7b bs4 2048 24g")
    assert p.workload.batch_size == 4 and p.workload.seq_len == 2048 and not p.ignored
    assert "bare_length = 2048" in p.assumed
    # a number that is no usual length stays unread; an image model's stays its resolution
    assert "1000" in parse_query("qwen2.5-7b 1000 3090").ignored
    assert parse_query("sdxl 1024 4090").workload.image_width == 1024
