-- 0005: inline deep links get an owner; handled updates are remembered.
--
-- inline_links: the question behind a long inline deep link belongs to the user who typed
-- it, so /forget deletes it and the retention job purges it with their questions. Rows
-- written before had no owner and could be forgotten by nobody: they are dropped (a link
-- from them answers "this link expired, ask again").
-- Two users who typed the same question each own a row under the same key.

DROP TABLE inline_links;
CREATE TABLE inline_links (
    key        TEXT NOT NULL,        -- the deep link's k_ payload (a hash of the question)
    user_id    INTEGER NOT NULL,     -- who typed the question
    query      TEXT NOT NULL,
    created_at TEXT NOT NULL,        -- ISO 8601 UTC
    PRIMARY KEY (key, user_id)
);
CREATE INDEX inline_links_by_user ON inline_links (user_id);
CREATE INDEX inline_links_by_created ON inline_links (created_at);

-- inbox_handled: the ids of updates whose handling finished (their inbox row deleted in the
-- same transaction). A copy of one that arrives later, a webhook re-POST or a getUpdates
-- page fetched again after a crash, is acknowledged without a second answer, also after a
-- restart. Trimmed by age (Telegram keeps an update for at most 24 hours).

CREATE TABLE inbox_handled (
    update_id  INTEGER PRIMARY KEY,
    handled_at TEXT NOT NULL         -- ISO 8601 UTC
);
CREATE INDEX inbox_handled_by_time ON inbox_handled (handled_at);
