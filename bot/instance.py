"""One bot process per database: an advisory lock on a file beside it.

Two processes on one database both poll Telegram (409 Conflict for ever), both answer every
question, and each replays the other's inbox. `flock` is released by the kernel
when the process ends, however it ends (SIGKILL included), so a crash leaves no stale lock.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from bot.schema import StorageError, prepare_files


class AlreadyRunning(StorageError):
    """Another process holds the database."""


class InstanceLock:
    def __init__(self, database_path: Path) -> None:
        self.database_path = database_path
        self.path = database_path.with_name(database_path.name + ".lock")
        self._fd: int | None = None

    def acquire(self) -> None:
        try:
            prepare_files(self.database_path)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise StorageError(f"cannot open database {self.database_path}: {exc}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode(errors="replace").strip() or "?"
            os.close(fd)
            raise AlreadyRunning(
                f"another bot process (pid {holder}) is using {self.database_path}; "
                f"stop it first (lock: {self.path})"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> InstanceLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
