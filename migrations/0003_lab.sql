-- 0003: the machines a chat owns (/lab) and the questions behind long inline deep links.
-- In a group the machines are the group's (admins change them); in a private chat they are
-- the user's own cards (chat_id = the user's id). Moved with the group when it becomes a
-- supergroup; deleted when the bot is removed from the group, when an admin asks
-- (/forget in the group), or with the user's data (/forget in private).

CREATE TABLE lab_machines (
    id                  INTEGER PRIMARY KEY AUTOINCREMENT,
    chat_id             INTEGER NOT NULL,
    name                TEXT NOT NULL,
    gpu_id              TEXT NOT NULL,     -- an advisor/data/gpus.toml id
    gpu_count           INTEGER NOT NULL CHECK (gpu_count BETWEEN 1 AND 64),
    price_per_card_hour REAL,              -- the lab's internal price, optional
    currency            TEXT,              -- CNY | USD, with the price
    note                TEXT,              -- "shared, book in the sheet"
    added_by            INTEGER,           -- the admin (or owner) who wrote it last
    updated_at          TEXT NOT NULL,     -- ISO 8601 UTC
    UNIQUE (chat_id, name)
);

-- An inline answer's "full answer" button opens https://t.me/<bot>?start=<payload>; the
-- payload is at most 64 characters. A question too long to carry in it is kept here under
-- a short key (a hash of the question, so the same question reuses its row).
CREATE TABLE inline_links (
    key        TEXT PRIMARY KEY,
    query      TEXT NOT NULL,
    created_at TEXT NOT NULL
);
