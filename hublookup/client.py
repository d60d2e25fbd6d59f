"""Reading one repo from the Hub with the huggingface_hub library: model info (file listing
with sizes), config.json, and the safetensors headers through range requests, never the
weights. The library is blocking; `lookup` runs it in a thread under a time limit so the
bot's event loop never waits on the network.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from huggingface_hub import HfApi, hf_hub_url
from huggingface_hub.errors import (
    EntryNotFoundError,
    GatedRepoError,
    HfHubHTTPError,
    RepositoryNotFoundError,
)
from huggingface_hub.utils import get_session, hf_raise_for_status

from advisor.hubspec import GgufFile, HubFacts, count_tensors, gguf_format, quant_info
from hublookup.settings import endpoint_base

log = logging.getLogger(__name__)
Tensors = dict[str, tuple[str, list[int]]]


class HubLookupError(Exception):
    """What the user is told: not_found | gated | no_config | unreachable | rate_limited |
    timeout."""

    def __init__(self, code: str, repo_id: str = "") -> None:
        super().__init__(f"{code}: {repo_id}")
        self.code = code
        self.repo_id = repo_id


def now_iso() -> str:
    return dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat()


@dataclass
class HubClient:
    endpoint: str
    token: str | None
    timeout_s: float
    # lookups that outlived timeout_s, still running in their thread (hublookup.resolve
    # caches what they bring, so the next question about the repo is answered at once)
    late: dict[str, asyncio.Future] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # "https://hf-mirror.com/" as mirror guides write it: the library would ask //api/…
        self.endpoint = endpoint_base(self.endpoint)

    def _api(self) -> HfApi:
        # token=False: never send a token found elsewhere on the machine (~/.cache/huggingface)
        return HfApi(endpoint=self.endpoint, token=self.token or False)

    # --- blocking: run in a thread ------------------------------------------------------

    def _json(self, api: HfApi, repo_id: str, filename: str) -> Any | None:
        """A small JSON file in one GET (no metadata HEAD first: nothing is written to a
        local cache); None when the repo has no such file."""
        url = hf_hub_url(repo_id, filename, endpoint=self.endpoint)
        headers = api._build_hf_headers(token=self.token or False)
        response = get_session().get(url, headers=headers, timeout=self.timeout_s)
        try:
            hf_raise_for_status(response)
        except EntryNotFoundError:
            return None
        return response.json()

    def _header(self, api: HfApi, repo_id: str, filename: str) -> Tensors | None:
        """One safetensors file's header by range request (the library's own reader)."""
        try:
            meta = api.parse_safetensors_file_metadata(
                repo_id, filename, token=self.token or False, timeout=self.timeout_s
            )
        except EntryNotFoundError:
            return None
        return {name: (t.dtype, list(t.shape)) for name, t in meta.tensors.items()}

    def _tensors(self, api: HfApi, repo_id: str, single: Future, index: Future) -> Tensors | None:
        tensors = single.result()
        if tensors is not None:
            return tensors
        weight_map = (index.result() or {}).get("weight_map") or {}
        if not weight_map:
            return None
        with ThreadPoolExecutor(max_workers=8) as pool:  # a sharded repo: shards at once
            shards = list(
                pool.map(lambda f: self._header(api, repo_id, f), sorted(set(weight_map.values())))
            )
        return {name: info for shard in shards if shard for name, info in shard.items()}

    def read(self, repo_id: str) -> HubFacts:
        """One repo, blocking. Everything is asked at once, not one request after another:
        the model info (file listing with sizes, revision), config.json, the single
        safetensors file's header and the shard index. A sharded repo adds one more step
        (its shards' headers, in parallel)."""
        api = self._api()
        try:
            with ThreadPoolExecutor(max_workers=4) as pool:
                info_f = pool.submit(
                    api.model_info, repo_id, files_metadata=True, timeout=self.timeout_s
                )
                config_f = pool.submit(self._json, api, repo_id, "config.json")
                single_f = pool.submit(self._header, api, repo_id, "model.safetensors")
                index_f = pool.submit(self._json, api, repo_id, "model.safetensors.index.json")
                info = info_f.result()
                config = config_f.result()
                tensors = self._tensors(api, repo_id, single_f, index_f)
            names = {s.rfilename: s.size or 0 for s in info.siblings or []}
        except GatedRepoError as exc:
            raise HubLookupError("gated", repo_id) from exc
        except RepositoryNotFoundError as exc:
            raise HubLookupError("not_found", repo_id) from exc
        except HfHubHTTPError as exc:
            status = exc.response.status_code if exc.response is not None else 0
            raise HubLookupError(
                "rate_limited" if status == 429 else "unreachable", repo_id
            ) from exc
        except OSError as exc:  # refused, reset, DNS
            raise HubLookupError("unreachable", repo_id) from exc
        except Exception as exc:  # the HTTP client's transport errors are not all OSErrors
            if type(exc).__module__.startswith(("httpx", "httpcore")):
                raise HubLookupError("unreachable", repo_id) from exc
            raise
        gguf = [
            GgufFile(name=n, size_bytes=s, format_id=gguf_format(n))
            for n, s in names.items()
            if n.endswith(".gguf")
        ]
        if config is None and not gguf:
            raise HubLookupError("no_config", repo_id)
        counts = count_tensors(tensors, quant_info(config or {})) if tensors else None
        return HubFacts(
            repo_id=info.id or repo_id,
            sha=info.sha,
            read_at=now_iso(),
            config=config,
            tensors=counts,
            gguf_files=gguf,
        )

    def search_blocking(self, text: str, limit: int = 3) -> list[str] | None:
        """Repo ids whose name contains `text`, most downloaded first; None when the Hub did
        not answer. One GET of /api/models?search= (what HfApi.list_models asks, without its
        retries: a suggestion is not worth waiting for)."""
        api = self._api()
        try:
            response = get_session().get(
                f"{self.endpoint.rstrip('/')}/api/models",
                params={"search": text, "limit": limit, "sort": "downloads"},
                headers=api._build_hf_headers(token=self.token or False),
                timeout=self.timeout_s,
            )
            hf_raise_for_status(response)
            return [m["id"] for m in response.json() if isinstance(m, dict) and "id" in m]
        except Exception as exc:  # a suggestion list is a nicety: never an error
            log.info("hub search failed: %s", type(exc).__name__)
            return None

    # --- async: what the bot and the CLI call -----------------------------------------------

    async def lookup(self, repo_id: str) -> HubFacts:
        work = asyncio.ensure_future(asyncio.to_thread(self.read, repo_id))
        try:
            return await asyncio.wait_for(asyncio.shield(work), self.timeout_s)
        except TimeoutError as exc:
            self.late[repo_id.lower()] = work
            raise HubLookupError("timeout", repo_id) from exc

    async def search(self, text: str, limit: int = 3) -> list[str] | None:
        """None: the Hub did not answer (in time)."""
        try:
            return await asyncio.wait_for(
                asyncio.to_thread(self.search_blocking, text, limit), self.timeout_s
            )
        except TimeoutError:
            return None

    async def search_name(self, name: str, family: str) -> list[str]:
        """The name as typed ("pythia-1.4b"), else its family ("pythia") if the Hub answered
        the first with nothing."""
        return await self.search_first([name, family]) or []

    async def search_first(self, texts: list[str]) -> list[str] | None:
        """Each text in turn until the Hub finds something; [] when it answered every one
        with nothing, None when it did not answer (no further round trip is tried)."""
        found: list[str] | None = []
        for text in dict.fromkeys(texts):  # in order, each once
            found = await self.search(text)
            if found != []:
                return found
        return found
