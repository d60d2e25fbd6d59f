-- 0002: updates received from Telegram but not yet fully handled.
-- Telegram forgets an update once the next getUpdates confirms it, which PTB does before
-- handling it; a crash in between would lose it. Each fetched batch is written here first
-- and each update removed when handled; what is left at start-up is handled then.

CREATE TABLE inbox (
    update_id   INTEGER PRIMARY KEY,
    data        TEXT NOT NULL,   -- the update as Telegram sent it (JSON)
    received_at TEXT NOT NULL
);
