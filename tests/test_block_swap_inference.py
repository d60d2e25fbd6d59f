"""Block swap in the generation scripts that have it (kohya's HunyuanVideo fork
generate_video_optimized.py, musubi-tuner): the swapped blocks' weights on the CPU, the text
encoders, the DiT and the VAE loaded in turn (data/models/video.toml hunyuanvideo
swap_units)."""

from advisor import catalog
from advisor.memory import estimate
from advisor.models import Workload
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
