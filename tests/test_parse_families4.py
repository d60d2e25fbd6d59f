"""Families of spellings read from the fresh real lines (tests/data/parse_lines_real2.toml),
pinned with other members of each family than the lines that showed them: counts with
memory sizes, a size the model needs (not the card), Ollama tags with a format beside them,
CPU model numbers, sizes before a versioned family, and new releases of known lines."""

import pytest

from advisor.parse import parse_query


def _card(line: str) -> tuple:
    p = parse_query(line)
    assert p.ok, (line, p.error)
    return p.gpu_id, p.gpu_count, p.vram_gib


@pytest.mark.parametrize(
    ("line", "card"),
    [
        ("2台4卡 a100 微调 qwen2.5-7b", ("a100-80gb-pcie", 8, None)),  # 4 in each machine
        ("三机 24卡 H100 训练 70b", ("h100-sxm", 24, None)),  # more than a machine holds: total
        ("a100 4*40g llama-3.1-8b", ("a100-40gb-sxm", 4, None)),
        ("两张 24G 的 4090 跑 qwen2.5-32b awq", ("rtx-4090", 2, None)),
        ("80GA800 跑 qwen2.5-72b", ("a800-80gb", None, None)),
        ("我有2张48G显卡 跑 qwen2.5-72b awq", (None, 2, 48.0)),
        ("llama-3.1-70b oom in 2 H100", ("h100-sxm", 2, None)),
        ("A6000 显存 44G qwen2.5-14b", ("rtx-a6000", None, None)),  # 48 GB as GiB
    ],
)
def test_counts_and_memory_around_a_card_are_read(line, card):
    assert _card(line) == card


@pytest.mark.parametrize(
    "line",
    ["qwen2.5-7b 至少要 20G 显存吗", "跑 qwen2.5-14b 需要 32G 显存？", "glm-4-9b 必须 24G 显存吗"],
)
def test_a_size_the_model_needs_is_not_the_users_card(line):
    assert _card(line) == (None, None, None)


def test_a_format_named_beside_an_ollama_tag_beats_the_tags_default():
    p = parse_query("qwen2.5:7b 16fp on a 3090")
    assert p.ok and p.workload.weights_format == "fp16"
    assert p.workload.runtime.value == "ollama"
    assert not any(a.startswith("ollama_quant") for a in p.assumed)
    assert parse_query("qwen2.5:7b").workload.weights_format == "q4_k_m"


def test_full_context_is_no_full_fine_tune():
    p = parse_query("llama-3.1-8b with full context length on a 4090")
    assert p.ok and p.workload.mode.value == "inference"


@pytest.mark.parametrize(
    "line", ["i7-13700K, 64g内存, 3090, qwen2.5-14b", "Ryzen 9 7950X3D + 4090 跑 qwen2.5-14b"]
)
def test_a_cpu_model_number_is_no_context_length(line):
    p = parse_query(line)
    assert p.ok and p.workload.context_tokens is None and p.gpu_id is not None


@pytest.mark.parametrize(
    ("line", "model"),
    [
        ("13b llama2 lora", "llama-2-13b"),
        ("the 20b model of gpt-oss on a 4090", "gpt-oss-20b"),
        ("8b 的 llama3.1", "llama-3.1-8b"),
    ],
)
def test_a_size_before_a_versioned_family_names_the_model(line, model):
    p = parse_query(line)
    assert p.ok and p.workload.model == model


@pytest.mark.parametrize("line", ["biggest qwen model?", "最小的千问 要多少显存"])
def test_a_superlative_asks_for_the_size_instead_of_assuming_one(line):
    p = parse_query(line)
    assert not p.ok and p.error.code in ("no_model", "unknown_model")


@pytest.mark.parametrize(
    ("line", "params_b"),
    [
        ("qwen3.5-9b 4090", 9.0),
        ("Qwen3-VL-8B-Instruct 推理", 8.0),
        ("glm-4.1v-9b lora", 9.0),
        ("InternVL3-38B awq", 38.0),
        ("qwen3.5:35b", 35.0),
    ],
)
def test_a_known_lines_new_release_is_its_size_with_the_name_kept(line, params_b):
    p = parse_query(line)
    assert p.ok and p.workload.model is None and p.workload.params_b == params_b
    assert p.unrecognized is not None and p.unrecognized.code == "unknown_model"


@pytest.mark.parametrize("line", ["qwen2.9-7b", "gemma-3-5b", "llama7 8b", "qwen2.5-vl-13b"])
def test_a_version_the_catalog_already_passed_or_a_far_one_stays_did_you_mean(line):
    p = parse_query(line)
    assert not p.ok and p.error.code == "unknown_model" and p.error.suggestions


def test_a_family_size_no_generation_has_says_the_name_was_not_read():
    p = parse_query("Can Tiny Llama 1.5B lora finetune in one 24GB gpu?")
    assert p.ok and p.workload.params_b == 1.5 and p.workload.model is None
    assert p.unrecognized is not None and "1.5b" in p.unrecognized.detail


def test_an_ascend_card_named_by_its_tflops_is_read():
    assert _card("8卡 910B 313T 跑 qwen2.5-72b") == ("ascend-910b", 8, None)


def test_when_the_count_is_asked_a_fine_tune_is_not_squeezed_onto_one_card():
    p = parse_query("微调 qwen2.5-72b 需要多少节点 h100")
    assert p.ok and p.ask_count and p.workload.mode.value == "lora"


def test_freeze_tuning_is_read_as_freeze_tuning_not_a_full_fine_tune() -> None:
    """LLaMA-Factory's finetuning_type: freeze trains the last layers only; "冻结微调" and
    "freeze" were read as a full fine-tune (135 GiB for a 7B where freeze-tuning needs ~26).
    Expected: Mode.freeze, in both languages, and the canonical line reads back the same."""
    from advisor.models.choices import Mode
    from advisor.parse import canonical_query

    for q in (
        "冻结微调 qwen2.5-7b 4090",
        "qwen2.5-7b freeze-tuning on a 4090",
        "freeze 微调 qwen2.5-7b",
    ):
        p = parse_query(q)
        assert p.workload is not None and p.workload.mode == Mode.freeze, q
        again = parse_query(canonical_query(p))
        assert again.workload is not None and again.workload.mode == Mode.freeze, q
    assert parse_query("全参微调 qwen2.5-7b").workload.mode == Mode.full  # type: ignore[union-attr]


def test_asking_how_fast_is_not_listed_as_a_part_not_understood() -> None:
    """ "出图要多久" / "速度怎么样" / "how fast": the answer gives images/min, tok/s or hours on
    the card, so these are read, not listed under "did not understand"."""
    for q in (
        "4090 跑 flux dev fp8 出图要多久",
        "qwen2.5-7b 4090 速度怎么样",
        "how fast is llama3-8b on a 3090",
    ):
        p = parse_query(q)
        assert p.ok and not p.ignored, (q, p.ignored)


@pytest.mark.parametrize(
    ("line", "gguf", "was"),
    [
        ("qwen2.5-7b fp8 ollama 4090", "q8_0", "FP8"),
        ("qwen2.5-7b int8 llama.cpp 4090", "q8_0", "INT8"),
        ("qwen2.5-7b awq ollama", "q4_k_m", "AWQ-4BIT"),
    ],
)
def test_a_gguf_runtime_runs_the_gguf_type_of_the_width_named(line, gguf, was) -> None:
    """llama.cpp, Ollama and LM Studio load GGUF files only: "fp8 ollama" was sized as an
    fp8 checkpoint no GGUF runtime loads (and 8 bits per weight where Q8_0 stores 8.5).
    Expected: the GGUF type of that width, said as an assumption; GGUF types, 16-bit and
    MXFP4 (a GGUF type for gpt-oss) stay as named."""
    p = parse_query(line)
    assert p.workload is not None and p.workload.weights_format == gguf
    assert f"gguf_type = {was} → {gguf.upper()}" in p.assumed
    for kept, fmt in (("qwen2.5-7b q5_k_m ollama", "q5_k_m"), ("qwen2.5-7b fp16 ollama", "fp16")):
        assert parse_query(kept).workload.weights_format == fmt  # type: ignore[union-attr]
    assert parse_query("gpt-oss-20b mxfp4 llama.cpp").workload.weights_format == "mxfp4"  # type: ignore[union-attr]


def test_an_ollama_answer_names_llama_cpps_attention_not_pytorchs() -> None:
    from advisor.recommend import recommend_query
    from advisor.render import render

    for q, lang, said, unsaid in (
        ("qwen2.5-7b ollama 4090", "zh", "llama.cpp 自带的 FlashAttention", "PyTorch SDPA"),
        ("qwen2.5-7b on 4090", "en", "attention: PyTorch SDPA", "llama.cpp flash"),
    ):
        parsed = parse_query(q)
        text = render(
            "answer", lang, rec=recommend_query(parsed), parsed=parsed, canonical=q, plain=True
        )
        assert said in text and unsaid not in text, q


def test_several_laptops_are_judged_one_laptop_and_the_answer_says_so() -> None:
    """A laptop has one GPU: "2x 4090 laptop" (English, where "2x" was dropped unread) and
    "两张 4090 笔记本" (read as two cards in one box, split by tensor parallel) are two laptops
    whose memory does not add up. Expected: one laptop card judged, the count said in the
    answer in the reader's language, no split over cards."""
    from advisor.parse import canonical_query
    from advisor.recommend import recommend_query
    from advisor.render import render

    for q, lang, said in (
        ("qwen2.5-14b fp16 on my 2x 4090 laptop", "en", "2 laptops: one GPU each"),
        ("两张 4090 笔记本 跑 qwen2.5-14b fp16", "zh", "2 台笔记本：每台一块 GPU"),
    ):
        parsed = parse_query(q)
        assert (parsed.gpu_id, parsed.gpu_count) == ("rtx-4090-laptop", None), q
        assert "laptops = 2" in parsed.assumed, q
        rec = recommend_query(parsed)
        assert rec.named is not None and rec.named.count == 1 and rec.named.parallelism is None
        text = render("answer", lang, rec=rec, parsed=parsed, canonical=q, plain=True)
        assert said in text, (q, text[:400])
        # the answer's buttons re-read its canonical line: the laptops are still laptops
        again = parse_query(canonical_query(parsed))
        assert (again.gpu_id, again.gpu_count) == ("rtx-4090-laptop", None), q
        assert "laptops = 2" in again.assumed, canonical_query(parsed)
    one = parse_query("qwen2.5-7b on my 4090 laptop")
    assert not any(a.startswith("laptops") for a in one.assumed)
    # the answer's card button: another card is one card, not two laptops' count of it
    from bot.answer import apply_change
    from bot.choices import answer_choices

    two = parse_query("qwen2.5-14b fp16 on my 2x 4090 laptop")
    changed = parse_query(canonical_query(apply_change(two, "g", "0")))
    assert (changed.gpu_id, changed.gpu_count) == (answer_choices("g")[0], None)


def test_a_lab_line_of_several_laptops_registers_one_machine_per_laptop() -> None:
    """/lab "两台 4060 笔记本" or "my laptops 2x 4090 laptop": so many machines of one laptop
    card each (before: one machine named "两台" with one card, the second laptop lost)."""
    from advisor.parse.machines import parse_machine_line

    for line, gpu, n in (
        ("两台 4060 笔记本", "rtx-4060-laptop", 2),
        ("三台笔记本 4060", "rtx-4060-laptop", 3),
        ("my laptops 2x 4090 laptop", "rtx-4090-laptop", 2),
    ):
        machines = parse_machine_line(line).machines
        assert [(m.gpu_id, m.count) for m in machines] == [(gpu, 1)] * n, line
    one = parse_machine_line("laptop 4060 laptop").machines
    assert [(m.name, m.count) for m in one] == [("laptop", 1)]
    assert [m.count for m in parse_machine_line("node1 4x a100 40g").machines] == [4]
