"""Hub settings from the environment or `.env` (listed in `.env.example`)."""

from __future__ import annotations

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


def endpoint_base(url: str) -> str:
    """HF_ENDPOINT as the library joins it: no trailing slash. Mirror instructions write
    `https://hf-mirror.com/` or `https://host/prefix/`; huggingface_hub appends
    `/api/models/…` to the string as given, and a trailing slash then asks for
    `//api/models/…`, which mirrors answer with 404 (every lookup read "unreachable")."""
    return url.strip().rstrip("/")


class HubSettings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore")

    # A mirror (e.g. https://hf-mirror.com, used by many labs in China) or the Hub itself;
    # with or without a trailing slash or a path prefix (https://host/prefix/)
    hf_endpoint: str = Field(default="https://huggingface.co", pattern=r"^\s*https?://\S+\s*$")
    hf_token: SecretStr | None = None  # for gated repos; never logged
    hub_timeout_s: float = Field(default=3.0, gt=0, le=120)
    # a lookup's total deadline, answered in time or read on for the cache after
    # HUB_TIMEOUT_S: a Hub that sends a byte now and then holds nothing past it
    hub_deadline_s: float = Field(default=30.0, gt=0, le=600)
    # a cached entry older than this is read again when the Hub answers (else still served)
    hub_cache_days: float = Field(default=7.0, ge=0)
    # `python -m advisor "<repo id>"`: how long the CLI waits, past HUB_TIMEOUT_S, for a slow
    # mirror's late reading before it exits (the bot keeps waiting in the background and
    # caches it; a CLI process that exits would lose it)
    hub_cli_wait_s: float = Field(default=30.0, ge=0, le=600)

    @field_validator("hf_endpoint")
    @classmethod
    def _no_trailing_slash(cls, value: str) -> str:
        return endpoint_base(value)

    def token(self) -> str | None:
        return self.hf_token.get_secret_value() if self.hf_token else None
