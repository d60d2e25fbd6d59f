"""A stand-in for the Hugging Face Hub on 127.0.0.1, speaking the HTTP API the way
huggingface_hub 2.x calls it, so tests run the real library with no network.

What the library asks for (read from huggingface_hub 2.4 hf_api.py / file_download.py):
  GET  /api/models?search=…&limit=…                        list_models
  GET  /api/models/{repo}[/revision/{rev}][?blobs=true]    model_info (siblings with sizes)
  HEAD /{repo}/resolve/{rev}/{file}                        file metadata: X-Repo-Commit, ETag,
       small files answered in place; large (LFS) files by a 302 to the CDN with
       X-Linked-Etag / X-Linked-Size, which the library reads without following
  GET  /{repo}/resolve/{rev}/{file}  (Range)               config.json, safetensors headers
Errors as the Hub sends them: X-Error-Code RepoNotFound (401 without a token, so that a
private repo cannot be told from a missing one), GatedRepo (401 without a token),
EntryNotFound (404); and, switched on by a test, 429, a slow Hub, or none at all.

Each repo is a folder of tests/data/hub: config.json as published, meta.json (sources,
gated, extra files such as GGUF with their sizes), tensors.json {name: [dtype, shape]} from
which a real safetensors header is built (8-byte length, JSON, then no data: only headers
are ever read).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import struct
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web

DEFAULT_DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "hub"
_DTYPE_BYTES = {"F64": 8, "F32": 4, "I32": 4, "BF16": 2, "F16": 2, "U8": 1, "I8": 1}
_DTYPE_BYTES |= {"F8_E4M3": 1, "F8_E5M2": 1, "I64": 8}


@dataclass
class StandinRepo:
    repo_id: str
    sha: str
    gated: bool
    files: dict[str, bytes | int]  # name -> content, or only a size (GGUF, weights' data)


def safetensors_header(tensors: dict[str, list]) -> bytes:
    """A safetensors file's first bytes: u64 little-endian header size, then the JSON
    header with consecutive data_offsets (format: huggingface.co/docs/safetensors)."""
    header: dict[str, Any] = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, (dtype, shape) in tensors.items():
        n = _nbytes(dtype, shape)
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + n]}
        offset += n
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)  # the format pads the header to 8 bytes
    return struct.pack("<Q", len(raw)) + raw


SHARD_BYTES = 5 * 10**9  # transformers' save_pretrained default max_shard_size ("5GB")


def _nbytes(dtype: str, shape: list) -> int:
    n = _DTYPE_BYTES[dtype]
    for d in shape:
        n *= int(d)
    return n


def safetensors_files(tensors: dict[str, list]) -> dict[str, bytes | int]:
    """model.safetensors, or past SHARD_BYTES the shards and their index, named and split
    the way transformers writes them (model-00001-of-00003.safetensors, weight_map)."""
    shards: list[dict[str, list]] = [{}]
    size = 0
    for name, (dtype, shape) in tensors.items():
        n = _nbytes(dtype, shape)
        if shards[-1] and size + n > SHARD_BYTES:
            shards.append({})
            size = 0
        shards[-1][name] = [dtype, shape]
        size += n
    if len(shards) == 1:
        return {"model.safetensors": safetensors_header(tensors)}
    files: dict[str, bytes | int] = {}
    weight_map: dict[str, str] = {}
    for i, shard in enumerate(shards, 1):
        fname = f"model-{i:05d}-of-{len(shards):05d}.safetensors"
        files[fname] = safetensors_header(shard)
        weight_map |= {name: fname for name in shard}
    total = sum(_nbytes(d, s) for d, s in tensors.values())
    index = {"metadata": {"total_size": total}, "weight_map": weight_map}
    files["model.safetensors.index.json"] = json.dumps(index, indent=2).encode()
    return files


def load_repos(data_dir: Path = DEFAULT_DATA) -> dict[str, StandinRepo]:
    repos: dict[str, StandinRepo] = {}
    for meta_path in sorted(data_dir.glob("*/meta.json")):
        folder = meta_path.parent
        meta = json.loads(meta_path.read_text())
        files: dict[str, bytes | int] = {}
        if (folder / "config.json").exists():
            files["config.json"] = (folder / "config.json").read_bytes()
        if (folder / "tensors.json").exists():
            files |= safetensors_files(json.loads((folder / "tensors.json").read_text()))
        for f in meta.get("files", []):
            files[f["name"]] = int(f["size"])
        files["README.md"] = f"# {meta['repo_id']}\n".encode()
        sha = hashlib.sha1(b"".join(v for v in files.values() if isinstance(v, bytes))).hexdigest()
        repos[meta["repo_id"].lower()] = StandinRepo(
            meta["repo_id"], sha, bool(meta.get("gated")), files
        )
    return repos


@dataclass
class HubStandin:
    """Start with `await hub.start()`; `hub.url` is the HF_ENDPOINT to use. Tests flip
    `down`, `delay_s`, `rate_limited` and read `requests` (method + path per call).
    `prefix` ("/hf"): the API under a path, as some mirrors serve it (https://host/hf/…)."""

    data_dir: Path = DEFAULT_DATA
    prefix: str = ""
    token: str = "hf_standin_token"
    delay_s: float = 0.0
    rate_limited: bool = False
    # > 0: every answer's body goes out one byte per drip_s (a Hub or proxy that keeps a
    # connection alive without ever finishing); `dripping` counts those still being sent
    drip_s: float = 0.0
    dripping: int = 0
    repos: dict[str, StandinRepo] = field(default_factory=dict)
    requests: Counter = field(default_factory=Counter)
    url: str = ""
    cdn_url: str = ""  # another origin, as the Hub's CDN is: the library stops at its redirect
    _runner: web.AppRunner | None = None
    _port: int = 0
    _cdn_port: int = 0

    async def start(self, port: int = 0) -> str:
        self.repos = self.repos or load_repos(self.data_dir)
        app = web.Application(middlewares=[self._middleware])
        p = self.prefix.rstrip("/")
        app.router.add_get(p + "/api/models", self._search)
        app.router.add_get(p + r"/api/models/{org}/{name}", self._info)
        app.router.add_get(p + r"/api/models/{org}/{name}/revision/{rev}", self._info)
        app.router.add_route("*", p + r"/{org}/{name}/resolve/{rev}/{file:.+}", self._resolve)
        app.router.add_get(r"/cdn/{sha}/{file:.+}", self._cdn)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", port or self._port)
        await site.start()
        self._port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        cdn = web.TCPSite(self._runner, "127.0.0.1", self._cdn_port)
        await cdn.start()
        self._cdn_port = cdn._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{self._port}{p}"
        self.cdn_url = f"http://127.0.0.1:{self._cdn_port}"
        return self.url

    async def stop(self) -> None:
        """The Hub goes away: connections are refused until `start()` again (same port)."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # --- plumbing ---------------------------------------------------------------------

    @web.middleware
    async def _middleware(self, request: web.Request, handler: Any) -> web.StreamResponse:
        self.requests[f"{request.method} {request.path}"] += 1
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        if self.rate_limited:
            return web.json_response(
                {"error": "rate limited"}, status=429, headers={"RateLimit-Reset": "1"}
            )
        response = await handler(request)
        if self.drip_s and isinstance(response, web.Response) and response.body:
            return await self._drip(request, response)
        return response

    async def _drip(self, request: web.Request, response: web.Response) -> web.StreamResponse:
        body = bytes(response.body)  # type: ignore[arg-type]
        out = web.StreamResponse(status=response.status, headers=response.headers)
        out.content_length = len(body)
        self.dripping += 1
        try:
            await out.prepare(request)
            for i in range(len(body)):
                if not self.drip_s:  # the Hub recovered: the rest at once
                    await out.write(body[i:])
                    break
                await out.write(body[i : i + 1])
                await asyncio.sleep(self.drip_s)
            await out.write_eof()
        except (ConnectionError, RuntimeError):
            pass  # the client gave up on it
        finally:
            self.dripping -= 1
        return out

    def _repo(self, request: web.Request) -> StandinRepo | None:
        return self.repos.get(f"{request.match_info['org']}/{request.match_info['name']}".lower())

    def _authorized(self, request: web.Request) -> bool:
        return request.headers.get("Authorization") == f"Bearer {self.token}"

    @staticmethod
    def _error(status: int, code: str, message: str) -> web.Response:
        return web.json_response(
            {"error": message},
            status=status,
            headers={"X-Error-Code": code, "X-Error-Message": message},
        )

    def _missing(self, request: web.Request) -> web.Response:
        status = 404 if self._authorized(request) else 401
        return self._error(status, "RepoNotFound", "Repository Not Found")

    # --- the API ----------------------------------------------------------------------

    async def _search(self, request: web.Request) -> web.Response:
        words = request.query.get("search", "").lower().replace(":", " ").split()
        limit = int(request.query.get("limit", "10"))
        hits = [r for k, r in self.repos.items() if all(w in k for w in words)]
        return web.json_response([{"id": r.repo_id, "modelId": r.repo_id} for r in hits[:limit]])

    async def _info(self, request: web.Request) -> web.Response:
        repo = self._repo(request)
        if repo is None:
            return self._missing(request)
        siblings = [
            {"rfilename": name, "size": v if isinstance(v, int) else len(v)}
            for name, v in repo.files.items()
        ]
        return web.json_response(
            {
                "id": repo.repo_id,
                "modelId": repo.repo_id,
                "sha": repo.sha,
                "private": False,
                "gated": "manual" if repo.gated else False,
                "disabled": False,
                "tags": [],
                "siblings": siblings,
            }
        )

    async def _resolve(self, request: web.Request) -> web.StreamResponse:
        repo = self._repo(request)
        if repo is None:
            return self._missing(request)
        if repo.gated and not self._authorized(request):
            return self._error(
                401,
                "GatedRepo",
                f"Access to model {repo.repo_id} is restricted. You must have access to it and be authenticated to access it. Please log in.",
            )
        name = request.match_info["file"]
        content = repo.files.get(name)
        if content is None:
            return self._error(404, "EntryNotFound", f"{name} does not exist")
        etag = hashlib.sha256(name.encode() + repo.sha.encode()).hexdigest()
        headers = {"X-Repo-Commit": repo.sha, "ETag": f'"{etag}"'}
        if name.endswith((".safetensors", ".gguf")):  # LFS: the Hub redirects to its CDN
            size = content if isinstance(content, int) else len(content)
            headers |= {
                "Location": f"{self.cdn_url}/cdn/{repo.sha}/{repo.repo_id}/{name}",
                "X-Linked-Etag": f'"{etag}"',
                "X-Linked-Size": str(size),
            }
            return web.Response(status=302, headers=headers)
        assert isinstance(content, bytes)
        if request.method == "HEAD":
            headers["Content-Length"] = str(len(content))
            return web.Response(status=200, headers=headers)
        return web.Response(body=content, headers=headers)

    async def _cdn(self, request: web.Request) -> web.Response:
        m = re.fullmatch(r"([^/]+/[^/]+)/(.+)", request.match_info["file"])
        repo = self.repos.get(m.group(1).lower()) if m else None
        content = repo.files.get(m.group(2)) if repo and m else None
        if not isinstance(content, bytes):
            return web.Response(status=404)
        rng = re.fullmatch(r"bytes=(\d+)-(\d*)", request.headers.get("Range", ""))
        if not rng:
            self.requests["whole file"] += 1  # a weights download: what a lookup must not do
            return web.Response(body=content)
        start = int(rng.group(1))
        end = min(int(rng.group(2) or len(content) - 1), len(content) - 1)
        return web.Response(
            status=206,
            body=content[start : end + 1],
            headers={"Content-Range": f"bytes {start}-{end}/{len(content)}"},
        )
