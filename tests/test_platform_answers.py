"""Answers for the hardware people own, in its own terms: a Mac or a Pascal
card is answered for the runtime its owners use (llama.cpp / Ollama) with that runtime's
formats and the speed of each; a card's memory terms and tools carry its compute stack's
words; the architecture table every card finds its entry in."""

from __future__ import annotations

import pytest

from advisor import catalog
from advisor.architectures import architecture_of, architectures
from advisor.constraints import requirements
from advisor.parse import parse_query
from advisor.recommend import recommend_query
from advisor.render import render
from standin import FakeTelegram, User
from tests.conftest import say, shown

MAC = "mac m2 max 64g 跑 qwen2.5-32b 速度"
P40 = "P40 24g 跑 llama 13b 推理速度咋样"


def _answer(line: str, lang: str = "zh") -> tuple[object, str]:
    parsed = parse_query(line)
    rec = recommend_query(parsed, default_currency="CNY" if lang == "zh" else "USD")
    return rec, render("answer", lang, rec=rec, parsed=parsed, view="full", plain=True)


@pytest.mark.parametrize(
    ("line", "runtime", "fmt", "assumption"),
    [
        (MAC, "llamacpp", "q4_k_m", "runtime_on_apple"),
        (P40, "llamacpp", "q4_k_m", "runtime_on_pascal"),
        ("m4 max 128g qwen2.5-72b", "llamacpp", "q4_k_m", "runtime_on_apple"),
        ("macbook pro m1 max 32gb 跑 qwen2.5-14b", "llamacpp", "q4_k_m", "runtime_on_apple"),
        ("1080ti llama3-8b", "llamacpp", "q4_k_m", "runtime_on_pascal"),
        # a GGUF type named is kept; a checkpoint's own format is run where it was made
        ("p40 qwen2.5-7b q8_0", "llamacpp", "q8_0", "runtime_on_pascal"),
        ("我用了本地的chatglm-6b-int4模型 1080ti11G", None, "int4", None),
        # what the owner names is kept
        ("m2 max 64g mlx qwen2.5-32b", "mlx", None, None),
        ("p40 vllm qwen2.5-7b", "vllm", None, None),
        ("m2 max 64g ollama qwen2.5-32b", "ollama", "q4_k_m", None),
        # other cards and other jobs keep their defaults
        ("p100 qwen2.5-7b", None, None, None),  # P100 runs fp16 at full rate
        ("4090 qwen2.5-7b", None, None, None),
        ("m2 max 64g qwen2.5-7b lora", None, None, None),
    ],
)
def test_a_mac_or_a_pascal_card_is_answered_for_llama_cpp_unless_told(
    line: str, runtime: str | None, fmt: str | None, assumption: str | None
) -> None:
    p = parse_query(line)
    w = p.workload
    got = w.runtime.value if w.runtime is not None else None
    assert got == runtime, (line, got)
    if fmt is not None:
        assert w.weights_format == fmt, (line, w.weights_format)
    said = [a for a in p.assumed if a.startswith("runtime_on_")]
    assert said == ([f"{assumption} = llama.cpp"] if assumption else []), (line, p.assumed)


def _rows(rec) -> dict[str, list]:  # noqa: ANN001
    rows: dict[str, list] = {}
    for c in rec.grid:
        rows.setdefault(c.format, []).append(c)
    return rows


def test_a_mac_gets_gguf_rows_with_the_speed_of_each() -> None:
    """Was: "✅ weights quantized to fp8" and a grid of FP8/INT8 rows on Apple silicon, no
    speed. Now: llama.cpp's GGUF types at the Metal speed measured on an M3 Max (400 GB/s:
    LLaMA 30B q4_0, 18 GiB, 16.2 tok/s; data/decode_speed.toml): Q4_K_M ~15 tok/s, Q8_0
    ~9; BF16 (61 GiB of weights) over the 48 GiB the GPU may use."""
    rec, text = _answer(MAC)
    rows = _rows(rec)
    assert list(rows) == ["bf16", "q8_0", "q4_k_m"]
    assert rows["bf16"][0].state == "no"
    q4, q8 = rows["q4_k_m"][0], rows["q8_0"][0]
    assert q4.state == "ok" and 12 <= q4.tokens_per_s <= 18
    assert q8.state == "ok" and 7 <= q8.tokens_per_s <= 11
    assert rec.verdict.word == "fits" and 12 <= rec.headline.decode_tokens_per_s <= 18
    assert "fp8" not in text.lower() and "FP8" not in text
    assert "iogpu.wired_limit_mb" in text
    assert "租之前确认镜像" not in text  # a Mac one owns is not rented


def test_a_p40_gets_llama_cpp_and_its_speed_not_bitsandbytes_int8() -> None:
    """Was: transformers fp16 and "✅ weights quantized to int8" (bitsandbytes' LLM.int8
    needs CC 7.5; the P40 is 6.1), no speed. llama.cpp PR #4766 measures 56.8 tok/s for
    llama 7B Q4_0 (3.56 GiB) on a P40: 13B Q4_K_M (7.3 GiB) at about half that, Q8_0
    (13.8 GiB) at about a third."""
    rec, text = _answer(P40)
    rows = _rows(rec)
    assert list(rows) == ["fp16", "q8_0", "q4_k_m"]
    q4, q8 = rows["q4_k_m"][0], rows["q8_0"][0]
    assert q4.state == "ok" and 15 <= q4.tokens_per_s <= 30
    assert q8.state == "ok" and 12 <= q8.tokens_per_s <= 20
    assert "int8" not in text.lower().replace("q8_0", "")
    # the pitfalls of the runtimes it does not run
    assert "--dtype float16" not in text and "FlashAttention-2" not in text


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_memory_terms_and_tools_use_the_platforms_words(lang: str) -> None:
    """Was: "CUDA context + allocator" and "nvidia-smi view" on a Mac and an MI300X."""
    _, mac = _answer(MAC, lang)
    assert "Metal" in mac and "CUDA" not in mac.split("\n\n")[0]
    assert "nvidia-smi" not in mac
    _, mi = _answer("MI300X llama3-70b fp8", lang)
    assert "HIP" in mi and "rocm-smi" in mi
    assert "CUDA context" not in mi and "CUDA 上下文" not in mi and "CUDA 图" not in mi
    _, nv = _answer("4090 qwen2.5-7b", lang)
    assert "CUDA" in nv and "nvidia-smi" in nv


def test_every_card_but_ascend_finds_its_architecture() -> None:
    missing = [
        g.id for g in catalog.gpus().values() if architecture_of(g) is None and g.vendor != "Huawei"
    ]
    assert not missing
    assert architecture_of(catalog.gpus()["tesla-p40"]).id == "pascal-gp10x"
    assert architecture_of(catalog.gpus()["mi300x"]).id == "cdna3"
    assert architecture_of(catalog.gpus()["apple-m2-max-64gb"]).backend == "Metal"


def test_the_architecture_table_agrees_with_the_cards_and_the_rules() -> None:
    """The table says what an architecture cannot do; the cards' own flags and the blocking
    rules (capabilities.toml) must not say otherwise."""
    for g in catalog.gpus().values():
        arch = architecture_of(g)
        if arch is None:
            continue
        assert not (g.fp8_supported and not arch.fp8), g.id
        assert arch.vendor == g.vendor, g.id
    rules = {r.id: r for r in requirements()}
    fa2 = rules["flash_attention_needs_ampere"].min_cc
    engine = rules["serving_engine_needs_volta"].min_cc
    for arch in architectures():
        assert arch.sources, arch.id
        for cc in arch.match:
            if arch.vendor == "NVIDIA":
                assert arch.flash_attention_2 == (float(cc) >= fa2), arch.id
                assert arch.vllm == (float(cc) >= engine), arch.id
        if arch.llm_runtime == "llamacpp":
            # the assumption that says so has words in both languages
            key = f"runtime_on_{arch.id.split('-')[0]}"
            from advisor.render import labels

            assert key in labels("zh")["assume"] and key in labels("en")["assume"]


ZH = User(7301, "李", "zh-hans")
EN = User(7302, "Ann", "en")


@pytest.mark.parametrize(
    ("user", "line", "expected", "absent"),
    [
        (ZH, MAC, ["Apple M2 Max 64GB", "你的配置", "tok/s", "llama.cpp"], ["fp8", "首选", "RTX"]),
        (ZH, P40, ["Tesla P40", "tok/s", "llama.cpp", "q4_k_m"], ["int8"]),
        (EN, "my m2 max 64gb qwen2.5-32b speed", ["Apple M2 Max 64GB", "tok/s"], ["fp8", "Top"]),
        (ZH, "MI300X llama3-405b fp8", ["4× AMD Instinct MI300X", "至少要 4 张"], ["A800", "H20"]),
        (EN, "MI300X llama3-405b fp8", ["4× AMD Instinct MI300X", "at least 4"], ["A800", "H20"]),
    ],
)
async def test_the_first_reply_answers_the_speed_on_the_owners_hardware(
    tg: FakeTelegram, bot, user: User, line: str, expected: list[str], absent: list[str]
) -> None:
    text = shown(await say(tg, user, line))
    for part in expected:
        assert part in text, (line, part, text)
    for part in absent:
        assert part not in text, (line, part, text)


def test_a_mac_that_runs_it_is_offered_nothing_to_rent() -> None:
    """Was: "other changes: rent 2 cards" and picks "1× RTX 5090", "1× H20" under a Mac
    that runs the job."""
    rec, text = _answer(MAC)
    assert rec.platform == "Apple" and not rec.rent_instead
    assert rec.cheapest is None and rec.options == []
    assert not [f for f in rec.fixes if f.startswith("cards:")]
    assert "租" not in text and "RTX 5090" not in text and "H20" not in text


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_mac_that_cannot_run_it_gets_one_rented_alternative_said_to_be_one(lang: str) -> None:
    rec, text = _answer("m1 pro 16g llama3-70b", lang)
    assert rec.rent_instead and len(rec.options) == 1 and rec.cheapest is not None
    said = "跑不了；要租卡的话" if lang == "zh" else "cannot run this; to rent instead"
    assert said in text
    assert "sudo sysctl" not in text  # 16 GB: nothing to raise once macOS keeps its share


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_an_mi300x_too_small_alone_is_answered_as_several_mi300x(lang: str) -> None:
    """Was: "does not fit: take a bigger card or more cards" (no bigger Instinct exists),
    "rent 4 cards" and picks 8× A800 / 8× H20. 405B in FP8 is ~382 GiB of weights: four
    MI300X (190 GiB usable each) with tensor parallelism under vLLM's ROCm build."""
    rec, text = _answer("MI300X llama3-405b fp8", lang)
    h = rec.headline
    assert (h.gpu_id, h.count, h.parallelism) == ("mi300x", 4, "tp")
    assert rec.verdict.word == "fits"
    assert rec.result.estimate.runtime.value == "vllm"
    assert all(catalog.gpus()[o.gpu_id].vendor == "AMD" for o in rec.options)
    assert "A800" not in text and "H20" not in text
    assert "NVLink" not in text  # Infinity Fabric joins them
    assert "ROCm" in text


def test_a_radeon_is_not_offered_fp8() -> None:
    """Was: "✅ weights quantized to fp8" on a 7900 XTX (FP8 on ROCm needs MI300-class)."""
    rec, text = _answer("7900xtx 跑 qwen2.5-14b")
    assert "fp8" not in (rec.verdict.fix or "")
    assert {c.state for c in rec.grid if c.format == "fp8"} == {"unsupported"}
    assert "租" not in text


@pytest.mark.parametrize(
    ("line", "fix"),
    [
        # 70B is 131 GiB at 16 bits: several cards, not "16× 7900 XTX" as the answer
        ("can my radeon 7900xtx run llama 3 70b", None),
        # 32B fits the one card as a GGUF Q4_K_M file (no AWQ / GPTQ kernels on ROCm)
        ("7900 XTX 能跑 qwen2.5-32b 吗", "q4_k_m"),
    ],
)
def test_a_radeon_owner_is_answered_for_the_one_card_they_own(line: str, fix: str | None) -> None:
    """Was: "16× AMD Radeon RX 7900 XTX … fits" for 70B and "4×" for 32B: the fewest-cards
    answer meant for an Instinct (no larger card exists) applied to a desktop card."""
    rec, text = _answer(line, "en")
    assert rec.headline.gpu_id == "rx-7900-xtx" and rec.headline.count == 1
    assert "16×" not in text and "CUDA out of memory" not in text
    if fix is not None:
        assert rec.verdict.fix == f"quantize:{fix}", rec.verdict.fix
    else:
        assert rec.verdict.word == "no_fit"


@pytest.mark.parametrize(
    "line",
    [
        "7900xtx 能跑qwen2.5-14b fp16吗 ollama",
        "can a 7900 xtx run qwen2.5-14b fp16 in ollama",
        "4090 run qwen2.5-14b fp16 with llama.cpp",
    ],
)
def test_a_gguf_runtime_offers_q8_0_before_q4_k_m_where_it_fits_with_headroom(line: str) -> None:
    """The grid read "Q8_0 ✅" under a fix that named Q4_K_M: where Q8_0 leaves the guide's
    headroom it is the one-card change (less quality lost); where it does not, Q4_K_M."""
    rec = recommend_query(parse_query(line), "CNY")
    assert rec.verdict is not None and rec.verdict.fix == "quantize:q8_0", rec.verdict
    cell = next(c for c in rec.grid if c.format == "q8_0" and c.context_tokens == 4096)
    assert cell.state == "ok"
    tighter = recommend_query(parse_query("3090 ollama qwen2.5-32b fp16"), "CNY")
    assert tighter.verdict is not None and tighter.verdict.fix != "quantize:q8_0"


@pytest.mark.parametrize(
    "line", ["7900xtx 能跑qwen2.5-14b吗 rocm vllm", "can my 7900 xtx run qwen2.5-14b on vllm"]
)
def test_vllm_on_a_radeon_judges_the_8_bit_row_as_gguf_q8_0_not_unsupported(line: str) -> None:
    """The grid showed INT8 ⛔ on a 7900 XTX (vLLM's int8 kernels need CUDA) while vLLM loads
    GGUF Q8_0 on it: the 8-bit row is Q8_0, judged (tight under vLLM's own reservations)."""
    rec = recommend_query(parse_query(line), "CNY")
    row = {c.format: c.state for c in rec.grid if c.context_tokens == 4096}
    assert "int8" not in row and row["q8_0"] in ("ok", "tight"), row
