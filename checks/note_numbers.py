"""Settings the case schema has no field for but a source states in its notes as a number
or a release: frame counts, block swap and group offloading, llama.cpp's --n-cpu-moe, the
serving engines' profile settings, the Unsloth and transformers releases. Read by fixed
patterns, the same for every case, never keyed by case id, model name or source.
"""

from __future__ import annotations

import re

MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]


def _unsloth_release(notes: str) -> dict:
    """The Unsloth release a source ran: named ("Unsloth 2024.1"), else the month it is dated
    by, since Unsloth's releases are year.month ("(January 2024)" -> 2024.1), as the bot
    reads "unsloth 2024.1" from a question (advisor/parse/training_knobs.py)."""
    if m := re.search(r"[Uu]nsloth[ =v]*(20\d\d\.\d{1,2})\b", notes):
        return {"unsloth_version": m.group(1)}
    if m := re.search(rf"\b({'|'.join(MONTHS)}) (20\d\d)\b", notes):
        return {"unsloth_version": f"{m.group(2)}.{MONTHS.index(m.group(1)) + 1}"}
    return {}


def numbers_in_notes(notes: str, fields: dict) -> dict:
    """Settings the schema has no field for but every source of that kind states in its
    notes: the frame count of a video, how many layers' MoE experts llama.cpp kept on the
    host (its --n-cpu-moe), and the transformers release (tuple KV cache before 4.36,
    full-prompt logits before 4.45; sources from 2023 that name no version: legacy), and
    the blocks a block swap keeps on the CPU."""
    out: dict = {}
    # the frames a video pipeline decodes per VAE call, as the bot reads them
    # (advisor/parse/image_knobs.py recognize_decode_chunk), taken out before the frame count
    chunk = re.search(
        r"\b(?:decode_chunk_size|decoding_t)\s*[=:]?\s*(\d+)\b"
        r"|decod\w*\s+(\d+)\s*frames?\s+at\s+a\s+time",
        notes,
    )
    if chunk:
        out["decode_chunk_frames"] = int(chunk.group(1) or chunk.group(2))
        notes = notes[: chunk.start()] + notes[chunk.end() :]
    if m := re.search(r"(\d+) frames", notes):
        out["video_frames"] = int(m.group(1))
    elif re.search(r"\b(?:one|a single|single)[ -]frame\b", notes):
        # a video model trained on an image folder: each image a one-frame video
        out["video_frames"] = 1
    # kohya sd-scripts / musubi-tuner / kohya's HunyuanVideo fork block swap, as the bot
    # reads it from a question (advisor/parse/image_knobs.py recognize_block_swap).
    if m := re.search(r"--blocks?[_-]to[_-]swap[ =]+(\d+)", notes):
        out["blocks_to_swap"] = int(m.group(1))
    # diffusers' block-level group offloading of the denoiser, as the bot reads it
    # (advisor/parse/group_offload.py group_blocks, use_stream); the text encoder's own group size
    # is not the denoiser's.
    call = re.search(r"apply_group_offloading\(transformer[^)]*\)", notes)
    if call and (m := re.search(r"num_blocks_per_group\s*=\s*(\d+)", call.group(0))):
        out["group_offload_blocks"] = int(m.group(1))
        out["group_offload_stream"] = "use_stream=True" in call.group(0)
    if m := re.search(r"(\d+) of \d+ layers' experts on host", notes):
        out["n_cpu_moe"] = int(m.group(1))
    # Serving-engine settings a start-up log states and the schema has no field for: the
    # profile batch vLLM ran (V0 without chunked prefill profiles max_model_len tokens and
    # max_num_seqs 256 rows, not the V1 defaults) and llama.cpp's micro-batch.
    for setting in ("max_num_batched_tokens", "max_num_seqs", "n_ubatch"):
        if m := re.search(rf"\b{setting}[ =:]+(\d+)", notes):
            out[setting] = int(m.group(1))
    # LMDeploy's KV pool share, as the bot reads it (advisor/parse/knobs.py)
    share = re.search(r"cache[-_]max[-_]entry[-_]count[ =:]+(0?\.\d+)", notes)
    if fields.get("runtime") == "lmdeploy" and share:
        out["cache_max_entry_count"] = float(share.group(1))
    # vLLM's sampler sorted the vocabulary for top-k/top-p in V0 and in V1 until the Triton
    # kernel of February 2026 (vLLM PR #33538); start-up logs that name the engine and date
    # it say which. The v0.19 logs (April 2026) are after it.
    serving = fields.get("runtime") == "vllm"
    if serving and re.search(r"V0 engine|V1 engine \((?:[A-Z][a-z]+ )?202[45]\b", notes):
        out["vllm_sort_sampler"] = True
    if fields.get("framework") == "unsloth":
        out.update(_unsloth_release(notes))
    if fields.get("mode") == "inference" and fields.get("runtime") == "transformers":
        version = re.search(r"[Tt]ransformers (\d+)\.(\d+)", notes)
        if version:
            # the release says which generation (advisor/memory/runtimes/transformers.py)
            out["transformers_version"] = f"{version.group(1)}.{version.group(2)}"
        elif re.search(
            r"2023|PyTorch (1\.|2\.0)|auto-gptq|cache concatenation|benchmark_gptq", notes
        ):
            # Undated sources: the year, the PyTorch release, AutoGPTQ (2023-early 2024),
            # optimum's benchmark_gptq.py (written for transformers 4.32, Aug 2023) or the
            # concatenating cache itself place them before transformers 4.36.
            out["legacy_generate"] = True
    return out
