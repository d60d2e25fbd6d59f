-- 0006: "I ran it" reports: what a member measured after running a job the bot answered,
-- stored with the question it answers (the workload as the engine read it, the runtime and
-- the defaults assumed, the engine's figure and band, the card and count), so that the
-- reports become measured cases (python -m bot export-measurements; docs/measurements.md).
-- A report keeps its own copy of the question: it outlives the history's retention (it is
-- the lab's measurement), until its author's /forget.

CREATE TABLE measurements (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    update_id       INTEGER UNIQUE,     -- a redelivered update stores no second row
    user_id         INTEGER NOT NULL,   -- for /forget; never exported
    chat_id         INTEGER NOT NULL,
    history_id      INTEGER NOT NULL,   -- the answer reported on (that row may be purged)
    canonical       TEXT NOT NULL,      -- the question as the engine read it
    workload_json   TEXT NOT NULL,      -- the workload estimated (advisor.models.Workload)
    runtime         TEXT,               -- whose allocation the estimate followed
    assumed_json    TEXT NOT NULL,      -- the defaults the answer assumed: [[field, value]]
    recipe          TEXT,               -- a small-card recipe or budget change answered for
    gpu_id          TEXT NOT NULL,      -- the card it ran on (the report's, else the answer's)
    gpu_count       INTEGER NOT NULL,
    kind            TEXT NOT NULL CHECK (kind IN ('figure', 'oom')),
    measured_bytes  INTEGER,            -- the peak per card; NULL for out of memory
    limit_bytes     INTEGER,            -- out of memory: the card's usable memory
    measured_what   TEXT NOT NULL,      -- nvml | allocated | reserved | unknown
    unit_ambiguous  INTEGER NOT NULL,   -- "G"/"GB" read as GiB
    view            TEXT NOT NULL,      -- allocated | total: the engine's view compared
    estimate_bytes  INTEGER NOT NULL,   -- the engine's figure per card in that view
    low_bytes       INTEGER NOT NULL,   -- its band
    high_bytes      INTEGER NOT NULL,
    outcome         TEXT NOT NULL,      -- within | above | below | oom_expected | oom_missed
    raw_text        TEXT NOT NULL,      -- what the member wrote; never exported
    catalog_version TEXT NOT NULL,
    created_at      TEXT NOT NULL       -- ISO 8601 UTC
);
CREATE INDEX measurements_by_user ON measurements (user_id);
