"""bench/accuracy.py (eval/accuracy.py): the JSON rows carry the band in the judged view, bound rows carry what
they were judged on, and a missing case file is one line and a non-zero exit."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench" / "accuracy.py"  # the entry point issues name; it runs eval/accuracy.py

CASES = [
    {
        "id": "synthetic-8b-generate",
        "category": "llm_inference",
        "model": {"name": "meta-llama/Llama-3.1-8B", "params_b": 8.03, "arch": {}},
        "workload": {
            "mode": "inference",
            "weights_precision": "bf16",
            "batch_size": 1,
            "prompt_tokens": 1000,
            "new_tokens": 100,
            "framework": "transformers",
        },
        "measured": {"value_gib": 15.5, "what": "allocated", "bound": None},
        "source": {"repo": "example/one"},
        "notes": "Transformers 4.51.0",
    },
    {
        "id": "synthetic-8b-oom",
        "category": "llm_inference",
        "model": {"name": "meta-llama/Llama-3.1-8B", "params_b": 8.03, "arch": {}},
        "workload": {"mode": "inference", "weights_precision": "bf16", "framework": "vllm"},
        "measured": {
            "value_gib": None,
            "what": "nvml",
            "bound": {"kind": "oom_at", "limit_gib": 12.0, "tokens": None},
        },
        "source": {"repo": "example/two"},
    },
]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(BENCH), *args], capture_output=True, text=True, timeout=120
    )


def test_json_rows_carry_the_band_and_bounds_carry_their_estimate(tmp_path: Path) -> None:
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(CASES), encoding="utf-8")
    out = run("--cases", str(path), "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    (row,) = data["rows"]
    assert row["low_bytes"] < row["estimate_bytes"] < row["high_bytes"]
    assert row["view"] == "allocated" and row["runtime"] == "transformers"
    (bound,) = data["bounds"]
    assert bound["ok"] and bound["estimate_bytes"] > 12 * 2**30
    assert {x["left_out"] for x in data["leave_one_source_out"]} == {"example/one", "example/two"}


def test_without_the_cases_file_it_says_so_in_one_line_and_fails(tmp_path: Path) -> None:
    out = run("--cases", str(tmp_path / "missing.json"))
    assert out.returncode != 0
    assert len(out.stdout.strip().splitlines()) == 1 and "Traceback" not in out.stderr


def test_every_row_of_the_notes_phrase_table_compiles_and_sets_a_workload_field() -> None:
    """checks/data/note_knobs.toml is read as data: a row whose field the workload lacks, or
    whose pattern is not a regex, would otherwise be skipped or fail only on the case that
    names it."""
    import re

    from advisor.models.workload import Workload
    from checks.note_knobs import NOTE_KNOBS

    assert len(NOTE_KNOBS) >= 26
    for pattern, field, _value in NOTE_KNOBS:
        re.compile(pattern)
        assert field in Workload.model_fields, field


def test_the_adapter_names_no_case_and_no_source() -> None:
    """The phrase tables are the same for every case: no case id or source repository
    appears in the adapter (skipped where the shared cases are absent)."""
    import pytest

    cases_path = ROOT.parent / "shared" / "eval" / "vram_cases.json"
    if not cases_path.exists():
        pytest.skip("no shared cases here")
    adapter = ("cases.py", "note_knobs.py", "data/note_knobs.toml", "note_numbers.py")
    source = "".join((ROOT / "checks" / f).read_text(encoding="utf-8") for f in adapter).lower()
    for case in json.loads(cases_path.read_text(encoding="utf-8")):
        assert case["id"].lower() not in source
        repo = (case.get("source") or {}).get("repo")
        if repo:
            assert repo.lower() not in source


def test_a_text_encoder_run_on_the_cpu_is_read_from_the_notes_and_leaves_the_gpu() -> None:
    """Wan's native `--t5_cpu` (or a note saying the text encoder runs on the CPU) keeps the
    text encoder off the GPU, as a precomputed-embeddings note already does."""
    from advisor.memory import estimate
    from checks.cases import case_to_workload

    case = _wan_case("81 frames.")
    on_gpu, knobs_on = case_to_workload(case)
    off_gpu, knobs_off = case_to_workload({**case, "notes": "81 frames, --t5_cpu."})
    assert "text_encoders_on_gpu=False" in knobs_off and not knobs_on
    assert estimate(off_gpu).estimate.total_bytes < estimate(on_gpu).estimate.total_bytes


def _wan_case(notes: str, quote: str = "") -> dict:
    return {
        "id": "synthetic-wan-notes",
        "category": "diffusion_inference",
        "model": {"name": "Wan-AI/Wan2.1-T2V-1.3B", "params_b": 7.2, "arch": {}},
        "workload": {
            "mode": "inference",
            "weights_precision": "bf16",
            "batch_size": 1,
            "image_width": 832,
            "image_height": 480,
            "denoise_steps": 50,
            "framework": "diffusers",
        },
        "notes": notes,
        "quote": quote,
    }


def test_a_setting_the_notes_deny_is_not_read() -> None:
    """'(no --t5_cpu)', 'without VAE tiling': the phrase table skips a negated mention and
    still reads the same words where they are stated."""
    from checks.cases import case_to_workload

    _, denied = case_to_workload(_wan_case("81 frames (no --t5_cpu), without VAE tiling."))
    _, stated = case_to_workload(_wan_case("81 frames, --t5_cpu, VAE tiling."))
    assert denied == []
    assert stated == ["text_encoders_on_gpu=False", "vae_tiling=True"]


def test_sequential_offload_wins_over_a_generic_cpu_offloading_mention() -> None:
    """A case naming enable_sequential_cpu_offload and, in its quote, 'CPU offloading' ran
    sequentially, whichever phrase the table reaches last."""
    from checks.cases import case_to_workload

    w, _ = case_to_workload(
        _wan_case("under enable_sequential_cpu_offload()", "per-layer CPU offloading")
    )
    assert w.cpu_offload.value == "sequential"


def test_per_frame_decode_and_cached_latents_are_read_from_the_notes() -> None:
    """lvdm's perframe_ae=True and a trainer's cache_latents, as a user's words are read
    (advisor/data/vocab/words.toml); '--not_cache_latents' is the switch that turns it off."""
    from checks.cases import case_to_workload

    w, knobs = case_to_workload(_wan_case("81 frames, perframe_ae=True"))
    assert w.vae_per_frame and knobs == ["vae_per_frame=True"]
    _, knobs = case_to_workload(_wan_case("81 frames, --not_cache_latents"))
    assert knobs == []
    _, knobs = case_to_workload(_wan_case("81 frames, cache_latents"))
    assert knobs == ["latents_cached=True"]


def test_a_vllm_log_dated_before_the_triton_sampler_is_read_as_a_sorting_build() -> None:
    """A vLLM start-up log that names the V0 engine, or the V1 engine of 2024-2025, comes
    from a build whose profile sorted the vocabulary for top-k/top-p; a v0.19 log does not."""
    from checks.cases import case_to_workload

    case = {
        "id": "synthetic-vllm-profile",
        "category": "llm_inference",
        "model": {"name": "meta-llama/Llama-3.1-8B-Instruct", "params_b": 8.03, "arch": {}},
        "workload": {
            "mode": "inference",
            "weights_precision": "bf16",
            "seq_len": 16000,
            "framework": "vllm",
        },
        "measured": {"value_gib": 20.0, "what": "software_reported", "bound": None},
        "quote": "",
    }
    for notes, sorts in (
        ("vLLM V1 engine (2025, the start-up line ...)", True),
        ("vLLM V0 engine (December 2024, ~0.6.5)", True),
        ("vLLM 0.19.0 V1 engine, `vllm serve` on H100", False),
    ):
        workload, _ = case_to_workload({**case, "notes": notes})
        assert workload.vllm_sort_sampler is sorts, notes


def test_all_pools_the_shared_set_with_every_case_file_in_bench_data() -> None:
    files = [ROOT.parent / "shared" / "eval" / "vram_cases.json"]
    files += sorted((ROOT / "bench" / "data").glob("*cases*.json"))
    assert len(files) >= 8
    cases = [c for f in files for c in json.loads(f.read_text(encoding="utf-8"))]
    out = run("--all", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    scored = {r["id"] for r in data["rows"]} | {b["id"] for b in data["bounds"]}
    # Every scored id is one of the pooled cases, and cases from a bench/data file are in.
    assert scored <= {c["id"] for c in cases}
    assert "yolov8n-b8-704-gtx1060" in scored and data["summary"]["cases_scored"] > 300


def test_a_reserved_measurement_is_judged_on_the_tensors_as_the_shared_readme_says() -> None:
    """../shared/eval/README.md: `allocated`, `reserved` and `software_reported` measurements
    are compared with the allocated view (tensors only, no allocator slack); `nvml` with the
    total. Keeping that rule keeps the figures comparable with any other scorer of the cases."""
    from advisor.memory import estimate
    from checks.accuracy import judged_bytes
    from checks.cases import case_to_workload

    case = {
        "id": "synthetic-7b-lora",
        "category": "llm_training",
        "model": {"name": "meta-llama/Llama-2-7b-hf", "params_b": 6.74, "arch": {}},
        "workload": {
            "mode": "lora",
            "weights_precision": "bf16",
            "batch_size": 1,
            "seq_len": 1024,
            "num_gpus": 1,
            "framework": "transformers",
        },
    }
    est = estimate(case_to_workload(case)[0]).estimate
    assert judged_bytes(est, "reserved") == (est.allocated_bytes, "allocated")
    assert judged_bytes(est, "allocated") == (est.allocated_bytes, "allocated")
    assert judged_bytes(est, "nvml") == (est.total_bytes, "total")
    assert est.total_bytes > est.allocated_bytes


def test_a_stack_no_word_table_knows_is_scored_as_unmodelled() -> None:
    """A model repository's own script is estimated as the runtime it resembles, and its
    band is the one for stacks the engine does not follow; named stacks keep their name."""
    from checks.cases import UNKNOWN_STACK, stack

    assert stack("SkyReels-V2 generate_video.py (Wan2.1 modules)") == UNKNOWN_STACK
    assert stack("PyTorch from-scratch Qwen3Model") == UNKNOWN_STACK
    assert stack("openai-whisper (PyTorch reference implementation)") == "openai-whisper"
    assert stack("Ultralytics YOLOv8.2.103") == "ultralytics"
    assert stack("detectron2") == "detectron2"
    # axolotl names PEFT and bitsandbytes beside itself: the stack is axolotl's (it casts the
    # kbit-prepared norms back to 16 bits, data/training_stacks.toml [kbit_training])
    assert stack("axolotl (transformers + peft + bitsandbytes, 2023)") == "axolotl"
    assert stack("diffusers") is None and stack("") is None  # the runtime alone: modelled
    from advisor.memory.band import framework_modelled

    assert not framework_modelled(UNKNOWN_STACK)
    assert framework_modelled("ultralytics") and framework_modelled("openai-whisper")


def test_a_largest_context_bound_is_judged_on_the_engines_own_estimate_of_it() -> None:
    """A measured 'longest context that trained' is compared with the engine's estimate of
    that context (the point estimate), not with the safer figure an answer states (whose
    band's high end fits): the band is judged on its own coverage."""
    from advisor.fit import max_context_tokens
    from checks.accuracy import GIB, score_case
    from checks.cases import case_to_workload

    case = {
        "id": "synthetic-8b-qlora-maxctx",
        "category": "llm_training",
        "model": {"name": "meta-llama/Llama-3.1-8B", "params_b": 8.03, "arch": {}},
        "workload": {
            "mode": "qlora",
            "weights_precision": "nf4",
            "batch_size": 1,
            "seq_len": 8192,
            "gradient_checkpointing": True,
            "framework": "transformers+peft",
        },
        "measured": {
            "value_gib": None,
            "what": "unknown",
            "bound": {"kind": "max_context_tokens", "limit_gib": 40.0, "tokens": 8192},
        },
        "source": {"repo": "example/three"},
    }
    row = score_case(case)
    workload = case_to_workload(case)[0]
    point = max_context_tokens(workload, int(40.0 * GIB), safe=False)
    assert row["context_tokens"] == point
    assert point > (max_context_tokens(workload, int(40.0 * GIB)) or 0)


def test_wan_offload_model_is_read_as_components_in_turn_as_the_bot_reads_it() -> None:
    """Wan's own `--offload_model True` is model offload for a case, as for a user's line."""
    from advisor.parse import parse_query
    from checks.cases import case_to_workload

    w, knobs = case_to_workload(_wan_case("81 frames, --offload_model True --t5_cpu"))
    assert w.cpu_offload.value == "model" and "cpu_offload=model" in knobs
    asked = parse_query("wan2.1 1.3b 480p 4090 --offload_model True").workload
    assert asked.cpu_offload is not None and asked.cpu_offload.value == "model"


def test_block_swap_and_the_lora_trainers_are_read_as_the_bot_reads_them() -> None:
    """A case's '--blocks-to-swap 20' and a kohya / musubi-tuner / finetrainers / ai-toolkit
    framework reach the workload a user's line with the same words gets."""
    from advisor.parse import parse_query
    from checks.cases import case_to_workload, stack

    w, _ = case_to_workload(_wan_case("81 frames, --blocks-to-swap 20 (of 40 blocks)"))
    assert w.blocks_to_swap == 20
    w, _ = case_to_workload(_wan_case("--blocks_to_swap 16: 16 of the blocks on the CPU"))
    assert w.blocks_to_swap == 16
    assert stack("kohya-ss sd-scripts flux_train_network.py (accelerate)") == "kohya"
    assert stack("musubi-tuner wan_train_network.py") == "kohya"
    assert stack("finetrainers (diffusers models)") == "finetrainers"
    assert stack("ai-toolkit (diffusers models)") == "ai-toolkit"
    asked = parse_query("wan2.1 14b musubi-tuner --blocks-to-swap 20 on a 4090").workload
    assert asked.blocks_to_swap == 20 and asked.framework == "kohya"


def test_group_offloading_is_read_as_the_bot_reads_it() -> None:
    """diffusers' group offloading in a case's notes and in a user's line: the denoiser's
    enable_group_offload / apply_group_offloading(transformer, ...) as sequential offload, and
    the text encoder named with block-level group offloading as onloaded whole."""
    from advisor.parse import parse_query
    from checks.cases import case_to_workload

    notes = (
        "transformer with leaf-level group offloading (enable_group_offload, use_stream=True), "
        "umT5-XXL text encoder bf16 with block-level group offloading (4 blocks at a time)."
    )
    w, _ = case_to_workload(_wan_case(notes))
    assert w.cpu_offload.value == "sequential" and w.text_encoder_block_offload
    w, _ = case_to_workload(_wan_case("apply_group_offloading(transformer, 'block_level')."))
    assert w.cpu_offload.value == "sequential" and not w.text_encoder_block_offload
    for line in (
        "wan2.1 14b 480p 81 frames enable_group_offload, "
        "apply_group_offloading(text_encoder, offload_type='block_level') on a 4090",
        "wan 2.1 14b group offload, umt5 block-level, 480p 81帧 4090",
        "wan2.1 14b 分组卸载 文本编码器 block_level 3090",
    ):
        asked = parse_query(line).workload
        assert asked is not None and asked.cpu_offload is not None
        assert asked.cpu_offload.value == "sequential" and asked.text_encoder_block_offload
    asked = parse_query("flux dev enable_group_offload 4060").workload
    assert asked is not None and asked.cpu_offload is not None
    assert asked.cpu_offload.value == "sequential" and not asked.text_encoder_block_offload


def test_a_video_model_trained_on_one_frame_images_is_read_as_one_frame() -> None:
    """'an image folder ... one frame' in a case and 'single-frame' in a question: 1 frame,
    not the model's default clip (Wan2.1: 81)."""
    from advisor.parse import parse_query
    from checks.cases import case_to_workload

    w, _ = case_to_workload(_wan_case("an image folder at 632 px (one frame per image)"))
    assert w.video_frames == 1
    w, _ = case_to_workload(_wan_case("81 frames, one frame at a time decoded"))
    assert w.video_frames == 81
    asked = parse_query("wan2.1 14b lora on single-frame images 632x632 on a 4090").workload
    assert asked.video_frames == 1
    asked = parse_query("wan2.1 14b lora 单帧图片训练 4090").workload
    assert asked.video_frames == 1


def test_kohyas_adamw8bit_spelling_is_the_8bit_optimizer_as_the_bot_reads_it() -> None:
    from advisor.parse import parse_query
    from checks.cases import OPTIMIZERS

    assert OPTIMIZERS["adamw8bit"] == "adamw_8bit"
    asked = parse_query("sdxl full fine-tune kohya --optimizer_type AdamW8bit on a 4090").workload
    assert asked.optimizer is not None and asked.optimizer.value == "adamw_8bit"


def test_comfyui_is_read_as_the_runtime_that_manages_its_own_memory() -> None:
    """A case run in ComfyUI (a GGUF loader node included) is the comfyui runtime, as a
    user's 'comfyui' is: components loaded per phase and the VAE decode tiled on a retry."""
    from advisor.parse import parse_query
    from checks.cases import RUNTIME_WORDS, _first

    assert _first(RUNTIME_WORDS, "ComfyUI (kijai CogVideoXWrapper, MZ GGUF loader)") == "comfyui"
    assert _first(RUNTIME_WORDS, "ComfyUI + DynamiCrafterWrapper (kijai)") == "comfyui"
    assert _first(RUNTIME_WORDS, "llama.cpp GGUF") == "llamacpp"
    asked = parse_query("cogvideox 5b in comfyui 480x720 32 frames on a 3060").workload
    assert asked.runtime is not None and asked.runtime.value == "comfyui"


def test_an_mmaction2_run_is_its_own_stack_not_mmsegmentation_as_the_bot_reads_it() -> None:
    """'mmaction2 (mmcv)' was read by the mmcv word as MMSegmentation, whose uncatalogued
    networks take the dense-prediction figure per pixel (340 MB a 224 px frame for TSN's
    ResNet-50); MMAction2 classifies frames."""
    from advisor.parse import parse_query
    from checks.cases import stack

    assert stack("mmaction2 (mmcv)") == "mmaction2"
    assert stack("mmsegmentation (mmcv)") == "mmsegmentation"
    parsed = parse_query("tsn resnet50 with mmaction2, batch 96, 224x224")
    assert parsed.workload is not None and parsed.workload.framework == "mmaction2"
