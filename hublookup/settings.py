"""Hub settings from the environment or `.env` (listed in `.env.example`)."""

from __future__ import annotations

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class HubSettings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore")

    # A mirror (e.g. https://hf-mirror.com, used by many labs in China) or the Hub itself
    hf_endpoint: str = Field(default="https://huggingface.co", pattern=r"^https?://\S+$")
    hf_token: SecretStr | None = None  # for gated repos; never logged
    hub_timeout_s: float = Field(default=3.0, gt=0, le=120)
    # a cached entry older than this is read again when the Hub answers (else still served)
    hub_cache_days: float = Field(default=7.0, ge=0)

    def token(self) -> str | None:
        return self.hf_token.get_secret_value() if self.hf_token else None
