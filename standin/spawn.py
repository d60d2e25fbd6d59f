"""The bot as its own process against a stand-in (crash tests, the load and durability
benches)."""

from __future__ import annotations

import asyncio

STANDIN_TOKEN = "123456:stand-in-token-not-a-real-one-0000000"


async def spawn_bot(
    base_url: str, database_path: str, log_path: str | None = None, **env: str
) -> asyncio.subprocess.Process:
    """`python -m bot` as a separate process talking to a stand-in (crash tests, load bench).
    Telegram's rate caps are lifted: a stand-in has none, and the bench measures our stack."""
    import os
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]  # the checkout: standin/ sits at its top
    full = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("TELEGRAM_", "DATABASE_", "ADMIN_", "RATE_"))
    }
    full.update(
        {
            "PYTHONPATH": str(root),
            "TELEGRAM_BOT_TOKEN": STANDIN_TOKEN,
            "TELEGRAM_API_BASE_URL": base_url,
            "DATABASE_PATH": database_path,
            "LOG_LEVEL": "WARNING",
            "DEFAULT_LANGUAGE": "en",
            "RATE_LIMIT_OVERALL_PER_S": "100000",
            "RATE_LIMIT_GROUP_PER_MIN": "1000000",
        }
    )
    full.update(env)
    log = open(log_path, "ab") if log_path else None  # noqa: SIM115 - the child keeps it
    try:
        return await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "bot",
            cwd=str(root),
            env=full,
            stdout=log or asyncio.subprocess.DEVNULL,
            stderr=log or asyncio.subprocess.DEVNULL,
        )
    finally:
        if log:
            log.close()
