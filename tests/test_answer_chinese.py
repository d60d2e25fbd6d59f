"""Chinese answers are Chinese: a corpus of answers (many questions, the details view, /gpu
and /fit for every card) rendered in Chinese may carry no English word outside a short
allow-list: names (models, cards, platforms, number formats, programs) and units."""

from __future__ import annotations

import re

from advisor import catalog
from advisor.fit import CONTEXT_PROBE_MODEL, card_fit
from advisor.models import Workload
from advisor.parse import ParseError, parse_query
from advisor.recommend import cheapest_price, recommend_query
from advisor.recommend.grid import precision_grid
from advisor.render import label, labels, render
from bot.choices import wizard_spec
from tests.test_answer_generated import QUESTIONS

# Words a Chinese reader sees in Chinese tech writing as they are: units, technique and
# program names. Everything else English is a leak.
ALLOWED = {
    # units
    "GiB",
    "MiB",
    "KiB",
    "MB",
    "GB",
    "TB",
    "TFLOPS",
    "tok",
    "s",
    "h",
    "tokens",
    "k",
    "B",
    "M",
    "W",
    # techniques and programs
    "LoRA",
    "QLoRA",
    "ControlNet",  # a model's name (Zhang et al. 2023), not translated in Chinese write-ups
    "DPO",
    "GRPO",
    "PPO",
    "DoRA",
    "IA3",
    "CUDA",
    "PyTorch",
    "torch",
    "vLLM",
    "NVLink",
    "P2P",
    "PCIe",
    "KV",
    "FlashAttention",
    "SDPA",
    "ZeRO",
    "Offload",
    "FSDP",
    "EXL2",
    "TP",
    "PP",
    "DDP",
    "MoE",
    "AdamW",
    "all-reduce",  # the NCCL operation, as written in Chinese tech text
    "n_ubatch",  # llama.cpp's flag, as typed
    "bit",
    "nvidia",
    "smi",
    "transformers",
    "llama.cpp",
    "Unsloth",
    "LLaMA-Factory",
    "GGUF",
    "Liger",
    "Kernel",
    "logits",
    "VAE",
    "CNN",
    "DiT",
    "GPU",
    "AI",
    "SM",
    "SMs",
    "HBM3e",
    "OOM",
    "CANN",
    "torch_npu",
    "bitsandbytes",
    "cu128",
    "Ampere",
    "Ada",
    "Hopper",
    "Blackwell",
    "Volta",
    "Turing",
    "Lovelace",
    "kv",
    "cache",
    "dtype",
    "float16",
    "torch_dtype",
    "enable_model_cpu_offload",
    "OLLAMA_KV_CACHE_TYPE",  # runtime settings, typed as they are
    "OLLAMA_FLASH_ATTENTION",
    "--cache-type-k/v -fa",
    "config.json",
    "Hugging",
    "Face",
    "Kaggle",
    "Notebook",
    "Google",
    "Colab",
    "vllm",
    "ascend",
    "CPU",
    "SGD",
    "Adafactor",
    "Lion",
    "vGPU",
    "D",
    "V2",
    "Max",
    "Q",
    "Blender",
    "NF4",
    "AWQ",
    "GPTQ",
    "MXFP4",
    "FP4",
    "FP8",
    "BF16",
    "FP16",
    "INT8",
    "INT4",
    "FP64",
    "Marlin",
    "token",
    "P100",
    "English",  # the language button names itself
    "cuBLAS",
    "NCCL",
    "SGLang",
    "TGI",
    "Ollama",
    "LM Studio",
    "ExLlamaV2",
    "MLX",
    "diffusers",
    "ComfyUI",
    "WebUI",
}


def _names() -> set[str]:
    """Tokens of catalog names: models, cards, platforms, number formats."""
    words: set[str] = set()
    texts = []
    for m in catalog.models().values():
        texts += [m.id, m.name, *m.aliases]
        repo = re.search(r"config\.json of (\S+)", m.source)
        texts += [repo.group(1)] if repo else []
    for g in catalog.gpus().values():
        texts += [g.id, g.name, g.architecture, g.compute_capability or "", *g.aliases]
    texts += [p.platform for p in catalog.load_prices()]
    for f in catalog.formats().values():
        texts += [f.id, *f.aliases]
    for text in texts:
        words |= set(_words(text))
    return words


def _words(text: str) -> list[str]:
    """Runs of letters and digits that start with a letter (not "x1024" in 1024x1024)."""
    return re.findall(r"(?<![0-9A-Za-z])[A-Za-z][A-Za-z0-9]*", text)


CORPUS_QUESTIONS = QUESTIONS[::4] + [
    "训练 llama3-8b lora",
    "sdxl lora",
    "flux.1-dev",
    "bert-base 训练",
    "resnet50 训练",
    "Blender 渲染",
    "qwen2.5-72b int4 32k ¥10/h",
    "我只有 12g 显存 跑 qwen2.5-7b",
    "上跑qwen2.5-7b -",
    "pretrain 1b data 10b tokens",
    "llama-3.1-8b batch 64 ctx 8192",
]


def _chinese_corpus() -> list[tuple[str, str]]:
    out = []
    for q in CORPUS_QUESTIONS:
        parsed = parse_query(q)
        if not parsed.ok:
            continue
        rec = recommend_query(parsed, default_currency="CNY")
        for template in ("answer", "details"):
            out.append((q, render(template, "zh", rec=rec, parsed=parsed, canonical=q, plain=True)))
    prices = catalog.load_prices()
    for gpu in catalog.gpus().values():
        price = cheapest_price(gpu.id, prices, "CNY")
        grid = precision_grid(Workload(model=CONTEXT_PROBE_MODEL), gpu, 1)
        fit = card_fit(gpu.id)
        out.append(
            (
                gpu.id,
                render(
                    "gpu",
                    "zh",
                    plain=True,
                    gpu=gpu,
                    count=1,
                    fit=fit,
                    price=price,
                    grid=grid,
                    grid_model=catalog.models()[CONTEXT_PROBE_MODEL].name,
                ),
            )
        )
        out.append(
            (gpu.id, render("fit", "zh", plain=True, gpu=gpu, count=1, fit=fit, price=price))
        )
    for code in ("empty", "too_long", "unknown_model", "unknown_format", "no_model", "bad_value"):
        error = ParseError(code=code, detail="12", suggestions=["qwen2.5-7b"])
        out.append((code, render("error", "zh", plain=True, error=error, parsed=parse_query(""))))
    for section, words in labels("zh").items():
        out += [(f"labels.{section}", text) for text in words.values()]
    for step, spec in wizard_spec()["steps"].items():  # the wizard's buttons
        for choice in spec.get("choices", []):
            key = choice.get("label_key")
            shown = label("zh", key, amount=choice["label"]) if key else choice["label"]
            out.append((f"wizard.{step}", shown))
    return out


def test_chinese_answers_carry_no_english_outside_the_allow_list() -> None:
    allowed = {w.lower() for a in ALLOWED for w in _words(a)} | {n.lower() for n in _names()}
    corpus = _chinese_corpus()
    assert len(corpus) > 150
    leaks: dict[str, str] = {}
    for source, text in corpus:
        # The user's own words come back quoted as typed, and commands are typed as they
        # are: neither is our wording.
        text = re.sub(r"「[^」]*」", "", text)
        text = re.sub(r"/[a-z]+\b", "", text)
        text = re.sub(r"--[a-z-]+", "", text)  # a program's flags, typed as they are
        text = re.sub(r"\{[a-z_]+\}", "", text)  # a label's placeholders
        for word in _words(text):
            if word.lower() not in allowed:
                leaks.setdefault(word, source)
    assert not leaks, leaks


def test_the_allow_list_stays_short() -> None:
    """Names come from the catalogs; the hand-written list is for units and technique names."""
    assert len(ALLOWED) < 140


def test_a_formula_is_shown_from_formulas_toml_and_never_in_english_in_chinese(
    monkeypatch,  # noqa: ANN001
) -> None:
    from advisor import render as rendering
    from advisor.models import Term

    term = Term(
        name="kv_cache",
        bytes=2**30,
        formula="56 KiB/token x 4096 tokens",
        formula_key="kv_cache",
        values={"gib": 1.0, "tokens": 4096},
    )
    monkeypatch.setattr(rendering, "formulas", lambda lang: {"kv_cache": "每 token × {tokens}"})
    assert rendering.formula("zh", term) == "每 token × 4096"
    monkeypatch.setattr(rendering, "formulas", lambda lang: {})
    assert rendering.formula("zh", term) == "代入的数值：4096"  # numbers, not the English line
    assert rendering.formula("en", term) == term.formula
    bare = term.model_copy(update={"values": {"gib": 1.0}})
    assert rendering.formula("zh", bare) == ""  # only its size, already shown


def test_an_unknown_card_is_said_first_in_the_readers_language() -> None:
    from advisor.parse import parse_query
    from advisor.recommend import recommend_query

    q = "华为Ascend 310P卡是否支持部署qwen2.5-72B"
    parsed = parse_query(q)
    rec = recommend_query(parsed)
    for lang, said in (("zh", "没认出显卡「华为 ascend 310p」"), ("en", "I don't know the card")):
        text = render("answer", lang, rec=rec, parsed=parsed, canonical=q, plain=True)
        assert said in text
        # said before the first pick, not after the rentals
        assert text.index(said) < text.index("RTX PRO 6000")
