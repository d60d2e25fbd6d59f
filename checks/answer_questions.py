"""Generated questions for the answer invariants (tests/test_answer_invariants.py): every
task kind, model sizes from 0.5B to 671B (dense and MoE), number formats (GGUF, AWQ, GPTQ,
fp8, nf4 …), runtimes, owned cards small and large, counts 1–8, budgets; the guided
conversation's end questions; lab machine sets. Seeded: the same set every run."""

from __future__ import annotations

import random

from advisor.parse import parse_query
from advisor.recommend.owned import Machine
from bot.choices import wizard_spec

# Ten typical questions: timed by bench/speed.py, first in eval/golden.py's corpus.
QUICK_QUESTIONS = [
    "/vram 13B fp16",
    "qwen2.5-72b int4 32k",
    "训练 llama3-8b lora",
    "sdxl 1024 出4张图",
    "8×A100 全参微调 70b zero3",
    "我有2×3090 想跑 qwen2.5-32b awq ¥3/h",
    "用 ollama 跑 deepseek-r1:32b，我的卡是 4090",
    "LLaMA-Factory + DeepSpeed ZeRO-3 全参 qwen2.5-14b 8 张 a800",
    "vllm serve Qwen/Qwen2.5-72B-Instruct-AWQ --tensor-parallel-size 2",
    "师兄，lora 微调 qwen2.5-14b 要多少显存，实验室是 a100 40g",
]


LLMS = [
    "qwen2.5-0.5b",
    "qwen2.5-1.5b",
    "qwen2.5-3b",
    "qwen2.5-7b",
    "llama-3.1-8b",
    "glm-4-9b",
    "qwen2.5-14b",
    "qwen2.5-32b",
    "llama-3.1-70b",
    "qwen2.5-72b",
    "llama-3.1-405b",
    "deepseek-v3",  # 671B MoE
    "qwen3-30b-a3b",  # MoE
    "mixtral-8x7b",  # MoE
    "gpt-oss-20b",  # MoE, MXFP4
    "gpt-oss-120b",
    "13b",  # a bare size
    "olmo2:7b",  # a name the catalog lacks, typed with a size
]
DIFFUSION = ["sd-1.5", "sdxl", "sd3-medium", "flux.1-dev", "flux.1-schnell"]
CLASSIC = ["resnet50 训练", "bert-base 训练", "vit-base 训练", "gpt2 训练"]
NO_FORMULA = ["Blender 渲染", "wan2.1 video"]
LLM_FORMATS = ["", "bf16", "fp16", "fp8", "int8", "awq", "gptq", "q4_k_m", "q8_0", "nf4", "int4"]
IMAGE_FORMATS = ["", "fp16", "bf16", "fp8", "nf4"]
MODES = ["", "", "lora", "qlora", "全参微调", "pretrain"]
RUNTIMES = ["", "", "vllm", "llama.cpp", "ollama", "transformers", "sglang"]
CONTEXTS = ["", "", "8k", "32k", "128k", "ctx 2048"]
BATCHES = ["", "", "batch 8", "batch 32"]
BUDGETS = ["", "", "¥2/h", "¥10/h", "$1/h", "$0.1/h", "budget ¥200"]
# Rented and owned cards, small and large; owned-only ones from gpus_owned.toml.
CARDS = [
    "t4",
    "v100",
    "3090",
    "4090",
    "a100",
    "h100",
    "h200",
    "a800",
    "l20",
    "mi300x",
    "ascend 910b",
    "1080 ti",
    "p40",
    "p100",
    "2080 ti",
    "3060 ti",
    "4060",
    "4070 super",
    "4060 laptop",
    "4090 laptop",
    "5080",
]
COUNTS = ["", "", "2x ", "4x ", "8x ", "3x "]
OWNERSHIP = ["on ", "on ", "我的 ", "my "]


def _free_question(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.70:
        mode = rng.choice(MODES)
        fmt = rng.choice(LLM_FORMATS)
        if mode and fmt in ("fp8", "awq", "gptq", "q4_k_m", "q8_0"):
            fmt = ""  # fine-tuning a serving format is not asked
        parts = [
            rng.choice(LLMS),
            fmt,
            mode,
            rng.choice(RUNTIMES) if not mode else "",
            rng.choice(CONTEXTS),
            rng.choice(BATCHES),
        ]
    elif kind < 0.85:
        parts = [rng.choice(DIFFUSION), rng.choice(IMAGE_FORMATS), rng.choice(["", "", "lora"])]
    elif kind < 0.95:
        parts = [rng.choice(CLASSIC), rng.choice(BATCHES)]
    else:
        parts = [rng.choice(NO_FORMULA)]
    roll = rng.random()
    if roll < 0.55:
        card = rng.choice(CARDS)
        parts.append(rng.choice(OWNERSHIP) + rng.choice(COUNTS) + card)
    elif roll < 0.63:  # the count is the question
        card = rng.choice(["h100", "a100", "4090", "h20", "v100", "l40s"])
        parts.append(rng.choice([f"需要几张 {card}", f"how many {card}"]))
    elif roll < 0.68:  # a card known only by its memory
        parts.append(f"我只有 {rng.choice([6, 8, 12, 16, 24, 48])}g 显存")
    parts.append(rng.choice(BUDGETS))
    return " ".join(p for p in parts if p)


def _wizard_question(rng: random.Random) -> str:
    """What the guided conversation hands the parser at its end (bot/wizard.py::_query):
    the task's token, then one choice (or a skip) per step."""
    spec = wizard_spec()
    task = rng.choice(sorted(spec["tasks"]))
    parts = [spec["tasks"][task]["token"]]
    for step in spec["tasks"][task]["steps"]:
        choices = spec["steps"][step].get("choices", [])
        if choices and rng.random() < 0.85:
            parts.append(rng.choice(choices)["token"])
    return " ".join(p for p in parts if p)


def _answerable(q: str) -> bool:
    parsed = parse_query(q)
    return parsed.ok and not parsed.ask_fit


def questions(n: int = 1600, seed: int = 2026) -> list[str]:
    rng = random.Random(seed)
    out: list[str] = []
    seen: set[str] = set()
    while len(out) < n:
        q = _free_question(rng)
        if q not in seen and _answerable(q):
            seen.add(q)
            out.append(q)
    return out


def wizard_questions(n: int = 200, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    out: list[str] = []
    for _ in range(n * 4):
        q = _wizard_question(rng)
        if q not in out and _answerable(q):
            out.append(q)
        if len(out) >= n:
            break
    return out


# Lab machine sets (bot/lab.py registers them from /lab lines; judged by recommend/owned.py).
LABS: list[list[Machine]] = [
    [
        Machine(
            name="node1", gpu_id="a100-80gb-sxm", count=8, price_per_card_hour=3, currency="CNY"
        ),
        Machine(name="ws1", gpu_id="rtx-3090", count=1),
        Machine(name="ws2", gpu_id="rtx-3090", count=1),
    ],
    [
        Machine(name="old", gpu_id="tesla-v100", count=4),
        Machine(name="t4box", gpu_id="tesla-t4", count=2),
        Machine(name="p40", gpu_id="tesla-p40", count=4),
    ],
    [
        Machine(name="laptop", gpu_id="rtx-4060-laptop", count=1),
        Machine(name="desk", gpu_id="rtx-2080-ti", count=2),
    ],
    [
        Machine(name="h", gpu_id="h100-sxm", count=8, price_per_card_hour=2.5, currency="USD"),
        Machine(name="l", gpu_id="l20", count=4),
        Machine(name="g", gpu_id="gtx-1080-ti", count=1),
    ],
]


HUB_SUFFIXES = [
    "",
    "on 4090",
    "int4 on t4",
    "lora",
    "vllm 32k on 2x 3090",
    "fp8 my 3x a100",
    "¥2/h",
]


def hub_cases() -> list[tuple[str, object, object]]:
    """(question, parsed, hub answer) for every repo the stand-in Hub serves with a config
    and safetensors headers (tests/data/hub), each asked a few ways: a model read from the
    Hub goes through the same engine and templates (bot/hub.py, hublookup/query.py)."""
    import json

    from advisor.hubspec import HubFacts, count_tensors, hub_model
    from hublookup.query import hub_query
    from hublookup.resolve import HubAnswer
    from hublookup.standin import DEFAULT_DATA

    out: list[tuple[str, object, object]] = []
    for n, folder in enumerate(sorted(p for p in DEFAULT_DATA.iterdir() if p.is_dir())):
        if not (folder / "config.json").exists() or not (folder / "tensors.json").exists():
            continue
        repo = folder.name.replace("__", "/")
        raw = json.loads((folder / "tensors.json").read_text())
        model = hub_model(
            HubFacts(
                repo_id=repo,
                read_at="2026-11-30T08:00:00+00:00",
                config=json.loads((folder / "config.json").read_text()),
                tensors=count_tensors({k: (v[0], v[1]) for k, v in raw.items()}),
            )
        )
        if model is None:
            continue
        for suffix in HUB_SUFFIXES[n % 3 :: 2]:
            q = f"{repo} {suffix}".strip()
            parsed = hub_query(q, repo, model)
            if parsed.ok:
                out.append((q, parsed, HubAnswer(repo_id=repo, model=model)))
    return out
