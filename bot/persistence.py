"""PTB persistence on the bot's own SQLite database (table `ptb_state`, through the repository).

Conversation keys are tuples; they are stored as JSON lists. Data is stored as JSON, so
everything kept in `user_data` / `chat_data` must be JSON-shaped (dicts, lists, str, int).
The application writes once an update's handlers are done (`bot.inbox.Inbox.done`, before
the update leaves the inbox), not only every `update_interval`, so a restart loses no step
a user has taken.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from telegram.ext import BasePersistence, PersistenceInput
from telegram.ext._utils.types import CDCData, ConversationDict, ConversationKey

from bot import fastjson
from bot.storage import Repository


class SQLitePersistence(BasePersistence[dict, dict, dict]):
    def __init__(self, path: Path) -> None:
        super().__init__(
            store_data=PersistenceInput(
                bot_data=False, chat_data=True, user_data=True, callback_data=False
            ),
            update_interval=60,
        )
        self.path = path
        self._repo: Repository | None = None
        self._opening = asyncio.Lock()
        self._written: dict[tuple[str, str], str | None] = {}  # what the database holds now

    @property
    def repo(self) -> Repository:
        if self._repo is None:
            raise RuntimeError("storage is not open yet (Application.initialize opens it)")
        return self._repo

    async def open(self) -> Repository:
        """Opened on the first read, inside Application.initialize(), on the running loop;
        a StorageError here stops start-up."""
        async with self._opening:
            if self._repo is None:
                self._repo = await Repository.open(self.path)
        return self._repo

    async def close(self) -> None:
        if self._repo is not None:
            await self._repo.close()
            self._repo = None

    # --- reads, once at initialize() ---

    async def get_user_data(self) -> dict[int, dict]:
        await self.open()
        return {int(k): v for k, v in (await self.repo.load_state("user_data")).items()}  # type: ignore[misc]

    async def get_chat_data(self) -> dict[int, dict]:
        await self.open()
        return {int(k): v for k, v in (await self.repo.load_state("chat_data")).items()}  # type: ignore[misc]

    async def get_bot_data(self) -> dict:
        return {}

    async def get_callback_data(self) -> CDCData | None:
        return None

    async def get_conversations(self, name: str) -> ConversationDict:
        await self.open()
        stored = await self.repo.load_state(f"conversation:{name}")
        return {tuple(json.loads(k)): v for k, v in stored.items()}

    # --- writes ---

    async def _save(self, kind: str, key: str, data: object | None) -> None:
        """PTB hands over every touched user's data after each update; most of it did not
        change, and an unchanged value is not written again. `data` is PTB's live dict:
        it is encoded here, before the first await, so no copy of it is needed, and the
        text compared is the text written."""
        encoded = fastjson.dumps(data, sort_keys=True) if data is not None else None
        if self._written.get((kind, key), "unknown") == encoded:
            return
        await self.repo.save_state_json(kind, key, encoded)
        self._written[(kind, key)] = encoded

    def forget_written(self) -> None:
        """After rows were deleted behind PTB's back (/forget): write everything again."""
        self._written.clear()

    async def update_conversation(
        self, name: str, key: ConversationKey, new_state: object | None
    ) -> None:
        await self._save(f"conversation:{name}", json.dumps(list(key)), new_state)

    async def update_user_data(self, user_id: int, data: dict) -> None:
        await self._save("user_data", str(user_id), data or None)

    async def update_chat_data(self, chat_id: int, data: dict) -> None:
        await self._save("chat_data", str(chat_id), data or None)

    async def update_bot_data(self, data: dict) -> None:
        return None

    async def update_callback_data(self, data: CDCData) -> None:
        return None

    async def drop_user_data(self, user_id: int) -> None:
        await self._save("user_data", str(user_id), None)

    async def drop_chat_data(self, chat_id: int) -> None:
        await self._save("chat_data", str(chat_id), None)

    async def refresh_user_data(self, user_id: int, user_data: dict) -> None:
        return None

    async def refresh_chat_data(self, chat_id: int, chat_data: dict) -> None:
        return None

    async def refresh_bot_data(self, bot_data: dict) -> None:
        return None

    async def flush(self) -> None:
        return None
