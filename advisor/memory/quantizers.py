"""What a quantization library leaves in higher precision when it loads a model
(data/quantizers.toml): transformers' `_keep_in_fp32_modules` (T5's `wo`) stay fp32 under
quantizers that honour the list (bitsandbytes), and stay unquantized in the 16-bit load
dtype under those that only skip it (torchao, optimum-quanto)."""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path
from typing import Any

from advisor import catalog
from advisor.memory.transformer import estimate_weight_bytes, mlp_width
from advisor.models.architecture import Architecture

# An nn.Embedding left alone by a Linear-only quantizer stays in the pipeline's 16-bit
# torch_dtype (quantizers.toml [text_encoder_embedding]).
EMBEDDING_BYTES = 2
QUANTIZERS_FILE = Path(__file__).resolve().parent.parent / "data" / "quantizers.toml"


@cache
def _table() -> dict[str, Any]:
    with QUANTIZERS_FILE.open("rb") as fh:
        return tomllib.load(fh)


def quantizer_of(fmt: str) -> str | None:
    """The library a weights format is loaded through, if the table names one."""
    for name, row in _table()["quantizer"].items():
        if fmt in row["formats"]:
            return name
    return None


def keeps_fp32_modules(fmt: str) -> bool:
    """transformers keeps `_keep_in_fp32_modules` in fp32 under quantizers with
    use_keep_in_fp32_modules (bitsandbytes), and for plain float16 loads when the data file
    switches that on (quantizers.toml [float16]: off for now, see there why)."""
    if fmt == "fp16":
        return bool(_table()["float16"]["keep_in_fp32_modules"])
    q = quantizer_of(fmt)
    return bool(q and _table()["quantizer"][q]["keep_in_fp32_modules"])


def skips_keep_in_fp32_modules(fmt: str) -> bool:
    """The quantizer leaves `_keep_in_fp32_modules` unquantized without casting them to
    fp32 (quantizers.toml `skips_keep_in_fp32_modules`): they stay in the 16-bit load dtype."""
    q = quantizer_of(fmt)
    return bool(q and _table()["quantizer"][q].get("skips_keep_in_fp32_modules", False))


def kept_module_bytes_per_weight(fmt: str, quantize_after_load: bool = False) -> float:
    """Bytes per weight of the `_keep_in_fp32_modules` under this format: 4 where the
    quantizer (or an fp16 load) keeps them in fp32, 2 where it only leaves them out of
    quantization, 0 where nothing is kept apart (they are sized with the format).
    `quantize_after_load`: the library's own call (torchao `quantize_`, quanto
    `quantize`/`freeze`) on a model already loaded replaces every Linear, the kept list
    included; only transformers' from_pretrained quantizers consult the list."""
    if keeps_fp32_modules(fmt):
        return 4.0
    if quantize_after_load:
        return 0.0
    return 2.0 if skips_keep_in_fp32_modules(fmt) else 0.0


def quantizes_lm_head(fmt: str, quantize_after_load: bool) -> bool:
    """The library's own quantize call on a loaded model (torchao `quantize_`, quanto
    `quantize`) replaces the lm_head Linear too (quantizers.toml own_call_quantizes_lm_head);
    from_pretrained's quantizers and bitsandbytes keep it in the load dtype."""
    q = quantizer_of(fmt)
    return bool(
        quantize_after_load and q and _table()["quantizer"][q].get("own_call_quantizes_lm_head")
    )


def lm_head_quantized_bytes(
    arch: Architecture, params: float, fmt: str, load: str, quantize_after_load: bool, acc: Any
) -> int:
    """What an untied lm_head weighs less when the library's own call quantizes it with the
    rest (quantizes_lm_head): its vocab x hidden weights in the format, not the load dtype.
    Said among the assumptions (`lm_head_quantized`)."""
    if not quantizes_lm_head(fmt, quantize_after_load):
        return 0
    lm_head = min(arch.vocab * arch.hidden, params)
    bits = catalog.find_format(fmt).bits  # type: ignore[union-attr]
    acc.assume("lm_head_quantized", fmt)
    return int(lm_head * (kept_bytes_per_weight(load) - bits / 8))


def fp32_kept_params(params_b: float) -> float:
    """Parameters (in billions) a model of this size keeps in `_keep_in_fp32_modules`."""
    for row in _table()["keep_in_fp32"].values():
        if abs(params_b - row["params_b"]) <= row["params_b"] * row["match_tolerance"]:
            return float(row["fp32_params_b"])
    return 0.0


def fp32_kept_params_arch(family: str | None, arch: Architecture | None) -> float:
    """Weights a catalogued model of this family keeps in fp32 (a T5's `wo`, one
    d_ff x d_model matrix per block), in parameters."""
    row = _table().get("keep_in_fp32_family", {}).get(family or "")
    if row is None or arch is None:
        return 0.0
    return float(arch.layers * arch.intermediate_ * arch.hidden)


def kept_fp32_extra_bytes(
    family: str | None, arch: Architecture | None, fmt: str, quantize_after_load: bool = False
) -> float:
    """Bytes the kept modules (fp32, or 16-bit where the quantizer only skips them) add
    over the format's own size for them."""
    kept = fp32_kept_params_arch(family, arch)
    if not kept:  # most families keep nothing apart (every estimate asks)
        return 0.0
    per_weight = kept_module_bytes_per_weight(fmt, quantize_after_load)
    if not per_weight:
        return 0.0
    bits = catalog.find_format(fmt).bits  # type: ignore[union-attr]
    return kept * max(per_weight - bits / 8, 0.0)


def embedding_kept_params(params_b: float, fmt: str) -> float:
    """Parameters (in billions) of a text encoder's token embedding that a format of scope
    "linear" leaves in the 16-bit load dtype (quantizers.toml [text_encoder_embedding.*]);
    0 for formats that cover every weight and for encoders the table does not list."""
    spec = catalog.find_format(fmt)
    if spec is None or spec.scope != "linear":
        return 0.0
    for row in _table()["text_encoder_embedding"].values():
        if abs(params_b - row["params_b"]) <= row["params_b"] * row["match_tolerance"]:
            return float(row["embedding_params_b"])
    return 0.0


def component_weight_bytes(params_b: float, fmt: str, quantize_after_load: bool = False) -> float:
    """A pipeline component (a text encoder) loaded in `fmt`: its kept modules at 4 bytes
    per weight (fp32) or 2 (left unquantized), its token embedding at 2 under a format that
    quantizes Linear layers only, the rest in the format."""
    per_weight = kept_module_bytes_per_weight(fmt, quantize_after_load)
    kept = fp32_kept_params(params_b) if per_weight else 0.0
    emb = embedding_kept_params(params_b, fmt)
    rest = estimate_weight_bytes((params_b - kept - emb) * 1e9, None, fmt)
    return rest + kept * 1e9 * per_weight + emb * 1e9 * EMBEDDING_BYTES


def bnb_legacy_saves_inputs(fmt: str, framework: str | None) -> bool:
    """Whether this QLoRA run goes through bitsandbytes' MatMul4Bit as it was before 0.43.2,
    which kept each frozen 4-bit projection's input for backward (quantizers.toml
    [bitsandbytes_4bit_training]): stacks that pin such a release, and stacks not known."""
    row = _table()["bitsandbytes_4bit_training"]
    if fmt not in row["formats"] or framework in row["other_kernels"]:
        return False
    return framework in row["legacy_stacks"] or bool(row["unknown_stack_legacy"])


def skipped_encoder_params(fmt: str, framework: str | None, arch: Architecture | None) -> int:
    """The encoders' Linear weights a stack's 4-bit load leaves in the 16-bit load dtype
    (quantizers.toml [encoder_skip]: Unsloth's SKIP_QUANTIZATION_MODULES); 0 elsewhere."""
    row = _table()["encoder_skip"]
    if arch is None or fmt not in row["formats"] or framework not in row["frameworks"]:
        return 0
    return arch.encoder_linear_params


def bnb_legacy_saved_bytes_per_token(arch: Architecture, elem: float) -> float:
    """What those kept inputs add per token and layer over a frozen 16-bit base: the two
    norm outputs (hidden) and the down-projection input (MLP width), measured by
    calibration/lora_saved_cpu.py."""
    row = _table()["bitsandbytes_4bit_training"]
    return elem * (row["hidden_inputs"] * arch.hidden + row["mlp_inputs"] * mlp_width(arch))


def stays_on_gpu_under_model_offload(fmt: str) -> bool:
    """diffusers' model offload leaves a bitsandbytes 8-bit component on the GPU
    (quantizers.toml [bitsandbytes_8bit_model_offload])."""
    row = _table()["bitsandbytes_8bit_model_offload"]
    return bool(row["stays_on_gpu"]) and fmt in row["formats"]


def loads_on_gpu(fmt: str) -> bool:
    """Whether a component in this format is placed on the GPU by from_pretrained itself,
    before any offload is set up (quantizers.toml [bitsandbytes_loads_on_gpu])."""
    return fmt in _table()["bitsandbytes_loads_on_gpu"]["formats"]


FLOAT_FORMATS = ("fp32", "fp16", "bf16")


def load_dtype(fmt: str, given: str | None) -> str:
    """The dtype a model in `fmt` is loaded in (transformers' torch_dtype): the format itself
    for a float format; for quantized weights the torch_dtype given (`Workload.load_dtype`),
    else float16 under bitsandbytes (its quantizer forces it) and bf16 otherwise
    (quantizers.toml [load_dtype]). Not the compute dtype: bitsandbytes computes 4-bit
    layers in float32 by default while the rest of the model stays float16."""
    if fmt in FLOAT_FORMATS:
        return fmt
    if given in FLOAT_FORMATS:
        return given
    if quantizer_of(fmt) == "bitsandbytes":
        return str(_table()["load_dtype"]["bitsandbytes_default"])
    if fmt in _table()["load_dtype"]["fp16_default_formats"]:
        return "fp16"  # transformers' GPTQ quantizer sets float16 when not told
    return "bf16"


def kept_bytes_per_weight(load: str) -> float:
    """Bytes per weight of the modules a quantizer leaves alone (embeddings, lm_head): they
    stay in the load dtype (quantizers.toml [load_dtype] kept_bytes)."""
    return float(_table()["load_dtype"]["kept_bytes"].get(load, 2))


def dequant_rule(fmt: str) -> dict[str, Any] | None:
    """How a loader's matmul dequantizes this format's weights on every call (quantizers.toml
    [dequant_per_call.*]): `library`, `single_token_kernel` (a one-token input takes a kernel
    that needs no copy), `default_compute_dtype` (the dtype the copy is cast to when the
    config names none; absent: the activations' dtype). None: the format's kernels need no
    full copy (GPTQ/AWQ kernels keep their own scratch)."""
    for row in _table()["dequant_per_call"].values():
        if fmt in row["formats"]:
            return row
    return None


def dequant_bytes(
    widest_weight: float,
    widest_out: float,
    tokens: int,
    load: str,
    compute: str,
    copies: int = 1,
) -> float:
    """A dequantizing matmul (bitsandbytes MatMul4Bit over more than one token, torchao's
    eager int8 weight-only, optimum-quanto's qbytes_mm): the widest Linear dequantized to the load dtype, plus its copy
    cast to the compute dtype when they differ, plus that Linear's output for every token in
    the compute dtype when it is wider than the load dtype (cast back afterwards). One layer
    at a time, so the largest Linear sets it."""
    b = catalog.kv_cache_bytes_per_element()
    load_b, compute_b = b[load], b[compute]
    # `copies`: 16-bit copies alive at once (quanto's float8: the cast, then the scaled one)
    per_weight = load_b * copies + (compute_b if compute != load else 0.0)
    out = tokens * widest_out * compute_b if compute_b > load_b else 0.0
    return widest_weight * per_weight + out


def int8_matmul_bytes_per_token(
    fmt: str, framework: str | None, widest_out: float, widest_in: float
) -> float:
    """bitsandbytes LLM.int8(): per prompt token, the widest Linear's int32 accumulator and
    the int8 copies of its input (quantizers.toml [int8_matmul.*]); 0 for other formats and
    for stacks with an int8 of their own."""
    for row in _table().get("int8_matmul", {}).values():
        if fmt in row["formats"] and framework not in row.get("other_frameworks", ()):
            return row["accumulator_bytes"] * widest_out + row["input_copies_bytes"] * widest_in
    return 0.0


def bnb_whole_state_bits(fmt: str, framework: str | None) -> float:
    """Bits per quantized weight that a bitsandbytes 4-bit base keeps whole on every card
    when FSDP / ZeRO-3 shard or offload its parameters: the QuantState statistics, the
    format's bits beyond the 4-bit codes (quantizers.toml [bitsandbytes_4bit_sharded]);
    0 for other formats and for stacks on other 4-bit kernels."""
    row = _table()["bitsandbytes_4bit_sharded"]
    spec = catalog.find_format(fmt)
    if spec is None or fmt not in row["formats"] or framework in row["other_kernels"]:
        return 0.0
    return max(spec.bits - row["code_bits"], 0.0)
