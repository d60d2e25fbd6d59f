"""The assumptions an answer states, as phrases in the reader's language: the parser's
(`field = value` lines) and the engine's, each once, only those that matter for the model's
family, in the words of the stack the user named, and a context capped at the model's window.
Kept apart from the Jinja rendering (advisor/render.py): the rules for what is said of which
model are the answer's content, and the tests read them without a template."""

from __future__ import annotations

import re

from advisor import catalog
from advisor.memory.runtimes.whisper import own_kernels, own_program
from advisor.wording import LANGS, label, labels

_ASSUMED = re.compile(r"^\s*([a-z_]+)\s*=\s*(.+?)\s*$")
_SAMPLES = re.compile(r"^([\d.]+) samples x (\d+) tokens$")


def assumption(lang: str, field: str, value: str) -> str:
    """One assumption as a phrase: ("context_tokens", "4096") -> "上下文 4096 tokens"."""
    words = labels(lang if lang in LANGS else "en")
    shown = words.get("value", {}).get(value.lower().replace(" ", "_"), value)
    phrase = words.get("assume", {}).get(field)
    if phrase is None:
        return label(lang, "assume.other", value=shown)
    return phrase.format(value=shown)


def assumption_text(lang: str, text: str) -> str:
    """A parser assumption written as `field = value` (or a data-size phrase) as a phrase."""
    if m := _SAMPLES.match(text):
        return label(lang, "assume.samples", samples=m.group(1), tokens=m.group(2))
    if m := _ASSUMED.match(text):
        field, value = m.group(1), m.group(2)
        value = re.sub(r"\s*\(.*\)$", "", value)  # "full (training)": the mode word is enough
        return assumption(lang, field, value)
    return text


# Assumptions about an LLM's own internals (its KV cache, logits, a causal loss, how its
# attention kernel is picked): not said of a model that has none of them (an encoder
# reranker, a ViT, SAM, a diffusion pipeline), where they read as noise or as wrong.
LLM_ONLY = frozenset(
    {
        "kv_cache_dtype",
        "kv_cache_dtype_unsupported",
        "kv_cache_without_flash_attention",
        "transformers_release",
        "last_token_logits_since",
        "plain_forward",
        "tuple_cache",
        "loss_path",
        "cache_tokens",
        "max_num_batched_tokens",
        "attention",
    }
)
# The length of a non-LLM's inputs, said without LLM words ("training sequences", "context")
INPUT_LENGTH = frozenset({"seq_len", "context_tokens"})


def _family(result) -> str | None:  # noqa: ANN001
    """The catalog family of the answer's model ("yolo"), or None."""
    from advisor import catalog

    spec = catalog.models().get(getattr(result.model, "id", None) or "")
    return spec.family if spec is not None else None


def runtime_name(result) -> str | None:  # noqa: ANN001
    """The runtime the answer's estimate sizes ("transformers", "vllm"), or None."""
    est = getattr(result, "estimate", None)
    runtime = est.runtime if est is not None else None
    return getattr(runtime, "value", runtime)


# How a training stack is written in an answer (its project's own spelling).
STACK_NAMES = {
    "unsloth": "Unsloth",
    "llama-factory": "LLaMA-Factory",
    "axolotl": "Axolotl",
    "litgpt": "LitGPT",
    "internvl": "InternVL",
    "diffsynth": "DiffSynth-Studio",
}


def assumptions(lang: str, parsed, result, pick=None) -> list[str]:  # noqa: ANN001
    """The parser's and the engine's assumptions as phrases, each once, only those that
    matter for this model family (`LLM_ONLY` is left out for others, and their input length
    is said as such). On a card without bf16 (`pick`'s), a value only assumed to be bf16 is
    what that card runs: fp16, the same bytes ("Assumed: KV cache in bf16" beside "T4 has
    no bf16" contradicted it)."""
    out: list[str] = []
    fp16 = catalog.lacks_bf16(pick)
    kind = getattr(result.model, "kind", None)
    llm = getattr(kind, "value", kind) == "llm"
    for text in parsed.assumed:
        if text.startswith("context_capped = "):
            continue  # said at the top of the answer (context_cap)
        m = _ASSUMED.match(text)
        if not llm and m and m.group(1) in LLM_ONLY:
            continue
        phrase = assumption_text(lang, re.sub(r"\bbf16\b", "fp16", text) if fp16 else text)
        if phrase not in out:
            out.append(phrase)
    # faster-whisper (CTranslate2) runs its own kernels: the transformers path's runtime
    # and attention are not what it runs (its program is said by the parser's assumption);
    # openai-whisper is its own PyTorch program (SDPA attention), not transformers either
    framework = getattr(result.workload, "framework", None)
    own = own_kernels(framework)
    skip = ("runtime", "attention") if own else ("runtime",) if own_program(framework) else ()
    if any(a.field == "tts_program" for a in result.assumed):
        skip = (*skip, "runtime")  # a TTS repository's own inference program is said instead
    for a in result.assumed:
        # a reference implementation's own attention (SAM's, DINOv2's) is said for what it is
        reference = a.field == "attention" and a.value.endswith("_reference_eager")
        if not llm and a.field in LLM_ONLY and not reference or a.field in skip:
            continue
        value = "fp16" if fp16 and a.value == "bf16" else a.value
        field = "input_length" if not llm and a.field in INPUT_LENGTH else a.field
        if reference and not llm:
            field = "reference_scores"  # said as the score matrices, not as a kernel
        if a.field == "parallelism" and value == "tp" and runtime_name(result) == "transformers":
            value = "layer_split_hf"
        phrase = _stack_default(lang, result, field, value) or assumption(lang, field, value)
        if field == "optimizer" and _family(result) == "yolo":
            # the YOLO trainers' own default (SGD for the runs people do), not a bare AdamW
            phrase = label(lang, "assume.optimizer_yolo")
        if field == "runtime" and framework and _program_not_modelled(result):
            # a program the engine does not model ("diffsynth"): the figures are the
            # diffusers pipeline's (its own switches: pitfalls.toml [stack_levers])
            stack = STACK_NAMES.get(framework, framework)
            phrase = label(lang, "assume.runtime_sized_as", value=value, stack=stack)
        if field == "rl_framework" and framework and framework.lower() != value.lower():
            # "unsloth grpo": the stack named runs the method on TRL's trainer
            phrase = label(
                lang, "assume.rl_framework_stack", stack=STACK_NAMES.get(framework, framework)
            )
        if phrase not in out:
            out.append(phrase)
    return out


def _program_not_modelled(result) -> bool:  # noqa: ANN001
    """An image or video model run for inference by a program named that is not a runtime
    the engine models (DiffSynth-Studio): sized as the diffusers pipeline, said so."""
    w = result.workload
    kind = getattr(result.model, "kind", None)
    diffusion = getattr(kind, "value", kind) == "diffusion"
    return diffusion and w.runtime is None and not w.mode.is_training


def _stack_default(lang: str, result, field: str, value: str) -> str | None:  # noqa: ANN001
    """A setting said as the default of the stack the user named (kohya's LoRA targets,
    axolotl's gradient checkpointing), never another's; None where no stack decided it."""
    from advisor.memory.stacks import default_checkpointing

    w = result.workload
    framework = getattr(w, "framework", None)
    if not framework or field not in ("lora_targets", "gradient_checkpointing"):
        return None
    stack = STACK_NAMES.get(framework.lower(), framework)
    words = labels(lang if lang in LANGS else "en").get("value", {})
    shown = words.get(value.lower().replace(" ", "_"), value)
    if field == "gradient_checkpointing":
        # the stack's own rule only (a QLoRA helper's default is PEFT's, not the stack's)
        by_stack = default_checkpointing(framework, getattr(w, "num_gpus", 1))
        if by_stack is None or ("on" if by_stack else "off") != value:
            return None
    return label(lang, f"assume.{field}_stack", value=shown, stack=stack)


def context_cap(lang: str, parsed) -> str:  # noqa: ANN001
    """ "Llama 3 70B takes at most 8192 tokens: answered at 8k; for 32k use …" where the
    parser capped a context past the model's window (parse.assemble), else ""."""
    for text in getattr(parsed, "assumed", ()):
        if text.startswith("context_capped = "):
            asked, most, rest = text.removeprefix("context_capped = ").split(" ", 2)
            name, _, longer = rest.rpartition(" ")
            sep = "、" if lang == "zh" else ", "
            return label(
                lang,
                "assume.context_capped",
                model=name,
                most=int(most),
                asked=f"{int(asked) // 1024}k",
                longer=sep.join(_model_name(i) for i in longer.split(",")),
            )
    return ""


def _model_name(model_id: str) -> str:
    spec = catalog.models().get(model_id)
    return spec.name if spec is not None else model_id
