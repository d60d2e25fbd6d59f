"""Reading one repo from the Hub with the huggingface_hub library's HTTP client: model info
(file listing with sizes), config.json, and the safetensors headers through range requests,
never the weights.

Limits (docs/operations.md, tests/test_hub_limits.py): every request runs on the event loop
under the lookup's total deadline (LOOKUP_DEADLINE_S past its start), so a Hub that sends a
byte now and then cannot hold a lookup, or anything behind it, for longer; at most
MAX_REQUESTS requests are open at once, whatever the number of lookups; every body is read
up to its cap and no further (a 60 MB config.json is refused after 4 MB, a safetensors
header claiming more than 16 MB is not fetched); decoding big JSON runs on this module's
own two threads, never the default pool. Whatever cannot be read as the Hub's format is a
HubLookupError ("unreadable"), which the user is told in their language.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import logging
import struct
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import httpx2
from huggingface_hub import hf_hub_url
from huggingface_hub.errors import (
    EntryNotFoundError,
    GatedRepoError,
    HfHubHTTPError,
    HFValidationError,
    RepositoryNotFoundError,
)
from huggingface_hub.hf_api import ModelInfo
from huggingface_hub.utils import (
    build_hf_headers,
    get_async_session,
    hf_raise_for_status,
    validate_repo_id,
)

from advisor.hubspec import GgufFile, HubFacts, count_tensors, gguf_format, quant_info
from hublookup.settings import endpoint_base

log = logging.getLogger(__name__)
Tensors = dict[str, tuple[str, list[int]]]

# A lookup gives up this long after it started, answered in time or running late
# (resolve.keep_late_reading): what a slow mirror may take, not what a dripping one may.
LOOKUP_DEADLINE_S = 30.0
MAX_REQUESTS = 16  # open at once, all lookups together (a sharded repo asks one per shard)
# Caps on what is read, per file. Real files are far smaller: the largest config.json of
# tests/data/hub is ~6 KB, a 405B model's shard index ~70 KB, a safetensors header of a few
# thousand tensors ~1 MB (the library's own ceiling is 25 MB).
MAX_JSON_BYTES = 4 * 2**20  # config.json, model.safetensors.index.json
MAX_INFO_BYTES = 16 * 2**20  # the repo's file listing (repos with thousands of files)
MAX_HEADER_BYTES = 16 * 2**20  # a safetensors header, as its first 8 bytes announce it
MAX_SEARCH_BYTES = 2**20
FIRST_HEADER_READ = 100_000  # the library's first range: most headers fit in it
# Decoding a large JSON body is CPU work: on these threads, not the event loop's and not
# asyncio's default pool (which other parts of the process share).
_DECODE = ThreadPoolExecutor(max_workers=2, thread_name_prefix="hub-decode")


class HubLookupError(Exception):
    """What the user is told: not_found | gated | no_config | unreachable | rate_limited |
    timeout | unreadable (a file too large or not in the Hub's format)."""

    def __init__(self, code: str, repo_id: str = "") -> None:
        super().__init__(f"{code}: {repo_id}")
        self.code = code
        self.repo_id = repo_id


class _Unreadable(Exception):
    """A body over its cap, or not what the Hub's format says it is."""


def now_iso() -> str:
    return dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat()


def _tensors_of(header: bytes) -> Tensors:
    """A safetensors JSON header -> {name: (dtype, shape)} (format: huggingface.co/docs/
    safetensors); anything else raises ValueError, KeyError or TypeError."""
    data = json.loads(header)
    if not isinstance(data, dict):
        raise ValueError("a safetensors header is a JSON object")
    out: Tensors = {}
    for name, entry in data.items():
        if name == "__metadata__":
            continue
        dtype, shape = entry["dtype"], entry["shape"]
        if not isinstance(dtype, str) or not all(isinstance(d, int) for d in shape):
            raise ValueError(f"tensor {name!r}: not a dtype and a shape")
        out[name] = (dtype, list(shape))
    return out


@dataclass
class HubClient:
    endpoint: str
    token: str | None
    timeout_s: float
    # a lookup's total deadline; never shorter than timeout_s
    deadline_s: float = LOOKUP_DEADLINE_S
    # lookups that outlived timeout_s, still running until their deadline (hublookup.resolve
    # caches what they bring, so the next question about the repo is answered at once)
    late: dict[str, asyncio.Future] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # "https://hf-mirror.com/" as mirror guides write it: the library would ask //api/…
        self.endpoint = endpoint_base(self.endpoint)
        self.deadline_s = max(self.deadline_s, self.timeout_s)
        self._open = asyncio.Semaphore(MAX_REQUESTS)
        self._http: httpx2.AsyncClient | None = None
        self._http_loop: asyncio.AbstractEventLoop | None = None

    def _session(self) -> httpx2.AsyncClient:
        """One HTTP client for every lookup on this event loop: a new one loads the CA
        bundle (~60 ms of CPU), which a lookup, or a search of three names, paid each time."""
        loop = asyncio.get_running_loop()
        if self._http is None or self._http_loop is not loop or self._http.is_closed:
            self._http, self._http_loop = get_async_session(), loop
        return self._http

    async def aclose(self) -> None:
        if self._http is not None and not self._http.is_closed:
            await self._http.aclose()
        self._http = None

    def _headers(self) -> dict[str, str]:
        # token=False: never send a token found elsewhere on the machine (~/.cache/huggingface)
        return build_hf_headers(token=self.token or False)

    async def _get(
        self,
        http: httpx2.AsyncClient,
        url: str,
        cap: int,
        *,
        params: dict | None = None,
        byte_range: tuple[int, int] | None = None,
    ) -> httpx2.Response:
        """One GET, its body read up to `cap` bytes (a longer one is refused mid-way, not
        buffered); the library's errors raised as it raises them."""
        headers = self._headers()
        if byte_range is not None:
            headers["range"] = f"bytes={byte_range[0]}-{byte_range[1]}"
        async with self._open, http.stream("GET", url, params=params, headers=headers) as r:
            body = bytearray()
            async for chunk in r.aiter_bytes():
                body += chunk
                if len(body) > cap:
                    raise _Unreadable(f"{url}: more than {cap} bytes")
            done = httpx2.Response(
                r.status_code, headers=r.headers, content=bytes(body), request=r.request
            )
        hf_raise_for_status(done)
        return done

    async def _json(self, http: httpx2.AsyncClient, url: str, cap: int, **kw: Any) -> Any:
        body = (await self._get(http, url, cap, **kw)).content
        return await asyncio.get_running_loop().run_in_executor(_DECODE, json.loads, body)

    async def _file_json(self, http: httpx2.AsyncClient, repo_id: str, filename: str) -> Any:
        """A small JSON file of the repo; None when the repo has no such file."""
        try:
            return await self._json(
                http, hf_hub_url(repo_id, filename, endpoint=self.endpoint), MAX_JSON_BYTES
            )
        except EntryNotFoundError:
            return None

    async def _header(
        self, http: httpx2.AsyncClient, repo_id: str, filename: str
    ) -> Tensors | None:
        """One safetensors file's header by range requests, as the library reads it: the
        first FIRST_HEADER_READ bytes, then the rest if the header is longer."""
        url = hf_hub_url(repo_id, filename, endpoint=self.endpoint)
        try:
            first = (
                await self._get(http, url, FIRST_HEADER_READ, byte_range=(0, FIRST_HEADER_READ - 1))
            ).content
        except EntryNotFoundError:
            return None
        if len(first) < 8:
            raise _Unreadable(f"{filename}: shorter than a safetensors header")
        (size,) = struct.unpack("<Q", first[:8])
        if size > MAX_HEADER_BYTES:
            raise _Unreadable(f"{filename}: a header of {size} bytes announced")
        header = first[8 : 8 + size]
        if len(header) < size:
            header = (await self._get(http, url, size, byte_range=(8, 8 + size - 1))).content
        if len(header) != size:
            raise _Unreadable(f"{filename}: the header is cut short")
        return await asyncio.get_running_loop().run_in_executor(_DECODE, _tensors_of, header)

    async def _info(self, http: httpx2.AsyncClient, repo_id: str) -> ModelInfo:
        data = await self._json(
            http, f"{self.endpoint}/api/models/{repo_id}", MAX_INFO_BYTES, params={"blobs": True}
        )
        if not isinstance(data, dict):
            raise _Unreadable("the repo's model info is not a JSON object")
        return ModelInfo(**data)

    async def _tensors(
        self, http: httpx2.AsyncClient, repo_id: str, single: Tensors | None, index: Any
    ) -> Tensors | None:
        if single is not None:
            return single
        weight_map = (index or {}).get("weight_map") or {} if isinstance(index, dict) else {}
        if not weight_map:
            return None
        shards = await asyncio.gather(
            *(self._header(http, repo_id, f) for f in sorted(set(weight_map.values())))
        )
        return {name: info for shard in shards if shard for name, info in shard.items()}

    async def read(self, repo_id: str) -> HubFacts:
        """One repo, within deadline_s. Everything is asked at once, not one request after
        another: the model info (file listing with sizes, revision), config.json, the single
        safetensors file's header and the shard index. A sharded repo adds one more step
        (its shards' headers, at once)."""
        try:
            validate_repo_id(repo_id)
            http = self._session()
            async with asyncio.timeout(self.deadline_s):
                info, config, single, index = await asyncio.gather(
                    self._info(http, repo_id),
                    self._file_json(http, repo_id, "config.json"),
                    self._header(http, repo_id, "model.safetensors"),
                    self._file_json(http, repo_id, "model.safetensors.index.json"),
                )
                tensors = await self._tensors(http, repo_id, single, index)
            names = {s.rfilename: s.size or 0 for s in info.siblings or []}
            if config is not None and not isinstance(config, dict):
                raise _Unreadable("config.json is not a JSON object")
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
        except HubLookupError:
            raise
        except HFValidationError as exc:
            raise HubLookupError("not_found", repo_id) from exc
        except GatedRepoError as exc:
            raise HubLookupError("gated", repo_id) from exc
        except RepositoryNotFoundError as exc:
            raise HubLookupError("not_found", repo_id) from exc
        except HfHubHTTPError as exc:
            status = exc.response.status_code if exc.response is not None else 0
            raise HubLookupError(
                "rate_limited" if status == 429 else "unreachable", repo_id
            ) from exc
        except TimeoutError as exc:
            raise HubLookupError("timeout", repo_id) from exc
        except (OSError, httpx2.HTTPError) as exc:  # refused, reset, DNS, a broken stream
            raise HubLookupError("unreachable", repo_id) from exc
        except (_Unreadable, ValueError, KeyError, TypeError, AttributeError) as exc:
            # over a cap, or not the Hub's format (JSON, a header, a model info, a config
            # the engine cannot read): the Hub's error, never "something went wrong"
            log.warning("hub: %s unreadable: %s", repo_id, exc)
            raise HubLookupError("unreadable", repo_id) from exc

    async def search(self, text: str, limit: int = 3) -> list[str] | None:
        """Repo ids whose name contains `text`, most downloaded first; None when the Hub did
        not answer (in timeout_s). One GET of /api/models?search= (what HfApi.list_models
        asks, without its retries: a suggestion is not worth waiting for)."""
        try:
            async with asyncio.timeout(self.timeout_s):
                found = await self._json(
                    self._session(),
                    f"{self.endpoint}/api/models",
                    MAX_SEARCH_BYTES,
                    params={"search": text, "limit": limit, "sort": "downloads"},
                )
            return [m["id"] for m in found if isinstance(m, dict) and isinstance(m.get("id"), str)]
        except Exception as exc:  # noqa: BLE001 - a suggestion list is a nicety: never an error
            log.info("hub search failed: %s", type(exc).__name__)
            return None

    # --- what the bot and the CLI call ------------------------------------------------------

    async def lookup(self, repo_id: str) -> HubFacts:
        """The repo within timeout_s; past it HubLookupError("timeout"), while the reading
        goes on (until deadline_s) for the cache (resolve.keep_late_reading)."""
        work = asyncio.ensure_future(self.read(repo_id))
        try:
            return await asyncio.wait_for(asyncio.shield(work), self.timeout_s)
        except TimeoutError as exc:
            self.late[repo_id.lower()] = work
            raise HubLookupError("timeout", repo_id) from exc

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
