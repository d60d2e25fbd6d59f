"""Operator settings from the environment or `.env` (every one listed in `.env.example`)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore")

    # SecretStr: repr and logs show '**********', never the token.
    telegram_bot_token: SecretStr | None = None
    telegram_api_base_url: str | None = Field(default=None, pattern=r"^https?://\S+$")
    database_path: Path = Path("data/advisor.sqlite3")
    default_language: Literal["zh", "en"] = "zh"
    admin_user_ids: Annotated[frozenset[int], NoDecode] = frozenset()
    prices_file: Path | None = None
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    history_retention_days: int = Field(default=180, ge=1, le=36_500)
    # Telegram's own caps (about 30 messages/s overall, 20/min per group); PTB's rate limiter
    # queues to stay under them. Raise only for a self-hosted stand-in (the load bench).
    rate_limit_overall_per_s: float = Field(default=30, gt=0)
    rate_limit_group_per_min: float = Field(default=20, gt=0)
    # SIGTERM to exit, whatever the Bot API does meanwhile (bot.runner.stop); under a
    # service manager keep it below its own kill timeout (systemd: 90 s).
    stop_timeout_s: float = Field(default=10, ge=3, le=300)
    # Webhook mode when WEBHOOK_URL is set (the public https URL Telegram posts to, through
    # the reverse proxy); polling otherwise. The bot listens on WEBHOOK_LISTEN:WEBHOOK_PORT
    # and serves the URL's path there, with /healthz and /metrics beside it.
    webhook_url: str | None = Field(default=None, pattern=r"^https?://[^/\s]+(/\S*)?$")
    # Telegram sends it in X-Telegram-Bot-Api-Secret-Token; 1-256 of A-Z a-z 0-9 _ -.
    webhook_secret: SecretStr | None = None
    webhook_listen: str = "127.0.0.1"
    webhook_port: int = Field(default=8443, ge=1, le=65535)
    # Polling mode: serve /healthz and /metrics on WEBHOOK_LISTEN:HEALTH_PORT (unset: none).
    health_port: int | None = Field(default=None, ge=1, le=65535)
    log_format: Literal["text", "json"] = "text"
    # The HTTP client to the Bot API (bot.http): aiohttp's, the only one; the setting is
    # read so that an .env that names it still starts.
    http_client: Literal["aiohttp"] | None = None

    @field_validator(
        "telegram_bot_token",
        "telegram_api_base_url",
        "prices_file",
        "webhook_url",
        "webhook_secret",
        "health_port",
        "http_client",
        mode="before",
    )
    @classmethod
    def _blank_is_none(cls, v: object) -> object:
        # `.env.example` leaves optional settings empty (`PRICES_FILE=`): empty means unset.
        return None if isinstance(v, str) and not v.strip() else v

    @field_validator("telegram_api_base_url")
    @classmethod
    def _ends_with_bot(cls, v: str | None) -> str | None:
        # PTB appends the token to this URL; without the trailing /bot the request goes to
        # "host:port<token>/getMe", which fails in ways that quote the token.
        if v is not None and not v.rstrip("/").endswith("/bot") and "{token}" not in v:
            raise ValueError(
                "must end with /bot (the token is appended), e.g. http://host:8081/bot"
            )
        return v.rstrip("/") if v is not None and "{token}" not in v else v

    @field_validator("telegram_bot_token")
    @classmethod
    def _token_shape(cls, v: SecretStr | None) -> SecretStr | None:
        # BotFather tokens are <digits>:<35 url-safe characters>; checked here so a pasted
        # typo is one clear line at start-up, not a 401 later.
        if v is not None and not re.fullmatch(r"\d{5,}:[\w-]{30,}", v.get_secret_value()):
            raise ValueError("does not look like a BotFather token (<digits>:<letters>)")
        return v

    @field_validator("webhook_secret")
    @classmethod
    def _secret_shape(cls, v: SecretStr | None) -> SecretStr | None:
        # Telegram's rule for secret_token; setWebhook would refuse anything else.
        if v is not None and not re.fullmatch(r"[A-Za-z0-9_-]{1,256}", v.get_secret_value()):
            raise ValueError("1-256 characters of A-Z, a-z, 0-9, _ and -")
        return v

    @model_validator(mode="after")
    def _webhook_needs_secret(self) -> Settings:
        # Without it anyone who learns the URL can post updates as any user.
        if self.webhook_url is not None and self.webhook_secret is None:
            raise ValueError("WEBHOOK_URL is set: set WEBHOOK_SECRET too")
        return self

    @property
    def webhook_path(self) -> str:
        from urllib.parse import urlsplit

        return urlsplit(self.webhook_url or "").path or "/"

    @field_validator("admin_user_ids", mode="before")
    @classmethod
    def _comma_list(cls, v: object) -> object:
        if isinstance(v, str):
            return frozenset(int(x) for x in v.replace(" ", "").split(",") if x)
        return v

    @field_validator("prices_file")
    @classmethod
    def _prices_file_exists(cls, v: Path | None) -> Path | None:
        if v is not None and not v.is_file():
            raise ValueError(f"no such file: {v}")
        return v


def load_settings(**overrides: object) -> Settings:
    return Settings(**overrides)  # type: ignore[arg-type]


def settings_error_line(exc: ValidationError) -> str:
    """One line per bad setting, named as in `.env` (the token's value never appears)."""
    parts = []
    for err in exc.errors():
        name = str(err["loc"][0]).upper() if err["loc"] else "settings"
        msg = err["msg"].removeprefix("Value error, ")
        parts.append(f"{name}: {msg}")
    return "bad setting: " + "; ".join(parts)
