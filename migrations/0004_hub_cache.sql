-- 0004: what was read from the Hugging Face Hub (or a mirror) for a repo the catalog lacks,
-- so a repo is looked up once, and answered from here when the Hub is slow or unreachable.
-- The answer says where the architecture came from and when (fetched_at).

CREATE TABLE hub_cache (
    repo_id     TEXT PRIMARY KEY,   -- lower-cased owner/name (the Hub's ids are case-blind)
    revision    TEXT,               -- the commit sha the files were read at
    fetched_at  TEXT NOT NULL,      -- ISO 8601 UTC
    data        TEXT NOT NULL       -- advisor.hubspec.HubFacts as JSON
);
