"""Reading one repo from the Hub with the huggingface_hub library: model info (file listing
with sizes), config.json, and the safetensors headers through range requests, never the
weights. The library is blocking; `lookup` runs it in a thread under a time limit so the
bot's event loop never waits on the network.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import logging
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from huggingface_hub import HfApi
from huggingface_hub.errors import (
    GatedRepoError,
    HfHubHTTPError,
    RepositoryNotFoundError,
)

from advisor.hubspec import GgufFile, HubFacts, count_tensors, gguf_format, quant_info

log = logging.getLogger(__name__)


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

    def _api(self) -> HfApi:
        # token=False: never send a token found elsewhere on the machine (~/.cache/huggingface)
        return HfApi(endpoint=self.endpoint, token=self.token or False)

    # --- blocking: run in a thread ------------------------------------------------------

    def _config(self, api: HfApi, repo_id: str, sha: str) -> dict[str, Any]:
        with tempfile.TemporaryDirectory() as tmp:
            path = api.hf_hub_download(
                repo_id, "config.json", revision=sha, cache_dir=tmp, etag_timeout=self.timeout_s
            )
            with open(path, encoding="utf-8") as f:
                return json.load(f)

    def _tensors(self, api: HfApi, repo_id: str, sha: str) -> dict[str, tuple[str, list[int]]]:
        meta = api.get_safetensors_metadata(repo_id, revision=sha)
        return {
            name: (t.dtype, list(t.shape))
            for f in meta.files_metadata.values()
            for name, t in f.tensors.items()
        }

    def read(self, repo_id: str) -> HubFacts:
        """One repo, blocking. config.json and the safetensors headers are read at once
        (two threads), after the model info that says which files exist."""
        api = self._api()
        try:
            info = api.model_info(repo_id, files_metadata=True, timeout=self.timeout_s)
            names = {s.rfilename: s.size or 0 for s in info.siblings or []}
            sha = info.sha or "main"
            want_config = "config.json" in names
            want_tensors = any(n.endswith(".safetensors") for n in names)
            with ThreadPoolExecutor(max_workers=2) as pool:
                config_f = pool.submit(self._config, api, repo_id, sha) if want_config else None
                tensors_f = pool.submit(self._tensors, api, repo_id, sha) if want_tensors else None
                config = config_f.result() if config_f else None
                tensors = tensors_f.result() if tensors_f else None
        except GatedRepoError as exc:
            raise HubLookupError("gated", repo_id) from exc
        except RepositoryNotFoundError as exc:
            raise HubLookupError("not_found", repo_id) from exc
        except HfHubHTTPError as exc:
            status = exc.response.status_code if exc.response is not None else 0
            raise HubLookupError(
                "rate_limited" if status == 429 else "unreachable", repo_id
            ) from exc
        except OSError as exc:  # refused, reset, DNS: httpx errors are OSErrors underneath
            raise HubLookupError("unreachable", repo_id) from exc
        except Exception as exc:  # the library's transport errors are not all OSErrors
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

    def search_blocking(self, text: str, limit: int = 3) -> list[str]:
        try:
            return [m.id for m in self._api().list_models(search=text, limit=limit)]
        except Exception as exc:  # a suggestion list is a nicety: never an error
            log.info("hub search failed: %s", type(exc).__name__)
            return []

    # --- async: what the bot and the CLI call -----------------------------------------------

    async def lookup(self, repo_id: str) -> HubFacts:
        try:
            return await asyncio.wait_for(asyncio.to_thread(self.read, repo_id), self.timeout_s)
        except TimeoutError as exc:
            raise HubLookupError("timeout", repo_id) from exc

    async def search(self, text: str, limit: int = 3) -> list[str]:
        try:
            return await asyncio.wait_for(
                asyncio.to_thread(self.search_blocking, text, limit), self.timeout_s
            )
        except TimeoutError:
            return []
