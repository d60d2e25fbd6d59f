"""Block swap in the generation scripts that have it (kohya's HunyuanVideo fork
generate_video_optimized.py, musubi-tuner): the swapped blocks' weights on the CPU, the text
encoders, the DiT and the VAE loaded in turn (data/models/video.toml hunyuanvideo
swap_units)."""

from advisor import catalog
from advisor.memory import estimate
from advisor.models.workload import Workload
from advisor.parse import parse_query

GIB = 2**30


def _hv(**kw) -> object:
    return estimate(
        Workload(
            model="hunyuanvideo",
            mode="inference",
            weights_format="fp8",
            image_width=960,
            image_height=544,
            video_frames=129,
            **kw,
        )
    )


def _term(r, name: str) -> int:
    return sum(t.bytes for t in r.estimate.terms if t.name == name)


def test_hunyuanvideo_swaps_in_forty_units_as_its_enable_block_swap_counts_them():
    # models.py enable_block_swap: N // 2 dual and 2 x (N - N // 2) + 1 single blocks; a dual
    # block is 340M parameters and a single one 141M, so --blocks-to-swap 20 moves 10 dual and
    # 21 single blocks: 6.36B of the 12.82B, half of the DiT as 20 of 40 units
    spec = catalog.find_model("hunyuanvideo")
    assert spec is not None and spec.diffusion is not None
    assert spec.diffusion.swap_units == 40
    moved = 10 * 0.340 + 21 * 0.141
    assert abs(moved / 12.82 - 20 / 40) < 0.01


def test_block_swap_keeps_the_rest_of_the_dit_and_loads_the_components_in_turn():
    whole = _hv()
    swap = _hv(blocks_to_swap=20)
    # all resident: the fp8 DiT, the bf16 LLaVA-Llama-3 encoder and the rest at once
    assert _term(whole, "text_encoders") > 0 and _term(whole, "weights") > 0
    # swapped: the peak is one phase (the encoders or the DiT's half), never both
    assert _term(swap, "text_encoders") == 0 or _term(swap, "weights") == 0
    assert swap.estimate.allocated_bytes < whole.estimate.allocated_bytes
    assumed = {a.field: a.value for a in swap.assumed}
    assert assumed["block_swap"] == "20/40"


def test_the_dit_phase_holds_the_unswapped_share_of_the_fp8_weights():
    # 38 of 40 units on the CPU (the fork's maximum), the embeddings given and the VAE tiled
    # (the fork's default): the DiT phase is the peak, with 2/40 of the fp8 weights on the card
    swap = _hv(blocks_to_swap=38, text_encoders_on_gpu=False, vae_tiling=True)
    weights = next(t for t in swap.estimate.terms if t.name == "weights")
    assert weights.formula_key == "weights.block_swap"
    fp8 = 12.82e9
    assert abs(weights.bytes - fp8 * 2 / 40) / (fp8 * 2 / 40) < 0.02


def test_the_dashed_flag_is_read_from_the_question():
    q = parse_query(
        "hunyuanvideo fp8 generate_video_optimized.py --blocks-to-swap 20 960x544 129 frames 4090"
    )
    assert q.workload.blocks_to_swap == 20


def test_a_block_swap_without_a_count_is_the_most_the_script_allows_and_said():
    # kohya's HunyuanVideo fork README: "The maximum is 38"; sd-scripts flux_models.py
    # enable_block_swap: at most 17 dual and 36 single blocks, --blocks_to_swap 35
    hv = catalog.find_model("hunyuanvideo")
    flux = catalog.find_model("flux.1-dev")
    assert hv is not None and hv.diffusion is not None and hv.diffusion.most_swapped == 38
    assert flux is not None and flux.diffusion is not None and flux.diffusion.most_swapped == 35
    q = parse_query("hunyuanvideo fp8 block swap 1280x720 81 frames on a 16GB card")
    assert q.workload.blocks_to_swap == 38
    assert any(a.startswith("block_swap_most = 38") for a in q.assumed)
    # a count given is kept
    assert parse_query("hunyuanvideo fp8 --blocks-to-swap 20").workload.blocks_to_swap == 20


def test_fp8_llm_puts_the_text_encoder_in_fp8_with_its_embedding_in_16_bit():
    # generate_video_optimized.py --fp8-llm: the LLM cast to float8_e4m3fn, its Embedding
    # moved back to bf16 (prepare_fp8); the text phase then holds the fp8 LLM
    q = parse_query("hunyuanvideo --fp8 --fp8-llm --blocks-to-swap 38 960x544 129 frames")
    assert q.workload.text_encoder_format == "fp8" and q.workload.weights_format == "fp8"
    bf16 = _hv(blocks_to_swap=38, vae_tiling=True)
    fp8 = _hv(blocks_to_swap=38, vae_tiling=True, text_encoder_format="fp8")
    assert _term(bf16, "text_encoders") > 0
    # LLaVA-Llama-3-8B: 7.5B, of which the 0.525B token embedding stays 16-bit
    llm_fp8 = (7.5 - 0.525) * 1e9 + 0.525e9 * 2
    assert fp8.estimate.allocated_bytes < bf16.estimate.allocated_bytes
    assert fp8.estimate.allocated_bytes < llm_fp8 + 8 * GIB
