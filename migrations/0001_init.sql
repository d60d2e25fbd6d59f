-- 0001: users, chats, question history, PTB conversation state.
-- Never edit after it has landed: add 0002_*.sql instead.

CREATE TABLE users (
    user_id     INTEGER PRIMARY KEY,
    first_name  TEXT,
    language    TEXT,              -- chosen with /lang; NULL: follow Telegram's language_code
    tg_language TEXT,              -- last language_code Telegram sent
    first_seen  TEXT NOT NULL,     -- ISO 8601 UTC
    last_seen   TEXT NOT NULL
);

CREATE TABLE chats (
    chat_id    INTEGER PRIMARY KEY,
    type       TEXT NOT NULL,      -- private | group | supergroup | channel
    title      TEXT,
    language   TEXT,               -- a group's default language, set by /lang in the group
    first_seen TEXT NOT NULL,
    last_seen  TEXT NOT NULL
);

CREATE TABLE history (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    update_id       INTEGER UNIQUE,  -- a redelivered update after a crash adds no second row
    user_id         INTEGER NOT NULL,
    chat_id         INTEGER NOT NULL,
    raw_text        TEXT NOT NULL,
    canonical       TEXT,
    workload_json   TEXT,
    summary_json    TEXT,
    catalog_version TEXT NOT NULL,
    created_at      TEXT NOT NULL
);
CREATE INDEX history_by_user_chat ON history (user_id, chat_id, id);
CREATE INDEX history_by_created ON history (created_at);

-- PTB BasePersistence: conversation states and user/chat/bot data as JSON.
CREATE TABLE ptb_state (
    kind TEXT NOT NULL,   -- conversation:<name> | user_data | chat_data | bot_data | callback_data
    key  TEXT NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (kind, key)
);
