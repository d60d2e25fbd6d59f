"""FramePack samples one section at a time (lllyasviel/FramePack demo_gradio.py, packed
HunyuanVideo transformer): the peak follows the section, not the video's length."""

from advisor import catalog
from advisor.memory import estimate, video
from advisor.models.workload import Workload
from advisor.parse import parse_query


def test_the_section_is_the_packed_token_count_at_the_640_bucket():
    geo = video.geometry("framepack")
    assert geo is not None and geo.section
    # 9 new latent frames + 2 clean frames at 1x2x2, 2 through proj_2x (2x4x4) and 16
    # through proj_4x (4x8x8), 80 x 80 latents: 18,400 tokens, counted as 12 latent frames
    packed = 11 * 40 * 40 + 1 * 20 * 20 + 4 * 10 * 10
    counted = video.latent_frames(geo, geo.frames) * (640 // 16) ** 2
    assert packed == 18_400 and counted == 19_200 and counted >= packed


def test_the_videos_length_does_not_move_the_peak():
    spec = catalog.find_model("lllyasviel/FramePackI2V_HY")
    assert spec is not None and spec.id == "framepack"
    short, long = (
        estimate(
            Workload(
                model="framepack", mode="inference", cpu_offload="sequential", video_frames=frames
            )
        )
        for frames in (33, 1800)
    )
    assert short.estimate.allocated_bytes == long.estimate.allocated_bytes
    assert {a.field: a.value for a in short.assumed}["section_frames"] == "45"


def test_framepack_is_read_from_a_question():
    q = parse_query("framepack on a 6GB card, 60 second video")
    assert q.workload.model == "framepack"
