"""Chinese answers are Chinese: a corpus of answers (many questions, the details view, /gpu
and /fit for every card) rendered in Chinese may carry no English word outside a short
allow-list: names (models, cards, platforms, number formats, programs) and units."""

from __future__ import annotations

import html
import re
from dataclasses import replace

from advisor import catalog
from advisor.architectures import architectures
from advisor.fit import CONTEXT_PROBE_MODEL, card_fit
from advisor.models.workload import Workload
from advisor.parse import ParseError, parse_query, vocab
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
    'device_map="auto"',  # transformers' layer split, as typed
    "madebyollin/sdxl-vae-fp16-fix",  # the fp16-safe SDXL VAE, a repo id as typed
    "LoRA",
    "QLoRA",
    "ControlNet",  # a model's name (Zhang et al. 2023), not translated in Chinese write-ups
    "DPO",
    "GRPO",
    "PPO",
    "KTO",  # preference / RL methods and their frameworks, named as their papers and repos do
    "ORPO",
    "SimPO",
    "RLOO",
    "TRL",
    "DeepLearningExamples",  # NVIDIA's training-speed repository, cited by name
    "timm",  # the PyTorch image-models library, cited by name
    "torchtitan",  # PyTorch's pre-training repository, the MFU's source, cited by name
    "CTranslate2",  # faster-whisper's inference engine, named as its repository does
    # names printed on the hardware and in the firmware menu, written as the user will find
    # them (the rest of that pitfall is in Chinese: 8 针, 4G 以上地址解码)
    "EPS-12V",
    "BIOS",
    "OpenRLHF",
    "verl",
    "KL",
    "PEFT",
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
    "FlashInfer",  # vLLM's attention backends, as their projects name them
    "Triton",
    "xFormers",
    "SDPA",
    "ZeRO",
    "Offload",
    "FSDP",
    "FSDP2",  # PyTorch's fully_shard, as its docs name it
    "AutoAWQ",  # the AWQ quantization library
    "EXL2",
    "TP",
    "PP",
    "DDP",
    "MoE",
    "GQA",  # grouped-query attention, as Chinese write-ups name it
    "MLA",  # DeepSeek's multi-head latent attention
    "Korthikanti",  # an author cited by name (activation memory, 2022)
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
    "swift",  # ms-swift, ModelScope's training stack, named as it is
    "LitGPT",
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
    "Kepler",
    "Turing",
    "Lovelace",
    "kv",
    "cache",
    "dtype",
    "float16",
    "torch_dtype",
    "enable_model_cpu_offload",
    "low_vram",  # ai-toolkit's config setting, typed as it is
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
    "LMDeploy",
    "MLX",
    "diffusers",
    "ComfyUI",
    "WebUI",
}


def _names() -> set[str]:
    """Tokens of catalog names: models, cards, architectures, platforms, number formats."""
    words: set[str] = set()
    texts = []
    for m in catalog.models().values():
        texts += [m.id, m.name, *m.aliases]
        repo = re.search(r"config\.json of (\S+)", m.source)
        texts += [repo.group(1)] if repo else []
    for g in catalog.gpus().values():
        texts += [g.id, g.name, g.architecture, g.compute_capability or "", *g.aliases]
    texts += [p.platform for p in catalog.load_prices()]
    texts += [t for a in architectures() for t in (a.name, a.backend)]  # "Metal", "HIP"
    for f in catalog.formats().values():
        texts += [f.id, *f.aliases]
    texts += [n for d in vocab.load("datasets")["dataset"] for n in d["names"]]
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


def leaks_in(corpus: list[tuple[str, str]], extra: set[str] = frozenset()) -> dict[str, str]:
    """English words outside the allow-list and the catalog's names, each with the first
    source it came from. `extra`: names a caller's own corpus carries (repo ids it made)."""
    allowed = {w.lower() for a in ALLOWED for w in _words(a)} | {n.lower() for n in _names()}
    allowed |= {w.lower() for w in extra}
    leaks: dict[str, str] = {}
    for source, text in corpus:
        # The user's own words come back quoted as typed, and commands are typed as they
        # are: neither is our wording.
        text = re.sub(r"「[^」]*」", "", text)
        text = re.sub(r"/[a-z]+\b", "", text)
        text = re.sub(r"--[a-z-]+", "", text)  # a program's flags, typed as they are
        text = re.sub(r"\{[a-z_]+\}", "", text)  # a label's placeholders
        # a setting typed as it is (gpu_memory_utilization=0.9, HF_TOKEN); an internal
        # code (bad_value) is still a leak
        text = re.sub(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+=", "", text)
        text = re.sub(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b", "", text)
        text = re.sub(r"\b[a-z_.]+\(\)", "", text)  # a function, as called: generate()
        for word in _words(text):
            if word.lower() not in allowed:
                leaks.setdefault(word, source)
    return leaks


def test_chinese_answers_carry_no_english_outside_the_allow_list() -> None:
    corpus = _chinese_corpus()
    assert len(corpus) > 150
    leaks = leaks_in(corpus)
    assert not leaks, leaks


def test_the_allow_list_stays_short() -> None:
    """Names come from the catalogs; the hand-written list is for units and technique names
    (160: the preference / RL methods and the frameworks sources are cited from are names,
    not words)."""
    assert len(ALLOWED) < 160


def test_a_formula_is_shown_from_formulas_toml_and_never_in_english_in_chinese(
    monkeypatch,  # noqa: ANN001
) -> None:
    from advisor import wording as rendering
    from advisor.models.estimate import Term

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
    bare = replace(term, values={"gib": 1.0})
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


def _scannable(body: str) -> str:
    """A reply as a reader sees it, without <code> spans: what is typed as code (a command
    line, a /lab example, a repo id) is not our wording."""
    body = re.sub(r"<code>.*?</code>", "", body, flags=re.S)
    return html.unescape(re.sub(r"<[^<>]+>", "", body))


def _every_reply_corpus() -> list[tuple[str, str]]:
    """Every template in Chinese, with each branch the bot reaches: the Hub (found, stale,
    down, gated, missing, too many requests, offline), names the catalog lacks, lab mode
    (the admin refusal, each bad line, the machines judged), inline answers, /forget,
    every parse error and out-of-range value, the guided conversation's end answers."""
    from markupsafe import Markup

    from advisor.recommend.owned import judge_machines
    from checks.answer_questions import LABS, questions, wizard_questions
    from hublookup.resolve import HubAnswer
    from tests.test_templates import contexts

    out: list[tuple[str, str]] = []

    def add(source: str, template: str, /, **ctx: object) -> None:
        out.append((source, _scannable(render(template, "zh", **ctx))))

    base = contexts()
    for name, ctx in base.items():
        add(name, name, **{k: Markup(v) if k == "mention" else v for k, v in ctx.items()})
    lab = base["lab"]
    for problem in (
        "not_admin",
        "no_card",
        "memory_only",
        "too_many_cards",
        "too_long",
        "bad_value",
    ):
        add(f"lab.{problem}", "lab", **{**lab, "problem": problem, "detail": "8"})
    for problem in ("full", "unknown", "empty", "else", None):
        add(f"lab.{problem}", "lab", **{**lab, "problem": problem, "can_change": False})
    for group in (True, False):
        add("forget_confirm", "forget_confirm", group=group, machines=3 if group else 0)
        add("help", "help", group=group, bot_username="GpuAdvisorBot")
        add("lang", "lang", group=group)
        add("lang_set", "lang_set", group_default=group)
    for name in ("not_admin", "forget_kept", "inline_expired", "not_text", "cancelled"):
        add(name, name)
    for code in ("not_found", "gated", "no_config", "no_size", "timeout", "rate_limited"):
        add(f"hub_error.{code}", "hub_error", hub=HubAnswer(repo_id="o/n", error=code))
    for code in ("unreachable", "offline", "dropped"):
        hub = HubAnswer(repo_id="o/n", error=code, suggestions=["o/m"])
        add(f"hub_error.{code}", "hub_error", hub=hub)
    unknown = parse_query("olmo2:7b 4090")
    rec = recommend_query(unknown, default_currency="CNY")
    for hub in (
        None,
        HubAnswer(repo_id="olmo2:7b", error="unreachable"),
        HubAnswer(repo_id="olmo2:7b", suggestions=["o/m"]),
        HubAnswer(repo_id="olmo2:7b"),
    ):
        for name in ("answer", "details", "inline"):
            add(f"unrecognized.{name}", name, rec=rec, parsed=unknown, canonical="", hub=hub)
    codes = ("empty", "too_long", "unknown_model", "unknown_format", "no_model")
    for code in (*codes, "not_estimated", "context_too_long", "other"):
        error = ParseError(code=code, detail="12", suggestions=["qwen2.5-7b"])
        add(f"error.{code}", "error", error=error, parsed=parse_query(""))
    for field in labels("zh")["bad_value"]:
        error = ParseError(code="bad_value", detail=field, suggestions=[])
        add(f"error.bad_value.{field}", "error", error=error, parsed=parse_query(""))
    for i, q in enumerate(questions()[::16] + wizard_questions()[::4]):
        parsed = parse_query(q)
        rec = recommend_query(parsed, default_currency="CNY")
        for name in ("answer", "details", "inline"):
            add(f"{name}: {q}", name, rec=rec, parsed=parsed, canonical=q)
        assert parsed.workload is not None
        own = judge_machines(parsed.workload, LABS[i % len(LABS)])
        if own is not None:
            add(f"lab_first: {q}", "lab_first", own=own, group=bool(i % 2), chosen=False)
    return out


def test_every_chinese_reply_and_error_path_carries_no_english() -> None:
    from checks.answer_questions import LABS

    """The scanner over every template and branch added since the first corpus: the Hub,
    unrecognized names, lab mode and its refusals, inline, /forget, bad input."""
    corpus = _every_reply_corpus()
    assert len(corpus) > 500
    # the language menu names itself in both languages, for a reader of either
    corpus = [(s, t.replace("Choose your language", "")) for s, t in corpus]
    machines = {m.name for lab in LABS for m in lab}  # names users typed
    leaks = leaks_in(corpus, extra={"o", "n", "m", "GpuAdvisorBot", "ws", *machines})
    assert not leaks, leaks


def test_a_lab_line_with_a_value_out_of_range_is_answered_in_words() -> None:
    """Was: "/lab n 0x a100" answered "这一行读不懂（bad_value）": the parser's code shown."""
    from advisor.parse.machines import parse_machine_line

    read = parse_machine_line("n 0x a100")
    assert read.error == "bad_value"
    for lang, words in (("zh", "卡数"), ("en", "number of cards")):
        text = render(
            "lab",
            lang,
            plain=True,
            machines=[],
            group=True,
            can_change=True,
            problem=read.error,
            detail=read.detail,
            saved=[],
            removed=None,
        )
        assert "bad_value" not in text and words in text, text


def test_every_chinese_string_in_the_catalogs_and_labels_carries_no_english() -> None:
    """Each `zh` / `*_zh` text of advisor/data (pitfalls, guide lines, notes, recipes) and
    every Chinese label, whether or not a generated question reaches it. Was: the guide
    line "SDXL 等扩散模型训练 / 大 batch 训练"."""
    import tomllib
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    corpus: list[tuple[str, str]] = []

    def walk(obj: object, path: str) -> None:
        if isinstance(obj, dict):
            for k, v in obj.items():
                if isinstance(v, str) and (k == "zh" or k.endswith("_zh")):
                    corpus.append((f"{path}.{k}", re.sub(r"<code>.*?</code>", "", v)))
                else:
                    walk(v, f"{path}.{k}")
        elif isinstance(obj, list):
            for i, v in enumerate(obj):
                walk(v, f"{path}[{i}]")

    for f in sorted((root / "advisor" / "data").rglob("*.toml")):
        walk(tomllib.loads(f.read_text(encoding="utf-8")), f.name)
    for f in sorted((root / "templates" / "zh").glob("*.toml")):
        for section, values in tomllib.loads(f.read_text(encoding="utf-8")).items():
            for key, text in values.items() if isinstance(values, dict) else []:
                if isinstance(text, str):
                    corpus.append((f"{f.name}.{section}.{key}", text))
    assert len(corpus) > 300
    assert not leaks_in(corpus)
