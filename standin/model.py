"""The stand-in's records: the bot's identity, a recorded call, chats, users, the faults to
inject, and the error a method answers with."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

BOT_USER = {"id": 7000001, "is_bot": True, "first_name": "GPU Advisor", "username": "GpuAdvisorBot"}
ANONYMOUS_ADMIN_ID = 1087968824  # Telegram's GroupAnonymousBot


@dataclass
class Call:
    method: str
    params: dict[str, Any]
    result: Any = None
    error: str | None = None
    at: float = 0.0
    seq: int = 0  # position in FakeTelegram.calls


@dataclass
class Chat:
    id: int
    type: str = "private"
    title: str | None = None
    is_forum: bool = False

    def json(self) -> dict:
        d: dict[str, Any] = {"id": self.id, "type": self.type}
        if self.title:
            d["title"] = self.title
        if self.is_forum:
            d["is_forum"] = True
        return d


@dataclass
class User:
    id: int
    first_name: str = "User"
    language_code: str | None = "en"
    username: str | None = None

    def json(self) -> dict:
        d: dict[str, Any] = {"id": self.id, "is_bot": False, "first_name": self.first_name}
        if self.language_code:
            d["language_code"] = self.language_code
        if self.username:
            d["username"] = self.username
        return d


@dataclass
class FaultPlan:
    """Random faults for the load bench: each probability per call of the named methods."""

    p_429: float = 0.0
    p_5xx: float = 0.0
    p_drop: float = 0.0
    p_slow: float = 0.0
    slow_s: float = 0.5
    retry_after: int = 1
    methods: tuple[str, ...] = ("sendMessage", "editMessageText", "getUpdates")
    seed: int = 7
    rng: random.Random = field(init=False)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)


@dataclass
class Fault:
    method: str
    status: int
    description: str
    parameters: dict | None
    drop: bool
    delay_s: float
    remaining: int


class ApiError(Exception):
    def __init__(self, status: int, description: str, parameters: dict | None = None) -> None:
        super().__init__(description)
        self.status, self.description, self.parameters = status, description, parameters
