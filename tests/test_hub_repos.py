"""The real huggingface_hub library against the stand-in Hub: 30 real repos outside the
catalog, their parameter counts against their model cards and their architecture against
their config.json; gated, missing, rate-limited, slow and GGUF repos."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from advisor import catalog
from advisor.hubspec import hub_model
from advisor.parse import parse_query
from hublookup.client import HubClient, HubLookupError
from hublookup.standin import DEFAULT_DATA, HubStandin

CARD_REPOS = sorted(
    p.parent for p in DEFAULT_DATA.glob("*/meta.json") if "card_params" in json.loads(p.read_text())
)

# config.json's own names for each Architecture field, read here independently of
# advisor/hubspec so the test does not grade hubspec by its own table.
FIELDS = {
    "layers": ("num_hidden_layers", "n_layer"),
    "hidden": ("hidden_size", "n_embd"),
    "heads": ("num_attention_heads", "n_head"),
    "kv_heads": ("num_key_value_heads",),
    "intermediate": ("intermediate_size", "n_inner"),
    "vocab": ("vocab_size",),
    "max_context_tokens": ("max_position_embeddings", "n_positions"),
    "experts": ("n_routed_experts", "num_experts", "num_local_experts"),
    "experts_per_token": ("num_experts_per_tok",),
    "moe_intermediate": ("moe_intermediate_size",),
    "shared_experts": ("n_shared_experts",),
    "tied_embeddings": ("tie_word_embeddings",),
}


def meta(folder: Path) -> dict:
    return json.loads((folder / "meta.json").read_text())


@pytest.fixture
async def hub() -> AsyncIterator[HubStandin]:
    standin = HubStandin()
    await standin.start()
    yield standin
    await standin.stop()


def client(hub: HubStandin, token: str | None = None, timeout: float = 20) -> HubClient:
    return HubClient(hub.url, token, timeout)


def test_thirty_sourced_repos_none_of_them_in_the_catalog() -> None:
    assert len(CARD_REPOS) >= 30
    for folder in CARD_REPOS:
        m = meta(folder)
        assert m["config_source"] and m["card_source"], folder.name
        assert catalog.find_model(m["repo_id"]) is None, m["repo_id"]
        parsed = parse_query(m["repo_id"])
        assert not parsed.ok, f"the parser places {m['repo_id']} in the catalog"


@pytest.mark.parametrize("folder", CARD_REPOS, ids=lambda p: p.name)
async def test_card_parameter_count_within_1pct_and_architecture_as_published(
    hub: HubStandin, folder: Path
) -> None:
    m = meta(folder)
    facts = await client(hub).lookup(m["repo_id"])
    model = hub_model(facts)
    assert model is not None and model.params_from == "safetensors"
    assert model.spec.params_b * 1e9 == pytest.approx(m["card_params"], rel=0.01)
    config = json.loads((folder / "config.json").read_text())
    arch = model.spec.arch
    assert arch is not None
    compared = 0
    for field, names in FIELDS.items():
        published = next((config[n] for n in names if config.get(n) is not None), None)
        if published is not None:
            assert getattr(arch, field) == published, (field, m["repo_id"])
            compared += 1
    assert compared >= 5
    assert model.spec.source.startswith(f"Hub config.json of {m['repo_id']}")


async def test_one_lookup_reads_headers_not_weights(hub: HubStandin) -> None:
    await client(hub).lookup(
        "EleutherAI/pythia-12b"
    )  # 23.7 GB of fp16: five shards of at most 5 GB
    shards = [f for f in hub.repos["eleutherai/pythia-12b"].files if f.startswith("model-")]
    assert len(shards) == 5
    header_reads = {k: v for k, v in hub.requests.items() if k.startswith("GET /cdn/")}
    assert len(header_reads) == 5 and set(header_reads.values()) == {1}
    assert hub.requests["whole file"] == 0


async def test_a_lookup_asks_everything_at_once(hub: HubStandin) -> None:
    """With each request taking 0.5 s, a single-file repo is read in about two round trips
    (the model info, config.json, the header and the index at once; the header's redirect
    to the CDN), not one request after another."""
    hub.delay_s = 0.5
    started = asyncio.get_running_loop().time()
    await client(hub).lookup("EleutherAI/pythia-1.4b")
    elapsed = asyncio.get_running_loop().time() - started
    assert sum(hub.requests.values()) == 5
    assert elapsed < 3 * hub.delay_s


async def test_deepseek_moe_experts_and_active_parameters(hub: HubStandin) -> None:
    model = hub_model(await client(hub).lookup("deepseek-ai/deepseek-moe-16b-base"))
    assert model is not None and model.spec.arch is not None
    assert model.spec.arch.experts == 64 and model.spec.arch.shared_experts == 2
    # DeepSeekMoE 16B card: 2.8B activated parameters per token
    assert model.spec.active_params_b == pytest.approx(2.8, rel=0.02)


async def test_gptq_upload_counts_unpacked_weights_and_costs_4_156_bits(hub: HubStandin) -> None:
    model = hub_model(await client(hub).lookup("TheBloke/Llama-2-7B-Chat-GPTQ"))
    assert model is not None and model.quant is not None
    assert model.spec.default_format == "gptq-4bit"
    assert model.quant.bits_per_weight == pytest.approx(catalog.formats()["gptq-4bit"].bits)
    # 32 layers x (4 x 4096^2 + 3 x 4096 x 11008) + 2 x 32000 x 4096 + norms, as unquantized
    assert model.spec.params_b * 1e9 == pytest.approx(6_738_415_616, rel=1e-6)


async def test_gguf_repo_lists_each_quant_with_its_size(hub: HubStandin) -> None:
    model = hub_model(await client(hub).lookup("TheBloke/TinyLlama-1.1B-Chat-v1.0-GGUF"))
    assert model is not None and model.params_from == "gguf"
    sizes = {f.format_id: f.size_bytes for f in model.gguf_files}
    assert sizes["q4_k_m"] == 660_000_000 and sizes["q8_0"] == 1_100_000_000
    assert len(sizes) == 12
    assert model.spec.params_b == pytest.approx(1.1, rel=0.1)  # from Q8_0's 8.5 bits/weight


async def test_gated_repo_needs_the_token(hub: HubStandin) -> None:
    with pytest.raises(HubLookupError) as err:
        await client(hub).lookup("google/gemma-2-2b-jpn-it")
    assert err.value.code == "gated"
    model = hub_model(await client(hub, token=hub.token).lookup("google/gemma-2-2b-jpn-it"))
    assert model is not None and model.spec.arch is not None
    assert model.spec.arch.sliding_window == 4096 and model.spec.arch.head_dim == 256


async def test_missing_repo_and_search_suggestions(hub: HubStandin) -> None:
    with pytest.raises(HubLookupError) as err:
        await client(hub).lookup("EleutherAI/pythia-99b")
    assert err.value.code == "not_found"
    assert "EleutherAI/pythia-70m" in (await client(hub).search("pythia", limit=30) or [])


async def test_slow_hub_is_a_timeout(hub: HubStandin) -> None:
    hub.delay_s = 2
    with pytest.raises(HubLookupError) as err:
        await client(hub, timeout=0.5).lookup("EleutherAI/pythia-70m")
    assert err.value.code == "timeout"


async def test_hub_down_is_unreachable(hub: HubStandin) -> None:
    await hub.stop()
    with pytest.raises(HubLookupError) as err:
        await client(hub, timeout=10).lookup("EleutherAI/pythia-70m")
    assert err.value.code == "unreachable"


async def test_rate_limited_hub(hub: HubStandin) -> None:
    hub.rate_limited = True
    with pytest.raises(HubLookupError) as err:
        await client(hub, timeout=10).lookup("EleutherAI/pythia-70m")
    assert err.value.code in ("rate_limited", "timeout")


async def test_the_standin_answers_the_librarys_file_metadata_and_download(
    hub: HubStandin, tmp_path: Path
) -> None:
    """HEAD with X-Repo-Commit / ETag / X-Linked-Size, the CDN redirect, and a download
    through the library's own cache, as other huggingface_hub callers would use them."""
    from huggingface_hub import get_hf_file_metadata, hf_hub_download, hf_hub_url

    repo = hub.repos["tinyllama/tinyllama-1.1b-chat-v1.0"]

    def read() -> tuple:
        url = hf_hub_url(repo.repo_id, "model.safetensors", endpoint=hub.url)
        meta = get_hf_file_metadata(url, token=False)
        path = hf_hub_download(
            repo.repo_id, "config.json", endpoint=hub.url, cache_dir=tmp_path, token=False
        )
        return meta, Path(path).read_bytes()

    meta, config = await asyncio.to_thread(read)
    assert meta.commit_hash == repo.sha
    assert meta.size == len(repo.files["model.safetensors"])  # type: ignore[arg-type]
    assert config == repo.files["config.json"]
